"""``zfs get`` (and ``zpool get``, printed by the same libzfs code): one row per dataset (or pool) and property.

Format (OpenZFS ``lib/libzfs/libzfs_utils.c: zprop_print_one_property``, ``cmd/zfs/zfs_main.c: zfs_do_get``;
the man page example of Solaris 2009 and published Linux, FreeBSD/TrueNAS outputs in tests/fixtures/zfs-get):

* Columns ``NAME PROPERTY VALUE [RECEIVED] SOURCE`` by default; ``-o`` picks and orders them
  (``name,property,value,received,source``). Without ``-H`` a header line names them and each column is
  padded to its widest cell with two spaces between columns, so the header's offsets cut every row (a value
  may hold spaces: ``Tue Jul 21 15:53 2009``, ``inherited from tank``). ``-H`` (scripted) prints no header
  and one tab between fields: the columns are the default ones (4 fields), or ``-o``'s of the prompt line;
  headerless rows whose second field is no property name in any row are ``-o``'s in another order, which the
  rows cannot tell: refused saying so (``_other_order``).
* Values are ``zfs_nicenum`` numbers (``K M G T P E`` = powers of 1024, ``0B`` since 0.8) or, with ``-p``,
  exact integers; ratios print ``1.21x`` (``-p``: ``1.21`` in 0.8+); ``none`` and ``-`` mean no value.
* SOURCE: ``-`` (a read-only statistic), ``default``, ``local``, ``temporary``, ``received``,
  ``inherited from DATASET``.
* Typed values by property: sizes (``used``, ``recordsize``, ``quota`` ...) in bytes, ratios as numbers,
  counts (``copies``, ``createtxg`` ...) and percentages (``capacity``, ``fragmentation`` of pools). Other
  properties (``compression``, ``sync``, ``logbias``, ``primarycache``, ``dedup``, dates, guids) keep their
  text; a typed property whose value does not read as its type is an error naming the line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..units import UnitError, zfs_nicenum
from .base import LINES, SHELL_PROMPT, Parsed, ParseError, lines_of, not_this_format, table

TOOL = "zfs"
PARSER_VERSION = 1
# what the unknown-format message lists (parsers.expected_formats): every format this parser stores, as a user knows it
READS: dict[str, str] = {"zfs-get": "zfs get/zpool get", "zfs-get-H": "zfs get -H"}
PARSE_TAKES_NAME = False  # optional hooks, declared (contract.py): none offered
STREAM_FORMATS: tuple[str, ...] = ()
HELPER_MODULES: tuple[str, ...] = ()
parse_bytes = None
parse_stream = None
FORMATS = ("zfs-get", "zfs-get-H")

TABLES = {
    "zfs_properties": table(
        "zfs get / zpool get: one row per dataset (or pool) and property, as printed; numbers also typed.",
        ("name", "VARCHAR", "dataset, snapshot or pool name (NULL when -o left the NAME column out)"),
        ("kind", "VARCHAR", "'dataset' (zfs get) or 'pool' (zpool get: the prompt line, or pool-only properties)"),
        ("property", "VARCHAR", "property name as printed (compression, recordsize, feature@..., user:prop ...)"),
        ("value", "VARCHAR", "the value as printed (NULL when -o left the VALUE column out)"),
        ("value_bytes", "DOUBLE", "size properties (used, recordsize, quota ...), bytes; NULL for none/-"),
        ("value_ratio", "DOUBLE", "ratio properties (compressratio, refcompressratio, dedupratio): 1.21x -> 1.21"),
        ("value_count", "DOUBLE", "count properties (copies, createtxg, objsetid, version, *_count, ashift ...)"),
        ("value_pct", "DOUBLE", "percent properties (capacity, fragmentation of a pool), percent"),
        (
            "exact",
            "BOOLEAN",
            "for typed values: true when printed exactly (-p or a plain integer), false for nicenum (3 digits, "
            "powers of 1024); NULL for text values",
        ),
        ("received", "VARCHAR", "the RECEIVED column (-o received), as printed; NULL without it"),
        ("source", "VARCHAR", "SOURCE as printed ('-', default, local, inherited from X ...); NULL without it"),
        ("source_kind", "VARCHAR", "none ('-'), default, local, temporary, received or inherited"),
        ("inherited_from", "VARCHAR", "the dataset an inherited value comes from, else NULL"),
        ("command", "VARCHAR", "the zfs/zpool get command of the prompt line before the output, when present"),
        *LINES,
    ),
}

_COLUMNS = ("name", "property", "value", "received", "source")
_HEADER = re.compile(r"^(?:(?:NAME|PROPERTY|VALUE|RECEIVED|SOURCE)(?: +|\t|$))+$")
_PROMPT = re.compile(r"^(?:.*?[$#%>]\s*)?(?:sudo\s+)?((zfs|zpool)\s+get\b.*)$")
_SOURCE = re.compile(r"^(-|default|local|temporary|received|inherited from (\S.*))$")
_PROPERTY = re.compile(r"^[a-z][a-z0-9_]*(?:[@:.][^\s]*)?$|^[a-z0-9_.-]+:[^\s]+$")

_SIZES = {
    "used", "available", "avail", "referenced", "refer", "quota", "reservation", "recordsize", "volsize",
    "volblocksize", "refquota", "refreservation", "usedbysnapshots", "usedbydataset", "usedbychildren",
    "usedbyrefreservation", "written", "logicalused", "logicalreferenced", "special_small_blocks",
    "size", "free", "allocated", "freeing", "leaked", "expandsize", "checkpoint", "bcloneused", "bclonesaved",
    "dedupused", "dedupsaved", "dedup_table_size", "dedup_table_quota",
}  # fmt: skip
_SIZE_PREFIXES = ("userused@", "userquota@", "groupused@", "groupquota@", "projectused@", "projectquota@", "written@")
_COUNTS = {
    "copies", "version", "createtxg", "objsetid", "filesystem_count", "filesystem_limit", "snapshot_count",
    "snapshot_limit", "pbkdf2iters", "ashift", "dedupditto", "last_scrubbed_txg", "load_guid",
}  # fmt: skip
_COUNT_PREFIXES = ("userobjused@", "userobjquota@", "groupobjused@", "groupobjquota@", "projectobjused@",
                   "projectobjquota@")  # fmt: skip
_PCTS = {"capacity", "fragmentation"}
_RATIOS = {"compressratio", "refcompressratio", "dedupratio", "bcloneratio"}
_POOL_ONLY = {
    "health", "capacity", "altroot", "autoexpand", "autoreplace", "failmode", "ashift", "bootfs", "cachefile",
    "delegation", "listsnapshots", "dedupditto", "fragmentation", "expandsize", "freeing", "leaked", "allocated",
    "free", "size", "autotrim", "multihost", "comment", "bcloneused", "bclonesaved", "bcloneratio",
}  # fmt: skip
_NO_VALUE = {"-", "none", ""}
# the native properties of zfsprops(7)/zpoolprops(7) (and their short names) that the other sets leave out: with them,
# a headerless -H file whose second field holds no property name is seen to have its columns in another order (-o)
_TEXT = {
    "type", "creation", "mounted", "mountpoint", "sharenfs", "checksum", "compression", "compress", "atime",
    "devices", "exec", "setuid", "readonly", "rdonly", "zoned", "jailed", "snapdir", "aclmode", "aclinherit",
    "acltype", "canmount", "xattr", "utf8only", "normalization", "casesensitivity", "vscan", "nbmand", "sharesmb",
    "guid", "primarycache", "secondarycache", "logbias", "dedup", "mlslabel", "sync", "dnodesize", "dnsize",
    "volmode", "snapdev", "context", "fscontext", "defcontext", "rootcontext", "relatime", "redundant_metadata",
    "overlay", "encryption", "keylocation", "keyformat", "encryptionroot", "keystatus", "snapshots_changed",
    "prefetch", "origin", "clones", "defer_destroy", "userrefs", "receive_resume_token", "redact_snaps", "direct",
    "longname", "shareiscsi", "iscsioptions", "recsize", "reserv", "refreserv", "volblock", "usedsnap", "usedds",
    "usedchild", "usedrefreserv", "lused", "lrefer", "ratio", "refratio", "cap", "frag", "alloc", "expandsz",
    "ckpoint", "dedupcached", "listsnaps", "compatibility", "maxblocksize", "maxdnodesize", "inconsistent",
}  # fmt: skip


def _known_property(word: str) -> bool:
    """A property name zfs/zpool get prints: native, feature@/user@..., or a user property (module:name)."""
    return (
        word in _TEXT or word in _SIZES or word in _COUNTS or word in _PCTS or word in _RATIOS or word in _POOL_ONLY
        or ":" in word or word.startswith(("feature@", "unsupported@", *_SIZE_PREFIXES, *_COUNT_PREFIXES))
    )  # fmt: skip


def _other_order(lines: list[str]) -> ParseError | None:
    """Headerless -H rows (no prompt line names -o's columns) read as NAME PROPERTY VALUE [RECEIVED] SOURCE: when no
    row has a property name in its second field and rows have one elsewhere, the columns are -o's in another order,
    which the rows alone cannot tell: refused saying so (it was read as they stood, names stored as properties)."""
    rows = [(i, ln.rstrip("\r").split("\t")) for i, ln in enumerate(lines, 1) if "\t" in ln]
    if not rows or any(_PROMPT.match(ln.strip()) and "\t" not in ln for ln in lines):
        return None
    if any(len(f) > 1 and _known_property(f[1].strip()) for _, f in rows):
        return None
    at = next(((i, k) for i, f in rows for k, x in enumerate(f) if _known_property(x.strip())), None)
    if at is None:
        return None
    return ParseError(
        f"zfs get -H rows with their columns in another order: field 2 holds no property name ({rows[0][1][1]!r}), "
        f"field {at[1] + 1} does (line {at[0]}); rows alone do not say which column is which",
        line=rows[0][0],
        expected="NAME, PROPERTY, VALUE[, RECEIVED], SOURCE as zfs get -H prints them, or the command line (`zfs get "
        "-H -o value,name,property,source ...`) before the rows, as a shell transcript has it",
    )


def _typed(prop: str, value: str | None) -> tuple[str | None, float | None, bool | None]:
    """(column, number, exact) of a typed property's value; (None, None, None) for text properties.
    Raises ValueError when a typed property's value does not read as its type."""
    if value is None:
        return None, None, None
    if prop in _RATIOS:
        col = "value_ratio"
    elif prop in _PCTS:
        col = "value_pct"
    elif prop in _SIZES or prop.startswith(_SIZE_PREFIXES):
        col = "value_bytes"
    elif prop in _COUNTS or prop.startswith(_COUNT_PREFIXES):
        col = "value_count"
    else:
        return None, None, None
    v = value.strip()
    if v in _NO_VALUE:
        return col, None, None
    if col == "value_ratio" or col == "value_pct":
        num = float(v.removesuffix("x").removesuffix("%"))
        return col, num, True
    if v.isascii() and v.isdigit():
        if len(v) > 20 or int(v) >= 2**64:  # reliability-32: float() of a longer one raised OverflowError
            raise ValueError(v)
        return col, float(int(v)), True
    try:
        return col, zfs_nicenum(v), False
    except UnitError:
        raise ValueError(v) from None


def _source(text: str | None) -> tuple[str | None, str | None]:
    if text is None:
        return None, None
    m = _SOURCE.match(text)
    if not m:
        return None, None
    if m.group(2):
        return "inherited", m.group(2)
    return ("none" if text == "-" else text), None


def _header_columns(line: str) -> list[tuple[str, int]]:
    """(column, start offset) of a header line."""
    return [(m.group().lower(), m.start()) for m in re.finditer(r"NAME|PROPERTY|VALUE|RECEIVED|SOURCE", line)]


def _cut(line: str, cols: list[tuple[str, int]]) -> dict[str, str] | None:
    """The cells of a padded row by the header's offsets; None when the row does not line up with them."""
    cells = {}
    for k, (name, start) in enumerate(cols):
        end = cols[k + 1][1] if k + 1 < len(cols) else None
        if start > 0 and len(line) > start and line[start - 1] != " ":
            return None  # the cell before ran into this column
        if start > 0 and len(line) > start and line[start] == " " and end is not None:
            return None
        cells[name] = line[start:end].strip() if end is not None else line[start:].strip()
    if any(v == "" for k, v in cells.items() if k != "received"):
        return None
    return cells


def _split_tokens(line: str, cols: list[str]) -> dict[str, str] | None:
    """A row whose cells did not line up (a value wider than its column): NAME and PROPERTY are single words,
    SOURCE is recognized at the end, VALUE is what is left."""
    if cols[:2] != ["name", "property"] or cols[-1] != "source" or "received" in cols:
        return None
    words = line.split()
    if len(words) < 4:
        return None
    for n_src in (3, 1):  # 'inherited from X' or one word
        src = " ".join(words[-n_src:])
        if _SOURCE.match(src) and len(words) - n_src >= 3:
            return {"name": words[0], "property": words[1], "value": " ".join(words[2:-n_src]), "source": src}
    return None


def _prompt_columns(cmd: str) -> list[str] | None:
    """The -o column list of a zfs/zpool get command line, else None."""
    words = cmd.split()
    for k, w in enumerate(words):
        if w.startswith("-") and not w.startswith("--") and "o" in w[1:]:
            rest = w[w.index("o") + 1 :] or (words[k + 1] if k + 1 < len(words) else "")
            cols = [c for c in rest.split(",") if c]
            return cols if cols and all(c in _COLUMNS for c in cols) else None
    return None


def _command_targets(cmd: str) -> tuple[str | None, str | None]:
    """(the one property, the one dataset) a zfs/zpool get command names, None where it names all or several:
    what rows print without their PROPERTY or NAME column (-o value, -o name,value ...)."""
    words, positional, k = cmd.split()[2:], [], 0
    while k < len(words):
        w = words[k]
        if w.startswith("-") and len(w) > 1:
            if w[-1] in "ostd" and k + 1 < len(words):  # an option whose argument is the next word
                k += 1
        elif w[0] in "|;&<>":
            break
        else:
            positional.append(w)
        k += 1
    prop = positional[0] if positional and positional[0] != "all" and "," not in positional[0] else None
    target = positional[1] if len(positional) == 2 else None
    return prop, target


def _sniff_o(lines: list[str]) -> bool:
    """zfs get -H -o COLS after its prompt line: every other line has one field per column."""
    m = next((_PROMPT.match(ln.strip()) for ln in lines[:3] if _PROMPT.match(ln.strip())), None)
    cols = _prompt_columns(m.group(1)) if m else None
    rows = [ln for ln in lines if not _PROMPT.match(ln.strip())]
    if not cols or not rows:
        return False
    return all(len(ln.split("\t")) == len(cols) for ln in rows)


def sniff(text: str) -> str | None:
    """'zfs-get' for a NAME PROPERTY VALUE header, 'zfs-get-H' for tab rows NAME\\tPROPERTY\\tVALUE\\tSOURCE."""
    lines = [ln for ln in text[:200_000].split("\n")[:400] if ln.strip()]
    for ln in lines[:50]:
        s = ln.strip()
        if _HEADER.match(s) and "PROPERTY" in s and "VALUE" in s:
            return "zfs-get"
    if _sniff_o(lines):
        return "zfs-get-H"
    rows = [ln.rstrip("\r").split("\t") for ln in lines if "\t" in ln]
    if len(rows) < max(1, len(lines) - 2):
        return None
    if all(len(f) in (4, 5) and _PROPERTY.match(f[1]) and _SOURCE.match(f[-1]) for f in rows):
        return "zfs-get-H"
    if all(len(f) in (4, 5) and _SOURCE.match(f[-1]) and any(_known_property(x) for x in f[:3]) for f in rows):
        return "zfs-get-H"  # -o's columns in another order: parse says so
    return None


class _State:
    def __init__(self):
        self.cols: list[tuple[str, int]] | None = None  # header columns and offsets (human layout)
        self.tab_cols: list[str] | None = None  # columns of -H rows
        self.command: str | None = None
        self.kind: str | None = None  # from the prompt line


def _row(cells: Mapping[str, str | None], st: _State, lineno: int) -> dict:
    if st.command and ("property" not in cells or "name" not in cells):
        prop, target = _command_targets(st.command)
        cells = {"property": prop, "name": target, **cells}
    prop = cells.get("property")
    if prop is None or not _PROPERTY.match(prop):
        raise ParseError(
            f"not a property name: {prop!r}",
            line=lineno,
            expected="a zfs/zpool property name in the PROPERTY column (-o without property: one property named "
            "on the command line)",
        )
    value = cells.get("value")
    try:
        col, num, exact = _typed(prop, value)
    except ValueError:
        raise ParseError(
            f"{prop} = {value!r} is not a number",
            line=lineno,
            expected="a size (128K, 1.5T, 131072), ratio (1.21x), count or percent",
        ) from None
    source = cells.get("source")
    source_kind, inherited_from = _source(source)
    if source is not None and source_kind is None:
        raise ParseError(
            f"not a property source: {source!r}",
            line=lineno,
            expected="-, default, local, temporary, received or 'inherited from DATASET'",
        )
    row: dict[str, Any] = {
        "name": cells.get("name"),
        "kind": st.kind,
        "property": prop,
        "value": value,
        "value_bytes": None,
        "value_ratio": None,
        "value_count": None,
        "value_pct": None,
        "exact": exact if col else None,
        "received": cells.get("received"),
        "source": source,
        "source_kind": source_kind,
        "inherited_from": inherited_from,
        "command": st.command,
        "line_start": lineno,
        "line_end": lineno,
    }
    if col:
        row[col] = num
    return row


def _cells(line: str, st: _State, lineno: int) -> dict[str, str] | None:
    """The cells of a data line, or None when the line is not a row of the current table."""
    if ("\t" in line or st.tab_cols) and st.cols is None:
        fields = line.split("\t")
        cols = st.tab_cols or (list(_COLUMNS[:3]) + ["source"] if len(fields) == 4 else list(_COLUMNS))
        if len(fields) != len(cols):
            return None
        return dict(zip(cols, (f.strip() for f in fields), strict=True))
    if st.cols is None:
        return None
    cells = _cut(line, st.cols)
    if cells is None:
        cells = _split_tokens(line, [c for c, _ in st.cols])
    return cells


def parse(text: str, fmt: str | None = None) -> Parsed:
    if not text.strip():
        raise ParseError("file is empty", kind="empty", expected="zfs get output")
    fmt = fmt or sniff(text)
    if fmt not in FORMATS:
        raise not_this_format(
            text, "no zfs get output found", "a 'NAME PROPERTY VALUE SOURCE' header or tab-separated zfs get -H rows"
        )
    parsed = Parsed(tool=TOOL, format=fmt)
    st = _State()
    rows: list[dict] = []
    lines = lines_of(text)
    if fmt == "zfs-get-H" and (other := _other_order(lines)):
        raise other
    last = max(i for i, ln in enumerate(lines, 1) if ln.strip())
    ignored: list[int] = []
    for lineno, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n ")
        s = line.strip()
        if not s:
            continue
        m = _PROMPT.match(s)
        if m and "\t" not in s:
            st.command, st.cols = m.group(1).strip(), None
            st.kind = "pool" if m.group(2) == "zpool" else "dataset"
            st.tab_cols = _prompt_columns(st.command)
            continue
        if _HEADER.match(s) and len(s.split()) >= 2:
            st.cols = _header_columns(line.expandtabs(8) if "\t" in line else line)
            continue
        if SHELL_PROMPT.match(s) and "\t" not in s:
            st.command, st.cols, st.tab_cols, st.kind = None, None, None, None
            continue
        cells = _cells(line.expandtabs(8) if st.cols is not None and "\t" in line else line, st, lineno)
        if cells is None:
            if st.cols is not None and not ignored and rows and lineno < last:
                raise ParseError(
                    f"not a zfs get row: {s[:80]!r}", line=lineno, expected="a row under the header's columns"
                )
            if st.cols is not None and lineno == last and rows:
                raise ParseError(
                    f"the last row is cut: {s[:80]!r}", line=lineno, kind="truncated", expected="a complete row"
                )
            ignored.append(lineno)
            continue
        rows.append(_row(cells, st, lineno))
    if not rows:
        raise ParseError("zfs get output without rows", line=last, kind="truncated", expected="property rows")
    if ignored:
        parsed.warnings.append(f"lines {', '.join(map(str, ignored[:10]))}: text that is not zfs get output ignored")
    _set_kind(rows)
    for row in rows:
        parsed.add("zfs_properties", row)
    return parsed


def _set_kind(rows: list[dict]) -> None:
    """Rows without a prompt line: 'pool' for names that show a pool-only property, else 'dataset'."""
    pools = {r["name"] for r in rows if r["kind"] is None and r["property"] in _POOL_ONLY}
    for r in rows:
        if r["kind"] is None:
            r["kind"] = "pool" if r["name"] in pools else "dataset"

"""OpenZFS ``zpool list`` and ``zpool iostat`` tables (human, ``-v``, ``-p``, ``-H``).

Format (OpenZFS ``cmd/zpool/zpool_main.c``: ``print_header``/``print_pool``/``print_list_stats``,
``print_iostat_header``/``print_vdev_stats``; the seed-004 FreeBSD 12.2 outputs in data/raw/):

* Numbers are ``zfs_nicenum``: K M G T P E are powers of 1024 for bytes *and* counts
  (``2.77K`` operations/s = 2.77 x 1024 = 2836.48 ops/s); ``-`` is "not applicable" (NULL).
  With ``-p`` they are exact integers; then iostat prints ``0`` instead of ``-`` for the
  capacity of vdevs that have none, so an alloc/free pair of 0/0 is stored as NULL.
* ``zpool list`` columns are read by header name (``-o`` may reorder or drop them; old
  releases print ``USED``/``AVAIL`` for ALLOC/FREE, and lack CKPOINT/EXPANDSZ/FRAG/DEDUP);
  columns this table does not hold are ignored with a warning. ``-H`` prints no header: the
  column order comes from ``-o`` on the prompt line, else from the number of fields (11: 0.8+
  default, 10: 0.6.4-0.7, 8: 0.6.0-0.6.3, 7: Solaris ``SIZE USED AVAIL CAP HEALTH ALTROOT``).
  ``-v`` adds vdev rows (indented; with ``-H`` they start with a tab) and ``logs``/``dedup``/
  ``special``/``cache``/``spare`` section lines.
* ``zpool iostat``: a group line (``capacity operations bandwidth``, with ``-l``/``-q`` more
  groups, stored by ``zpool_hist.py`` in zpool_iostat_latency / zpool_iostat_queues) over a column
  line (``pool alloc free read write read write``; ``used avail`` before 2010). With ``-v`` the vdev tree is indented two spaces per
  level, each pool ends with a dash line, and class sections start with ``logs``/``cache``/...
  lines of dashes. Interval output repeats the rows: ``sample`` counts the reports of each pool
  (0 = the first, which covers the time since the pool was imported).
* Roles (iostat): ``pool``; top-level ``vdev``, or ``log``/``cache``/``special``/``dedup``/
  ``spare`` under a section line; deeper rows ``disk`` (a leaf) or ``vdev`` (raidz/mirror/spare
  inside). In seed 004 the log device ``nvd0p6`` sits right under the pool with no ``logs``
  line (the author's paste lost it, or FreeBSD 12's zpool printed none): it is stored as what
  the output says, a top-level ``vdev``.
* A prompt line (``[user@host ~]$ zpool list``) before a table is allowed; its command is
  stored. ``-T u|d`` timestamp lines are stored with the rows that follow. Text after a
  complete table (the seed's prose) is ignored with a warning; a broken row inside a table is
  an error (``truncated`` on the last line).
* ``zpool iostat -r`` request-size histograms: ``zpool_hist.py`` (table ``zpool_iostat_req_size``); ``-w``
  latency histograms (also ``-wH``): ``zpool_latency_hist.py`` (table ``zpool_iostat_latency_hist``).
* Not supported (ParseError): ``zpool iostat -H -v`` without -w (scripted
  mode drops the indentation and section lines, so pools and vdevs cannot be told apart).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from ..units import UnitError, zfs_nicenum
from . import handover, zpool_hist, zpool_latency_hist, zpool_status
from .base import LINES, SHELL_PROMPT, Parsed, ParseError, lines_of, not_this_format, table

TOOL = "zpool"
PARSER_VERSION = 1
# what the unknown-format message lists (parsers.expected_formats): every format this parser stores, as a user knows it
READS: dict[str, str] = {
    "zpool-list": "zpool list",
    "zpool-iostat": "zpool iostat",
    "zpool-iostat-r": "zpool iostat -r",
    "zpool-iostat-w": "zpool iostat -w",
    "zpool-status": "zpool status",
}
PARSE_TAKES_NAME = False  # optional hooks, declared (contract.py): none offered
STREAM_FORMATS: tuple[str, ...] = ()
parse_bytes = None
parse_stream = None
FORMATS = ("zpool-list", "zpool-iostat", "zpool-status", zpool_hist.FORMAT, zpool_latency_hist.FORMAT)
# zpool status and the histograms / -l -q groups are read there; their code is in the parser version too
HELPER_MODULES = ("zpool_status", "zpool_hist", "zpool_latency_hist", "handover")

_COMMON = (
    (
        "exact",
        "BOOLEAN",
        "true when the numbers were printed exactly (-p); false for nicenum values (powers of 1024, "
        "3 significant digits, so the stored numbers are approximate)",
    ),
    ("timestamp", "VARCHAR", "the -T u|d timestamp line printed before this report, as printed; else NULL"),
    ("command", "VARCHAR", "the zpool command of the prompt line before the output, when present"),
)

TABLES = {
    "zpool_list": table(
        "zpool list: one row per pool (and with -v per vdev and class section member).",
        ("pool", "VARCHAR", "pool name"),
        ("vdev", "VARCHAR", "vdev name of a -v row; NULL for the pool's own row"),
        ("depth", "INTEGER", "0 for the pool, 1 for top-level vdevs, 2 for their disks ...; NULL with -H"),
        ("class", "VARCHAR", "NULL for the pool row; normal, log, dedup, special, cache or spare for vdev rows"),
        ("size_bytes", "DOUBLE", "SIZE, bytes"),
        ("alloc_bytes", "DOUBLE", "ALLOC (USED in old releases), bytes"),
        ("free_bytes", "DOUBLE", "FREE (AVAIL in old releases), bytes"),
        ("ckpoint_bytes", "DOUBLE", "CKPOINT (space held by a checkpoint), bytes; NULL for '-'"),
        ("expandsz_bytes", "DOUBLE", "EXPANDSZ (unused space the pool could grow into), bytes; NULL for '-'"),
        ("frag_pct", "DOUBLE", "FRAG (free-space fragmentation), percent; NULL for '-'"),
        ("cap_pct", "DOUBLE", "CAP (allocated / size), percent"),
        ("dedup_ratio", "DOUBLE", "DEDUP ratio (1.19x -> 1.19); NULL for '-'"),
        ("health", "VARCHAR", "HEALTH (ONLINE, DEGRADED, ...; AVAIL/INUSE for spares)"),
        ("altroot", "VARCHAR", "ALTROOT; NULL for '-'"),
        ("sample", "INTEGER", "0-based number of this pool's report in the file (interval output repeats rows)"),
        *_COMMON,
        *LINES,
    ),
    "zpool_iostat": table(
        "zpool iostat [-v]: one row per pool/vdev per report. Rates are averages over the report's interval "
        "(the first report: since import).",
        ("pool", "VARCHAR", "pool name"),
        ("vdev", "VARCHAR", "vdev/device name; NULL for the pool's own row"),
        ("depth", "INTEGER", "indent level: 0 pool, 1 top-level vdev, 2 disks of a raidz/mirror, ..."),
        ("role", "VARCHAR", "pool, vdev, disk, log, cache, special, dedup or spare (see module doc)"),
        (
            "class",
            "VARCHAR",
            "normal, log, cache, special, dedup or spare (the section the row is in); NULL for the pool",
        ),
        ("leaf", "BOOLEAN", "true when no row is indented under this one (a device)"),
        ("alloc_bytes", "DOUBLE", "capacity alloc (used), bytes; NULL for '-' (not a top-level vdev)"),
        ("free_bytes", "DOUBLE", "capacity free (avail), bytes; NULL for '-'"),
        ("read_ops_per_s", "DOUBLE", "read operations per second (nicenum: 2.77K = 2836.48)"),
        ("write_ops_per_s", "DOUBLE", "write operations per second"),
        ("read_bytes_per_s", "DOUBLE", "read bandwidth, bytes/s"),
        ("write_bytes_per_s", "DOUBLE", "write bandwidth, bytes/s"),
        ("sample", "INTEGER", "0-based number of this pool's report in the file (0 = since import)"),
        *_COMMON,
        *LINES,
    ),
}
TABLES.update(zpool_status.TABLES)

TABLES.update(zpool_hist.TABLES)
TABLES.update(zpool_latency_hist.TABLES)

_SECTIONS = {
    "logs": "log",
    "log": "log",
    "cache": "cache",
    "spares": "spare",
    "spare": "spare",
    "special": "special",
    "dedup": "dedup",
}
_LIST_KEYS = {
    "name": "pool",
    "size": "size",
    "alloc": "alloc",
    "allocated": "alloc",
    "used": "alloc",
    "free": "free",
    "avail": "free",
    "ckpoint": "ckpoint",
    "checkpoint": "ckpoint",
    "expandsz": "expandsz",
    "expandsize": "expandsz",
    "frag": "frag",
    "fragmentation": "frag",
    "cap": "cap",
    "capacity": "cap",
    "dedup": "dedup",
    "dedupratio": "dedup",
    "health": "health",
    "altroot": "altroot",
}
_SCRIPTED_DEFAULTS = {
    11: ("name", "size", "alloc", "free", "ckpoint", "expandsz", "frag", "cap", "dedup", "health", "altroot"),
    10: ("name", "size", "alloc", "free", "expandsz", "frag", "cap", "dedup", "health", "altroot"),
    8: ("name", "size", "alloc", "free", "cap", "dedup", "health", "altroot"),
    7: ("name", "size", "used", "avail", "cap", "health", "altroot"),
}
_GROUPS = {
    "capacity": 2,
    "operations": 2,
    "bandwidth": 2,
    "total_wait": 2,
    "disk_wait": 2,
    "syncq_wait": 2,
    "asyncq_wait": 2,
    "scrub": 1,
    "trim": 1,
    "rebuild": 1,
    "syncq_read": 2,
    "syncq_write": 2,
    "asyncq_read": 2,
    "asyncq_write": 2,
    "scrubq_read": 2,
    "trimq_write": 2,
    "rebuildq_write": 2,
}
_HEALTH = re.compile(r"^(ONLINE|DEGRADED|FAULTED|OFFLINE|UNAVAIL|REMOVED|SUSPENDED|AVAIL|INUSE)$")
_PROMPT = re.compile(r"^(?:.*?[$#%>]\s+)?(?:sudo\s+)?(zpool\s+(list|iostat)\b.*)$")
_LIST_HEADER = re.compile(r"^NAME\s+\S")
_IOSTAT_GROUPS = re.compile(r"^\s+capacity\s+operations\s+bandwidth\b")
_IOSTAT_COLS = re.compile(r"^(pool|vdev)\s+(alloc|used)\s+(free|avail)\s")
_HISTOGRAM = re.compile(r"^(req_size|latency)\s")
_DASHES = re.compile(r"^-+(\s+-+)+\s*$")
_TIMESTAMP = re.compile(r"^(\d{9,11}|\w{3}\s+\w{3}\s+\d{1,2}\s+\d\d:\d\d:\d\d\s.*\d{4})\s*$")
_SECTION_LINE = re.compile(r"^(?:logs|log|cache|spares|spare|special|dedup)(?:\s+-)+\s*$")
_FOREIGN = {"REFER", "MOUNTPOINT", "STATE", "CKSUM", "TYPE", "ORIGIN", "READ", "WRITE", "USEDSNAP"}


# headers only zpool list prints (zfs list has USED, AVAIL and a DEDUP property of its own)
_POOL_ONLY = {"SIZE", "ALLOC", "FREE", "CKPOINT", "EXPANDSZ", "FRAG", "CAP", "HEALTH", "ALTROOT"}


def _list_header_ok(tokens: list[str]) -> bool:
    """A zpool list header: NAME first, SIZE or HEALTH in it, or (a -o selection) only zpool list
    column names with at least one that zfs list never prints."""
    pool_columns = all(t.lower() in _LIST_KEYS for t in tokens) and bool(_POOL_ONLY & set(tokens))
    return (
        len(tokens) >= 2
        and tokens[0] == "NAME"
        and ("SIZE" in tokens or "HEALTH" in tokens or pool_columns)
        and not _FOREIGN & set(tokens)
    )


def sniff(text: str) -> str | None:
    head = text[:200000]
    if zpool_status.SNIFF.search(head):
        return "zpool-status"
    lines = head.splitlines()
    if handover.opens_with_other(lines):  # `arcstat 1` then `zpool iostat`: the arcstats parser's (it hands it on)
        return None
    if zpool_hist.sniff(lines):
        return zpool_hist.FORMAT
    if zpool_latency_hist.sniff(lines):
        return zpool_latency_hist.FORMAT
    for i, line in enumerate(lines):
        if _IOSTAT_GROUPS.match(line) and i + 1 < len(lines) and _IOSTAT_COLS.match(lines[i + 1]):
            return "zpool-iostat"
        if _LIST_HEADER.match(line) and _list_header_ok(line.split()):
            return "zpool-list"
    data = [ln for ln in lines if ln.strip()]
    prompt = next((m for m in map(_PROMPT.search, data[:3]) if m), None)
    cmd = prompt.group(2) if prompt else None
    rows = [ln for ln in data if "\t" in ln]
    # -H -v: class section lines (logs, cache, spare ...) are printed with spaces, not tabs
    sections = [ln for ln in data if "\t" not in ln and _SECTION_LINE.match(ln)]
    if rows and len(rows) + len(sections) >= len(data) - 1:
        if all(any(_HEALTH.match(f.strip()) for f in ln.split("\t")) for ln in rows):
            return "zpool-list"
        props = _prompt_flags(prompt.group(1))[1] if prompt and cmd == "list" else None
        if props and all(len(ln.lstrip("\t").split("\t")) <= len(props) for ln in rows):
            return "zpool-list"  # zpool list -H -o ... without a HEALTH column
        if cmd == "iostat" and all(len(ln.split("\t")) == 7 for ln in rows):
            return "zpool-iostat"
    return None


# --- values ----------------------------------------------------------------------------------


class _Bad(Exception):
    """A cell that does not read as a zpool value."""


def _number(cell: str) -> tuple[float | None, bool | None]:
    """(value, exact) of a nicenum/literal cell; (None, None) for '-'."""
    c = cell.strip()
    if c == "-":
        return None, None
    if c.isascii() and c.isdigit():
        if len(c) > 20 or int(c) >= 2**64:  # reliability-32: float() of a longer one raised OverflowError
            raise _Bad(cell)
        return float(int(c)), True
    try:
        v = zfs_nicenum(c)
    except UnitError:
        raise _Bad(cell) from None
    if math.isnan(v):
        raise _Bad(cell)
    return v, False


def _suffixed(cell: str, suffix: str) -> float | None:
    c = cell.strip()
    if c == "-":
        return None
    if c.endswith(suffix):
        c = c[:-1]
    try:
        return float(c)
    except ValueError:
        raise _Bad(cell) from None


def _prompt_flags(cmd: str | None) -> tuple[set[str], list[str] | None]:
    """Single-letter flags and the -o property list of a zpool command line."""
    flags: set[str] = set()
    props = None
    if not cmd:
        return flags, props
    words = cmd.split()
    for k, w in enumerate(words[2:], 2):
        if w.startswith("-") and len(w) > 1 and not w[1:].isdigit():
            letters = w[1:]
            for j, ch in enumerate(letters):
                if ch == "o":
                    rest = letters[j + 1 :] or (words[k + 1] if k + 1 < len(words) else "")
                    props = [p.strip().lower() for p in rest.split(",") if p.strip()]
                    break
                flags.add(ch)
    return flags, props


# --- the line loop ---------------------------------------------------------------------------


@dataclass
class _State:
    """Where a read of zpool list/iostat output is."""

    kind: str | None = None  # "list" | "iostat" | None
    cols: Any = None  # list: normalised names; iostat: number of value columns
    scripted: bool = False
    in_table: bool = False  # the previous line belonged to a table
    after_header: bool = False  # the iostat column line was just read: a dash rule follows
    table_no: int = 0
    pool: str | None = None
    section: str = "normal"
    command: str | None = None
    timestamp: str | None = None
    samples: dict[tuple[str, str | None], int] = field(default_factory=dict)
    ignored_from: int | None = None
    groups: list[str] = field(default_factory=list)  # the -l/-q column groups of the open iostat table


def _sample(st: _State, kind: str, pool: str) -> int:
    key = (kind, pool)
    st.samples[key] = st.samples.get(key, -1) + 1
    return st.samples[key]


def _list_row(st: _State, line: str, lineno: int) -> dict | None:
    """A zpool list row as a dict, None for a section line; raises _Bad if it is not a row."""
    if st.scripted and "\t" in line:
        fields = line.split("\t")
        vdev_row = fields[0] == "" and len(fields) > 1
        if vdev_row:
            fields = fields[1:]
    else:
        fields = line.split()
        vdev_row = line.startswith(" ")
    if not fields:
        raise _Bad(line)
    name = fields[0].strip()
    if not vdev_row and name in _SECTIONS and all(f.strip() == "-" for f in fields[1:]) and st.pool:
        st.section = _SECTIONS[name]
        return None
    values = [f.strip() for f in fields[1:]]
    cols = st.cols[1:]
    if len(values) > len(cols) or (not vdev_row and len(values) != len(cols)):
        raise _Bad(line)
    cells = dict(zip(cols, values, strict=False))  # a vdev row may stop short of the pool row's columns
    row: dict[str, Any] = {"pool": name, "vdev": None, "depth": 0, "class": None}
    if vdev_row:
        if st.pool is None:
            raise _Bad(line)
        indent = len(line) - len(line.lstrip(" "))
        row.update(pool=st.pool, vdev=name, depth=None if st.scripted else indent // 2, **{"class": st.section})
    exact = True
    for key in ("size", "alloc", "free", "ckpoint", "expandsz"):
        value, ex = _number(cells.get(key, "-"))
        row[f"{key}_bytes"] = value
        exact = exact and ex is not False
    row["frag_pct"] = _suffixed(cells.get("frag", "-"), "%")
    row["cap_pct"] = _suffixed(cells.get("cap", "-"), "%")
    row["dedup_ratio"] = _suffixed(cells.get("dedup", "-"), "x")
    health = cells.get("health")
    if health is not None and not _HEALTH.match(health) and health != "-":
        raise _Bad(line)
    row["health"] = health if health not in (None, "-") else None
    altroot = cells.get("altroot")
    row["altroot"] = altroot if altroot not in (None, "-") else None
    row["exact"] = exact
    if not vdev_row:
        st.pool, st.section = name, "normal"
        row["sample"] = _sample(st, "list", name)
    else:
        row["sample"] = st.samples.get(("list", st.pool), 0)
    return row


def _iostat_row(st: _State, line: str, lineno: int) -> dict | None:
    if st.scripted:
        fields = line.split("\t")
        name, values, indent = fields[0], [f.strip() for f in fields[1:]], 0
    else:
        fields = line.split()
        name, values = fields[0], fields[1:]
        indent = len(line) - len(line.lstrip(" "))
    if len(values) != st.cols:
        raise _Bad(line)
    extra = (st.groups, values[6:]) if len(values) > 6 else None
    depth = indent // 2
    if depth == 0 and name in _SECTIONS and all(v == "-" for v in values) and st.pool:
        st.section = _SECTIONS[name]
        return None
    nums = [_number(v) for v in values[:6]]
    exact = all(ex is not False for _, ex in nums)
    (alloc, _), (free, _), (rops, _), (wops, _), (rbw, _), (wbw, _) = nums
    if depth == 0:
        st.pool, st.section = name, "normal"
        sample = _sample(st, "iostat", name)
    elif st.pool is None:
        raise _Bad(line)
    else:
        sample = st.samples[("iostat", st.pool)]
    return {
        "pool": st.pool,
        "vdev": None if depth == 0 else name,
        "depth": depth,
        "class": None if depth == 0 else st.section,
        "alloc_bytes": alloc,
        "free_bytes": free,
        "read_ops_per_s": rops,
        "write_ops_per_s": wops,
        "read_bytes_per_s": rbw,
        "write_bytes_per_s": wbw,
        "sample": sample,
        "exact": exact,
        "_groups": extra,
    }


def _iostat_columns(groups_line: str, cols_line: str, lineno: int) -> int:
    groups = groups_line.split()
    unknown = [g for g in groups if g not in _GROUPS]
    if unknown or groups[:3] != ["capacity", "operations", "bandwidth"]:
        raise ParseError(
            f"zpool iostat column groups {unknown or groups} are not supported",
            line=lineno,
            kind="unsupported-version",
            expected="capacity operations bandwidth [latency/queue groups of -l/-q]",
        )
    n = sum(_GROUPS[g] for g in groups)
    if len(cols_line.split()) - 1 != n:
        raise ParseError(
            f"{len(cols_line.split()) - 1} column labels under {n} group columns",
            line=lineno + 1,
            expected="one label per column under the group line",
        )
    return n


def _finish(rows: list[dict], iostat: bool) -> None:
    """Exactness per table, and (iostat) leaf/role and -p's 0/0 "not applicable" capacity."""
    inexact = {r["_table"] for r in rows if r["exact"] is False}
    for k, row in enumerate(rows):
        row["exact"] = row.pop("_table") not in inexact
        if not iostat:
            continue
        nxt = rows[k + 1] if k + 1 < len(rows) else None
        row["leaf"] = not (
            nxt and nxt["pool"] == row["pool"] and nxt["sample"] == row["sample"] and nxt["depth"] > row["depth"]
        )
        if row["depth"] == 0:
            row["role"] = "pool"
        elif row["depth"] == 1:
            row["role"] = "vdev" if row["class"] == "normal" else row["class"]
        else:
            row["role"] = "disk" if row["leaf"] else "vdev"
        if row["exact"] and row["depth"] > 1 and row["alloc_bytes"] == 0 and row["free_bytes"] == 0:
            row["alloc_bytes"] = row["free_bytes"] = None  # -p prints 0 for "not applicable"


def _emit(parsed: Parsed, rows: dict[str, list[dict]]) -> None:
    """The rows of both tables, finished, and the -l/-q groups of each iostat row into their own tables."""
    _finish(rows["zpool_list"], iostat=False)
    _finish(rows["zpool_iostat"], iostat=True)
    for name, table_rows in rows.items():
        for row in table_rows:
            extra = row.pop("_groups", None)
            parsed.add(name, row)
            if extra:
                zpool_hist.add_group_rows(parsed, row, *extra)


class _Reader:
    """One read through zpool list/iostat output: prompt lines, headers and rows, a line at a time."""

    def __init__(self, parsed: Parsed, fmt: str, lines: list[str]):
        self.parsed, self.fmt, self.lines = parsed, fmt, lines
        self.last = max(i for i, ln in enumerate(lines, 1) if ln.strip())
        self.st = _State()
        self.rows: dict[str, list[dict]] = {"zpool_list": [], "zpool_iostat": []}

    def flush_ignored(self, lineno: int) -> None:
        st = self.st
        if st.ignored_from is not None:
            first, end = st.ignored_from, lineno - 1
            span = f"line {first}" if first == end else f"lines {first}-{end}"
            self.parsed.warnings.append(f"{span}: text that is not zpool output ignored")
            st.ignored_from = None

    def open_table(self, kind: str, cols: Any, scripted: bool, lineno: int) -> None:
        self.flush_ignored(lineno)
        st = self.st
        st.kind, st.cols, st.scripted, st.in_table = kind, cols, scripted, True
        st.pool, st.section, st.after_header = None, "normal", False
        st.table_no += 1

    def line(self, lineno: int, line: str) -> None:
        st = self.st
        s = line.strip()
        if not s:
            st.in_table = False
            return
        m = _PROMPT.match(s)
        if m and "\t" not in s:
            self.prompt(m, lineno)
            return
        if SHELL_PROMPT.match(s) and "\t" not in s:  # another command's prompt line, or a bare one after the output
            self.flush_ignored(lineno)
            st.command, st.kind, st.in_table, st.timestamp = None, None, False, None
            return
        if _TIMESTAMP.match(s):
            st.timestamp = s
            return
        if not self.header(lineno, line, s):
            self.data(lineno, line, s)

    def prompt(self, m: re.Match, lineno: int) -> None:
        """A `zpool list`/`zpool iostat` prompt line: with -H, the table it opens (no header follows)."""
        st = self.st
        self.flush_ignored(lineno)
        st.command, st.kind, st.in_table, st.timestamp = m.group(1).strip(), None, False, None
        flags, props = _prompt_flags(st.command)
        if "H" not in flags:
            return
        if m.group(2) != "iostat":
            self.open_table("list", [_LIST_KEYS.get(p, p) for p in props] if props else None, True, lineno)
            return
        if flags & {"v", "l", "q", "r", "w"}:
            raise ParseError(
                "zpool iostat -H with -v/-l/-q/-r/-w cannot be parsed",
                line=lineno,
                kind="unsupported-version",
                expected="zpool iostat -H [-p] (pool rows) or zpool iostat -v without -H",
            )
        self.open_table("iostat", 6, True, lineno)

    def header(self, lineno: int, line: str, s: str) -> bool:
        """A header line or rule of a table (True when the line was one)."""
        st = self.st
        nxt = self.lines[lineno] if lineno < len(self.lines) else ""
        if _HISTOGRAM.match(nxt) and len(s.split()) > 1:
            raise ParseError(
                "zpool iostat histograms (-w, -r) are read alone in a file, not after an iostat table",
                line=lineno,
                kind="unsupported-version",
                expected="zpool iostat [-v] [-p] tables",
            )
        if (
            line.startswith(" ")
            and _IOSTAT_COLS.match(nxt)
            and (_IOSTAT_GROUPS.match(line) or all(w in _GROUPS for w in s.split()))
        ):
            self.open_table("iostat", _iostat_columns(line, nxt, lineno), False, lineno)
            st.groups = line.split()[3:]  # -l/-q groups after capacity, operations, bandwidth
            return True
        if st.kind == "iostat" and _IOSTAT_COLS.match(line):
            st.after_header = True
            return True
        if _LIST_HEADER.match(line) and _list_header_ok(line.split()):
            cols = [_LIST_KEYS.get(t.lower(), t.lower()) for t in line.split()]
            unknown = [t for t, c in zip(line.split(), cols, strict=True) if c not in _LIST_KEYS.values()]
            if unknown:
                self.parsed.warnings.append(f"line {lineno}: zpool list columns not stored: {', '.join(unknown)}")
            self.open_table("list", cols, False, lineno)
            return True
        if st.kind == "iostat" and _DASHES.match(s):
            st.in_table, st.after_header = st.after_header, False  # header rule, or the end of a -v pool block
            return True
        if st.kind is None and _DASHES.match(s) and " iostat" in f" {st.command or ''}":
            return True  # ZoL 0.7 `zpool iostat -y ... -v N` prints a rule before its first header (openzfs/zfs#7694)
        return False

    def data(self, lineno: int, line: str, s: str) -> None:
        """A row of the open table, or text around the output (ignored, with a warning)."""
        st = self.st
        if st.kind is None and self.fmt == "zpool-list" and "\t" in s and not self.parsed.n_rows:
            self.open_table("list", None, True, lineno)  # zpool list -H without a prompt line
        if st.kind is None:
            if st.ignored_from is None and not (self.rows["zpool_list"] or self.rows["zpool_iostat"]):
                raise ParseError(
                    f"not zpool output: {s[:80]!r}",
                    line=lineno,
                    expected="a prompt line, a zpool list header or a zpool iostat header",
                )
            st.ignored_from = st.ignored_from or lineno
            return
        try:
            if st.kind == "list":
                if st.cols is None:  # scripted without -o: the number of fields tells the default columns
                    n = len(line.split("\t"))
                    if n not in _SCRIPTED_DEFAULTS:
                        raise _Bad(line)
                    st.cols = [_LIST_KEYS[c] for c in _SCRIPTED_DEFAULTS[n]]
                row, table_name = _list_row(st, line, lineno), "zpool_list"
            else:
                row, table_name = _iostat_row(st, line, lineno), "zpool_iostat"
        except _Bad:
            if st.in_table:
                kind = "truncated" if lineno >= self.last else "invalid"
                raise ParseError(
                    f"not a zpool {st.kind} row: {s[:80]!r}",
                    line=lineno,
                    kind=kind,
                    expected=f"a {st.kind} row with the header's columns",
                ) from None
            st.ignored_from = st.ignored_from or lineno
            return
        self.flush_ignored(lineno)
        st.in_table = True
        if row is not None:
            row.update(
                timestamp=st.timestamp, command=st.command, line_start=lineno, line_end=lineno, _table=st.table_no
            )
            if "p" in _prompt_flags(st.command)[0]:
                row["exact"] = True
            self.rows[table_name].append(row)


def _tables_after(parsed: Parsed, lines: list[str], start: int) -> None:
    """A zpool list/iostat table pasted after ``zpool iostat -r`` histograms: read from line ``start`` on."""
    handover.rest(parsed, lines, start, parse, "zpool list/iostat output")


def parse(text: str, fmt: str | None = None) -> Parsed:
    if not text.strip():
        raise ParseError("file is empty", kind="empty", expected="zpool list or zpool iostat output")
    fmt = fmt or sniff(text)
    if fmt == "zpool-status":
        parsed = Parsed(tool=TOOL, format=fmt)
        zpool_status.read_status(lines_of(text), parsed)
        return parsed
    if fmt not in FORMATS:
        raise not_this_format(
            text,
            "no zpool list/iostat table found",
            "a 'NAME SIZE ALLOC ...' or 'capacity operations bandwidth' header",
        )
    if fmt == zpool_hist.FORMAT:
        return zpool_hist.parse(text, TOOL, then=_tables_after)
    if fmt == zpool_latency_hist.FORMAT:
        return zpool_latency_hist.parse(text, TOOL)
    parsed = Parsed(tool=TOOL, format=fmt)
    reader = _Reader(parsed, fmt, [ln.rstrip() for ln in lines_of(text)])
    for lineno, line in enumerate(reader.lines, 1):
        reader.line(lineno, line)
    reader.flush_ignored(reader.last + 1)
    _emit(parsed, reader.rows)
    if not parsed.n_rows and not re.search(r"^no pools available", text, re.M):
        raise ParseError(
            "zpool output without rows", line=reader.last, kind="truncated", expected="pool rows under the header"
        )
    return parsed

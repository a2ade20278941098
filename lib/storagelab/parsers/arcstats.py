"""ZFS ARC statistics: the Linux kstat ``/proc/spl/kstat/zfs/arcstats``, FreeBSD ``sysctl kstat.zfs.misc.arcstats``,
``arc_summary`` (the Python 3 one of OpenZFS 2.x and the older ``arc_summary.py``) and ``arcstat`` (columns over
intervals).

Formats (OpenZFS ``module/zfs/arc.c: arc_stats``, ``cmd/arc_summary``, ``cmd/arcstat.in``; SPL ``kstat`` on
Linux; the published outputs in tests/fixtures/arcstats):

* kstat: a header ``KID TYPE FLAGS NDATA DATA_SIZE CRTIME SNAPTIME`` (six integers and a hex flag), a
  ``name type data`` line, then ``NAME TYPE VALUE`` per counter (type 4 = uint64, 3 = int64).
* sysctl: ``kstat.zfs.misc.arcstats.NAME: VALUE`` per counter (other sysctl lines are ignored).
* Both are exact integers; the unit follows from the name: sizes, limits and targets in bytes (``size``,
  ``c``, ``c_max``, ``arc_meta_limit``, ``l2_size``, ``*_size``, ``*_bytes``, ``*_limit`` ...), the rest counts
  (``hits``, ``misses``, ``hash_*`` ...).
* arc_summary prints rounded values: sizes with binary units (``7.8 GiB``, old: ``80.00 GiB``), counts with
  decimal suffixes (``1.2G``, ``10.6M``; old: ``1.23b``, ``936.15k``). The lines that carry the kstat's key
  values are stored under the kstat name (``ARC size (current)`` -> ``size``, ``Target size`` -> ``c``,
  ``Max size`` -> ``c_max``, ``Min size`` -> ``c_min``, metadata limit -> ``arc_meta_limit``, cache hits and
  misses -> ``hits``/``misses``, ``L2ARC size (adaptive)`` -> ``l2_size``), ``exact`` false.
* arcstat: a header of field names (``time read miss miss% ... arcsz c``, 2.x: ``time read ddread ddh% ...
  size c avail``) and one row per interval; rates are per second over the interval, ``%`` fields percents,
  sizes in bytes (K/M/G/T powers of 1024). The first row covers the time since boot (older arcstat) or is
  left out by newer ones.
"""

from __future__ import annotations

import re

from ..units import UnitError, zfs_nicenum
from . import handover, zpool
from .arc_summary import parse_summary  # the arc_summary reader: its own module
from .base import LINES, SHELL_PROMPT, Parsed, ParseError, lines_of, not_this_format, table

TOOL = "arcstats"
PARSER_VERSION = 1
# what the unknown-format message lists (parsers.expected_formats): every format this parser stores, as a user knows it
READS: dict[str, str] = {
    "arcstats-kstat": "/proc/spl/kstat/zfs/arcstats",
    "arcstats-sysctl": "sysctl kstat.zfs.misc.arcstats",
    "arc_summary": "arc_summary",
    "arcstat": "arcstat",
}
PARSE_TAKES_NAME = False  # optional hooks, declared (contract.py): none offered
STREAM_FORMATS: tuple[str, ...] = ()
parse_bytes = None
parse_stream = None
FORMATS = ("arcstats-kstat", "arcstats-sysctl", "arc_summary", "arcstat")
# part of this parser: its code is in the parser version too (zpool and its helpers read a zpool iostat after arcstat)
HELPER_MODULES = ("arc_summary", "handover", "zpool", "zpool_hist", "zpool_latency_hist", "zpool_status")

TABLES = {
    "arc_stats": table(
        "ARC counters and sizes: every counter of a kstat / sysctl dump, and the key lines of arc_summary.",
        ("name", "VARCHAR", "the kstat name (hits, misses, size, c, c_max, arc_meta_limit, l2_size ...)"),
        ("value", "DOUBLE", "the value in its unit (exact integers from kstat/sysctl)"),
        (
            "unit",
            "VARCHAR",
            "'bytes' or 'count'; 'ratio' (l2_data_to_meta_ratio), 'fraction_2_32' (2.2+ meta, pd, pm: x / 2^32)",
        ),
        ("exact", "BOOLEAN", "true for kstat/sysctl integers; false for arc_summary's rounded values"),
        ("kstat_type", "INTEGER", "the Linux kstat type column (4 uint64, 3 int64 ...); NULL elsewhere"),
        ("label", "VARCHAR", "arc_summary: the printed label of the line; NULL for kstat/sysctl"),
        *LINES,
    ),
    "arcstat_samples": table(
        "arcstat: one row per interval line and column.",
        ("sample", "INTEGER", "0-based number of the interval line in the file"),
        ("time", "VARCHAR", "the time column (HH:MM:SS) as printed, NULL without one"),
        ("field", "VARCHAR", "the column name as printed (read, miss%, arcsz, size, c ...)"),
        ("value", "DOUBLE", "the value: a rate per second, a percent, or bytes (see unit)"),
        (
            "unit",
            "VARCHAR",
            "'per_s' (accesses, hits, misses per second), 'bytes_per_s', 'pct', 'bytes' or 'count' (grow)",
        ),
        ("exact", "BOOLEAN", "false when printed with a K/M/G suffix (rounded), true for plain integers"),
        *LINES,
    ),
}

_KSTAT_HEAD = re.compile(r"^\d+ \d+ 0x[0-9a-fA-F]+ \d+ \d+ \d+ \d+$")
_KSTAT_COLS = re.compile(r"^name\s+type\s+data$")
_KSTAT_ROW = re.compile(r"^([a-z_][a-z0-9_]*)\s+(\d+)\s+(-?\d+)$")
_SYSCTL = re.compile(r"^kstat\.zfs\.misc\.arcstats\.([a-z0-9_]+):\s*(-?\d+)$")
_BYTES_NAME = re.compile(
    r"(_size|_asize|_bytes|_limit|_used|_min|_max|_free|_tempreserve|_data|_metadata|_target)$"
    r"|^(c|p|size|c_min|c_max|evict_l2_cached|evict_l2_eligible\w*|evict_l2_ineligible|arc_sys_free)$"
)
_COUNT_NAME = re.compile(r"^hash_|_count$|_hits$|_misses$|^arc_no_grow$|^arc_prune$")
_SUMMARY_SNIFF = re.compile(r"^(ARC size \(current\):|ARC Size:|ZFS Subsystem Report\b)", re.M)
# arcstat's fields (OpenZFS 2.3 ``cmd/arcstat``, its ``cols`` table; older arcstat.py/.pl fields are a subset; the
# size fields of OpenZFS 2.3.x+ ``arcstat -f``: mfusz, mrutg ...). Sizes are scaled by 1024 there, rates by 1000.
_ARCSTAT_SIZES = {
    "arcsz", "size", "c", "l2pref", "l2mfu", "l2mru", "l2data", "l2meta", "l2asize", "l2size", "need", "free",
    "avail", "waste", "cmpsz", "ovhsz", "bonsz", "dnosz", "dbusz", "hdrsz", "l2hsz", "abdsz", "datatg", "datasz",
    "metatg", "metasz", "anosz", "mfusz", "mfutg", "mrusz", "mrutg", "mfudt", "mfuda", "mfumt", "mfume", "mrudt",
    "mruda", "mrumt", "mrume", "uncsz",
}  # fmt: skip
_ARCSTAT_BYTE_RATES = {"el2cach", "el2el", "el2mfu", "el2mru", "el2inel", "l2bytes", "l2wbytes"}
_ARCSTAT_RATES = {
    "hits", "iohs", "miss", "read", "dhit", "dioh", "dmis", "ddhit", "ddioh", "ddmis", "dmhit", "dmioh", "dmmis",
    "phit", "pioh", "pmis", "pdhit", "pdioh", "pdmis", "pmhit", "pmioh", "pmmis", "mhit", "mioh", "mmis", "mread",
    "mfu", "mru", "mfug", "mrug", "unc", "eskip", "el2skip", "mtxmis", "dread", "ddread", "dmread", "pread",
    "pdread", "pmread", "l2hits", "l2miss", "l2read", "ztotal", "zhits", "zahead", "zpast", "zmisses", "zmax",
    "zfuture", "zstride", "zissued", "zactive", "rmis",
}  # fmt: skip
_ARCSTAT_FIELDS = (
    {"time", "grow"} | _ARCSTAT_SIZES | _ARCSTAT_BYTE_RATES | _ARCSTAT_RATES
    | {f + "%" for f in ("hit", "ioh", "miss", "dh", "di", "dm", "ddh", "ddi", "ddm", "dmh", "dmi", "dmm", "ph",
                         "pi", "pm", "pdh", "pdi", "pdm", "pmh", "pmi", "pmm", "mh", "mi", "mm", "l2hit", "l2miss",
                         "l2pref", "l2mfu", "l2mru", "l2data", "l2meta", "iohit")}
    | {f + "%" for f in ("cmpsz", "ovhsz", "bonsz", "dnosz", "dbusz", "hdrsz", "l2hsz", "abdsz", "datatg", "datasz",
                         "metatg", "metasz", "anosz", "mfusz", "mfutg", "mrusz", "mrutg", "uncsz")}
)  # fmt: skip
_TIME = re.compile(r"^\d\d:\d\d:\d\d$")
_VALUE_CELL = re.compile(r"^-?[0-9][0-9.,]*[KMGTPE]?$")  # a cell of an arcstat row: a number with its suffix


def unit_of(name: str) -> str:
    """'bytes', 'count', 'ratio' or 'fraction_2_32' for a kstat name (see the module doc)."""
    if name.endswith("_ratio"):
        return "ratio"
    if name in ("meta", "pd", "pm"):  # 2.2+: the ARC's balance targets, fractions scaled by 2^32
        return "fraction_2_32"
    if _COUNT_NAME.search(name):
        return "count"
    return "bytes" if _BYTES_NAME.search(name) else "count"


def _arcstat_header(line: str) -> list[str] | None:
    words = [w if w != "Time" else "time" for w in line.split()]  # Solaris' arcstat.pl (2007) prints 'Time'
    if len(words) >= 2 and all(w in _ARCSTAT_FIELDS for w in words) and sum(w != "time" for w in words) >= 2:
        return words
    return None


def sniff(text: str) -> str | None:
    head = text[:1_000_000]
    lines = [ln.strip() for ln in head.split("\n")[:2000]]
    rows = [ln for ln in lines if _KSTAT_ROW.match(ln)]
    names = {m.group(1) for ln in rows if (m := _KSTAT_ROW.match(ln))}
    if any(_KSTAT_COLS.match(ln) for ln in lines[:5]) and {"hits", "misses", "c_max"} <= names:
        return "arcstats-kstat"
    if sum(1 for ln in lines if _SYSCTL.match(ln)) >= 5:
        return "arcstats-sysctl"
    if _SUMMARY_SNIFF.search(head):
        return "arc_summary"
    for k, ln in enumerate(lines[:-1]):
        cols = _arcstat_header(ln)
        if cols and len(lines[k + 1].split()) == len(cols) and lines[k + 1].split()[0][:1].isdigit():
            return "arcstat"
    return None


def _counter_row(name: str, value: str, lineno: int, kstat_type: int | None) -> dict:
    number = int(value)
    if abs(number) >= 2**64:  # reliability-32: float() of a longer one raised OverflowError (a traceback)
        shown = value if len(value) <= 30 else f"{value[:12]}... ({len(value)} digits)"
        raise ParseError(f"{name}: {shown} is out of range", line=lineno, expected="a counter of at most 64 bits")
    return {
        "name": name,
        "value": float(number),
        "unit": unit_of(name),
        "exact": True,
        "kstat_type": kstat_type,
        "label": None,
        "line_start": lineno,
        "line_end": lineno,
    }


def _parse_kstat(lines: list[str], parsed: Parsed) -> None:
    seen_cols = False
    for lineno, raw in enumerate(lines, 1):
        s = raw.strip()
        if not s or (_KSTAT_HEAD.match(s) and not seen_cols):
            continue
        if _KSTAT_COLS.match(s):
            seen_cols = True
            continue
        m = _KSTAT_ROW.match(s)
        if m and seen_cols:
            parsed.add("arc_stats", _counter_row(m.group(1), m.group(3), lineno, int(m.group(2))))
        elif seen_cols and parsed.n_rows and not SHELL_PROMPT.match(s):
            raise ParseError(
                f"not an arcstats line: {s[:80]!r}", line=lineno, expected="NAME TYPE VALUE (e.g. `hits 4 8772612`)"
            )


_PREFIX = "kstat.zfs.misc.arcstats."


def _near_prefix(s: str) -> bool:
    """Whether ``s`` starts with the arcstats sysctl prefix, or with one changed by up to two characters (a damaged
    line; another sysctl tree, `kstat.zfs.misc.zfetchstats.`, differs by more)."""
    if s.startswith(_PREFIX):
        return True
    head = s[:30]
    if sum(t in head for t in ("kstat", ".zfs.", "misc", "arcstats")) < 2:  # two edits break two of these at most
        return False
    n = len(_PREFIX)
    return any(_distance(s[:k], _PREFIX) <= 2 for k in range(n - 2, n + 3))


def _distance(a: str, b: str) -> int:
    """Levenshtein distance."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def _parse_sysctl(lines: list[str], parsed: Parsed) -> None:
    for lineno, raw in enumerate(lines, 1):
        m = _SYSCTL.match(raw.strip())
        if m:
            parsed.add("arc_stats", _counter_row(m.group(1), m.group(2), lineno, None))
        elif _near_prefix(raw.strip()):  # reliability-33: `hits: 1'473'806` was dropped; -34: `kstat.zfz.misc...` too
            raise ParseError(
                f"not an arcstats line: {raw.strip()[:80]!r}",
                line=lineno,
                expected="kstat.zfs.misc.arcstats.NAME: INTEGER",
            )


def _arcstat_value(field: str, cell: str, lineno: int) -> tuple[float, str, bool]:
    if field.endswith("%"):
        unit = "pct"
    elif field in _ARCSTAT_SIZES:
        unit = "bytes"
    elif field in _ARCSTAT_BYTE_RATES:
        unit = "bytes_per_s"
    else:
        unit = "count" if field == "grow" else "per_s"
    try:
        if re.fullmatch(r"-?\d+", cell):
            return float(int(cell)), unit, True
        return zfs_nicenum(cell) if unit.startswith("bytes") else _si(cell), unit, False
    except (UnitError, ValueError, OverflowError):  # reliability-32: OverflowError, float() of 400 digits
        raise ParseError(
            f"arcstat {field}: not a number: {cell!r}", line=lineno, expected="a number with an optional K/M/G/T suffix"
        ) from None


def _si(cell: str) -> float:
    """arcstat's rates and counts: K/M/G/T are powers of 1000 (prettynum: 1000 per step)."""
    m = re.fullmatch(r"(-?\d+(?:\.\d+)?)([KMGTPE]?)", cell)
    if not m:
        raise ValueError(cell)
    return float(m.group(1)) * 1000 ** " KMGTPE".index(m.group(2) or " ")


def _after(parsed: Parsed, lines: list[str], lineno: int, command: str) -> None:
    """Another command's prompt line after the arcstat rows: a zpool command's output is read by the zpool parser
    (``handover``), any other is named as not read."""
    if re.match(r"(?:sudo\s+)?zpool\s", command):
        handover.rest(parsed, lines, lineno, zpool.parse, f"`{command}` output")
        return
    end = max(i for i, ln in enumerate(lines, 1) if ln.strip())
    parsed.warnings.append(
        f"lines {lineno}-{end}: the output of `{command}` after the arcstat output is not read: save it in its own file"
    )


def _parse_arcstat(lines: list[str], parsed: Parsed) -> None:
    cols: list[str] | None = None
    sample = unread = 0
    for lineno, raw in enumerate(lines, 1):
        s = raw.strip()
        if not s:
            continue
        prompt = SHELL_PROMPT.match(s)
        command = s[prompt.end() :].strip() if prompt else ""
        if sample and command and not re.match(r"(?:sudo\s+)?arcstat", command):
            _after(parsed, lines, lineno, command)
            return
        header = _arcstat_header(s)
        if header:
            cols = header
            continue
        cells = s.split()
        if cols is None or len(cells) != len(cols) or s == "...":
            # a row of values under the header (reliability-33: `1 000,4` in a row without a time column was
            # skipped, and the sample lost with exit 0)
            if cols is not None and cells and (_TIME.match(cells[0]) or _VALUE_CELL.match(cells[0])):
                raise ParseError(
                    f"arcstat row with {len(cells)} columns under a header of {len(cols)}",
                    line=lineno,
                    expected="one value per header column",
                )
            if sample and s != "..." and not unread:
                unread = lineno  # reliability-34: `ro ot@srv2:~# zpool iostat -vl 1` (a damaged prompt) and the zpool
            continue  # rows under it were passed over with no word
        time = cells[0] if cols[0] == "time" else None
        for field, cell in zip(cols, cells, strict=True):
            if field == "time":
                continue
            value, unit, exact = _arcstat_value(field, cell, lineno)
            parsed.add(
                "arcstat_samples",
                {
                    "sample": sample,
                    "time": time,
                    "field": field,
                    "value": value,
                    "unit": unit,
                    "exact": exact,
                    "line_start": lineno,
                    "line_end": lineno,
                },
            )
        sample += 1
    if unread:
        parsed.warnings.append(f"line {unread}: lines after the arcstat rows are not read: {lines[unread - 1][:60]!r}")


def parse(text: str, fmt: str | None = None) -> Parsed:
    if not text.strip():
        raise ParseError("file is empty", kind="empty", expected="ARC statistics")
    fmt = fmt or sniff(text)
    if fmt not in FORMATS:
        raise not_this_format(
            text,
            "no ARC statistics found",
            "/proc/spl/kstat/zfs/arcstats, sysctl kstat.zfs.misc.arcstats, arc_summary or arcstat output",
        )
    parsed = Parsed(tool=TOOL, format=fmt)
    lines = lines_of(text)
    {
        "arcstats-kstat": _parse_kstat,
        "arcstats-sysctl": _parse_sysctl,
        "arc_summary": parse_summary,
        "arcstat": _parse_arcstat,
    }[fmt](lines, parsed)
    if not parsed.n_rows:
        last = max(i for i, ln in enumerate(lines, 1) if ln.strip())
        raise ParseError(f"{fmt} output without values", line=last, kind="truncated", expected="counter lines")
    return parsed

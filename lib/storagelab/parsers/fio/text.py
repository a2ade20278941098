"""fio normal (human) output, fio 2.0 - 3.42 -> the fio tables (docs/formats/log-formats.md A.1-A.13, E).

One pass over the lines with a small state machine:

* outside a report: preamble lines ``name: (g=0): rw=..., bs=..., ioengine=..., iodepth=N`` (their
  rw/bs/ioengine/iodepth go to the job blocks of that name), the ``fio-3.16`` version line; anything
  else there (``Starting N processes``, ``note:``, stderr, live ``Jobs:`` lines, a JSON document or
  terse lines of ``--output-format=normal,json``/``terse,normal``) is skipped;
* a job block, from its ``name: (groupid=N, jobs=N): err=...`` header up to the next header, a
  blank line or the run status lines; it is complete once its ``issued`` line was read (the
  oldest releases print the latency distribution after it). Direction sections (3.x
  ``read: IOPS=``, 2.x ``read : io=``, ``fsync/...:`` as direction ``sync``) carry their
  slat/clat/lat, percentile, bw and iops lines; then come the job-wide lines (latency
  distribution, cpu, IO depths, issued, errors, latency target, block lifetime, steadystate).
  Per-priority (cmdprio) lines are recognised but not stored (the tables have no column for
  them; a warning says so); a line not known inside a block is a warning;
* ``Run status group N (all jobs):`` and the group lines (3.x ``bw=``, 2.x ``aggrb=``);
* ``Disk stats (read/write):`` and one line per disk (md/dm aggregates on the same line).

``--status-interval`` prints the whole report again and again: each report gets its own
``doc_index`` (0, 1, ...) and only the last one's jobs have ``is_final``. Several fio runs appended
to one file (``fio ... >> log``, as benchmark scripts do) are told apart by the preamble, version or
``Starting`` line that each run prints before its report (interval reports print none): the last
report of every run is final.

The output ends in the middle of a report (a job block without its ``issued`` line, a percentile
list ending in ``,``, a last line cut short, job blocks with no run status lines after them, or
only the preamble) -> ``ParseError(kind="truncated")``; a line of a known kind whose numbers
cannot be read elsewhere -> ``kind="invalid"`` with its line number.

Units: every number is converted at the edge to bytes, bytes/s, ns, counts or percent. Rules that
matter (A.3, A.4, A.6, A.12):

* a latency line's unit is per line, and a ``k``/``M`` on min/max multiplies that unit
  (``max=44735k`` in ``(usec)`` is 44.735 s);
* fio <= 2.16 (``read : io=``, ``aggrb=``, ``bw (KB  /s)``) prints ``KB``/``MB`` for powers of
  1024 (the default kb_base=1024; a 2.x run with kb_base=1000 cannot be told apart in the text);
* 3.x prints each bandwidth/size twice, in the kb_base family then in the other one, each rounded
  to at most 4 significant figures (``significant_figures``). The one printed with more
  significant digits is used (``977KiB/s (1000kB/s)`` -> 1000 kB/s, ``988MiB (1036MB)`` -> 1036 MB);
  a tie keeps the first, the kb_base family: ``1240MiB/s (1300MB/s)`` -> 1240 MiB/s;
* with kb_base=1000 fio labels a large per-sample bandwidth ``(  MiB/s)`` but divides by 1000:
  those values are MB/s.

* latency distribution keys are bucket upper edges; the lower edge is the previous key of the
  nsec/usec/msec sequence, so ``lat (usec) : 2=`` starts at 1 usec (the last nsec edge) from
  fio 2.99 on and at 0 before (no nsec family); ``>=2000`` (msec) has no upper edge.

Text numbers carry 3-4 significant figures, so every row has ``exact=False``.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable

from ... import units

# _SI/_TIME: the fast paths' lookups are units.py's own tables, not copies
from ...units import SI_FACTORS as _SI
from ...units import TIME_NS_FACTORS as _TIME
from ...units import UnitError
from ..base import SHELL_PROMPT, NotStreamable, Parsed, ParseError, lines_of
from .command import continued, fio_command
from .schema import TABLES

FORMAT = "fio-normal"

# ---- line shapes --------------------------------------------------------------------------
# Tuples rows in the column order of the schema (fio/schema.py)
_PCT_COLUMNS = TABLES["fio_percentiles"].row_columns
_BUCKET_COLUMNS = TABLES["fio_latency_buckets"].row_columns
_DEPTH_COLUMNS = TABLES["fio_iodepths"].row_columns
_JOBS_STATUS = re.compile(r"^\s*Jobs: \d+ \(f=\d+\)")
_JOBS_ETA = re.compile(r"^\s*Jobs: \d+ \(f=\d+\).*?\[eta [^\]]*\]\s*")
_VERSION = re.compile(r"^\s*fio[- ](\d+)\.(\d+)(?:\.\d+)?\S*\s*$")
# filesetup.c: 3.x "name: Laying out IO file (1 file / 1024MiB)" ("files (2 files / total 2048MiB)"), 2.x
# "name: Laying out IO file(s) (1 file(s) / 512MB)"; both print extend_size >> 20: MiB in either spelling
_LAYOUT = re.compile(
    r"^(?P<name>.*?): Laying out IO file(?:s|\(s\))? \((?P<files>\d+) file(?:s|\(s\))? / (?:total )?(?P<mib>\d+)Mi?B\)"
)
_PREAMBLE = re.compile(
    r"^(?P<name>.*?): \(g=(?P<g>\d+)\): rw=(?P<rw>[^,]+), bs=(?P<bs>.*?), "
    r"ioengine=(?P<engine>[^,]+?), iodepth=(?P<depth>\d+)\s*$"
)
_HEADER_CUE = re.compile(r": \(groupid=\d+, jobs=\d+\): err=")
_HEADER = re.compile(
    r"^(?P<name>.*?): \(groupid=(?P<gid>\d+), jobs=(?P<jobs>\d+)\): "
    r"err=\s*(?P<err>-?\d+)(?: \((?P<errtext>.*)\))?: pid=(?P<pid>\d+)"
    r"(?::\s*(?P<time>.*?))?\s*$"
)
_DIR_CUE = re.compile(r"^\s*(read|write|trim|mixed)\s?: (IOPS|io)=")
_DIR3 = re.compile(
    r"^\s*(?P<dir>read|write|trim|mixed): IOPS=(?P<iops>[^,]+), BW=(?P<bw>[^\s(]+) "
    r"\((?P<bw2>[^)]*)\)\((?P<io>[^/)]+)/(?P<runt>\d+)msec\)(?P<tail>;.*)?\s*$"
)
_DIR2 = re.compile(
    r"^\s*(?P<dir>read|write|trim|mixed)\s?: io=(?P<io>[^,]+), bw=(?P<bw>[^,]+), "
    r"iops=(?P<iops>[^,]+), runt=\s*(?P<runt>\d+)\s*msec\s*$"
)
_SYNC_HEAD = re.compile(r"^\s*fsync/[a-z_/]+:\s*$")
_LAT_CUE = re.compile(r"^\s*(?P<label>[A-Za-z][\w /]*?)\s*\((?P<unit>nsec|usec|msec)\)\s*:\s*min=")
_LAT = re.compile(r"^\s*(?P<label>[A-Za-z][\w /]*?)\s*\((?P<unit>nsec|usec|msec)\)\s*:\s*(?P<rest>min=.*)$")
_PCT_TITLE = re.compile(r"^\s*(?P<pre>\S.*?) percentiles \((?P<unit>nsec|usec|msec)\)\s*:\s*$")
_PCT_LINE = re.compile(r"^\s*\|(?:\s*[0-9.]+th=\[\s*[0-9]+\]\s*,?)+\s*$")
_PCT_ENTRY = re.compile(r"([0-9.]+)th=\[\s*([0-9]+)\]")
_BW = re.compile(r"^\s*bw\s*\((?P<label>[^)]*)\)\s*:\s*(?P<rest>.*)$")
_IOPS = re.compile(r"^\s*iops\s*:\s*(?P<rest>min=.*)$")
_LATDIST = re.compile(r"^\s*lat \((?P<unit>nsec|usec|msec)\)\s*:\s*(?P<rest>.*)$")
_BUCKETS = re.compile(r"^(?:\s*(?:>=)?[0-9]+=[0-9.]+%\s*,?)+\s*$")
_BUCKET = re.compile(r"(>=)?([0-9]+)=([0-9.]+)%")
_CPU = re.compile(r"^\s*cpu\s*:\s*(?P<rest>.*)$")
_DEPTH = re.compile(r"^\s*(?P<kind>IO depths|submit|complete)\s*:\s*(?P<rest>.*)$")
_ISSUED_CUE = re.compile(r"^\s*issued\b[^:]*:")
# issued: 3.4+ 'total=R,W,T,S short=... dropped=...', 2.17-3.3 'total=R,W,T, short=..., dropped=...',
# 2.0.x-2.16 'total=r=R/w=W/d=T, short=..., drop=...' (2.0.x without drop), fio 1.x-2.0 'issued r/w/d:
# total=R/W/T, short=R/W/T'
_ISSUED = re.compile(r"^\s*issued(?: rwts?| r/w(?:/d)?)?\s*:\s*(?P<body>total=.*?)\s*$")
_ISSUED_PART = re.compile(r"(total|short|drop|dropped)=(\S+?),?(?=\s+(?:short|drop|dropped)=|\s*$)")
_KNOWN_SKIPPED = re.compile(r"^\s*(Description\s*:|errors\s*:|latency\s*:|steadystate\s*:)")
_BLOCK_LIFETIME = re.compile(r"^\s*block lifetime percentiles\s*:")
_GROUP_HEAD = re.compile(r"^\s*Run status group (?P<gid>\d+) \(all jobs\):\s*$")
_GROUP_CUE = re.compile(r"^\s*(READ|WRITE|TRIM|MIXED): ")
_GROUP3 = re.compile(
    r"^\s*(?P<dir>READ|WRITE|TRIM|MIXED): bw=(?P<bw>[^\s(]+) \((?P<bw2>[^)]*)\), "
    r"(?P<mn>[^\s(-]+)-(?P<mx>[^\s(]+) \((?P<mn2>[^\s)-]+)-(?P<mx2>[^\s)]+)\), "
    r"io=(?P<io>[^\s(]+) \((?P<io2>[^)]*)\), run=(?P<r0>\d+)-(?P<r1>\d+)msec\s*$"
)
_GROUP2 = re.compile(
    r"^\s*(?P<dir>READ|WRITE|TRIM|MIXED): io=(?P<io>[^,]+), aggrb=(?P<bw>[^,]+), "
    r"minb=(?P<mn>[^,]+), maxb=(?P<mx>[^,]+), mint=\s*(?P<r0>\d+)\s*msec, "
    r"maxt=\s*(?P<r1>\d+)\s*msec\s*$"
)
_DISK_HEAD = re.compile(r"^\s*Disk stats \(read/write\):\s*$")
_DISK_CUE = re.compile(r"^\s*\S+: ios=")
_DISK = re.compile(
    r"^\s*(?P<name>\S+): ios=(?P<rio>\d+)/(?P<wio>\d+),(?: sectors=(?P<rsec>\d+)/(?P<wsec>\d+),)?"
    r" merge=(?P<rm>\d+)/(?P<wm>\d+), ticks=(?P<rt>\d+)/(?P<wt>\d+), in_queue=(?P<q>\d+),"
    r" util=(?P<util>[0-9.]+)%"
    r"(?:, aggrios=(?P<ario>\d+)/(?P<awio>\d+),(?: aggsectors=(?P<arsec>\d+)/(?P<awsec>\d+),)?"
    r" aggrmerge=(?P<arm>\d+)/(?P<awm>\d+), aggrticks=(?P<art>\d+)/(?P<awt>\d+),"
    r" aggrin_queue=(?P<aq>\d+), aggrutil=(?P<autil>[0-9.]+)%)?\s*$"
)
_PAIRS = re.compile(r"(\w+)=\s*([^,]*?)\s*(?=,|$)")
_LEAD_NUM = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?)")
_SI_UNIT = re.compile(r"[0-9.]\s*[kKMGTPE](?:B|bit)")
_IEC_UNIT = re.compile(r"[0-9.]\s*[KMGTPE]i(?:B|bit)")

_DECIMAL = re.compile(r"-?[0-9]+(?:\.[0-9]*)?")
# fast paths: the usual form of a line with every number in a plain form; a line that does not
# match goes the general way (same values for the lines both read, so only speed differs)
_D = r"(-?[0-9]+(?:\.[0-9]*)?)"
_V = rf"\s*{_D}\s*"  # a value with the blanks fio pads it with
_LAT_FAST = re.compile(
    rf"\s*(slat|clat|lat|sync) ?\((nsec|usec|msec)\): min=\s*([0-9]+(?:\.[0-9]*)?)([kKMGTPE]?)\s*, "
    rf"max=\s*([0-9]+(?:\.[0-9]*)?)([kKMGTPE]?)\s*, avg={_V}, stdev={_V}$"
)
_BW_FAST = re.compile(
    rf"\s*bw \(([^)]*)\): min={_V}, max={_V}, per=\s*{_D}%\s*, avg={_V}, stdev={_V}"
    r"(?:, samples=\s*([0-9]+)\s*)?$"
)
_IOPS_FAST = re.compile(rf"\s*iops\s*: min={_V}, max={_V}, avg={_V}, stdev={_V}(?:, samples=\s*([0-9]+)\s*)?$")
_ISSUED_FAST = re.compile(
    r"\s*issued rwts: total=([0-9]+),([0-9]+),([0-9]+),([0-9]+) "
    r"short=([0-9]+),([0-9]+),([0-9]+),([0-9]+) "
    r"dropped=([0-9]+),([0-9]+),([0-9]+),([0-9]+)\s*$"
)
_P = r"\s*([0-9]+(?:\.[0-9]*)?)th=\[\s*([0-9]+)\]"  # one percentile entry
_PCT_FAST = re.compile(rf"\s*\|{_P},{_P},{_P},{_P}(,?)\s*$")  # a full line of four
_E = r"([0-9]+)=([0-9]+(?:\.[0-9]*)?)%"  # one IO depth entry
_DEPTHS_FAST = re.compile(rf"\s*(IO depths|submit|complete)\s*: {_E}, {_E}, {_E}, {_E}, {_E}, {_E}, >={_E}\s*$")
_DEPTH_KINDS = {"IO depths": "depth", "submit": "submit", "complete": "complete"}
_CPU_FAST = re.compile(
    r"\s*cpu\s*: usr=([0-9]+(?:\.[0-9]*)?)%, sys=([0-9]+(?:\.[0-9]*)?)%, ctx=([0-9]+), majf=([0-9]+), minf=([0-9]+)\s*$"
)
_STATES = re.compile(r"^\s*states\s*:")
_LEGACY_LABEL = re.compile(r"([KMGPE])(B|bit)/s")
_LEGACY_SIZE = re.compile(r"\s*([0-9.]+)\s*([KMGPE]?)\s*(B|bit)?(\s*/s)?\s*")
_ISSUED_RWD = re.compile(r"r=(\d+)/w=(\d+)(?:/d=(\d+))?")
_ISSUED_COUNTS = re.compile(r"\d+(?:,\d+){2,3}|\d+(?:/\d+){1,2}")
_COMMA_SLASH = re.compile(r"[,/]")
_BS_RANGE = re.compile(r"([0-9.]+\s*[A-Za-z]*)-([0-9.]+\s*[A-Za-z]*)")

# values of number() and bucket edges by their text: the same few strings ('0.01%', '99.90', '2=')
# come back in every file; bounded so that odd input cannot grow them without end
_NUMBERS: dict[str, float] = {}
_SIZES: dict[tuple, float] = {}
_PAIRS_SEEN: dict[tuple, float] = {}
_BW_FACTORS: dict[tuple, float] = {}
_BUCKET_EDGES: dict[tuple, tuple] = {}
_BLOCK_SIZES: dict[str, tuple[int | None, tuple[str, ...]]] = {}
_CACHE_MAX = 20_000
_EDGES = (2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000)
# a fio_results row before its values: every column None, in the table's order
_RESULT_ROW = dict.fromkeys(TABLES["fio_results"].row_columns)
_DIRS = ("read", "write", "trim")


def parse_text(text: str, fast: bool = True) -> Parsed:
    """Parse fio's normal output (any part of a file that is not fio's normal text is skipped). ``fast=False``:
    the plain path alone, every line read the general way (the reference the fast paths are tested against)."""
    if not text.strip():
        raise ParseError("empty input", line=1, kind="empty", expected="fio normal output")
    return _TextParser(lines_of(text), Parsed(tool="fio", format=FORMAT), fast).run()


def parse_lines(lines: Iterable[str], parsed: Parsed, fast: bool = True) -> Parsed:
    """``parse_text`` over lines read one at a time (a log of any size, see base.py "Streaming"): the rows
    go to ``parsed`` and, with a sink, on to the database as each job block ends. A JSON document in the
    output (``--output-format=normal,json``) raises NotStreamable: its exact values need the whole file."""
    return _TextParser(lines, parsed, fast).run()


class _Ahead:
    """Lines read one at a time, and whether any non-blank line follows (read ahead only when asked)."""

    def __init__(self, lines: Iterable[str]):
        self._it = iter(lines)
        self._buf: deque[str] = deque()
        self.n = 0  # lines given so far
        self.seen = 0  # the last non-blank one of them

    def __iter__(self):
        return self

    def __next__(self) -> str:
        s = self._buf.popleft() if self._buf else next(self._it)
        self.n += 1
        if s.strip():
            self.seen = self.n
        return s

    def nothing_after(self, ln: int) -> bool:
        if self.seen > ln:
            return False
        for s in self._buf:
            if s.strip():
                return False
        for s in self._it:
            self._buf.append(s)
            if s.strip():
                return False
        return True


def _r(x: float) -> float:
    """Drop binary floating-point noise from a decimal text value times a unit factor."""
    return float(round(x, 6))


def _sig_digits(token: str) -> int:
    m = _LEAD_NUM.match(token)
    return len(m.group(1).replace(".", "").lstrip("0")) if m else 0


# fio <= 2.16 suffixes: powers of 1024 with no T (the step after G prints as P; A.3, A.12)
_LEGACY_STEP = {"K": 1, "M": 2, "G": 3, "P": 4, "E": 5}


def _legacy_label_factor(label: str) -> float | None:
    """fio <= 2.16 bandwidth labels (``KB  /s``, ``MB  /s``, ``Kbit/s``); 3.x never prints these."""
    m = _LEGACY_LABEL.fullmatch(label)
    if not m:
        return None
    factor = 1024.0 ** _LEGACY_STEP[m.group(1)]
    return factor / 8 if m.group(2) == "bit" else factor


def _legacy_to_iec(text: str) -> str:
    """``9920.3MB`` -> ``9920.3MiB``, ``1.5PB`` -> ``1.5TiB``: a 2.x size in units.fio_bytes terms."""
    m = _LEGACY_SIZE.fullmatch(text)
    if not m or not m.group(2):
        return text
    prefix = "KMGTP"[_LEGACY_STEP[m.group(2)] - 1] + "i"
    return f"{m.group(1)}{prefix}{m.group(3) or 'B'}{'/s' if m.group(4) else ''}"


def _block_size(bs: str) -> tuple[int | None, tuple[str, ...]]:
    """A preamble's ``bs=(R) 4096B-4096B, (W) ...``: (the largest size, the tokens not understood)."""
    sizes, bad = [], []
    for lo, hi in _BS_RANGE.findall(bs)[:2]:  # (R) and (W)
        for tok in (lo, hi):
            legacy = "B" not in tok  # 2.x prints 4K, 1M: powers of 1024
            try:
                sizes.append(units.fio_bytes(_legacy_to_iec(tok) if legacy else tok))
            except UnitError:
                bad.append(tok)
    return (int(max(sizes)) if sizes else None), tuple(bad)


class _TextParser:
    def __init__(self, lines: Iterable[str], parsed: Parsed, fast: bool = True):
        self.fast = fast  # the fast paths on (the usual form of a line in one regular expression)
        self.lines = lines  # a list (a whole text), or any iterable (a stream: read once, ahead when needed)
        self.ahead: _Ahead | None = None  # (a stream)
        self.p = parsed
        self.last = 0  # last non-blank line (1-based): a failure there is truncation (a stream: known at the end)
        self.version: tuple[int, int] | None = None
        self.preamble: dict[tuple[str, int] | str, dict] = {}
        self.job: dict | None = None  # current fio_jobs row
        self.jstate: dict = {}  # per-job working state (issued counts, results, ...)
        self.res: dict | None = None  # current fio_results row (direction section)
        self.pct: dict | None = None  # open percentile block
        self.lifetime = False  # inside a 'block lifetime percentiles' block
        self.group: int | None = None  # groupid of the last 'Run status group' header
        self.disks = False  # inside 'Disk stats'
        self.disk_part: tuple[int, str] | None = None  # (line, text) of a disk line that ends in ',' (wrapped)
        self.report = 0  # doc_index of the current report
        self.new_run = False  # a preamble/version/Starting line after a complete report: another fio run
        self.run_ends: list[int] = []  # doc_index of the last report of each run before the current one
        self.report_tail = False  # group/disk lines seen since the last job block
        self.started = False  # preamble / version / Jobs lines seen
        self.found = False  # any report line seen
        self.prio_warned = False
        self.terse_lines: list[int] = []  # fio terse lines beside the normal output (--output-format=terse,normal)
        self.commands: list[tuple[int, str, int, int]] = []  # (doc_index of the next report, fio command, lines)
        self.layout: dict[str, tuple[int, int, int]] = {}  # job name -> (doc_index of its run, files, bytes laid out)
        self.run_start = 0  # doc_index of the current run's first report

    # ---- errors and numbers ---------------------------------------------------------------
    def is_last(self, ln: int) -> bool:
        """No non-blank line follows line ``ln``."""
        return ln >= self.last if self.ahead is None else self.ahead.nothing_after(ln)

    def fail(self, ln: int, message: str, expected: str):
        kind = "truncated" if self.is_last(ln) else "invalid"
        if kind == "truncated":
            message += " (the output stops here)"
        raise ParseError(message, line=ln, expected=expected, kind=kind)

    def conv(self, ln: int, fn, text: str, expected: str, *args, **kw) -> float:
        try:
            return fn(text, *args, **kw)
        except (UnitError, ValueError, TypeError):
            self.fail(ln, f"cannot read {text.strip()!r}", expected)

    def size(self, ln: int, text: str, legacy: bool = False) -> float:
        v = _SIZES.get((text, legacy))
        if v is None:
            v = _r(
                self.conv(
                    ln,
                    units.fio_bytes,
                    _legacy_to_iec(text) if legacy else text,
                    "a fio size or rate like 72.7GiB or 338589KB/s",
                )
            )
            if len(_SIZES) < _CACHE_MAX:
                _SIZES[(text, legacy)] = v
        return v

    def pair(self, ln: int, first: str, second: str) -> float:
        """A 3.x value printed in both families; see the module doc for which one is used."""
        v = _PAIRS_SEEN.get((first, second))
        if v is None:
            a = self.size(ln, first)
            b = self.size(ln, second)
            v = b if _sig_digits(second) > _sig_digits(first) else a
            if len(_PAIRS_SEEN) < _CACHE_MAX:
                _PAIRS_SEEN[(first, second)] = v
        return v

    def integer(self, ln: int, text: str, expected: str) -> int:
        t = text.strip()
        if not t.isdigit():
            self.fail(ln, f"cannot read {t!r}", expected)
        return int(t)

    def number(self, ln: int, text: str, expected: str) -> float:
        v = _NUMBERS.get(text)
        if v is None:
            t = text.strip().rstrip("%")
            if not _DECIMAL.fullmatch(t):
                self.fail(ln, f"cannot read {text.strip()!r}", expected)
            v = float(t)
            if len(_NUMBERS) < _CACHE_MAX:
                _NUMBERS[text] = v
        return v

    def fields(self, ln: int, rest: str, required: tuple[str, ...], expected: str) -> dict[str, str]:
        found = dict(_PAIRS.findall(rest))
        if any(k not in found or not found[k] for k in required):
            self.fail(ln, "missing fields " + ", ".join(k for k in required if not found.get(k)), expected)
        return found

    # ---- driver -----------------------------------------------------------------------------
    def run(self) -> Parsed:
        clean = self.clean
        if isinstance(self.lines, list):
            lines: Iterable[str] = [
                raw if "\r" not in raw and "Jobs: " not in raw else clean(raw) for raw in self.lines
            ]
            for ln in range(len(lines), 0, -1):
                if lines[ln - 1].strip():
                    self.last = ln
                    break
        else:
            lines = self.ahead = _Ahead(
                raw if "\r" not in raw and "Jobs: " not in raw else clean(raw) for raw in self.lines
            )
        in_json = False
        line = self.line
        for ln, s in enumerate(lines, 1):
            if in_json:
                in_json = s.rstrip() != "}"
                continue
            if s[:1] == "{" and s.rstrip() == "{":
                if self.ahead is not None:
                    raise NotStreamable("a JSON document inside fio's normal output")
                in_json = True
                continue
            line(ln, s)
        if self.ahead is not None:
            self.last = self.ahead.seen
        self.finish()
        return self.p

    @staticmethod
    def clean(raw: str) -> str:
        """Drop live ``Jobs:`` status text (``\\r``-separated, maybe glued to the next line)."""
        if "\r" not in raw and not _JOBS_STATUS.match(raw):
            return raw
        keep = ""
        for seg in raw.split("\r"):
            if _JOBS_STATUS.match(seg):
                m = _JOBS_ETA.match(seg)
                seg = seg[m.end() :] if m else ""
            if seg.strip():
                keep = seg
        return keep

    def line(self, ln: int, s: str) -> None:
        # each pattern below starts (after blanks) with a fixed word or needs a fixed substring: a
        # test of the first character / the substring rules most patterns out before any regex runs
        w = s.lstrip()
        if self.pct is not None:
            if w.startswith("|"):
                self.pct_line(ln, s)
                self.jstate["last"] = ln
                return
            self.end_pct(ln)
        if self.lifetime:
            self.lifetime = w.startswith("|")
            if self.lifetime or _STATES.match(s):
                self.jstate["last"] = ln
                return
        if not w:
            if self.job is not None and self.jstate["issued"]:
                self.close_job()
            return
        c = w[0]
        if "(groupid=" in s and _HEADER_CUE.search(s):
            return self.header(ln, s)
        if c == "R" and _GROUP_HEAD.match(s):
            self.close_job(ln)
            self.disks = False
            self.group = int(_GROUP_HEAD.match(s).group("gid"))
            self.found = self.report_tail = True
            return
        if c in "RWTM" and _GROUP_CUE.match(s):
            return self.group_line(ln, s)
        if c == "D" and _DISK_HEAD.match(s):
            self.close_job(ln)
            self.disks = self.found = self.report_tail = True
            return
        if self.disks:
            if self.disk_part is not None and "=" in s and not _DISK_CUE.match(s):
                first, head = self.disk_part  # a disk line wrapped after a ',' (as pasted logs show it)
                self.disk_part = None
                return self.disk(first, head + " " + w.rstrip(), ln)
            if ": ios=" in s and _DISK_CUE.match(s):
                return self.disk(ln, s)
            self.end_disks()
            if self.is_last(ln) and not SHELL_PROMPT.match(s):  # the file ends inside the disk stats (not with a
                # shell prompt after them): after the results, which are kept
                self.p.warnings.append(
                    f"line {ln}: disk stats line cut at the end of the file, not stored: {w.strip()[:60]!r}"
                )
                return
            self.disks = False
        if self.job is not None:
            if not (self.fast and self.job_line_fast(ln, s, c)):
                self.job_line(ln, s, c)
            self.jstate["last"] = ln
            return
        self.outside(ln, s, c)

    def outside(self, ln: int, s: str, c: str) -> None:
        m = ": (g=" in s and _PREAMBLE.match(s)
        if m:
            self.started = True
            self.new_run = self.new_run or self.report_tail
            info = {
                "rw": m["rw"].strip(),
                "ioengine": m["engine"].strip(),
                "iodepth": int(m["depth"]),
                "block_size_bytes": self.block_size(ln, m["bs"]),
            }
            self.preamble[(m["name"], int(m["g"]))] = info
            self.preamble.setdefault(m["name"], info)
            return
        m = c == "f" and _VERSION.match(s)
        if m:
            self.started = True
            self.new_run = self.new_run or self.report_tail
            self.version = (int(m.group(1)), int(m.group(2)))
            self.p.tool_version = "fio-" + s.strip()[4:]
            return
        m = "Laying out IO" in s and _LAYOUT.match(s)
        if m:  # fio prints the MiB count rounded down (>> 20): bytes = MiB x 2^20
            doc = self.report + 1 if self.report_tail else self.report
            self.layout[m["name"]] = (doc, int(m["files"]), int(m["mib"]) * units.MiB)
            return
        if c in "2345" and s[1:6] == ";fio-":
            self.terse_lines.append(ln)
            return
        typed = self.commands[-1] if self.commands else None
        if typed is not None and typed[3] == ln - 1 and (joined := continued(typed[1], s)) is not None:
            self.commands[-1] = (typed[0], joined, typed[2], ln)  # the command goes on (wrapped, or a backslash)
            return
        if "fio" in s and (command := fio_command(s)) is not None:  # a transcript's command line starts a run
            self.new_run = self.new_run or self.report_tail
            self.commands.append((self.report + 1 if self.report_tail else self.report, command, ln, ln))
            return
        if (c == "J" and _JOBS_STATUS.match(s)) or s.startswith("Starting "):
            self.started = True
            self.new_run = self.new_run or (self.report_tail and s.startswith("Starting "))
        # anything else outside a job block (stderr, notes, terse lines, ...) is not fio's report

    def block_size(self, ln: int, bs: str) -> int | None:
        known = _BLOCK_SIZES.get(bs)
        if known is None:
            known = _block_size(bs)
            if len(_BLOCK_SIZES) < _CACHE_MAX:
                _BLOCK_SIZES[bs] = known
        size, bad = known
        for tok in bad:
            self.p.warnings.append(f"line {ln}: block size {tok!r} not understood")
        return size

    # ---- job blocks ---------------------------------------------------------------------------
    def header(self, ln: int, s: str) -> None:
        m = _HEADER.match(s)
        if not m:
            self.fail(ln, "malformed job header", "'name: (groupid=N, jobs=N): err= N: pid=N[: date]'")
        self.close_job(ln)
        self.p.checkpoint()  # the rows of the blocks before are complete (but is_final: see finish)
        if self.report_tail:
            if self.new_run:  # the report before was the last of its run
                self.run_ends.append(self.report)
                self.new_run = False
                self.run_start = self.report + 1
            self.report += 1
            self.report_tail = False
        self.group, self.disks, self.found = None, False, True
        name, gid = m["name"], int(m["gid"])
        pre = self.preamble.get((name, gid)) or self.preamble.get(name) or {}
        laid = self.layout.get(name)
        laid = laid if laid is not None and laid[0] >= self.run_start else None  # this run's, not an earlier one's
        self.job = {
            "job_index": self.p.count("fio_jobs"),
            "doc_index": self.report,
            "is_final": False,
            "jobname": name,
            "groupid": gid,
            "jobs": int(m["jobs"]),
            "error": int(m["err"]),
            "pid": int(m["pid"]),
            "report_time": (m["time"] or None),
            "report_epoch_s": None,
            "rw": pre.get("rw"),
            "block_size_bytes": pre.get("block_size_bytes"),
            "ioengine": pre.get("ioengine"),
            "iodepth": pre.get("iodepth"),
            "numjobs": None,
            "options_json": None,
            "layout_files": None if laid is None else laid[1],
            "layout_bytes": None if laid is None else laid[2],
            "cpu_usr_pct": None,
            "cpu_sys_pct": None,
            "ctx": None,
            "majf": None,
            "minf": None,
            "line_start": ln,
            "line_end": ln,
        }
        self.p.add("fio_jobs", self.job)
        self.jstate = {"issued": None, "results": {}, "last": ln, "kb_base": None, "legacy": False}
        self.res = None

    def close_job(self, ln: int | None = None) -> None:
        """End the current job block; ``ln`` is the line that ends it (None: a blank line or EOF)."""
        if self.job is None:
            return
        st = self.jstate
        if st["issued"] is None:
            self.fail(
                ln if ln is not None else self.last,
                f"job block of {self.job['jobname']!r} (line {self.job['line_start']}) ends before its 'issued' line",
                "the rest of the job block up to its 'issued' line",
            )
        self.job["line_end"] = st["last"]
        total, short, dropped = st["issued"]
        for d, row in st["results"].items():
            if d in _DIRS:
                idx = _DIRS.index(d)
                row["total_ios"], row["short_ios"], row["dropped_ios"] = total[idx], short[idx], dropped[idx]
            elif d == "mixed":
                row["total_ios"], row["short_ios"], row["dropped_ios"] = (
                    None if c[0] is None else sum(v or 0 for v in c[:3]) for c in (total, short, dropped)
                )
            elif d == "sync":
                row["total_ios"] = total[3]
            if row["io_bytes"] == 0 and row["total_ios"]:
                # fio 3.x prints the unified_rw_reporting=both 'mixed:' line as IOPS=0, BW=0 (0)(0B/..)
                self.p.warnings.append(
                    f"line {row['line_start']}: {d} section prints 0 bytes for {row['total_ios']} "
                    "issued I/Os (a fio display bug); io, bw and iops stored as NULL"
                )
                row["io_bytes"] = row["bw_bytes_per_s"] = row["iops"] = None
            elif row["iops"] == 0 and row["total_ios"] and row["runtime_ns"]:
                # fio prints IOPS as a whole number: fewer than one I/O a second reads 'IOPS=0'
                seconds = row["runtime_ns"] / 1e9
                row["iops"] = row["total_ios"] / seconds
                self.p.warnings.append(
                    f"line {row['line_start']}: {d} prints IOPS=0 for {row['total_ios']} I/Os in {seconds:g} s; "
                    f"stored their rate, {row['iops']:.3g} IOPS"
                )
        self.job = None
        self.res = None

    def job_line(self, ln: int, s: str, c: str) -> None:
        """``c``: the first non-blank character of the line."""
        if c in "rwtm" and _DIR_CUE.match(s):
            return self.direction(ln, s)
        if c == "f" and _SYNC_HEAD.match(s):
            return self.new_result(ln, "sync")
        if "min=" in s and _LAT_CUE.match(s):
            return self.lat_stat(ln, s)
        m = " percentiles (" in s and _PCT_TITLE.match(s)
        if m:
            return self.open_pct(ln, m)
        if c == "b" and _BW.match(s):
            return self.bw(ln, s)
        if c == "i" and _IOPS.match(s):
            return self.iops(ln, s)
        self.res = None  # the rest are job-wide lines
        m = c == "l" and _LATDIST.match(s)
        if m:
            return self.lat_dist(ln, m)
        m = c == "c" and _CPU.match(s)
        if m:
            f = self.fields(
                ln, m["rest"], ("usr", "sys", "ctx", "majf", "minf"), "'cpu : usr=N%, sys=N%, ctx=N, majf=N, minf=N'"
            )
            exp = "a number"
            self.job.update(
                cpu_usr_pct=self.number(ln, f["usr"], exp),
                cpu_sys_pct=self.number(ln, f["sys"], exp),
                ctx=self.integer(ln, f["ctx"], exp),
                majf=self.integer(ln, f["majf"], exp),
                minf=self.integer(ln, f["minf"], exp),
            )
            return
        m = c in "Isc" and _DEPTH.match(s)
        if m:
            return self.depths(ln, m)
        if c == "i" and _ISSUED_CUE.match(s):
            return self.issued(ln, s)
        if c == "b" and _BLOCK_LIFETIME.match(s):
            self.lifetime = True
            return
        if c in "Dels" and _KNOWN_SKIPPED.match(s):
            return
        self.p.warnings.append(
            f"line {ln}: unknown line in the job block of {self.job['jobname']!r}: {s.strip()[:80]!r}"
        )

    def new_result(self, ln: int, direction: str) -> dict:
        if direction in self.jstate["results"]:
            self.fail(ln, f"second {direction!r} section in one job block", "one section per direction")
        row = _RESULT_ROW.copy()
        row["job_index"], row["direction"] = self.job["job_index"], direction
        row["exact"], row["line_start"], row["line_end"] = False, ln, ln
        self.p.add("fio_results", row)
        self.jstate["results"][direction] = row
        self.res = row
        return row

    def touch(self, ln: int) -> dict | None:
        if self.res is not None:
            self.res["line_end"] = ln
        return self.res

    def direction(self, ln: int, s: str, m3: re.Match | None = None) -> None:
        """``m3``: the line's ``_DIR3`` match when the fast path made it."""
        m3 = m3 or _DIR3.match(s)
        m2 = None if m3 else _DIR2.match(s)
        if not (m3 or m2):
            self.fail(
                ln,
                "malformed direction line",
                "'read: IOPS=N, BW=N (N)(SIZE/Nmsec)' or 2.x 'read : io=N, bw=N, iops=N, runt=Nmsec'",
            )
        m = m3 or m2
        row = self.new_result(ln, m["dir"])
        expected = "a number with an optional k/M suffix"
        row["iops"] = _r(self.conv(ln, units.si_number, m["iops"].strip(), expected))
        row["runtime_ns"] = _r(int(m["runt"]) * 1e6)
        if m3:
            if m["tail"] and not m["tail"].startswith(";"):
                self.fail(ln, "unexpected text after the direction line", "'; N zone resets' or nothing")
            row["bw_bytes_per_s"] = self.pair(ln, m["bw"], m["bw2"])
            row["io_bytes"] = self.size(ln, m["io"])
            if _SI_UNIT.search(m["bw"]):
                self.jstate["kb_base"] = 1000
            elif _IEC_UNIT.search(m["bw"]):
                self.jstate["kb_base"] = 1024
        else:
            self.jstate["legacy"] = True
            row["bw_bytes_per_s"] = self.size(ln, m["bw"], legacy=True)
            row["io_bytes"] = self.size(ln, m["io"], legacy=True)

    def lat_fast(self, ln: int, m: re.Match) -> None:
        """A latency line in its usual form (``_LAT_FAST``)."""
        label, unit, mn, mn_sfx, mx, mx_sfx, avg, stdev = m.groups()
        factor = _TIME[unit]
        values = (
            _r(float(mn) * _SI[mn_sfx] * factor),
            _r(float(mx) * _SI[mx_sfx] * factor),
            _r(float(avg) * factor),
            _r(float(stdev) * factor),
        )
        row = self.touch(ln)
        if row is None:
            self.fail(ln, "latency line outside a direction section", "a 'read:'/'write:' line before it")
        kind = "lat" if label == "sync" else label
        (row[f"{kind}_min_ns"], row[f"{kind}_max_ns"], row[f"{kind}_mean_ns"], row[f"{kind}_stdev_ns"]) = values

    def lat_stat(self, ln: int, s: str) -> None:
        m = _LAT.match(s)
        label = " ".join(m["label"].split())
        if label in ("slat", "clat", "lat", "sync"):
            kind = "lat" if label == "sync" else label
        elif "prio" in label:
            kind = None
            if not self.prio_warned:
                self.prio_warned = True
                self.p.warnings.append(
                    f"line {ln}: per-priority latency lines and percentiles (cmdprio) are not stored"
                )
        else:
            self.p.warnings.append(f"line {ln}: unknown latency line {label!r}")
            kind = None
        f = self.fields(
            ln, m["rest"], ("min", "max", "avg", "stdev"), f"'{label} ({m['unit']}): min=N, max=N, avg=N, stdev=N'"
        )
        factor = _TIME[m["unit"]]
        si = "a number with an optional k/M suffix"
        values = {
            "min": _r(self.conv(ln, units.si_number, f["min"], si) * factor),
            "max": _r(self.conv(ln, units.si_number, f["max"], si) * factor),
            "mean": _r(self.number(ln, f["avg"], "a decimal number") * factor),
            "stdev": _r(self.number(ln, f["stdev"], "a decimal number") * factor),
        }
        row = self.touch(ln)
        if kind is None:
            return
        if row is None:
            self.fail(ln, "latency line outside a direction section", "a 'read:'/'write:' line before it")
        for k, v in values.items():
            row[f"{kind}_{k}_ns"] = v

    def open_pct(self, ln: int, m: re.Match) -> None:
        pre = " ".join(m["pre"].split())
        kind = {"clat": "clat", "lat": "lat", "slat": "slat", "sync": "lat"}.get(pre)
        if kind is None and "prio" not in pre:
            self.p.warnings.append(f"line {ln}: percentiles of unknown kind {pre!r} not stored")
        row = self.touch(ln)
        if row is None:
            self.fail(ln, "percentile block outside a direction section", "a 'read:'/'write:' line before it")
        self.pct = {"kind": kind, "factor": _TIME[m["unit"]], "row": row, "open": True, "start": ln}

    def pct_line(self, ln: int, s: str) -> None:
        pct = self.pct
        m = self.fast and pct["open"] and _PCT_FAST.match(s)
        if m:  # a full line of four entries
            g = m.groups()
            pct["open"] = g[8] == ","
            self.touch(ln)
            if pct["kind"] is not None:
                self.pct_rows(ln, pct, zip(g[0:8:2], g[1:8:2], strict=True))
            return
        if not pct["open"] or not _PCT_LINE.match(s):
            self.fail(
                ln,
                "malformed percentile line" if pct["open"] else "percentile line after the last one",
                "'| 1.00th=[   32],  5.00th=[   44], ...' (the last line without a trailing comma)",
            )
        pct["open"] = s.rstrip().endswith(",")
        self.touch(ln)
        if pct["kind"] is not None:
            self.pct_rows(ln, pct, _PCT_ENTRY.findall(s))

    def pct_rows(self, ln: int, pct: dict, entries: Iterable[tuple[str, str]]) -> None:
        """The rows of one percentile line's (percentile, value) texts."""
        job, direction, kind, factor = self.job["job_index"], pct["row"]["direction"], pct["kind"], pct["factor"]
        rows = self.p.tuples("fio_percentiles", _PCT_COLUMNS)
        for p, v in entries:
            percentile = _NUMBERS.get(p)
            if percentile is None:
                percentile = self.number(ln, p, "a percentile like 99.90")
            # below 10**9 the product is a whole number under 2**53: exact, nothing for _r to round
            latency = int(v) * factor if len(v) < 10 else _r(int(v) * factor)
            rows.append((job, direction, kind, percentile, latency, ln, ln))

    def end_pct(self, ln: int | None) -> None:
        pct, self.pct = self.pct, None
        if pct["open"]:
            where = ln if ln is not None else self.last
            self.fail(
                where,
                f"percentile block of line {pct['start']} is incomplete",
                "more '| NN.NNth=[V]' entries (the list ends without a trailing comma)",
            )

    def bw_factor(self, ln: int, label: str) -> float:
        key = (label, self.jstate["kb_base"])
        factor = _BW_FACTORS.get(key)
        if factor is not None:
            return factor
        factor = _legacy_label_factor(label)
        if factor is None and label in ("MiB/s", "Mibit/s") and self.jstate["kb_base"] == 1000:
            factor = 1e6 if label == "MiB/s" else 1e6 / 8  # fio divides by kb_base=1000 here
        if factor is None:
            factor = self.conv(ln, units.fio_bw_label_factor, label, "a bandwidth unit like KiB/s")
        if len(_BW_FACTORS) < _CACHE_MAX:
            _BW_FACTORS[key] = factor
        return factor

    def bw_fast(self, ln: int, m: re.Match) -> None:
        """A bw line in its usual form (``_BW_FAST``)."""
        label, mn, mx, per, avg, stdev, samples = m.groups()
        factor = self.bw_factor(ln, label.replace(" ", ""))
        row = self.touch(ln)
        if row is None:
            self.fail(ln, "bw line outside a direction section", "a 'read:'/'write:' line before it")
        row["bw_min_bytes_per_s"] = _r(float(mn) * factor)
        row["bw_max_bytes_per_s"] = _r(float(mx) * factor)
        row["bw_mean_bytes_per_s"] = _r(float(avg) * factor)
        row["bw_stdev_bytes_per_s"] = _r(float(stdev) * factor)
        row["bw_agg_pct"] = float(per)
        if samples:
            row["bw_samples"] = int(samples)

    def bw(self, ln: int, s: str) -> None:
        m = _BW.match(s)
        factor = self.bw_factor(ln, m["label"].replace(" ", ""))
        f = self.fields(
            ln,
            m["rest"],
            ("min", "max", "avg", "stdev"),
            "'bw (  KiB/s): min=N, max=N, per=N%, avg=N, stdev=N[, samples=N]'",
        )
        row = self.touch(ln)
        if row is None:
            self.fail(ln, "bw line outside a direction section", "a 'read:'/'write:' line before it")
        n = "a number"
        row.update(
            bw_min_bytes_per_s=_r(self.number(ln, f["min"], n) * factor),
            bw_max_bytes_per_s=_r(self.number(ln, f["max"], n) * factor),
            bw_mean_bytes_per_s=_r(self.number(ln, f["avg"], n) * factor),
            bw_stdev_bytes_per_s=_r(self.number(ln, f["stdev"], n) * factor),
        )
        if f.get("per"):
            row["bw_agg_pct"] = self.number(ln, f["per"], "a percentage")
        if f.get("samples"):
            row["bw_samples"] = self.integer(ln, f["samples"], "a sample count")

    def iops_fast(self, ln: int, m: re.Match) -> None:
        """An iops line in its usual form (``_IOPS_FAST``)."""
        mn, mx, avg, stdev, samples = m.groups()
        row = self.touch(ln)
        if row is None:
            self.fail(ln, "iops line outside a direction section", "a 'read:'/'write:' line before it")
        row["iops_min"], row["iops_max"], row["iops_mean"], row["iops_stdev"] = (
            float(mn),
            float(mx),
            float(avg),
            float(stdev),
        )
        if samples:
            row["iops_samples"] = int(samples)

    def iops(self, ln: int, s: str) -> None:
        f = self.fields(
            ln,
            _IOPS.match(s)["rest"],
            ("min", "max", "avg", "stdev"),
            "'iops : min=N, max=N, avg=N, stdev=N[, samples=N]'",
        )
        row = self.touch(ln)
        if row is None:
            self.fail(ln, "iops line outside a direction section", "a 'read:'/'write:' line before it")
        n = "a number"
        row.update(
            iops_min=self.number(ln, f["min"], n),
            iops_max=self.number(ln, f["max"], n),
            iops_mean=self.number(ln, f["avg"], n),
            iops_stdev=self.number(ln, f["stdev"], n),
        )
        if f.get("samples"):
            row["iops_samples"] = self.integer(ln, f["samples"], "a sample count")

    def lat_dist(self, ln: int, m: re.Match) -> None:
        if not _BUCKETS.match(m["rest"]):
            self.fail(ln, "malformed latency distribution line", "'lat (usec) : 2=1.81%, 4=6.08%, ...'")
        unit = m["unit"]
        factor = _TIME[unit]
        ns_era = self.version >= (2, 99) if self.version else not self.jstate["legacy"]
        base_lo = {"nsec": 0.0, "usec": 1e3 if ns_era else 0.0, "msec": 1e6}[unit]
        job = self.job["job_index"]
        rows = self.p.tuples("fio_latency_buckets", _BUCKET_COLUMNS)
        for ge, key, pct in _BUCKET.findall(m["rest"]):
            edges = _BUCKET_EDGES.get((ge, key, factor, base_lo))
            if edges is None:
                k = int(key)
                if ge:
                    lo, hi = k * factor, None
                else:
                    lower = [e for e in _EDGES if e < k]
                    lo, hi = (lower[-1] * factor if lower else base_lo), k * factor
                edges = _r(lo), None if hi is None else _r(hi)
                if len(_BUCKET_EDGES) < _CACHE_MAX:
                    _BUCKET_EDGES[(ge, key, factor, base_lo)] = edges
            value = _NUMBERS.get(pct)
            if value is None:
                value = self.number(ln, pct, "a percentage")
            rows.append((job, edges[0], edges[1], value, ln, ln))

    def depths(self, ln: int, m: re.Match) -> None:
        if not _BUCKETS.match(m["rest"]):
            self.fail(ln, "malformed IO depth line", "'IO depths : 1=0.1%, 2=0.1%, ..., >=64=0.0%'")
        kind = _DEPTH_KINDS[m["kind"]]
        self.depth_rows(ln, kind, ((ge + key, pct) for ge, key, pct in _BUCKET.findall(m["rest"])))

    def depths_fast(self, ln: int, m: re.Match) -> None:
        """An IO depths, submit or complete line in fio 3.x's usual form (``_DEPTHS_FAST``)."""
        self.res = None
        g = m.groups()
        keys = (*g[1:13:2], ">=" + g[13])
        self.depth_rows(ln, _DEPTH_KINDS[g[0]], zip(keys, g[2:15:2], strict=True))

    def depth_rows(self, ln: int, kind: str, entries: Iterable[tuple[str, str]]) -> None:
        """The rows of one IO depth line's (bucket, percentage) texts."""
        job = self.job["job_index"]
        rows = self.p.tuples("fio_iodepths", _DEPTH_COLUMNS)
        for key, pct in entries:
            value = _NUMBERS.get(pct)
            if value is None:
                value = self.number(ln, pct, "a percentage")
            rows.append((job, kind, key, value, ln, ln))

    def issued_fast(self, ln: int, m: re.Match) -> None:
        """An issued line in fio 3.4+'s form (``_ISSUED_FAST``)."""
        self.res = None
        n = [int(c) for c in m.groups()]
        self.jstate["issued"] = (n[0:4], n[4:8], n[8:12])

    def cpu_fast(self, ln: int, m: re.Match) -> None:
        """A cpu line in its usual form (``_CPU_FAST``)."""
        self.res = None
        usr, sys, ctx, majf, minf = m.groups()
        self.job.update(cpu_usr_pct=float(usr), cpu_sys_pct=float(sys), ctx=int(ctx), majf=int(majf), minf=int(minf))

    def lat_dist_fast(self, ln: int, m: re.Match) -> None:
        self.res = None
        self.lat_dist(ln, m)

    def job_line_fast(self, ln: int, s: str, c: str) -> bool:
        """The usual lines of a job block, each read by one regular expression that a first character picks
        (``_FAST_LINES``); False: not one of them, the general way reads the line."""
        for rx, read in _FAST_LINES.get(c, ()):
            m = rx.match(s)
            if m:
                read(self, ln, m)
                return True
        return False

    def issued(self, ln: int, s: str) -> None:
        expected = (
            "'issued rwts: total=R,W,T,S short=R,W,T,0 dropped=R,W,T,0' (or an older form: "
            "'total=R,W,T, short=...', 'total=r=R/w=W/d=T, short=...', 'issued r/w/d: total=R/W/T, ...')"
        )
        m = _ISSUED.match(s)
        parts = {}
        if m:
            for key, value in _ISSUED_PART.findall(m["body"]):
                if "r=" in value:
                    cells = _ISSUED_RWD.fullmatch(value)
                    cells = cells and [c for c in cells.groups() if c is not None]
                else:
                    cells = _ISSUED_COUNTS.fullmatch(value) and _COMMA_SLASH.split(value)
                if not cells:
                    self.fail(ln, f"cannot read issued counts {value!r}", expected)
                key = "drop" if key.startswith("drop") else key
                parts[key] = [int(c) for c in cells] + [None] * (4 - len(cells))
        if not m or "total" not in parts or _ISSUED_PART.sub("", m["body"]).strip():
            self.fail(ln, "malformed issued line", expected)
        none = [None] * 4
        self.jstate["issued"] = (parts["total"], parts.get("short", none), parts.get("drop", none))

    # ---- groups and disks ----------------------------------------------------------------------
    def group_line(self, ln: int, s: str) -> None:
        self.close_job(ln)
        self.found = self.report_tail = True
        m3 = _GROUP3.match(s)
        m2 = None if m3 else _GROUP2.match(s)
        if not (m3 or m2):
            self.fail(
                ln,
                "malformed run status line",
                "'WRITE: bw=N (N), MIN-MAX (MIN-MAX), io=N (N), run=MIN-MAXmsec' or 2.x "
                "'READ: io=N, aggrb=N, minb=N, maxb=N, mint=Nmsec, maxt=Nmsec'",
            )
        gid = self.group
        if gid is None:
            gid = self.group = 0
            self.p.warnings.append(
                f"line {ln}: run status line without a 'Run status group N' header; groupid taken as 0"
            )
        if m3:
            bw, mn, mx = (self.pair(ln, m3[a], m3[b]) for a, b in (("bw", "bw2"), ("mn", "mn2"), ("mx", "mx2")))
            io = self.pair(ln, m3["io"], m3["io2"])
        else:
            bw, mn, mx, io = (self.size(ln, m2[k], legacy=True) for k in ("bw", "mn", "mx", "io"))
        m = m3 or m2
        self.p.add(
            "fio_groups",
            {
                "doc_index": self.report,
                "groupid": gid,
                "direction": m["dir"].lower(),
                "bw_bytes_per_s": bw,
                "bw_min_bytes_per_s": mn,
                "bw_max_bytes_per_s": mx,
                "io_bytes": io,
                "run_min_ns": _r(int(m["r0"]) * 1e6),
                "run_max_ns": _r(int(m["r1"]) * 1e6),
                "derived": False,
                "exact": False,
                "line_start": ln,
                "line_end": ln,
            },
        )

    def disk(self, ln: int, s: str, end: int | None = None) -> None:
        """One disk stats line (``end``: the last line of a line wrapped after a comma). A line that
        ends in ',' without matching waits for its continuation; one that the file ends in (or that
        is cut short) loses only itself: the results before it are kept, with a warning."""
        self.end_disks()
        m = _DISK.match(s)
        if not m:
            if s.rstrip().endswith(",") and end is None:
                self.disk_part = (ln, s.rstrip())
                return
            if self.is_last(end or ln):
                self.p.warnings.append(
                    f"line {ln}: disk stats line cut at the end of the file, not stored: {s.strip()[:60]!r}"
                )
                return
            self.fail(
                ln,
                "malformed disk stats line",
                "'name: ios=R/W, [sectors=R/W, ]merge=R/W, ticks=R/W, in_queue=N, util=N%[, aggr...]'",
            )
        g = m.groupdict()

        def i(k):
            return None if g[k] is None else int(g[k])

        def ms(k):
            return None if g[k] is None else _r(int(g[k]) * 1e6)

        self.p.add(
            "fio_disk_stats",
            {
                "disk": g["name"],
                "read_ios": i("rio"),
                "write_ios": i("wio"),
                "read_sectors": i("rsec"),
                "write_sectors": i("wsec"),
                "read_merges": i("rm"),
                "write_merges": i("wm"),
                "read_ticks_ns": ms("rt"),
                "write_ticks_ns": ms("wt"),
                "in_queue_ns": ms("q"),
                "util_pct": float(g["util"]),
                "has_slaves": g["ario"] is not None,
                "aggr_read_ios": i("ario"),
                "aggr_write_ios": i("awio"),
                "aggr_read_sectors": i("arsec"),
                "aggr_write_sectors": i("awsec"),
                "aggr_read_merges": i("arm"),
                "aggr_write_merges": i("awm"),
                "aggr_read_ticks_ns": ms("art"),
                "aggr_write_ticks_ns": ms("awt"),
                "aggr_in_queue_ns": ms("aq"),
                "aggr_util_pct": None if g["autil"] is None else float(g["autil"]),
                "line_start": ln,
                "line_end": end or ln,
            },
        )

    def end_disks(self) -> None:
        """A disk line that ended in ',' and was not continued: cut (the file ends there) or malformed."""
        if self.disk_part is not None:
            ln, s = self.disk_part
            self.disk_part = None
            self.disk(ln, s, ln)

    # ---- end of input ------------------------------------------------------------------------
    def finish(self) -> None:
        self.end_disks()
        if self.pct is not None:
            self.end_pct(None)
        if self.job is not None:
            self.close_job(None)
        if not self.found:
            if self.started:
                raise ParseError(
                    "fio started but its report is missing",
                    line=self.last or 1,
                    kind="truncated",
                    expected="job blocks and 'Run status group' lines",
                )
            raise ParseError(
                "no fio normal output found",
                line=1,
                kind="invalid",
                expected="a job header 'name: (groupid=N, jobs=N): err= N: pid=N', a "
                "'Run status group N (all jobs):' line or a 'READ:/WRITE: bw=' line",
            )
        if self.p.count("fio_jobs") and not self.report_tail:
            self.fail(
                self.last,
                "the output stops after the job blocks",
                "'Run status group N (all jobs):' and its lines after the job blocks",
            )
        if self.terse_lines:
            n = len(self.terse_lines)
            self.p.warnings.append(
                f"line {self.terse_lines[0]}: {n} fio terse line{'s' if n > 1 else ''} beside the normal output "
                "not stored (the normal output is, with its printed rounding)"
            )
        commands = {doc: (command, lo, hi) for doc, command, lo, hi in self.commands if doc <= self.report}  # the
        for doc, (command, lo, hi) in sorted(commands.items()):  # last before each run; none after the last report
            self.p.add("fio_commands", {"doc_index": doc, "command": command, "line_start": lo, "line_end": hi})
        finals = {*self.run_ends, self.report}
        for job in self.p.rows("fio_jobs"):
            job["is_final"] = job["doc_index"] in finals
        for doc_index in sorted(finals):
            self.p.update_flushed("fio_jobs", {"is_final": True}, {"doc_index": doc_index})


def _direction_fast(tp: _TextParser, ln: int, m: re.Match) -> None:
    tp.direction(ln, m.string, m)


def _open_pct_fast(tp: _TextParser, ln: int, m: re.Match) -> None:
    tp.open_pct(ln, m)


# the fast paths of a job block's lines by their first non-blank character: (the line's usual form, its reader),
# tried in order; each form is one that the general way (job_line) reads the same
_LAT_READ = (_LAT_FAST, _TextParser.lat_fast)
_TITLE_READ = (_PCT_TITLE, _open_pct_fast)
_SUBMIT_READ = (_DEPTHS_FAST, _TextParser.depths_fast)
_FAST_LINES = {
    "c": (_LAT_READ, _TITLE_READ, _SUBMIT_READ, (_CPU_FAST, _TextParser.cpu_fast)),
    "l": (_LAT_READ, _TITLE_READ, (_LATDIST, _TextParser.lat_dist_fast)),
    "s": (_LAT_READ, _TITLE_READ, _SUBMIT_READ),
    "b": ((_BW_FAST, _TextParser.bw_fast),),
    "i": ((_IOPS_FAST, _TextParser.iops_fast), (_ISSUED_FAST, _TextParser.issued_fast)),
    "I": ((_DEPTHS_FAST, _TextParser.depths_fast),),
    **dict.fromkeys("rwtm", ((_DIR3, _direction_fast),)),
}

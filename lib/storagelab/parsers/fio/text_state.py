"""fio normal text: the parser's state, its errors and its number readers (the caches of printed values,
units at the edge: text.py's module doc says which unit rules apply)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import NoReturn

from ... import units
from ...units import UnitError
from ..base import Parsed, ParseError
from .schema import TABLES
from .text_shapes import _BS_LABEL, _BS_PIECES, _BS_RANGE, _DECIMAL, _LEAD_NUM, _LEGACY_LABEL, _LEGACY_SIZE, _PAIRS

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


class Ahead:
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
    # each range whole (reliability-33: a search for ranges took `2.56E` of `256K-2.56E+02K` as a size, exit 0)
    for piece in [p for p in _BS_PIECES.split(bs.strip()) if p][:2]:  # (R) and (W)
        m = _BS_RANGE.fullmatch(_BS_LABEL.sub("", piece))
        if m is None:
            bad.append(piece)
            continue
        for tok in m.groups():
            legacy = "B" not in tok  # 2.x prints 4K, 1M: powers of 1024
            try:
                size = units.fio_bytes(_legacy_to_iec(tok) if legacy else tok)
            except UnitError:
                bad.append(tok)
                continue
            if size < 2**63:  # reliability-32: past a double's range (inf) or BIGINT's: not a block size
                sizes.append(size)
            else:
                bad.append(tok)
    return (int(max(sizes)) if sizes else None), tuple(bad)


class TextState:
    """What the reading of one fio output holds between lines, and the readers of its numbers. The values that
    every reading starts from and that are replaced, never changed in place, are class attributes (set-up once)."""

    ahead: Ahead | None = None  # (a stream)
    last = 0  # last non-blank line (1-based): a failure there is truncation (a stream: known at the end)
    version: tuple[int, int] | None = None
    job: dict | None = None  # current fio_jobs row
    res: dict | None = None  # current fio_results row (direction section)
    pct: dict | None = None  # open percentile block
    lifetime = False  # inside a 'block lifetime percentiles' block
    group: int | None = None  # groupid of the last 'Run status group' header
    disks = False  # inside 'Disk stats'
    disk_part: tuple[int, str] | None = None  # (line, text) of a disk line that ends in ',' (wrapped)
    report = 0  # doc_index of the current report
    new_run = False  # a preamble/version/Starting line after a complete report: another fio run
    report_tail = False  # group/disk lines seen since the last job block
    started = False  # preamble / version / Jobs lines seen
    found = False  # any report line seen
    prio_warned = False
    run_start = 0  # doc_index of the current run's first report

    def __init__(self, lines: Iterable[str], parsed: Parsed, fast: bool = True):
        self.fast = fast  # the fast paths on (the usual form of a line in one regular expression)
        self.lines = lines  # a list (a whole text), or any iterable (a stream: read once, ahead when needed)
        self.p = parsed
        self.preamble: dict[tuple[str, int] | str, dict] = {}
        self.jstate: dict = {}  # per-job working state (issued counts, results, ...)
        self.run_ends: list[int] = []  # doc_index of the last report of each run before the current one
        self.terse_lines: list[int] = []  # fio terse lines beside the normal output (--output-format=terse,normal)
        self.commands: list[tuple[int, str, int, int]] = []  # (doc_index of the next report, fio command, lines)
        self.layout: dict[str, tuple[int, int, int]] = {}  # job name -> (doc_index of its run, files, bytes laid out)
        self.fences = 0  # Markdown fence lines (```) seen outside the reports: odd inside a fenced block
        self.heading_path: list[tuple[int, str]] = []  # the Markdown headings that hold this line: (level, text)
        self.headings: list[tuple[int, str, int]] = []  # (doc_index of the next report, heading path, line)

    def is_last(self, ln: int) -> bool:
        """No non-blank line follows line ``ln``."""
        return ln >= self.last if self.ahead is None else self.ahead.nothing_after(ln)

    def fail(self, ln: int, message: str, expected: str) -> NoReturn:
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

    def printed_span(self, ln: int, token: str, legacy: bool = False) -> tuple[float, float]:
        """What a printed size or rate can stand for: its value -/+ one unit of its last digit (fio rounds, some
        releases truncate)."""
        value = self.size(ln, token, legacy)
        m = _LEAD_NUM.match(token)
        if not m or not float(m.group(1)):
            return value, value
        digits = m.group(1)
        step = 10.0 ** -(len(digits) - digits.index(".") - 1) if "." in digits else 1.0
        unit = value / float(digits) * step
        return value - unit, value + unit

    def measured_bw(self, ln: int, bw: float, printed: tuple[str, ...], io: str, run_ms: int, legacy: bool) -> float:
        """The stored bandwidth of a direction or group line: fio computes it as io * 1000 / run (ms) and prints it
        twice (3.x: ``BW=11.0MiB/s (12.6MB/s)(4096MiB/341704msec)``). Where the figure taken (``pair``) disagrees
        with the line's io/run and the other printed figure agrees (fio 3.1 and 3.25 print 11.99 MiB/s as
        '11.0MiB/s' beside a right '12.6MB/s'), io/run is stored, with a warning naming both; where neither agrees
        (a line edited by hand), the printed figure stays, with a warning."""
        if not run_ms or not bw:
            return bw
        io_lo, io_hi = self.printed_span(ln, io, legacy)
        lo, hi = io_lo * 1000 / run_ms, io_hi * 1000 / run_ms
        spans = {t: self.printed_span(ln, t, legacy) for t in printed}
        agree = [t for t, (a, b) in spans.items() if b >= lo and a <= hi]
        taken = min(printed, key=lambda t: abs(self.size(ln, t, legacy) - bw))
        if taken in agree:
            return bw
        measured = _r(self.size(ln, io, legacy) * 1000 / run_ms)
        m = _LEAD_NUM.match(taken)
        factor = self.size(ln, taken, legacy) / float(m.group(1)) if m else 1.0
        shown = f"{taken} ({' '.join(t for t in printed if t != taken)})" if len(printed) > 1 else taken
        gives = (
            f"line {ln}: bandwidth printed as {shown} but the line's io/run gives {measured / factor:.2f}"
            f"{_LEAD_NUM.sub('', taken, count=1)} ({io} in {run_ms} ms: {(measured / bw - 1) * 100:+.1f} % on the "
            "printed figure)"
        )
        if not agree:
            self.p.warnings.append(f"{gives}; neither figure agrees with it: kept as printed")
            return bw
        self.p.warnings.append(f"{gives}; stored io/run (the line's {agree[0]} agrees with it)")
        return measured

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
        # reliability-32: a piece without '=' was skipped, so 'stdev=14,47' (a decimal comma) was read as 14
        stray = next((piece for piece in rest.split(",") if piece.strip() and "=" not in piece), None)
        if stray is not None:
            self.fail(ln, f"cannot read {stray.strip()!r} (a decimal comma?)", expected)
        if any(k not in found or not found[k] for k in required):
            self.fail(ln, "missing fields " + ", ".join(k for k in required if not found.get(k)), expected)
        return found

    def new_result(self, ln: int, direction: str) -> dict:
        assert self.job is not None  # (inside a job block)
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

"""fio's log files: write_bw_log / write_iops_log / write_lat_log (one sample per line) and
write_hist_log (a completion latency histogram per line).

Formats (fio HOWTO "Log File Formats", iolog.c ``flush_samples``/``flush_hist_samples``):

* sample logs, ``time, value, direction, block size[, offset][, priority][, issue time]``:
  time in ms (since the job started, or the epoch with log_unix_epoch); value in KiB/s (bw),
  I/O per second (iops) or ns (lat/clat/slat, fio >= 3.0; fio 2.x logged usec); direction
  0 read, 1 write, 2 trim; the offset only with log_offset=1; the priority column since fio 3.x
  (``0``/``1``, or ``0x%04x`` with log_prio=1). With log_avg_msec the entry is the average (or the
  maximum, log_max_value=1) over the window and fio prints block size and offset as 0. The time is when fio
  logged the entry: an I/O's completion, or a window's end (stat.c ``add_log_sample`` averages the samples of
  [k x log_avg_msec, (k+1) x log_avg_msec) and logs them when that window closes, at most 1 ms early,
  ``LOG_MSEC_SLACK``, or late by the wait for the next I/O; the last, at the job's end, closes a shorter one).
  Stored as fio printed it, in ns (``time_ns``); ``analysis.fio_timeseries.combine_jobs`` puts per-I/O entries in
  windows timed the same way.
  Column counts: 4 (fio 2.x), 5 (fio 3.x: priority; fio 2.x with log_offset: offset - told apart
  by the values: a 5th column holding anything but 0/1 or hex is an offset), 6 (offset, priority),
  7 (offset, priority, issue time). fio >= 3.36's log_max_value=both (an extra max column after
  the value) is not told apart from log_offset and is read as if it were offsets.
* histogram logs, ``time, direction, block size, bin0, bin1, ...``: fio's latency histogram of
  the I/Os completed since the previous line. 1856 bins (29 groups of 64, ns: fio >= 3.0) or
  1216 (19 groups, usec: fio 2.x), divided by 2**log_hist_coarseness.

What a sample log measures (bw, iops, lat, clat, slat) is only in the file name
(``PREFIX_KIND.N.log``): ``parse_log`` takes it as ``name`` and stores NULL when the name does
not say. Detection (``sniff_log``) looks at content only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator

from ..base import Parsed, ParseError, lines_of

FORMATS = ("fio-log", "fio-hist-log")
DIRECTIONS = {0: "read", 1: "write", 2: "trim", 3: "sync"}
KIB = 1024
MS_NS = 1_000_000
_INT64 = 1 << 63

_NUM = r"(?:\d+|0x[0-9a-fA-F]+)"
_SAMPLE_LINE = re.compile(r"^\d+, -?\d+, [0-3], \d+(?:, " + _NUM + r"){0,3}$")
_HIST_LINE = re.compile(r"^\d+, [0-3], \d+(?:, \d+){19,}$")
_NAME = re.compile(r"^(?P<prefix>.+)_(?P<kind>bw|iops|lat|clat|slat|clat_hist)(?:\.(?P<job>\d+))?\.log$")

PLAT_BITS = 6
PLAT_VAL = 1 << PLAT_BITS
# bins of an uncoarsened histogram -> factor from fio's unit to ns
_FULL_BINS = {29 * PLAT_VAL: 1, 19 * PLAT_VAL: 1000}

SAMPLE_COLUMNS = (
    "prefix",
    "kind",
    "job_index",
    "time_ns",
    "value",
    "bw_bytes_per_s",
    "iops",
    "latency_ns",
    "direction",
    "block_size_bytes",
    "offset_bytes",
    "priority",
    "windowed",
    "line_start",
    "line_end",
)
HIST_COLUMNS = (
    "prefix",
    "job_index",
    "time_ns",
    "direction",
    "block_size_bytes",
    "bin_index",
    "latency_lo_ns",
    "latency_ns",
    "latency_hi_ns",
    "count",
    "line_start",
    "line_end",
)


SNIFF_CHARS = 1 << 16  # what sniff_log judges: the same for a whole text and a streamed file's head


def sniff_log(text: str) -> str | None:
    """``fio-log`` or ``fio-hist-log`` when the first lines (up to 3) all have one of the shapes. Judged on the
    first SNIFF_CHARS characters only, so that a whole text and the head of a huge file (the streamed path) get
    one verdict: a line cut there is judged on its whole fields (and not on its column count)."""
    if not text[:1].isdigit():
        return None
    head = text[:SNIFF_CHARS]
    parts = head.split("\n", 3)
    lines = [ln.rstrip("\r") for ln in parts[:3]]
    cut = None
    if len(parts) < 4 and len(text) > len(head) and text[len(head)] != "\n":
        last = lines.pop()  # runs past the window
        cut = last[: last.rfind(", ")] if ", " in last else None
    lines = [ln for ln in lines if ln.strip()]
    if cut is None and not lines:
        return None
    for fmt, shape in (("fio-hist-log", _HIST_LINE), ("fio-log", _SAMPLE_LINE)):
        whole = all(shape.match(ln) for ln in lines) and len({ln.count(",") for ln in lines}) <= 1
        if whole and (cut is None or shape.match(cut)) and (cut is None or not lines or fmt == "fio-hist-log"):
            return fmt
    return None


def name_parts(name: str | None) -> tuple[str | None, str | None, int | None]:
    """(prefix, kind, job index) from a log's file name; (None, None, None) when it is not fio's pattern."""
    if not name:
        return None, None, None
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    m = _NAME.match(base)
    if not m:
        return None, None, None
    job = m.group("job")
    return m.group("prefix"), m.group("kind"), int(job) if job is not None else None


def _int(tok: str, lineno: int, what: str) -> int:
    try:
        v = int(tok, 16) if tok[:2] in ("0x", "0X") else int(tok)
    except ValueError:
        raise ParseError(
            f"{what} {tok!r} is not a whole number", line=lineno, kind="invalid", expected=f"{what} as a whole number"
        ) from None
    if not -_INT64 < v * (MS_NS if what == "time" else 1) < _INT64:
        raise ParseError(
            f"{what} {tok} is out of range",
            line=lineno,
            kind="invalid",
            expected=f"{what} below 2^63" + (" ns" if what == "time" else ""),
        )
    return v


def _direction(tok: str, lineno: int) -> str:
    d = DIRECTIONS.get(_int(tok, lineno, "direction"))
    if d is None:
        raise ParseError(
            f"direction {tok!r}",
            line=lineno,
            kind="invalid",
            expected="a data direction: 0 (read), 1 (write), 2 (trim) or 3 (sync)",
        )
    return d


def _extent(open_lines: Callable[[], Iterator[str]]) -> tuple[int, bool]:
    """(number of the last non-blank line, whether the text ends with a line end) of a log."""
    last = n = 0
    final = None
    for n, ln in enumerate(open_lines(), 1):  # noqa: B007 - n is used after the loop
        if ln.strip():
            last = n
        final = ln
    # blanks after the last line end, or a CR (of a CRLF whose LF is missing), still end the last value
    return last, final is not None and (not final.strip() or final.endswith("\r"))


def _rows(open_lines: Callable[[], Iterator[str]], extent: tuple[int, bool]) -> Iterator[tuple[int, list[str]]]:
    """(line number, tokens) of every non-empty line; the same column count on every line."""
    last, ends_in_newline = extent
    if not last:
        raise ParseError(
            "no log lines", line=1, kind="empty", expected="fio log lines 'time, value, direction, block size'"
        )
    width = None
    for i, ln in enumerate(open_lines(), 1):
        s = ln.strip()
        if not s:
            continue
        toks = s.split(", ")
        if width is None:
            width = len(toks)
        if len(toks) != width or not all(toks):
            if i == last and not ends_in_newline and len(toks) < width:
                raise _cut(i, width, f"the last line has {len(toks)} of {width} columns")
            raise ParseError(
                f"{len(toks)} columns where the log's first line has {width}",
                line=i,
                kind="invalid",
                expected=f"{width} numbers separated by ', '",
            )
        if i == last and not ends_in_newline:  # reliability-33: `..., 4096, 65` of `65536` was stored as 65
            raise _cut(i, width, "the last line has no line end (fio ends every line with one)")
        yield i, toks


def _cut(line: int, width: int, what: str) -> ParseError:
    return ParseError(
        f"{what}: the log stops in the middle of a line",
        line=line,
        kind="truncated",
        expected=f"{width} comma-separated numbers",
    )


CHECKPOINT_LINES = 4096  # lines between two checkpoints (see base.py "Streaming")


def parse_log(text: str, fmt: str | None = None, name: str | None = None) -> Parsed:
    fmt = fmt or sniff_log(text)
    lines = lines_of(text)
    return parse_stream(lambda: iter(lines), fmt, Parsed(tool="fio", format=fmt or "fio-log"), name)


def parse_stream(
    open_lines: Callable[[], Iterator[str]], fmt: str | None, parsed: Parsed, name: str | None = None
) -> Parsed:
    """A sample or histogram log from its lines (read twice or three times; see base.py "Streaming")."""
    if fmt == "fio-hist-log":
        return _parse_hist(open_lines, name, parsed)
    if fmt != "fio-log":
        raise ParseError(
            "not a fio log",
            line=1,
            kind="invalid",
            expected="fio log lines 'time, value, direction, block size[, offset][, priority]'",
        )
    prefix, kind, job = name_parts(name)
    if kind == "clat_hist":
        kind = None  # named like a histogram, holds samples: trust the content, not the name
    if _fast_samples(open_lines(), prefix, kind, job, parsed):
        return parsed
    parsed.restart()
    rows = parsed.tuples("fio_log_samples", SAMPLE_COLUMNS)
    extent = _extent(open_lines)
    first = width = 0  # set by the first row (_rows raises on a log without one)
    fifth_is_offset = False  # 5 columns: priority (fio 3.x) unless some value is not 0/1/hex: an offset (fio 2.x)
    for lineno, t in _rows(open_lines, extent):  # every line checked before any row is built
        if not first:
            first, width = lineno, len(t)
        if width == 5 and t[4] not in ("0", "1") and not t[4].startswith("0x"):
            fifth_is_offset = True
    if width < 4:
        raise ParseError(
            f"{width} columns",
            line=first,
            kind="invalid",
            expected="time, value, direction, block size[, offset][, priority]",
        )
    if width > 7:
        raise ParseError(
            f"{width} columns",
            line=first,
            kind="unsupported-version",
            expected="4 to 7 columns: time, value, direction, block size, offset, priority, issue time",
        )
    # fio 2.x logged latencies in usec, fio 3.x in ns; the priority column came with fio 3.x (3.18 writes it), so
    # a log without it (4 columns, or 5 holding offsets) may be either: its latencies are not stored as ns
    unit_unknown = kind in ("lat", "clat", "slat") and (width == 4 or width == 5 and fifth_is_offset)
    if unit_unknown:
        parsed.warnings.append(
            f"line {first}: a {kind} log without fio's priority column: fio 2.x logged usec here, early fio 3.x "
            "ns, and the log does not say which; latency_ns not stored (the numbers as printed are in value)"
        )
    is_lat = kind in ("lat", "clat", "slat") and not unit_unknown
    for lineno, t in _rows(open_lines, extent):
        time_ms = _int(t[0], lineno, "time")
        value = _int(t[1], lineno, "value")
        ddir = _direction(t[2], lineno)
        bs = _int(t[3], lineno, "block size")
        offset = prio = None
        if width == 5:
            if fifth_is_offset:
                offset = _int(t[4], lineno, "offset")
            else:
                prio = _int(t[4], lineno, "priority")
        elif width >= 6:
            offset = _int(t[4], lineno, "offset")
            prio = _int(t[5], lineno, "priority")
        windowed = bs == 0
        if windowed:
            offset = None
        rows.append(
            (
                prefix,
                kind,
                job,
                time_ms * MS_NS,
                value,
                float(value * KIB) if kind == "bw" else None,
                float(value) if kind == "iops" else None,
                float(value) if is_lat else None,
                ddir,
                None if windowed else bs,
                offset,
                prio,
                windowed,
                lineno,
                lineno,
            )
        )
        if not lineno % CHECKPOINT_LINES:
            parsed.checkpoint()
    return parsed


class _Slow(Exception):
    """The fast path met something only the general path reads (or reports) right."""


_DIRS = {str(k): v for k, v in DIRECTIONS.items()}


def _fast_samples(lines: Iterable[str], prefix, kind, job, parsed: Parsed) -> bool:
    """The rows of a well-formed sample log as fio 3.x writes it (4, 5 with a 0/1 priority, 6 or 7 columns,
    decimal numbers, values within 64 bits) into ``parsed``; False to leave the file to the general path
    (which gives the same rows, and the errors). Several times faster on logs of millions of lines (every
    I/O logged)."""
    is_bw, is_iops, is_lat = kind == "bw", kind == "iops", kind in ("lat", "clat", "slat")
    append = parsed.tuples("fio_log_samples", SAMPLE_COLUMNS).append
    width = None
    ln = None
    try:
        for lineno, ln in enumerate(lines, 1):
            if not ln:
                continue
            t = ln.split(", ")
            if width is None:
                width = len(t)
                if not 4 <= width <= 7 or width == 4 and is_lat:
                    raise _Slow  # (a 4-column latency log: its unit is not known, see parse_stream)
            elif len(t) != width:
                raise _Slow
            time_ns = int(t[0]) * MS_NS
            v = int(t[1])
            bs = int(t[3])
            offset = prio = None
            if width == 5:
                prio = int(t[4])
                if prio > 1 or prio < 0 or t[4][:1] == "0" and len(t[4]) > 1:
                    raise _Slow  # an offset (fio 2.x log_offset) or hex: decided on the whole file
            elif width >= 6:
                offset = int(t[4])
                if t[5][:2] == "0x":
                    raise _Slow
                prio = int(t[5])
            windowed = bs == 0
            if not (
                -_INT64 < time_ns < _INT64
                and -_INT64 < v < _INT64
                and -_INT64 < bs < _INT64
                and (windowed or offset is None or offset < _INT64)
            ):
                raise _Slow  # out of range: the general path says where
            append(
                (
                    prefix,
                    kind,
                    job,
                    time_ns,
                    v,
                    float(v * KIB) if is_bw else None,
                    float(v) if is_iops else None,
                    float(v) if is_lat else None,
                    _DIRS[t[2]],
                    None if windowed else bs,
                    None if windowed else offset,
                    prio,
                    windowed,
                    lineno,
                    lineno,
                )
            )
            if not lineno % CHECKPOINT_LINES:
                parsed.checkpoint()
    except (_Slow, ValueError, KeyError):
        return False
    # empty, or maybe truncated (no line end after the last line): the general path decides
    return bool(parsed.count("fio_log_samples")) and ln == ""


def bin_edges(index: int, n_bins: int) -> tuple[float, float, float]:
    """(lower edge, value, upper edge) in ns of bin ``index`` of a histogram of ``n_bins`` bins.

    The value is fio's ``plat_idx_to_val`` (stat.c; the keys of JSON+ "bins"): the bin's midpoint,
    and the index itself below 128 where bins are 1 wide. Coarse bins (log_hist_coarseness=c) span
    2**c of fio's bins: their value is the midpoint of that span."""
    for full, factor in _FULL_BINS.items():  # noqa: B007 - factor is used after the break
        if full % n_bins == 0 and (full // n_bins) & (full // n_bins - 1) == 0:
            stride = full // n_bins
            break
    else:
        raise ValueError(f"{n_bins} bins is not fio's histogram")

    def lower(i: int) -> int:
        if i < 2 * PLAT_VAL:
            return i
        error_bits = (i >> PLAT_BITS) - 1
        return (1 << (error_bits + PLAT_BITS)) + (i % PLAT_VAL) * (1 << error_bits)

    lo, hi = lower(index * stride), lower((index + 1) * stride)
    if stride == 1:
        i = index
        mid = i if i < 2 * PLAT_VAL else lo + 0.5 * (hi - lo)
    else:
        mid = (lo + hi) / 2
    return float(lo * factor), float(mid * factor), float(hi * factor)


def _check_bins(lines: Iterator[str]) -> None:
    """The first line's number of bins, counted before it is split (a 200 MB line of 70 million bins must not
    become 70 million strings first): not one fio writes, a ParseError."""
    for lineno, ln in enumerate(lines, 1):
        if ln.strip():
            n_bins = ln.strip().count(", ") + 1 - 3
            if n_bins < 1 or not any(full % n_bins == 0 for full in _FULL_BINS):
                raise ParseError(
                    f"{n_bins} histogram bins",
                    line=lineno,
                    kind="unsupported-version",
                    expected="1856 bins (fio >= 3.0) or 1216 (fio 2.x), divided by 2^log_hist_coarseness",
                )
            return


def _parse_hist(open_lines: Callable[[], Iterator[str]], name: str | None, parsed: Parsed) -> Parsed:
    prefix, kind, job = name_parts(name)
    rows = parsed.tuples("fio_hist_samples", HIST_COLUMNS)
    if kind not in (None, "clat_hist"):
        parsed.warnings.append(f"a histogram log named like a {kind} log")
        prefix = job = None
    _check_bins(open_lines())
    edges = None
    for lineno, t in _rows(open_lines, _extent(open_lines)):
        if edges is None:
            n_bins = len(t) - 3
            try:
                if n_bins < 1:
                    raise ValueError
                edges = [bin_edges(i, n_bins) for i in range(n_bins)]
            except ValueError:
                raise ParseError(
                    f"{n_bins} histogram bins",
                    line=lineno,
                    kind="unsupported-version",
                    expected="1856 bins (fio >= 3.0) or 1216 (fio 2.x), divided by 2^log_hist_coarseness",
                ) from None
        time_ns = _int(t[0], lineno, "time") * MS_NS
        ddir = _direction(t[1], lineno)
        bs = _int(t[2], lineno, "block size")
        for i, tok in enumerate(t[3:]):
            if tok == "0":
                continue
            lo, mid, hi = edges[i]
            rows.append(
                (prefix, job, time_ns, ddir, bs, i, lo, mid, hi, _int(tok, lineno, "bin count"), lineno, lineno)
            )
        parsed.checkpoint()
    return parsed

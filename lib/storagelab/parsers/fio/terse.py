"""fio terse output (``--minimal`` / ``--output-format=terse``), versions 2-5 (docs/formats/log-formats.md B.9).

One semicolon-separated line per job (per group with group_reporting)::

    3;fio-3.33;name;groupid;error; READ(41) ; WRITE(41) ; [TRIM(41): v2, v4, v5] ;
    cpu(5) ; io depths(7) ; lat µs(10) ; lat ms(12) ; [disks: 9 each, + "slaves" and 8] ;
    [total_err;first_error] ; [description]

v2 has no version field, no disk section and prints the description on the next line, which
starts with ``;``. v5 appends bw_samples and iops min;max;mean;stdev;samples to each direction
block (47 fields). Sizes are KiB, bandwidths KiB/s, latencies µs (integer-divided from ns in 3.x),
per-sample bandwidth in units of kb_base (assumed 1024: terse does not say).
Lines that do not start with a terse version (``note:`` lines, a JSON part) are skipped.
"""

from __future__ import annotations

import json as _json
import math
import re

from ... import units
from ..base import Parsed, ParseError, lines_of
from .groups import add_derived_groups

TOOL = "fio"
_START = re.compile(r"^([2-5]);")
# a number as fio's %f, %llu and %e print it; printf's nan and inf (a NaN's sign too) are stored NULL (_nonfinite)
_NUMBER = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|-?(?:nan|inf)")
_PCT_CELL = re.compile(r"^([0-9]+(?:\.[0-9]*)?)%=([0-9]+)$")
_DEPTH_LABELS = ("1", "2", "4", "8", "16", "32", ">=64")
_LAT_US = (2, 4, 10, 20, 50, 100, 250, 500, 750, 1000)
_LAT_MS = (2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000)
_TAIL = 5 + 7 + 10 + 12  # cpu, io depths, latency µs, latency ms


def _layout(version: int) -> tuple[int, tuple[str, ...], int]:
    """(header fields, directions, fields per direction block)."""
    header = 4 if version == 2 else 5
    dirs = ("read", "write") if version == 3 else ("read", "write", "trim")
    return header, dirs, 47 if version == 5 else 41


class _Fields:
    """Cursor over one line's fields with strict number reading."""

    def __init__(self, fields: list[str], line: int, version: int):
        self.f, self.i, self.line, self.version = fields, 0, line, version

    def take(self, n: int = 1) -> list[str]:
        if self.i + n > len(self.f):
            raise ParseError(
                f"terse v{self.version} line ends after {len(self.f)} fields: it is cut short",
                line=self.line,
                kind="truncated",
                expected=f"{self.i + n - len(self.f)} more field(s)",
            )
        out = self.f[self.i : self.i + n]
        self.i += n
        return out

    def bad(self, what: str, token: str) -> ParseError:
        """A field that cannot be read; the last field of the line is taken as cut short."""
        cut = self.i == len(self.f)
        return ParseError(
            f"terse v{self.version} field {self.i} ({what}) is {token!r}",
            line=self.line,
            kind="truncated" if cut else "invalid",
            expected=what,
        )

    def num(self, what: str, scale: float = 1.0, percent: bool = False) -> float:
        token = self.take()[0].strip()
        if percent:
            if not token.endswith("%"):
                raise self.bad(f"{what} with a '%'", token)
            token = token[:-1]
        if not _NUMBER.fullmatch(token):  # as fio's printf writes one: not 1_000, +5 or other digits float() takes
            raise self.bad(f"{what} (a number)", token)
        return float(token) * scale

    def int(self, what: str) -> int:
        token = self.take()[0].strip()
        if not token.isdigit():
            raise self.bad(f"{what} (an integer)", token)
        return int(token)


def parse_terse(text: str) -> Parsed:
    if not text.strip():
        raise ParseError("empty input", line=1, kind="empty", expected="fio terse output")
    parsed = Parsed(tool=TOOL, format="fio-terse")
    lines = lines_of(text)
    results: list[tuple[int, str, dict, bool]] = []
    group_sizes: dict[int, int] = {}
    n = 0
    for no, line in enumerate(lines, 1):
        m = _START.match(line)
        if not m:
            if line.startswith(";") and parsed.rows("fio_jobs") and parsed.rows("fio_jobs")[-1]["line_end"] == no - 1:
                _v2_description(parsed, line[1:], no)
            continue
        unterminated = no == len(lines)  # fio ends every terse line with a newline
        job = _parse_line(parsed, line.rstrip("\r"), no, int(m.group(1)), n, results, unterminated)
        group_sizes[job["groupid"]] = group_sizes.get(job["groupid"], 0) + 1
        n += 1
    if not n:
        raise ParseError(
            "no fio terse line found",
            line=1,
            kind="invalid",
            expected="a line like '3;fio-3.33;jobname;groupid;error;...'",
        )
    for job in parsed.rows("fio_jobs"):
        job["jobs"] = 1 if group_sizes[job["groupid"]] > 1 else None  # terse does not say (group_reporting)
    add_derived_groups(parsed, 0, results, 1, len(lines))
    _nonfinite(parsed)
    return parsed


def _nonfinite(parsed: Parsed) -> None:
    """nan and inf values stored as NULL (every value computed from one too), with a warning per line, as the JSON
    path does (reliability-36 input: a clat min of 'inf' was stored as Infinity, without a word)."""
    lines: dict[int, int] = {}
    for rows in parsed.tables.values():
        for row in rows:
            for key, value in row.items():
                if type(value) is float and not math.isfinite(value):
                    row[key] = None
                    lines[row["line_start"]] = lines.get(row["line_start"], 0) + 1
    parsed.warnings += [f"line {no}: {n} nan/inf value(s) stored as NULL" for no, n in sorted(lines.items())]


def _v2_description(parsed: Parsed, description: str, no: int) -> None:
    job = parsed.rows("fio_jobs")[-1]
    job["options_json"] = _json.dumps({"description": description})
    job["line_end"] = no


def _parse_line(
    parsed: Parsed, line: str, no: int, version: int, job_index: int, results: list, unterminated: bool
) -> dict:
    fields = line.split(";")
    header, dirs, block = _layout(version)
    fixed = header + len(dirs) * block + _TAIL
    if len(fields) < fixed:
        raise ParseError(
            f"terse v{version} line has {len(fields)} fields, fewer than the {fixed} it needs: the line is cut short",
            line=no,
            kind="truncated",
            expected=f"{fixed} fields (+ disk fields) for terse version {version}",
        )
    c = _Fields(fields, no, version)
    c.take()  # version
    tool_version = c.take()[0] if version >= 3 else None
    if tool_version and not parsed.tool_version:
        parsed.tool_version = tool_version
    jobname = c.take()[0]
    job = {
        "job_index": job_index,
        "doc_index": 0,
        "is_final": True,
        "jobname": jobname,
        "groupid": c.int("groupid"),
        "jobs": None,
        "error": c.int("error"),
        "pid": None,
        "report_time": None,
        "report_epoch_s": None,
        "rw": None,
        "block_size_bytes": None,
        "ioengine": None,
        "iodepth": None,
        "numjobs": None,
        "options_json": None,
    }
    for direction in dirs:
        row = _direction(parsed, c, job_index, direction, version, no)
        if row is not None:
            results.append((job["groupid"], direction, row, True))
    job["cpu_usr_pct"] = c.num("usr cpu", percent=True)
    job["cpu_sys_pct"] = c.num("sys cpu", percent=True)
    job["ctx"], job["majf"], job["minf"] = c.int("ctx"), c.int("majf"), c.int("minf")
    job.update(line_start=no, line_end=no)
    parsed.add("fio_jobs", job)
    for label in _DEPTH_LABELS:
        parsed.add(
            "fio_iodepths",
            {
                "job_index": job_index,
                "kind": "depth",
                "bucket": label,
                "pct": c.num(f"io depth {label}", percent=True),
                "line_start": no,
                "line_end": no,
            },
        )
    edge = 0.0  # the first µs cell also holds the sub-µs (ns) buckets, so it starts at 0
    for hi in [e * 1e3 for e in _LAT_US] + [e * 1e6 for e in _LAT_MS] + [None]:
        pct = c.num("latency distribution", percent=True)
        if pct:
            parsed.add(
                "fio_latency_buckets",
                {
                    "job_index": job_index,
                    "bucket_lo_ns": edge,
                    "bucket_hi_ns": hi,
                    "pct": pct,
                    "line_start": no,
                    "line_end": no,
                },
            )
        edge = hi if hi is not None else edge
    if version >= 3:
        _disks(parsed, c)
    _trailer(parsed, c, job, unterminated)
    return job


def _direction(parsed: Parsed, c: _Fields, job_index: int, direction: str, version: int, no: int) -> dict | None:
    us = 1e3
    io = c.num("io KiB", units.KiB)
    row = {
        "job_index": job_index,
        "direction": direction,
        "io_bytes": io,
        "bw_bytes_per_s": c.num("bw KiB/s", units.KiB),
        "iops": c.num("iops"),
    }
    runtime_ms = c.num("runtime ms")
    row.update(runtime_ns=units.time_to_ns(runtime_ms, "ms"), total_ios=None, short_ios=None, dropped_ios=None)
    lat = {}
    for kind in ("slat", "clat"):
        lat[kind] = [c.num(f"{kind} {s} usec", us) for s in ("min", "max", "mean", "stdev")]
    percentiles = []
    for _ in range(20):
        cell = c.take()[0]
        m = _PCT_CELL.match(cell.strip())
        if not m:
            raise c.bad("a percentile cell 'P%=usec'", cell)
        percentiles.append((float(m.group(1)), float(m.group(2)) * us))
    lat["lat"] = [c.num(f"lat {s} usec", us) for s in ("min", "max", "mean", "stdev")]
    bw = [c.num("bw min"), c.num("bw max"), c.num("bw agg", percent=True), c.num("bw mean"), c.num("bw stdev")]
    bw_samples = c.int("bw samples") if version == 5 else None
    iops = [c.num(f"iops {s}") for s in ("min", "max", "mean", "stdev")] if version == 5 else [None] * 4
    iops_samples = c.int("iops samples") if version == 5 else None
    if not (io or runtime_ms):
        return None
    for kind, values in lat.items():
        empty = not any(values)  # fio prints 0;0;0.000000;0.000000 when there were no samples
        for col, value in zip(("min", "max", "mean", "stdev"), values, strict=True):
            row[f"{kind}_{col}_ns"] = None if empty else value
        row[f"{kind}_samples"] = None
    # per-sample bandwidth is in kb_base units; terse does not record kb_base, 1024 is the default
    measured = bw_samples != 0 and (bw_samples is not None or any(bw[i] for i in (0, 1, 3, 4)))
    for col, value in zip(("min", "max", "mean", "stdev"), (bw[0], bw[1], bw[3], bw[4]), strict=True):
        row[f"bw_{col}_bytes_per_s"] = value * units.KiB if measured else None
    row["bw_agg_pct"] = bw[2] if measured else None
    row["bw_samples"] = bw_samples
    for col, iops_value in zip(("min", "max", "mean", "stdev"), iops, strict=True):
        row[f"iops_{col}"] = iops_value if iops_samples else None
    row.update(iops_samples=iops_samples, exact=True, line_start=no, line_end=no)
    parsed.add("fio_results", row)
    if lat["clat"][1] or lat["lat"][1]:  # percentiles only describe directions with latency samples
        for pct, value in percentiles:
            if pct:  # "0%=0" cells are unused slots
                # clat unless the job set lat_percentiles=1, which terse does not record
                parsed.add(
                    "fio_percentiles",
                    {
                        "job_index": job_index,
                        "direction": direction,
                        "kind": "clat",
                        "percentile": pct,
                        "latency_ns": value,
                        "line_start": no,
                        "line_end": no,
                    },
                )
    return row


def _is_int(token: str) -> bool:
    return token.strip().isdigit()


def _disks(parsed: Parsed, c: _Fields) -> None:
    """name;r_ios;w_ios;r_merge;w_merge;r_ticks;w_ticks;in_queue;util% [;slaves;8 aggregates]."""
    ms = 1e6
    while c.i + 1 < len(c.f) and not _is_int(c.f[c.i]) and _is_int(c.f[c.i + 1]):
        name = c.take()[0]
        row = {
            "disk": name,
            "read_ios": c.int("read ios"),
            "write_ios": c.int("write ios"),
            "read_sectors": None,
            "write_sectors": None,
            "read_merges": c.int("read merges"),
            "write_merges": c.int("write merges"),
            "read_ticks_ns": c.int("read ticks") * ms,
            "write_ticks_ns": c.int("write ticks") * ms,
            "in_queue_ns": c.int("in_queue") * ms,
            "util_pct": c.num("util", percent=True),
            "has_slaves": False,
        }
        aggr = dict.fromkeys(
            (
                "aggr_read_ios",
                "aggr_write_ios",
                "aggr_read_sectors",
                "aggr_write_sectors",
                "aggr_read_merges",
                "aggr_write_merges",
                "aggr_read_ticks_ns",
                "aggr_write_ticks_ns",
                "aggr_in_queue_ns",
                "aggr_util_pct",
            )
        )
        if c.i < len(c.f) and c.f[c.i].strip() == "slaves":
            c.take()
            row["has_slaves"] = True
            aggr.update(
                aggr_read_ios=c.int("aggr read ios"),
                aggr_write_ios=c.int("aggr write ios"),
                aggr_read_merges=c.int("aggr read merges"),
                aggr_write_merges=c.int("aggr write merges"),
                aggr_read_ticks_ns=c.int("aggr read ticks") * ms,
                aggr_write_ticks_ns=c.int("aggr write ticks") * ms,
                aggr_in_queue_ns=c.int("aggr in_queue") * ms,
                aggr_util_pct=c.num("aggr util", percent=True),
            )
        row.update(aggr, line_start=c.line, line_end=c.line)
        if not any(r["disk"] == name for r in parsed.rows("fio_disk_stats")):  # repeated on every job line
            parsed.add("fio_disk_stats", row)


def _trailer(parsed: Parsed, c: _Fields, job: dict, unterminated: bool) -> None:
    """Optional ``;total_err;first_error`` (continue_on_error) and ``;description`` (may hold ';')."""
    rest = c.f[c.i :]
    # fio writes each terse line whole: only a last line without its newline can stop inside these fields
    # (on a complete line a trailing ';' belongs to the description, which may hold any text)
    if unterminated and rest and (rest[-1] == "" or rest == [rest[0]] and _is_int(rest[0])):
        raise ParseError(
            "terse line ends in the middle of its trailing fields",
            line=c.line,
            kind="truncated",
            expected=";total_err;first_error and/or ;description",
        )
    if len(rest) >= 2 and _is_int(rest[0]) and re.fullmatch(r"\s*-?\d+\s*", rest[1]):
        total_err, first_error = int(rest[0]), int(rest[1])
        rest = rest[2:]
        if total_err:
            parsed.warnings.append(
                f"line {c.line}: job {job['jobname']!r} had {total_err} I/O errors "
                f"(continue_on_error), first error {first_error}"
            )
    if rest and unterminated:
        raise ParseError(
            "the last line has no newline and ends in free text: a description or a line cut short",
            line=c.line,
            kind="truncated",
            expected="a complete line ending in a newline",
        )
    if rest:
        job["options_json"] = _json.dumps({"description": ";".join(rest)})

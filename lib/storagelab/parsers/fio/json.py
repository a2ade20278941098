"""fio ``--output-format=json`` / ``json+`` output -> the fio tables (docs/formats/log-formats.md B.1-B.8).

Tolerates what fio really prints: lines before the first ``{`` line (``note:`` lines, errors, a
normal-text part), several documents (``--status-interval``: the last is final; separate runs in a
terminal transcript, a shell prompt and another time between them: the last of each run), bare ``nan``/``inf`` values,
duplicate ``"0.00"`` percentile keys (fio <= 3.3), and the 2.x layout (latencies in µs under
``slat``/``clat``/``lat``; ``io_bytes`` in KiB before fio 2.21). Rows carry the line span of
their job object (or document) in the raw file.

This is the general path, the reference for every file; a file that is one fio JSON document and
nothing else takes the fast path first (``fastjson.py``), which gives exactly these rows or declines.
"""

from __future__ import annotations

import json as _json
import re
from collections.abc import Sequence
from itertools import repeat
from typing import Any

from ... import units
from ..base import SHELL_PROMPT, Parsed, ParseError, lines_of
from .command import last_command
from .schema import TABLES

TOOL = "fio"
DIRECTIONS = ("read", "write", "trim", "mixed", "sync")
_LAT_KINDS = ("slat", "clat", "lat")
_LAT_FAMILIES = (("latency_ns", 1.0), ("latency_us", 1e3), ("latency_ms", 1e6))
_DEPTHS = (("iodepth_level", "depth"), ("iodepth_submit", "submit"), ("iodepth_complete", "complete"))

# One pass over a document: strings (kept as they are), bare nan/inf (fio's %f), brackets, newlines.
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|(?<![\w.])(-?)(nan|inf)\b|[{}\[\]]|\n', re.S)
_VERSION = re.compile(r"fio-(\d+)\.(\d+)(?:\.(\d+))?")


def parse_json(text: str) -> Parsed:
    """Parse every JSON document of a fio output file (other parts are skipped)."""
    if not text.strip():
        raise ParseError("empty input", line=1, kind="empty", expected="fio JSON output")
    # a document starts on a line whose first character (after a live status line ending in '\r', if any,
    # and blanks) is '{', followed by nothing or by its first key: fio's own layout, json.dumps(indent=N)
    # and a document compacted onto one line alike
    lines = lines_of(text)
    starts = [i for i, ln in enumerate(lines) if "{" in ln and _opens_document(ln)]
    if not starts:
        raise ParseError(
            "no JSON document found", line=1, expected="a line starting with '{' that opens fio's JSON output"
        )
    parsed = Parsed(tool=TOOL, format="fio-json")
    docs = []
    crlf = "\r\n" in text  # lines_of dropped the \r of each CRLF: then offsets from the text itself
    offsets = [0] + [m.end() for m in re.finditer("\n", text)] if crlf else None
    pos = line_at = offset_at = 0
    for start in starts:
        if crlf:
            offset_at = offsets[start]
        else:  # line i starts after the lengths of lines 0..i-1 plus their i newlines
            offset_at += sum(map(len, lines[line_at:start])) + start - line_at
            line_at = start
        line = lines[start]
        brace = offset_at + line.index("{", line.rfind("\r") + 1)
        if brace < pos:
            continue  # a '{' line inside the previous document
        doc = _Document(text, brace, start + 1, parsed.warnings)
        before = text[pos:brace].split("\n")  # the lines since the previous document (its last: up to the brace)
        # a shell prompt between two documents of different times (a terminal transcript: `cat out-0`, `cat
        # out-1`) starts another fio run, whose last document is final too; --status-interval prints its documents
        # back to back, and the same report shown twice has one time
        doc.new_run = (
            bool(docs) and _report_time(doc) != _report_time(docs[-1]) and any(SHELL_PROMPT.match(ln) for ln in before)
        )
        typed = last_command(before, start + 2 - len(before))  # the fio command typed before it, if shown
        if typed is not None:
            command, lo, hi = typed
            parsed.add("fio_commands", {"doc_index": len(docs), "command": command, "line_start": lo, "line_end": hi})
        pos = doc.end_offset
        docs.append(doc)
    job_index = 0
    for doc_index, doc in enumerate(docs):
        is_final = doc_index == len(docs) - 1 or docs[doc_index + 1].new_run
        job_index = _add_document(parsed, doc, doc_index, is_final, job_index)
    parsed.tool_version = docs[-1].version_string
    if parsed.rows("fio_latency_bins"):
        parsed.format = "fio-json+"
    return parsed


def _report_time(doc: _Document):
    """When fio wrote the report (timestamp_ms, else timestamp): None when it does not say."""
    return doc.obj.get("timestamp_ms", doc.obj.get("timestamp"))


def _opens_document(line: str) -> bool:
    rest = line.rsplit("\r", 1)[-1].lstrip(" \t")
    return rest[:1] == "{" and rest[1:].lstrip(" \t")[:1] in ("", '"')


def _refuse_past_64_bits(obj: Any, text: str, offset: int, first_line: int) -> None:
    """A ParseError on the line of the first integer no 64-bit column holds (every quantity is stored as
    BIGINT or DOUBLE, and a DOUBLE would keep only its first 16 digits)."""
    found = _past_64_bits(obj, None)
    if found is None:
        return
    key, value = found
    digits = str(value)
    at = text.find(digits, offset)
    shown = digits if len(digits) <= 30 else f"{digits[:12]}... ({len(digits)} digits)"
    raise ParseError(
        f"field {key!r}: {shown} is out of range",
        line=first_line + text.count("\n", offset, max(at, offset)),
        kind="invalid",
        expected="an integer of at most 64 bits",
    )


def _past_64_bits(value: Any, key: str | None) -> tuple[str | None, int] | None:
    """(key, value) of the first integer inside value whose magnitude needs more than 63 bits, else None."""
    t = type(value)
    if t is int:
        return (key, value) if value.bit_length() > 63 else None
    if t is dict:
        for k, v in value.items():
            if type(v) is not float and type(v) is not str:
                found = _past_64_bits(v, k)
                if found is not None:
                    return found
    elif t is list:
        for v in value:
            found = _past_64_bits(v, key)
            if found is not None:
                return found
    return None


class _Document:
    """One JSON document: decoded object plus the raw line spans of its job and disk objects."""

    def __init__(self, text: str, offset: int, first_line: int, warnings: list[str]):
        self._by_key = None
        self.line_start = first_line
        self.duplicates: set[str] = set()
        self.nonfinite = 0
        decoder = _json.JSONDecoder(object_pairs_hook=self._pairs, parse_constant=self._constant, strict=False)
        self._tokens(decoder, text, offset, first_line)
        _refuse_past_64_bits(self.obj, text, offset, first_line)
        if not isinstance(self.obj, dict) or not isinstance(self.obj.get("jobs"), list):
            raise ParseError(
                'JSON document has no "jobs" array',
                line=first_line,
                kind="invalid",
                expected='a fio JSON report with "fio version" and "jobs"',
            )
        if self.nonfinite:
            warnings.append(f"line {first_line}: {self.nonfinite} nan/inf value(s) stored as NULL")
        if self.duplicates:
            warnings.append(
                f"line {first_line}: duplicate JSON keys kept first value: " + ", ".join(sorted(self.duplicates))
            )
        self._versions(warnings)

    def _versions(self, warnings: list[str]) -> None:
        first_line = self.line_start
        version = self.obj.get("fio version")
        self.version_string = version if isinstance(version, str) else None
        m = _VERSION.search(self.version_string or "")
        self.version = tuple(int(g) for g in m.groups() if g is not None) if m else None
        if self.version is None:
            warnings.append(f'line {first_line}: no "fio version"; io_bytes units inferred from the keys present')

    def _tokens(self, decoder: _json.JSONDecoder, text: str, offset: int, first_line: int) -> None:
        """One regex pass over the document: line spans, bare nan/inf made JSON, then decoded."""
        pieces, spans, stack = [], [], []
        line, last, end = first_line, offset, None
        for m in _TOKENS.finditer(text, offset):
            tok = m.group(0)
            if tok == "\n":
                line += 1
            elif tok[0] == '"':
                line += tok.count("\n")
            elif m.group(2):
                pieces += [text[last : m.start()], "NaN" if m.group(2) == "nan" else m.group(1) + "Infinity"]
                last = m.end()
            elif tok in "{[":
                stack.append((tok, line))
            else:
                if not stack or {"}": "{", "]": "["}[tok] != stack[-1][0]:
                    raise ParseError(
                        f"unbalanced '{tok}' in JSON document", line=line, kind="invalid", expected="well-formed JSON"
                    )
                opener, opened_at = stack.pop()
                if opener == "{" and len(stack) == 2 and stack[-1][0] == "[":
                    spans.append((opened_at, line))
                if not stack:
                    end = m.end()
                    break
        if end is None:
            raise ParseError(
                "JSON document is cut short (unclosed '{')",
                line=line,
                kind="truncated",
                expected=f"the '}}' closing the document opened on line {first_line}",
            )
        pieces.append(text[last:end])
        self.end_offset, self.line_end, self.spans = end, line, spans
        try:
            self.obj = decoder.decode("".join(pieces))
        except _json.JSONDecodeError as e:
            raise ParseError(
                f"invalid JSON: {e.msg}", line=first_line + e.lineno - 1, kind="invalid", expected="fio's JSON syntax"
            ) from None
        except RecursionError:
            raise ParseError("JSON nested too deeply", line=first_line, kind="invalid") from None

    def _pairs(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) == len(pairs):
            return obj
        obj = {}
        for key, value in pairs:
            if key in obj:
                if key != "0.00":  # fio <= 3.3 pads percentile lists with "0.00": 0
                    self.duplicates.add(key)
                continue
            obj[key] = value
        return obj

    def _constant(self, name: str) -> None:
        self.nonfinite += 1
        return None

    def span(self, key: str, i: int) -> tuple[int, int]:
        """Lines of object i of the top-level array ``key`` ("jobs", "disk_util"), else the document's.

        ``spans`` holds the objects of all top-level arrays in file order, which is the decoded dict's
        order (keys may come in any order: json.dumps(sort_keys=True) puts "disk_util" before "jobs")."""
        by_key = self._by_key
        if by_key is None:
            by_key, k = {}, 0
            for name, value in self.obj.items():
                if type(value) is list:
                    n = sum(1 for x in value if type(x) is dict)
                    by_key[name], k = self.spans[k : k + n], k + n
            self._by_key = by_key
        spans = by_key.get(key, ())
        return spans[i] if i < len(spans) else (self.line_start, self.line_end)


_NUMERIC = frozenset((int, float, type(None)))  # bool is not a number here (type(True) is bool)


def _num(obj: dict, key: str, where: int, scale: float = 1.0) -> float | None:
    """A numeric field (None when missing or nan); anything else is a ParseError."""
    return _value(obj.get(key), key, where, scale)


def _value(value: Any, key: str, where: int, scale: float = 1.0) -> float | None:
    """The value of field ``key`` as a number times ``scale`` (see _num)."""
    if type(value) is int or type(value) is float:
        return value * scale
    if value is None:
        return None
    raise ParseError(f"field {key!r} is not a number: {value!r}", line=where, kind="invalid", expected="a number")


def _int(obj: dict, key: str, where: int) -> int | None:
    value = obj.get(key)
    if type(value) is int:
        return value
    value = _value(value, key, where)
    return None if value is None else int(value)


def _nums(obj: dict, keys: tuple[str, ...], where: int) -> list:
    """The values of ``keys`` (None where missing), checked in one pass to be numbers or None."""
    values = [obj.get(k) for k in keys]
    if not _NUMERIC.issuperset(map(type, values)):
        for k, v in zip(keys, values):
            _value(v, k, where)  # raises for the first that is not a number
    return values


def _check_numbers(d: dict, where: int) -> list:
    """The values of a dict of numbers (iodepths, percentiles, buckets), checked in one pass."""
    values = list(d.values())
    if not _NUMERIC.issuperset(map(type, values)):
        for k, v in d.items():
            _value(v, k, where)
    return values


def _dict(obj: dict, key: str, where: int) -> dict:
    value = obj.get(key)
    if value is None:
        return {}
    if type(value) is not dict:
        raise ParseError(f"field {key!r} is not an object", line=where, kind="invalid", expected="a JSON object")
    return value


def _io_in_kib(doc: _Document, ddir: dict) -> bool:
    """io_bytes held KiB before fio 2.21 (docs/formats/log-formats.md B.7); by version, else by the keys present."""
    if doc.version is not None:
        return doc.version < (2, 21)
    return "io_kbytes" not in ddir and "clat_ns" not in ddir


# The tables this module fills hold tuples (base.Tuples) in the column order of their schema (fio/schema.py):
# the row builders below append values in that order.
JOB_COLUMNS = TABLES["fio_jobs"].row_columns
RESULT_COLUMNS = TABLES["fio_results"].row_columns
PERCENTILE_COLUMNS = TABLES["fio_percentiles"].row_columns
BIN_COLUMNS = TABLES["fio_latency_bins"].row_columns
BUCKET_COLUMNS = TABLES["fio_latency_buckets"].row_columns
IODEPTH_COLUMNS = TABLES["fio_iodepths"].row_columns


class _Out:
    """The row lists of one document's tables (Tuples), fetched once."""

    def __init__(self, parsed: Parsed):
        self.parsed = parsed
        self.jobs = parsed.tuples("fio_jobs", JOB_COLUMNS)
        self.results = parsed.tuples("fio_results", RESULT_COLUMNS)
        self.percentiles = parsed.tuples("fio_percentiles", PERCENTILE_COLUMNS)
        self.buckets = parsed.tuples("fio_latency_buckets", BUCKET_COLUMNS)
        self.iodepths = parsed.tuples("fio_iodepths", IODEPTH_COLUMNS)
        self._bins = None
        self.unknown_latency: set[str] = set()

    @property
    def bins(self) -> list[tuple]:
        if self._bins is None:
            self._bins = self.parsed.tuples("fio_latency_bins", BIN_COLUMNS)
        return self._bins


def _add_document(parsed: Parsed, doc: _Document, doc_index: int, is_final: bool, job_index: int) -> int:
    top = doc.obj
    where = doc.line_start
    out = _Out(parsed)
    global_opts = {k: str(v) for k, v in _dict(top, "global options", where).items()}
    report_time = top.get("time") if isinstance(top.get("time"), str) else None
    report_epoch_s = _int(top, "timestamp", where)
    jobs = top["jobs"]
    group_sizes: dict[Any, int] = {}
    for job in jobs:
        if type(job) is dict:
            group_sizes[job.get("groupid")] = group_sizes.get(job.get("groupid"), 0) + 1
    group_results: list[tuple[int, str, dict, bool]] = []  # (groupid, direction, row, io in KiB)
    for i, job in enumerate(jobs):
        lo, hi = doc.span("jobs", i)
        if type(job) is not dict:
            raise ParseError("job entry is not an object", line=lo, kind="invalid", expected="a job object")
        if not isinstance(job.get("jobname"), str) or (groupid := _int(job, "groupid", lo)) is None:
            raise ParseError(
                "job object without jobname/groupid", line=lo, kind="invalid", expected='"jobname" and "groupid"'
            )
        options = {**global_opts, **{k: str(v) for k, v in _dict(job, "job options", lo).items()}}
        kb_base = _kb_base(options, lo, parsed.warnings)
        numjobs = _option_int(options, ("numjobs",), kb_base, lo, parsed.warnings)
        usr, sys_, error, ctx, majf, minf = _nums(job, ("usr_cpu", "sys_cpu", "error", "ctx", "majf", "minf"), lo)
        out.jobs.append(
            (
                job_index,
                doc_index,
                is_final,
                job["jobname"],
                groupid,
                _jobs_in_record(group_sizes[job.get("groupid")], numjobs),
                None if error is None else int(error),
                None,
                report_time,
                report_epoch_s,
                options.get("rw", options.get("readwrite")),
                _block_size(options, kb_base, lo, parsed.warnings),
                options.get("ioengine"),
                _option_int(options, ("iodepth",), kb_base, lo, parsed.warnings),
                numjobs,
                _json.dumps(options) if options else None,
                None,  # layout_files, layout_bytes: text output only
                None,
                None if usr is None else usr * 1.0,
                None if sys_ is None else sys_ * 1.0,
                None if ctx is None else int(ctx),
                None if majf is None else int(majf),
                None if minf is None else int(minf),
                lo,
                hi,
            )
        )
        for direction in DIRECTIONS:
            ddir = _dict(job, direction, lo)
            if not ddir:
                continue
            row = _add_direction(out, doc, job_index, direction, ddir, kb_base, lo, hi)
            if row is not None and direction != "sync":
                group_results.append((groupid, direction, row, _io_in_kib(doc, ddir)))
        _add_buckets(out, job, job_index, lo, hi)
        for key, kind in _DEPTHS:
            depths = _dict(job, key, lo)
            if depths:
                pcts = _scaled(_check_numbers(depths, lo), 1.0)
                out.iodepths.extend(zip(repeat(job_index), repeat(kind), depths, pcts, repeat(lo), repeat(hi)))
        job_index += 1
    if out.unknown_latency:
        parsed.warnings.append(
            f"line {where}: latency keys not understood, not stored: " + ", ".join(sorted(out.unknown_latency))
        )
    add_derived_groups(parsed, doc_index, group_results, doc.line_start, doc.line_end)
    if is_final:
        disks = top.get("disk_util") or []
        if not isinstance(disks, list):
            raise ParseError("disk_util is not an array", line=where, kind="invalid", expected="an array")
        for i, disk in enumerate(disks):
            _add_disk(parsed, disk, doc.span("disk_util", i))
    for name in ("fio_jobs", "fio_results", "fio_percentiles", "fio_latency_buckets", "fio_iodepths"):
        if not parsed.tables[name]:
            del parsed.tables[name]
    return job_index


def _jobs_in_record(objects_in_group: int, numjobs: int | None) -> int | None:
    """Threads summed into one JSON job object. JSON does not say whether group_reporting was on
    (the flag is not listed in "job options"): several objects in a group mean one thread each;
    a lone object with numjobs > 1 is a group report of unknown size (None)."""
    if objects_in_group > 1 or (numjobs or 1) == 1:
        return 1
    return None


def _kb_base(options: dict[str, str], where: int, warnings: list[str]) -> int:
    value = options.get("kb_base", "1024").strip()
    if value in ("1000", "1024"):
        return int(value)
    warnings.append(f"line {where}: kb_base={value!r} not understood, assuming 1024")
    return 1024


def _option_int(
    options: dict[str, str], names: tuple[str, ...], kb_base: int, where: int, warnings: list[str]
) -> int | None:
    for name in names:
        if name in options:
            try:
                return units.fio_option_bytes(options[name], kb_base)
            except units.UnitError:
                warnings.append(f"line {where}: option {name}={options[name]!r} not understood")
                return None
    return None


def _block_size(options: dict[str, str], kb_base: int, where: int, warnings: list[str]) -> int | None:
    """Largest size in bs= (``4k``, ``1m,4k`` per direction) or a bs range (``4k-16k``, ``4k:16k``)."""
    for name in ("bs", "blocksize", "bsrange", "blocksize_range"):
        if name in options:
            try:
                sizes = [units.fio_option_bytes(t, kb_base) for t in re.split(r"[,:-]", options[name]) if t.strip()]
            except units.UnitError:
                warnings.append(f"line {where}: option {name}={options[name]!r} not understood")
                return None
            return max(sizes) if sizes else None
    return None


_DIR_KEYS = (
    "total_ios",
    "io_bytes",
    "bw_bytes",
    "bw",
    "iops",
    "runtime",
    "short_ios",
    "drop_ios",
    "bw_samples",
    "bw_min",
    "bw_max",
    "bw_mean",
    "bw_dev",
    "bw_agg",
    "iops_samples",
    "iops_min",
    "iops_max",
    "iops_mean",
    "iops_stddev",
)
_LAT_KEYS = ("N", "min", "max", "mean", "stddev")
# the latency objects of a direction this parser reads; any other key naming a latency (fio's per-priority
# clat_high_prio/clat_low_prio, "prios", a future one) is reported in a warning, not guessed at
_KNOWN_LATENCY = frozenset(f"{kind}{suffix}" for kind in _LAT_KINDS for suffix in ("", "_ns"))
_NO_LATENCY = (None,) * 5


def _timed_syncs(ddir: dict) -> bool:
    """True for a sync section whose latency object counts calls: fio 3.x JSON gives fdatasync=N runs
    ``"sync": {"total_ios": 0, "lat_ns": {"N": 2047, ...}}`` (fsync=N counts them in total_ios too)."""
    lat = ddir.get("lat_ns")
    return isinstance(lat, dict) and isinstance(lat.get("N"), int | float) and lat["N"] > 0


def _add_direction(
    out: _Out, doc: _Document, job_index: int, direction: str, ddir: dict, kb_base: int, lo: int, hi: int
) -> dict | None:
    """One fio_results row (plus the direction's percentiles and JSON+ bins); returns the values
    add_derived_groups needs, or None when the direction did no I/O."""
    (
        total_ios,
        io,
        bw,
        bw_kib,
        iops,
        runtime,
        short_ios,
        drop_ios,
        bw_n,
        bw_min,
        bw_max,
        bw_mean,
        bw_dev,
        bw_agg,
        iops_n,
        iops_min,
        iops_max,
        iops_mean,
        iops_dev,
    ) = _nums(ddir, _DIR_KEYS, lo)
    if total_ios is not None:
        total_ios = int(total_ios)
    if io is not None:
        io *= 1.0
    if not (total_ios or io) and not (direction == "sync" and _timed_syncs(ddir)):
        return None  # a direction without I/O; a sync section counts its fdatasync calls in lat_ns N only (total_ios 0)
    if io is not None and _io_in_kib(doc, ddir):
        io *= units.KiB
    bw = bandwidth(out, job_index, direction, bw, bw_kib, lo)
    for key in ddir:
        if "lat" in key and key not in _KNOWN_LATENCY or key == "prios":
            out.unknown_latency.add(key)
    runtime_ns = None if runtime is None else units.time_to_ns(runtime, "ms")
    row = [
        job_index,
        direction,
        io,
        bw,
        None if iops is None else iops * 1.0,
        runtime_ns,
        total_ios,
        None if short_ios is None else int(short_ios),
        None if drop_ios is None else int(drop_ios),
    ]
    for kind in _LAT_KINDS:
        if f"{kind}_ns" in ddir:
            obj, scale = _dict(ddir, f"{kind}_ns", lo), 1.0
        elif kind in ddir:
            obj, scale = _dict(ddir, kind, lo), 1e3
        else:
            row += _NO_LATENCY
            continue
        samples, lmin, lmax, lmean, lsd = _nums(obj, _LAT_KEYS, lo)
        if samples is not None:
            samples = int(samples)
        if samples == 0 or (samples is None and not (lmin or lmax or lmean)):
            row += (None, None, None, None, samples)
        else:
            row += (
                None if lmin is None else lmin * scale,
                None if lmax is None else lmax * scale,
                None if lmean is None else lmean * scale,
                None if lsd is None else lsd * scale,
                samples,
            )
        if "percentile" in obj:
            _add_percentiles(out, job_index, direction, kind, obj, scale, lo, hi)
        if "bins" in obj:
            _add_bins(out, job_index, direction, kind, obj, scale, lo)
    # per-sample bandwidth statistics are in units of kb_base bytes/s (KiB/s, or kB/s with kb_base=1000)
    if bw_n is not None:
        bw_n = int(bw_n)
    bw_agg = agg_pct(out, job_index, direction, bw_agg, bw_mean, lo)
    if bw_n != 0:
        row += (
            None if bw_min is None else bw_min * kb_base,
            None if bw_max is None else bw_max * kb_base,
            None if bw_mean is None else bw_mean * kb_base,
            None if bw_dev is None else bw_dev * kb_base,
            None if bw_agg is None else bw_agg * 1.0,
            bw_n,
        )
    else:
        row += (None, None, None, None, None, bw_n)
    if iops_n is not None:
        iops_n = int(iops_n)
    if iops_n != 0:
        row += (
            None if iops_min is None else iops_min * 1.0,
            None if iops_max is None else iops_max * 1.0,
            None if iops_mean is None else iops_mean * 1.0,
            None if iops_dev is None else iops_dev * 1.0,
            iops_n,
        )
    else:
        row += (None, None, None, None, iops_n)
    row += (True, lo, hi)
    out.results.append(tuple(row))
    return {"runtime_ns": runtime_ns, "io_bytes": io}


def bandwidth(out: _Out, job_index: int, direction: str, bw: float | None, bw_kib: float | None, lo: int):
    """Bytes/s from bw_bytes, else from bw (KiB/s)."""
    if bw is not None:
        # fio prints bw = bw_bytes / 1024 (integer division, whatever kb_base): anything else is a
        # document edited or damaged by hand; bw_bytes is kept
        if bw_kib is not None and abs(bw - bw_kib * 1024) >= 1024:
            out.parsed.warnings.append(
                f"line {lo}: job {job_index} {direction}: bw_bytes={bw:g} B/s and "
                f"bw={bw_kib:g} KiB/s disagree; bw_bytes stored"
            )
        return bw * 1.0
    return None if bw_kib is None else bw_kib * float(units.KiB)


def agg_pct(out: _Out, job_index: int, direction: str, bw_agg: float | None, bw_mean: float | None, lo: int):
    """bw_agg, the job's share of its group's bandwidth, unless it is not a percentage (then None, and a warning)."""
    if bw_agg is not None and (bw_agg > 100 or bw_agg == bw_mean and bw_agg not in (0, 100)):
        # fio caps its share of the group at 100 %; fio 2.1 wrote the mean bandwidth under "bw_agg"
        out.parsed.warnings.append(
            f"line {lo}: job {job_index} {direction}: bw_agg={bw_agg:g} is not a percentage (it equals bw_mean "
            "or passes 100: fio 2.1 wrote the mean bandwidth there); bw_agg_pct not stored"
            if bw_agg == bw_mean
            else f"line {lo}: job {job_index} {direction}: bw_agg={bw_agg:g} passes 100 %; bw_agg_pct not stored"
        )
        return None
    return bw_agg


def _add_percentiles(
    out: _Out, job_index: int, direction: str, kind: str, obj: dict, scale: float, lo: int, hi: int
) -> None:
    pdict = _dict(obj, "percentile", lo)
    if not pdict:
        return
    try:
        pcts = list(map(float, pdict))
    except ValueError:
        key = next(k for k in pdict if not _is_float(k))
        raise ParseError(
            f"percentile key {key!r} is not a number", line=lo, kind="invalid", expected='a key like "99.900000"'
        ) from None
    values = _scaled(_check_numbers(pdict, lo), scale)
    if 0.0 in pcts:  # a 0 percentile is an unused slot ("0.00" padding of fio <= 3.3)
        pcts, values = [p for p in pcts if p != 0.0], [v for p, v in zip(pcts, values) if p != 0.0]
    # the rows are made by zip, in C: a map of a few dozen keys, thousands of maps a second
    out.percentiles.extend(
        zip(repeat(job_index), repeat(direction), repeat(kind), pcts, values, repeat(lo), repeat(hi))
    )


def _scaled(values: list, scale: float) -> list:
    """Numbers (None for nan) times ``scale``, as floats; None stays None."""
    if None in values:
        return [None if v is None else v * scale for v in values]
    return list(map(scale.__mul__, values))


def _is_float(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def _add_bins(out: _Out, job_index: int, direction: str, kind: str, obj: dict, scale: float, lo: int) -> None:
    bins = _dict(obj, "bins", lo)
    if not bins:
        return
    try:
        values = list(map(scale.__mul__, map(float, bins)))
    except ValueError:
        if any(k.startswith("FIO_IO_U_PLAT") for k in bins):
            out.parsed.warnings.append(
                f"line {lo}: JSON+ bins of job {job_index} {direction} {kind} are keyed by "
                "bucket index (fio < 2.20); not stored"
            )
            return
        key = next(k for k in bins if not _is_float(k))
        raise ParseError(
            f"JSON+ bin key {key!r} is not a number", line=lo, kind="invalid", expected="a latency value"
        ) from None
    counts = _check_numbers(bins, lo)
    if 0 not in counts and _INT.issuperset(map(type, counts)):  # fio's own: whole counts, only those not 0
        out.bins.extend(zip(repeat(job_index), repeat(direction), repeat(kind), values, counts))
    else:
        out.bins.extend((job_index, direction, kind, v, c) for v, n in zip(values, counts) if n and (c := int(n)))


_INT = frozenset((int,))


def _add_buckets(out: _Out, job: dict, job_index: int, lo: int, hi: int) -> None:
    """The job's latency_ns/us/ms families, checked to be maps of numbers, as bucket rows."""
    families = []
    for key, scale in _LAT_FAMILIES:
        family = _dict(job, key, lo)
        if family:
            families.append((list(family), _check_numbers(family, lo), scale))
    bucket_rows(out.buckets, families, job_index, lo, hi)


def bucket_rows(
    rows: list, families: list[tuple[Sequence[str], list, float]], job_index: int, lo: int, hi: int
) -> None:
    """(labels, percentages, scale to ns) of latency_ns/us/ms -> bucket rows, (lo, hi] edges in ns. The edges
    depend on the labels only, which every job of a fio version repeats: they are worked out once."""
    key = tuple((tuple(labels), scale) for labels, _, scale in families)
    plan = _BUCKET_PLANS.get(key)
    if plan is None:
        plan = _bucket_plan(families, lo)
        if len(_BUCKET_PLANS) < 1024:
            _BUCKET_PLANS[key] = plan
    order, edges = plan
    pcts = [p for _, values, _ in families for p in values]
    if order is not None:
        pcts = [pcts[i] for i in order]
    rows.extend((job_index, b_lo, b_hi, pct * 1.0, lo, hi) for (b_lo, b_hi), pct in zip(edges, pcts) if pct)


_BUCKET_PLANS: dict[tuple, tuple] = {}


def _bucket_plan(families: list[tuple[Sequence[str], list, float]], where: int) -> tuple[list | None, list]:
    """(the order of the percentages, None when it is the labels' own; the (lo, hi) edges in ns in that order):
    a bucket starts where the previous one ended."""
    edge, offset = 0.0, 0
    order: list[int] = []
    out = []
    for labels, _, scale in families:
        try:  # the usual family: plain edges, in order, then at most one '>=' label last
            tail = labels[-1].startswith(">=")
            edges = list(map(float, labels[:-1] if tail else labels))
            if edges != sorted(edges):
                raise ValueError
            if tail:
                edges.append(float(labels[-1][2:]))
            at_least = [False] * len(edges)
            if tail:
                at_least[-1] = True
            order += range(offset, offset + len(labels))
        except ValueError:  # anything else: by (is '>=', edge), ties in file order
            ordered = sorted((label.startswith(">="), _edge(label, where), i) for i, label in enumerate(labels))
            order += [offset + i for _, _, i in ordered]
            edges = [e for _, e, _ in ordered]
            at_least = [a for a, _, _ in ordered]
        offset += len(labels)
        for is_at_least, label_edge in zip(at_least, edges):
            if is_at_least:
                out.append((label_edge * scale, None))
            else:
                out.append((edge, label_edge * scale))
                edge = label_edge * scale
    return (None if order == list(range(offset)) else order), out


def _edge(label: str, where: int) -> float:
    try:
        return float(label.removeprefix(">="))
    except ValueError:
        raise ParseError(
            f"latency bucket {label!r} is not a number",
            line=where,
            kind="invalid",
            expected='a bucket edge like "250" or ">=2000"',
        ) from None


def add_derived_groups(
    parsed: Parsed, doc_index: int, results: list[tuple[int, str, dict, bool]], line_start: int, line_end: int
) -> None:
    """Recompute fio's run status groups (stat.c): per group and direction, io = sum of the jobs'
    bytes, bw = io * 1000 / longest runtime (integer, as fio does), min/max of the per-job bw.
    With unified_rw_reporting=both the MIXED line aggregates the group's read/write/trim lines.
    ``results`` holds (groupid, direction, fio_results row, io given in whole KiB); rows computed
    from KiB counts (terse, fio < 2.21 JSON) are not exact, since fio itself summed bytes."""
    groups: dict[tuple[int, str], dict] = {}
    exact = True
    for groupid, direction, row, in_kib in results:
        runtime_ms = row["runtime_ns"] / 1e6 if row["runtime_ns"] else 0
        if not runtime_ms or row["io_bytes"] is None:
            continue
        exact = exact and not in_kib
        io = int(row["io_bytes"])
        bw = io * 1000 // int(runtime_ms)
        g = groups.setdefault((groupid, direction), {"io": 0, "bws": [], "runs": []})
        g["io"] += io
        g["bws"].append(bw)
        g["runs"].append(int(runtime_ms))
    rows = {}
    for (groupid, direction), g in groups.items():
        rows[(groupid, direction)] = {
            "io": g["io"],
            "bw": g["io"] * 1000 // max(g["runs"]),
            "min": min(g["bws"]),
            "max": max(g["bws"]),
            "run_min": min(g["runs"]),
            "run_max": max(g["runs"]),
        }
    for groupid in sorted({gid for gid, _ in rows}):
        parts = [rows[(groupid, d)] for d in ("read", "write", "trim") if (groupid, d) in rows]
        if (groupid, "mixed") in rows and parts:  # unified_rw_reporting=both
            rows[(groupid, "mixed")] = {
                "io": sum(p["io"] for p in parts),
                "bw": sum(p["bw"] for p in parts),
                "min": min(p["min"] for p in parts),
                "max": max(p["max"] for p in parts),
                "run_min": min(p["run_min"] for p in parts),
                "run_max": max(p["run_max"] for p in parts),
            }
    for (groupid, direction), g in sorted(rows.items(), key=lambda kv: (kv[0][0], DIRECTIONS.index(kv[0][1]))):
        parsed.add(
            "fio_groups",
            {
                "doc_index": doc_index,
                "groupid": groupid,
                "direction": direction,
                "bw_bytes_per_s": float(g["bw"]),
                "bw_min_bytes_per_s": float(g["min"]),
                "bw_max_bytes_per_s": float(g["max"]),
                "io_bytes": float(g["io"]),
                "run_min_ns": units.time_to_ns(g["run_min"], "ms"),
                "run_max_ns": units.time_to_ns(g["run_max"], "ms"),
                "derived": True,
                "exact": exact,
                "line_start": line_start,
                "line_end": line_end,
            },
        )


def _add_disk(parsed: Parsed, disk: Any, span: tuple[int, int]) -> None:
    lo, hi = span
    if not isinstance(disk, dict) or not isinstance(disk.get("name"), str):
        raise ParseError("disk_util entry without a name", line=lo, kind="invalid", expected='"name"')
    ms = 1e6
    slaves = any(k.startswith("aggr_") for k in disk)
    row = {
        "disk": disk["name"],
        "read_ios": _int(disk, "read_ios", lo),
        "write_ios": _int(disk, "write_ios", lo),
        "read_sectors": _int(disk, "read_sectors", lo),
        "write_sectors": _int(disk, "write_sectors", lo),
        "read_merges": _int(disk, "read_merges", lo),
        "write_merges": _int(disk, "write_merges", lo),
        "read_ticks_ns": _num(disk, "read_ticks", lo, ms),
        "write_ticks_ns": _num(disk, "write_ticks", lo, ms),
        "in_queue_ns": _num(disk, "in_queue", lo, ms),
        "util_pct": _num(disk, "util", lo),
        "has_slaves": slaves,
    }
    for col, keys, scale in (
        ("aggr_read_ios", ("aggr_read_ios",), None),
        ("aggr_write_ios", ("aggr_write_ios",), None),
        ("aggr_read_sectors", ("aggr_read_sectors",), None),
        ("aggr_write_sectors", ("aggr_write_sectors",), None),
        ("aggr_read_merges", ("aggr_read_merges",), None),
        ("aggr_write_merges", ("aggr_write_merge", "aggr_write_merges"), None),  # fio spells it singular
        ("aggr_read_ticks_ns", ("aggr_read_ticks",), ms),
        ("aggr_write_ticks_ns", ("aggr_write_ticks",), ms),
        ("aggr_in_queue_ns", ("aggr_in_queue",), ms),
        ("aggr_util_pct", ("aggr_util",), 1.0),
    ):
        key = next((k for k in keys if k in disk), keys[0])
        row[col] = _int(disk, key, lo) if scale is None else _num(disk, key, lo, scale)
    row.update(line_start=lo, line_end=hi)
    parsed.add("fio_disk_stats", row)

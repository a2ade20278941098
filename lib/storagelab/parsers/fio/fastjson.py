"""The fast path for fio JSON: a file that is one fio JSON document and nothing else, decoded in C and
typed in C, with exactly the rows, warnings and format of the general path (``json.parse_json``), or
None (decline) for anything it cannot type exactly; the general path then reads it, with its error
messages.

Three steps, each in compiled code but the last:

1. orjson decodes the bytes. It refuses bare nan/inf, a cut document and anything after the
   document (a second one, a text part): those decline. ``_decoded_as_written`` compares the
   decoded object with the bytes (duplicate keys, integers past 2^53 - 1, ``\\u`` escapes decline).
2. msgspec converts the object into the ``Struct`` types below, which name what this parser reads
   of fio's document (other keys are skipped) with the types the general path accepts: a count
   that is not an integer, a string where a number belongs, an integer past 64 bits decline.
3. The rows are built from the typed values, by the general path's own row builders where they
   take checked values (percentiles, buckets, derived groups, disks).

Line spans of the job, direction and disk objects come from the bytes: with no newline in the document
every row is line 1; in an indented layout (``{`` alone on line 1, keys indented by N spaces, the objects
of the top-level arrays opening and closing on lines of their own at 2N, a job's keys at 3N, a direction's
``"read" : {`` ending its line and its ``}`` at 3N: fio's printer and json.dumps(indent=N)) they are read
from the indentation; any other layout declines.
"""

from __future__ import annotations

import json as _json
import re
from itertools import repeat
from typing import Annotated, NamedTuple

import msgspec
import orjson
from msgspec import Meta, Struct

from ... import units
from ..base import Parsed
from . import clients
from .buckets import bucket_rows
from .directions import KNOWN_LATENCY, agg_pct, bandwidth, check_direction_keys
from .groups import add_derived_groups
from .json import TOOL
from .jsonrows import Out
from .options import block_size, jobs_in_record, option_int, option_kb_base
from .schema import DIRECTIONS, TABLES

I64 = Annotated[int, Meta(ge=-(2**63), le=2**63 - 1)]  # what a BIGINT holds; past it the general path refuses
Num = I64 | float  # a number kept as JSON wrote it (int or float), where the general path keeps it so


class _Lat(Struct):
    """slat_ns / clat_ns / lat_ns (fio 3.x, ns) or slat / clat / lat (fio 2.x, µs)."""

    N: I64 | None = None
    min: float | None = None
    max: float | None = None
    mean: float | None = None
    stddev: float | None = None
    percentile: dict[str, float] | None = None
    bins: dict[str, I64] | None = None


class _Dir(Struct):
    """One direction of a job: read, write, trim, mixed, sync."""

    total_ios: I64 | None = None
    io_bytes: float | None = None
    bw_bytes: Num | None = None
    bw: Num | None = None
    iops: float | None = None
    runtime: float | None = None
    short_ios: I64 | None = None
    drop_ios: I64 | None = None
    bw_samples: I64 | None = None
    bw_min: Num | None = None
    bw_max: Num | None = None
    bw_mean: Num | None = None
    bw_dev: Num | None = None
    bw_agg: Num | None = None
    iops_samples: I64 | None = None
    iops_min: float | None = None
    iops_max: float | None = None
    iops_mean: float | None = None
    iops_stddev: float | None = None
    slat_ns: _Lat | None = None
    clat_ns: _Lat | None = None
    lat_ns: _Lat | None = None
    slat: _Lat | None = None
    clat: _Lat | None = None
    lat: _Lat | None = None


class _Job(Struct):
    jobname: str
    groupid: I64
    error: I64 | None = None
    options: dict[str, str] | None = msgspec.field(default=None, name="job options")
    read: _Dir | None = None
    write: _Dir | None = None
    trim: _Dir | None = None
    mixed: _Dir | None = None
    sync: _Dir | None = None
    usr_cpu: float | None = None
    sys_cpu: float | None = None
    ctx: I64 | None = None
    majf: I64 | None = None
    minf: I64 | None = None
    iodepth_level: dict[str, float] | None = None
    iodepth_submit: dict[str, float] | None = None
    iodepth_complete: dict[str, float] | None = None
    latency_ns: dict[str, float] | None = None
    latency_us: dict[str, float] | None = None
    latency_ms: dict[str, float] | None = None


class _Disk(Struct):
    """One disk_util object (fio_disk_stats), as ``json._add_disk`` reads it."""

    name: str
    read_ios: I64 | None = None
    write_ios: I64 | None = None
    read_sectors: I64 | None = None
    write_sectors: I64 | None = None
    read_merges: I64 | None = None
    write_merges: I64 | None = None
    read_ticks: float | None = None
    write_ticks: float | None = None
    in_queue: float | None = None
    util: float | None = None
    aggr_read_ios: I64 | None = None
    aggr_write_ios: I64 | None = None
    aggr_read_sectors: I64 | None = None
    aggr_write_sectors: I64 | None = None
    aggr_read_merges: I64 | None = None
    aggr_write_merge: I64 | None = None  # fio spells it singular
    aggr_write_merges: I64 | None = None
    aggr_read_ticks: float | None = None
    aggr_write_ticks: float | None = None
    aggr_in_queue: float | None = None
    aggr_util: float | None = None


class _Doc(Struct):
    version: str = msgspec.field(name="fio version")
    jobs: list[_Job]
    timestamp: I64 | None = None
    global_options: dict[str, str] | None = msgspec.field(default=None, name="global options")
    disk_util: list[_Disk] | None = None


_VERSION = re.compile(r"fio-(\d+)\.(\d+)(?:\.(\d+))?")
# the keys of a direction the fast path knows: any other key naming a latency gets the general path's warning
_DIR_KEYS = frozenset(_Dir.__struct_fields__) | {"io_kbytes"}


def parse_bytes(data: bytes) -> Parsed | None:
    """``json.parse_json(decode(data))`` for a file that is one fio JSON document, else None."""
    if data[:1] != b"{" or b"\r" in data or b'"fio version"' not in data or b"(groupid=" in data:
        return None
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    array = "jobs" if type(obj) is dict and "jobs" in obj else "client_stats"  # fio --client's (clients.py)
    if type(obj) is not dict or type(obj.get(array)) is not list or not _decoded_as_written(data, obj):
        return None
    spans = _spans(data, obj, array)
    if spans is None:
        return None
    summed = clients.summed_index(obj[array]) if array == "client_stats" else None
    if summed is not None:  # fio's sum of every job: not stored
        obj = {**obj, array: obj[array][:summed]}
        spans = spans._replace(jobs=spans.jobs[:summed], blocks=None if spans.blocks is None else spans.blocks[:summed])
    found = clients.servers(obj[array], summed) if array == "client_stats" else []
    if len(found) > 1:
        return None  # the general path refuses it
    obj = obj if array == "jobs" else {**obj, "jobs": obj[array]}
    try:
        doc = msgspec.convert(obj, _Doc)
    except msgspec.ValidationError:
        return None
    m = _VERSION.search(doc.version)
    if m is None or len(doc.jobs) != len(spans.jobs) or len(doc.disk_util or ()) != len(spans.disks):
        return None
    version = tuple(int(g) for g in m.groups() if g is not None)
    parsed = Parsed(tool=TOOL, format="fio-json", tool_version=doc.version)
    if found:
        parsed.warnings.append(clients.warning(1, found, summed))
    try:
        _rows(parsed, doc, obj, version, spans)
        if doc.disk_util:
            _disks(parsed, doc.disk_util, obj["disk_util"], spans.disks)
    except ValueError:  # a ParseError, or a percentile or bin key that is not a number: the general path says why
        return None
    if parsed.rows("fio_latency_bins"):
        parsed.format = "fio-json+"
    return parsed


def _decoded_as_written(data: bytes, obj: dict) -> bool:
    """Whether orjson's ``obj`` holds every key and number of ``data`` as the general path reads them. ``obj``
    is encoded again (orjson, in C) and compared with the bytes:

    - a colon ends a key or is inside a string, and strings come back byte for byte (unless the bytes hold
      a ``\\u`` escape, which comes back as the character: declined). So the colons lost are keys orjson
      dropped, duplicates of which it kept the last where the general path keeps the first and warns;
      only fio <= 3.3's ``"0.00"`` percentile padding (never stored) is let through, when the colons lost
      are exactly the ``"0.00"`` lost.
    - an integer beyond +-(2^53 - 1) fails OPT_STRICT_INTEGER (the general path keeps those up to 64 bits exactly),
      and one past 64 bits, which orjson decodes as a float, comes back with an exponent (``1.2e+22``)
      that the bytes do not have (the general path refuses it by name)."""
    if b"\\" in data and b"\\u" in data:  # (a one-byte search first: a backslash is rare)
        return False
    try:
        again = orjson.dumps(obj, option=orjson.OPT_STRICT_INTEGER)
    except orjson.JSONEncodeError:
        return False
    if b"+" in again and again.count(b"e+") != data.count(b"e+"):
        return False
    lost = data.count(b":") - again.count(b":")
    return lost == 0 or lost == data.count(b'"0.00"') - again.count(b'"0.00"')


_FIRST_KEY_INDENT = re.compile(rb"\{\n( +)\"").match  # '{' alone on line 1, the first key indented by spaces


class Spans(NamedTuple):
    """Line spans the bytes show: of the job objects, of the disk_util objects, of each job's direction objects
    (``"read": {...}``, by direction; None for a document on one line, where every span is line 1), and the
    document's last line."""

    jobs: list[tuple[int, int]]
    disks: list[tuple[int, int]]
    blocks: list[dict[str, tuple[int, int]]] | None
    line_end: int


def _spans(data: bytes, obj: dict, array: str = "jobs") -> Spans | None:
    """The document's line spans (``Spans``), or None for a layout whose spans the bytes do not show."""
    arrays = [v for v in obj.values() if type(v) is list]
    n_objects = sum(1 for v in arrays for x in v if type(x) is dict)
    end = data.rindex(b"}")
    if data.find(b"\n", 0, end) < 0:  # one line
        spans, blocks, line_end = [(1, 1)] * n_objects, None, 1
    else:
        indent = _FIRST_KEY_INDENT(data)
        if indent is None:
            return None
        found = _indented_spans(data, indent.group(1), end)
        if found is None or len(found[0]) != n_objects:
            return None
        spans, blocks, line_end = found
    by_key, k = {}, 0  # the spans in file order, which is the decoded dict's order
    for name, value in obj.items():
        if type(value) is list:
            n = sum(1 for x in value if type(x) is dict)
            if n != len(value):
                return None  # a job or disk that is not an object: the general path names it
            by_key[name], k = (k, k + n), k + n
    first, stop = by_key.get(array, (0, 0))
    d_first, d_stop = by_key.get("disk_util", (0, 0))
    return Spans(spans[first:stop], spans[d_first:d_stop], None if blocks is None else blocks[first:stop], line_end)


_DIRECTION_NAMES = {d.encode(): d for d in DIRECTIONS}
# indent -> (an object of a top-level array opening or closing, or a direction opening; a direction closing)
_INDENTED: dict[bytes, tuple[re.Pattern, re.Pattern]] = {}


def _indented_spans(data: bytes, indent: bytes, end: int) -> tuple[list, list, int] | None:
    """The line spans of the objects whose ``{`` and ``}`` stand alone after a newline and twice ``indent`` (the
    objects of a top-level array); inside each, those of its direction objects, whose key stands three times
    ``indent`` in (``"read" : {`` ending its line), up to the first ``}`` at that indent after it (what the object
    holds is indented further); and the line of ``end``. None unless the objects' braces alternate."""
    patterns = _INDENTED.get(indent)
    if patterns is None:
        patterns = _INDENTED[indent] = (
            re.compile(rb"\n" + indent * 2 + rb"(?:([{}])|" + indent + rb'"(read|write|trim|mixed|sync)" ?: ?\{\n)'),
            re.compile(rb"\n" + indent * 3 + rb"\}"),  # (a regex finds it faster than bytes.find here)
        )
    search, closing = (p.search for p in patterns)
    spans: list[tuple[int, int]] = []
    blocks: list[dict[str, tuple[int, int]]] = []
    line, at, opened = 1, 0, None
    count = data.count
    m = search(data)
    while m is not None:
        brace = m.group(1)
        pos = m.end() - 1 if brace else m.start() + 1  # the brace, or the start of the direction's line
        line += count(b"\n", at, pos)
        at = pos
        if brace is None:
            found = closing(data, m.end())
            if opened is not None and found is not None:  # (outside the arrays' objects: not a job's direction)
                close = found.start()
                last = line + count(b"\n", pos, close + 1)
                blocks[-1].setdefault(_DIRECTION_NAMES[m.group(2)], (line, last))
                at, line = close + 1, last
        elif brace == b"{":
            if opened is not None:
                return None
            opened = line
            blocks.append({})
        elif opened is None:
            return None
        else:
            spans.append((opened, line))
            opened = None
        m = search(data, at)
    if opened is not None:
        return None
    return spans, blocks, line + count(b"\n", at, end)


def _disks(parsed: Parsed, disks: list[_Disk], raw: list[dict], spans: list) -> None:
    """fio_disk_stats rows, as ``json._add_disk`` makes them."""
    rows = parsed.tuples("fio_disk_stats", DISK_COLUMNS)
    for d, keys, (lo, hi) in zip(disks, raw, spans, strict=True):
        rows.append(
            (
                d.name,
                d.read_ios,
                d.write_ios,
                d.read_sectors,
                d.write_sectors,
                d.read_merges,
                d.write_merges,
                *(None if v is None else v * 1e6 for v in (d.read_ticks, d.write_ticks, d.in_queue)),
                d.util,
                not _PLAIN_DISK_KEYS.issuperset(keys) and any(k.startswith("aggr_") for k in keys),
                d.aggr_read_ios,
                d.aggr_write_ios,
                d.aggr_read_sectors,
                d.aggr_write_sectors,
                d.aggr_read_merges,
                d.aggr_write_merge if "aggr_write_merge" in keys else d.aggr_write_merges,
                *(None if v is None else v * 1e6 for v in (d.aggr_read_ticks, d.aggr_write_ticks, d.aggr_in_queue)),
                d.aggr_util,
                lo,
                hi,
            )
        )


DISK_COLUMNS = TABLES["fio_disk_stats"].row_columns
_PLAIN_DISK_KEYS = frozenset(k for k in _Disk.__struct_fields__ if not k.startswith("aggr_"))


def _rows(parsed: Parsed, doc: _Doc, obj: dict, version: tuple, spans: Spans) -> None:
    """The rows of the document, in the general path's order (``json._add_document``)."""
    blocks = [None] * len(spans.jobs) if spans.blocks is None else spans.blocks
    out = Out(parsed)
    global_opts = doc.global_options or {}
    report_time = obj.get("time") if isinstance(obj.get("time"), str) else None
    group_sizes: dict[int, int] = {}
    for job in doc.jobs:
        group_sizes[job.groupid] = group_sizes.get(job.groupid, 0) + 1
    in_kib = version < (2, 21)
    group_results: list[tuple[int, str, dict, bool]] = []
    warnings = parsed.warnings
    for job_index, (job, raw, (lo, hi), found) in enumerate(
        zip(doc.jobs, obj["jobs"], spans.jobs, blocks, strict=True)
    ):
        options = {**global_opts, **job.options} if job.options else global_opts
        kb_base, numjobs, block_size, iodepth, options_json = _options(options, lo, warnings)
        out.jobs.append(
            (
                job_index,
                0,
                True,
                job.jobname,
                job.groupid,
                jobs_in_record(group_sizes[job.groupid], numjobs),
                job.error,
                None,
                report_time,
                doc.timestamp,
                options.get("rw", options.get("readwrite")),
                block_size,
                options.get("ioengine"),
                iodepth,
                numjobs,
                options_json,
                None,  # layout_files, layout_bytes: text output only
                None,
                job.usr_cpu,
                job.sys_cpu,
                job.ctx,
                job.majf,
                job.minf,
                lo,
                hi,
            )
        )
        check_direction_keys(raw, lo)
        for direction in DIRECTIONS:
            if not raw.get(direction):
                continue
            ddir = getattr(job, direction)
            if not _DIR_KEYS.issuperset(raw[direction]):
                out.unknown_latency.update(
                    k for k in raw[direction] if "lat" in k and k not in KNOWN_LATENCY or k == "prios"
                )
            lines = (lo, hi) if found is None else found.get(direction)  # one line: the job's
            row = _direction(out, job_index, direction, ddir, kb_base, in_kib, lo, lines)
            if row is not None and direction != "sync":
                group_results.append((job.groupid, direction, row, in_kib))
        families = [
            (tuple(f), list(f.values()), scale)
            for f, scale in ((job.latency_ns, 1.0), (job.latency_us, 1e3), (job.latency_ms, 1e6))
            if f
        ]
        bucket_rows(out.buckets, families, job_index, lo, hi)
        for depths, kind in (
            (job.iodepth_level, "depth"),
            (job.iodepth_submit, "submit"),
            (job.iodepth_complete, "complete"),
        ):
            if depths:
                out.iodepths.extend(
                    zip(repeat(job_index), repeat(kind), depths, depths.values(), repeat(lo), repeat(hi))
                )
    if out.unknown_latency:
        warnings.append("line 1: latency keys not understood, not stored: " + ", ".join(sorted(out.unknown_latency)))
    add_derived_groups(parsed, 0, group_results, 1, spans.line_end)
    for name in ("fio_jobs", "fio_results", "fio_percentiles", "fio_latency_buckets", "fio_iodepths"):
        if not parsed.tables[name]:
            del parsed.tables[name]


_OPTIONS: dict[tuple, tuple] = {}  # a job's options -> what _options makes of them, when that warned of nothing
_OPTIONS_MAX = 4096


def _options(options: dict[str, str], lo: int, warnings: list[str]) -> tuple:
    """(kb_base, numjobs, block size, iodepth, options as JSON) of a job's options, as ``json._add_document``
    reads them. Runs of a study repeat the same options: what warned of nothing is kept for the next."""
    key = tuple(options.items())
    got = _OPTIONS.get(key)
    if got is not None:
        return got
    before = len(warnings)
    kb_base = option_kb_base(options, lo, warnings)
    got = (
        kb_base,
        option_int(options, ("numjobs",), kb_base, lo, warnings),
        block_size(options, kb_base, lo, warnings),
        option_int(options, ("iodepth",), kb_base, lo, warnings),
        _json.dumps(options) if options else None,
    )
    if len(warnings) == before:
        if len(_OPTIONS) >= _OPTIONS_MAX:
            _OPTIONS.clear()
        _OPTIONS[key] = got
    return got


_NO_LATENCY = (None,) * 5
_MS = units.TIME_NS_FACTORS["ms"]


def _timed_syncs(d: _Dir) -> bool:
    """``json._timed_syncs`` on the typed section: its latency object counts fdatasync calls (fio 3.x: total_ios 0,
    lat_ns N > 0)."""
    return d.lat_ns is not None and d.lat_ns.N is not None and d.lat_ns.N > 0


def _direction(
    out: Out, job_index: int, direction: str, d: _Dir, kb_base: int, in_kib: bool, lo: int, lines: tuple | None
) -> dict | None:
    """One fio_results row (plus percentiles and JSON+ bins), as ``json._add_direction`` makes it: its rows on
    ``lines``, the direction object's (None: the bytes do not show them, and a ValueError declines the file)."""
    total_ios, io = d.total_ios, d.io_bytes
    if not (total_ios or io) and not (direction == "sync" and _timed_syncs(d)):
        return None  # as json._add_direction: a sync section counts its fdatasync calls in lat_ns N only
    if lines is None:
        raise ValueError(f"no lines for job {job_index} {direction}")
    if io is not None and in_kib:
        io *= units.KiB
    bw = bandwidth(out, job_index, direction, d.bw_bytes, d.bw, lo)
    runtime_ns = None if d.runtime is None else d.runtime * _MS  # units.time_to_ns(runtime, "ms"), runtime a float
    row = [job_index, direction, io, bw, d.iops, runtime_ns, total_ios, d.short_ios, d.drop_ios]
    for kind, ns, us in (("slat", d.slat_ns, d.slat), ("clat", d.clat_ns, d.clat), ("lat", d.lat_ns, d.lat)):
        lat, scale = (ns, 1.0) if ns is not None else (us, 1e3)
        if lat is None:
            row += _NO_LATENCY
            continue
        samples = lat.N
        if samples == 0 or (samples is None and not (lat.min or lat.max or lat.mean)):
            row += (None, None, None, None, samples)
        elif scale == 1.0:
            row += (lat.min, lat.max, lat.mean, lat.stddev, samples)
        else:
            row += (*(None if v is None else v * scale for v in (lat.min, lat.max, lat.mean, lat.stddev)), samples)
        if lat.percentile:
            _percentiles(out, job_index, direction, kind, lat.percentile, scale, *lines)
        if lat.bins:
            _bins(out, job_index, direction, kind, lat.bins, scale)
    row += _bandwidth(out, job_index, direction, d, kb_base, lo)
    if d.iops_samples != 0:
        row += (d.iops_min, d.iops_max, d.iops_mean, d.iops_stddev, d.iops_samples)
    else:
        row += (None, None, None, None, 0)
    row += (True, *lines)
    out.results.append(tuple(row))
    return {"runtime_ns": runtime_ns, "io_bytes": io, "lines": lines}


def _bandwidth(out: Out, job_index: int, direction: str, d: _Dir, kb_base: int, lo: int) -> tuple:
    """The per-sample bandwidth columns (in kb_base bytes/s in the document), with the general path's bw_agg check."""
    bw_mean = d.bw_mean
    bw_agg = agg_pct(out, job_index, direction, d.bw_agg, bw_mean, lo)
    if d.bw_samples == 0:
        return (None, None, None, None, None, 0)
    return (
        None if d.bw_min is None else d.bw_min * kb_base,
        None if d.bw_max is None else d.bw_max * kb_base,
        None if bw_mean is None else bw_mean * kb_base,
        None if d.bw_dev is None else d.bw_dev * kb_base,
        None if bw_agg is None else bw_agg * 1.0,
        d.bw_samples,
    )


def _percentiles(
    out: Out, job_index: int, direction: str, kind: str, pdict: dict, scale: float, lo: int, hi: int
) -> None:
    pcts = list(map(float, pdict))  # a key that is not a number: ValueError, the caller declines
    values = list(pdict.values()) if scale == 1.0 else list(map(scale.__mul__, pdict.values()))
    if 0.0 in pcts:  # a 0 percentile is an unused slot ("0.00" padding of fio <= 3.3)
        pcts, values = [p for p in pcts if p != 0.0], [v for p, v in zip(pcts, values, strict=True) if p != 0.0]
    out.percentiles.extend(
        zip(repeat(job_index), repeat(direction), repeat(kind), pcts, values, repeat(lo), repeat(hi))
    )


def _bins(out: Out, job_index: int, direction: str, kind: str, bins: dict, scale: float) -> None:
    values = list(map(scale.__mul__, map(float, bins)))  # bins keyed by index (fio < 2.20): ValueError, declined
    counts = list(bins.values())
    if 0 not in counts:  # fio's own: only the counts that are not 0
        out.bins.extend(zip(repeat(job_index), repeat(direction), repeat(kind), values, counts))
    else:
        out.bins.extend((job_index, direction, kind, v, c) for v, c in zip(values, counts, strict=True) if c)

"""One direction of a fio JSON job (read, write, trim, mixed, sync): its fio_results row, its
percentiles and its JSON+ latency bins."""

from __future__ import annotations

from itertools import repeat

from ... import units
from ..base import ParseError
from .jsondoc import Document
from .jsonrows import Out
from .schema import DIRECTIONS
from .values import INTS, check_numbers, is_float, nums, object_field, scaled, whole

_LAT_KINDS = ("slat", "clat", "lat")


def check_direction_keys(job: dict, lo: int) -> None:
    """A job's results under a key that is no direction (``"vead" : {...}`` holding ``io_bytes`` or ``io_kbytes``) are a
    ParseError: passed over, the direction's rows were lost and the group the parser recomputes from the jobs was
    stored without it (reliability-35 input: a group's bytes 16777216 -> 12582912, exit 0, no warning)."""
    for key, value in job.items():
        if key not in DIRECTIONS and type(value) is dict and ("io_bytes" in value or "io_kbytes" in value):
            raise ParseError(
                f"a job's results under {key!r}, no direction fio prints (a damaged name?)",
                line=lo,
                expected=", ".join(f'"{d}"' for d in DIRECTIONS),
            )


def io_in_kib(doc: Document, ddir: dict) -> bool:
    """io_bytes held KiB before fio 2.21 (docs/formats/log-formats.md B.7); by version, else by the keys present."""
    if doc.version is not None:
        return doc.version < (2, 21)
    return "io_kbytes" not in ddir and "clat_ns" not in ddir


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
KNOWN_LATENCY = frozenset(f"{kind}{suffix}" for kind in _LAT_KINDS for suffix in ("", "_ns"))
_NO_LATENCY = (None,) * 5


def _timed_syncs(ddir: dict) -> bool:
    """True for a sync section whose latency object counts calls: fio 3.x JSON gives fdatasync=N runs
    ``"sync": {"total_ios": 0, "lat_ns": {"N": 2047, ...}}`` (fsync=N counts them in total_ios too)."""
    lat = ddir.get("lat_ns")
    return isinstance(lat, dict) and isinstance(lat.get("N"), int | float) and lat["N"] > 0


def add_direction(
    out: Out, doc: Document, job_index: int, direction: str, ddir: dict, kb_base: int, lo: int, lines: tuple[int, int]
) -> dict | None:
    """One fio_results row (plus the direction's percentiles and JSON+ bins), its rows on ``lines`` (the direction
    object's, ``Document.block``) and its messages on line ``lo`` (the job's); returns the values add_derived_groups
    needs, or None when the direction did no I/O."""
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
    ) = nums(ddir, _DIR_KEYS, lo)
    total_ios = whole(total_ios, "total_ios", lo)
    if io is not None:
        io *= 1.0
    if not (total_ios or io) and not (direction == "sync" and _timed_syncs(ddir)):
        return None  # a direction without I/O; a sync section counts its fdatasync calls in lat_ns N only (total_ios 0)
    if io is not None and io_in_kib(doc, ddir):
        io *= units.KiB
    bw = bandwidth(out, job_index, direction, bw, bw_kib, lo)
    for key in ddir:
        if "lat" in key and key not in KNOWN_LATENCY or key == "prios":
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
        whole(short_ios, "short_ios", lo),
        whole(drop_ios, "drop_ios", lo),
    ]
    for kind in _LAT_KINDS:
        row += _latency(out, job_index, direction, kind, ddir, lo, lines)
    # per-sample bandwidth statistics are in units of kb_base bytes/s (KiB/s, or kB/s with kb_base=1000)
    bw_agg = agg_pct(out, job_index, direction, bw_agg, bw_mean, lo)
    row += _bandwidth_samples(bw_n, bw_min, bw_max, bw_mean, bw_dev, bw_agg, kb_base)
    row += _iops_samples(iops_n, iops_min, iops_max, iops_mean, iops_dev)
    row += (True, *lines)
    out.results.append(tuple(row))
    return {"runtime_ns": runtime_ns, "io_bytes": io, "lines": lines}


def _latency(out: Out, job_index: int, direction: str, kind: str, ddir: dict, lo: int, lines: tuple[int, int]) -> tuple:
    """The (min, max, mean, stdev, samples) of latency ``kind`` in ns (None where absent), its percentile and
    JSON+ bin rows added."""
    if f"{kind}_ns" in ddir:
        obj, scale = object_field(ddir, f"{kind}_ns", lo), 1.0
    elif kind in ddir:
        obj, scale = object_field(ddir, kind, lo), 1e3
    else:
        return _NO_LATENCY
    samples, lmin, lmax, lmean, lsd = nums(obj, _LAT_KEYS, lo)
    samples = whole(samples, "N", lo)
    if "percentile" in obj:
        _add_percentiles(out, job_index, direction, kind, obj, scale, lo, lines)
    if "bins" in obj:
        _add_bins(out, job_index, direction, kind, obj, scale, lo)
    if samples == 0 or (samples is None and not (lmin or lmax or lmean)):
        return (None, None, None, None, samples)
    return (
        None if lmin is None else lmin * scale,
        None if lmax is None else lmax * scale,
        None if lmean is None else lmean * scale,
        None if lsd is None else lsd * scale,
        samples,
    )


def _bandwidth_samples(n, bw_min, bw_max, bw_mean, bw_dev, bw_agg, kb_base: int) -> tuple:
    """(min, max, mean, stdev in bytes/s, agg %, samples) of the per-sample bandwidth (in kb_base bytes/s)."""
    if n is not None:
        n = int(n)
    if n == 0:
        return (None, None, None, None, None, n)
    return (
        None if bw_min is None else bw_min * kb_base,
        None if bw_max is None else bw_max * kb_base,
        None if bw_mean is None else bw_mean * kb_base,
        None if bw_dev is None else bw_dev * kb_base,
        None if bw_agg is None else bw_agg * 1.0,
        n,
    )


def _iops_samples(n, iops_min, iops_max, iops_mean, iops_dev) -> tuple:
    """(min, max, mean, stdev, samples) of the per-sample IOPS."""
    if n is not None:
        n = int(n)
    if n == 0:
        return (None, None, None, None, n)
    return (
        None if iops_min is None else iops_min * 1.0,
        None if iops_max is None else iops_max * 1.0,
        None if iops_mean is None else iops_mean * 1.0,
        None if iops_dev is None else iops_dev * 1.0,
        n,
    )


def bandwidth(out: Out, job_index: int, direction: str, bw: float | None, bw_kib: float | None, lo: int):
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


def agg_pct(out: Out, job_index: int, direction: str, bw_agg: float | None, bw_mean: float | None, lo: int):
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
    out: Out, job_index: int, direction: str, kind: str, obj: dict, scale: float, lo: int, lines: tuple[int, int]
) -> None:
    pdict = object_field(obj, "percentile", lo)
    if not pdict:
        return
    try:
        pcts = list(map(float, pdict))
    except ValueError:
        key = next(k for k in pdict if not is_float(k))
        raise ParseError(
            f"percentile key {key!r} is not a number", line=lo, kind="invalid", expected='a key like "99.900000"'
        ) from None
    values = scaled(check_numbers(pdict, lo), scale)
    if 0.0 in pcts:  # a 0 percentile is an unused slot ("0.00" padding of fio <= 3.3)
        pcts, values = [p for p in pcts if p != 0.0], [v for p, v in zip(pcts, values, strict=True) if p != 0.0]
    # the rows are made by zip, in C: a map of a few dozen keys, thousands of maps a second
    out.percentiles.extend(
        zip(repeat(job_index), repeat(direction), repeat(kind), pcts, values, repeat(lines[0]), repeat(lines[1]))
    )


def _add_bins(out: Out, job_index: int, direction: str, kind: str, obj: dict, scale: float, lo: int) -> None:
    bins = object_field(obj, "bins", lo)
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
        key = next(k for k in bins if not is_float(k))
        raise ParseError(
            f"JSON+ bin key {key!r} is not a number", line=lo, kind="invalid", expected="a latency value"
        ) from None
    counts = check_numbers(bins, lo)
    if 0 not in counts and INTS.issuperset(map(type, counts)):  # fio's own: whole counts, only those not 0
        out.bins.extend(zip(repeat(job_index), repeat(direction), repeat(kind), values, counts))
    else:
        try:
            out.bins.extend(
                (job_index, direction, kind, v, c) for v, n in zip(values, counts, strict=True) if n and (c := int(n))
            )
        except (OverflowError, ValueError):  # int() of inf or nan
            bad = next(n for n in counts if n != n or n in (float("inf"), float("-inf")))
            raise ParseError(
                f"JSON+ bin count {bad!r} of job {job_index} {direction} {kind} is not a whole number",
                line=lo,
                kind="invalid",
                expected="a count of I/Os",
            ) from None

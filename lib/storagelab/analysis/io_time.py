"""Which of fio's latencies is an I/O's time (notebooks 08 and 10).

fio splits each I/O's time in two: submission (``slat``: the engine's submit call, io_submit for libaio) and
completion (``clat``: from submission to completion); ``lat`` is both. Reports usually show clat percentiles,
since on a device that queues I/O the submit call returns at once and clat is the I/O's time. Where the submit
call itself does the I/O, clat is near zero and slat holds the time: btrfs on a loop device with libaio
completes a direct write inside io_submit (the h5 lab run randwrite-4k-qd1-nj1: slat mean 213,267 ns, clat mean
649 ns, lat mean 213,915 ns at 4,665 IOPS and QD 1, i.e. 214 us per I/O; its clat p99 of 4.45 us is no
latency of those writes).

Two checks, both from what every fio output prints (mean slat, clat and lat) and the run's rate:

* **submission holds the time**: the mean slat (else lat - clat) is above the mean clat. The I/O's latency is
  then lat: its percentiles where fio printed them (``lat_percentiles=1``), else its mean.
* **Little's law**, where an output gives neither slat nor lat (terse output, ``disable_slat``/``disable_lat``):
  with one I/O in flight (QD 1, one job; QD 1 also where fio's IO depths show every I/O at depth 1) each I/O takes
  at most 1 / IOPS. A clat p99 under half of that (``LITTLE_SHARE``) is contradicted by the rate: the time went
  elsewhere (submission, unmeasured). Not at higher depths: a row may be one thread of several (no group_reporting)
  and fio may keep fewer I/Os in flight than asked, so QD x jobs / IOPS only bounds the time from above; nor where
  lat is known (then lat near clat means clat is the I/O's time, and the rest of each cycle is fio's own). Runs paced
  by fio (``rate``/``rate_iops``/``thinktime`` options) leave I/Os out of flight on purpose: not checked. Where lat
  is known, the sentence still gives QD x jobs / IOPS beside it, as a check the reader can make.

``choose`` returns the figure to show and, where clat is not it, the sentence that says why.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from .design import given_options

LITTLE_SHARE = 0.5
PACING_OPTIONS = ("rate", "rate_iops", "rate_min", "rate_iops_min", "thinktime", "rate_process")


@dataclass(frozen=True)
class IoLatency:
    kind: str  # 'clat', 'lat' (its percentiles) or 'lat mean' (no lat percentiles printed)
    p50_ns: float | None
    p99_ns: float | None
    p99_9_ns: float | None
    mean_ns: float | None  # the mean of that kind
    reason: str | None = None  # why not clat (None: clat is the I/O's time, or nothing to check it against)

    @property
    def flagged(self) -> bool:
        return self.reason is not None


def _us(ns: float) -> str:
    return f"{ns / 1e3:,.3g} us" if ns < 1e6 else f"{ns / 1e6:,.3g} ms"


def little_ns(in_flight: float | None, iops: float | None) -> float | None:
    """Little's law: the mean time an I/O is in flight when ``in_flight`` are kept in flight at ``iops``."""
    return in_flight / iops * 1e9 if in_flight and iops else None


def queue(iodepth, numjobs, depth1_pct=None) -> tuple[int, int] | None:
    """(QD, jobs) fio keeps in flight: iodepth (1 where fio's IO depths show 100 % at depth 1: a synchronous engine
    ignores iodepth) and numjobs (1 where not known); None where the iodepth is not known."""
    if iodepth is None:
        return None
    qd = 1 if depth1_pct is not None and float(depth1_pct) >= 100.0 else int(iodepth)
    return qd, int(numjobs or 1)


def submission_ns(row: dict) -> float | None:
    """The mean submission latency: fio's slat mean, else lat mean - clat mean."""
    slat, clat, lat = row.get("slat_mean_ns"), row.get("clat_mean_ns"), row.get("lat_mean_ns")
    if slat is not None:
        return float(slat)
    return float(lat) - float(clat) if lat is not None and clat is not None else None


def choose(row: dict, paced: bool = False) -> IoLatency:
    """The latency figure of one run and direction. ``row``: ``slat_mean_ns``, ``clat_mean_ns``, ``lat_mean_ns``,
    ``clat_p50_ns``/``clat_p99_ns``/``clat_p99_9_ns`` and ``lat_p50_ns``/... (percentiles, None where not
    printed), ``iops``, ``iodepth``, ``numjobs``, ``depth1_pct``. ``paced``: fio paced the run (no Little check)."""
    clat = IoLatency(
        "clat", row.get("clat_p50_ns"), row.get("clat_p99_ns"), row.get("clat_p99_9_ns"), row.get("clat_mean_ns")
    )
    slat, clat_mean, lat_mean = submission_ns(row), row.get("clat_mean_ns"), row.get("lat_mean_ns")
    q = queue(row.get("iodepth"), row.get("numjobs"), row.get("depth1_pct"))
    little = None if paced or q is None else little_ns(q[0] * q[1], row.get("iops"))
    per_io = f"; QD {q[0]} x {q[1]} / {row['iops']:,.0f} IOPS = {_us(little)} per I/O" if little and q else ""
    reason = None
    if slat is not None and clat_mean is not None and slat > clat_mean:
        lat = f", lat mean {_us(lat_mean)}" if lat_mean is not None else ""
        reason = (
            f"submission holds the I/O's time (slat mean {_us(slat)} against clat mean {_us(clat_mean)}{lat}{per_io})"
        )
    elif slat is None and q == (1, 1) and little and clat.p99_ns is not None and clat.p99_ns < LITTLE_SHARE * little:
        reason = f"its clat p99 {_us(clat.p99_ns)} is under half the time each I/O took ({per_io[2:]})"
    if reason is None:
        return clat
    lat_p = (row.get("lat_p50_ns"), row.get("lat_p99_ns"), row.get("lat_p99_9_ns"))
    if any(v is not None for v in lat_p):
        return IoLatency("lat", *lat_p, lat_mean, reason + ": its latency is lat, whose percentiles fio printed")
    tail = "" if clat.p99_ns is None else f"; its clat p99 {_us(clat.p99_ns)} is not the I/O's latency"
    return IoLatency(
        "lat mean",
        None,
        None,
        None,
        lat_mean,
        reason + f": its latency is lat, mean {_us(lat_mean) if lat_mean is not None else 'not printed'}; fio "
        f"printed no lat percentiles (--lat_percentiles=1 gives them){tail}",
    )


def paced(options: dict[str, str]) -> bool:
    """fio was told to pace the run (a rate or think time): I/Os out of flight on purpose."""
    return any(options.get(k) not in (None, "", "0") for k in PACING_OPTIONS)


PCT_COLS = {50.0: "p50_ns", 99.0: "p99_ns", 99.9: "p99_9_ns"}


def _wide(percentiles: pl.DataFrame, kind: str, key: list[str]) -> pl.DataFrame:
    """One kind's percentiles 50/99/99.9 as columns ``{kind}_p50_ns`` ... per key."""
    p = percentiles.filter((pl.col("kind") == kind) & pl.col("percentile").is_in(list(PCT_COLS)))
    cols = [f"{kind}_{c}" for c in PCT_COLS.values()]
    if p.is_empty():
        return pl.DataFrame(schema={**{k: percentiles.schema[k] for k in key}, **dict.fromkeys(cols, pl.Float64)})
    wide = p.with_columns(pl.col("percentile").replace_strict({k: f"{kind}_{v}" for k, v in PCT_COLS.items()})).pivot(
        on="percentile", index=key, values="latency_ns", aggregate_function="first"
    )
    return wide.with_columns(*(pl.lit(None, pl.Float64).alias(c) for c in cols if c not in wide.columns)).select(
        *key, *cols
    )


def apply(rows: pl.DataFrame, percentiles: pl.DataFrame) -> pl.DataFrame:
    """``rows`` (one per job and direction, keyed by file_id, job_index, direction, with p50_ns/p99_ns/p99_9_ns
    and ``pct_kind`` of the clat (else lat) percentiles, the mean latencies, iops, iodepth, numjobs, depth1_pct,
    options_json and command) with each run's latency as ``choose`` gives it: where clat is not the I/O's time,
    lat's percentiles (``pct_kind`` 'lat') or none ('lat mean': only its mean was printed); ``io_time_reason``
    says why (None where clat stands)."""
    key = ["file_id", "job_index", "direction"]
    if rows.is_empty() or "slat_mean_ns" not in rows.columns:
        return rows.with_columns(pl.lit(None, pl.Utf8).alias("io_time_reason"))
    both = rows.select(key).unique()
    for kind in ("clat", "lat"):
        both = both.join(_wide(percentiles, kind, key).cast({k: rows.schema[k] for k in key}), on=key, how="left")
    joined = rows.join(both, on=key, how="left", maintain_order="left")
    chosen = [choose(r, paced(given_options(r))) for r in joined.iter_rows(named=True)]
    swap = pl.Series([c.flagged for c in chosen], dtype=pl.Boolean)
    return rows.with_columns(
        *(
            pl.when(swap)
            .then(pl.Series([getattr(c, col) for c in chosen], dtype=pl.Float64))
            .otherwise(pl.col(col))
            .alias(col)
            for col in PCT_COLS.values()
        ),
        pct_kind=pl.when(swap).then(pl.Series([c.kind for c in chosen], dtype=pl.Utf8)).otherwise(pl.col("pct_kind")),
        io_time_reason=pl.Series([c.reason for c in chosen], dtype=pl.Utf8),
    )


def sentences(depth: pl.DataFrame) -> list[str]:
    """One sentence per run and direction whose latency is not clat (``apply``'s ``io_time_reason``), naming the
    run by its label (the file's, else its path) and job."""
    if depth.is_empty() or "io_time_reason" not in depth.columns:
        return []
    out = []
    for r in depth.filter(pl.col("io_time_reason").is_not_null()).iter_rows(named=True):
        name = r.get("label") or r.get("path")
        job = f" (job {r['jobname']})" if r.get("jobname") and r["jobname"] not in str(name) else ""
        out.append(f"{name}{job} {r['direction']}: {r['io_time_reason']}.")
    return list(dict.fromkeys(out))

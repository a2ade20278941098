"""fio log files over time (notebook 08): per-job log lines combined into one series per run (``combine_jobs``),
and the steady state of each series by SNIA PTS (``snia_window``, ``judge_steady``): a log window is a round."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from typing import Any

import polars as pl

from .db import frame
from .fio_runs import file_names


def load_log_samples(con, file_ids: Sequence[int] | None = None, kinds: Sequence[str] | None = None) -> pl.DataFrame:
    """fio_log_samples with the run they belong to: ``run`` = folder + '/' + prefix (the lab names each
    run's logs after its output file, ``RUNID.txt`` beside ``RUNID_bw.N.log``)."""
    cond: list[str] = []
    params: list[Any] = []
    if file_ids is not None:
        cond.append("list_contains(?::INTEGER[], l.file_id)")
        params.append(sorted({int(i) for i in file_ids}))
    if kinds is not None:
        cond.append("list_contains(?::VARCHAR[], l.kind)")
        params.append(list(kinds))
    where = ("WHERE " + " AND ".join(cond)) if cond else ""
    return frame(
        con,
        f"""
        SELECT parse_dirpath(f.path) || '/' || coalesce(l.prefix, f.path) AS run, l.file_id, l.kind, l.job_index,
               l.time_ns, l.direction, l.bw_bytes_per_s, l.iops, l.latency_ns, l.block_size_bytes, l.windowed,
               l.line_start, l.line_end, f.path, f.sha256
        FROM fio_log_samples l JOIN files f USING (file_id) {where}
        ORDER BY run, l.kind, l.job_index, l.time_ns, l.line_start""",
        params,
    )


PROVENANCE = {"path": pl.Utf8, "sha256": pl.Utf8, "line_start": pl.Int64, "line_end": pl.Int64}
VALUE = {"bw": "bw_bytes_per_s", "iops": "iops", "lat": "latency_ns", "clat": "latency_ns", "slat": "latency_ns"}


def combine_jobs(samples: pl.DataFrame, window_ns: int | None = None) -> pl.DataFrame:
    """One time series per (run, kind, direction) from the per-job logs.

    Samples are put in windows of ``window_ns`` (default: per windowed run, the median gap between a job's
    consecutive samples, i.e. log_avg_msec, in whole ms; per-I/O logs: the median gap of every log given), and a
    window's ``time_ns`` is its end, as fio means a windowed log's time: fio averages the samples of
    [k x log_avg_msec, (k+1) x log_avg_msec) and logs them when that window closes, at (k+1) x log_avg_msec give or
    take a few ms (stat.c ``add_log_sample``: 1 ms early at most, ``LOG_MSEC_SLACK``; late by the time to the next
    I/O). So a windowed entry goes to the nearest window end, and a per-I/O entry (its I/O's completion time) to
    the end of the window it falls in: the I/Os of 0-999 ms are the window at 1 s, as fio would log them with
    log_avg_msec=1000 (not the window "at 0 s", which would end before they happened). Per job and window:
    windowed logs give their value; per-I/O logs
    (no log_avg_msec) give, for iops, the I/Os counted per second, for bw the bytes moved per second,
    for latencies the mean. Per window over the jobs: ``value`` = the sum for bw and iops (the run's
    total), the mean for latencies; ``jobs`` = jobs seen, ``n`` = log lines. Time in ns.
    """
    by = ["run", "kind", "direction"]
    schema = {
        "run": pl.Utf8,
        "kind": pl.Utf8,
        "direction": pl.Utf8,
        "time_ns": pl.Int64,
        "value": pl.Float64,
        "jobs": pl.UInt32,
        "n": pl.UInt32,
    }
    # a window's raw lines: its first job's log lines in that window (the other jobs' logs are files of their own)
    prov = {c: t for c, t in PROVENANCE.items() if c in samples.columns}
    schema |= prov
    df = samples.filter(pl.col("kind").is_not_null())
    if df.is_empty():
        return pl.DataFrame(schema=schema)
    df = df.with_columns(
        pl.coalesce(pl.col("bw_bytes_per_s"), pl.col("iops"), pl.col("latency_ns")).alias("value"),
        pl.col("job_index").fill_null(0),
    )
    if window_ns is None:
        # a windowed run (log_avg_msec) its own window: another run's log_avg_msec never moves its times (h6n K1: one
        # log line at 55 s in one report, 54.945 s in another); a per-I/O log has no window of its own: the median
        # gap of every log selected, as before
        gaps = (
            df.sort([*by, "job_index", "time_ns"])
            .with_columns(pl.col("time_ns").diff().over([*by, "job_index"]).alias("gap"))
            .filter(pl.col("gap") > 0)
        )
        every = gaps["gap"].median() if gaps.height else None
        own = gaps.group_by("run").agg(pl.col("gap").median().alias("window"), pl.col("windowed").all().alias("own"))
        df = df.join(own, on="run", how="left").with_columns(
            ((pl.when(pl.col("own")).then(pl.col("window")).otherwise(every).fill_null(1e9) / 1e6).round() * 1_000_000)
            .clip(1_000_000)
            .cast(pl.Int64)
            .alias("w")
        )
    else:
        df = df.with_columns(pl.lit(window_ns, pl.Int64).alias("w"))
    per_s = 1e9 / pl.col("w").first()
    nearest_end = (pl.col("time_ns") + pl.col("w") // 2) // pl.col("w") * pl.col("w")
    end_of_its_window = (pl.col("time_ns") // pl.col("w") + 1) * pl.col("w")
    df = df.with_columns(pl.when(pl.col("windowed")).then(nearest_end).otherwise(end_of_its_window).alias("t"))
    raw = ~pl.col("windowed").first()
    kind = pl.col("kind").first()
    per_job = df.group_by([*by, "job_index", "t"]).agg(
        pl.when(raw & (kind == "iops"))
        .then(pl.len().cast(pl.Float64) * per_s)
        .when(raw & (kind == "bw"))
        .then(pl.col("block_size_bytes").sum().cast(pl.Float64) * per_s)
        .otherwise(pl.col("value").mean())
        .alias("value"),
        pl.len().alias("n"),
        *(pl.col(c).first() for c in prov if c in ("path", "sha256")),
        *(pl.col(c).min() for c in prov if c == "line_start"),
        *(pl.col(c).max() for c in prov if c == "line_end"),
    )
    out = (
        per_job.sort("job_index")
        .group_by([*by, "t"])
        .agg(
            pl.when(pl.col("kind").first().is_in(["bw", "iops"]))
            .then(pl.col("value").sum())
            .otherwise(pl.col("value").mean())
            .alias("value"),
            pl.col("job_index").n_unique().cast(pl.UInt32).alias("jobs"),
            pl.col("n").sum().cast(pl.UInt32).alias("n"),
            *(pl.col(c).first() for c in prov),
        )
    )
    return out.rename({"t": "time_ns"}).select(list(schema)).sort([*by, "time_ns"])


def partial_windows(series: pl.DataFrame) -> pl.Series:
    """True for the windows of a summed series (bw, iops) where fewer jobs logged than the run has: fio writes
    each job's last sample when that job ends, so one job's extra last sample alone is not the run's total (it
    would show as a drop to 1/N at the end)."""
    all_jobs = pl.col("jobs").max().over("run", "kind", "direction")
    return series.select(pl.col("kind").is_in(["bw", "iops"]) & (pl.col("jobs") < all_jobs)).to_series()


# ----------------------------------------------------------------------------- steady state per SNIA PTS

ROUNDS = 5  # SNIA PTS: the measurement window is five consecutive rounds
EXCURSION_PCT = 20.0  # max - min within the window, at most this share of the window's mean
SLOPE_PCT = 10.0  # the best-fit line's rise over the window, at most this share of the window's mean


@dataclass(frozen=True)
class SteadyVerdict:
    """Steady state of one series (run, kind, direction) by SNIA PTS (SSS PTS 2.0.2, section 2.1: "Steady State"):
    the first window of ``rounds`` consecutive rounds (here: log windows) whose data excursion (max - min) is at
    most ``excursion_pct`` % and whose best-fit line rises or falls by at most ``slope_pct`` % of the window's
    mean across it, and after which every later round stays within ``excursion_pct`` % of that mean (the steady
    state holds to the end of the run: ``steady_to_end``). ``state``: 'steady', 'not steady', 'too short' (fewer rounds than a window), 'maxima' (the
    log holds per-window maxima: log_max_value=1, not averages to judge)."""

    run: str
    kind: str
    direction: str
    rounds: int
    state: str
    start_s: float | None = None  # the window's first round
    end_s: float | None = None
    mean: float | None = None  # the window's mean
    excursion_pct: float | None = None
    slope_pct: float | None = None
    low: float | None = None  # the series' smallest and largest values (for maxima)
    high: float | None = None
    run_s: float | None = None  # the run's elapsed time where the design checks call it too short
    name: str = ""  # the run as reports name it (its folder where another run has its prefix: ``run_names``)
    rest_mean: float | None = None  # 'two regimes': the other windows' mean (``mean``: the segment's)
    segment_rounds: int | None = None  # 'two regimes': the windows of the high segment
    # 'not steady' after a window that met both criteria (start_s, end_s, mean: that window's): where the run
    # leaves its band farthest (``steady_to_end``)
    left_value: float | None = None
    left_from_s: float | None = None
    left_to_s: float | None = None
    median: float | None = None  # bandwidth and IOPS: the series' median, and its dips far below it (``low_dips``)
    dips: tuple[tuple[float, float, float], ...] = ()  # (from s, to s, lowest value)


REGIME_FACTOR = 3.0  # a sustained segment at 3x the series' median or more is a regime of its own
REGIME_MIN_ROUNDS = 3  # ... when it lasts this many consecutive windows (one spike is not a regime)


def high_regime(values: Sequence[float]) -> tuple[int, int, float, float] | None:
    """(first, last index, segment mean, rest mean) of the longest run of at least ``REGIME_MIN_ROUNDS`` consecutive
    windows each at ``REGIME_FACTOR`` x the series' median or more, where the rest's mean is under a third of the
    segment's (a run of two rates: ~390 MiB/s, then 9 s at ~2,550 MiB/s that five HDDs cannot deliver: a cache).
    None where there is none, or the segment is the whole series. Bandwidth and IOPS only: a mean over such a series
    describes neither rate."""
    vals = [float(v) for v in values]
    ordered = sorted(vals)
    if len(vals) <= REGIME_MIN_ROUNDS or any(math.isnan(v) for v in vals):
        return None
    median = ordered[len(vals) // 2] if len(vals) % 2 else (ordered[len(vals) // 2 - 1] + ordered[len(vals) // 2]) / 2
    if median <= 0:
        return None
    best, start = None, None
    for i, v in enumerate([*vals, -math.inf]):
        if v >= REGIME_FACTOR * median and start is None:
            start = i
        elif v < REGIME_FACTOR * median and start is not None:
            if i - start >= REGIME_MIN_ROUNDS and (best is None or i - start > best[1] - best[0] + 1):
                best = (start, i - 1)
            start = None
    if best is None or best[1] - best[0] + 1 == len(vals):
        return None
    seg = vals[best[0] : best[1] + 1]
    rest = vals[: best[0]] + vals[best[1] + 1 :]
    seg_mean, rest_mean = sum(seg) / len(seg), sum(rest) / len(rest)
    if rest_mean > 0 and seg_mean < REGIME_FACTOR * rest_mean:
        return None
    return best[0], best[1], seg_mean, rest_mean


def run_names(runs: Sequence[str]) -> dict[str, str]:
    """Each log run (folder + '/' + prefix) as reports name it: the prefix, or as many of its folders as tell it from
    the other runs' (three pools' 'sync_rand_write_bw' logs are three runs: never one line, panel or sentence)."""
    return file_names(runs)


def _criteria(w: Sequence[float]) -> tuple[float, float, float] | None:
    """(mean, excursion %, slope %) of one window of rounds; None where its mean is 0 or a value is missing."""
    rounds = len(w)
    mean = sum(w) / rounds
    if not mean or any(math.isnan(v) for v in w):
        return None
    x_mean = (rounds - 1) / 2
    sxx = sum((x - x_mean) ** 2 for x in range(rounds))
    slope = sum((x - x_mean) * (v - mean) for x, v in enumerate(w)) / sxx
    return mean, 100.0 * (max(w) - min(w)) / abs(mean), 100.0 * abs(slope) * (rounds - 1) / abs(mean)


def snia_window(
    values: Sequence[float], rounds: int = ROUNDS, excursion_pct: float = EXCURSION_PCT, slope_pct: float = SLOPE_PCT
) -> tuple[int, float, float, float] | None:
    """(first index, mean, excursion %, slope %) of the first window of ``rounds`` values meeting both SNIA PTS
    criteria; None when no window does (or there are fewer values than one window)."""
    for i in range(len(values) - rounds + 1):
        c = _criteria([float(v) for v in values[i : i + rounds]])
        if c is not None and c[1] <= excursion_pct and c[2] <= slope_pct:
            return i, *c
    return None


def steady_to_end(
    values: Sequence[float], rounds: int = ROUNDS, excursion_pct: float = EXCURSION_PCT, slope_pct: float = SLOPE_PCT
) -> tuple[tuple[int, float, float, float] | None, tuple[int, int, float] | None]:
    """SNIA PTS's steady state holds to the end of the run: (window, None) for the first window of ``rounds`` values
    that meets both criteria (``snia_window``) and after which every value stays in its band (the window's mean
    +- ``excursion_pct`` %). Where none does: (None, (first, last index, value)): where the run leaves the band of
    its first window meeting both criteria farthest (the consecutive windows within ``excursion_pct`` % of that
    value), or (None, None) where no window meets them (a run that is steady for five windows and later falls to a
    fifth of that rate is not in a steady state)."""
    vals = [float(v) for v in values]
    first, leave = None, None
    for i in range(len(vals) - rounds + 1):
        c = _criteria(vals[i : i + rounds])
        if c is None or c[1] > excursion_pct or c[2] > slope_pct:
            continue
        mean = c[0]
        later = vals[i + rounds :]
        out = [
            (abs(v - mean), k)
            for k, v in enumerate(later, i + rounds)
            if abs(v - mean) > excursion_pct / 100 * abs(mean)
        ]
        if not out:
            return (i, *c), None
        if first is None:
            first = i
            k = max(out)[1]
            leave = _stretch(vals, k, first + rounds, mean, excursion_pct)
    return None, leave


def _stretch(vals: list[float], k: int, lo: int, mean: float, excursion_pct: float) -> tuple[int, int, float]:
    """(first, last index, value): window ``k`` and its neighbours from index ``lo`` on that are as far out on its
    side of ``mean``, within ``excursion_pct`` % of its value (a fall's neighbours as low, a rise's as high)."""
    v, e = vals[k], excursion_pct / 100

    def near(x: float) -> bool:
        return x <= v + e * abs(v) if v < mean else x >= v - e * abs(v)

    a, b = k, k
    while a - 1 >= lo and near(vals[a - 1]):
        a -= 1
    while b + 1 < len(vals) and near(vals[b + 1]):
        b += 1
    return a, b, v


DIP_FACTOR = 3.0  # a window at a third of the series' median or less is a dip (a stall where it is near 0)


def low_dips(values: Sequence[float]) -> tuple[float, list[tuple[int, int, float]]]:
    """(the series' median, [(first, last index, lowest value)]) of each stretch of consecutive windows at
    1/``DIP_FACTOR`` of the median or less that the run recovers from (a low first or last window is its start or
    end: a ramp, a partial window, not a dip). Bandwidth and IOPS: a run that falls to a fifth of its rate for two
    windows and recovers is not a clean run to compare, whatever its average."""
    vals = [float(v) for v in values]
    if len(vals) < 3 or any(math.isnan(v) for v in vals):
        return math.nan, []
    ordered = sorted(vals)
    n = len(vals)
    median = ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2
    low = [median > 0 and v <= median / DIP_FACTOR for v in vals]
    dips: list[tuple[int, int, float]] = []
    i = 0
    while i < n:
        if not low[i]:
            i += 1
            continue
        j = i
        while j + 1 < n and low[j + 1]:
            j += 1
        if i > 0 and j < n - 1 and any(not x for x in low[:i]):
            dips.append((i, j, min(vals[i : j + 1])))
        i = j + 1
    return median, dips


def judge_steady(
    series: pl.DataFrame,
    maxima_runs: AbstractSet[str] = frozenset(),
    rounds: int = ROUNDS,
    excursion_pct: float = EXCURSION_PCT,
    slope_pct: float = SLOPE_PCT,
    short_runs: Mapping[str, float | None] | None = None,
) -> tuple[pl.DataFrame, list[SteadyVerdict]]:
    """``series`` (``combine_jobs``) with ``phase`` per round ('ramp' before the steady window, 'steady window',
    'after' it, 'not steady', 'too short', 'maxima'; 'high regime' and 'other regime' for a bandwidth or IOPS series
    with a sustained segment several times the rest: ``high_regime``, never called steady) and one ``SteadyVerdict``
    per series, named by ``run_names``. ``short_runs``: log run -> its elapsed seconds, for runs the design checks
    call too short (``design.MIN_ELAPSED_S``): not judged."""
    short_runs = short_runs or {}
    parts, verdicts = [], []
    by = ["run", "kind", "direction"]
    names = run_names(series["run"].unique().to_list()) if series.height else {}
    for (run, kind, direction), g in series.sort([*by, "time_ns"]).group_by(by, maintain_order=True):
        vals = g["value"].to_list()
        t = (g["time_ns"] / 1e9).to_list()
        base = dict(run=run, kind=kind, direction=direction, rounds=len(vals), name=names.get(run, run))
        regime = high_regime(vals) if kind in ("bw", "iops") and run not in maxima_runs else None
        if regime is not None and run not in short_runs:
            i, j, seg_mean, rest_mean = regime
            v = SteadyVerdict(
                **base,
                state="two regimes",
                start_s=t[i],
                end_s=t[j],
                mean=seg_mean,
                rest_mean=rest_mean,
                segment_rounds=j - i + 1,
            )
            phases = ["other regime"] * i + ["high regime"] * (j - i + 1) + ["other regime"] * (len(vals) - j - 1)
        elif run in maxima_runs:
            v = SteadyVerdict(**base, state="maxima", low=min(vals), high=max(vals))
            phases = ["maxima"] * len(vals)
        elif len(vals) < rounds or run in short_runs:
            v = SteadyVerdict(**base, state="too short", run_s=short_runs.get(run))
            phases = ["too short"] * len(vals)
        else:
            v, phases = _steady(base, vals, t, rounds, excursion_pct, slope_pct)
        if kind in ("bw", "iops") and v.state not in ("two regimes", "maxima") and run not in short_runs:
            median, dips = low_dips(vals)
            if dips:
                v = replace(v, median=median, dips=tuple((t[i], t[j], low) for i, j, low in dips))
        verdicts.append(v)
        parts.append(g.with_columns(pl.Series("phase", phases, dtype=pl.String)))
    out = pl.concat(parts) if parts else series.with_columns(pl.lit(None, pl.String).alias("phase"))
    return out, verdicts


def _steady(
    base: dict, vals: list[float], t: list[float], rounds: int, excursion_pct: float, slope_pct: float
) -> tuple[SteadyVerdict, list[str]]:
    """The verdict and per-window phases of a series long enough to judge (``steady_to_end``)."""
    hit, leave = steady_to_end(vals, rounds, excursion_pct, slope_pct)
    if hit is None:
        first = snia_window(vals, rounds, excursion_pct, slope_pct) if leave is not None else None
        if first is None or leave is None:
            return SteadyVerdict(**base, state="not steady"), ["not steady"] * len(vals)
        i, mean, _, _ = first
        a, b, value = leave
        v = SteadyVerdict(
            **base,
            state="not steady",
            start_s=t[i],
            end_s=t[i + rounds - 1],
            mean=mean,
            left_value=value,
            left_from_s=t[a],
            left_to_s=t[b],
        )
        return v, ["not steady"] * len(vals)
    i, mean, exc, rise = hit
    v = SteadyVerdict(
        **base, state="steady", start_s=t[i], end_s=t[i + rounds - 1], mean=mean, excursion_pct=exc, slope_pct=rise
    )
    return v, ["ramp"] * i + ["steady window"] * rounds + ["after"] * (len(vals) - i - rounds)

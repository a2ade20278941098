"""Notebook 08 on any selection, in three steps: ``query`` (SQL to frames: ``FioData``), ``compute`` (pure: the
named numbers of ``FioNumbers``), ``findings`` (sentences from those numbers only); ``analyse`` runs the three.

The parts, one module each:

* ``fio_depth``: IOPS, bandwidth and latency percentiles per run against I/Os in flight (iodepth x numjobs);
  a run's bandwidth is its reporting group's (fio's group line: total I/O over the group's elapsed time), not
  the per-job rates added;
* ``fio_durable``: fsync/fdatasync runs: the latency per durable write (fio's ``sync`` percentiles), durable
  writes per second, a pool with and without a SLOG;
* ``fio_timeseries``: fio's log files over time, and steady state by SNIA PTS;
* ``fio_latency``: latency histograms (JSON+ bins, write_hist_log logs, fio's printed distribution);
* ``fio_compare``: runs of one workload at one depth on different configurations, with run-to-run noise from
  repeats only.

The names of those modules are re-exported here (``fio_views.per_run`` ...), as before the split.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from . import (
    arc,
    design,
    fio_compare,
    fio_depth,
    fio_durable,
    fio_failed,
    fio_findings,
    fio_runs,
    io_time,
    measures,
    repeat_groups,
    run_verdicts,
)
from .db import frame
from .fio_compare import comparison_sentence, point_comparisons, repeats_sentence  # noqa: F401
from .fio_depth import (  # noqa: F401
    PERCENTILES,
    WORKLOAD,
    against_depth,
    depth_lines,
    load_summary,
    per_run,
    qd_label,
    summary,
    with_job_workloads,
)
from .fio_latency import (  # noqa: F401
    bin_percentiles,
    histogram_buckets,
    load_hist_samples,
    load_histograms,
    load_log_runs,
    load_printed_buckets,
)
from .fio_timeseries import EXCURSION_PCT, ROUNDS, SLOPE_PCT, SteadyVerdict
from .result import Result
from .stacks_flags import CLEAN_FLAGS

LARGE_BLOCK = 64 * 1024  # from this block size a run's headline figure is its bandwidth, below it its IOPS


# ----------------------------------------------------------------------------- query


@dataclass
class FioData:
    """What the selection holds, as frames (the query step's output)."""

    runs: pl.DataFrame  # fio_runs.runs: one row per run (file, report, group, direction), group bandwidth
    summary: pl.DataFrame  # per_run(load_summary): one row per run's job and direction
    log_ids: list[int]
    samples: pl.DataFrame  # fio_log_samples of the selection's logs
    maxima_runs: set[str]  # log runs written with log_max_value=1
    log_outputs: dict[str, int]  # log run -> file_id of the fio output it belongs to
    bins: pl.DataFrame  # load_histograms
    printed: pl.DataFrame  # load_printed_buckets
    durable_jobs: pl.DataFrame
    durable_pct: pl.DataFrame
    untied_logs: list[str] = field(default_factory=list)  # log files beside a selected run, tied to none


def query(con, sel) -> FioData:

    runs = fio_runs.runs(con, sel)
    where, params = sel.sql("f")

    def ids(fmt: str) -> list[int]:
        sql = f"SELECT f.file_id FROM files f WHERE {where} AND f.format = '{fmt}' ORDER BY 1"
        return frame(con, sql, params)["file_id"].to_list()

    file_ids = sorted(set(runs["file_id"].to_list())) if runs.height else []
    logs = run_verdicts.load_logs(con, file_ids, ids("fio-log"), ids("fio-hist-log"))
    djobs, dpct = fio_durable.load(con, sel)
    runs_summary = per_run(load_summary(con, file_ids)) if file_ids else pl.DataFrame()
    lat_first = runs_summary.filter(pl.col("io_time_reason").is_not_null())["file_id"].to_list() if file_ids else []
    return FioData(
        runs=runs,
        summary=runs_summary,
        log_ids=logs.log_ids,
        samples=logs.samples,
        maxima_runs=logs.maxima_runs,
        log_outputs=logs.log_outputs,
        bins=load_histograms(con, file_ids, logs.hist_ids, lat_first),
        printed=load_printed_buckets(con, file_ids),
        durable_jobs=djobs,
        durable_pct=dpct,
        untied_logs=logs.untied,
    )


# ----------------------------------------------------------------------------- compute


@dataclass
class FioNumbers:
    """Every number notebook 08 states, named (the compute step's output); findings write sentences from these."""

    runs: int = 0
    latency_only: list[str] = field(default_factory=list)  # directions of sections without IOPS (sync)
    latency_only_count: int = 0
    capped_jobs: int = 0  # iodepth > 1 on a synchronous engine: fio kept one I/O in flight
    capped_rate: int = 0  # of those, jobs fio was told to cap (rate=, rate_iops=): a synchronous engine is not why
    depth: pl.DataFrame = field(default_factory=pl.DataFrame)
    curves: list[fio_depth.DepthCurve] = field(default_factory=list)
    knees: list[fio_depth.Knee] = field(default_factory=list)  # per curve: where IOPS stop rising
    comparisons: list[fio_compare.Point] = field(default_factory=list)
    repeat_grouping: str = ""  # how the comparisons' repeats were grouped (``repeat_groups.sentence``)
    durable: fio_durable.Durable = field(default_factory=fio_durable.Durable)
    unitless_logs: list[str] = field(default_factory=list)
    partial_windows: int = 0
    partial_runs: list[str] = field(default_factory=list)
    series: pl.DataFrame = field(default_factory=pl.DataFrame)
    steady: list[SteadyVerdict] = field(default_factory=list)
    histogram: pl.DataFrame = field(default_factory=pl.DataFrame)
    histogram_sources: dict[str, int] = field(default_factory=dict)
    flags: dict[int, str] = field(default_factory=dict)  # file_id -> 05's plausibility flag (a cache, rounding)
    design: pl.DataFrame = field(default_factory=pl.DataFrame)  # design.with_design(runs): the test-design checks
    design_sentences: list[str] = field(default_factory=list)
    design_notes: list[str] = field(default_factory=list)  # design.notes: synced writes, a final fsync's overrun
    design_missing: list[str] = field(default_factory=list)  # design.missing: a cache check that could not be made
    io_time_sentences: list[str] = field(default_factory=list)  # io_time.sentences: lat, not clat, is the I/O's time
    best_iops: dict | None = None  # small blocks: the highest IOPS of an unflagged run
    best_bw: dict | None = None  # large blocks: the highest bandwidth of an unflagged run
    flagged_above: dict[str, int] = field(default_factory=dict)  # 'iops'/'bw' -> flagged runs above the best
    regimes: dict[int, str] = field(default_factory=dict)  # file_id -> '⚠ two regimes' (its logs: run_verdicts.regimes)
    all_flagged: dict[str, int] = field(default_factory=dict)  # 'iops'/'bw' -> runs, every one flagged: no best
    # 'iops'/'bw' -> the workloads (and directions) of the unflagged candidates where there are several: not ranked
    unranked: dict[str, list[str]] = field(default_factory=dict)
    log_ids: list[int] = field(default_factory=list)
    untied_logs: list[str] = field(default_factory=list)  # FioData.untied_logs


@dataclass(frozen=True)
class SteadyParams:
    rounds: int = ROUNDS
    excursion_pct: float = EXCURSION_PCT
    slope_pct: float = SLOPE_PCT

    def check(self):
        if not (self.rounds >= 2 and 0 < self.excursion_pct and 0 < self.slope_pct):
            raise ValueError(
                f"need steady_rounds >= 2 (SNIA PTS: 5), excursion_pct > 0 (20) and slope_pct > 0 (10), got "
                f"{self.rounds}, {self.excursion_pct} and {self.slope_pct}"
            )


def compute(data: FioData, steady: SteadyParams = SteadyParams(), knee_gain: float = fio_depth.KNEE_GAIN) -> FioNumbers:
    n = FioNumbers(runs=data.runs.select("file_id", "doc_index").n_unique() if data.runs.height else 0)
    if data.runs.height:
        n.design = run_verdicts.checked(data.runs.with_columns(label=fio_runs.run_label(data.runs)))
        n.flags = _flags(n.design)
        n.design_sentences = list(dict.fromkeys(design.sentences(n.design)))  # a run's directions share one sentence
        n.design_notes, n.design_missing = design.notes(n.design), design.missing(n.design)
    paths = data.runs["path"].to_list() if data.runs.height else []
    by_file = run_verdicts.design_by_file(n.design)
    n.durable = fio_durable.compute(data.durable_jobs, data.durable_pct, by_file, paths)
    if data.log_ids and data.samples.height:  # first: a run whose logs show two regimes is flagged in the depth rows
        _time_series(data, n, steady)
        n.regimes = run_verdicts.regimes(n.steady, data.log_outputs)
        n.series = _mark_regimes(n.series, n.steady)
    if data.runs.height:
        n.design = run_verdicts.judged(n.design, n.regimes)  # the one verdict 05 and 10 give these runs too
    if data.summary.height:
        _depth(data, n, knee_gain)
    n.histogram, n.histogram_sources = _histograms(data)
    n.log_ids = data.log_ids
    n.untied_logs = data.untied_logs
    return n


def _flags(checked: pl.DataFrame) -> dict[int, str]:
    """file_id -> notebook 05's plausibility flag of a run's figure (above the device's limit, within rounding of
    it, direct=1 ignored); a working set a cache can hold is the design checks' ``cache`` flag (``design``)."""
    flagged = checked.filter(~pl.col("flag").is_in(CLEAN_FLAGS))
    return dict(zip(flagged["file_id"], flagged["flag"], strict=True))


def _mark_regimes(series: pl.DataFrame, verdicts: list[SteadyVerdict]) -> pl.DataFrame:
    """The chart's ``flag`` of each log run with a series of two regimes gets 'two regimes', of one with dips 'dips'
    (its panels' titles)."""
    for word, runs in (
        ("two regimes", sorted({v.run for v in verdicts if v.state == "two regimes"})),
        ("dips", sorted({v.run for v in verdicts if v.dips})),
    ):
        if not runs or "flag" not in series.columns:
            continue
        mark = (
            pl.when(pl.col("flag").fill_null("") == "")
            .then(pl.lit(f"{design.MARK} {word}"))
            .otherwise(pl.col("flag") + pl.lit(f", {word}"))
        )
        series = series.with_columns(flag=pl.when(pl.col("run").is_in(runs)).then(mark).otherwise(pl.col("flag")))
    return series


def _with_flags(summ: pl.DataFrame, n: FioNumbers) -> pl.DataFrame:
    """``flag``: the run's verdict (``run_verdicts.judged``: its design marker '⚠ overran, stall', two regimes or dips
    in its logs, 05's plausibility flag), or None; ``suspect``: left out of headlines and comparisons, as in 05 and
    10 (a weak plausibility flag, 'just above the labelled limit', is shown but does not)."""
    key = list(run_verdicts.KEY)
    if n.design.is_empty():
        return summ.with_columns(flag=pl.lit(None, pl.String), suspect=pl.lit(False))
    verdict = n.design.select(*key, pl.col("why").alias("flag"), "suspect").unique(key, keep="first")
    out = summ.join(verdict.cast({k: summ.schema[k] for k in key}), on=key, how="left")
    return out.with_columns(pl.col("suspect").fill_null(False))


def _depth(data: FioData, n: FioNumbers, knee_gain: float = fio_depth.KNEE_GAIN) -> None:
    summ = data.summary
    latency_only = summ.filter(pl.col("iops").is_null() | pl.col("bw_bytes_per_s").is_null())
    n.latency_only = sorted(set(latency_only["direction"].to_list()))
    n.latency_only_count = latency_only.height
    summ = summ.filter(pl.col("iops").is_not_null() & pl.col("bw_bytes_per_s").is_not_null())
    if summ.is_empty():
        return
    summ = fio_depth.with_run_bandwidth(with_job_workloads(summ), data.runs)
    summ = fio_depth.with_durable_percentiles(summ, data.durable_pct)
    capped = (pl.col("depth1_pct") >= 99.95) & (pl.col("iodepth") > 1)
    n.capped_jobs = summ.filter(capped).select("file_id", "job_index").n_unique()
    n.capped_rate = (
        summ.filter(capped & pl.col("workload").str.contains(r" rate(?:_iops)?="))
        .select("file_id", "job_index")
        .n_unique()
    )
    summ = summ.with_columns(iodepth=pl.when(capped).then(pl.lit(1, pl.Int64)).otherwise(pl.col("iodepth")))
    summ = _with_flags(summ, n)
    n.depth = against_depth(summ, by=("workload", "direction", "setup"))
    n.io_time_sentences = io_time.sentences(n.depth)  # runs whose latency is lat, not clat
    n.design_missing += fio_depth.split_sentences(n.depth)  # one command cut in two by a '?'
    n.design_missing += design.block_size_arithmetic(n.depth)  # bs=?: bandwidth / IOPS, as arithmetic
    n.curves = fio_depth.curves(n.depth)
    n.knees = fio_depth.knees(n.depth, gain=knee_gain)
    n.comparisons = fio_compare.points(n.depth, dict(zip(data.runs["file_id"], data.runs["zfs_version"], strict=True)))
    n.repeat_grouping = repeat_groups.sentence(data.runs) if n.comparisons else ""
    _headline(n)


def _headline(n: FioNumbers) -> None:
    """The highest IOPS among small-block runs and the highest bandwidth among large-block runs, never a flagged
    run, and only where the unflagged runs are of one workload and direction (runs are compared within one workload
    only: a 'highest' across workloads would rank a QD 32 read against a QD 1 write); how many flagged runs were above
    each. Several workloads: ``unranked`` names them and no run heads the headline."""
    d = n.depth
    small = d.filter(pl.col("block_size_bytes").is_null() | (pl.col("block_size_bytes") < LARGE_BLOCK))
    large = d.filter(pl.col("block_size_bytes") >= LARGE_BLOCK)
    for key, rows, col in (("iops", small, "iops"), ("bw", large, "bw_bytes_per_s")):
        ok = rows.filter(~pl.col("suspect")).sort(col, descending=True)
        kinds = ok.select("workload", "direction").unique(maintain_order=True)
        if kinds.height > 1:
            n.unranked[key] = sorted(f"`{w}` {dr}" for w, dr in kinds.iter_rows())
            ok = ok.clear()
        best = ok.row(0, named=True) if ok.height else None
        n.flagged_above[key] = _flagged_faster(rows, best, col)
        if best is None and key not in n.unranked:
            n.all_flagged[key] = _run_count(rows.filter(pl.col("suspect")))
        if key == "iops":
            n.best_iops = best
        else:
            n.best_bw = best


RUN_KEY = ("file_id", "doc_index", "groupid")  # one run: a reporting group of one report (a row per job, direction)


def _run_count(rows: pl.DataFrame) -> int:
    """How many runs ``rows`` (``against_depth``: one row per job and direction) hold: a randrw run is one run."""
    return rows.select(*RUN_KEY).n_unique() if rows.height else 0


def _flagged_faster(rows: pl.DataFrame, best: dict | None, col: str) -> int:
    """Flagged runs of the headline run's own workload and direction faster than it (another workload's are not
    'faster' than it); 0 where no run heads the headline."""
    if best is None:
        return 0
    same = (pl.col("workload") == best["workload"]) & (pl.col("direction") == best["direction"])
    return _run_count(rows.filter(pl.col("suspect") & same & (pl.col(col) > best[col])))


def _time_series(data: FioData, n: FioNumbers, steady: SteadyParams) -> None:
    logs = run_verdicts.Logs(data.log_ids, [], data.samples, data.maxima_runs, data.log_outputs)
    by_file = run_verdicts.design_by_file(n.design)
    judged = run_verdicts.judge_logs(logs, by_file, steady.rounds, steady.excursion_pct, steady.slope_pct)
    n.steady, n.unitless_logs = judged.verdicts, judged.unitless
    n.partial_windows = judged.partial.height
    n.partial_runs = sorted({judged.names[r] for r in judged.partial["run"]}) if judged.partial.height else []
    marks = {run: design.marker(by_file[fid]) for run, fid in data.log_outputs.items() if fid in by_file}
    n.series = judged.series.with_columns(
        flag=pl.col("run").replace_strict(marks, default="", return_dtype=pl.String) if marks else pl.lit(""),
        name=pl.col("run").replace_strict(judged.names, default=None, return_dtype=pl.String),
    )


def _histograms(data: FioData) -> tuple[pl.DataFrame, dict[str, int]]:
    """The runs' latency histograms; a run whose I/O time is lat (``io_time``) and that has only clat bins is left
    out (its clat histogram would show near-zero latencies: ``io_time_sentences`` say why)."""
    bins = data.bins
    if data.summary.height and bins.height:
        not_clat = data.summary.filter(pl.col("io_time_reason").is_not_null()).select("file_id", "direction")
        drop = bins.join(not_clat.cast({"file_id": bins.schema["file_id"]}), on=["file_id", "direction"], how="semi")
        bins = bins.join(drop.filter(pl.col("source") == "JSON+ clat"), on=bins.columns, how="anti")
    hist = histogram_buckets(bins)
    if data.printed.height:
        hist = (
            pl.concat([hist, data.printed.select(hist.columns)], how="vertical_relaxed")
            if hist.height
            else data.printed
        )
    if hist.is_empty():
        return hist, {}
    counts = hist.unique(["label", "direction", "source"])["source"].value_counts(sort=True)
    return hist, dict(counts.iter_rows())


# ----------------------------------------------------------------------------- findings


def findings(n: FioNumbers, res, steady: SteadyParams) -> None:
    """Sentences from ``n`` into ``res`` (findings, missing, headline, verdict, caveats, frames)."""

    fio_findings.depth(n, res)
    fio_findings.durable(n, res)
    fio_findings.time_series(n, res, steady)
    fio_findings.histograms(n, res)
    fio_findings.test_design(n, res)
    fio_findings.headline(n, res)


def analyse(
    con,
    sel,
    steady_rounds: int = ROUNDS,
    excursion_pct: float = EXCURSION_PCT,
    slope_pct: float = SLOPE_PCT,
    knee_gain_pct: float = fio_depth.KNEE_GAIN * 100,
):
    """Notebook 08 on any selection: ``query``, ``compute``, ``findings``."""

    steady = SteadyParams(steady_rounds, excursion_pct, slope_pct)
    steady.check()
    if not 0 < knee_gain_pct < 100:
        raise ValueError(f"knee_gain_pct must be between 0 and 100 (10: 10 % per doubling), got {knee_gain_pct}")
    data = query(con, sel)
    res = Result.start(con, sel, measures.per_file(con, sel, data.runs))
    res.missing += fio_failed.sentences(con, sel)  # runs fio stopped on an error: named, never silently gone
    if data.runs.is_empty() and not data.log_ids:
        res.missing.append(
            f"no fio output for {sel.describe()}: run fio with --output-format=normal,json+ (or "
            "`storagelab lab fio --preset smoke --target DIR`), put the output under data/raw/<study>/ "
            "and label it"
        )
        return res
    numbers = compute(data, steady, knee_gain_pct / 100)
    res.numbers = numbers
    findings(numbers, res, steady)
    res.findings += arc.notes(data.runs)  # ARC ratios the flag does not show (below it, since boot), what is missing
    res.missing += arc.missing(data.runs) + arc.untied(con, sel)
    return res


def left_out(con, sel) -> dict[tuple[int, int, str], str]:
    """(file_id, doc_index, direction) -> why notebook 08 leaves that run out of its repeats, comparisons and
    headline: the one rule of 05, 08 and 10 (``run_verdicts.left_out``)."""
    return run_verdicts.left_out(con, sel)

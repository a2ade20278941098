"""Which fio runs the reports leave out of their repeats, rankings and headlines, and why: one verdict per run, the
one rule of notebooks 05 (stacks), 08 (fio) and 10 (disk card), so that one set of runs has one run count, one set
of runs left out and one mean in every report.

A run is left out (``suspect``) where

* a test-design check flags it (``design``: overran, a stall, too short, sub-second, a working set a cache holds,
  direct=1 ignored, ARC-served);
* its logs show two regimes (a sustained segment several times the rest: ``fio_timeseries.high_regime``) or dips
  (it falls to a third of its median or less and recovers: ``fio_timeseries.low_dips``); these do not depend on the
  steady-state parameters, only on which runs are too short to judge (``min_elapsed_s``);
* its logs are not steady with the default steady-state parameters (``fio_timeseries.ROUNDS``, ``EXCURSION_PCT``,
  ``SLOPE_PCT``) in the one way an average cannot hide: a window that met both criteria, then a departure of
  ``NOT_STEADY_FACTOR`` (1.5x, or down to 1/1.5) or more from its mean that no later window recovers from (the h6n trial's 60 s xfs write: 2,823 MiB/s for 49 s, then 6,352 MiB/s;
  its 2,962 MiB/s average describes neither, yet headed 07 and the card). 08's own steady-state finding follows its
  parameters; a run that never meets the criteria at all is a finding there, not a verdict;
* a firm plausibility flag (``stacks_flags.with_flags`` with ``margin``: above the device's limit, at it within the
  printed figure's rounding, direct=1 ignored by ZFS < 2.3); a weak one (just above the labelled limit) is shown but
  leaves nothing out.

``why``: the text every report shows for it ('⚠ overran, stall; ⚠ dips: 82.8 MiB/s ... at 24-25 s (...)').

Three steps: ``load_logs`` (the query: the runs' log files), ``checked``/``log_regimes``/``judged`` (compute, pure),
``left_out`` (both on a selection: what notebook 10 and the consistency checks call).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import polars as pl

from . import design, fio_failed, fio_findings, fio_runs, prose
from .db import frame
from .fio_latency import load_log_runs
from .fio_timeseries import (
    EXCURSION_PCT,
    REGIME_MIN_ROUNDS,
    ROUNDS,
    SLOPE_PCT,
    SteadyVerdict,
    combine_jobs,
    judge_steady,
    load_log_samples,
    partial_windows,
    run_names,
)
from .stacks_flags import CLEAN_FLAGS, FLAGS, SUSPECT_FLAGS, with_flags

# the plausibility flags' margin over a run's labelled device limit (notebook 05's inflation_margin default; 08 and
# 10 use it too: a run at 944 MiB/s against 'about 900 MB/s' is at 1.1 x the limit within rounding in every report)
MARGIN = 1.1
# a rate that leaves its steady band by this factor or more (up, or down by its inverse) and does not come back is
# a verdict: its average describes neither part (a 20 % excursion in a short run's last window is noise: 08 says it)
NOT_STEADY_FACTOR = 1.5
KEY = ("file_id", "doc_index", "groupid", "direction")  # one run's direction (``fio_runs.runs``' rows)


# ----------------------------------------------------------------------------- query


@dataclass
class Logs:
    """The fio log files of a selection's runs (the query step's output)."""

    log_ids: list[int] = field(default_factory=list)  # fio-log files
    hist_ids: list[int] = field(default_factory=list)  # fio-hist-log files tied to a run
    samples: pl.DataFrame = field(default_factory=pl.DataFrame)  # load_log_samples(log_ids)
    maxima_runs: set[str] = field(default_factory=set)  # log runs written with log_max_value=1
    log_outputs: dict[str, int] = field(default_factory=dict)  # log run -> file_id of the fio output it belongs to
    untied: list[str] = field(default_factory=list)  # log files beside a run, tied to none


LOGS_BESIDE_SQL = """
SELECT DISTINCT f.file_id, f.format, f.path, f.sha256, parse_dirpath(f.path) || '/' || s.prefix AS run
FROM files f JOIN (SELECT DISTINCT file_id, prefix FROM fio_log_samples
                   UNION SELECT DISTINCT file_id, prefix FROM fio_hist_samples) s USING (file_id)
WHERE parse_dirpath(f.path) IN (SELECT parse_dirpath(path) FROM files WHERE list_contains(?::INTEGER[], file_id))
ORDER BY f.path
"""


def logs_beside(con, file_ids: list[int]) -> tuple[dict[str, list[int]], list[str]]:
    """The log files in the folders of the fio outputs ``file_ids``: those tied to one of them (``load_log_runs``:
    same folder, prefix = a job name or write_*_log= value) by format ('fio-log', 'fio-hist-log'), which join the
    run whatever their labels (README: logs join their run by folder and prefix), and the paths of the others."""
    if not file_ids:
        return {}, []
    beside = frame(con, LOGS_BESIDE_SQL, [file_ids])
    if beside.is_empty():
        return {}, []
    owners = load_log_runs(con)
    tied = beside.filter(pl.col("run").is_in(owners.filter(pl.col("output_file_id").is_in(file_ids))["run"].implode()))
    by_format = {fmt: g["file_id"].to_list() for (fmt,), g in tied.group_by("format")}
    orphans = owners.filter(pl.col("output_file_id").is_null())["run"]
    untied = beside.filter(pl.col("run").is_in(orphans.implode()))["path"].unique(maintain_order=True)
    return by_format, untied.to_list()


def log_outputs(con) -> dict[str, int]:
    """Log run -> the file_id of the fio output it belongs to."""
    runs = load_log_runs(con).filter(pl.col("output_file_id").is_not_null())
    return dict(zip(runs["run"].to_list(), runs["output_file_id"].cast(pl.Int64).to_list(), strict=True))


def maxima_runs(con) -> set[str]:
    """Log runs (``load_log_runs``' ``run``) whose fio output says log_max_value=1 (JSON job options, or the
    command): their log windows hold each window's maximum, not its mean."""
    runs = load_log_runs(con).filter(pl.col("output_file_id").is_not_null())
    if runs.is_empty():
        return set()
    opts = frame(
        con,
        """SELECT j.file_id, any_value(j.options_json) AS options_json, any_value(f.command) AS command
           FROM fio_jobs j JOIN files f USING (file_id) WHERE j.is_final AND list_contains(?::INTEGER[], j.file_id)
           GROUP BY 1""",
        [runs["output_file_id"].cast(pl.Int64).to_list()],
    )
    maxima = set()
    for r in opts.iter_rows(named=True):
        given = {**fio_runs.parse_command(r["command"])}
        if r["options_json"]:
            given.update({k: str(v) for k, v in json.loads(r["options_json"]).items()})
        if str(given.get("log_max_value", "0")).lower() in ("1", "true", "max"):
            maxima |= set(runs.filter(pl.col("output_file_id") == r["file_id"])["run"].to_list())
    return maxima


def load_logs(con, file_ids: Sequence[int], selected: Sequence[int] = (), selected_hist: Sequence[int] = ()) -> Logs:
    """The log files tied to the fio outputs ``file_ids`` (and ``selected``: log files the selection's labels name,
    08's), their samples and what reads them."""
    tied, untied = logs_beside(con, sorted(set(file_ids)))
    log_ids = sorted(set(selected) | set(tied.get("fio-log", [])))
    return Logs(
        log_ids=log_ids,
        hist_ids=sorted(set(selected_hist) | set(tied.get("fio-hist-log", []))),
        samples=load_log_samples(con, log_ids) if log_ids else pl.DataFrame(),
        maxima_runs=maxima_runs(con) if log_ids else set(),
        log_outputs=log_outputs(con) if log_ids else {},
        untied=untied,
    )


# ----------------------------------------------------------------------------- compute


def checked(runs: pl.DataFrame, margin: float = MARGIN, min_elapsed_s: float = design.MIN_ELAPSED_S) -> pl.DataFrame:
    """``runs`` (``fio_runs.runs``' rows) with the plausibility flags (``with_flags``: ``flag``, ``inflated`` ...)
    and the design checks (``design.with_design``: ``design_marker`` ...)."""
    return design.with_design(with_flags(runs, margin), min_elapsed_s=min_elapsed_s)


def design_by_file(d: pl.DataFrame) -> dict[int, design.DesignFlags]:
    """file_id -> the design flags of its first run (a logged run is one job of one file)."""
    if d.is_empty() or "design_flagged" not in d.columns:
        return {}
    first = d.unique("file_id", keep="first", maintain_order=True)
    return {r["file_id"]: design.flags_of(r) for r in first.iter_rows(named=True)}


@dataclass
class LogJudgement:
    """The runs' log series judged (``judge_logs``)."""

    series: pl.DataFrame = field(default_factory=pl.DataFrame)  # judge_steady's series, phase per window
    verdicts: list[SteadyVerdict] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)  # log run -> its name (``run_names``)
    unitless: list[str] = field(default_factory=list)  # 'name kind' of latency logs without a unit
    partial: pl.DataFrame = field(default_factory=pl.DataFrame)  # the windows only some jobs logged, left out


def judge_logs(
    logs: Logs,
    by_file: Mapping[int, design.DesignFlags],
    rounds: int = ROUNDS,
    excursion_pct: float = EXCURSION_PCT,
    slope_pct: float = SLOPE_PCT,
) -> LogJudgement:
    """Every log series of ``logs`` judged (``judge_steady``): latency logs without a unit and windows only some
    jobs logged left out, a run its design checks call too short (``by_file``) not judged."""
    samples = logs.samples
    if not logs.log_ids or samples.is_empty():
        return LogJudgement()
    names = run_names(samples["run"].unique().to_list())
    latency = pl.col("kind").is_in(["lat", "clat", "slat"])
    unitless = samples.filter(latency & pl.col("latency_ns").is_null())
    combined = combine_jobs(samples.filter(~latency | pl.col("latency_ns").is_not_null()))
    partial = partial_windows(combined)
    short = {
        run: f.elapsed_s for run, fid in logs.log_outputs.items() if (f := by_file.get(fid)) is not None and f.too_short
    }
    series, verdicts = judge_steady(
        combined.filter(~partial), logs.maxima_runs, rounds, excursion_pct, slope_pct, short
    )
    kinds = unitless.select("run", "kind").unique(maintain_order=True).rows()
    return LogJudgement(series, verdicts, names, [f"{names[r]} {k}" for r, k in kinds], combined.filter(partial))


def regimes(verdicts: Sequence[SteadyVerdict], outputs: Mapping[str, int]) -> dict[int, str]:
    """file_id of a fio output -> '⚠ two regimes' where its logs' bandwidth or IOPS hold a sustained segment several
    times the rest (``fio_timeseries.high_regime``): its average describes neither rate, so it heads nothing; '⚠ dips'
    where they fall to a third of their median or less and recover (``low_dips``): not a clean run to compare."""
    out: dict[int, str] = {}
    ordered = sorted(verdicts, key=lambda v: v.kind != "bw")  # the bandwidth's figures where both show it
    for v in ordered:
        if v.state == "two regimes" and v.run in outputs and outputs[v.run] not in out:
            figure = prose.rate if v.kind == "bw" else (lambda x: f"{x:,.0f} IOPS")
            out[outputs[v.run]] = (
                f"{design.MARK} two regimes: {figure(v.mean)} for {v.segment_rounds} log windows, "
                f"{figure(v.rest_mean)} in the other {v.rounds - (v.segment_rounds or 0)}"
            )  # (a two-regime verdict always has its segment)
    for v in ordered:  # a run that falls far below its median and recovers
        if v.dips and v.run in outputs and outputs[v.run] not in out:
            out[outputs[v.run]] = f"{design.MARK} dips: {fio_findings.dips_text(v)}"
    for v in ordered:  # steady for a window, then it leaves that band and no later window holds to the end
        if v.kind not in ("bw", "iops") or v.state != "not steady" or v.left_value is None or not v.mean:
            continue  # (a rate's series: a latency's own departures are 08's findings)
        if 1 / NOT_STEADY_FACTOR < v.left_value / v.mean < NOT_STEADY_FACTOR or not _sustained(v):
            continue  # a departure within the factor, or a window or two: 08's finding, not a verdict
        if v.run in outputs and outputs[v.run] not in out:
            figure = prose.rate if v.kind == "bw" else (lambda x: f"{x:,.0f} IOPS")
            way = "falls" if v.mean is not None and v.left_value < v.mean else "rises"
            out[outputs[v.run]] = (
                f"{design.MARK} not steady: {way} to {figure(v.left_value)} at {v.left_from_s:g}-{v.left_to_s:g} s "
                f"from {figure(v.mean or 0)} in {v.start_s:g}-{v.end_s:g} s"
            )
    return out


def _sustained(v: SteadyVerdict) -> bool:
    """A departure (``left_from_s`` to ``left_to_s``) that spans ``REGIME_MIN_ROUNDS`` log windows or more, a window
    being its steady window's span over its rounds less one (one spike, or a short run's last window, is not a
    regime of its own)."""
    if None in (v.start_s, v.end_s, v.left_from_s, v.left_to_s):
        return False
    step = (v.end_s - v.start_s) / max(ROUNDS - 1, 1)  # type: ignore[operator]
    return step > 0 and (v.left_to_s - v.left_from_s) / step + 1 >= REGIME_MIN_ROUNDS - 1e-9  # type: ignore[operator]


def log_regimes(logs: Logs, by_file: Mapping[int, design.DesignFlags]) -> dict[int, str]:
    """``regimes`` of the runs' logs (``judge_logs`` with the default steady-state parameters: two regimes and dips
    do not depend on them)."""
    return regimes(judge_logs(logs, by_file).verdicts, logs.log_outputs)


def judged(runs: pl.DataFrame, by_regime: Mapping[int, str]) -> pl.DataFrame:
    """``checked`` runs with the verdict: ``why`` (the design marker, the logs' regimes, a plausibility flag that
    says something against the run, '; '-joined; None for none) and ``suspect`` (left out of repeats, rankings and
    headlines: a design flag, two regimes or dips, or a plausibility flag other than a weak one)."""
    regime = pl.col("file_id").replace_strict(dict(by_regime), default=None, return_dtype=pl.String)
    # a plausibility flag that says something against the run; 05's "direct=1 ignored" is the design check's
    # "direct ignored": said once
    said_twice = (pl.col("flag") == FLAGS[2]) & pl.col("design_marker").str.contains("direct ignored")
    plaus = pl.when(~pl.col("flag").is_in(CLEAN_FLAGS) & ~said_twice).then(pl.col("flag"))
    why = pl.concat_str(
        [pl.when(pl.col("design_marker") != "").then(pl.col("design_marker")), regime, plaus],
        separator="; ",
        ignore_nulls=True,
    )
    suspect = (
        (pl.col("design_marker").fill_null("") != "")
        | regime.is_not_null()
        | pl.col("flag").is_in(SUSPECT_FLAGS).fill_null(False)
    )
    return runs.with_columns(regime=regime, why=pl.when(why != "").then(why), suspect=suspect)


def left_out_of(verdicts: pl.DataFrame) -> dict[tuple[int, int, str], str]:
    """(file_id, doc_index, direction) -> why, for the ``judged`` runs left out."""
    bad = verdicts.filter(pl.col("suspect")).unique(
        ["file_id", "doc_index", "direction"], keep="first", maintain_order=True
    )
    return {(r["file_id"], r["doc_index"], r["direction"]): r["why"] or "flagged" for r in bad.iter_rows(named=True)}


def with_verdicts(runs: pl.DataFrame, left: Mapping[tuple[int, int, str], str]) -> pl.DataFrame:
    """``runs`` (rows with file_id, doc_index, direction) with ``why`` (``left_out``'s reason, None) and
    ``suspect``: what notebooks 01 and 02 read to leave a run out of a baseline as 05, 08 and 10 do."""
    if left:
        keys = zip(runs["file_id"], runs["doc_index"], runs["direction"], strict=True)
        why = [left.get((int(f), int(d), str(r))) for f, d, r in keys]
    else:  # none left out (frames without run keys too)
        why = [None] * runs.height
    return runs.with_columns(
        why=pl.Series(why, dtype=pl.String), suspect=pl.Series([w is not None for w in why], dtype=pl.Boolean)
    )


def counted(suspect: pl.Expr, over: Sequence[str]) -> pl.Expr:
    """True for a run that counts in its group's mean (``over``): not suspect, or every run of the group is (then
    all count, and the group is flagged): the rule of 05's configurations, 08's repeats and 10's cells."""
    return ~suspect | suspect.all().over(list(over))


def verdicts(
    con, runs: pl.DataFrame, margin: float = MARGIN, min_elapsed_s: float = design.MIN_ELAPSED_S
) -> pl.DataFrame:
    """``runs`` (``fio_runs.runs``' rows) ``judged``: their checks, their logs' regimes, the verdict."""
    if runs.is_empty():
        return runs
    d = checked(runs, margin, min_elapsed_s)
    logs = load_logs(con, d["file_id"].to_list())
    return with_failed(con, judged(d, log_regimes(logs, design_by_file(d))))


def with_failed(con, runs: pl.DataFrame) -> pl.DataFrame:
    """``judged`` runs with ``failed`` ('error 28 (No space left on device) for job seqw', and the failed job's
    lines; None: it ran): a run fio stopped on an error measured only what it did before (``fio_failed``), so it is
    suspect too, whatever its length, and ``why`` says so first (compare names it apart; 05, 08 and 10 leave it out)."""
    bad = fio_failed.failed_runs(con, runs["file_id"].unique().to_list())
    keys = zip(runs["file_id"], runs["doc_index"], runs["groupid"], strict=True)
    jobs = [bad.get((int(f), int(d), int(g))) for f, d, g in keys]
    failed = pl.Series([j and f"{j['what']} for job {j['jobname']}" for j in jobs], dtype=pl.String)
    why = pl.concat_str([pl.lit("failed: ") + pl.col("failed"), pl.col("why")], separator="; ", ignore_nulls=True)
    return runs.with_columns(
        failed=failed,
        failed_line_start=pl.Series([j and j["line_start"] for j in jobs], dtype=pl.Int64),
        failed_line_end=pl.Series([j and j["line_end"] for j in jobs], dtype=pl.Int64),
    ).with_columns(
        why=pl.when(pl.col("failed").is_not_null()).then(why).otherwise(pl.col("why")),
        suspect=pl.col("suspect") | pl.col("failed").is_not_null(),
    )


def left_out(
    con, sel, margin: float = MARGIN, min_elapsed_s: float = design.MIN_ELAPSED_S
) -> dict[tuple[int, int, str], str]:
    """(file_id, doc_index, direction) -> why every report leaves that run of the selection out of its repeats,
    rankings and headline (the module doc)."""
    return left_out_of(verdicts(con, fio_runs.runs(con, sel), margin, min_elapsed_s))

"""Notebook 08's sentences, written only from the named numbers of ``fio_views.FioNumbers`` (no query, no
arithmetic beyond formatting a ratio of two named numbers)."""

from __future__ import annotations

import itertools

from . import design, fio_depth, fio_durable, fio_steady_table, prose
from .fio_compare import point_sentence
from .fio_depth import KNEE_MIN_DEPTHS, DepthCurve, DepthLevel, Knee, or_unknown, qd_label
from .fio_timeseries import REGIME_FACTOR, REGIME_MIN_ROUNDS
from .result import Finding, cite, lines_of


def _level(level: DepthLevel, metric: str, noun: str = "runs", unit: bool = True) -> str:
    """'16,738 IOPS', '1240.0 MiB/s (...)', or the mean of several runs with their range."""
    if metric == "bandwidth":
        one = prose.rate(level.bw)
        span = f"{prose.rate(level.bw_low)} to {prose.rate(level.bw_high)}"
    else:
        one = f"{level.iops:,.0f}" + (" IOPS" if unit else "")
        span = f"{level.iops_low:,.0f}-{level.iops_high:,.0f}"
    return one if level.runs == 1 else f"{one} (mean of {level.runs} {noun}, {span})"


def _group_figures(c: DepthCurve) -> str:
    """'the run (its reporting group's I/O over its elapsed time) 183.5 MiB/s (192.4 MB/s)' per group of several
    jobs on the curve: the run's bandwidth as every analysis defines it (``fio_runs.run_bandwidth``)."""
    shown = [
        prose.rate(bw) if c.metric == "bandwidth" or iops is None else f"{iops:,.0f} IOPS" for _, bw, iops in c.groups
    ]
    names = "" if len(c.groups) == 1 else f" ({prose.listing([name for name, _, _ in c.groups])})"
    return f"the run{names} (its reporting group's I/O over its elapsed time) {prose.listing(shown)}"


def _shared_depths(c: DepthCurve) -> set:
    """The numbers of I/Os in flight that more than one configuration (iodepth x numjobs) of the curve reached."""
    seen = [lv.outstanding for lv in c.levels]
    return {d for d in seen if seen.count(d) > 1}


def _depth(lv: DepthLevel, shared: set) -> str:
    """'32', or '32 (QD 8 x 4)' where another configuration of the curve has as many I/Os in flight."""
    at = or_unknown(lv.outstanding)
    return f"{at} (QD {qd_label(lv.iodepth, lv.numjobs)})" if lv.outstanding in shared else at


def _configurations_sentence(c: DepthCurve, what: str, flagged: str) -> str:
    """Runs of one number of I/Os in flight in several configurations: each its own figure, never one mean (8 jobs
    at QD 4 is not a repeat of 4 jobs at QD 8)."""
    each = "; ".join(
        f"QD {qd_label(lv.iodepth, lv.numjobs)}: {_level(lv, c.metric, 'runs' if c.runs == c.jobs else 'jobs')}"
        for lv in c.levels
    )
    return (
        f"{what}: {c.runs} run(s), all with {or_unknown(c.levels[0].outstanding)} I/Os in flight, in "
        f"{len(c.levels)} configurations (I/O depth x jobs): {each}. They are not repeats of one run, so no mean is "
        f"stated; the difference is that of spreading the I/Os over more or fewer jobs, nothing varies the depth."
        f"{flagged}"
    )


def curve_sentence(c: DepthCurve) -> str:
    """One depth curve in words (``_curve_sentence``), with the lab's sanity flags of its runs ('not a disk: ...')."""
    text = _curve_sentence(c)
    return text + (f" The lab flagged its runs: {'; '.join(c.lab_flags)}." if c.lab_flags else "")


def _one_run(lo: DepthLevel, hi: DepthLevel, shared: set) -> str:
    """' One run each: no noise estimate, ...' where a ratio across depths rests on a single run at either end."""
    if lo.runs > 1 and hi.runs > 1:
        return ""
    if lo.runs == 1 and hi.runs == 1:
        head = "One run each"
    else:
        head = f"One run at {_depth(lo if lo.runs == 1 else hi, shared)} I/Os in flight"
    return (
        f" {head}: no noise estimate, so the ratio cannot be told from run-to-run noise (repeat the runs: "
        "`storagelab lab fio --repeat 3`)."
    )


def _curve_sentence(c: DepthCurve) -> str:
    what = f"`{c.workload}` {c.direction} on {c.setup}"
    flagged = f" Flagged run(s) on it: {prose.listing(c.flagged)}." if c.flagged else ""
    if getattr(c, "groups_at_a_depth", 1) > 1:  # labels apart at one depth: its mean is not of repeats
        flagged = (
            f" One depth pools runs that are not repeats of one another ({c.groups_at_a_depth} groups: labels, files "
            f"or manifest columns apart; compared at that depth below), so its mean mixes them.{flagged}"
        )
    lat = " per durable write (fio's sync percentiles)" if c.pct_kind == "sync" else ""
    shared = _shared_depths(c)
    if len(c.levels) > 1 and len({lv.outstanding for lv in c.levels}) == 1:
        return _configurations_sentence(c, what, flagged)
    if len(c.levels) == 1 and c.jobs > 1:
        lv = c.levels[0]
        counted = f"{c.jobs} runs" if c.runs == c.jobs else f"{c.jobs} jobs of {c.runs} fio run(s)"
        per = _level(lv, c.metric, "runs" if c.runs == c.jobs else "jobs")
        figure = (
            f"{per}" if not c.groups else f"{_group_figures(c)}; per job (fio's per-job rate, each job alone): {per}"
        )
        return (
            f"{what}: {counted}, all with {or_unknown(lv.outstanding)} I/Os in flight: {figure}; "
            f"nothing varies the depth.{flagged}"
        )
    if len(c.levels) == 1:
        lv = c.levels[0]
        p99 = "" if lv.p99_ns is None else f", p99 latency{lat} {fio_durable.fmt_latency(lv.p99_ns)}"
        return f"{what}: one run ({c.labels[0]}, {or_unknown(lv.outstanding)} I/Os in flight): {_level(lv, c.metric)}{p99}.{flagged}"
    clean = c.levels if c.clean_levels is None else c.clean_levels
    if len(clean) < 2:
        return _flagged_curve_sentence(c, what, clean)
    lo, hi = clean[0], clean[-1]
    left = sum(lv.runs for lv in c.levels) - sum(lv.runs for lv in clean)
    only = f" (unflagged runs only: {left} flagged run(s) left out)" if left else ""
    a, b = (lo.bw, hi.bw) if c.metric == "bandwidth" else (lo.iops, hi.iops)
    p99 = (
        ""
        if lo.p99_ns is None or hi.p99_ns is None
        else f", p99 latency{lat} {fio_durable.fmt_latency(lo.p99_ns)} -> {fio_durable.fmt_latency(hi.p99_ns)}"
        + (" (medians)" if lo.runs > 1 or hi.runs > 1 else "")
    )
    unlabelled = (
        f" {c.unlabelled_files} of its {c.files} files have no host label: if they ran on different machines, the "
        "depth is not the only difference (label host in the manifest)."
        if c.unlabelled_files and c.files > 1
        else ""
    )
    return (
        f"{what}: from {_depth(lo, shared)} to {_depth(hi, shared)} I/Os in flight, {c.metric} "
        f"{_level(lo, c.metric, unit=False)} -> {_level(hi, c.metric, unit=False)} ({b / a:.2f}x){only}{p99}."
        f"{_one_run(lo, hi, shared)}{unlabelled}{flagged}"
    )


def _flagged_curve_sentence(c: DepthCurve, what: str, clean: list[DepthLevel]) -> str:
    """A curve whose unflagged runs cover fewer than two depths: its depths and flagged runs, and no ratio (a flagged
    run's figure is not the depth's effect: README, 'never a flagged run')."""
    depths = prose.listing([str(or_unknown(lv.outstanding)) for lv in c.levels])
    kept = (
        f"only the run(s) at {or_unknown(clean[0].outstanding)} I/Os in flight are unflagged"
        if clean
        else "every run on it is flagged"
    )
    return (
        f"{what}: runs at {depths} I/Os in flight, but {kept}: no ratio across depths is stated (a flagged run "
        f"measures its test design, not the depth); their figures are in the table and chart, marked ⚠. "
        f"Flagged run(s) on it: {prose.listing(c.flagged)}."
    )


def _knee_value(k: Knee, v: float | None) -> str:
    if v is None:
        return "not measured"
    return prose.rate(v) if k.metric == "bandwidth" else f"{v:,.0f} IOPS"


def knee_sentence(k: Knee) -> str:
    """The saturation knee of one curve, or why the data cannot show one."""
    what = f"Saturation knee of `{k.workload}` {k.direction} on {k.setup}, numjobs {or_unknown(k.numjobs)}"
    left_out = [f"{k.flagged_left_out} flagged run(s)"] if k.flagged_left_out else []
    unknown = getattr(k, "unknown_left_out", 0)
    left_out += [f"{unknown} run(s) whose I/Os in flight are not known"] if unknown else []
    left = f" ({' and '.join(left_out)} left out)" if left_out else ""
    if k.reason == "too few depths":
        alone = (
            " Each file without a host label is a setup of its own: label host in the manifest to join a sweep."
            if k.setup.startswith("file ")
            else ""
        )
        return (
            f"{what}: not shown: {len(k.depths)} depth(s) of unflagged runs{left}; a knee needs "
            f"{KNEE_MIN_DEPTHS} or more (a rise, then a flattening) within one setup.{alone}"
        )
    gains = ", ".join(
        f"{a}->{b}: {round(g * 100):+d} %" for (a, b), g in zip(itertools.pairwise(k.depths), k.gains, strict=True)
    )
    threshold = f"{k.gain * 100:g} %"
    if k.reason == "still rising":
        return (
            f"{what}: none in the measured range: {k.metric} still rise by {threshold} or more per doubling of the "
            f"I/Os in flight up to {k.depths[-1]} (gain per doubling: {gains}){left}."
        )
    climbs = k.p99_climbs
    p99 = (
        "p99 was not printed"
        if climbs is None
        else f"p99 goes {fio_durable.fmt_latency(k.p99_ns)} -> {fio_durable.fmt_latency(k.next_p99_ns)}"
        + ("" if climbs else " (it does not climb)")
    )
    return (
        f"{what}: {k.depth} I/Os in flight: beyond it {k.metric} rise by less than {threshold} per doubling "
        f"({_knee_value(k, k.value)} at {k.depth}, {_knee_value(k, k.next_value)} at {k.next_depth}) while {p99} "
        f"(gain per doubling: {gains}){left}."
    )


def test_design(n, res) -> None:
    """The design checks' sentences (h1-core's ``design``), one per flagged run."""
    if n.design_sentences:
        res.findings.append(
            f"Test design: {len(n.design_sentences)} run(s) flagged (marked ⚠ in the tables and as crosses in the "
            "charts; none heads a headline or a ratio across depths):"
        )
        res.findings += n.design_sentences
    res.findings += getattr(n, "design_notes", [])
    res.findings += getattr(n, "io_time_sentences", [])  # where clat is not the I/O's time (io_time)
    res.missing += getattr(n, "design_missing", [])


def depth(n, res) -> None:
    if getattr(n, "latency_only_count", 0):
        res.findings.append(
            f"{n.latency_only_count} section(s) without IOPS or bandwidth ({', '.join(n.latency_only)}: fio prints "
            "only their latencies) are left out of IOPS against depth; the sync sections are the durable writes below."
        )
    if n.capped_jobs:
        rated = getattr(n, "capped_rate", 0)
        psync = "a synchronous engine such as psync caps the depth at 1"
        cap = "under a rate cap (rate=) an I/O can finish before the next is due"
        if rated:
            psync = cap if rated == n.capped_jobs else f"{rated} of them ran with a rate cap, and {cap}; {psync}"
        res.findings.append(
            f"{n.capped_jobs} job(s) set iodepth above 1, but fio kept one I/O in flight per job (its IO depths: "
            f"1=100%; {psync}): they are set at their real depth, 1."
        )
    if n.depth.height == 0:
        if n.runs:
            res.missing.append(f"the fio outputs of {res.selection.describe()} have no per-job results to chart")
        return
    res.frames["depth"] = n.depth
    res.file_ids += sorted(set(n.depth["file_id"].to_list()))
    seen = set()
    for c in n.curves:
        if c.other_setups and (c.workload, c.direction) not in seen:
            seen.add((c.workload, c.direction))
            setups = [c.setup, *c.other_setups]
            depths = {
                lv.outstanding
                for o in n.curves
                if (o.workload, o.direction) == (c.workload, c.direction)
                for lv in o.levels
            }
            res.findings.append(
                f"`{c.workload}` {c.direction} ran on {len(setups)} setups ({prose.listing(setups)}): a depth curve "
                "is drawn and a ratio stated within one setup only; across them the depth is not the only difference."
                if len(depths) > 1
                else f"`{c.workload}` {c.direction} ran on {len(setups)} setups ({prose.listing(setups)}), all at one "
                "depth: each is shown on its own, never pooled as repeats (label host in the manifest where they are "
                "one machine's)."
            )
        res.findings.append(Finding(curve_sentence(c), _curve_cites(n.depth, c)))
    for k in getattr(n, "knees", []):
        if len(k.depths) > 1 or k.flagged_left_out or getattr(k, "unknown_left_out", 0):  # one depth: no curve
            res.findings.append(Finding(knee_sentence(k), _knee_cites(n.depth, k)))
    if "workload_inferred" in n.depth.columns:
        inferred = n.depth.filter(n.depth["workload_inferred"].is_not_null())
        durable = {r.file_id: r for r in n.durable.runs}
        rows = inferred.select("file_id", "label", "workload_inferred").unique(maintain_order=True).iter_rows()
        for fid, label, note in rows:
            d = durable.get(fid)
            res.findings.append(f"{label}: {fio_durable.inferred_note(d) if d else note}.")
    job_basis = n.depth.filter(n.depth["bw_basis"] == "job").height
    if job_basis:
        res.findings.append(
            f"{job_basis} row(s) come from reporting groups that ran several different jobs: a row's bandwidth is fio's "
            "per-job rate, labelled per job; the run's bandwidth is its group's (the group's I/O over its elapsed "
            "time, as in 05), stated with the curve."
        )
    rounded = fio_depth.rounded_note(n.depth)
    res.findings += [rounded] if rounded else []
    res.findings += [n.repeat_grouping] if getattr(n, "repeat_grouping", "") else []
    res.findings += [point_sentence(p) for p in n.comparisons]


def _rows_at(depth, workload: str, direction: str, setup: str, outstanding=None, clean: bool = False, level=None):
    """The depth table's rows of one curve (at one depth, where given; of one level's configuration, iodepth x
    numjobs, where given; unflagged only, where asked)."""
    if depth.is_empty() or "setup" not in depth.columns:
        return depth.head(0)
    rows = depth.filter((depth["workload"] == workload) & (depth["direction"] == direction) & (depth["setup"] == setup))
    if outstanding is not None:
        rows = rows.filter(rows["outstanding"] == outstanding)
    for col in ("iodepth", "numjobs"):
        if level is not None and getattr(level, col) is not None and col in rows.columns:
            rows = rows.filter(rows[col] == getattr(level, col))
    return rows.filter(~rows["suspect"]) if clean and "suspect" in rows.columns else rows


def _shown(lv: DepthLevel, metric: str) -> str:
    """A level's figure as _level writes it first (without a unit for IOPS)."""
    return prose.rate(lv.bw) if metric == "bandwidth" else f"{lv.iops:,.0f}"


def _curve_cites(depth, c: DepthCurve) -> list:
    """The numbers of a curve's sentence and the job rows (their fio output lines) they came from: the first and last
    unflagged depths' figures and their ratio; a curve of one depth, its figure."""
    clean = c.levels if c.clean_levels is None else c.clean_levels
    if len(c.levels) > 1 and len({lv.outstanding for lv in c.levels}) == 1:  # configurations at one depth: each
        return [
            cite(_shown(lv, c.metric), _rows_at(depth, c.workload, c.direction, c.setup, lv.outstanding, level=lv))
            for lv in c.levels
        ]
    at = [clean[0], clean[-1]] if len(clean) >= 2 and len(c.levels) > 1 else c.levels[:1]
    rows = [_rows_at(depth, c.workload, c.direction, c.setup, lv.outstanding, len(at) == 2, lv) for lv in at]
    cites = []
    for lv, r in zip(at, rows, strict=True):
        cites.append(cite(_shown(lv, c.metric), r, f"mean of {lv.runs} rows" if lv.runs > 1 else None))
        if lv.runs > 1 and not (len(c.levels) == 1 and c.jobs > 1 and c.groups):  # '(mean of N runs, low to high)'
            cites += _span_cites(lv, c.metric, r)
    if len(at) == 2 and cites[0].inputs and cites[1].inputs:
        a, b = (at[0].bw, at[1].bw) if c.metric == "bandwidth" else (at[0].iops, at[1].iops)
        cites.append(cite(f"{b / a:.2f}x", cites[0].inputs + cites[1].inputs, f"{c.metric} at the last / first depth"))
    one_run = len(c.levels) == 1 and c.jobs <= 1
    if not (one_run or len(at) == 2) or (len(at) == 2 and (at[0].p99_ns is None or at[1].p99_ns is None)):
        return cites  # the sentence states a p99 for one run, or for both ends of a curve where both have one
    p99 = "p99 of one run" if all(lv.runs == 1 for lv in at) else "median p99 of the depth's runs"
    return cites + [
        cite(fio_durable.fmt_latency(lv.p99_ns), r, p99)
        for lv, r in zip(at, rows, strict=True)
        if lv.p99_ns is not None
    ]


def _span_cites(lv: DepthLevel, metric: str, rows) -> list:
    """The lowest and highest of a level's rows (``_level``'s range), each its own row's lines."""
    col, low, high = (
        ("bw_bytes_per_s", lv.bw_low, lv.bw_high) if metric == "bandwidth" else ("iops", lv.iops_low, lv.iops_high)
    )
    if rows.is_empty() or col not in rows.columns:
        return []
    shown = (prose.rate(low), prose.rate(high)) if metric == "bandwidth" else (f"{low:,.0f}", f"{high:,.0f}")
    return [cite(text, rows.filter(rows[col] == v)) for text, v in zip(shown, (low, high), strict=True)]


def _knee_cites(depth, k: Knee) -> list:
    """The knee's two figures (at the knee and the next depth) and their runs' lines."""
    if k.depth is None:
        return []
    rows = [_rows_at(depth, k.workload, k.direction, k.setup, d, True) for d in (k.depth, k.next_depth)]
    if k.numjobs is not None:  # one knee per numjobs: the depth at that numjobs only
        rows = [r.filter(r["numjobs"] == k.numjobs) for r in rows]
    return [cite(_knee_value(k, v), r) for v, r in zip((k.value, k.next_value), rows, strict=True) if v is not None]


def durable(n, res) -> None:
    d = n.durable
    if not d.runs:
        return
    res.frames["durable"] = fio_durable.table(d)
    res.file_ids += sorted({r.file_id for r in d.runs})
    synced = sum(not r.o_sync for r in d.runs)
    osync = len(d.runs) - synced
    parts = []
    if synced:
        parts.append(
            f"{synced} job(s) with fsync/fdatasync: the latency of one durable write is fio's sync percentiles, as "
            "printed (three significant figures); write()'s own latency is not a durable write"
        )
    if osync:
        parts.append(
            f"{osync} job(s) with O_SYNC (fio's sync=1): each write returns once it is durable, so its own completion "
            "latency is the latency of one durable write and every write is one (fio prints no sync percentiles "
            "for them)"
        )
    res.findings.append(f"Durable writes ({'; '.join(parts)}).")
    for r in d.runs:
        res.findings.append(fio_durable.run_sentence(r, r.too_short))
    for p in d.pairs:
        res.findings.append(fio_durable.pair_sentence(p))
    for workload, rs in fio_durable.ranking(d.runs):
        if len(rs) > 2 or not d.pairs:
            res.findings.append(fio_durable.ranking_sentence(workload, rs))
    if not d.pairs and any(r.log_devices for r in d.runs) != all(r.log_devices for r in d.runs):
        res.missing.append(
            "a SLOG comparison needs runs of one pool with and without a log device: label `pool` (and "
            "`log_devices`) in the manifest"
        )
    if not all(_off_zfs(r) for r in d.runs) and all(r.zfs_sync is None and r.zfs_logbias is None for r in d.runs):
        res.missing.append(
            "the sync and logbias settings of the durable-write runs' datasets are not known, so no pair is compared by "
            "them: add `zfs get sync,logbias` output labelled with the run's host and pool"
        )


def _off_zfs(r) -> bool:
    """A durable-write run its labels place off ZFS: a stack label without 'zfs', and no pool or ZFS version. A
    dataset's sync and logbias settings do not apply to it (ext4 or tmpfs has none); a run without a stack label
    may be on ZFS."""
    setup = dict(r.setup)
    stack = setup.get("stack", "").lower()
    return bool(stack) and "zfs" not in stack and not (r.pool or setup.get("zfs_version"))


def time_series(n, res, steady) -> None:
    if n.unitless_logs:
        res.missing.append(
            f"{prose.listing(n.unitless_logs)}: latency logs without fio's priority column (fio 2.x logged usec, early "
            "fio 3.x ns; the log does not say which), not charted"
        )
    untied = getattr(n, "untied_logs", [])
    if untied:
        names = sorted({p.rsplit("/", 1)[-1] for p in untied})
        res.missing.append(
            f"{len(untied)} fio log file(s) sit in the folder of a selected run but are tied to no run "
            f"({prose.listing(names)}): their name's prefix is neither a job "
            "name nor a write_*_log= value of the fio output beside them; give them that run's labels in the "
            "manifest, or keep the name fio gives them (NAME_bw.N.log for --write_bw_log=NAME)"
        )
    if not n.log_ids and not untied:
        res.missing.append(
            f"no fio log files for {res.selection.describe()}: add --write_bw_log=NAME --write_iops_log=NAME "
            "--write_lat_log=NAME --log_avg_msec=1000 to fio and keep the NAME_*.log files beside "
            "its output (storagelab lab fio does this)"
        )
    if not n.log_ids:
        return
    if n.partial_windows:
        res.findings.append(
            f"{n.partial_windows} window(s) of summed bandwidth or IOPS in which only some of the run's jobs logged a "
            f"sample ({prose.listing(n.partial_runs)}; fio logs each job's last sample when that job ends) are left "
            "out: their sum is not the run's total."
        )
    if n.series.height:
        res.frames["series"] = n.series
        res.file_ids += n.log_ids
    rule = (
        f"SNIA PTS: {steady.rounds} consecutive log windows (rounds) whose max - min is at most "
        f"{steady.excursion_pct:g} % of their mean and whose best-fit line moves at most {steady.slope_pct:g} %"
    )
    res.findings.append(f"Steady state by {rule}.")
    said = n.steady
    if len(n.steady) >= fio_steady_table.TABLE_FROM:  # a lab study's hundreds of series: one table, the rest said
        res.frames["steady_states"] = fio_steady_table.table(n.steady, _value)
        res.findings.append(fio_steady_table.summary(n.steady))
        said = fio_steady_table.said_apart(n.steady)
    for v in said:
        res.findings.append(Finding(steady_sentence(v, steady), _steady_cites(n.series, v)))


def _value(kind: str, v: float) -> str:
    if kind == "bw":
        return prose.rate(v)
    if kind == "iops":
        return f"{v:,.0f} IOPS"
    return fio_durable.fmt_latency(v)


def steady_sentence(v, steady) -> str:
    """One series' steady-state verdict, with its dips far below its median where it has them."""
    return _verdict_sentence(v, steady) + _dips_sentence(v)


def _span(a: float, b: float) -> str:
    return f"{a:g} s" if a == b else f"{a:g}-{b:g} s"


def dips_text(v) -> str:
    """Where a series dips far below its median (``fio_timeseries.low_dips``): '82.8 MiB/s at 24-25 s, ... (median
    364.2 MiB/s)'."""
    where = ", ".join(f"{_value(v.kind, low)} at {_span(a, b)}" for a, b, low in v.dips)
    return f"{where} (median {_value(v.kind, v.median)})"


def _dips_sentence(v) -> str:
    if not v.dips:
        return ""
    return (
        f" Dips to {dips_text(v)}: a third of its median or less, and it recovers (a stall or a drop, not its start "
        "or end); the run is flagged and kept out of comparisons."
    )


def _verdict_sentence(v, steady) -> str:
    name = f"{v.name or v.run} {v.kind} {v.direction}"  # name: as much of its path as tells it apart
    if v.state == "two regimes":
        return (
            f"{name}: two regimes, not steady: {v.segment_rounds} windows from {v.start_s:g} to {v.end_s:g} s at "
            f"{_value(v.kind, v.mean)}, {v.mean / v.rest_mean:.1f}x the other {v.rounds - v.segment_rounds} windows' "
            f"{_value(v.kind, v.rest_mean)} (log windows; a segment of {REGIME_MIN_ROUNDS} or more windows at "
            f"{REGIME_FACTOR:g}x the median or more); the run's average describes neither, and the log cannot say which "
            "is the devices' own rate (one the devices cannot sustain points to a cache)."
        )
    if v.state == "maxima":
        return (
            f"{name}: the log holds each window's maximum (log_max_value=1), not its mean: {v.rounds} windows, "
            f"maxima {_value(v.kind, v.low)} to {_value(v.kind, v.high)}; a steady state of means cannot be judged from it."
        )
    if v.state == "too short" and v.run_s is not None:
        return (
            f"{name}: the run lasted {v.run_s:.3g} s, shorter than the design checks' {design.MIN_ELAPSED_S:g} s: too "
            "short to judge a steady state."
        )
    if v.state == "too short":
        return (
            f"{name}: {v.rounds} log window(s), fewer than the {steady.rounds} rounds of one SNIA PTS window: too "
            "short to judge a steady state (run longer, or log shorter windows with log_avg_msec)."
        )
    if v.state == "not steady" and v.left_value is not None:
        way = "falls" if v.left_value < v.mean else "rises"
        return (
            f"{name}: not steady: {way} to {_value(v.kind, v.left_value)} at {_span(v.left_from_s, v.left_to_s)}, "
            f"outside +-{steady.excursion_pct:g} % of the {_value(v.kind, v.mean)} of its windows from {v.start_s:g} "
            f"to {v.end_s:g} s (the first {steady.rounds} that meet both criteria); no such window holds to the end "
            f"of its {v.rounds} windows (SNIA PTS: the steady state lasts to the end of the run)."
        )
    if v.state == "not steady":
        return f"{name}: not steady: no {steady.rounds} consecutive windows of its {v.rounds} meet both criteria."
    return (
        f"{name}: steady in the windows from {v.start_s:g} to {v.end_s:g} s at {_value(v.kind, v.mean)} (excursion "
        f"{v.excursion_pct:.1f} %, slope {v.slope_pct:.1f} % of the mean; {v.rounds} windows logged)."
    )


def _windows(series, v, phase: str, span: tuple[float, float] | None = None) -> tuple[dict, ...]:
    """The log lines of a verdict's windows in ``phase`` ('steady window', 'high regime', ...; judge_steady's marks),
    or from ``span``'s first to its last window (seconds), consecutive lines of one file as one range."""
    if series.is_empty() or "phase" not in series.columns or "line_start" not in series.columns:
        return ()
    t = series["time_ns"] / 1e9
    where = (series["phase"] == phase) if span is None else ((t >= span[0] - 1e-6) & (t <= span[1] + 1e-6))
    rows = series.filter(
        (series["run"] == v.run) & (series["kind"] == v.kind) & (series["direction"] == v.direction) & where
    )
    out: list[dict] = []
    for s in sorted(lines_of(rows), key=lambda s: (s["path"], s["line_start"])):
        last = out[-1] if out else None
        if last and last["path"] == s["path"] and s["line_start"] <= last["line_end"] + 1:
            last["line_end"] = max(last["line_end"], s["line_end"])
        else:
            out.append(dict(s))
    return tuple(out)


def _steady_cites(series, v) -> list:
    """A steady-state sentence's numbers and the log lines of the windows they are the mean (or range) of."""
    kind = "the windows' logged values"
    if v.state == "two regimes":
        high, rest = _windows(series, v, "high regime"), _windows(series, v, "other regime")
        return [
            cite(_value(v.kind, v.mean), high, f"mean of the {v.segment_rounds} high-regime windows"),
            cite(f"{v.mean / v.rest_mean:.1f}x", high + rest, "high-regime mean / the other windows' mean"),
            cite(_value(v.kind, v.rest_mean), rest, f"mean of the other {v.rounds - v.segment_rounds} windows"),
        ]
    if v.state == "maxima":
        every = _windows(series, v, "maxima")
        return [
            cite(_value(v.kind, v.low), every, f"lowest of {kind}"),
            cite(_value(v.kind, v.high), every, f"highest of {kind}"),
        ]  # noqa: E501
    if v.state == "not steady" and v.left_value is not None:
        first = _windows(series, v, "", (v.start_s, v.end_s))
        left = _windows(series, v, "", (v.left_from_s, v.left_to_s))
        return [
            cite(_value(v.kind, v.left_value), left, "the farthest value outside the band, and its neighbours"),
            cite(_value(v.kind, v.mean), first, "mean of the first windows that meet both criteria"),
        ]
    if v.state == "steady":
        window = _windows(series, v, "steady window")
        return [
            cite(_value(v.kind, v.mean), window, "mean of the steady window's values"),
            cite(f"{v.excursion_pct:.1f} %", window, "(max - min) / mean of the window"),
            cite(f"{v.slope_pct:.1f} %", window, "the best-fit line's rise across the window / its mean"),
        ]
    return []


def histograms(n, res) -> None:
    if n.histogram.is_empty():
        return
    res.frames["histogram"] = n.histogram
    how = {
        "JSON+ clat": "fio's JSON+ completion latency bins",
        "JSON+ lat": "fio's JSON+ total latency bins",
        "clat_hist log": "write_hist_log completion latency logs",
    }
    res.findings.append(
        "Latency histograms (share of each run's I/Os per latency bucket): "
        + "; ".join(
            f"{k} from {how[src]}, 10 buckets per factor of 10"
            if src in how
            else f"{k} from fio's printed distribution (its own buckets, all directions together)"
            for src, k in n.histogram_sources.items()
        )
        + "."
    )
    synced = [r for r in n.durable.runs if not r.o_sync]
    if synced:
        res.findings.append(
            f"For the {len(synced)} fsync/fdatasync run(s) the histogram is write()'s latency into the page "
            "cache (fio prints no distribution of its sync calls): the latency of a durable write is the sync "
            "percentiles above."
        )


def _weak(row: dict) -> str:
    """' (⚠ just above the labelled limit (weak))' for a headline run whose only flag is weak, else ''."""
    return f" ({row['flag']})" if row.get("flag") else ""


def headline(n, res) -> None:
    """The headline: the highest IOPS (blocks under 64 KiB) and bandwidth (64 KiB and more), the lowest durable-write
    p99, each of a run no design check or firm plausibility flag marks (a weak flag is shown beside it)."""
    if n.depth.height == 0 and not n.durable.runs:
        return
    res.headline = {"runs": str(n.runs)}
    parts = []
    if n.best_iops is not None:
        b = n.best_iops
        res.headline["highest IOPS (blocks under 64 KiB)"] = (
            f"{b['label']}: {b['iops']:,.0f} IOPS ({b['workload'].split(' ')[0]}, QD "
            f"{qd_label(b['iodepth'], b['numjobs'])}){_weak(b)}"
        )
        parts.append(f"highest IOPS {b['label']} at {b['iops']:,.0f} ({b['workload'].split(' ')[0]}){_weak(b)}")
    if n.best_bw is not None:
        b = n.best_bw
        res.headline["highest bandwidth (blocks of 64 KiB and more)"] = (
            f"{b['label']}: {prose.rate(b['bw_bytes_per_s'])} ({b['workload'].split(' ')[0]}){_weak(b)}"
        )
        parts.append(f"highest bandwidth {b['label']} at {prose.rate(b['bw_bytes_per_s'])}{_weak(b)}")
    for key, title in (
        ("iops", "highest IOPS (blocks under 64 KiB)"),
        ("bw", "highest bandwidth (blocks of 64 KiB and more)"),
    ):
        kinds = getattr(n, "unranked", {}).get(key)
        if kinds:
            res.headline[title] = (
                f"not ranked: the unflagged runs are of {len(kinds)} workloads; runs are compared within one "
                "workload only (the findings above, per workload)"
            )
            parts.append(f"{title}: not ranked across {len(kinds)} workloads")
    durable = [r for r in n.durable.runs if r.p99_ns and not r.flag]
    if durable:
        best = min(durable, key=lambda r: r.p99_ns)
        res.headline["lowest durable-write p99"] = f"{best.label}: {fio_durable.fmt_latency(best.p99_ns)}"
    elif n.durable.runs:
        res.headline["lowest durable-write p99"] = "every durable-write run is flagged (too short): none heads it"
    above = sum(n.flagged_above.values())
    if above:
        res.caveats.append(
            f"{above} run(s) of the headline's workload faster than it are flagged (test design: stall, short, "
            "cache; or 05's plausibility)"
        )
    for key, title in (
        ("iops", "highest IOPS (blocks under 64 KiB)"),
        ("bw", "highest bandwidth (blocks of 64 KiB and more)"),
    ):
        if getattr(n, "all_flagged", {}).get(key):
            runs = n.all_flagged[key]
            which = "its one run is" if runs == 1 else f"all {runs} of its runs are"
            res.headline[title] = f"none: {which} flagged (Test design above)"
            parts.append(f"{title}: none, {which} flagged")
    text = "; ".join(parts)
    res.verdict = (
        (text[:1].upper() + text[1:] + "." if parts else "")
        + (f" {above} faster run(s) of its workload are flagged and left out of the headline." if above else "")
    ).strip()

"""fio results per run and direction against I/Os in flight (notebook 08): the job rows of the final
reports with their clat (else lat) percentiles (``load_summary``, ``summary``), the threads of one job as one run
(``per_run``), each job's workload (``with_job_workloads``), and per workload the rows ordered by iodepth x
numjobs (``against_depth``, fio-plot's iodepth/numjobs charts)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from . import design, fio_runs, io_time, repeat_groups
from .db import frame

PERCENTILES = {50.0: "p50_ns", 99.0: "p99_ns", 99.9: "p99_9_ns"}
WORKLOAD = ("rw", "block_size_bytes", "direction")


def load_summary(con, file_ids: Sequence[int] | None = None) -> pl.DataFrame:
    """fio_jobs x fio_results (final reports) with the clat (else lat) percentiles 50/99/99.9 pivoted."""
    where = "" if file_ids is None else "AND list_contains(?::INTEGER[], j.file_id)"
    params = [] if file_ids is None else [sorted({int(i) for i in file_ids})]
    jobs = frame(
        con,
        f"""
        SELECT f.file_id, f.path, f.sha256, j.line_start, j.line_end, f.label, j.job_index, j.doc_index, j.jobname, j.groupid, j.rw, j.block_size_bytes,
               j.iodepth,
               coalesce(j.numjobs, j.jobs) AS numjobs, j.ioengine, j.options_json,
               coalesce(f.command, c.command) AS command, r.direction, r.iops,
               r.bw_bytes_per_s,
               r.bw_stdev_bytes_per_s, r.bw_mean_bytes_per_s, r.bw_samples, r.iops_stdev, r.iops_mean,
               r.iops_samples, r.slat_mean_ns, r.clat_mean_ns, r.lat_mean_ns, r.total_ios, r.io_bytes,
               j.layout_bytes, EXISTS (SELECT 1 FROM fio_results s WHERE s.file_id = j.file_id
                                         AND s.job_index = j.job_index AND s.direction = 'sync') AS has_sync,
               -- fio's IO depths distribution: 100 % at 1 = never more than one I/O in flight (a synchronous engine)
               (SELECT d.pct FROM fio_iodepths d WHERE d.file_id = j.file_id AND d.job_index = j.job_index
                  AND d.kind = 'depth' AND d.bucket = '1') AS depth1_pct, {fio_runs.SETUP_OF_OPTIONS_SQL}
        FROM fio_jobs j JOIN fio_results r USING (file_id, job_index) JOIN files f USING (file_id)
        LEFT JOIN (SELECT *, lead(doc_index) OVER (PARTITION BY file_id ORDER BY doc_index) AS next_doc FROM fio_commands) c
          ON c.file_id = j.file_id AND j.doc_index >= c.doc_index AND (c.next_doc IS NULL OR j.doc_index < c.next_doc)
        WHERE j.is_final {where} ORDER BY f.path, j.job_index, r.direction""",
        params,
    )
    pct = frame(
        con,
        f"""
        SELECT p.file_id, p.job_index, p.direction, p.kind, p.percentile, p.latency_ns
        FROM fio_percentiles p JOIN fio_jobs j USING (file_id, job_index)
        WHERE j.is_final AND p.percentile IN (50, 99, 99.9) {where.replace("j.file_id", "p.file_id")}""",
        params,
    )
    return summary(jobs, pct)


def summary(jobs: pl.DataFrame, percentiles: pl.DataFrame) -> pl.DataFrame:
    """Add p50_ns, p99_ns, p99_9_ns (and ``pct_kind``: clat, or lat where a job has no clat percentiles, or where
    clat is not the I/O's time: ``io_time.apply``, which adds ``io_time_reason``) to rows keyed by file_id,
    job_index, direction."""
    key = ["file_id", "job_index", "direction"]
    if percentiles.is_empty():
        return io_time.apply(
            jobs.with_columns(
                *(pl.lit(None, pl.Float64).alias(c) for c in PERCENTILES.values()),
                pl.lit(None, pl.Utf8).alias("pct_kind"),
            ),
            percentiles,
        )
    p = percentiles.filter(pl.col("kind").is_in(["clat", "lat"]))
    # clat first; lat only for (job, direction) without clat percentiles
    best = p.group_by(key).agg(pl.col("kind").sort().first().alias("pct_kind"))  # 'clat' < 'lat'
    p = p.join(best, on=key).filter(pl.col("kind") == pl.col("pct_kind"))
    wide = (
        p.with_columns(pl.col("percentile").replace_strict(PERCENTILES, default=None).alias("col"))
        .filter(pl.col("col").is_not_null())
        .pivot(on="col", index=[*key, "pct_kind"], values="latency_ns", aggregate_function="first")
    )
    for c in PERCENTILES.values():
        if c not in wide.columns:
            wide = wide.with_columns(pl.lit(None, pl.Float64).alias(c))
    # where submission holds the I/O's time (or the IOPS contradict clat), lat: io_time
    return io_time.apply(
        jobs.join(wide.select(*key, *PERCENTILES.values(), "pct_kind"), on=key, how="left"), percentiles
    )


def qd_label(iodepth, numjobs) -> str:
    """'8 x 4' (I/O depth x jobs), '?' for what the output does not say (terse output, no command)."""
    return f"{or_unknown(iodepth)} x {or_unknown(numjobs)}"


def or_unknown(value) -> str:
    return "?" if value is None else str(value)


def per_run(summary_df: pl.DataFrame) -> pl.DataFrame:
    """One row per run and direction: the threads of one job (fio prints one object per thread of
    ``numjobs=N`` unless group_reporting is on; they share file, report, reporting group and job name)
    combined: fio runs appended to one file (the final report of each, ``doc_index``) stay apart.
    IOPS and bandwidth (and their per-sample means) are summed and their per-sample stdevs combined as
    independent (root of the summed variances); mean latencies are weighted by IOPS; the percentiles are
    the slowest thread's (percentiles of threads cannot be added: ``pct_kind`` says "clat, slowest of N
    threads"). ``threads`` = the job objects combined (1 for a group-reported job)."""
    if summary_df.is_empty():
        return summary_df.with_columns(pl.lit(None, pl.UInt32).alias("threads"))
    key = [c for c in ("file_id", "doc_index", "groupid", "jobname", "direction") if c in summary_df.columns]
    rest = [c for c in summary_df.columns if c not in key]
    summed = ["iops", "bw_bytes_per_s", "bw_mean_bytes_per_s", "iops_mean", "total_ios", "io_bytes"]
    slowest = list(PERCENTILES.values())
    iops = pl.col("iops")
    weighted = {
        c: pl.when(iops.sum() > 0).then((pl.col(c) * iops).sum() / iops.sum()).otherwise(pl.col(c).mean())
        for c in ("clat_mean_ns", "lat_mean_ns")
    }
    aggs = []
    for c in rest:
        if c in summed:
            aggs.append(pl.when(pl.col(c).is_null().all()).then(None).otherwise(pl.col(c).sum()).alias(c))
        elif c in ("bw_stdev_bytes_per_s", "iops_stdev"):
            aggs.append(pl.when(pl.col(c).is_null().all()).then(None).otherwise((pl.col(c) ** 2).sum().sqrt()).alias(c))
        elif c in ("bw_samples", "iops_samples"):
            aggs.append(pl.col(c).min().alias(c))
        elif c in weighted:
            aggs.append(weighted[c].alias(c))
        elif c in slowest:
            aggs.append(pl.col(c).max().alias(c))
        elif c == "numjobs":  # N thread records of a job without group_reporting: N jobs, whatever each says
            aggs.append(
                pl.when(pl.len() > 1)
                .then(pl.max_horizontal(pl.col(c).max(), pl.len()))
                .otherwise(pl.col(c).first())
                .alias(c)
            )
        else:
            aggs.append(pl.col(c).first().alias(c))
    out = summary_df.group_by(key, maintain_order=True).agg(*aggs, pl.len().cast(pl.UInt32).alias("threads"))
    return out.with_columns(
        pl.when(pl.col("threads") > 1)
        .then(pl.col("pct_kind") + pl.lit(", slowest of ") + pl.col("threads").cast(pl.String) + pl.lit(" threads"))
        .otherwise(pl.col("pct_kind"))
        .alias("pct_kind")
    ).select(summary_df.columns + ["threads"])


def with_job_workloads(summary_df: pl.DataFrame) -> pl.DataFrame:
    """Each job's own workload (``workload``: rw, bs, ioengine, direct, sync, size, runtime; not the depth) from
    its own options, then the file's command (a file may hold jobs of several workloads: a kbench output runs 12
    in one group), and the iodepth and numjobs it runs at where the output does not print them (fio's
    defaults, the command); ``label`` falls back to the path."""
    with_wl = fio_runs.with_workloads(summary_df)
    label = fio_runs.run_label(summary_df)
    return summary_df.with_columns(
        # a job whose mode or block size is unknown is set against no other: its workload names it alone
        workload=pl.when(with_wl["workload_known"])
        .then(with_wl["workload_at_any_depth"])
        .otherwise(
            with_wl["workload_at_any_depth"] + pl.lit(" (") + label + pl.lit(": ") + pl.col("jobname") + pl.lit(")")
        ),
        iodepth=pl.coalesce(pl.col("iodepth").cast(pl.Int64), with_wl["wl_iodepth"].cast(pl.Int64, strict=False)),
        block_size_bytes=pl.coalesce(
            pl.col("block_size_bytes").cast(pl.Int64), with_wl["wl_bs"].cast(pl.Int64, strict=False)
        ),
        numjobs=pl.coalesce(pl.col("numjobs").cast(pl.Int64), with_wl["wl_numjobs"].cast(pl.Int64, strict=False)),
        label=label,
        workload_inferred=with_wl["workload_inferred"],
    )


def against_depth(summary_df: pl.DataFrame, by: Sequence[str] = WORKLOAD) -> pl.DataFrame:
    """Per workload (rw, block size, direction), rows ordered by iodepth then numjobs, with
    ``outstanding`` = iodepth x numjobs (I/Os in flight) and IOPS/bandwidth relative to the workload's
    row with the fewest I/Os in flight (``x_iops``, ``x_bw``)."""
    df = summary_df.with_columns((pl.col("iodepth") * pl.col("numjobs")).alias("outstanding"))
    df = df.sort([*by, "outstanding", "iodepth", "numjobs"], nulls_last=True)
    first = pl.col("iops").first().over(list(by))
    first_bw = pl.col("bw_bytes_per_s").first().over(list(by))
    return df.with_columns(
        (pl.col("iops") / first).alias("x_iops"), (pl.col("bw_bytes_per_s") / first_bw).alias("x_bw")
    )


def depth_lines(depth: pl.DataFrame) -> list[str]:
    """``against_depth`` as text, one line per run and direction: label, QD iodepth x numjobs, IOPS and MiB/s of the
    run (its reporting group's), the p50/p99/p99.9 latency in ms where fio printed percentiles ('sync': of the
    fsync/fdatasync calls, one per durable write), and a flagged run's marker ('⚠ overran, stall'); 'MiB/s*': the
    bandwidth as fio's text output printed it, rounded (``rounded_note``)."""
    out = []
    for r in depth.iter_rows(named=True):
        line = (
            f"{(r['label'] or r['path'])[:36]:<36} {r['direction']:<5} QD {qd_label(r['iodepth'], r['numjobs'])}: "
            f"{r['iops']:>10,.0f} IOPS {r['bw_bytes_per_s'] / 2**20:9.1f} MiB/s{'*' if r.get('bw_rounded') else ''}"
        )
        if any(r[c] is not None for c in PERCENTILES.values()):
            line += f"  {'sync ' if r.get('pct_kind') == 'sync' else ''}p50/p99/p99.9 " + " / ".join(
                "n/a" if r[c] is None else f"{r[c] / 1e6:.3f}" for c in PERCENTILES.values()
            )
            line += " ms"
        elif (r.get("pct_kind") or "").startswith("lat mean") and r.get("lat_mean_ns") is not None:
            line += f"  lat mean {r['lat_mean_ns'] / 1e6:.3f} ms (clat is not its time: submission holds it)"
        if r.get("flag"):
            line += f"  {r['flag'] if r['flag'].startswith('⚠') else '⚠ ' + r['flag']}"
        out.append(line)
    return out


def rounded_note(depth: pl.DataFrame) -> str | None:
    """A sentence for the table's 'MiB/s*' rows (``bw_rounded``: fio's text output prints the group's bw= to 3-4
    significant digits), with the widest gap between that figure and the exact IOPS x the block size; None where
    no row is rounded."""
    if depth.is_empty() or "bw_rounded" not in depth.columns:
        return None
    rounded = depth.filter(pl.col("bw_rounded"))
    if rounded.is_empty():
        return None
    runs = rounded.select("file_id", "doc_index").n_unique()
    text = (
        f"MiB/s marked * ({runs} run(s) of fio's text output) are as fio printed them, rounded to 3-4 significant "
        "digits (its group line's bw=; where that figure disagrees with the line's own io/run, io/run: the ingest's "
        "warning names the line); the IOPS beside them are exact (fio's I/O count over the run time), so the two "
        "columns can disagree"
    )
    group = pl.col("bw_basis") == "group" if "bw_basis" in rounded.columns else pl.lit(True)
    gap = (
        rounded.filter(group & (pl.col("block_size_bytes") > 0))
        .with_columns(implied=pl.col("iops") * pl.col("block_size_bytes"))
        .with_columns(off=(pl.col("bw_bytes_per_s") / pl.col("implied") - 1).abs())
    )
    gap = gap.filter(pl.col("off").is_not_null()).sort("off", descending=True)
    if gap.is_empty() or gap["off"][0] < 0.0005:
        return text + " (here by under 0.05 %)."
    r = gap.row(0, named=True)
    return (
        f"{text}, here by up to {r['off'] * 100:.1f} %: {r['label']}, {r['iops']:,.0f} IOPS x {r['block_size_bytes'] / 1024:g} "
        f"KiB = {r['implied'] / 2**20:.2f} MiB/s beside {r['bw_bytes_per_s'] / 2**20:.2f} MiB/s."
    )


def config(df: pl.DataFrame) -> pl.Expr:
    """What one run was measured on: 'host | stack | layout | devices' (devices where labelled), naming a label
    that is missing ('host not labelled', 'layout not labelled'; was '? | ? 1 1')."""
    host = pl.col("host").cast(pl.Utf8).fill_null("host not labelled")
    stack = pl.col("stack").cast(pl.Utf8).fill_null("stack not labelled")
    known = pl.all_horizontal(pl.col(c).is_not_null() for c in ("vdev_type", "vdev_count", "vdev_width"))
    layout = (
        pl.when(known)
        .then(
            pl.concat_str(
                [
                    pl.col("vdev_type"),
                    pl.lit(" "),
                    pl.col("vdev_count").cast(pl.Utf8),
                    pl.lit("x"),
                    pl.col("vdev_width").cast(pl.Utf8),
                ]
            )
        )
        .when(pl.col("vdev_type").is_not_null())
        .then(pl.col("vdev_type").cast(pl.Utf8) + pl.lit(" (vdev count or width not labelled)"))
        .otherwise(pl.lit("layout not labelled"))
    )
    devices = pl.col("devices").cast(pl.Utf8) if "devices" in df.columns else pl.lit(None, pl.Utf8)
    return pl.concat_str([host, stack, layout, devices], separator=" | ", ignore_nulls=True)


def with_run_bandwidth(summ: pl.DataFrame, runs: pl.DataFrame) -> pl.DataFrame:
    """Each run's bandwidth as fio's group line gives it (``runs``: one row per file, report, group and
    direction; total I/O over the group's elapsed time), and its IOPS as the group's I/Os over that time, where
    the reporting group holds this job alone (its threads, without group_reporting: 2 jobs of 653 and 1132 MiB/s
    are 1306.1 MiB/s for 256 MiB in 0.196 s, not 1785.8). ``bw_basis`` says which: 'group' or, where a group ran
    several different jobs, 'job' (fio's per-job rate, the only figure of that job alone). Every row also keeps its
    run's own figures (``run_bw_bytes_per_s``, ``run_iops``: the group's, ``fio_runs.run_bandwidth``) and
    ``group_rows`` (the rows of its group and direction), so that a group of several jobs is stated by its group
    figure too. Adds ``config`` and ``setup`` (config and fio version: a depth curve is drawn within one setup
    only; runs of one config whose other manifest columns differ, notes or recordsize, are setups apart, named by
    what differs), and ``repeats_of``: the run's group of repeats (``repeat_groups``: the setup, and its label and
    every manifest column agreeing), named by its setup and what tells it from another group of that setup."""
    key = ["file_id", "doc_index", "groupid", "direction"]
    named = repeat_groups.with_names(runs.with_columns(setup=_setup(runs, config(runs))), "setup", "repeats_of")
    named = repeat_groups.with_names(named, "setup", "curve_of", label=False)
    group = named.select(
        *key,
        "repeats_of",
        "curve_of",
        # fio's text output prints the group's bw= rounded (3-4 significant digits: 'bw=145MiB/s'); JSON is exact
        (~pl.col("exact")).fill_null(False).alias("bw_rounded")
        if "exact" in runs.columns
        else pl.lit(False).alias("bw_rounded"),
        pl.col("bw_bytes_per_s").alias("group_bw"),
        pl.col("run_max_ns").alias("group_ns"),
        pl.col("iops").alias("group_iops"),
        "host",
        "tool_version",
        config(runs).alias("config"),
        (pl.col("notes") if "notes" in runs.columns else pl.lit(None, pl.String)).alias("run_notes"),
    ).unique(key, keep="first")
    alone = pl.col("jobname").n_unique().over("file_id", "doc_index", "groupid") == 1
    out = summ.join(group.cast({k: summ.schema[k] for k in key if k in summ.columns}), on=key, how="left")
    use = alone & pl.col("group_bw").is_not_null()
    return out.with_columns(
        bw_bytes_per_s=pl.when(use).then(pl.col("group_bw")).otherwise(pl.col("bw_bytes_per_s")),
        iops=pl.when(use & pl.col("total_ios").is_not_null() & (pl.col("group_ns") > 0))
        .then(pl.col("total_ios") / (pl.col("group_ns") / 1e9))
        .otherwise(pl.col("iops")),
        bw_basis=pl.when(use).then(pl.lit("group")).otherwise(pl.lit("job")),
        run_bw_bytes_per_s=pl.col("group_bw"),
        run_iops=pl.col("group_iops"),
        group_rows=pl.len().over(key),
        # one setup: one labelled host and configuration; a file without a host label is a setup of its own (two
        # unlabelled files may be two machines, also two of one name in different folders: named by their path)
        # a setup column the manifest gives that differs (notes, recordsize ...) is a setup of its own
        setup=pl.col("curve_of").fill_null(_setup(summ, pl.col("config"))),
        repeats_of=pl.col("repeats_of").fill_null(_setup(summ, pl.col("config"))),
    ).drop("group_bw", "group_ns", "group_iops", "curve_of")


def _setup(df: pl.DataFrame, config: pl.Expr) -> pl.Expr:
    """A run's setup: its ``config``; a file without a host label is a setup of its own (two unlabelled files may be
    two machines, also two of one name in different folders: named by their path), unless it has a label: then its
    label and config name it ('btrfs raid10 4 Ω | host not labelled | btrfs-raid10 | raid10 1x4 | ...'), never one
    of its files (the six grid files of one label had all been named after grid-nj1-qd1.txt, in workloads that do
    not hold it: ``repeat_groups.names`` names a group by its first run's setup)."""
    # the label less a 'run N' mark and the group ``fio_runs.groups_apart`` adds (a file's groups are one setup),
    # with the run's write-up heading where its file's runs lie under several (``fio_runs.run_label``: a labelled
    # write-up of five machines is five setups, never one curve)
    named = fio_runs.run_label(df) if "label" in df.columns else pl.col("label")
    label = named.cast(pl.String).str.replace(r" \(group \d+(: [^)]*)?\)($| § )", "$2")
    label = label.str.replace_all(fio_runs.RUN_MARK, "").str.replace_all(r"\(\s*\)", "")
    label = label.str.strip_chars(" ,") if "label" in df.columns else pl.lit(None, pl.String)
    return (
        pl.when(pl.col("host").is_null() & (pl.col("label").is_not_null() if "label" in df.columns else False))
        .then(label + pl.lit(" | ") + config.fill_null("not in a run"))
        .when(pl.col("host").is_null())
        .then(pl.lit("file ") + fio_runs.short_name(df) + pl.lit(" (host not labelled)"))
        .otherwise(config.fill_null("not in a run"))
    )


def with_durable_percentiles(summ: pl.DataFrame, durable_pct: pl.DataFrame) -> pl.DataFrame:
    """For the write rows of jobs with fsync/fdatasync, the percentiles of the sync calls (one per durable write)
    instead of write()'s completion into the page cache; ``pct_kind`` 'sync (fsync/fdatasync)'."""
    sync = durable_pct.filter(pl.col("direction") == "sync")
    if sync.is_empty():
        return summ
    names = {p: c for p, c in PERCENTILES.items()}
    wide = (
        sync.filter(pl.col("percentile").is_in(list(names)))
        .with_columns(pl.col("percentile").replace_strict(names).alias("col"))
        .pivot(on="col", index=["file_id", "job_index"], values="latency_ns", aggregate_function="first")
    )
    for c in PERCENTILES.values():
        if c not in wide.columns:
            wide = wide.with_columns(pl.lit(None, pl.Float64).alias(c))
    wide = wide.select("file_id", "job_index", *(pl.col(c).alias(f"sync_{c}") for c in PERCENTILES.values()))
    out = summ.join(
        wide.cast({k: summ.schema[k] for k in ("file_id", "job_index")}), on=["file_id", "job_index"], how="left"
    )
    durable = (pl.col("direction") == "write") & pl.col("sync_p99_ns").is_not_null()
    return out.with_columns(
        *(pl.when(durable).then(pl.col(f"sync_{c}")).otherwise(pl.col(c)).alias(c) for c in PERCENTILES.values()),
        pct_kind=pl.when(durable).then(pl.lit("sync")).otherwise(pl.col("pct_kind")),
    ).drop(*(f"sync_{c}" for c in PERCENTILES.values()))


@dataclass(frozen=True)
class DepthLevel:
    outstanding: int | None
    runs: int
    iops: float
    iops_low: float
    iops_high: float
    bw: float
    bw_low: float
    bw_high: float
    p99_ns: float | None  # the median of the runs' p99 (percentiles are not averaged)
    # the configuration (iodepth x numjobs) of the level's runs: two configurations with as many I/Os in flight
    # (8 x 4 and 4 x 8) are two levels, never one mean (new user h5 B2)
    iodepth: int | None = None
    numjobs: int | None = None


@dataclass(frozen=True)
class DepthCurve:
    """One workload and direction on one setup (config and fio version), its depths in order."""

    workload: str
    direction: str
    setup: str
    metric: str  # 'IOPS' (blocks below 64 KiB, or unknown) or 'bandwidth'
    runs: int  # fio runs (file, report)
    jobs: int  # rows (a run of several jobs has several)
    levels: list[DepthLevel]
    labels: list[str]
    other_setups: list[str]  # the same workload on other setups: no line or ratio across them
    unlabelled_files: int  # files without a host label among the curve's
    files: int
    flagged: list[str]  # labels of flagged runs on the curve
    pct_kind: str | None
    # (run label, its group's bandwidth, its group's IOPS) for each reporting group of several different jobs whose
    # jobs are all on this curve: the run's own figure, where the levels give per-job rates
    groups: tuple[tuple[str, float | None, float | None], ...] = ()
    # the levels of the runs no design check or firm plausibility flag marks (column ``suspect``; None where the
    # frame has no such column): the only runs a ratio across depths is stated from
    clean_levels: list[DepthLevel] | None = None
    # the most groups of repeats (``repeats_of``: labels apart) whose runs one depth of the curve pools
    groups_at_a_depth: int = 1
    # the lab's sanity flags of the curve's runs ('not a disk: loop device loop2, backed by ...': its notes)
    lab_flags: tuple[str, ...] = ()


def _whole_groups(g: pl.DataFrame) -> tuple[tuple[str, float | None, float | None], ...]:
    """The reporting groups of several jobs (``bw_basis`` 'job') all of whose rows are in ``g``, with the group's
    bandwidth and IOPS (``with_run_bandwidth``)."""
    if "bw_basis" not in g.columns:
        return ()
    key = ["file_id", "doc_index", "groupid"]
    several = g.filter(pl.col("bw_basis") == "job")
    whole = several.group_by(key, maintain_order=True).agg(
        pl.col("label").first().alias("name"),  # the run's label, or its file named as much as tells it apart
        pl.col("run_bw_bytes_per_s").first(),
        pl.col("run_iops").first(),
        (pl.len() == pl.col("group_rows").first()).alias("whole"),
    )
    return tuple(
        (r["name"], r["run_bw_bytes_per_s"], r["run_iops"])
        for r in whole.filter(pl.col("whole") & pl.col("run_bw_bytes_per_s").is_not_null()).iter_rows(named=True)
    )


def _metric(g: pl.DataFrame, large_block: int) -> str:
    """What a curve of runs ``g`` plots: 'bandwidth' where its largest block is ``large_block`` or more, else 'IOPS'."""
    bs = g.select(pl.col("block_size_bytes").max()).item()
    return "bandwidth" if bs is not None and bs >= large_block else "IOPS"


def curves(depth: pl.DataFrame, large_block: int = 64 * 1024) -> list[DepthCurve]:
    out = []
    for (workload, direction), w in depth.group_by(["workload", "direction"], maintain_order=True):
        setups = w["setup"].unique(maintain_order=True).to_list()
        for setup, g in w.group_by("setup", maintain_order=True):
            out.append(
                DepthCurve(
                    workload=workload,
                    direction=direction,
                    setup=setup[0],
                    metric=_metric(g, large_block),
                    runs=g.select("file_id", "doc_index").n_unique(),
                    jobs=g.height,
                    levels=_levels(g),
                    labels=g["label"].to_list(),
                    other_setups=[s for s in setups if s != setup[0]],
                    unlabelled_files=g.filter(pl.col("host").is_null())["file_id"].n_unique(),
                    files=g["file_id"].n_unique(),
                    flagged=sorted(
                        {
                            f"{r['label']} ({r['flag']})"
                            for r in g.filter(pl.col("flag").is_not_null()).iter_rows(named=True)
                        }
                    ),
                    pct_kind=next(iter(g["pct_kind"].drop_nulls().to_list()), None),
                    groups=_whole_groups(g),
                    clean_levels=_levels(g.filter(~pl.col("suspect"))) if "suspect" in g.columns else None,
                    groups_at_a_depth=_groups_at_a_depth(g),
                    lab_flags=lab_flags(g),
                )
            )
    return out


def lab_flags(g: pl.DataFrame) -> tuple[str, ...]:
    """The lab's sanity flags in the notes of ``g``'s runs (``sanity: not a disk: ...``; the disk card shows them
    too), each once, in run order."""
    if "run_notes" not in g.columns:
        return ()
    found = [m.strip() for n in g["run_notes"].drop_nulls().to_list() for m in re.findall(r"sanity: ([^;]*)", n)]
    return tuple(dict.fromkeys(found))


def _groups_at_a_depth(g: pl.DataFrame) -> int:
    if "repeats_of" not in g.columns or g.is_empty():
        return 1
    counts = g.group_by("outstanding").agg(pl.col("repeats_of").n_unique())["repeats_of"].to_list()
    return max(counts, default=1)


def _levels(g: pl.DataFrame) -> list[DepthLevel]:
    """One level per number of I/Os in flight and configuration (iodepth x numjobs): its runs' mean IOPS and
    bandwidth with their range, median p99."""
    config = [c for c in ("iodepth", "numjobs") if c in g.columns]
    levels = (
        g.group_by("outstanding", *config)
        .agg(
            runs=pl.len(),
            iops=pl.col("iops").mean(),
            iops_low=pl.col("iops").min(),
            iops_high=pl.col("iops").max(),
            bw=pl.col("bw_bytes_per_s").mean(),
            bw_low=pl.col("bw_bytes_per_s").min(),
            bw_high=pl.col("bw_bytes_per_s").max(),
            p99_ns=pl.col("p99_ns").median(),
        )
        .sort("outstanding", *config, nulls_last=True)
    )
    return [DepthLevel(**r) for r in levels.iter_rows(named=True)]


KNEE_GAIN = 0.10  # a doubling of the I/Os in flight that adds less than 10 % is the knee (fio-plot's reading)
KNEE_MIN_DEPTHS = 3  # a knee needs a rise and then a flattening: three depths at least


@dataclass(frozen=True)
class Knee:
    """Where one workload's IOPS (or bandwidth) stop rising with the I/Os in flight on one setup, from its
    unflagged runs (a flagged run, a cache or a stall, does not set a knee). ``depth`` is None where the data
    cannot show one: ``reason`` says why ('too few depths', 'still rising')."""

    workload: str
    direction: str
    setup: str
    numjobs: int | None  # one knee per numjobs: the depth varies at a fixed number of jobs (fio-plot's rows)
    metric: str  # 'IOPS' or 'bandwidth', as the curve's
    gain: float  # the threshold: the least gain per doubling that counts as still rising
    depths: list[int]  # the unflagged depths, in order
    gains: list[float]  # gain per doubling between consecutive depths (len(depths) - 1)
    flagged_left_out: int  # flagged runs not used
    depth: int | None = None  # the knee: the depth after which every doubling gains less than ``gain``
    next_depth: int | None = None  # the depth after it
    value: float | None = None  # the metric at the knee (mean of its runs)
    next_value: float | None = None
    p99_ns: float | None = None  # median p99 at the knee and at the next depth
    next_p99_ns: float | None = None
    reason: str | None = None
    unknown_left_out: int = 0  # unflagged runs not used: I/Os in flight (or the rate) not known

    @property
    def p99_climbs(self) -> bool | None:
        if self.p99_ns is None or self.next_p99_ns is None:
            return None
        return self.next_p99_ns > self.p99_ns


def per_doubling(a: float, b: float, depth_a: int, depth_b: int) -> float:
    """The gain of ``b`` over ``a`` per doubling of the depth: from 1 to 16 (four doublings) at 5.09x is 50 %."""
    doublings = math.log2(depth_b / depth_a)
    return (b / a) ** (1 / doublings) - 1


def knees(depth: pl.DataFrame, large_block: int = 64 * 1024, gain: float = KNEE_GAIN) -> list[Knee]:
    """One ``Knee`` per workload, direction, setup and numjobs of ``against_depth``'s rows: the mean IOPS (bandwidth
    for blocks of ``large_block`` and more) and median p99 of the unflagged runs at each depth (I/Os in flight,
    iodepth x numjobs), the gain per doubling between consecutive depths, and the first depth after which it falls
    below ``gain``."""
    if not 0 < gain < 1:
        raise ValueError(f"knee_gain must be between 0 and 1 (0.10: 10 % per doubling), got {gain}")
    out = []
    keys = ["workload", "direction", "setup", "numjobs"]
    for (workload, direction, setup, numjobs), g in depth.group_by(keys, maintain_order=True):
        metric = _metric(g, large_block)
        col = "bw_bytes_per_s" if metric == "bandwidth" else "iops"
        ok = g.filter(pl.col("flag").is_null() & (pl.col("outstanding") > 0) & (pl.col(col) > 0))
        levels = ok.group_by("outstanding").agg(v=pl.col(col).mean(), p99=pl.col("p99_ns").median()).sort("outstanding")
        ds, vs, ps = (levels[c].to_list() for c in ("outstanding", "v", "p99"))
        gains = [per_doubling(vs[i], vs[i + 1], ds[i], ds[i + 1]) for i in range(len(ds) - 1)]
        base = dict(workload=workload, direction=direction, setup=setup, numjobs=numjobs, metric=metric, gain=gain)
        flagged = g.filter(pl.col("flag").is_not_null()).height  # the rest left out have no depth (or no rate)
        base |= dict(depths=ds, gains=gains, flagged_left_out=flagged, unknown_left_out=g.height - ok.height - flagged)
        if len(ds) < KNEE_MIN_DEPTHS:
            out.append(Knee(**base, reason="too few depths"))
            continue
        # the knee: the depth after which every further doubling gains less than ``gain`` (one flat step between
        # two rises, 2 -> 4 at +15 % then 4 -> 8 at +99 %, is not where the IOPS stop rising)
        at = next(i for i in range(len(gains) + 1) if all(x < gain for x in gains[i:]))
        if at == len(gains):
            out.append(Knee(**base, reason="still rising"))
            continue
        out.append(
            Knee(
                **base,
                depth=ds[at],
                next_depth=ds[at + 1],
                value=vs[at],
                next_value=vs[at + 1],
                p99_ns=ps[at],
                next_p99_ns=ps[at + 1],
            )
        )
    return out


def split_sentences(depth: pl.DataFrame) -> list[str]:
    """Workloads that differ only in options fio did not print for one of them (``design.unknown_pairs``), with the
    setups where both ran and their run counts: one labelled grid cut in two by a 'size=?' (btrfs raid10 4 Ω: fio
    printed 'Laying out IO file' only in the two runs that created the file) is said to be so, by the option that
    splits it, where its depth curves and knees show its two halves apart. Pairs on no common setup: as
    ``design.unknown_splits`` says them."""
    if depth.is_empty():
        return []
    runs = depth.group_by("setup", "workload", maintain_order=True).agg(
        pl.struct("file_id", "doc_index").n_unique().alias("n")
    )
    count = {(r["setup"], r["workload"]): r["n"] for r in runs.iter_rows(named=True)}
    out = []
    for a, b, apart in design.unknown_pairs(depth["workload"].to_list()):
        both = [s for s in dict.fromkeys(runs["setup"].to_list()) if (s, a) in count and (s, b) in count]
        if not both:
            out += design.unknown_splits([a, b])
            continue
        for s in both:
            out.append(
                f"On {s}: its {count[(s, a)]} run(s) of `{a}` and {count[(s, b)]} of `{b}` share every label and "
                f"differ only in {', '.join(apart)}, which fio did not print for one of them: they may be one "
                "workload cut in two, and are kept apart (two depth curves, two knees; a mean never joins them). "
                "Put fio's command line in the manifest's command column (or save fio's output as JSON) to tell"
            )
    return out

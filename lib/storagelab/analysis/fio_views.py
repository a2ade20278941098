"""The fio views storage engineers expect (for a fio notebook): pure functions on polars frames, plus
the read-only queries that feed them.

* ``summary``: one row per (run, direction) with rw, block size, iodepth, numjobs, IOPS, bandwidth and
  the p50/p99/p99.9 latency from ``fio_percentiles`` (completion latency, else total latency);
  ``against_depth`` orders it per workload by iodepth x numjobs (fio-plot's iodepth/numjobs charts).
* ``bin_percentiles``: latency percentiles from histogram bins by fio's own rule (exactly fio's
  printed percentiles on a job's JSON+ bins; per interval on the write_hist_log samples).
* ``combine_jobs``: a run's per-job log lines (``fio_log_samples``; ``.1.log`` ... ``.N.log``) into one
  time series: per time window, bandwidth and IOPS summed over the jobs, latency averaged.
* ``mark_steady``: ramp and steady state of a time series. **Steady state** = the longest *trailing*
  window (ending at the last sample, at least ``min_points`` long) in which every value, after an
  optional rolling mean over ``smooth`` samples, stays within ±``tolerance_pct`` % of the window's own
  mean; the samples before it are the **ramp**. Without such a window every sample is ``unsteady``.
* ``load_histograms`` / ``histogram_buckets``: each run's latency histogram from the stored bins (JSON+, or
  the write_hist_log logs), in equal buckets on a log scale.
* ``compare``: two means with their noise: the difference is "within noise" when it is no larger than the
  combined standard deviation sqrt(sd_a² + sd_b²), else "A is 12 % faster, outside run-to-run noise". The
  noise is run-to-run when the standard deviations are those of repeated runs, sample-to-sample when they are
  fio's per-sample stdev within single runs (the text says which). ``point_comparisons`` applies it to the runs
  of one workload at one iodepth x numjobs: configurations (host | stack | layout) against each other, or the
  spread of one configuration's repeats.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import polars as pl

PERCENTILES = {50.0: "p50_ns", 99.0: "p99_ns", 99.9: "p99_9_ns"}
SAMPLE_NOISE = "the runs' sample-to-sample noise"
WORKLOAD = ("rw", "block_size_bytes", "direction")


# ----------------------------------------------------------------------------- queries


def load_summary(con, file_ids: Sequence[int] | None = None) -> pl.DataFrame:
    """fio_jobs x fio_results (final reports) with the clat (else lat) percentiles 50/99/99.9 pivoted."""
    from . import frame

    where = "" if file_ids is None else "AND list_contains(?::INTEGER[], j.file_id)"
    params = [] if file_ids is None else [sorted({int(i) for i in file_ids})]
    jobs = frame(
        con,
        f"""
        SELECT f.file_id, f.path, f.label, j.job_index, j.doc_index, j.jobname, j.groupid, j.rw, j.block_size_bytes,
               j.iodepth,
               coalesce(j.numjobs, j.jobs) AS numjobs, j.ioengine, j.options_json,
               coalesce(f.command, c.command) AS command, r.direction, r.iops,
               r.bw_bytes_per_s,
               r.bw_stdev_bytes_per_s, r.bw_mean_bytes_per_s, r.bw_samples, r.iops_stdev, r.iops_mean,
               r.iops_samples, r.clat_mean_ns, r.lat_mean_ns,
               -- fio's IO depths distribution: 100 % at 1 = never more than one I/O in flight (a synchronous engine)
               (SELECT d.pct FROM fio_iodepths d WHERE d.file_id = j.file_id AND d.job_index = j.job_index
                  AND d.kind = 'depth' AND d.bucket = '1') AS depth1_pct
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


def load_log_samples(con, file_ids: Sequence[int] | None = None, kinds: Sequence[str] | None = None) -> pl.DataFrame:
    """fio_log_samples with the run they belong to: ``run`` = folder + '/' + prefix (the lab names each
    run's logs after its output file, ``RUNID.txt`` beside ``RUNID_bw.N.log``)."""
    from . import frame

    cond, params = [], []
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
               l.line_start
        FROM fio_log_samples l JOIN files f USING (file_id) {where}
        ORDER BY run, l.kind, l.job_index, l.time_ns, l.line_start""",
        params,
    )


# ----------------------------------------------------------------------------- summaries


def summary(jobs: pl.DataFrame, percentiles: pl.DataFrame) -> pl.DataFrame:
    """Add p50_ns, p99_ns, p99_9_ns (and ``pct_kind``: clat, or lat where a job has no clat percentiles)
    to rows keyed by file_id, job_index, direction."""
    key = ["file_id", "job_index", "direction"]
    if percentiles.is_empty():
        return jobs.with_columns(
            *(pl.lit(None, pl.Float64).alias(c) for c in PERCENTILES.values()), pl.lit(None, pl.Utf8).alias("pct_kind")
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
    return jobs.join(wide.select(*key, *PERCENTILES.values(), "pct_kind"), on=key, how="left")


def _qd(iodepth, numjobs) -> str:
    """'8 x 4' (I/O depth x jobs), '?' for what the output does not say (terse output, no command)."""
    return f"{_n(iodepth)} x {_n(numjobs)}"


def _n(value) -> str:
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
    summed = ["iops", "bw_bytes_per_s", "bw_mean_bytes_per_s", "iops_mean"]
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
    from . import fio_runs

    with_wl = fio_runs.with_workloads(summary_df)
    label = pl.coalesce("label", "path")
    return summary_df.with_columns(
        # a job whose mode or block size is unknown is set against no other: its workload names it alone
        workload=pl.when(with_wl["workload_known"])
        .then(with_wl["workload_at_any_depth"])
        .otherwise(
            with_wl["workload_at_any_depth"]
            + pl.lit(" (")
            + pl.coalesce("label", pl.col("path").str.split("/").list.last())
            + pl.lit(": ")
            + pl.col("jobname")
            + pl.lit(")")
        ),
        iodepth=pl.coalesce(pl.col("iodepth").cast(pl.Int64), with_wl["wl_iodepth"].cast(pl.Int64, strict=False)),
        numjobs=pl.coalesce(pl.col("numjobs").cast(pl.Int64), with_wl["wl_numjobs"].cast(pl.Int64, strict=False)),
        label=label,
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
    """``against_depth`` as text, one line per run and direction: label, QD iodepth x numjobs, IOPS, MiB/s and the
    p50/p99/p99.9 latency in ms where fio printed percentiles."""
    out = []
    for r in depth.iter_rows(named=True):
        line = (
            f"{(r['label'] or r['path'])[:36]:<36} {r['direction']:<5} QD {_qd(r['iodepth'], r['numjobs'])}: {r['iops']:>10,.0f} IOPS "
            f"{r['bw_bytes_per_s'] / 2**20:9.1f} MiB/s"
        )
        if any(r[c] is not None for c in PERCENTILES.values()):
            line += "  p50/p99/p99.9 " + " / ".join(
                "n/a" if r[c] is None else f"{r[c] / 1e6:.3f}" for c in PERCENTILES.values()
            )
            line += " ms"
        out.append(line)
    return out


# ----------------------------------------------------------------------------- histograms


def bin_percentiles(
    bins: pl.DataFrame,
    by: Sequence[str],
    percentiles: Sequence[float] = (50.0, 99.0, 99.9),
    value: str = "latency_ns",
    count: str = "count",
) -> pl.DataFrame:
    """Percentiles from latency bins the way fio computes them (stat.c ``calc_clat_percentiles``): the
    value of the first bin whose cumulative count reaches p % of the total. On a job's JSON+ bins
    (``fio_latency_bins``) this gives fio's own percentiles; on ``fio_hist_samples`` it gives them per
    interval (by time_ns) or, summed, over the logged part of the run. One row per group and
    percentile: ``percentile``, ``latency_ns``, ``total`` (I/Os in the group)."""
    by = list(by)
    df = bins.group_by([*by, value]).agg(pl.col(count).sum()) if by else bins.group_by(value).agg(pl.col(count).sum())
    df = df.sort([*by, value]).with_columns(
        pl.col(count).cum_sum().over(by or None).alias("_cum") if by else pl.col(count).cum_sum().alias("_cum"),
        (pl.col(count).sum().over(by) if by else pl.col(count).sum()).alias("total"),
    )
    out = []
    for p in percentiles:
        hit = (
            df.filter(pl.col("_cum") >= pl.col("total") * (p / 100.0))
            .group_by(by or pl.lit(0), maintain_order=True)
            .agg(pl.col(value).first().alias("latency_ns"), pl.col("total").first())
        )
        if not by:
            hit = hit.drop("literal")
        out.append(hit.with_columns(pl.lit(float(p)).alias("percentile")))
    res = pl.concat(out)
    return res.select(*by, "percentile", "latency_ns", "total").sort([*by, "percentile"])


def load_log_runs(con) -> pl.DataFrame:
    """Which fio output each run of logs belongs to: ``run`` (as ``load_log_samples``), the log files'
    ``prefix``, and ``output_file_id``/``output_path`` of the fio output in the same folder with a job
    named like the prefix (NULL when there is none: logs saved without their output, or write_*_log=
    given another name than the job's). The lab names job, logs and output after the run, so they match."""
    from . import frame

    return frame(
        con,
        """
        WITH logs AS (
            SELECT DISTINCT parse_dirpath(f.path) AS dir, l.prefix FROM fio_log_samples l JOIN files f USING (file_id)
            WHERE l.prefix IS NOT NULL
            UNION
            SELECT DISTINCT parse_dirpath(f.path), h.prefix FROM fio_hist_samples h JOIN files f USING (file_id)
            WHERE h.prefix IS NOT NULL),
        outputs AS (
            SELECT DISTINCT parse_dirpath(f.path) AS dir, j.jobname, f.file_id, f.path
            FROM fio_jobs j JOIN files f USING (file_id) WHERE j.is_final)
        SELECT logs.dir || '/' || logs.prefix AS run, logs.prefix, min(o.file_id) AS output_file_id,
               min(o.path) AS output_path, count(o.file_id) AS candidates
        FROM logs LEFT JOIN outputs o ON o.dir = logs.dir AND o.jobname = logs.prefix
        GROUP BY ALL ORDER BY run""",
    )


def load_hist_samples(con, file_ids: Sequence[int] | None = None) -> pl.DataFrame:
    """fio_hist_samples with their run (folder + '/' + prefix), as ``load_log_samples``."""
    from . import frame

    where, params = "", []
    if file_ids is not None:
        where, params = "WHERE list_contains(?::INTEGER[], h.file_id)", [sorted({int(i) for i in file_ids})]
    return frame(
        con,
        f"""
        SELECT parse_dirpath(f.path) || '/' || coalesce(h.prefix, f.path) AS run, h.file_id, h.job_index, h.time_ns,
               h.direction, h.bin_index, h.latency_lo_ns, h.latency_ns, h.latency_hi_ns, h.count
        FROM fio_hist_samples h JOIN files f USING (file_id) {where}
        ORDER BY run, h.job_index, h.time_ns, h.bin_index""",
        params,
    )


def load_histograms(con, file_ids: Sequence[int], hist_ids: Sequence[int] = ()) -> pl.DataFrame:
    """Each run's latency histogram per direction from the stored bins: the JSON+ bins of the final report (clat,
    else lat), summed over the run's jobs; and for write_hist_log logs whose run has no JSON+ bins among
    ``file_ids``, the bins of the logs among ``hist_ids`` summed over their intervals and jobs. Columns: ``label`` (the file's label, else its
    path; the log prefix for logs), ``file_id`` (the output's, or the log file's: one row per log file and bin),
    ``direction``,
    ``source`` ('JSON+ clat', 'JSON+ lat' or 'clat_hist log'), ``latency_ns`` (fio's bin value), ``count``."""
    from . import frame

    cols = {
        "label": pl.Utf8,
        "file_id": pl.Int64,
        "direction": pl.Utf8,
        "source": pl.Utf8,
        "latency_ns": pl.Float64,
        "count": pl.Int64,
    }
    parts = []
    if file_ids:
        bins = frame(
            con,
            """
            WITH b AS (
                SELECT b.file_id, b.direction, b.kind, b.latency_ns, sum(b.count) AS count
                FROM fio_latency_bins b JOIN fio_jobs j USING (file_id, job_index)
                WHERE j.is_final AND b.kind IN ('clat', 'lat') AND list_contains(?::INTEGER[], b.file_id)
                GROUP BY ALL),
            best AS (SELECT file_id, direction, min(kind) AS kind FROM b GROUP BY ALL)  -- 'clat' < 'lat'
            SELECT coalesce(f.label, f.path) AS label, b.file_id, b.direction, 'JSON+ ' || b.kind AS source,
                   b.latency_ns, b.count
            FROM b JOIN best USING (file_id, direction, kind) JOIN files f USING (file_id)
            ORDER BY label, b.file_id, b.direction, b.latency_ns""",
            [sorted({int(i) for i in file_ids})],
        )
        parts.append(bins)
    if hist_ids:
        h = load_hist_samples(con, hist_ids)
        if h.height:
            have = set(parts[0]["file_id"].to_list()) if parts else set()
            outputs = load_log_runs(con).select("run", "output_file_id")
            h = h.join(outputs, on="run", how="left").filter(
                pl.col("output_file_id").is_null() | ~pl.col("output_file_id").is_in(list(have))
            )
            parts.append(
                h.group_by("run", "file_id", "direction", "latency_ns")
                .agg(pl.col("count").sum())
                .with_columns(
                    pl.col("run").str.split("/").list.last().alias("label"), pl.lit("clat_hist log").alias("source")
                )
                .sort("run", "direction", "latency_ns", "file_id")
            )
    parts = [x.select([pl.col(c).cast(t) for c, t in cols.items()]) for x in parts if x.height]
    return pl.concat(parts) if parts else pl.DataFrame(schema=cols)


def histogram_buckets(hist: pl.DataFrame, per_decade: int = 10) -> pl.DataFrame:
    """fio's bins (64 per power of two, of growing width) put into equal buckets on a log scale, ``per_decade``
    per factor of 10, so that bars compare: per label, direction and source, ``bucket_lo_ns``, ``bucket_hi_ns``,
    ``count`` and ``pct`` (share of the run's I/Os in that direction, percent)."""
    by = ["label", "direction", "source"]
    if hist.is_empty():
        return hist.select(*by).with_columns(
            *(pl.lit(None, pl.Float64).alias(c) for c in ("bucket_lo_ns", "bucket_hi_ns")),
            pl.lit(None, pl.Int64).alias("count"),
            pl.lit(None, pl.Float64).alias("pct"),
        )
    step = (pl.col("latency_ns").clip(lower_bound=1.0).log10() * per_decade).floor()
    out = (
        hist.with_columns(step.alias("_b"))
        .group_by([*by, "_b"])
        .agg(pl.col("count").sum())
        .with_columns(
            (10 ** (pl.col("_b") / per_decade)).alias("bucket_lo_ns"),
            (10 ** ((pl.col("_b") + 1) / per_decade)).alias("bucket_hi_ns"),
            (100.0 * pl.col("count") / pl.col("count").sum().over(by)).alias("pct"),
        )
    )
    return out.drop("_b").sort([*by, "bucket_lo_ns"])


def load_printed_buckets(con, file_ids: Sequence[int]) -> pl.DataFrame:
    """The latency distribution fio prints (``lat (usec): 2=0.01%, 4=...``; JSON latency_us/ms), for outputs
    without JSON+ bins: per file (and job, without group_reporting) the buckets as printed, all directions
    together (``direction`` 'all'), in ``histogram_buckets``' columns (``count`` NULL: fio prints shares only;
    ``bucket_hi_ns`` NULL for the open '>=2000 ms' bucket)."""
    from . import frame

    if not file_ids:
        return pl.DataFrame()
    return frame(
        con,
        """
        SELECT coalesce(f.label, f.path)
                   || CASE WHEN count(*) OVER (PARTITION BY b.file_id, b.bucket_lo_ns) > 1
                           THEN ' (job ' || b.job_index || ')' ELSE '' END AS label,
               'all' AS direction, 'fio''s printed buckets' AS source, CAST(NULL AS BIGINT) AS count,
               b.bucket_lo_ns, b.bucket_hi_ns, b.pct
        FROM fio_latency_buckets b JOIN fio_jobs j USING (file_id, job_index) JOIN files f USING (file_id)
        WHERE j.is_final AND list_contains(?::INTEGER[], b.file_id)
          AND b.file_id NOT IN (SELECT file_id FROM fio_latency_bins)
        ORDER BY label, b.bucket_lo_ns""",
        [sorted({int(i) for i in file_ids})],
    )


# ----------------------------------------------------------------------------- time series

VALUE = {"bw": "bw_bytes_per_s", "iops": "iops", "lat": "latency_ns", "clat": "latency_ns", "slat": "latency_ns"}


def combine_jobs(samples: pl.DataFrame, window_ns: int | None = None) -> pl.DataFrame:
    """One time series per (run, kind, direction) from the per-job logs.

    Samples are put in windows of ``window_ns`` (default: the median gap between a job's consecutive
    samples, i.e. log_avg_msec, in whole ms; fio's window ends jitter by a few ms) by rounding their time
    to the nearest window end. Per job and window: windowed logs give their value; per-I/O logs
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
    df = samples.filter(pl.col("kind").is_not_null())
    if df.is_empty():
        return pl.DataFrame(schema=schema)
    df = df.with_columns(
        pl.coalesce(pl.col("bw_bytes_per_s"), pl.col("iops"), pl.col("latency_ns")).alias("value"),
        pl.col("job_index").fill_null(0),
    )
    if window_ns is None:
        gaps = (
            df.sort([*by, "job_index", "time_ns"])
            .with_columns(pl.col("time_ns").diff().over([*by, "job_index"]).alias("gap"))
            .filter(pl.col("gap") > 0)["gap"]
        )
        window_ns = int(gaps.median()) if gaps.len() else 1_000_000_000
        window_ns = max(1_000_000, int(round(window_ns / 1_000_000)) * 1_000_000)
    per_s = 1e9 / window_ns
    df = df.with_columns(((pl.col("time_ns") + window_ns // 2) // window_ns * window_ns).alias("t"))
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
    )
    out = per_job.group_by([*by, "t"]).agg(
        pl.when(pl.col("kind").first().is_in(["bw", "iops"]))
        .then(pl.col("value").sum())
        .otherwise(pl.col("value").mean())
        .alias("value"),
        pl.col("job_index").n_unique().cast(pl.UInt32).alias("jobs"),
        pl.col("n").sum().cast(pl.UInt32).alias("n"),
    )
    return out.rename({"t": "time_ns"}).select(list(schema)).sort([*by, "time_ns"])


def partial_windows(series: pl.DataFrame) -> pl.Series:
    """True for the windows of a summed series (bw, iops) where fewer jobs logged than the run has: fio writes
    each job's last sample when that job ends, so one job's extra last sample alone is not the run's total (it
    would show as a drop to 1/N at the end)."""
    all_jobs = pl.col("jobs").max().over("run", "kind", "direction")
    return series.select(pl.col("kind").is_in(["bw", "iops"]) & (pl.col("jobs") < all_jobs)).to_series()


def steady_start(values: Sequence[float], tolerance_pct: float = 10.0, min_points: int = 3) -> int | None:
    """Index where the steady state begins: the smallest i such that every value of values[i:] is within
    ±tolerance_pct % of mean(values[i:]), with at least min_points values; None if there is none."""
    n = len(values)
    if n < max(1, min_points):
        return None
    tol = tolerance_pct / 100.0
    best = None
    total, lo, hi = 0.0, math.inf, -math.inf
    for i in range(n - 1, -1, -1):
        v = values[i]
        if v is None or (isinstance(v, float) and math.isnan(v)):
            break
        total += v
        lo, hi = min(lo, v), max(hi, v)
        mean = total / (n - i)
        if n - i >= min_points and hi <= mean + abs(mean) * tol and lo >= mean - abs(mean) * tol:
            best = i
    return best


def mark_steady(
    series: pl.DataFrame,
    value: str = "value",
    by: Sequence[str] = ("run", "kind", "direction"),
    tolerance_pct: float = 10.0,
    min_points: int = 3,
    smooth: int = 1,
) -> pl.DataFrame:
    """Add ``phase`` (ramp / steady / unsteady) and ``steady_mean`` per series (rows in time order).
    ``smooth`` > 1 tests a rolling mean over that many samples instead of the raw values."""
    by = [c for c in by if c in series.columns]
    parts = []
    for _key, g in (
        series.sort([*by, "time_ns"]).group_by(by, maintain_order=True) if by else [((), series.sort("time_ns"))]
    ):
        vals = g[value]
        if smooth > 1:
            vals = vals.rolling_mean(window_size=smooth, min_samples=1)
        start = steady_start(vals.to_list(), tolerance_pct, min_points)
        idx = pl.int_range(0, g.height, eager=True)
        if start is None:
            phase = pl.Series("phase", ["unsteady"] * g.height)
            mean = None
        else:
            phase = pl.Series("phase", ["ramp" if i < start else "steady" for i in idx])
            mean = float(g[value][start:].mean())
        parts.append(g.with_columns(phase, pl.lit(mean, pl.Float64).alias("steady_mean")))
    return (
        pl.concat(parts)
        if parts
        else series.with_columns(pl.lit(None, pl.Utf8).alias("phase"), pl.lit(None, pl.Float64).alias("steady_mean"))
    )


# ----------------------------------------------------------------------------- comparing runs


def stats(values: Sequence[float]) -> tuple[float, float, int]:
    """(mean, sample standard deviation, n) of per-sample values (stdev 0 for one sample)."""
    v = [float(x) for x in values if x is not None]
    if not v:
        raise ValueError("no samples")
    mean = sum(v) / len(v)
    sd = math.sqrt(sum((x - mean) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else 0.0
    return mean, sd, len(v)


def compare(
    a_mean: float,
    a_sd: float,
    b_mean: float,
    b_sd: float,
    *,
    higher_is_better: bool = True,
    a: str = "A",
    b: str = "B",
    noise: str = "run-to-run noise",
) -> dict:
    """A against B: difference in percent of B, the noise in percent of B (the two standard deviations
    combined), and a sentence. ``higher_is_better`` False for latencies ("lower latency" instead of "faster").
    ``noise`` names what the standard deviations are: run-to-run (of repeated runs' means) by default; "the
    runs' sample-to-sample noise" for fio's per-sample stdev within single runs."""
    if not b_mean:
        raise ValueError("B's mean is zero: no relative difference")
    diff = a_mean - b_mean
    sd = math.sqrt(a_sd**2 + b_sd**2)
    diff_pct = 100.0 * diff / b_mean
    noise_pct = 100.0 * sd / abs(b_mean)
    within = abs(diff) <= sd
    better = (diff > 0) == higher_is_better
    if diff == 0:
        text = f"{a} and {b} are equal"
    elif higher_is_better:
        text = f"{a} is {abs(diff_pct):.0f} % {'faster' if better else 'slower'} than {b}"
    else:
        text = f"{a}'s latency is {abs(diff_pct):.0f} % {'lower' if better else 'higher'} than {b}'s"
    claim = text  # the difference alone (where there is no noise to judge it by)
    text += f", {'within' if within else 'outside'} {noise} (±{noise_pct:.0f} %)"
    return dict(
        diff_pct=diff_pct,
        noise_pct=noise_pct,
        within_noise=within,
        a_better=better and diff != 0,
        text=text,
        claim=claim,
    )


def compare_samples(a: Sequence[float], b: Sequence[float], **kw) -> dict:
    """``compare`` from two runs' log samples (e.g. the steady-state part of their bw series)."""
    am, asd, an = stats(a)
    bm, bsd, bn = stats(b)
    kw.setdefault("noise", SAMPLE_NOISE)
    return {**compare(am, asd, bm, bsd, **kw), "a_mean": am, "b_mean": bm, "a_n": an, "b_n": bn}


def compare_results(a: dict, b: dict, metric: str = "bw", **kw) -> dict:
    """``compare`` from two rows of ``summary`` (fio's own per-sample mean and stdev of bw or iops,
    for runs without logs): bw uses bw_mean/bw_stdev_bytes_per_s, iops iops_mean/iops_stdev."""
    mean, sd = {"bw": ("bw_mean_bytes_per_s", "bw_stdev_bytes_per_s"), "iops": ("iops_mean", "iops_stdev")}[metric]
    if a.get(mean) is None or b.get(mean) is None:
        raise ValueError(f"no {metric} samples in one of the runs")
    kw.setdefault("noise", SAMPLE_NOISE)
    return compare(a[mean], a.get(sd) or 0.0, b[mean], b.get(sd) or 0.0, **kw)


def _level_iops(level: dict) -> str:
    """'16,738', or '15,424 (mean of 3 runs, 13,856-16,738)'."""
    if level["n"] == 1:
        return f"{level['iops']:,.0f}"
    return f"{level['iops']:,.0f} (mean of {level['n']} runs, {level['low']:,.0f}-{level['high']:,.0f})"


def not_one_setup(g: pl.DataFrame) -> str:
    """'' when the depths of a workload were run in one file, or in files labelled with one host and run by one
    fio version; else a sentence saying why the depth may not be the only difference between them."""
    if g["file_id"].n_unique() < 2:
        return ""
    versions = sorted({v for v in g["tool_version"].to_list() if v})
    hosts = sorted({h for h in g["host"].to_list() if h})
    unlabelled = g.filter(pl.col("host").is_null())["file_id"].n_unique()
    why = []
    if len(hosts) > 1:
        why.append(f"they ran on different hosts ({', '.join(hosts)})")
    if len(versions) > 1:
        why.append(f"by different fio versions ({', '.join(versions)})")
    if why:
        return " Not one setup: " + " and ".join(why) + ", so the depth is not the only difference."
    if unlabelled:
        return (
            f" {unlabelled} of the {g['file_id'].n_unique()} files have no host label: if they ran on different "
            "machines, the depth is not the only difference (label host in the manifest)."
        )
    return ""


def _config(df: pl.DataFrame) -> pl.Expr:
    """What one run was measured on: host | stack | vdev layout labels ('?' where a label is missing)."""
    parts = [pl.col(c).cast(pl.Utf8).fill_null("?") for c in ("host", "stack", "vdev_type", "vdev_count", "vdev_width")]
    no_layout = pl.all_horizontal(pl.col(c).is_null() for c in ("vdev_type", "vdev_count", "vdev_width"))
    layout = pl.when(no_layout).then(None).otherwise(pl.concat_str(parts[2:], separator=" "))  # none: left out
    return pl.concat_str(parts[:2] + [layout], separator=" | ", ignore_nulls=True)


def point_comparisons(summ: pl.DataFrame, zfs_of: dict | None = None) -> list[str]:
    """Runs of one workload at one iodepth x numjobs (``summary`` rows with ``workload``, ``config`` and the
    run's bandwidth), compared with their noise, one sentence per point:

    * two or more configurations (host | stack | layout): the two fastest by mean bandwidth, against the spread of
      repeated runs when both have repeats (run-to-run noise), else against fio's per-sample bandwidth stdev of
      their runs (sample-to-sample noise, which says less: it is not the spread between runs);
    * one configuration run more than once: the mean and the run-to-run spread (sample stdev / mean) of its repeats.

    ``zfs_of``: file_id -> ZFS version; two configurations on different ZFS versions are said not to be like for
    like.
    """
    from . import prose

    out = []
    key = ["workload", "direction", "iodepth", "numjobs"]
    rows = summ.filter(pl.col("bw_bytes_per_s").is_not_null())
    zfs_of = zfs_of or {}
    rows = rows.with_columns(
        pl.col("file_id").map_elements(lambda f: zfs_of.get(f) or "", return_dtype=pl.String).alias("zfs")
    )
    for k, g in rows.group_by(key, maintain_order=True):
        workload, direction, qd, nj = k
        if g["file_id"].n_unique() < 2:
            continue
        point = f"`{workload}` {direction} at QD {_qd(qd, nj)}"
        per = (
            g.group_by("config", maintain_order=True)
            .agg(
                pl.col("file_id").n_unique().alias("runs"),
                pl.col("bw_bytes_per_s").mean().alias("mean"),
                pl.col("bw_bytes_per_s").std().alias("sd"),
                pl.col("bw_stdev_bytes_per_s").mean().alias("sample_sd"),
                pl.col("bw_mean_bytes_per_s").mean().alias("sample_mean"),
                pl.col("zfs").filter(pl.col("zfs") != "").unique().sort().str.join("/").alias("zfs"),
            )
            .sort("mean", descending=True)
        )
        if per.height == 1:
            r = per.row(0, named=True)
            out.append(
                f"{point}: {r['runs']} runs of {r['config']}: mean {prose.rate(r['mean'])}, run-to-run spread "
                f"±{100 * r['sd'] / r['mean']:.1f} % (sample standard deviation of the runs' bandwidth)."
            )
            continue
        a, b = per.row(0, named=True), per.row(1, named=True)
        if a["runs"] > 1 and b["runs"] > 1:
            c = compare(a["mean"], a["sd"], b["mean"], b["sd"], a=a["config"], b=b["config"])
            how = f"{a['runs']} and {b['runs']} runs"
        elif a["sample_mean"] is not None and b["sample_mean"] is not None:
            c = compare(
                a["sample_mean"],
                a["sample_sd"] or 0.0,
                b["sample_mean"],
                b["sample_sd"] or 0.0,
                a=a["config"],
                b=b["config"],
                noise=SAMPLE_NOISE,
            )
            how = "fio's bandwidth samples; repeat the runs (`storagelab lab fio --repeat 3`) for run-to-run noise"
        else:
            continue
        more = f" ({per.height} configurations, the two fastest)" if per.height > 2 else ""
        va, vb = a["zfs"], b["zfs"]
        unlike = f"; not like for like: ZFS {va} against {vb}" if va and vb and va != vb else ""
        out.append(f"{point}{more}: {c['text']} ({how}{unlike}).")
    return out


# ----------------------------------------------------------------------------- notebook 08 on any selection


def analyse(con, sel, tolerance_pct: float = 10.0, min_points: int = 3):
    """Notebook 08 on any selection: IOPS, bandwidth and latency percentiles against I/Os in flight per workload,
    bandwidth/IOPS/latency over time from fio's log files with ramp and steady state, latency histograms from
    the stored bins, and runs of one workload at one depth compared with their noise (``point_comparisons``)."""
    from ..units import MiB
    from . import fio_runs, measures, prose
    from .db import frame
    from .result import Result

    if not (tolerance_pct > 0 and min_points >= 2):
        raise ValueError(
            f"need tolerance_pct > 0 (the steady-state band, %) and min_points >= 2 (samples in it), "
            f"got {tolerance_pct} and {min_points}"
        )
    runs = fio_runs.runs(con, sel)
    res = Result.start(con, sel, measures.per_file(con, sel, runs))
    where, params = sel.sql("f")
    log_ids = frame(con, f"SELECT f.file_id FROM files f WHERE {where} AND f.format = 'fio-log'", params)[
        "file_id"
    ].to_list()
    if runs.is_empty() and not log_ids:
        res.missing.append(
            f"no fio output for {sel.describe()}: run fio with --output-format=normal,json+ (or "
            "`storagelab lab fio --preset smoke --target DIR`), put the output under data/raw/<study>/ "
            "and label it"
        )
        return res
    ids = sorted(set(runs["file_id"].to_list()))
    summ = per_run(load_summary(con, ids)) if ids else pl.DataFrame()
    zfs_of = dict(zip(runs["file_id"], runs["zfs_version"])) if runs.height else {}
    flag_of = {}
    if runs.height:  # the plausibility flags of notebook 05: a headline names them
        from .stacks import FLAGS, with_flags

        flagged = with_flags(runs).filter(~pl.col("flag").is_in([FLAGS[3], FLAGS[4]]))
        flag_of = dict(zip(flagged["file_id"], flagged["flag"]))
        from .stacks import below_ram

        for r in runs.iter_rows(named=True):  # a file a cache can hold: what it measured may be the cache
            if r["file_id"] not in flag_of and (fit := below_ram(r)) is not None:
                flag_of[r["file_id"]] = f"test file below RAM, {fit}"
    if summ.height:
        # sync sections (fsync/fdatasync) carry latencies only: nothing to set against the depth
        latency_only = summ.filter(pl.col("iops").is_null() | pl.col("bw_bytes_per_s").is_null())
        if latency_only.height:
            res.findings.append(
                f"{latency_only.height} section(s) without IOPS or bandwidth ("
                + ", ".join(sorted(set(latency_only["direction"].to_list())))
                + ": fio prints only their latencies) are left out of IOPS against depth."
            )
        summ = summ.filter(pl.col("iops").is_not_null() & pl.col("bw_bytes_per_s").is_not_null())
    if summ.height:
        summ = with_job_workloads(summ).join(
            runs.select("file_id", "host", "tool_version", _config(runs).alias("config")).unique(
                "file_id", keep="first"
            ),
            on="file_id",
            how="left",
        )
        # iodepth > 1 on a synchronous engine (psync, sync, ...): fio caps it at 1 and its IO depths say 1=100%
        capped = (pl.col("depth1_pct") >= 99.95) & (pl.col("iodepth") > 1)
        n_capped = summ.filter(capped).select("file_id", "job_index").n_unique()
        if n_capped:
            res.findings.append(
                f"{n_capped} job(s) set iodepth above 1, but fio kept one I/O in flight per job (its IO depths: "
                "1=100%; a synchronous engine such as psync caps the depth at 1): they are set at their real depth, 1."
            )
        summ = summ.with_columns(iodepth=pl.when(capped).then(pl.lit(1, pl.Int64)).otherwise(pl.col("iodepth")))
        depth = against_depth(summ, by=("workload", "direction"))
        res.frames["depth"] = depth
        res.file_ids += ids
        for key, g in depth.group_by(["workload", "direction"], maintain_order=True):
            workload, direction = key
            what = f"`{workload}` {direction}"
            if g["outstanding"].n_unique() == 1 and g.height > 1:
                r = g.row(0, named=True)
                n_runs = g.select("file_id", "doc_index").n_unique()
                counted = f"{g.height} runs" if n_runs == g.height else f"{g.height} jobs of {n_runs} fio run(s)"
                res.findings.append(
                    f"{what}: {counted}, all with QD {_qd(r['iodepth'], r['numjobs'])} jobs: "
                    f"IOPS {g['iops'].min():,.0f} to {g['iops'].max():,.0f}; nothing varies the depth."
                )
                continue
            if g["outstanding"].n_unique() == 1:
                r = g.row(0, named=True)
                p99 = "" if r["p99_ns"] is None else f", p99 latency {r['p99_ns'] / 1e6:.3f} ms"
                res.findings.append(
                    f"{what}: one run ({r['label']}, QD {_qd(r['iodepth'], r['numjobs'])} jobs): "
                    f"{r['iops']:,.0f} IOPS, {prose.rate(r['bw_bytes_per_s'])}{p99}."
                )
                continue
            # the runs at the fewest and the most I/Os in flight: their mean IOPS (and range) where a depth was run
            # more than once, the median of their p99 latencies (percentiles are not averaged)
            levels = (
                g.filter(pl.col("outstanding").is_not_null())
                .group_by("outstanding")
                .agg(
                    n=pl.len(),
                    iops=pl.col("iops").mean(),
                    low=pl.col("iops").min(),
                    high=pl.col("iops").max(),
                    p99=pl.col("p99_ns").median(),
                )
                .sort("outstanding")
            )
            lo, hi = levels.row(0, named=True), levels.row(-1, named=True)
            res.findings.append(
                f"{what}: from {_n(lo['outstanding'])} to {_n(hi['outstanding'])} I/Os in flight, IOPS "
                f"{_level_iops(lo)} -> {_level_iops(hi)} ({hi['iops'] / lo['iops']:.2f}x)"
                + (
                    ""
                    if lo["p99"] is None or hi["p99"] is None
                    else f", p99 latency {lo['p99'] / 1e6:.3f} -> {hi['p99'] / 1e6:.3f} ms"
                    + (" (medians)" if lo["n"] > 1 or hi["n"] > 1 else "")
                )
                + "."
                + not_one_setup(g)
            )
        res.findings += point_comparisons(summ, zfs_of)
    else:
        res.missing.append(f"the fio outputs of {sel.describe()} have no per-job results to chart")
    if log_ids:
        samples = load_log_samples(con, log_ids)
        unitless = samples.filter(
            pl.col("kind").is_in(["lat", "clat", "slat"]) & pl.col("latency_ns").is_null()
        )  # a latency log without fio's priority column: usec (fio 2.x) or ns (early 3.x), the log does not say
        if unitless.height:
            named = [
                f"{run.rsplit('/', 1)[-1]} {kind}"
                for run, kind in unitless.select("run", "kind").unique(maintain_order=True).rows()
            ]
            res.missing.append(
                f"{prose.listing(named)}: latency logs without fio's priority column (fio 2.x logged usec, early "
                "fio 3.x ns; the log does not say which), not charted"
            )
            samples = samples.filter(
                ~pl.col("kind").is_in(["lat", "clat", "slat"]) | pl.col("latency_ns").is_not_null()
            )
        combined = combine_jobs(samples)
        partial = partial_windows(combined)
        if partial.any():
            cut = combined.filter(partial)
            res.findings.append(
                f"{cut.height} window(s) of summed bandwidth or IOPS in which only some of the run's jobs logged a "
                f"sample ({prose.listing(sorted({r.rsplit('/', 1)[-1] for r in cut['run']}))}; fio logs each job's "
                "last sample when that job ends) are left out: their sum is not the run's total."
            )
        series = mark_steady(combined.filter(~partial), tolerance_pct=tolerance_pct, min_points=min_points)
        res.frames["series"] = series
        res.file_ids += log_ids
        for key, g in series.group_by(["run", "kind", "direction"], maintain_order=True):
            run, kind, direction = key
            steady = g.filter(pl.col("phase") == "steady")
            unit = (
                (lambda v: prose.rate(v))
                if kind == "bw"
                else (lambda v: f"{v:,.0f} IOPS")
                if kind == "iops"
                else (lambda v: f"{v / 1e6:.3f} ms")
            )
            if steady.height:
                t0 = steady["time_ns"].min() / 1e9
                res.findings.append(
                    f"{run.rsplit('/', 1)[-1]} {kind} {direction}: steady from {t0:g} s at "
                    f"{unit(steady['steady_mean'][0])} (every sample within ±{tolerance_pct:g} %); "
                    f"{g.height - steady.height} ramp sample(s) before."
                )
            else:
                res.findings.append(
                    f"{run.rsplit('/', 1)[-1]} {kind} {direction}: never steady within ±{tolerance_pct:g} % "
                    f"over {g.height} samples."
                )
    else:
        res.missing.append(
            f"no fio log files for {sel.describe()}: add --write_bw_log=NAME --write_iops_log=NAME "
            "--write_lat_log=NAME --log_avg_msec=1000 to fio and keep the NAME_*.log files beside "
            "its output (storagelab lab fio does this)"
        )
    hist_ids = frame(con, f"SELECT f.file_id FROM files f WHERE {where} AND f.format = 'fio-hist-log'", params)[
        "file_id"
    ].to_list()
    bins = load_histograms(con, ids, hist_ids)
    res.file_ids += sorted(set(bins.filter(pl.col("source") == "clat_hist log")["file_id"].to_list()))
    hist = histogram_buckets(bins)
    printed = load_printed_buckets(con, ids)
    if printed.height:
        hist = pl.concat([hist, printed.select(hist.columns)], how="vertical_relaxed") if hist.height else printed
    if hist.height:
        res.frames["histogram"] = hist
        kinds = hist.unique(["label", "direction", "source"])["source"].value_counts(sort=True)
        how = {
            "JSON+ clat": "fio's JSON+ completion latency bins",
            "JSON+ lat": "fio's JSON+ total latency bins",
            "clat_hist log": "write_hist_log completion latency logs",
        }
        res.findings.append(
            "Latency histograms (share of each run's I/Os per latency bucket): "
            + "; ".join(
                f"{n} from {how[src]}, 10 buckets per factor of 10"
                if src in how
                else f"{n} from fio's printed distribution (its own buckets, all directions together)"
                for src, n in kinds.iter_rows()
            )
            + "."
        )
    if "depth" in res.frames:
        best = res.frames["depth"].sort("iops", descending=True).row(0, named=True)
        flag = f" (flagged: {flag_of[best['file_id']]}; see 05_stacks)" if best["file_id"] in flag_of else ""
        fastest = res.frames["depth"].sort("bw_bytes_per_s", descending=True).row(0, named=True)
        bw_flag = f" (flagged: {flag_of[fastest['file_id']]})" if fastest["file_id"] in flag_of else ""
        res.headline = {
            "runs": str(len(ids)),
            "highest IOPS": f"{best['label']}: {best['iops']:,.0f} IOPS "
            f"({best['workload'].split(' ')[0]}, QD {_qd(best['iodepth'], best['numjobs'])}){flag}",
            "highest bandwidth": f"{fastest['bw_bytes_per_s'] / MiB:.1f} MiB/s{bw_flag}",
        }
        res.verdict = (
            f"Highest IOPS: {best['label']} at {best['iops']:,.0f} ({best['workload'].split(' ')[0]}, "
            f"{_n(best['outstanding'])} I/Os in flight){flag}."
        )
        if flag or bw_flag:
            res.caveats.append("the highest run is flagged (cache, test file below RAM, rounding or direct=1 ignored)")
    return res

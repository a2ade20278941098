"""fio latency distributions (notebook 08): percentiles from histogram bins by fio's own rule
(``bin_percentiles``), each run's histogram from JSON+ bins or write_hist_log logs in equal buckets on a log
scale (``load_histograms``, ``histogram_buckets``), and the distribution fio prints (``load_printed_buckets``)."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from .db import frame
from .fio_runs import file_names


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


LOG_OPTIONS = ("write_bw_log", "write_iops_log", "write_lat_log", "write_hist_log")


def load_log_runs(con) -> pl.DataFrame:
    """Which fio output each run of logs belongs to: ``run`` (as ``load_log_samples``), the log files'
    ``prefix``, and ``output_file_id``/``output_path`` of the fio output in the same folder with a job
    named like the prefix (NULL when there is none: logs saved without their output, or write_*_log=
    given another name than the job's and than its write_*_log= values). The lab names job, logs and output after the
    run, so they match; a job's write_bw_log=/path/NAME (JSON options, the command line) names its logs NAME_bw.N.log
    (fio's HOWTO): the last part of that value matches too."""
    names = " UNION ".join(
        f"SELECT file_id, job_index, regexp_extract(coalesce(json_extract_string(options_json, '$.{o}'), "
        f"regexp_extract(command, '--{o}[= ](\\S+)', 1)), '[^/]*$') AS name FROM fio_jobs JOIN files USING (file_id)"
        for o in LOG_OPTIONS
    )
    return frame(
        con,
        f"""
        WITH logs AS (
            SELECT DISTINCT parse_dirpath(f.path) AS dir, l.prefix FROM fio_log_samples l JOIN files f USING (file_id)
            WHERE l.prefix IS NOT NULL
            UNION
            SELECT DISTINCT parse_dirpath(f.path), h.prefix FROM fio_hist_samples h JOIN files f USING (file_id)
            WHERE h.prefix IS NOT NULL),
        log_names AS ({names}),
        outputs AS (
            SELECT DISTINCT parse_dirpath(f.path) AS dir, n.jobname, f.file_id, f.path, f.sha256
            FROM fio_jobs j JOIN files f USING (file_id),
                 LATERAL (SELECT j.jobname UNION SELECT name FROM log_names ln
                          WHERE ln.file_id = j.file_id AND ln.job_index = j.job_index AND name <> '') n(jobname)
            WHERE j.is_final)
        SELECT logs.dir || '/' || logs.prefix AS run, logs.prefix, min(o.file_id) AS output_file_id,
               min(o.path) AS output_path, count(o.file_id) AS candidates
        FROM logs LEFT JOIN outputs o ON o.dir = logs.dir AND o.jobname = logs.prefix
        GROUP BY ALL ORDER BY run""",
    )


def load_hist_samples(con, file_ids: Sequence[int] | None = None) -> pl.DataFrame:
    """fio_hist_samples with their run (folder + '/' + prefix), as ``load_log_samples``."""
    where, params = "", []
    if file_ids is not None:
        where, params = "WHERE list_contains(?::INTEGER[], h.file_id)", [sorted({int(i) for i in file_ids})]
    return frame(
        con,
        f"""
        SELECT parse_dirpath(f.path) || '/' || coalesce(h.prefix, f.path) AS run, h.file_id, h.job_index, h.time_ns,
               h.direction, h.bin_index, h.latency_lo_ns, h.latency_ns, h.latency_hi_ns, h.count,
               f.path, f.sha256, h.line_start, h.line_end
        FROM fio_hist_samples h JOIN files f USING (file_id) {where}
        ORDER BY run, h.job_index, h.time_ns, h.bin_index""",
        params,
    )


def load_histograms(
    con, file_ids: Sequence[int], hist_ids: Sequence[int] = (), lat_first: Sequence[int] = ()
) -> pl.DataFrame:
    """Each run's latency histogram per direction from the stored bins: the JSON+ bins of the final report (clat,
    else lat), summed over the run's jobs; and for write_hist_log logs whose run has no JSON+ bins among
    ``file_ids``, the bins of the logs among ``hist_ids`` summed over their intervals and jobs. Columns: ``label`` (the file's label, else its
    path; the log prefix for logs), ``file_id`` (the output's, or the log file's: one row per log file and bin),
    ``direction``,
    ``source`` ('JSON+ clat', 'JSON+ lat' or 'clat_hist log'), ``latency_ns`` (fio's bin value), ``count``.
    ``lat_first``: outputs whose I/O time is lat, not clat (``io_time``): their lat bins where fio wrote them."""
    cols = {
        "label": pl.Utf8,
        "file_id": pl.Int64,
        "direction": pl.Utf8,
        "source": pl.Utf8,
        "latency_ns": pl.Float64,
        "count": pl.Int64,
        # provenance: the output's lines of that direction in its final jobs (the JSON+ bins are inside its
        # "read"/"write" objects: first to last), or the log's lines
        "path": pl.Utf8,
        "sha256": pl.Utf8,
        "line_start": pl.Int64,
        "line_end": pl.Int64,
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
            best AS (SELECT file_id, direction,  -- 'clat' < 'lat'
                            CASE WHEN list_contains(?::INTEGER[], file_id) THEN max(kind) ELSE min(kind) END AS kind
                     FROM b GROUP BY file_id, direction),
            lines AS (SELECT r.file_id, r.direction, min(r.line_start) AS line_start, max(r.line_end) AS line_end
                      FROM fio_results r JOIN fio_jobs j USING (file_id, job_index) WHERE j.is_final GROUP BY ALL)
            SELECT f.label, b.file_id, b.direction, 'JSON+ ' || b.kind AS source,
                   b.latency_ns, b.count, f.path, f.sha256, lines.line_start, lines.line_end
            FROM b JOIN best USING (file_id, direction, kind) JOIN files f USING (file_id)
            LEFT JOIN lines USING (file_id, direction)
            ORDER BY label, b.file_id, b.direction, b.latency_ns""",
            [sorted({int(i) for i in file_ids}), sorted({int(i) for i in lat_first})],
        )
        parts.append(_named(con, bins, file_ids).sort("label", "file_id", "direction", "latency_ns"))
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
                .agg(
                    pl.col("count").sum(),
                    pl.col("path", "sha256").first(),
                    pl.col("line_start").min(),
                    pl.col("line_end").max(),
                )
                .with_columns(
                    pl.col("run").replace_strict(file_names(h["run"].to_list()), return_dtype=pl.String).alias("label"),
                    pl.lit("clat_hist log").alias("source"),
                )
                .sort("run", "direction", "latency_ns", "file_id")
            )
    parts = [x.select([pl.col(c).cast(t) for c, t in cols.items()]) for x in parts if x.height]
    return pl.concat(parts) if parts else pl.DataFrame(schema=cols)


PROVENANCE = ("path", "sha256", "line_start", "line_end")


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
        .agg(pl.col("count").sum(), *(pl.col(c).first() for c in PROVENANCE if c in hist.columns))
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
    if not file_ids:
        return pl.DataFrame()
    printed = frame(
        con,
        """
        SELECT f.label, b.file_id, CASE WHEN count(*) OVER (PARTITION BY b.file_id, b.bucket_lo_ns) > 1
                                        THEN ' (job ' || b.job_index || ')' ELSE '' END AS job,
               'all' AS direction, 'fio''s printed buckets' AS source, CAST(NULL AS BIGINT) AS count,
               b.bucket_lo_ns, b.bucket_hi_ns, b.pct, f.path, f.sha256, b.line_start, b.line_end
        FROM fio_latency_buckets b JOIN fio_jobs j USING (file_id, job_index) JOIN files f USING (file_id)
        WHERE j.is_final AND list_contains(?::INTEGER[], b.file_id)
          AND b.file_id NOT IN (SELECT file_id FROM fio_latency_bins)""",
        [sorted({int(i) for i in file_ids})],
    )
    if printed.is_empty():
        return printed.drop("file_id", "job")
    out = _named(con, printed, file_ids).with_columns(label=pl.col("label") + pl.col("job"))
    return out.drop("file_id", "job").sort("label", "bucket_lo_ns", maintain_order=True)


def _named(con, df: pl.DataFrame, file_ids: Sequence[int]) -> pl.DataFrame:
    """``df``'s ``label`` filled, where a file has none, with its ``fio_runs.file_names`` name among the files of
    ``file_ids`` (the selection's runs): three pools' sync_rand_write.log are three histograms, not one."""
    paths = frame(
        con, "SELECT file_id, path FROM files WHERE list_contains(?::INTEGER[], file_id)", [sorted(map(int, file_ids))]
    )
    names = file_names(paths["path"].to_list())
    by_id = {i: names[p] for i, p in paths.iter_rows()}
    fallback = pl.col("file_id").replace_strict(by_id, default=None, return_dtype=pl.String)
    return df.with_columns(label=pl.coalesce(pl.col("label"), fallback))

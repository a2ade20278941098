"""Charts of the device view (zpool iostat histograms beside fio, analysis/device_iostat.py): the builders charts.py
would hold, kept in their own module."""

from __future__ import annotations

import altair as alt
import polars as pl

from .chartkit import caption, latency_histogram_panels
from .chartsource import provenance

MAX_PANELS = 24  # blocks x wait kinds drawn; the table has them all


def zpool_latency_histogram(cells: pl.DataFrame, sel):
    """``zpool iostat -w`` histograms (device_iostat.latency_cells): the share of each column's I/Os per latency
    bucket, latency on a log scale, one panel per file, report, pool/vdev and wait kind; the first block of each
    report (the pool, or the first one named) and the columns that counted anything."""
    df = (
        cells.filter(pl.col("block") == 0)
        .with_columns(total=pl.col("count").sum().over("path", "sample", "wait", "op"))
        .filter(pl.col("total") > 0)
        .with_columns(
            pct=pl.col("count") / pl.col("total") * 100,
            lo_ms=(pl.col("bucket_max_ns") + 1) / 2 / 1e6,
            hi_ms=(pl.col("bucket_max_ns") + 1) / 1e6,
            panel=pl.concat_str(
                [pl.col("name"), pl.lit("report ") + pl.col("sample").cast(pl.Utf8), pl.col("wait"), pl.col("op")],
                separator=" | ",
                ignore_nulls=True,
            ),
        )
    )
    keep = df.select("panel").unique(maintain_order=True).head(MAX_PANELS)["panel"]
    df = df.filter(pl.col("panel").is_in(keep.implode())).select(
        "panel", "name", "wait", "op", "lo_ms", "hi_ms", "pct", "count", *provenance(df)
    )
    return latency_histogram_panels(
        df,
        "#d62728",
        "% of the column's I/Os",
        ["name:N", "wait:N", "op:N", alt.Tooltip("hi_ms:Q", format=".4f", title="up to ms"), "count:Q"],
        "zpool iostat -w latency histograms",
        [
            caption(sel, "zpool iostat -w"),
            "each bucket from half its upper bound to the bound (zfs_nicetime label); counts since import unless the "
            "output had intervals",
        ],
    )

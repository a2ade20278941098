"""Charts of fio runs (notebooks 05, 07, 08): bandwidth per run, IOPS and latency against I/Os in flight, the
iodepth x numjobs grid, latency histograms, logs over time."""

from __future__ import annotations

import textwrap

import altair as alt
import polars as pl

from .analysis.stacks_flags import DESIGN_STATUS, FLAGS
from .chartkit import (
    _panels,
    _short_number,
    _split_header,
    bar_scale,
    caption,
    latency_histogram_panels,
    spans_decades,
    top_categories,
)
from .chartsource import DERIVATION, SOURCES, provenance, sha_of, source
from .units import MiB


def run_bandwidth(runs, direction: str, sel, margin: float):
    """Bars of each run's bandwidth (MiB/s), coloured by its flag, one panel per workload, in 05's ranking order
    (unflagged runs first: a flagged run never heads it), each flagged run's label carrying its ⚠ mark; ticks at
    each run's device limit x margin where it is labelled. A log axis where the bandwidths span a decade or more
    (a linear one would hide all but the largest)."""
    df = runs.select(
        pl.col("label_marked").alias("label"),
        "workload",
        "bw_mib_s",
        "rank",
        *provenance(runs),
        status="status",
        limit_mib_s=pl.col("device_limit_bytes_per_s") * margin / MiB,
    )
    log, floor, scale = bar_scale(df["bw_mib_s"])
    df = df.filter(pl.col("bw_mib_s") > 0) if log else df
    df = df.with_columns(floor_mib_s=pl.lit(floor))
    base = alt.Chart(df).encode(
        y=alt.Y(
            "label:N",
            sort=alt.EncodingSortField("rank", op="min", order="ascending"),
            title=None,
            axis=alt.Axis(labelLimit=420),
        )
    )
    bars = base.mark_bar().encode(
        x=alt.X("bw_mib_s:Q", title=f"{direction} bandwidth (MiB/s{', log scale' if log else ''})", scale=scale),
        x2="floor_mib_s:Q",
        color=alt.Color(
            "status:N",
            title="flag",
            scale=alt.Scale(
                domain=[*FLAGS, DESIGN_STATUS],
                range=["#d62728", "#ff7f0e", "#e377c2", "#1f77b4", "#9e9e9e", "#fdd0a2", "#8c564b"],
            ),
        ),
        tooltip=["label", "workload", "status", alt.Tooltip("bw_mib_s:Q", format=".1f")],
    )
    ticks = (
        base.transform_filter("isValid(datum.limit_mib_s)")
        .mark_tick(color="#222", thickness=2, size=14)
        .encode(x=alt.X("limit_mib_s:Q", scale=scale))
    )
    return (
        (bars + ticks)
        .properties(width=460)
        .facet(
            row=alt.Row("workload:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left", labelLimit=600)),
        )
        .resolve_scale(y="independent")
        .properties(
            title=alt.TitleParams(
                f"fio {direction} bandwidth per run, by workload",
                subtitle=[
                    caption(sel, "fio runs, final report, group bandwidth (total I/O over elapsed time)"),
                    f"black ticks: the run's device limit x {margin:g}; ⚠: a flagged run (cache, stall, short run), "
                    "ranked after the others; 1 MiB = 2^20 bytes",
                ],
            )
        )
    )


def explore_run_bandwidth(runs, direction: str):
    """07's bars: each fio run's group bandwidth (``bw_mib_s``), coloured by stack (distinct colours, or the stacks
    with most runs and grey for the rest), on a log axis where the bandwidths span a decade or more."""
    df, colours = top_categories(runs, "stack", "other stacks")
    log, floor, scale = bar_scale(df["bw_mib_s"])
    df = (df.filter(pl.col("bw_mib_s") > 0) if log else df).with_columns(floor_mib_s=pl.lit(floor))
    return (
        alt.Chart(df)
        .mark_bar()
        .encode(
            x=alt.X("bw_mib_s:Q", title=f"{direction} bandwidth (MiB/s{', log scale' if log else ''})", scale=scale),
            x2="floor_mib_s:Q",
            y=alt.Y("label:N", sort="-x", title=None, axis=alt.Axis(labelLimit=360)),
            color=alt.Color("stack_colour:N", title="stack", scale=colours),
            tooltip=["label", "stack", "path", alt.Tooltip("bw_mib_s:Q", format=".1f")],
        )
        .properties(
            title=alt.TitleParams(
                f"fio {direction} bandwidth per run",
                subtitle=["Run status group bandwidth of each file's final report; 1 MiB = 2^20 bytes"],
            )
        )
    )


def runs_of(df, what: str) -> list[pl.Expr]:
    """Aggregations naming the runs behind a ``what`` (mean, median) of a group's rows: ``sources`` (every run's
    lines) and ``derivation`` ('mean of 3 runs'); none where ``df`` has no raw lines."""
    if "path" not in df.columns or "line_start" not in df.columns:
        return []
    end = "line_end" if "line_end" in df.columns else None
    return [
        source("path", "line_start", end, sha_of(df)).unique(maintain_order=True).alias(SOURCES),
        pl.when(pl.len() > 1).then(pl.format("{} of {} runs", pl.lit(what), pl.len())).alias(DERIVATION),
    ]


DASHES = {"p50": [1, 0], "p99": [6, 3], "p99.9": [1, 3]}  # solid, dashed, dotted


def _depth_latency(df, x, color):
    """The depth chart's latency panel: p50/p99/p99.9 lines through the unflagged runs (a setup's repeats: their
    median), and every flagged run's percentiles as crosses."""
    names = {"p50_ns": "p50", "p99_ns": "p99", "p99_9_ns": "p99.9"}
    long = (
        df.unpivot(
            index=["series", "series_colour", "outstanding", "label", "flagged", "flag_text", *provenance(df)],
            on=list(names),
            variable_name="pct",
            value_name="ns",
        )
        .with_columns(pl.col("pct").replace_strict(names), (pl.col("ns") / 1e6).alias("ms"))
        .drop_nulls("ms")
    )
    lat_df = (
        long.filter(pl.col("flagged") == "not flagged")
        .group_by("series", "series_colour", "outstanding", "pct")
        # the median of a setup's repeats: every run's lines
        .agg(pl.col("ms").median(), pl.col("label").first(), *runs_of(df, "median"))
        .sort("series", "pct", "outstanding")
    )
    crosses = (
        alt.Chart(long.filter(pl.col("flagged") != "not flagged"))
        .mark_point(shape="cross", filled=True, size=50)
        .encode(x=x, y="ms:Q", color=color, tooltip=["label:N", "series:N", "pct:N", "flag_text:N", "ms:Q"])
    )
    lat = (
        alt.Chart(lat_df)
        .mark_line(point=True)
        .encode(
            x=x,
            y=alt.Y("ms:Q", title="latency (ms, log scale)", scale=alt.Scale(type="log")),
            color=color,
            strokeDash=alt.StrokeDash(
                "pct:N", scale=alt.Scale(domain=list(DASHES), range=list(DASHES.values())), legend=None
            ),
            detail=["pct:N", "series:N"],
            tooltip=["label:N", "series:N", "pct:N", alt.Tooltip("ms:Q", format=".3f"), "outstanding:Q"],
        )
    )
    return (lat + crosses).properties(width=260, height=220)


def fio_depth(depth, sel):
    """IOPS (or bandwidth, for blocks of 64 KiB and more), and p50/p99/p99.9 latency, against I/Os in flight
    (iodepth x numjobs): one line per workload, direction and setup (a setup's repeats at one depth are averaged
    on the line and drawn as points), never across setups; a flagged run is drawn as a cross, joined by no line."""
    df = depth.with_columns(
        series=pl.concat_str([pl.col("workload"), pl.col("direction"), pl.col("setup")], separator=" | "),
        flagged=pl.when(pl.col("flag").is_not_null())
        .then(pl.lit("flagged (see the table)"))
        .otherwise(pl.lit("not flagged")),
        flag_text=pl.col("flag").fill_null(""),
        mib_s=pl.col("bw_bytes_per_s") / 2**20,
    )
    df, colours = top_categories(df, "series", "other series")  # 25 workloads: 9 colours and grey, each its line
    ticks = sorted({int(v) for v in df["outstanding"].drop_nulls().to_list()})
    x = alt.X(
        "outstanding:Q",
        title="I/Os in flight (iodepth x numjobs, log scale)",
        scale=alt.Scale(type="log", base=2),
        axis=alt.Axis(values=ticks, format="d"),
    )
    color = alt.Color(
        "series_colour:N",
        title="workload | direction | setup",
        legend=alt.Legend(orient="bottom", columns=1, labelLimit=900),
        scale=colours,
    )
    shape = alt.Shape(
        "flagged:N",
        title="flag",
        scale=alt.Scale(domain=["not flagged", "flagged (see the table)"], range=["circle", "cross"]),
        legend=alt.Legend(orient="bottom"),
    )
    # lines join unflagged runs only (a flagged run is a cross, never part of a curve: the findings state no ratio
    # across depths from it, so the chart draws none)
    clean = df.filter(pl.col("flag").is_null())
    means = clean.group_by("series", "series_colour", "outstanding", maintain_order=True).agg(
        pl.col("iops").mean(), pl.col("mib_s").mean(), *runs_of(clean, "mean")
    )
    rate_charts = []
    for col, title in (("iops", "IOPS"), ("mib_s", "bandwidth (MiB/s)")):
        log = spans_decades(df[col])  # 6.6k to 139k IOPS: a linear axis flattens the shallow depths
        y = alt.Y(
            f"{col}:Q", title=title + (", log scale" if log else ""), scale=alt.Scale(type="log" if log else "linear")
        )
        line = alt.Chart(means).mark_line().encode(x=x, y=y, color=color, detail="series:N")
        points = (
            alt.Chart(df)
            .mark_point(filled=True, size=50)
            .encode(
                x=x,
                y=f"{col}:Q",
                color=color,
                shape=shape,
                tooltip=["label:N", "series:N", "flag_text:N", f"{col}:Q"],
            )
        )
        rate_charts.append((line + points).properties(width=260, height=220))
    lat = _depth_latency(df, x, color)
    return alt.hconcat(*rate_charts, lat).properties(
        title=alt.TitleParams(
            "IOPS, bandwidth and latency percentiles against I/Os in flight",
            subtitle=[
                caption(sel, "fio results; bandwidth of each run's reporting group"),
                "one line per setup (host | stack | layout | devices): never across setups; crosses: flagged runs, "
                "joined by no line",
                "latency: clat, else total; the sync calls for fsync/fdatasync jobs; p50 solid, p99 dashed, p99.9 dotted",
            ],
        )
    )


def fio_latency_histogram(hist, sel):
    """Each run's latency histogram (``fio_views.histogram_buckets`` / ``load_printed_buckets``): the share of its
    I/Os per latency bucket, latency on a log scale, one panel per run and direction."""
    # fio's first printed bucket starts at 0 ('2=0.01%': up to 2 us), which a log axis cannot place: it dropped
    # every panel of the figure. It is drawn from half its upper edge (the factor of fio's next bucket).
    hi = pl.coalesce(pl.col("bucket_hi_ns"), pl.col("bucket_lo_ns") * 2)
    df = hist.filter(pl.col("pct").is_not_null()).with_columns(
        lo_ms=pl.when(pl.col("bucket_lo_ns") > 0).then(pl.col("bucket_lo_ns")).otherwise(hi / 2) / 1e6,
        hi_ms=hi / 1e6,
        panel=pl.concat_str([pl.col("label"), pl.col("direction"), pl.col("source")], separator=" | "),
    )
    return latency_histogram_panels(
        df,
        "#1f77b4",
        "% of I/Os",
        [
            "label:N",
            "direction:N",
            alt.Tooltip("lo_ms:Q", format=".4f", title="from ms"),
            alt.Tooltip("hi_ms:Q", format=".4f", title="to ms"),
            alt.Tooltip("pct:Q", format=".2f"),
            "count:Q",
        ],
        "Latency histograms",
        [
            caption(sel, "fio's latency bins (JSON+ or write_hist_log) or its printed distribution"),
            "bins grouped 10 per factor of 10; printed distributions in fio's own buckets (the first, from 0, drawn from"
            " half its upper edge)",
        ],
    )


# the phases of a time series (fio_timeseries.judge_steady) and their colours
PHASES = {
    "ramp": "#ff7f0e",
    "steady window": "#1f77b4",
    "after": "#6baed6",
    "not steady": "#9e9e9e",
    "too short": "#bdbdbd",
    "maxima": "#9467bd",
    "high regime": "#d62728",
    "other regime": "#8c564b",
}
MAX_TIME_PANELS = 36  # panels of the time-series figure: 18 rows of two


def fio_time_series(series, sel):
    """bandwidth/IOPS/latency over time from fio's logs, ramp and steady state coloured, one panel per kind."""
    unit = (
        pl.when(pl.col("kind") == "bw")
        .then(pl.lit("MiB/s"))
        .when(pl.col("kind") == "iops")
        .then(pl.lit("IOPS"))
        .otherwise(pl.lit("ms"))
    )
    df = series.with_columns(
        t_s=pl.col("time_ns") / 1e9,
        shown=pl.when(pl.col("kind") == "bw")
        .then(pl.col("value") / 2**20)
        .when(pl.col("kind").is_in(["iops"]))
        .then(pl.col("value"))
        .otherwise(pl.col("value") / 1e6),
        panel=pl.concat_str(
            [
                pl.col("name") if "name" in series.columns else pl.col("run").str.split("/").list.last(),
                pl.col("kind"),
                pl.col("direction"),
                pl.lit("(") + unit + pl.lit(")"),
                pl.col("flag") if "flag" in series.columns else pl.lit(""),  # the design checks' marker
            ],
            separator=" ",
        ).str.strip_chars(),
    )
    # a line per run and stretch of one phase: the windows before and after a high regime are not joined across it
    by = ["run", "kind", "direction"]
    df = df.sort([*by, "time_ns"]).with_columns(
        stretch=(pl.col("phase") != pl.col("phase").shift()).fill_null(True).cum_sum().over(by).cast(pl.Int64)
    )
    panels = df["panel"].unique(maintain_order=True).to_list()
    shown_note = []
    if len(panels) > MAX_TIME_PANELS:  # ~190 panels had made a 20,000-pixel figure: the first ones, and say so
        df = df.filter(pl.col("panel").is_in(panels[:MAX_TIME_PANELS]))
        shown_note = [
            f"{MAX_TIME_PANELS} of {len(panels)} series shown (the first by run); the findings above cover every one"
        ]
    chart = (
        alt.Chart(df)
        .mark_line(point=True)
        .encode(
            x=alt.X("t_s:Q", title="time (s)"),
            y=alt.Y("shown:Q", title="value (unit in the panel title)"),
            color=alt.Color(
                "phase:N",
                title="phase",
                scale=alt.Scale(
                    domain=[*PHASES],
                    range=[*PHASES.values()],
                ),
            ),
            # one line per run and phase stretch: runs of one log name in other folders are never joined
            detail=["run:N", "stretch:Q"],
        )
    )
    return _panels(
        chart,
        150,
        "fio logs over time: steady state by SNIA PTS",
        [caption(sel, "fio bw/iops/lat logs, jobs combined"), "bw in MiB/s, iops per second, latencies in ms"]
        + shown_note,
    ).resolve_axis(x="independent")  # each panel its own time axis, labelled


def _wrap(text: str, width: int = 44) -> list[str]:
    """A panel title's part in lines of at most ``width`` characters (a long word on a line of its own)."""
    return textwrap.wrap(text, width, break_long_words=False) or [text]


GRID_COLUMNS = 4  # grids side by side (analysis.fio_grid.MAX_PANELS: three rows of four)


def fio_depth_grid(grid, sel):
    """fio-plot's iodepth x numjobs view (``analysis.fio_grid.grid``): one heatmap per workload, direction and setup
    that has a grid, wrapped ``GRID_COLUMNS`` to a row, each titled with its workload, direction and setup and the
    unit of its cells (IOPS, or MiB/s for large blocks); rows numjobs, columns iodepth, only the ones it measured.
    A cell is the mean of its runs, labelled with it (and 'n=N' for N runs), coloured by its share of the panel's
    highest cell; a cell holding a flagged run is outlined in red; the tooltip has its p99 and every run's lines."""
    # the panel's title, a line per part: the workload wrapped, its direction, the setup's parts, the cells' unit
    titles = {
        r["panel"]: "\n".join(
            [
                *(line for part in (r["workload"], r["direction"], *r["setup"].split(" | ")) for line in _wrap(part)),
                f"(cells: {r['metric']})",
            ]
        )
        for r in grid.cells.select("panel", "workload", "direction", "setup", "metric").unique().iter_rows(named=True)
    }
    cells = grid.cells.with_columns(
        title=pl.col("panel").replace_strict(titles, return_dtype=pl.String),
        text=pl.col("value").map_elements(_short_number, pl.String)
        + pl.when(pl.col("runs") > 1).then(pl.lit(" n=") + pl.col("runs").cast(pl.String)).otherwise(pl.lit("")),
        dark=pl.col("share") < 0.5,  # viridis is dark below the middle: white text there
    )
    depths = cells.group_by("panel").agg(pl.col("iodepth").n_unique().alias("x"), pl.col("numjobs").n_unique())
    base = alt.Chart().encode(
        x=alt.X("iodepth:O", title="iodepth", sort="ascending", axis=alt.Axis(grid=False, labelAngle=0)),
        y=alt.Y("numjobs:O", title="numjobs", sort="descending", axis=alt.Axis(grid=False)),
    )
    rect = base.mark_rect(stroke="#d62728").encode(
        color=alt.Color(
            "share:Q",
            title="share of the panel's highest cell",
            scale=alt.Scale(scheme="viridis", domain=[0, 1]),
            legend=alt.Legend(format="%", orient="top", titleLimit=400),
        ),
        strokeWidth=alt.condition("datum.flagged", alt.value(3), alt.value(0)),
        tooltip=[
            "workload:N",
            "direction:N",
            "setup:N",
            "iodepth:O",
            "numjobs:O",
            alt.Tooltip("value:Q", format=",.1f", title="mean"),
            alt.Tooltip("metric:N", title="unit"),
            "runs:Q",
            alt.Tooltip("p99_ms:Q", format=".3f", title="p99 ms (median of the runs)"),
            alt.Tooltip("flags:N", title="flagged"),
        ],
    )
    text = base.mark_text(fontSize=10).encode(
        text="text:N", color=alt.condition("datum.dark", alt.value("white"), alt.value("black"))
    )
    width = max(220, 44 * max(depths["x"].max() or 1, 1))  # wide enough for a workload's name, line by line
    height = max(44, 24 * max(depths["numjobs"].max() or 1, 1))
    shown = (
        f"{len(grid.drawn)} of {grid.grids} grids"
        + (f" (names containing {grid.only!r})" if grid.only else "")
        + (" (the most runs)" if grid.not_drawn else "")
    )
    return (
        alt.layer(rect, text, data=cells)
        .properties(width=width, height=height)
        .facet(
            facet=alt.Facet(
                "title:N",
                title=None,
                sort=cells["title"].unique(maintain_order=True).to_list(),  # the most runs first
                header=alt.Header(labelExpr="split(datum.label, '\\n')", labelLimit=width + 60),
            ),
            columns=GRID_COLUMNS,
        )
        .resolve_scale(x="independent", y="independent")
        .properties(
            title=alt.TitleParams(
                "iodepth x numjobs: IOPS or MiB/s per workload, direction and setup",
                subtitle=[
                    caption(sel, "fio results; bandwidth of each run's reporting group"),
                    f"{shown}; a panel's title: workload, direction, setup (host | stack | layout | devices), the "
                    "unit of its cells (IOPS, or MiB/s = 2^20 bytes/s for blocks of 64 KiB and more)",
                    "a cell: the mean of its runs (n=N: N runs), k = thousand; colour: its share of the panel's "
                    "highest cell; red outline: a flagged run among them (the tooltip names the flag, the p99)",
                ],
            )
        )
    )


CARD_TESTS = ["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"]  # analysis.disk_card.TESTS, in order


def disk_card(results, sel):
    """10's cards side by side: the eight classic results (``disk_card.chart_frame``) in MB/s, one panel per machine
    and device, read and write next to each other per test; a log axis where the results span a decade or more;
    a flagged result outlined in red and marked ⚑ (its flags in the tooltip)."""
    log, floor, scale = bar_scale(results["mb_s"])
    df = (results.filter(pl.col("mb_s") > 0) if log else results).with_columns(
        floor_mb_s=pl.lit(floor), mark=pl.when(pl.col("flagged")).then(pl.lit("⚑")).otherwise(pl.lit(""))
    )
    x = alt.X(
        "mb_s:Q",
        title=f"MB/s (10^6 bytes/s{', log scale' if log else ''})",
        scale=scale,
        axis=alt.Axis(labelOverlap="greedy"),
    )
    base = alt.Chart().encode(
        y=alt.Y("test:N", sort=CARD_TESTS, title=None), yOffset=alt.YOffset("direction:N", sort=["read", "write"])
    )
    bars = base.mark_bar(stroke="#d62728").encode(
        x=x,
        x2="floor_mb_s:Q",
        color=alt.Color(
            "direction:N", title=None, scale=alt.Scale(domain=["read", "write"], range=["#1f77b4", "#ff7f0e"])
        ),
        strokeWidth=alt.condition("datum.flagged", alt.value(2), alt.value(0)),
        tooltip=[
            "card:N",
            "test:N",
            "direction:N",
            alt.Tooltip("mb_s:Q", format=",.1f", title="MB/s"),
            alt.Tooltip("iops:Q", format=",.0f", title="IOPS"),
            alt.Tooltip("p99_ms:Q", format=".3g", title="p99 ms"),
            "runs:Q",
            "flags:N",
        ],
    )
    marks = base.mark_text(align="left", dx=3, color="#d62728").encode(x=x, text="mark:N")
    return (
        alt.layer(bars, marks, data=df)
        .properties(width=300, height=alt.Step(12))
        .facet(column=alt.Column("card:N", title=None, header=_split_header(300)))
        .properties(
            title=alt.TitleParams(
                "The disk card: SEQ1M and RND4K, read and write, per machine and device",
                subtitle=[
                    caption(sel, "fio runs recognised by their workload; group bandwidth, the mean of repeats"),
                    "⚑ and red outline: a flagged result (a virtual disk, beyond the device class, cache, too short); "
                    "1 MB = 10^6 bytes",
                ],
            )
        )
    )

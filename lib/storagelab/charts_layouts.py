"""Charts of layouts and records (notebooks 01 and 02): speed against vdev count, one serial reader, layouts
against one disk, stated ratios against the model, read amplification, zdb block sizes."""

from __future__ import annotations

import altair as alt
import polars as pl

from .analysis import scaling
from .chartkit import caption, source_caption, top_categories
from .chartsource import (
    derived,
    no_source,
    provenance,
    sha_of,
    source,
    source_rows,
    sources,
    sources_by,
    with_provenance,
)
from .claims import ClaimsError, load_claims, stated_where
from .units import KiB, MiB

STATED = "figures stated in the study's text (claims.csv)"


def vdev_scaling(scaled, baseline_vdev_count: int, sel):
    """Layout-table speed relative to the baseline vdev count, per test and vdev type, with the two models."""
    cf = with_provenance(  # a measured point: its layout table's line; the two models are arithmetic
        scaling.chart_frame(scaled), scaled, ["test", "vdev_type", "vdev_count"], pl.col("series") == "measured"
    )
    models = pl.col("series") != "measured"  # arithmetic: named, with the layout rows it was computed at
    cf = derived(
        cf,
        pl.when(pl.col("series") == "disk model")
        .then(pl.lit("disk model: the disks that serve this test in the layout over the baseline's (layout table)"))
        .when(models)
        .then(
            pl.format(
                "sum of vdevs: {} vdevs / {} (the baseline), at the layouts of that count",
                "vdev_count",
                pl.lit(baseline_vdev_count),
            )
        )
        .otherwise(pl.lit(None)),
    )
    cf = pl.concat(
        [
            sources_by(cf.filter(pl.col("vdev_type") != "all"), scaled, ["test", "vdev_type", "vdev_count"], models),
            sources_by(cf.filter(pl.col("vdev_type") == "all"), scaled, ["test", "vdev_count"], models),
        ],
        how="diagonal_relaxed",
    ).with_columns(vdev_type=pl.when(pl.col("vdev_type") == "all").then(pl.lit("any")).otherwise(pl.col("vdev_type")))
    disks = sorted(set(scaled["disks"].to_list()))
    return (
        alt.Chart(cf)
        .mark_line(point=alt.OverlayMarkDef(size=16))
        .encode(
            x=alt.X(
                "vdev_count:Q", title="top-level vdevs" + (f" ({disks[0]} disks in all)" if len(disks) == 1 else "")
            ),
            y=alt.Y(
                "value:Q",
                title=f"speed relative to {baseline_vdev_count} vdev (x, log scale)",
                scale=alt.Scale(type="log"),
            ),
            color=alt.Color("vdev_type:N", title="vdev type"),
            strokeDash=alt.StrokeDash(
                "series:N",
                legend=None,
                scale=alt.Scale(
                    domain=["measured", "sum of vdevs (n x)", "disk model"], range=[[1, 0], [6, 3], [2, 2]]
                ),
            ),
            detail="series:N",
        )
        .properties(width=330, height=260)
        .facet(column=alt.Column("test:N", title=None))
        .properties(
            title=alt.TitleParams(
                "Speed vs number of vdevs, relative to the baseline layout",
                subtitle=[
                    caption(sel, "layout tables"),
                    "solid: measured; dashed: sum-of-vdevs rule (n x; not drawn for reads of one fixed disk set);",
                    "dotted: disk model (writes: one disk per mirror vdev, data disks of raidz; reads: every mirror "
                    "disk, data disks of raidz)",
                ],
            )
        )
    )


def serial_reader(fitted, terms_test: str, sel):
    """One reader's measured speed per layout (points) against the fitted serial-reader model (lines)."""
    df = pl.concat(  # diagonal: the model rows have no provenance columns
        [
            fitted.select(  # a measured point: its layout table's line (the fitted model has none)
                "vdev_type",
                "vdev_count",
                "layout",
                *provenance(fitted),
                mib_s=pl.col("speed_bytes_per_s") / MiB,
                series=pl.lit("measured"),
            ),
            derived(  # arithmetic: the model fitted to every measured point
                fitted.select(
                    "vdev_type",
                    "vdev_count",
                    "layout",
                    mib_s=pl.col("model_bytes_per_s") / MiB,
                    series=pl.lit("serial-reader model (fitted)"),
                ),
                "serial-reader model: 3 terms fitted by least squares to the measured points",
                source_rows(fitted),
            ),
        ],
        how="diagonal",
    )
    base = alt.Chart(df).encode(
        x=alt.X("vdev_count:Q", title="top-level vdevs (same disks, narrower vdevs)"),
        y=alt.Y("mib_s:Q", title="MiB/s"),
        color=alt.Color("vdev_type:N", title="vdev type"),
        tooltip=["layout", "series", alt.Tooltip("mib_s:Q", format=".1f", title="MiB/s")],
    )
    measured = base.transform_filter("datum.series == 'measured'").mark_point(filled=True, size=30)
    model = base.transform_filter("datum.series != 'measured'").mark_line(strokeDash=[5, 3])
    return (measured + model).properties(
        width=460,
        height=260,
        title=alt.TitleParams(
            f"{terms_test}: one serial reader, measured vs model",
            subtitle=[
                caption(sel, "layout tables"),
                "points: measured; dashed: fitted serial-reader model (3 terms, fitted, not measured)",
            ],
        ),
    )


def _with_baseline_runs(df):
    """fio runs relative to their group's baseline with ``sources``: the run's own lines and those of the baseline's
    runs (the mean it is divided by), and the arithmetic. The baseline runs are the group's rows at the baseline
    vdev count (``vdev_count / ideal``: ``scaling.relative``'s rule)."""
    if not {"path", "line_start", "baseline", "ideal"} <= set(df.columns) or df.is_empty():
        return df
    by = [c for c in scaling.FIO_SCALING_GROUP if c in df.columns]
    end = "line_end" if "line_end" in df.columns else None
    base = (
        df.filter(pl.col("vdev_count") == (pl.col("vdev_count") / pl.col("ideal")).round(0))
        .group_by(by)
        .agg(source("path", "line_start", end, sha_of(df)).unique(maintain_order=True).alias("baseline_sources"))
    )
    out = df.join(base, on=by, how="left", nulls_equal=True)
    own = pl.concat_list(source("path", "line_start", end, sha_of(df)))
    return derived(
        out,
        pl.format("this run's bandwidth / the mean of its baseline's {} run(s)", pl.col("baseline_sources").list.len()),
        pl.concat_list(own, pl.col("baseline_sources").fill_null([])).list.unique(maintain_order=True),
    ).drop("baseline_sources", "path", "line_start", *([end] if end else []), *([sha_of(df)] if sha_of(df) else []))


def fio_vdev_scaling(fio_scaled, configs, sel):
    """fio runs: bandwidth relative to the mean of the baseline vdev count's runs within one group (stack, vdev
    type, workload). Each run is a point (repeats of one vdev count side by side, never joined); the line joins the
    means of each vdev count's runs (``scaling_repeats.frame``), the dashed line is the sum-of-vdevs rule. A point
    names its run's lines and its baseline's; a mean and the rule name the runs they were computed from."""
    group = pl.concat_str([pl.col("vdev_type"), pl.col("workload")], separator=" | ").alias("group")
    runs = _with_baseline_runs(fio_scaled.filter(pl.col("relative").is_not_null()).with_columns(group))
    key = [c for c in (*scaling.FIO_SCALING_GROUP, "phase") if c in configs.columns and c in fio_scaled.columns]
    at = sources_by(configs.with_columns(group), fio_scaled, [*key, "vdev_count"])
    means = derived(
        at.filter(pl.col("relative").is_not_null()).select(
            "group", "vdev_count", "relative", "sources", series=pl.lit("mean of the runs")
        ),
        "the mean of this vdev count's runs / the mean of the baseline's runs",
    )
    rule = derived(
        at.select("group", "vdev_count", "sources", relative=pl.col("ideal"), series=pl.lit("sum-of-vdevs rule (n x)")),
        "the rule: this vdev count / the baseline's (the runs at that count)",
    )
    flagged = pl.col("design_flagged") if "design_flagged" in runs.columns else pl.lit(None)
    runs = runs.with_columns(
        series=pl.lit("run"),
        design=pl.when(flagged).then(pl.lit("flagged by the design checks")).otherwise(pl.lit("no design flag")),
    )
    df = pl.concat([runs, means, rule], how="diagonal_relaxed")
    df, colours = top_categories(df, "group", "other groups")
    counts = sorted({int(c) for c in df["vdev_count"].drop_nulls()})  # ticks at whole vdevs only
    base = alt.Chart(df).encode(
        x=alt.X("vdev_count:Q", title="top-level vdevs", axis=alt.Axis(values=counts, format="d")),
        y=alt.Y("relative:Q", title="bandwidth relative to the baseline's mean (x)"),
        color=alt.Color(
            "group_colour:N",
            title="vdev type | workload",
            legend=alt.Legend(labelLimit=600, orient="bottom", columns=1),
            scale=colours,
        ),
        detail="group:N",
        tooltip=["group:N", "series:N", "vdev_count:Q", alt.Tooltip("relative:Q", format=".2f")],
    )
    points = (
        base.transform_filter("datum.series == 'run'")
        .mark_point(filled=True, size=50)
        .encode(
            shape=alt.Shape(
                "design:N",
                title="run",
                legend=alt.Legend(orient="bottom"),
                scale=alt.Scale(domain=["no design flag", "flagged by the design checks"], range=["circle", "cross"]),
            )
        )
    )
    mean = base.transform_filter("datum.series == 'mean of the runs'").mark_line(
        point=alt.OverlayMarkDef(shape="diamond")
    )
    ideal = base.transform_filter("datum.series == 'sum-of-vdevs rule (n x)'").mark_line(strokeDash=[6, 3], opacity=0.6)
    return (ideal + mean + points).properties(
        title=alt.TitleParams(
            "fio runs: bandwidth vs number of vdevs",
            subtitle=[
                caption(sel, "fio runs"),
                "points: each run; solid line: the mean of each vdev count's runs; dashed: the sum-of-vdevs rule (n x)",
            ],
        )
    )


def _stated(df, on: str, prefix: str = ""):
    """``df`` with the claims.csv line of the claim its column ``on`` names (claims.stated_where: path, line_start,
    line_end, sha256, stated_in; each named with ``prefix``). A claim id is unique across the studies' files; one no
    file has (or every file, when one cannot be read: its error is the claims table's to report) gets nulls."""
    if on not in df.columns:
        return df
    try:
        where = stated_where(load_claims())
    except ClaimsError:
        return df
    where = where.rename({c: prefix + c for c in where.columns if c != "claim_id"})
    return df.join(where, left_on=on, right_on="claim_id", how="left", coalesce=True)


def ratio_bars(df, y: str, x: str, title: str, subtitle: list[str], rule_at: float, x_title: str):
    """Horizontal bars of ratios with a dashed reference rule (e.g. the sum-of-vdevs rule at 2.0x). A bar of a
    stated figure (a ``claim_id`` column) names its claims.csv line and the passage it cites, and links to it."""
    if "raw_file" not in df.columns:
        df = no_source(_stated(df, "claim_id"), f"{STATED}: no claims.csv line found for it")
    bars = (
        alt.Chart(df)
        .mark_bar()
        .encode(
            y=alt.Y(f"{y}:N", title=None, sort=None, axis=alt.Axis(labelLimit=420)), x=alt.X(f"{x}:Q", title=x_title)
        )
    )
    rule = (
        alt.Chart(no_source(pl.DataFrame({"x": [rule_at]}), f"reference line ({rule_at:g}x)"))
        .mark_rule(strokeDash=[4, 4], color="#222", size=1.5)
        .encode(x="x:Q")
    )
    return (bars + rule).properties(width=420, title=alt.TitleParams(title, subtitle=subtitle))


def single_disk(one, sel):
    """Each layout against one disk of the same family and workload (dots), with the model's range (bars). A dot
    is a ratio of two runs (the layout's and the single disk's files): it names both runs' lines and the arithmetic; a
    model's range is drawn at the same rows (the same names: its inputs are the layout labels)."""
    df = one.with_columns(what=pl.concat_str([pl.col("tool"), pl.col("direction"), pl.col("label")], separator=" | "))
    if {"path", "single_path"} <= set(df.columns):  # a ratio of two runs: both lines, and the arithmetic
        df = derived(
            df,
            pl.format("the layout's {} / the single disk's {}", "value", "single_value"),
            sources(
                source("path", "line_start", "line_end", sha_of(df)),
                source("single_path", "single_line_start", "single_line_end", sha_of(df, "single_path")),
            ),
        ).drop("path", "line_start", "line_end", *[c for c in (sha_of(df),) if c])
    base = alt.Chart(df).encode(y=alt.Y("what:N", title=None, axis=alt.Axis(labelLimit=460)))
    x_title = "relative to one disk (x)"
    ranges = alt.Chart(df.filter(pl.col("model_high") > pl.col("model_low"))).encode(y=alt.Y("what:N"))
    model = ranges.mark_bar(color="#c6dbef", height=10).encode(x=alt.X("model_low:Q", title=x_title), x2="model_high:Q")
    model_point = base.mark_tick(color="#6baed6", thickness=2, size=14).encode(x=alt.X("model_low:Q", title=x_title))
    dots = base.mark_point(filled=True, size=80, color="#d62728").encode(
        x=alt.X("ratio:Q", title=x_title), tooltip=["label", "single", "ratio", "model"]
    )
    layers = (
        (model + model_point + dots)
        if df.filter(pl.col("model_high") > pl.col("model_low")).height
        else (model_point + dots)
    )
    return layers.properties(
        width=420,
        title=alt.TitleParams(
            "Layouts against one disk: measured (red) and the model's range (blue)",
            subtitle=[
                caption(sel, "fio and bonnie++ runs labelled with their vdev layout"),
                "mirror: writes 1x per vdev, reads 1 to w x; raidz: its data disks",
            ],
        ),
    )


def _stated_ratios(ratios):
    """The stated ratios (numerator claim / denominator claim): each names both claims' claims.csv lines and the
    passages they cite, with the arithmetic; one whose claims no file has says so."""
    df = _stated(_stated(ratios, "numerator", "num_"), "denominator", "den_")
    if "num_path" not in df.columns or "den_path" not in df.columns:
        return no_source(ratios, f"{STATED}: no claims.csv line found for them")
    return derived(
        no_source(df, f"{STATED}: no claims.csv line found for them"),
        pl.format(
            "stated {} / stated {} ({} MiB/s / {} MiB/s)",
            "numerator",
            "denominator",
            pl.col("numerator_mib_s").round(1),
            pl.col("denominator_mib_s").round(1),
        ),
        sources(
            source("num_path", "num_line_start", "num_line_end", "num_sha256"),
            source("den_path", "den_line_start", "den_line_end", "den_sha256"),
        ),
    ).with_columns(stated_in=pl.concat_str("num_stated_in", "den_stated_in", separator="; "))


def stated_vs_model(ratios, sel):
    """The study's stated ratios (dots) against the model (red ticks). A dot is a ratio of two figures stated in the
    study's text: it names both claims.csv lines (and the passages they cite) and links to them; a tick is the model,
    arithmetic on its parameters: no lines, its formula."""
    dots = (
        alt.Chart(_stated_ratios(ratios))
        .mark_point(filled=True, size=90)
        .encode(
            y=alt.Y("claim:N", title=None, sort=None, axis=alt.Axis(labelLimit=420)),
            x=alt.X("ratio:Q", title="ratio (x)"),
            tooltip=["claim", "ratio", "theory", alt.Tooltip("stated_in:N", title="stated in")],
        )
    )
    model = derived(
        no_source(ratios.filter(pl.col("theory").is_not_null()), "arithmetic on the model's parameters"),
        pl.col("theory_basis"),
    )
    ticks = (
        alt.Chart(model)
        .mark_tick(color="#a31515", thickness=2, size=18)
        .encode(y=alt.Y("claim:N", sort=None), x="theory:Q", tooltip=["claim", "theory"])
    )
    one = (
        alt.Chart(no_source(pl.DataFrame({"x": [1.0]}), "reference line (1x)")).mark_rule(color="#999").encode(x="x:Q")
    )
    return (one + dots + ticks).properties(
        width=420,
        title=alt.TitleParams(
            "Stated ratios (dots) vs the model (red ticks)",
            subtitle=[caption(sel, "figures stated in the study's text, claims.csv")],
        ),
    )


def amplification(amp, recordsizes, sel):
    """The record model's read amplification per I/O size and recordsize: arithmetic, no raw lines."""
    ach = no_source(
        derived(
            amp.with_columns(
                io_kib=pl.col("io_bytes") / KiB,
                recordsize=(pl.col("recordsize_bytes") // KiB).cast(pl.String) + " KiB",
            ),
            "bytes read per byte asked for = whole records read (recordsize each) / the I/O size",
        ),
        "arithmetic on the parameters (record model, zfs-facts F17): no log",
    )
    return (
        alt.Chart(ach)
        .mark_line(point=True)
        .encode(
            x=alt.X("io_kib:Q", title="random I/O size (KiB, log scale)", scale=alt.Scale(type="log", base=2)),
            y=alt.Y(
                "read_amp:Q", title="bytes read per byte asked for (x, log scale)", scale=alt.Scale(type="log", base=2)
            ),
            color=alt.Color("recordsize:N", title="recordsize", sort=[f"{r // KiB} KiB" for r in recordsizes]),
        )
        .properties(
            title=alt.TitleParams(
                "Read amplification of uncached random reads vs recordsize (model)",
                subtitle=[
                    source_caption(
                        "record model (docs/formats/zfs-facts.md F17)",
                        "partial-record overwrites write the same factor",
                    )
                ],
            )
        )
    )


def block_sizes(hist, recordsize: int, sel):
    """zdb -bb block size histogram: logical bytes per block-size bucket and pool (bars), the recordsize (rule)."""
    df = hist.filter(pl.col("lsize_bytes") > 0).with_columns(
        size_kib=pl.col("block_size_bytes") / KiB, logical_mib=pl.col("lsize_bytes") / MiB
    )
    df = df if "raw_file" in df.columns else no_source(df, "the histogram row's zdb output is not recorded")
    bars = (
        alt.Chart(df)
        .mark_bar()
        .encode(
            x=alt.X("size_kib:O", title="block size bucket (KiB, lower bound; the bucket holds up to twice it)"),
            y=alt.Y("logical_mib:Q", title="logical bytes in blocks of that size (MiB)"),
            color=alt.Color("pool:N", title="pool"),
            xOffset="pool:N",
            tooltip=["pool", "block_size_bytes", "lsize_count", alt.Tooltip("logical_mib:Q", format=".1f")],
        )
    )
    return bars.properties(
        width=460,
        title=alt.TitleParams(
            "Where the data's bytes sit: logical block sizes (zdb -bb)",
            subtitle=[
                caption(sel, "zdb -bb block size histogram"),
                f"recordsize {recordsize // KiB} KiB: full records fall in its bucket; zdb's K/M figures have 3 digits",
            ],
        ),
    )

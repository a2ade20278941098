"""The altair theme and figure export. Charts never compute numbers: they draw frames from lib/.

Every figure is saved beside the reports as SVG, PNG (vl-convert, offline) and Vega-Lite JSON,
and shown in the notebook as static SVG, so executed notebooks and HTML reports need no
JavaScript and no network.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import altair as alt
import polars as pl

from . import excerpts, paths
from .analysis import prose, scaling
from .analysis.alignment import TESTS_ORDER
from .analysis.stacks import DESIGN_STATUS, FLAGS
from .paths import figure_dir
from .units import GiB, KiB, MiB, TiB

FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"
PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]


def _theme():
    return {
        "config": {
            "font": FONT,
            "view": {"continuousWidth": 520, "continuousHeight": 300, "stroke": None},
            "axis": {"labelFontSize": 11, "titleFontSize": 12, "grid": True, "gridColor": "#e8e8e8"},
            "legend": {"labelFontSize": 11, "titleFontSize": 12, "labelLimit": 320},
            "title": {"fontSize": 14, "anchor": "start", "subtitleColor": "#555", "subtitleFontSize": 11},
            "range": {"category": PALETTE},
            "background": "white",
        }
    }


def setup() -> None:
    """Register and enable the storagelab theme and the static SVG renderer (idempotent)."""
    try:
        alt.theme.register("storagelab", enable=True)(_theme)
    except AttributeError:  # altair < 5.5
        alt.themes.register("storagelab", _theme)
        alt.themes.enable("storagelab")
    alt.renderers.enable("svg")
    display_tables()


def display_tables() -> None:
    """Reports show whole tables (claims, provenance): no elided rows or cut strings."""
    pl.Config.set_tbl_rows(200)
    pl.Config.set_fmt_str_lengths(160)
    pl.Config.set_tbl_cols(30)
    pl.Config.set_tbl_hide_dataframe_shape(True)
    pl.Config.set_tbl_hide_column_data_types(True)


def source_caption(study: str, extra: str = "") -> str:
    text = f"Source: {study}"
    return f"{text} — {extra}" if extra else text


_slug = paths.slug


def save(chart: alt.TopLevelMixin, name: str, notebook: str, out_dir: Path | None = None) -> dict[str, Path]:
    """Save ``chart`` as <name>.svg, .png and .vl.json under reports/figures/<notebook>/; return the paths."""
    import vl_convert as vlc  # noqa: PLC0415  (heavy: only when a chart is saved)

    out = figure_dir(notebook, out_dir)
    out.mkdir(parents=True, exist_ok=True)
    spec = chart.to_dict()
    base = out / _slug(name)
    files = {"vl.json": base.with_suffix(".vl.json"), "svg": base.with_suffix(".svg"), "png": base.with_suffix(".png")}
    # the interactive spec: tooltips with each mark's data, links to the raw lines (pages in <report>/raw/);
    # the static SVG and PNG are drawn from the chart as built
    interactive = excerpts.enrich(spec, out.parent.parent)
    files["vl.json"].write_text(json.dumps(interactive, indent=1, sort_keys=True), encoding="utf-8")
    files["svg"].write_text(vlc.vegalite_to_svg(spec), encoding="utf-8")
    files["png"].write_bytes(vlc.vegalite_to_png(spec, scale=2))
    return files


def figure_id(name: str, notebook: str) -> str:
    """The id a saved figure goes by: "<notebook>/<name>", as under reports/figures/ (without suffix)."""
    return f"{_slug(notebook)}/{_slug(name)}"


class Figure:
    """A saved chart. It displays as the exact SVG that was saved, with the figure's id in the output
    metadata (the HTML report links each chart to its files with it); anything else is the chart's."""

    def __init__(self, chart: alt.TopLevelMixin, files: dict[str, Path], figure: str):
        self.chart, self.files, self.figure = chart, files, figure

    def _repr_mimebundle_(self, include=None, exclude=None):
        data = {"image/svg+xml": self.files["svg"].read_text(encoding="utf-8"), "text/plain": f"<figure {self.figure}>"}
        return data, {"storagelab": {"figure": self.figure}}

    def __getattr__(self, name):
        if name in ("chart", "files", "figure"):  # not set yet (copy, unpickling)
            raise AttributeError(name)
        return getattr(self.chart, name)


def show(chart: alt.TopLevelMixin, name: str, notebook: str):
    """Export the figure and return it for display (static SVG in the notebook and report)."""
    setup()
    files = save(chart, name, notebook)
    return Figure(chart, files, figure_id(name, notebook))


# ----------------------------------------------------------------------------- chart builders (notebooks call these)


# the columns that tie a chart's row to its raw lines: excerpts.enrich turns them into the tooltip's raw file and
# lines, and a link to the excerpt (a builder that selects its columns keeps these)
PROVENANCE = ("path", "sha256", "line_start", "line_end")


def provenance(df) -> list[str]:
    """The provenance columns ``df`` has, to add to a builder's selection."""
    return [c for c in PROVENANCE if c in df.columns]


def with_provenance(frame, source, on: list[str], where=None):
    """``frame`` with the provenance columns of ``source``'s row per key ``on`` (a mark drawn from one row of a
    file: its lines), on the rows ``where`` holds (a polars expression; None: every row). A key with several rows in
    ``source`` (two layouts of one vdev count) gets none, as do the rows ``where`` leaves out (a model's line,
    arithmetic on stated numbers): they have no one raw line."""
    cols = [c for c in provenance(source) if c not in on]
    if not cols:
        return frame
    only = source.filter(pl.len().over(on) == 1).select(*on, *cols)
    out = frame.join(only, on=on, how="left", nulls_equal=True)
    if where is None:
        return out
    return out.with_columns(pl.when(where).then(pl.col(c)).alias(c) for c in cols)


def spans_decades(values, decades: float = 1.0) -> bool:
    """Whether the positive ``values`` span ``decades`` factors of ten or more: a chart of them then takes a log
    axis (a linear one shows the largest and hides the rest near zero)."""
    positive = [float(v) for v in values if v is not None and v > 0]
    return len(positive) > 1 and max(positive) / min(positive) >= 10**decades


def bar_scale(values) -> tuple[bool, float, alt.Scale]:
    """The axis of bars of ``values``: (log, floor, scale). A log scale where the positive values span a decade or
    more (``spans_decades``); a log axis has no zero, so bars start at ``floor``, the power of ten below the
    smallest value (draw them with ``x2`` at it, and leave out zero-width bars); else a linear scale from 0."""
    positive = [float(v) for v in values if v is not None and v > 0]
    if not spans_decades(positive):
        return False, 0.0, alt.Scale(zero=True)
    floor = 10 ** math.floor(math.log10(min(positive)))
    return True, floor, alt.Scale(type="log", domain=[floor, max(positive) * 1.5])


OTHERS_COLOUR = "#bdbdbd"


def top_categories(df, col: str, label: str = "others"):
    """Distinct colours for the categories of ``col``: up to ``len(PALETTE)`` categories each get a colour of their
    own; beyond that (25 workloads had reused near-identical colours) the ``len(PALETTE) - 1`` with the most rows
    do, and the rest share grey as '<label> (n)'. Returns ``df`` with ``<col>_colour`` and the colour scale."""
    counts = df.group_by(col).len().sort(["len", col], descending=[True, False], nulls_last=True)
    names = [v for v in counts[col].to_list() if v is not None]
    keep = names if len(names) <= len(PALETTE) else names[: len(PALETTE) - 1]
    rest = len(names) - len(keep)
    other = f"{label} ({rest})"
    out = df.with_columns(
        pl.when(pl.col(col).is_in(keep)).then(pl.col(col)).otherwise(pl.lit(other)).alias(f"{col}_colour")
    )
    domain = sorted(keep) + ([other] if rest else [])
    return out, alt.Scale(domain=domain, range=PALETTE[: len(keep)] + ([OTHERS_COLOUR] if rest else []))


def caption(sel, what: str) -> str:
    """A subtitle naming the data: 'Source: study mylab (fio runs); ...'."""
    return source_caption(f"{sel.describe()} ({what})")


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


def vdev_scaling(scaled, baseline_vdev_count: int, sel):
    """Layout-table speed relative to the baseline vdev count, per test and vdev type, with the two models."""
    cf = with_provenance(  # a measured point: its layout table's line; the two models are arithmetic
        scaling.chart_frame(scaled), scaled, ["test", "vdev_type", "vdev_count"], pl.col("series") == "measured"
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
            fitted.select(
                "vdev_type",
                "vdev_count",
                "layout",
                mib_s=pl.col("model_bytes_per_s") / MiB,
                series=pl.lit("serial-reader model (fitted)"),
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


def fio_vdev_scaling(fio_scaled, sel):
    """fio runs: bandwidth relative to the baseline vdev count within one group (stack, vdev type, workload)."""
    df = fio_scaled.filter(pl.col("relative").is_not_null()).with_columns(
        group=pl.concat_str([pl.col("vdev_type"), pl.col("workload")], separator=" | ")
    )
    df, colours = top_categories(df, "group", "other groups")
    return (
        alt.Chart(df)
        .mark_line(point=True)
        .encode(
            x=alt.X("vdev_count:Q", title="top-level vdevs"),
            y=alt.Y("relative:Q", title="bandwidth relative to baseline (x)"),
            color=alt.Color(
                "group_colour:N",
                title="vdev type | workload",
                legend=alt.Legend(labelLimit=600, orient="bottom", columns=1),
                scale=colours,
            ),
            detail="group:N",
            tooltip=["group:N", "vdev_count:Q", alt.Tooltip("relative:Q", format=".2f")],
        )
        .properties(
            title=alt.TitleParams("fio runs: bandwidth vs number of vdevs", subtitle=[caption(sel, "fio runs")])
        )
    )


def ratio_bars(df, y: str, x: str, title: str, subtitle: list[str], rule_at: float, x_title: str):
    """Horizontal bars of ratios with a dashed reference rule (e.g. the sum-of-vdevs rule at 2.0x)."""
    bars = (
        alt.Chart(df)
        .mark_bar()
        .encode(
            y=alt.Y(f"{y}:N", title=None, sort=None, axis=alt.Axis(labelLimit=420)), x=alt.X(f"{x}:Q", title=x_title)
        )
    )
    rule = (
        alt.Chart(pl.DataFrame({"x": [rule_at]})).mark_rule(strokeDash=[4, 4], color="#222", size=1.5).encode(x="x:Q")
    )
    return (bars + rule).properties(width=420, title=alt.TitleParams(title, subtitle=subtitle))


def stated_vs_model(ratios, sel):
    """The study's stated ratios (dots) against the model (red ticks). No raw lines: a stated figure comes from
    the study's text (claims.csv), a model from arithmetic."""
    dots = (
        alt.Chart(ratios)
        .mark_point(filled=True, size=90)
        .encode(
            y=alt.Y("claim:N", title=None, sort=None, axis=alt.Axis(labelLimit=420)),
            x=alt.X("ratio:Q", title="ratio (x)"),
            tooltip=["claim", "ratio", "theory"],
        )
    )
    ticks = (
        alt.Chart(ratios)
        .mark_tick(color="#a31515", thickness=2, size=18)
        .encode(y=alt.Y("claim:N", sort=None), x="theory:Q")
    )
    one = alt.Chart(pl.DataFrame({"x": [1.0]})).mark_rule(color="#999").encode(x="x:Q")
    return (one + dots + ticks).properties(
        width=420,
        title=alt.TitleParams(
            "Stated ratios (dots) vs the model (red ticks)",
            subtitle=[caption(sel, "figures stated in the study's text, claims.csv")],
        ),
    )


def amplification(amp, recordsizes, sel):
    """The record model's read amplification per I/O size and recordsize: arithmetic, no raw lines."""
    ach = amp.with_columns(
        io_kib=pl.col("io_bytes") / KiB, recordsize=(pl.col("recordsize_bytes") // KiB).cast(pl.String) + " KiB"
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


def before_after(ratios, sel, before_label: str, after_label: str):
    """bonnie++ after / before per test, bars from 1x on a log axis. A bar is a ratio of two runs' lines (two
    files): no one raw line to link; the provenance table names both."""
    artefact = pl.col("beyond_disks").is_not_null() if "beyond_disks" in ratios.columns else pl.lit(False)
    plot = ratios.filter(pl.col("ratio").is_not_null()).select(
        "test",
        "ratio",
        reading=pl.when(artefact)
        .then(pl.lit("cache artefact (faster than the disks)"))
        .when(pl.col("ratio") >= 1)
        .then(pl.lit("faster after"))
        .otherwise(pl.lit("slower after")),
    )
    kinds = ["faster after", "slower after", "cache artefact (faster than the disks)"]
    chart = (
        alt.Chart(plot)
        .mark_bar()
        .encode(
            y=alt.Y("test:N", sort=TESTS_ORDER, title="bonnie++ test"),
            x=alt.X("ratio:Q", scale=alt.Scale(type="log"), title="after / before (log scale; >1 = faster after)"),
            x2=alt.datum(1.0),
            color=alt.Color(
                "reading:N",
                title=None,
                scale=alt.Scale(domain=kinds, range=["#2ca02c", "#d62728", "#9e9e9e"]),
                legend=alt.Legend(orient="bottom"),
            ),
            tooltip=["test", alt.Tooltip("ratio:Q", format=".2f"), "reading"],
        )
        .properties(
            width=460,
            title=alt.TitleParams(f"{after_label} vs {before_label}", subtitle=[caption(sel, "bonnie++ runs")]),
        )
    )
    rule = alt.Chart(pl.DataFrame({"x": [1.0]})).mark_rule().encode(x="x:Q")
    return chart + rule


def byte_unit(largest: float) -> tuple[float, str]:
    """The binary unit that fits values up to ``largest`` bytes: (divisor, name), B to TiB."""
    for div, name in ((TiB, "TiB"), (GiB, "GiB"), (MiB, "MiB"), (KiB, "KiB")):
        if largest >= div:
            return div, name
    return 1.0, "B"


def _budget_scale(largest: float, budget_bytes: float) -> tuple[float, str, bool, str]:
    """(divisor, unit, draw the budget line, subtitle) for DDT sizes up to ``largest`` against a budget: the unit fits
    the values; a budget more than 10x the largest value is named in the subtitle, not drawn (it would flatten them)."""
    draw = budget_bytes <= 10 * largest
    div, unit = byte_unit(max(largest, budget_bytes) if draw else largest)
    note = (
        f"dashed: metadata budget {budget_bytes / div:.2f} {unit}"
        if draw
        else f"metadata budget {prose.size(budget_bytes)}, {budget_bytes / largest:,.0f}x the largest estimate: off the "
        "scale"
    )
    return div, unit, draw, note


def ddt_sensitivity(sens, budget_bytes: float, sel):
    """The estimate the verdict uses (each pool's best, a machine's pools together) over bytes per entry, in a unit
    that fits the values, against the metadata budget. A model over bytes per entry: no raw lines."""
    div, unit, draw, note = _budget_scale(sens["ddt_bytes"].max() or 1, budget_bytes)
    df = sens.with_columns(ddt=pl.col("ddt_bytes") / div)
    chart = (
        alt.Chart(df)
        .mark_line(point=True)
        .encode(
            x=alt.X("bytes_per_entry:Q", title="ARC bytes per DDT entry (B)"),
            y=alt.Y("ddt:Q", title=f"DDT in RAM ({unit})"),
            color=alt.Color("series:N", title="best estimate of"),
        )
        .properties(
            title=alt.TitleParams(
                "DDT memory (best estimate of the entries) vs bytes per entry",
                subtitle=[caption(sel, "zdb -b, zpool list, zdb -S/-DD"), note],
            )
        )
    )
    rule = alt.Chart(pl.DataFrame({"y": [budget_bytes / div]})).mark_rule(strokeDash=[4, 4], color="#a31515")
    return chart + rule.encode(y="y:Q")


def transport_rates(rates, waits, baseline_label: str, sel):
    """mbuffer rates per run (label: share of the baseline); receivers also without their start-up wait."""
    df = rates.select(
        "label", *provenance(rates), rate_mib_s=pl.col("rate_bytes_per_s") / MiB, kind=pl.lit("as printed")
    )
    if waits.height:
        df = pl.concat(
            [
                df,
                waits.select(  # arithmetic on two files' lines (receiver's bytes over sender's time): no raw line
                    label="receiver",
                    rate_mib_s=pl.col("corrected_rate_bytes_per_s") / MiB,
                    kind=pl.lit("receiver without its start-up wait"),
                ),
            ],
            how="diagonal",
        )
    return (
        alt.Chart(df)
        .mark_bar()
        .encode(
            y=alt.Y("label:N", title=None, sort="-x"),
            yOffset="kind:N",
            x=alt.X("rate_mib_s:Q", title="mbuffer average rate (MiB/s)"),
            color=alt.Color("kind:N", title=None, legend=alt.Legend(orient="bottom")),
        )
        .properties(
            width=440,
            title=alt.TitleParams(
                f"Transfer rates through mbuffer (baseline: {baseline_label})",
                subtitle=[caption(sel, "mbuffer summary lines"), "mbuffer before 2018 prints 'MB/s' for MiB/s"],
            ),
        )
    )


def ddt_ladder(ladder, budget_bytes: float, sel):
    """Every DDT estimate per pool (bars; whiskers: the range a rounded ratio allows) against the budget, in a unit
    that fits the values. An estimate is arithmetic on counts from several outputs (zdb -b, zpool list, zdb -S/-DD):
    no one raw line; the provenance table lists the files."""
    div, unit, draw, note = _budget_scale(ladder["ddt_bytes"].max() or 1, budget_bytes)
    df = ladder.with_columns(
        size=pl.col("ddt_bytes") / div, low=pl.col("ddt_bytes_low") / div, high=pl.col("ddt_bytes_high") / div
    )
    base = alt.Chart(df).encode(y=alt.Y("estimate:N", title=None, sort=None, axis=alt.Axis(labelLimit=420)))
    bars = base.mark_bar().encode(
        x=alt.X("size:Q", title=f"DDT in RAM ({unit})"), color=alt.Color("pool:N", legend=None)
    )
    whisk = base.mark_rule(color="#222").encode(x="low:Q", x2="high:Q")
    rule = alt.Chart(pl.DataFrame({"x": [budget_bytes / div]})).mark_rule(strokeDash=[4, 4], color="#a31515")
    return (
        ((bars + whisk + rule.encode(x="x:Q")) if draw else (bars + whisk))
        .properties(width=420)
        .facet(row=alt.Row("pool:N", title=None))
        .properties(
            title=alt.TitleParams(
                "DDT size per pool, crude to good estimates",
                subtitle=[caption(sel, "zdb -b, zpool list, zdb -S/-DD"), note],
            )
        )
    )


def single_disk(one, sel):
    """Each layout against one disk of the same family and workload (dots), with the model's range (bars). A dot
    is a ratio of two runs (the layout's and the single disk's files): no one raw line to link; the provenance
    table names both."""
    df = one.with_columns(what=pl.concat_str([pl.col("tool"), pl.col("direction"), pl.col("label")], separator=" | "))
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


DASHES = {"p50": [1, 0], "p99": [6, 3], "p99.9": [1, 3]}  # solid, dashed, dotted


def fio_depth(depth, sel):
    """IOPS (or bandwidth, for blocks of 64 KiB and more), and p50/p99/p99.9 latency, against I/Os in flight
    (iodepth x numjobs): one line per workload, direction and setup (a setup's repeats at one depth are averaged
    on the line and drawn as points), never across setups; a flagged run is drawn as a cross."""
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
    means = df.group_by("series", "series_colour", "outstanding").agg(pl.col("iops").mean(), pl.col("mib_s").mean())
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
    names = {"p50_ns": "p50", "p99_ns": "p99", "p99_9_ns": "p99.9"}
    lat_df = (
        df.unpivot(
            index=["series", "series_colour", "outstanding", "label", *provenance(df)],
            on=list(names),
            variable_name="pct",
            value_name="ns",
        )
        .with_columns(pl.col("pct").replace_strict(names), (pl.col("ns") / 1e6).alias("ms"))
        .drop_nulls("ms")
        .group_by("series", "series_colour", "outstanding", "pct")
        # the median of a setup's repeats: its raw lines are its first run's (the table above lists every run)
        .agg(pl.col("ms").median(), pl.col("label").first(), *(pl.col(c).first() for c in provenance(df)))
        .sort("series", "pct", "outstanding")
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
        .properties(width=260, height=220)
    )
    return alt.hconcat(*rate_charts, lat).properties(
        title=alt.TitleParams(
            "IOPS, bandwidth and latency percentiles against I/Os in flight",
            subtitle=[
                caption(sel, "fio results; bandwidth of each run's reporting group"),
                "one line per setup (host | stack | layout | devices): never across setups; crosses: flagged runs",
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
    chart = (
        alt.Chart(df)
        .mark_rect(color="#1f77b4")
        .encode(
            x=alt.X("lo_ms:Q", title="latency (ms, log scale)", scale=alt.Scale(type="log")),
            x2="hi_ms:Q",
            y=alt.Y("pct:Q", title="% of I/Os"),
            y2=alt.datum(0),
            tooltip=[
                "label:N",
                "direction:N",
                alt.Tooltip("lo_ms:Q", format=".4f", title="from ms"),
                alt.Tooltip("hi_ms:Q", format=".4f", title="to ms"),
                alt.Tooltip("pct:Q", format=".2f"),
                "count:Q",
            ],
        )
    )
    return _panels(
        chart,
        110,
        "Latency histograms",
        [
            caption(sel, "fio's latency bins (JSON+ or write_hist_log) or its printed distribution"),
            "bins grouped 10 per factor of 10; printed distributions in fio's own buckets (the first, from 0, drawn from"
            " half its upper edge)",
        ],
    )


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
                pl.col("run").str.split("/").list.last(),
                pl.col("kind"),
                pl.col("direction"),
                pl.lit("(") + unit + pl.lit(")"),
                pl.col("flag") if "flag" in series.columns else pl.lit(""),  # the design checks' marker
            ],
            separator=" ",
        ).str.strip_chars(),
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
                    domain=["ramp", "steady window", "after", "not steady", "too short", "maxima"],
                    range=["#ff7f0e", "#1f77b4", "#6baed6", "#9e9e9e", "#bdbdbd", "#9467bd"],
                ),
            ),
        )
    )
    return _panels(
        chart,
        150,
        "fio logs over time: steady state by SNIA PTS",
        [caption(sel, "fio bw/iops/lat logs, jobs combined"), "bw in MiB/s, iops per second, latencies in ms"]
        + shown_note,
    ).resolve_axis(x="independent")  # each panel its own time axis, labelled


def _panels(chart, height: int, title: str, subtitle: list[str]):
    """One small chart per value of ``panel``, two columns, each with its own y scale."""
    return (
        chart.properties(width=260, height=height)
        .facet(facet=alt.Facet("panel:N", title=None, header=alt.Header(labelLimit=400)), columns=2)
        .resolve_scale(y="independent")
        .properties(title=alt.TitleParams(title, subtitle=subtitle))
    )


def _short_number(v: float) -> str:
    """A cell's label: 6,614 -> '6.6k', 138,906 -> '139k', 812.4 -> '812'."""
    if v >= 1e5:
        return f"{v / 1e3:.0f}k"
    if v >= 1e3:
        return f"{v / 1e3:.1f}k"
    return f"{v:.0f}" if v >= 10 else f"{v:.2g}"


def _split_header(limit: int, **kw) -> alt.Header:
    """A facet header whose ' | '-separated parts are lines of their own, each cut at ``limit`` pixels."""
    return alt.Header(labelExpr="split(datum.label, ' | ')", labelLimit=limit, **kw)


def fio_depth_grid(depth, sel, large_block: int = 64 * 1024):
    """fio-plot's iodepth x numjobs view across setups: one heatmap per workload, direction and setup (rows numjobs,
    columns iodepth), each cell coloured by its IOPS (bandwidth for blocks of ``large_block`` and more) and
    labelled with it; repeats at one cell are averaged (their count in the tooltip), a cell holding a flagged run
    is outlined. A cell's raw lines are its first run's (the runs behind a mean are in the table above)."""
    bandwidth = pl.col("block_size_bytes").max().over("workload") >= large_block
    df = depth.filter(pl.col("iodepth").is_not_null() & pl.col("numjobs").is_not_null()).with_columns(
        metric=pl.when(bandwidth).then(pl.lit("MiB/s")).otherwise(pl.lit("IOPS")),
        panel=pl.concat_str([pl.col("workload"), pl.col("direction")], separator=" | "),
    )
    df = df.with_columns(
        value=pl.when(pl.col("metric") == "MiB/s").then(pl.col("bw_bytes_per_s") / 2**20).otherwise("iops")
    )
    cells = (
        df.group_by("panel", "setup", "metric", "iodepth", "numjobs", maintain_order=True)
        .agg(
            pl.col("value").mean(),
            pl.col("p99_ns").median().truediv(1e6).alias("p99_ms"),
            pl.len().alias("runs"),
            pl.col("flag").is_not_null().any().alias("flagged"),
            *(pl.col(c).first() for c in provenance(df)),
        )
        .with_columns(text=pl.col("value").map_elements(_short_number, pl.String))
    )
    mixed = cells["metric"].n_unique() > 1
    colour = alt.Color(
        "value:Q",
        title=cells["metric"][0] if not mixed else "IOPS or MiB/s (panel)",
        scale=alt.Scale(scheme="viridis", type="log" if spans_decades(cells["value"]) else "linear"),
    )
    base = alt.Chart().encode(
        x=alt.X("iodepth:O", title="iodepth", sort="ascending", axis=alt.Axis(grid=False)),
        y=alt.Y("numjobs:O", title="numjobs", sort="descending", axis=alt.Axis(grid=False)),
    )
    rect = base.mark_rect(stroke="#d62728").encode(
        color=colour,
        strokeWidth=alt.condition("datum.flagged", alt.value(2), alt.value(0)),
        tooltip=[
            "panel:N",
            "setup:N",
            "iodepth:O",
            "numjobs:O",
            "metric:N",
            alt.Tooltip("value:Q", format=",.1f"),
            alt.Tooltip("p99_ms:Q", format=".3f", title="p99 ms (median)"),
            "runs:Q",
            "flagged:N",
        ],
    )
    text = base.mark_text(fontSize=9).encode(
        text="text:N",
        color=alt.condition(f"datum.value < {cells['value'].median() or 0}", alt.value("white"), alt.value("black")),
    )
    chart = (
        alt.layer(rect, text, data=cells)
        # a panel at least wide enough for its setup's name, line by line (one-cell panels had overlapping names)
        .properties(width=max(150, 40 * cells["iodepth"].n_unique()), height=max(44, 22 * cells["numjobs"].n_unique()))
        .facet(
            row=alt.Row("panel:N", title=None, header=_split_header(300, labelAngle=0, labelAlign="left")),
            column=alt.Column("setup:N", title=None, header=_split_header(150)),
        )
        .properties(
            title=alt.TitleParams(
                "iodepth x numjobs: IOPS (bandwidth for large blocks) per setup",
                subtitle=[
                    caption(sel, "fio results; bandwidth of each run's reporting group"),
                    "rows: workload | direction; columns: setup (host | stack | layout | devices); repeats averaged; "
                    "red outline: a cell with a flagged run; k = thousand",
                ],
            )
        )
    )
    return chart.resolve_scale(color="independent") if mixed else chart

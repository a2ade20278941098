"""The altair theme and figure export. Charts never compute numbers: they draw frames from lib/.

Every figure is saved beside the reports as SVG, PNG (vl-convert, offline) and Vega-Lite JSON,
and shown in the notebook as static SVG, so executed notebooks and HTML reports need no
JavaScript and no network.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import altair as alt


FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"
PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf"]


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
    import polars as pl

    pl.Config.set_tbl_rows(200)
    pl.Config.set_fmt_str_lengths(160)
    pl.Config.set_tbl_cols(30)
    pl.Config.set_tbl_hide_dataframe_shape(True)
    pl.Config.set_tbl_hide_column_data_types(True)


def source_caption(study: str, extra: str = "") -> str:
    text = f"Source: {study}"
    return f"{text} — {extra}" if extra else text


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "figure"


def figure_dir(notebook: str, out_dir: Path | None = None) -> Path:
    """The folder a notebook's figures are saved in: <report folder>/figures/<notebook>/ (the report folder
    of the run, reports/<study>/, set by ``report.run_notebooks``)."""
    if out_dir is None:
        from .report import current_report_dir

        out_dir = current_report_dir() / "figures"
    return Path(out_dir) / _slug(notebook)


def save(chart: alt.TopLevelMixin, name: str, notebook: str, out_dir: Path | None = None) -> dict[str, Path]:
    """Save ``chart`` as <name>.svg, .png and .vl.json under reports/figures/<notebook>/; return the paths."""
    import vl_convert as vlc

    out = figure_dir(notebook, out_dir)
    out.mkdir(parents=True, exist_ok=True)
    spec = chart.to_dict()
    base = out / _slug(name)
    files = {"vl.json": base.with_suffix(".vl.json"), "svg": base.with_suffix(".svg"), "png": base.with_suffix(".png")}
    files["vl.json"].write_text(json.dumps(spec, indent=1, sort_keys=True), encoding="utf-8")
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

def caption(sel, what: str) -> str:
    """A subtitle naming the data: 'Source: study mylab (fio runs); ...'."""
    return source_caption(f"{sel.describe()} ({what})")


def run_bandwidth(runs, direction: str, sel, margin: float):
    """Bars of each run's bandwidth (MiB/s), coloured by the cache-inflation flag, one panel per workload;
    ticks at each run's device limit x margin where it is labelled."""
    import polars as pl

    from .units import MiB

    df = runs.select(
        "label", "workload", "bw_mib_s",
        inflated=pl.when(pl.col("inflated").is_null()).then(pl.lit("no device limit labelled"))
        .when(pl.col("inflated")).then(pl.lit("above the device's limit")).otherwise(pl.lit("within the limit")),
        limit_mib_s=pl.col("device_limit_bytes_per_s") * margin / MiB,
    )
    base = alt.Chart(df).encode(y=alt.Y("label:N", sort="-x", title=None, axis=alt.Axis(labelLimit=360)))
    bars = base.mark_bar().encode(
        x=alt.X("bw_mib_s:Q", title=f"{direction} bandwidth (MiB/s)"),
        color=alt.Color("inflated:N", title="cache check", scale=alt.Scale(
            domain=["above the device's limit", "within the limit", "no device limit labelled"],
            range=["#d62728", "#1f77b4", "#9e9e9e"])),
        tooltip=["label", "workload", alt.Tooltip("bw_mib_s:Q", format=".1f")],
    )
    ticks = base.mark_tick(color="#222", thickness=2, size=14).encode(x="limit_mib_s:Q")
    return (bars + ticks).properties(width=460).facet(
        row=alt.Row("workload:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left", labelLimit=600)),
    ).resolve_scale(y="independent").properties(title=alt.TitleParams(
        f"fio {direction} bandwidth per run, by workload", subtitle=[
            caption(sel, "fio runs, final report, Run status group bandwidth"),
            f"black ticks: the run's device limit x {margin:g}; 1 MiB = 2^20 bytes"]))

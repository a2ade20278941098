"""Figure export, and every chart builder by name (notebooks call ``charts.<builder>``). Charts never compute
numbers: they draw frames from lib/. The builders live by area in charts_fio, charts_layouts and charts_pools;
the shared look in chartkit; what a mark came from in chartsource.

Every figure is saved beside the reports as SVG, PNG (vl-convert, offline) and Vega-Lite JSON,
and shown in the notebook as static SVG, so executed notebooks and HTML reports need no
JavaScript and no network.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import altair as alt

from . import excerpts, paths
from .chartkit import (  # noqa: F401  (re-exported: notebooks and tests use charts.<name>)
    PALETTE,
    bar_scale,
    byte_unit,
    caption,
    display_tables,
    setup,
    source_caption,
    spans_decades,
    top_categories,
)
from .charts_fio import (  # noqa: F401
    disk_card,
    explore_run_bandwidth,
    fio_depth,
    fio_depth_grid,
    fio_latency_histogram,
    fio_time_series,
    run_bandwidth,
)
from .charts_layouts import (  # noqa: F401
    amplification,
    block_sizes,
    fio_vdev_scaling,
    ratio_bars,
    serial_reader,
    single_disk,
    stated_vs_model,
    vdev_scaling,
)
from .charts_pools import _budget_scale, before_after, ddt_ladder, ddt_sensitivity, transport_rates  # noqa: F401
from .chartsource import PROVENANCE, provenance, with_provenance  # noqa: F401
from .paths import figure_dir
from .spectexts import short_texts

_slug = paths.slug


def save(chart: alt.TopLevelMixin, name: str, notebook: str, out_dir: Path | None = None) -> dict[str, Path]:
    """Save ``chart`` as <name>.svg, .png and .vl.json under reports/figures/<notebook>/; return the paths."""
    import vl_convert as vlc  # noqa: PLC0415  (heavy: only when a chart is saved)

    out = figure_dir(notebook, out_dir)
    paths.make_folder(out)
    spec = chart.to_dict()
    base = out / _slug(name)
    files = {"vl.json": base.with_suffix(".vl.json"), "svg": base.with_suffix(".svg"), "png": base.with_suffix(".png")}
    # the interactive spec: tooltips with each mark's data, links to the raw lines (pages in <report>/raw/);
    # the static SVG and PNG are drawn from the chart as built
    interactive = excerpts.enrich(spec, out.parent.parent)
    files["vl.json"].write_text(json.dumps(interactive, indent=1, sort_keys=True), encoding="utf-8")
    svg = vlc.vegalite_to_svg(short_texts(spec))  # a hostile label's cost bounded (spectexts)
    files["svg"].write_text(svg, encoding="utf-8")
    # the PNG from that SVG: vl-convert's vegalite_to_png is vegalite_to_svg then svg_to_png (vl-convert-rs 1.9.0,
    # converter.rs), so this is the same image without drawing the chart a second time (V8: 0.17 s of CPU a chart;
    # issue 28); tests/test_chart_png.py checks that the bytes are vegalite_to_png's
    files["png"].write_bytes(vlc.svg_to_png(svg, scale=png_scale(svg)))
    return files


PNG_MAX_PIXELS = 40_000_000  # 160 MB of RGBA: a PNG past it is drawn smaller, never out of memory


def png_scale(svg: str, scale: float = 2.0) -> float:
    """The PNG's scale: 2 (sharp on high-density screens), less for a chart so large that its pixels at that scale
    would pass PNG_MAX_PIXELS. Every study's fio runs of tests/fixtures/ in 08_fio's iodepth x numjobs grid made an
    SVG whose PNG at scale 2 needed one allocation of 42 GB: the kernel aborted and the notebook failed."""
    size = re.search(r'<svg\b[^>]*?\swidth="([\d.]+)"[^>]*?\sheight="([\d.]+)"', svg[:2000])
    if size is None:
        return scale
    pixels = float(size.group(1)) * float(size.group(2))
    return scale if pixels * scale * scale <= PNG_MAX_PIXELS else (PNG_MAX_PIXELS / pixels) ** 0.5


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

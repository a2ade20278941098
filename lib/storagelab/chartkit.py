"""The charts' shared look: the altair theme, colours for many series, axes (log where values span decades),
units and captions. Charts never compute numbers: they draw frames from lib/."""

from __future__ import annotations

import math

import altair as alt
import polars as pl

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


def caption(sel, what: str) -> str:
    """A subtitle naming the data: 'Source: study mylab (fio runs); ...'."""
    return source_caption(f"{sel.describe()} ({what})")


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


def byte_unit(largest: float) -> tuple[float, str]:
    """The binary unit that fits values up to ``largest`` bytes: (divisor, name), B to TiB."""
    for div, name in ((TiB, "TiB"), (GiB, "GiB"), (MiB, "MiB"), (KiB, "KiB")):
        if largest >= div:
            return div, name
    return 1.0, "B"


def _panels(chart, height: int, title: str, subtitle: list[str]):
    """One small chart per value of ``panel``, two columns, each with its own y scale."""
    return (
        chart.properties(width=260, height=height)
        .facet(facet=alt.Facet("panel:N", title=None, header=alt.Header(labelLimit=400)), columns=2)
        .resolve_scale(y="independent")
        .properties(title=alt.TitleParams(title, subtitle=subtitle))
    )


def latency_histogram_panels(df, colour: str, share: str, tooltip: list, title: str, subtitle: list[str]):
    """Latency histograms, one panel per value of ``panel`` (``_panels``): each bucket a bar from ``lo_ms`` to
    ``hi_ms`` on a log latency axis, ``pct`` high (``share``: what it is a percentage of)."""
    chart = (
        alt.Chart(df)
        .mark_rect(color=colour)
        .encode(
            x=alt.X("lo_ms:Q", title="latency (ms, log scale)", scale=alt.Scale(type="log")),
            x2="hi_ms:Q",
            y=alt.Y("pct:Q", title=share),
            y2=alt.datum(0),
            tooltip=tooltip,
        )
    )
    return _panels(chart, 110, title, subtitle)


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

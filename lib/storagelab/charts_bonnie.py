"""Notebook 09's chart (issue 29): per bonnie++ run, the block rates and the random seeks
(analysis/bonnie_rates.chart_frame), flagged runs marked, every bar naming its raw line."""

from __future__ import annotations

import altair as alt
import polars as pl

from .chartkit import PALETTE, bar_scale, caption
from .chartsource import provenance

FLAG_RED = "#d62728"


def _panel(df: pl.DataFrame, title: str, colours: dict[str, str]):
    """Bars of ``value`` per run (and per measure, side by side), on a log axis where the values span a decade or
    more; a flagged bar outlined in red and marked ⚑."""
    log, floor, scale = bar_scale(df["value"])
    df = (df.filter(pl.col("value") > 0) if log else df).with_columns(
        floor=pl.lit(floor), mark=pl.when(pl.col("flag").is_not_null()).then(pl.lit("⚑")).otherwise(pl.lit(""))
    )
    x = alt.X(
        "value:Q", title=f"{title}{', log scale' if log else ''}", scale=scale, axis=alt.Axis(labelOverlap="greedy")
    )
    base = alt.Chart(df).encode(
        y=alt.Y("run:N", sort=None, title=None, axis=alt.Axis(labelLimit=320)),
        yOffset=alt.YOffset("measure:N", sort=list(colours)),
    )
    bars = base.mark_bar(stroke=FLAG_RED).encode(
        x=x,
        x2="floor:Q",
        color=alt.Color(
            "measure:N",
            title=None,
            scale=alt.Scale(domain=list(colours), range=list(colours.values())),
            legend=alt.Legend(symbolStrokeWidth=0),
        ),
        strokeWidth=alt.condition("isValid(datum.flag)", alt.value(2), alt.value(0)),
        tooltip=[
            "run:N",
            "measure:N",
            alt.Tooltip("value:Q", format=",.1f", title=df["unit"][0]),
            alt.Tooltip("cpu_pct:Q", format=".0f", title="%CP"),
            alt.Tooltip("flag:N", title="flag (not ranked)"),
        ],
    )
    marks = base.mark_text(align="left", dx=3, color=FLAG_RED).encode(x=x, text="mark:N")
    return (bars + marks).properties(width=300, height=alt.Step(10))


def bonnie_runs(frame: pl.DataFrame, sel):
    """The block write, rewrite and block read rates (MiB/s) beside the random seeks (seeks/s), one row per run;
    None when no run printed a number for any of them."""
    drawn = frame.filter(pl.col("value").is_not_null()).select(
        "run", "measure", "unit", "value", "cpu_pct", "flag", *provenance(frame)
    )
    rates, seeks = drawn.filter(pl.col("unit") == "MiB/s"), drawn.filter(pl.col("unit") == "seeks/s")
    panels = []
    if rates.height:
        colours = {"block write": PALETTE[0], "rewrite": PALETTE[3], "block read": PALETTE[2]}
        panels.append(_panel(rates, "MiB/s (2^20 bytes/s)", colours))
    if seeks.height:
        panels.append(_panel(seeks, "random seeks/s", {"random seeks": PALETTE[4]}))
    if not panels:
        return None
    too_fast = frame.filter(pl.col("too_fast")).height
    notes = [
        caption(sel, "bonnie++ runs, one bar per test as printed"),
        "⚑ and red outline: a flagged value (read from memory, a file below twice the RAM, a rate the ingest "
        "warned about): shown, not ranked",
    ]
    if too_fast:
        notes.append(
            f"{too_fast} value(s) bonnie++ marked too fast to measure (+++++ or +++ %CP) have no number and no bar"
        )
    return (
        alt.hconcat(*panels)
        .resolve_scale(color="independent", x="independent")
        .properties(title=alt.TitleParams("bonnie++ block rates and random seeks per run", subtitle=notes))
    )

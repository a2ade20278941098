"""Reliability-37 (folders): what vl-convert draws of a chart whose labels are cut short (``spectexts``)."""

from __future__ import annotations

import altair as alt
import polars as pl

from storagelab.chartkit import top_categories
from storagelab.spectexts import LONGEST, short_texts


def _colour_chart(labels: list[str]) -> dict:
    df = pl.DataFrame({"series": labels, "x": list(range(len(labels))), "y": list(range(len(labels)))})
    df, colours = top_categories(df, "series", "other")
    return (
        alt.Chart(df)
        .mark_point()
        .encode(x="x:Q", y="y:Q", color=alt.Color("series_colour:N", scale=colours), order=alt.Order("x:Q"))
        .to_dict()
    )


def test_a_long_label_s_colour_scale_is_cut_as_its_data_is():
    """08_fio's series get their colours from a scale with an explicit domain (``top_categories``): labels over 300
    characters were cut in the data but not in the domain, and vl-convert drew those series in no colour at all
    (two of them alike, black) under a legend giving each its own colour."""
    labels = ["a" * 400 + "-one", "short", "c" * 400 + "-three"]
    drawn = short_texts(_colour_chart(labels))
    (rows,) = drawn["datasets"].values()
    domain = drawn["encoding"]["color"]["scale"]["domain"]
    assert sorted(r["series_colour"] for r in rows) == sorted(domain)
    assert all(len(d) <= LONGEST for d in domain) and len(set(domain)) == 3


def test_a_label_equal_to_another_s_cut_stays_another_series():
    """A label of exactly LONGEST characters was drawn whole: one written as another's cut form (the first 291
    letters, an ellipsis, 8 hex digits of its SHA-256) was drawn as one series with it."""
    long = "b" * 400
    cut = short_texts({"datasets": {"d": [{"s": long}]}})["datasets"]["d"][0]["s"]
    assert len(cut) == LONGEST
    rows = short_texts({"datasets": {"d": [{"s": long}, {"s": cut}, {"s": "b" * (LONGEST - 1)}]}})["datasets"]["d"]
    assert len({r["s"] for r in rows}) == 3
    assert rows[2]["s"] == "b" * (LONGEST - 1)  # shorter than any cut: drawn whole

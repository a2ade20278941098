"""Notebook 08's charts draw what the data holds (rendered to SVG by vl-convert, as ``charts.save`` does for the
report and the PNG)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from storagelab import charts
from storagelab.analysis import Selection, fio_views, open_db
from storagelab.store import ingest

FIO = Path(__file__).resolve().parent / "fixtures" / "fio"
V2 = (FIO / "published" / "fio-2.2.10-five-runs-appended.txt", FIO / "2.2.10" / "rbd-read-wrapped-diskstats.txt")


def _bars(svg: str) -> list[float]:
    """The widths of the rect marks of an SVG drawn by Vega ('M x,y h WIDTH v H h -W Z')."""
    return [float(w) for w in re.findall(r'aria-roledescription="rect mark" d="M[^h]*h([-0-9.e]+)v', svg)]


@pytest.fixture(scope="module")
def fio2(tmp_path_factory):
    raw = tmp_path_factory.mktemp("raw")
    for f in V2:
        shutil.copy(f, raw / f.name)
    s = ingest([raw], db_path=raw.parent / "v2.duckdb", parquet_dir=False, progress=False, workers=1)
    assert (s.ingested, s.failed) == (2, 0), s.errors
    with open_db(raw.parent / "v2.duckdb") as con:
        yield fio_views.analyse(con, Selection())


def test_histogram_of_fio_2_text_logs_draws_bars(fio2):
    """fio 2.2.10 prints 'lat (usec) : 2=...' (five runs appended, published): that bucket's lower edge is stored
    as 0 (it holds everything up to 2 us), which a log axis cannot place. The figure had drawn all 64 bars 0 px
    wide, in every panel (new-user-2 defect 1); now each has a width."""
    import vl_convert as vlc

    hist = fio2["histogram"]
    assert hist.height == 64 and hist.filter(hist["bucket_lo_ns"] == 0).height == 1  # the stored edge stays 0
    svg = vlc.vegalite_to_svg(charts.fio_latency_histogram(hist, Selection()).to_dict())
    widths = _bars(svg)
    assert len(widths) == 64 and min(widths) > 0
    first = hist.filter(hist["bucket_lo_ns"] == 0).row(0, named=True)
    assert (first["bucket_hi_ns"], first["pct"]) == (2000.0, 0.01)  # drawn from 1 us to 2 us


def test_depth_chart_draws_one_line_per_setup(fio2):
    import vl_convert as vlc

    spec = charts.fio_depth(fio2["depth"], Selection()).to_dict()
    svg = vlc.vegalite_to_svg(spec)
    assert "workload | direction | setup" in svg
    assert "crosses: flagged runs" in svg

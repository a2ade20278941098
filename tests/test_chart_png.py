"""charts.save draws each chart once: the PNG is rasterized from the SVG it saved (vl-convert's svg_to_png), which is
what vl-convert's vegalite_to_png does after drawing the same SVG again (vl-convert-rs 1.9.0, converter.rs). The
bytes must stay vegalite_to_png's: a vl-convert whose PNG path changes fails here."""

from __future__ import annotations

import re
import struct

import altair as alt
import polars as pl
import vl_convert as vlc

from storagelab import charts


def test_the_saved_png_is_vegalite_to_pngs_and_the_saved_svg_drawn_at_twice_its_size(tmp_path):
    data = pl.DataFrame({"setup": ["ZFS mirror", "btrfs raid1", "ext4"], "mib_s": [1240.0, 438.0, 902.0]})
    chart = (
        alt.Chart(data)
        .mark_bar()
        .encode(x=alt.X("mib_s:Q", title="MiB/s"), y=alt.Y("setup:N", title=None))
        .properties(title="write bandwidth")
    )
    files = charts.save(chart, "bars", "08_fio", out_dir=tmp_path)
    png = files["png"].read_bytes()
    assert png == vlc.vegalite_to_png(chart.to_dict(), scale=2)
    assert png == vlc.svg_to_png(files["svg"].read_text(encoding="utf-8"), scale=2)
    # the PNG's size (IHDR) is the SVG's width and height times 2
    width, height = struct.unpack(">II", png[16:24])
    svg = files["svg"].read_text(encoding="utf-8")
    svg_w = float(svg.split('width="', 1)[1].split('"', 1)[0])
    svg_h = float(svg.split('height="', 1)[1].split('"', 1)[0])
    assert (width, height) == (round(svg_w * 2), round(svg_h * 2))


def test_a_chart_too_large_for_its_png_at_twice_its_size_is_drawn_smaller(tmp_path, monkeypatch):
    """Every study's fio runs of tests/fixtures/ in 08_fio's iodepth x numjobs grid: an SVG of 105,666 x 24,970,
    whose PNG at scale 2 needed one allocation of 42 GB; the kernel aborted ("memory allocation ... failed") and the
    notebook failed. Past PNG_MAX_PIXELS the PNG is drawn at the scale that fits (here a bound of 50,000 pixels)."""
    data = pl.DataFrame({"setup": ["ZFS mirror", "btrfs raid1"], "mib_s": [1240.0, 438.0]})
    chart = alt.Chart(data).mark_bar().encode(x="mib_s:Q", y="setup:N").properties(width=600, height=300)
    monkeypatch.setattr(charts, "PNG_MAX_PIXELS", 50_000)
    files = charts.save(chart, "bars", "08_fio", out_dir=tmp_path)
    svg = files["svg"].read_text(encoding="utf-8")
    width, height = struct.unpack(">II", files["png"].read_bytes()[16:24])
    svg_w, svg_h = (float(v) for v in re.search(r'width="([\d.]+)" height="([\d.]+)"', svg).groups())
    assert svg_w * svg_h * 4 > 50_000  # at scale 2 it would not fit
    assert charts.png_scale(svg) == (50_000 / (svg_w * svg_h)) ** 0.5
    assert width * height <= 50_000 and width >= int(svg_w * charts.png_scale(svg)) - 1
    monkeypatch.setattr(charts, "PNG_MAX_PIXELS", 40_000_000)
    assert charts.png_scale(svg) == 2.0  # an ordinary chart keeps its scale

"""charts.save draws each chart once: the PNG is rasterized from the SVG it saved (vl-convert's svg_to_png), which is
what vl-convert's vegalite_to_png does after drawing the same SVG again (vl-convert-rs 1.9.0, converter.rs). The
bytes must stay vegalite_to_png's: a vl-convert whose PNG path changes fails here."""

from __future__ import annotations

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

"""Notebook 09's chart (issue 29, h7-audit gap 5): per bonnie++ run, the block rates and the random seeks, flagged
values marked, every bar naming its raw line; on the demo data (the FreeBSD study's real bonnie++ 1.96 outputs) and
on a second data set (published bonnie++ 1.97 bon_csv2txt of two machines, bonnie++ 2.00a run here)."""

import xml.etree.ElementTree as ET

import polars as pl
import pytest
from conftest import FIXTURES

from storagelab import charts, charts_bonnie
from storagelab.analysis import Selection, bonnie_rates, bonnie_table, open_db
from storagelab.store import ingest

SVG = "{http://www.w3.org/2000/svg}"


def frame_and_chart(db, sel):
    with open_db(db) as con:
        res = bonnie_table.analyse(con, sel)
    frame = bonnie_rates.chart_frame(res["results"], res["table"])
    return frame, charts_bonnie.bonnie_runs(frame, sel)


def drawn_bars(chart, tmp_path) -> list[str]:
    """The bar paths of the exported SVG with a non-zero width and height."""
    svg = charts.save(chart, "bonnie-runs", "09_bonnie", out_dir=tmp_path)["svg"]
    bars = []
    for g in ET.parse(svg).getroot().iter(f"{SVG}g"):
        if "mark-rect" in g.get("class", ""):
            bars += [p.get("d") for p in g if p.tag == f"{SVG}path" and "h0" not in p.get("d", "").replace(" ", "")]
    return bars


def spec_rows(chart) -> list[dict]:
    return [r for rows in chart.to_dict()["datasets"].values() for r in rows]


def test_demo_data_every_run_its_block_rates_and_seeks(seed_db, tmp_path):
    frame, chart = frame_and_chart(seed_db, Selection(study="freebsd-bonnie-dedup"))
    assert frame.height == 5 * 4 and frame["too_fast"].sum() == 0
    v = {(r["run"], r["test"]): r for r in frame.iter_rows(named=True)}
    single = v["single disk (aligned)", "put_block"]
    assert (single["value"], single["unit"], single["line_start"], single["flag"]) == (105.0, "MiB/s", 4, None)
    assert single["path"].endswith("freebsd-bonnie-dedup/bonnie-single-disk.txt")
    sec63 = v["raid1, sector 63 (cache+log)", "get_block"]
    assert (round(sec63["value"], 1), sec63["cpu_pct"], sec63["flag"]) == (2764.8, 99.0, "from memory")
    assert v["single disk (aligned)", "seeks"]["value"] == 145.7 and v["raid1 (aligned)", "rewrite"]["unit"] == "MiB/s"
    rows = spec_rows(chart)
    bars = [r for r in rows if "value" in r]
    assert len(bars) == 20 and all(r["path"] and r["line_start"] for r in bars)
    assert sorted(r["mark"] for r in bars if r["mark"]) == ["⚑"]  # the one flagged value, marked
    assert len(drawn_bars(chart, tmp_path)) == 20


@pytest.fixture
def second_db(tmp_path):
    """Two files labelled as a user would: bon_csv2txt of bonnie++ 1.97 (two machines in one file; 4 GiB RAM
    told, so its 2 GiB files are below twice the RAM) and bonnie++ 2.00a (block cells printed as 0k, seeks +++++)."""
    raw = tmp_path / "raw"
    (raw / "b").mkdir(parents=True)
    files = {
        "inez.txt": (FIXTURES / "bonnie" / "published" / "bonnie-1.97-csv2txt-two-machines.txt", "inez", 4 * 2**30),
        "lab.txt": (FIXTURES / "bonnie" / "2.00a" / "csv2txt_x2.txt", "lab", ""),
    }
    rows = ["path,study,label,ram_bytes"]
    for name, (src, label, ram) in files.items():
        (raw / "b" / name).write_bytes(src.read_bytes())
        rows.append(f"b/{name},b,{label},{ram}")
    (raw / "manifest.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    db = tmp_path / "d.duckdb"
    s = ingest([raw], db_path=db, manifest_path=raw / "manifest.csv", parquet_dir=False, progress=False, workers=1)
    assert s.failed == 0, s.errors
    return db


def test_second_data_set_names_runs_of_one_file_and_leaves_out_what_has_no_number(second_db, tmp_path):
    frame, chart = frame_and_chart(second_db, Selection(study="b"))
    drawn = frame.filter(pl.col("value").is_not_null())
    assert drawn.select("run", "test", "value", "flag", "line_start").rows() == [
        ("inez (inez.txt:4 inez(old))", "put_block", 35513 / 1024, "cache", 4),
        ("inez (inez.txt:6 inez(new))", "put_block", 87089 / 1024, "cache", 6),
        ("inez (inez.txt:4 inez(old))", "rewrite", 16987 / 1024, "cache", 4),
        ("inez (inez.txt:6 inez(new))", "rewrite", 41527 / 1024, "cache", 6),
        ("inez (inez.txt:4 inez(old))", "get_block", 46172 / 1024, "cache", 4),
        ("inez (inez.txt:6 inez(new))", "get_block", 102046 / 1024, "cache", 6),
        ("inez (inez.txt:4 inez(old))", "seeks", 157.3, None, 4),
        ("inez (inez.txt:6 inez(new))", "seeks", 4145.0, None, 6),
    ]
    # 2.00a: block cells '0k +++' and seeks '+++++ +++', too fast to measure: no number, so no bar
    lab = frame.filter(pl.col("run").str.starts_with("lab"))
    assert lab.select("run", "test", "value", "too_fast").rows() == [
        (f"lab (lab.txt:{line} lab)", t, None, True)
        for t in ("put_block", "rewrite", "get_block", "seeks")
        for line in (4, 6)
    ]
    title = chart.to_dict()["title"]
    assert (
        "8 value(s) bonnie++ marked too fast to measure (+++++ or +++ %CP) have no number and no bar"
        in title["subtitle"]
    )
    assert sum(1 for r in spec_rows(chart) if r.get("mark") == "⚑") == 6
    assert len(drawn_bars(chart, tmp_path)) == 8


def test_nothing_to_draw_is_none():
    assert charts_bonnie.bonnie_runs(bonnie_rates.chart_frame(pl.DataFrame(), pl.DataFrame()), Selection()) is None

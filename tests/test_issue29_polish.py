"""Issue 29's polish, tested (h7 audit gap 7): many series share grey as "others" beyond nine colours, every
notebook opens on the storagelab kernel, and the main command (`storagelab build`, not only its ingest) prints at
most one warning line on the demo data."""

from __future__ import annotations

import argparse
import json

import polars as pl
from conftest import ROOT

from storagelab import chartkit, cli, paths, report


def test_25_series_get_nine_colours_and_one_grey_other():
    # 25 workloads (the review's 08 depth chart): series i has 26 - i rows, so the nine with most rows are 1-9
    names = [f"w{i:02d}" for i in range(1, 26)]
    df = pl.DataFrame({"series": [n for i, n in enumerate(names) for _ in range(26 - (i + 1))]})
    out, scale = chartkit.top_categories(df, "series", "other series")
    d = scale.to_dict()
    assert d["domain"] == names[:9] + ["other series (16)"]
    assert d["range"] == chartkit.PALETTE[:9] + ["#bdbdbd"]
    rows = dict(out.group_by("series_colour").len().iter_rows())
    assert rows == {**{n: 25 - i for i, n in enumerate(names[:9])}, "other series (16)": sum(range(1, 17))}
    # ten or fewer: each its own colour, no grey
    ten = pl.DataFrame({"series": names[:10]})
    assert chartkit.top_categories(ten, "series")[1].to_dict() == {"domain": names[:10], "range": chartkit.PALETTE}


def test_every_notebook_opens_on_the_storagelab_kernel():
    nbs = sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert len(nbs) == len(report.list_notebooks()) >= 10
    specs = {nb.name: json.loads(nb.read_text(encoding="utf-8"))["metadata"]["kernelspec"] for nb in nbs}
    assert {n: s["name"] for n, s in specs.items()} == {n: "storagelab" for n in specs}
    assert {s["display_name"] for s in specs.values()} == {"storagelab (Python 3)"}


def test_build_prints_one_warning_line_on_the_demo_data(tmp_path, monkeypatch, capsys, project_built):
    """`storagelab build`'s own path (cmd_build: the ingest, the notes, the notebooks, the render) on a fresh database
    of data/raw/: the 9 parser warnings are one line. The notebook runs and the render are replaced by nothing here
    (they print no parser warning; the e2e build runs them): this test adds no build. It takes reports/' build lock
    and reads its folders: after the build `./run test` runs beside the tests (`project_built`)."""
    monkeypatch.setattr(paths, "DB", tmp_path / "demo.duckdb")
    monkeypatch.setattr(report, "run_notebooks", lambda plans: [])
    monkeypatch.setattr(report, "render_reports", lambda skip=(): [])
    assert cli.cmd_build(argparse.Namespace(wait=0)) == 0
    err = capsys.readouterr().err.splitlines()
    assert [ln for ln in err if ln.startswith("warning")] == [
        "warning: 9 parser warnings (what a parser kept aside or assumed, by line); all of them: "
        'storagelab sql "SELECT path, warnings FROM files WHERE warnings IS NOT NULL"'
    ]

"""08's iodepth x numjobs grid (analysis.fio_grid, charts.fio_depth_grid) on real fio outputs: fio-plot's MX200
sweeps (one SSD at iodepth 1-64 x numjobs 1 and 4, three in RAID 0 at numjobs 1), a second data set of three
machines' grids (the lab's 2 s repeats, h6's 2 x 2 JSON grid, h5's btrfs grid), and every fio output of
tests/fixtures/fio, unlabelled: on it the old chart crossed every workload | direction with every setup, a
105,666 x 24,970-pixel figure of empty cells. Only combinations with a grid are drawn, at most ``grid_panels``, and
the prose says what was left out."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from conftest import FIXTURES
from test_fio_knee import _db

from storagelab import charts
from storagelab.analysis import Selection, fio_grid, fio_views, open_db
from storagelab.store import ingest

FIO = FIXTURES / "fio"
ROOT = Path(__file__).resolve().parent.parent
MX = "randread bs=4KiB libaio direct=1 size=? runtime=60s | read | HPDL380G8 | stack not labelled | layout not labelled"


@pytest.fixture(scope="module")
def mx200(tmp_path_factory):
    db = _db(tmp_path_factory.mktemp("mx200g"), FIO / "3.1" / "fioplot-mx200-sweep", lambda n: "3x MX200 RAID0" if "raid0" in n else "MX200")  # fmt: skip
    with open_db(db) as con:
        return fio_views.analyse(con, Selection())["depth"]


def sha256_of(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def test_each_setup_with_a_grid_is_one_panel_the_most_runs_first(mx200):
    g = fio_grid.grid(mx200)
    # MX200: 14 runs (numjobs 1 and 4, iodepth 1-64 each); the RAID 0: 7 (numjobs 1)
    assert g.drawn == [f"{MX} | MX200", f"{MX} | 3x MX200 RAID0"]
    assert (g.not_drawn, g.single, g.unknown_runs) == ([], 0, 0)
    cells = {(r["setup"].split(" | ")[-1], r["numjobs"], r["iodepth"]): r for r in g.cells.iter_rows(named=True)}
    assert len(cells) == 21
    one = cells[("MX200", 1, 16)]
    assert (round(one["value"]), one["metric"], one["runs"], one["flagged"], one["share"]) == (
        47423,
        "IOPS",
        1,
        False,
        1.0,
    )
    assert round(cells[("MX200", 4, 16)]["value"]) == 46616 and round(cells[("3x MX200 RAID0", 1, 1)]["value"]) == 6575
    src = one["sources"][0]  # the file's SHA-256 as stored: an excerpt of it rewritten since is refused
    assert one["sources"] == [{"path": src["path"], "line_start": 7, "line_end": 269, "sha256": sha256_of(src["path"])}]
    assert one["sources"][0]["path"].endswith("/mx200-randread-16-1.json")
    # blocks of large_block and more: the cell is the bandwidth in MiB/s (2^20 bytes), named as the panel's unit
    big = fio_grid.grid(mx200, large_block=4096).cells.filter(numjobs=1, iodepth=16)
    assert big["metric"].to_list() == ["MiB/s", "MiB/s"]
    assert [round(v, 1) for v in big["value"]] == [185.2, 242.7]  # the MX200 (47,423 IOPS x 4 KiB), the RAID 0


def test_past_the_cap_the_prose_names_what_was_not_drawn_and_how_to_draw_it(mx200):
    g = fio_grid.grid(mx200, max_panels=1)
    assert (g.drawn, g.not_drawn, g.not_drawn_runs) == ([f"{MX} | MX200"], [f"{MX} | 3x MX200 RAID0"], 7)
    assert fio_grid.sentences(g) == [
        "1 of the 2 workload | direction | setup combination(s) with a grid (two iodepths or two numjobs measured, "
        "or more) drawn, those with the most runs; a cell is the mean of its runs (their count beside it where more "
        "than one), outlined in red where one of them is flagged.",
        f"1 grid(s) not drawn (7 run(s)): one chart draws 1 (grid_panels): `{MX} | 3x MX200 RAID0`; the runs listed "
        "under 'Against I/Os in flight' include theirs; re-run with `-p grid_panels N` (more panels) or `-p "
        "grid_only TEXT` (only the combinations whose name contains TEXT) to draw them.",
    ]
    only = fio_grid.grid(mx200, only="raid0")
    assert (only.drawn, only.filtered, fio_grid.sentences(only)[1]) == (
        [f"{MX} | 3x MX200 RAID0"],
        1,
        "1 grid(s) left out by grid_only 'raid0' (re-run without it to draw them).",
    )
    with pytest.raises(ValueError, match="grid_panels must be 1 or more"):
        fio_grid.grid(mx200, max_panels=0)


def test_every_fixture_unlabelled_draws_a_small_chart_of_the_five_grids(tmp_path):
    """The review's database: a copy of tests/fixtures/fio ingested without a manifest. Every unlabelled file is a
    setup of its own, so one sweep's files are one cell each: 266 combinations of one cell, 5 grids (two files
    that ran several depths in one output). The old chart was 105,666 x 24,970 pixels."""
    raw = tmp_path / "raw"
    shutil.copytree(FIO, raw, ignore=shutil.ignore_patterns("*.md", "*.jsonl"))
    ingest([raw], db_path=tmp_path / "f.duckdb", parquet_dir=False, progress=False, workers=1)
    with open_db(tmp_path / "f.duckdb") as con:
        depth = fio_views.analyse(con, Selection())["depth"]
    g = fio_grid.grid(depth)
    assert (len(g.drawn), g.not_drawn, g.single, g.single_runs, g.single_unlabelled, g.unknown_runs) == (5, [], 266, 288, 266, 5)  # fmt: skip
    assert g.drawn[0] == "write bs=8KiB libaio direct=1 size=? runtime=300s | write | file fio-3.35-nvme-qd32-4x8-and-8x4.txt (host not labelled)"  # fmt: skip
    assert g.cells.height == 10  # two cells each: 4 x 8 and 8 x 4; the kbench file's iodepth 4 and 64
    charts.setup()
    svg = charts.save(charts.fio_depth_grid(g, Selection()), "grid", "08_fio", tmp_path / "fig")["svg"].read_text()
    width, height = (float(v) for v in re.search(r'<svg[^>]* width="([\d.]+)" height="([\d.]+)"', svg).groups())
    assert width <= 1600 and height <= 800, (width, height)


def _notebook(db: Path, out: Path, **params) -> tuple[str, list]:
    """Notebook 08's own cells, in-process (no kernel): its parameters with ``params`` over them, its set-up, and
    the grid cell; what the grid cell printed and displayed."""
    nb = nbformat.read(str(ROOT / "notebooks" / "08_fio.ipynb"), as_version=4)
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    grid_cell = next(c for c in code if "fio_grid.grid(" in c)
    shown: list = []
    ns: dict = {"display": shown.append}
    exec(code[0] + "".join(f"\n{k} = {v!r}" for k, v in {"db_path": str(db), **params}.items()), ns)
    exec(code[1], ns)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(grid_cell, ns)
    ns["con"].close()
    return printed.getvalue(), shown


def test_the_notebook_on_three_machines_with_non_default_parameters(tmp_path, monkeypatch):
    raw = tmp_path / "raw"
    raw.mkdir()
    rows = []
    for src, host, stack, dev in (
        (FIO / "3.33" / "lab-repeats", "lab", "ext4", "vda"),
        (FIO / "newuser-h6" / "a" / "grid", "vm h6", "ext4/virtio", "vda"),
        (FIO / "newuser-h5" / "kestrel", "kestrel", "btrfs", ""),
    ):
        for f in sorted(src.glob("*.txt")) + sorted(src.glob("*.json")):
            shutil.copy(f, raw / f.name)
            rows.append(f"{f.name},ds2,{host},{stack},{dev}\n")
    (raw / "manifest.csv").write_text("path,study,host,stack,devices\n" + "".join(rows))
    ingest([raw], db_path=tmp_path / "d.duckdb", parquet_dir=False, progress=False, workers=1)
    monkeypatch.setenv("STORAGELAB_REPORT_DIR", str(tmp_path / "rep"))
    printed, shown = _notebook(tmp_path / "d.duckdb", tmp_path, study="ds2", grid_panels=2, knee_gain_pct=20.0)
    lab = "randread bs=4KiB libaio direct=1 size=16MiB runtime=2s | read | lab | ext4 | layout not labelled | vda"
    kestrel = "randread bs=4KiB libaio direct=? size=16MiB runtime=? | read | kestrel | btrfs | layout not labelled"
    h6 = "randread bs=4KiB libaio direct=1 size=32MiB runtime=2s | read | vm h6 | ext4/virtio | layout not labelled | vda"  # fmt: skip
    assert printed.splitlines() == [
        "2 of the 3 workload | direction | setup combination(s) with a grid (two iodepths or two numjobs measured, "
        "or more) drawn, those with the most runs; a cell is the mean of its runs (their count beside it where more "
        "than one), outlined in red where one of them is flagged.",
        f"1 grid(s) not drawn (4 run(s)): one chart draws 2 (grid_panels): `{h6}`; the runs listed under 'Against "
        "I/Os in flight' include theirs; re-run with `-p grid_panels N` (more panels) or `-p grid_only TEXT` (only "
        "the combinations whose name contains TEXT) to draw them.",
        # btr-grid-qd8-nj2.txt has no 'Laying out IO file' line: its size is not known, a workload of its own
        "1 combination(s) (1 run(s)) measured at one iodepth x numjobs only: one cell, no grid; the runs listed "
        "under 'Against I/Os in flight' include theirs.",
    ]
    (fig,) = shown
    spec = json.loads(fig.files["vl.json"].read_text())
    (rows_,) = (d for d in spec["datasets"].values() if d and "panel" in d[0])
    assert sorted({r["panel"] for r in rows_}) == [lab, kestrel]
    cells = {(r["panel"] == lab, r["iodepth"], r["numjobs"]): r for r in rows_}
    # the lab's 2 s runs: 3 repeats a depth, every one flagged short: outlined, their count on the cell
    assert [(cells[(True, d, 1)]["text"], cells[(True, d, 1)]["flagged"]) for d in (1, 4, 16)] == [
        ("15.4k n=3", True),
        ("37.8k n=3", True),
        ("78.5k n=3", True),
    ]
    assert cells[(False, 8, 1)]["text"] == "54.6k n=4" and cells[(False, 8, 1)]["derivation"] == "mean of 4 runs"
    # each run's lines, one page beside the report
    kq8 = cells[(False, 8, 1)]
    assert kq8["raw_file"] == "from: btr-after-qd8-repeats.txt:6-28, 36-57, 65-86; btr-grid-qd8-nj1.txt:5-27"
    assert (tmp_path / "rep" / kq8["raw_href"]).is_file() and (kq8["flags"], kq8["p99_ms"]) == ("⚠ short", 2.2615)
    # wrapped panels, the most runs first, each titled line by line with its workload, direction, setup and unit
    assert spec["columns"] == 4 and spec["facet"]["sort"] == [
        "randread bs=4KiB libaio direct=1 size=16MiB\nruntime=2s\nread\nlab\next4\nlayout not labelled\nvda\n(cells: IOPS)",
        "randread bs=4KiB libaio direct=? size=16MiB\nruntime=?\nread\nkestrel\nbtrfs\nlayout not labelled\n(cells: IOPS)",
    ]

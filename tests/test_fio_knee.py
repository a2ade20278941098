"""08's saturation knee and its iodepth x numjobs grid, on real sweeps: fio-plot's published MX200 sweeps
(fixtures/fio/3.1/fioplot-mx200-sweep: one SSD at iodepth 1-64 x numjobs 1 and 4, three in RAID 0 at numjobs 1)
and the lab's own 2 s sweeps (fixtures/fio/3.33/lab-repeats, lab-psync)."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import pytest

from storagelab import charts
from storagelab.analysis import Selection, fio_grid, fio_views, open_db
from storagelab.store import ingest

FIO = Path(__file__).resolve().parent / "fixtures" / "fio"
WL = (
    "`randread bs=4KiB libaio direct=1 size=? runtime=60s` read on HPDL380G8 | stack not labelled | layout not labelled"
)


def _db(tmp: Path, src: Path, device) -> Path:
    raw = tmp / "raw"
    shutil.copytree(src, raw, ignore=shutil.ignore_patterns("*.md", "*.jsonl"))
    names = sorted(p.name for p in raw.iterdir())
    rows = "".join(f"{n},HPDL380G8,{device(n)}\n" for n in names)
    (raw / "manifest.csv").write_text("path,host,devices\n" + rows)
    s = ingest([raw], db_path=tmp / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    assert (s.ingested, s.failed) == (len(names), 0), s.errors
    return tmp / "x.duckdb"


@pytest.fixture(scope="module")
def mx200(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mx200")
    return _db(tmp, FIO / "3.1" / "fioplot-mx200-sweep", lambda n: "3x MX200 RAID0" if "raid0" in n else "MX200")


def _knees(db: Path, **kw) -> list[str]:
    with open_db(db) as con:
        res = fio_views.analyse(con, Selection(), **kw)
    return [f for f in res.findings if f.startswith("Saturation knee")]


def test_the_knee_is_where_iops_stop_rising_and_p99_climbs(mx200):
    # the review read the MX200 numjobs-1 sweep as 'IOPS stop rising at QD16'
    assert _knees(mx200) == [
        f"Saturation knee of {WL} | 3x MX200 RAID0, numjobs 1: none in the measured range: IOPS still rise by 10 % "
        "or more per doubling of the I/Os in flight up to 64 (gain per doubling: 1->2: +100 %, 2->4: +59 %, "
        "4->8: +50 %, 8->16: +98 %, 16->32: +77 %, 32->64: +27 %).",
        f"Saturation knee of {WL} | MX200, numjobs 1: 16 I/Os in flight: beyond it IOPS rise by less than 10 % per "
        "doubling (47,423 IOPS at 16, 47,336 IOPS at 32) while p99 goes 0.465 ms -> 0.848 ms (gain per doubling: "
        "1->2: +104 %, 2->4: +15 %, 4->8: +99 %, 8->16: +54 %, 16->32: +0 %, 32->64: -1 %).",
        f"Saturation knee of {WL} | MX200, numjobs 4: 16 I/Os in flight: beyond it IOPS rise by less than 10 % per "
        "doubling (46,821 IOPS at 16, 46,668 IOPS at 32) while p99 goes 0.485 ms -> 0.872 ms (gain per doubling: "
        "4->8: +54 %, 8->16: +58 %, 16->32: +0 %, 32->64: +0 %, 64->128: +0 %, 128->256: +2 %).",
    ]


def test_the_threshold_is_a_parameter(mx200):
    # at 60 % per doubling, 8 -> 16 (+54 %) no longer counts as rising: the knee moves to 8
    one = _knees(mx200, knee_gain_pct=60)[1]
    assert one.startswith(f"Saturation knee of {WL} | MX200, numjobs 1: 8 I/Os in flight: beyond it IOPS rise by less")
    assert "(30,829 IOPS at 8, 47,423 IOPS at 16) while p99 goes 0.342 ms -> 0.465 ms" in one
    with pytest.raises(ValueError, match="knee_gain_pct must be between 0 and 100"):
        _knees(mx200, knee_gain_pct=0)


@pytest.mark.parametrize(("folder", "runs", "engine"), [("lab-repeats", 9, "libaio"), ("lab-psync", 2, "psync")])
def test_flagged_lab_runs_show_no_knee_and_say_why(tmp_path, folder, runs, engine):
    """The lab's sweeps ran 2 s per run, flagged short by the design checks: they set no knee."""
    db = _db(tmp_path, FIO / "3.33" / folder, lambda n: "vda")
    assert _knees(db) == [
        f"Saturation knee of `randread bs=4KiB {engine} direct=1 size=16MiB runtime=2s` read on HPDL380G8 | stack "
        f"not labelled | layout not labelled | vda, numjobs 1: not shown: 0 depth(s) of unflagged runs ({runs} "
        "flagged run(s) left out); a knee needs 3 or more (a rise, then a flattening) within one setup."
    ]


def test_the_grid_has_a_cell_per_setup_iodepth_and_numjobs_linked_to_its_raw_lines(mx200, tmp_path):
    with open_db(mx200) as con:
        res = fio_views.analyse(con, Selection())
    charts.setup()
    grid = fio_grid.grid(res["depth"])
    out = charts.save(charts.fio_depth_grid(grid, Selection()), "grid", "08_fio", tmp_path / "figures")
    spec = json.loads(out["vl.json"].read_text())
    (rows,) = spec["datasets"].values()
    cells = sorted((r["setup"].split(" | ")[-1], r["numjobs"], r["iodepth"], round(r["value"])) for r in rows)
    assert len(cells) == 21
    assert cells[:2] == [("3x MX200 RAID0", 1, 1, 6575), ("3x MX200 RAID0", 1, 2, 13150)]
    assert ("MX200", 1, 16, 47423) in cells and ("MX200", 4, 16, 46616) in cells
    one = next(r for r in rows if r["setup"].endswith("| MX200") and (r["iodepth"], r["numjobs"]) == (16, 1))
    assert (one["text"], one["runs"], one["flagged"]) == ("47.4k", 1, False)
    assert one["raw_file"].endswith("/mx200-randread-16-1.json") and one["raw_href"].endswith("#L7")
    page = (tmp_path / one["raw_href"].split("#")[0]).read_text()  # beside the report: <report>/raw/
    marked = re.findall(r'<span id="L(\d+)" class="hl"><b>\s*\d+</b>  (.*)\n</span>', page)
    lines = Path(one["path"]).read_text().split("\n")
    start, end = one["line_start"], one["line_end"]
    assert [int(n) for n, _ in marked] == list(range(start, end + 1))
    assert [html.unescape(t) for _, t in marked] == lines[start - 1 : end]  # the job's own lines of the JSON
    assert lines[start - 1].strip() == "{" and '"jobname" : "random-read"' in lines[start]

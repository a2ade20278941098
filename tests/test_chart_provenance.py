"""Every chart whose marks come from a file's lines links each such mark to them: the saved ``.vl.json`` rows carry
``raw_href``, and the excerpt page it opens highlights the file's own lines (as tests/test_excerpts.py). One test
per notebook family, on the project's data (data/raw) and real fixtures; 05's bars are in tests/test_reports.py,
08's iodepth x numjobs grid in tests/test_fio_knee.py. A mark computed from several inputs (a ratio of two runs, a
model's line) names them all and links to one page of their lines; every chart of a build is walked in
tests/test_reports.py::test_every_chart_mark_names_its_raw_files."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import polars as pl

from storagelab import charts, excerpts
from storagelab.analysis import (
    Selection,
    alignment,
    dedup,
    explore,
    fio_views,
    open_db,
    recordsize,
    scaling,
    transports,
)
from storagelab.excerpts import MAX_HIGHLIGHT_LINES
from storagelab.paths import ROOT
from storagelab.store import ingest

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _linked(chart, name: str, notebook: str, report: Path) -> list[dict]:
    """The rows of ``chart`` saved as a report's figure that link to one file's excerpt, each excerpt checked: the
    page exists and its highlighted lines are the file's own lines ``line_start``..``line_end`` (a row computed from
    several inputs links to one page with an excerpt of each: their count checked)."""
    charts.setup()
    out = charts.save(chart, name, notebook, report / "figures")
    spec = json.loads(out["vl.json"].read_text())
    rows = [r for rs in spec["datasets"].values() for r in rs if "#" in r.get("raw_href", "")]
    for r in (r for rs in spec["datasets"].values() for r in rs if "#" not in r.get("raw_href", "#")):
        page = (report / r["raw_href"]).read_text()  # a number computed from several inputs: one excerpt each
        assert r["raw_file"].startswith("from: ") and page.count("<pre>") == int(r["raw_lines"].split()[0])
    for r in rows:
        page_name, anchor = r["raw_href"].split("#")
        assert anchor == f"L{r['line_start']}"
        page = (report / page_name).read_text()
        marked = re.findall(r'<span id="L(\d+)" class="hl"><b>\s*\d+</b>  (.*)\n</span>', page)
        path = Path(r["path"]) if Path(r["path"]).is_absolute() else ROOT / r["path"]
        lines = path.read_text().split("\n")
        end = min(r.get("line_end") or r["line_start"], r["line_start"] + MAX_HIGHLIGHT_LINES - 1)
        assert [int(n) for n, _ in marked] == list(range(r["line_start"], end + 1))
        assert [html.unescape(t) for _, t in marked] == lines[r["line_start"] - 1 : end]
    return rows


def _res(db, analyse, study="", **kw):
    with open_db(db) as con:
        return analyse(con, Selection(study=study), **kw)


LAYOUTS = "data/raw/thumper-x4500/layout-sweep.csv"


def test_01_layout_points_link_to_their_table_rows(seed_db, tmp_path):
    res = _res(seed_db, scaling.analyse, "thumper-x4500")
    rows = _linked(charts.vdev_scaling(res["scaled"], 1, Selection()), "scaling", "01_vdev_scaling", tmp_path)
    # every measured point (a layout with a relative speed), and the disk model at a layout: that row's line
    measured = [r for r in rows if r["series"] == "measured"]
    assert len(measured) == res["scaled"]["relative"].drop_nulls().len() == 95
    assert {r["series"] for r in rows} == {"measured", "disk model"}
    assert all(r["derivation"].startswith("disk model: ") for r in rows if r["series"] == "disk model")
    one = next(r for r in rows if (r["test"], r["vdev_type"], r["vdev_count"]) == ("dd_write", "raidz2", 1))
    assert (one["path"], one["raw_lines"], one["raw_href"][-4:]) == (LAYOUTS, "65", "#L65")
    rows = _linked(charts.serial_reader(res["serial_reader"], "zfs_send_read", Selection()), "s", "01", tmp_path)
    assert len(rows) == res["serial_reader"].height == 46
    assert {(r["layout"], r["raw_lines"]) for r in rows if r["vdev_count"] == 1 and r["vdev_type"] == "mirror"} == {
        ("1x46", "3")
    }
    # the models are arithmetic: the rule over the layouts at its vdev count, the fit over every measured point
    spec = excerpts.enrich(charts.vdev_scaling(res["scaled"], 1, Selection()).to_dict(), None)
    rule = [r for rs in spec["datasets"].values() for r in rs if r["series"] == "sum of vdevs (n x)"]
    two = next(r for r in rule if (r["test"], r["vdev_count"]) == ("dd_write", 2))
    assert (two["raw_file"], two["raw_lines"]) == ("from: layout-sweep.csv:66, 67, 68", "3 inputs")
    assert two["derivation"] == "sum of vdevs: 2 vdevs / 1 (the baseline), at the layouts of that count"
    spec = excerpts.enrich(charts.serial_reader(res["serial_reader"], "zfs_send_read", Selection()).to_dict(), None)
    fit = [r for rs in spec["datasets"].values() for r in rs if r["series"] != "measured"]
    assert len(fit) == 46 and {(r["raw_file"], r["raw_lines"]) for r in fit} == {
        ("from: layout-sweep.csv:3, 6, 9, 12 and 42 more", "46 inputs")
    }


def test_02_block_size_bars_link_to_their_histogram_lines(ztest_db, tmp_path):
    res = _res(ztest_db, recordsize.analyse, "ztestlab")
    rows = _linked(charts.block_sizes(res["block_sizes"], 128 * 1024, Selection()), "bs", "02_recordsize", tmp_path)
    assert len(rows) == res["block_sizes"].filter(pl.col("lsize_bytes") > 0).height > 0
    first = min(rows, key=lambda r: r["line_start"])
    assert (Path(first["path"]).name, first["block_size_bytes"], first["lsize_count"], first["raw_lines"]) == (
        "zdb-bb.txt",
        512,
        116,
        "83",
    )


def test_06_mbuffer_rates_link_to_their_summary_lines(seed_db, tmp_path):
    res = _res(seed_db, transports.analyse, "thumper-x4500")
    chart = charts.transport_rates(res["rates"], res.frames.get("waits", pl.DataFrame()), "x", Selection())
    rows = _linked(chart, "rates", "06_zfs_send_transports", tmp_path)
    assert len(rows) == res["rates"].height
    assert [(r["label"], Path(r["path"]).name, r["raw_lines"]) for r in rows][:3] == [
        ("/dev/zero to /dev/null", "mbuffer-zero-to-null.txt", "1"),
        ("socat (network)", "mbuffer-socat-network.txt", "1"),
        ("socat (sender, local)", "mbuffer-socat-sender.txt", "2"),
    ]


def test_07_run_bars_link_to_their_group_lines(seed_db, tmp_path):
    with open_db(seed_db) as con:
        groups = con.sql("SELECT * FROM fio_groups").pl()
        runs = explore.run_bandwidths(
            groups,
            explore.selected_files(con, Selection()),
            con.sql("SELECT file_id, doc_index, is_final FROM fio_jobs").pl(),
        )
    runs = runs.filter(pl.col("direction") == "write").with_columns(
        bw_mib_s=pl.col("bw_bytes_per_s") / 2**20,
        stack=pl.col("stack").fill_null("(no stack label)"),
        label=pl.coalesce("label", "path"),
    )
    rows = _linked(charts.explore_run_bandwidth(runs, "write"), "bw", "07_explore", tmp_path)
    assert len(rows) == runs.height
    assert sorted((r["label"], r["path"], r["raw_lines"]) for r in rows if r["label"].startswith("autotier")) == [
        ("autotier over ZFS (0.8.4)", "data/raw/homelab-mergerfs/fio-autotier-zfs.txt", "26"),
        ("autotier over ext4", "data/raw/homelab-mergerfs/fio-autotier-ext4.txt", "29"),
    ]  # each run's group line ('WRITE: bw=...')
    assert all("WRITE: bw=" in (ROOT / r["path"]).read_text().split("\n")[r["line_start"] - 1] for r in rows)


def test_08_histograms_and_log_windows_link_to_their_lines(tmp_path):
    raw = tmp_path / "raw"
    shutil.copytree(FIXTURES / "fio" / "3.33" / "logs", raw, ignore=shutil.ignore_patterns("*.md", "*.jsonl"))
    s = ingest([raw], db_path=tmp_path / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    assert (s.ingested, s.failed) == (26, 3), s.errors  # three slat logs are empty (COMMANDS.md)
    res = _res(tmp_path / "x.duckdb", fio_views.analyse)
    rows = _linked(charts.fio_latency_histogram(res["histogram"], Selection()), "h", "08_fio", tmp_path / "r")
    assert len(rows) == res["histogram"].height == 67  # every bucket: its direction's blocks in the final jobs
    # the "write": {...} objects (JSON+ bins) of the two jobs: the first's opens at line 82, the second's closes at 640
    assert {(Path(r["path"]).name, r["raw_lines"]) for r in rows if r["label"] == "avg.txt"} == {("avg.txt", "82-640")}
    avg = (FIXTURES / "fio" / "3.33" / "logs" / "avg.txt").read_text().split("\n")
    assert (avg[81].strip(), avg[455].strip(), avg[639].strip()) == ('"write" : {', '"write" : {', "},")
    rows = _linked(charts.fio_time_series(res["series"], Selection()), "t", "08_fio", tmp_path / "r")
    # every window: its first job's log lines in it. 79: the avg run's 500 ms windows are its own (6 of 3 s: bw/iops 5
    # each, clat/lat 6); they had been the raw run's 1 ms per-I/O gap, a job's 500 ms and the other's 503 ms apart
    assert len(rows) == res["series"].height == 79
    one = next(r for r in rows if (r["kind"], r["time_ns"]) == ("bw", 1_000_000_000) and "avg" in r["panel"])
    assert (Path(one["path"]).name, one["raw_lines"], one["jobs"]) == ("avg_bw.1.log", "2", 2)


def two_fio_runs(tmp_path: Path) -> tuple[Path, str, str]:
    """Two real published fio outputs of one workload (random 4 KiB writes, fio 3.25) labelled as one and two raidz2
    vdevs of study 't', ingested into ``tmp_path / 'x.duckdb'``: (the raw folder, the two file names)."""
    pub = FIXTURES / "fio" / "published"
    raid, other = (
        "k8s-homelab-zfs-raidz2x6-noslog-scale-fio3.25-randwrite4k.txt",
        "k8s-homelab-zfs-optane-single-scale-fio3.25-randwrite4k.txt",
    )
    raw = tmp_path / "raw"
    raw.mkdir()
    for name in (raid, other):
        shutil.copy(pub / name, raw / name)
    (raw / "manifest.csv").write_text(
        "path,study,label,stack,vdev_type,vdev_count,vdev_width\n"
        f"{raid},t,one vdev,zfs,raidz2,1,6\n{other},t,two vdevs,zfs,raidz2,2,6\n"
    )
    ingest([raw], db_path=tmp_path / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    return raw, raid, other


def test_01_fio_relative_speed_names_the_run_and_its_baseline(tmp_path):
    """A fio point of 01's speed-vs-vdevs chart is a ratio: the run's bandwidth over the mean of its group's baseline
    runs. It names both lines and links to one page of them. Two real published outputs of one workload (random 4 KiB
    writes, fio 3.25), labelled here as one and two raidz2 vdevs of one group: the labels are the test's, the lines
    the files' own."""
    raw, raid, other = two_fio_runs(tmp_path)
    res = _res(tmp_path / "x.duckdb", scaling.analyse, "t")
    chart = charts.fio_vdev_scaling(res["fio"], res["fio_configs"], Selection())
    rows = _linked(chart, "fio", "01_vdev_scaling", tmp_path / "r")  # the baseline: its own line (its mean of one)
    # the means of each vdev count's runs and the rule line (h6 trial S13: no line through repeats, a rule drawn)
    # name the runs at their vdev count
    assert [(r["series"], r["vdev_count"], Path(r["raw_file"]).name, r["raw_lines"]) for r in rows] == [
        ("run", 1, raid, "32"),
        ("mean of the runs", 1, raid, "32"),
        ("mean of the runs", 2, other, "33"),
        ("sum-of-vdevs rule (n x)", 1, raid, "32"),
        ("sum-of-vdevs rule (n x)", 2, other, "33"),
    ]
    assert [(r["label"], Path(r["raw_file"]).name, r["raw_lines"]) for r in rows if r["series"] == "run"] == [
        ("one vdev", raid, "32")
    ]
    spec = json.loads((tmp_path / "r" / "figures" / "01-vdev-scaling" / "fio.vl.json").read_text())
    (two,) = [r for rs in spec["datasets"].values() for r in rs if r["label"] == "two vdevs"]
    assert (two["raw_file"], two["raw_lines"], round(two["relative"], 3)) == (
        f"from: {other}:33; {raid}:32",
        "2 inputs",
        6.746,
    )
    assert two["derivation"] == "this run's bandwidth / the mean of its baseline's 1 run(s)"
    page = (tmp_path / "r" / two["raw_href"]).read_text()
    marked = re.findall(r'<span id="L(\d+)" class="hl"><b>\s*\d+</b>  (.*)\n</span>', page)
    assert marked == [
        ("33", html.escape((raw / other).read_text().split("\n")[32])),
        ("32", html.escape((raw / raid).read_text().split("\n")[31])),
    ]


BONNIE = "data/raw/freebsd-bonnie-dedup/"


def test_03_after_before_bars_name_both_runs_lines(seed_db, tmp_path):
    """A bar of 03 is a ratio of two bonnie++ result lines (the sector-63 run's and the aligned run's): it names both,
    with the arithmetic, and links to one page of both lines."""
    res = _res(seed_db, alignment.analyse, "freebsd-bonnie-dedup")
    chart = charts.before_after(res["ratios"], Selection(), "before", "after")
    assert _linked(chart, "ratios", "03_sector63", tmp_path) == []  # no bar is one file's line
    spec = json.loads((tmp_path / "figures" / "03-sector63" / "ratios.vl.json").read_text())
    bars = {r["test"]: r for rs in spec["datasets"].values() for r in rs if "test" in r}
    put = bars["put_block"]
    assert (put["raw_file"], put["raw_lines"], put["derivation"], round(put["ratio"], 3)) == (
        "from: bonnie-raid1-sec63-cache-log.txt:4; bonnie-raid1-aligned-cache-log.txt:5",
        "2 inputs",
        "put_block: after / before (78.9 MiB/s / 10.4 MiB/s)",  # stored in bytes/s, shown in MiB/s
        7.587,
    )
    assert bars["seeks"]["derivation"].endswith("/s)") and "MiB" not in bars["seeks"]["derivation"]  # ops/s
    page = (tmp_path / put["raw_href"]).read_text()
    marked = re.findall(r'<span id="L(\d+)" class="hl"><b>\s*\d+</b>  (.*)\n</span>', page)
    before = (ROOT / BONNIE / "bonnie-raid1-sec63-cache-log.txt").read_text().split("\n")[3]
    after = (ROOT / BONNIE / "bonnie-raid1-aligned-cache-log.txt").read_text().split("\n")[4]
    assert marked == [("4", html.escape(before)), ("5", html.escape(after))]


def test_04_ddt_estimates_name_their_inputs(seed_db, ztest_db, tmp_path):
    """Each DDT estimate names the outputs it is computed from: zdb -b alone (rungs 1, 2), zdb -b and zpool list's
    DEDUP (rung 3), the DDT histogram's Total line (zdb -S, zdb -DD), the DDT object lines (zdb -DD); the
    sensitivity line of a machine names its pools' inputs together."""
    res = _res(seed_db, dedup.analyse, "freebsd-bonnie-dedup")
    spec = excerpts.enrich(charts.ddt_ladder(res["ladder"], res.numbers.chart_budget, Selection()).to_dict(), None)
    got = [
        (r["pool"], r["rung"], r["raw_file"], r["raw_lines"])
        for rs in spec["datasets"].values()
        for r in rs
        if "pool" in r
    ]
    zdb_b = BONNIE + "zdb-b-archiv.txt"
    assert got[:3] + [g[:3] for g in got if g[1] == 3] == [
        ("archiv", 1, zdb_b, "9-15"),
        ("archiv", 2, zdb_b, "9-15"),
        ("archiv", 3, "from: zdb-b-archiv.txt:9-15; zpool-list-before.txt:4", "2 inputs"),
        ("archiv", 3, "from: zdb-b-archiv.txt:9-15; zpool-list-before.txt:4"),
        ("raid1", 3, "from: zdb-b-raid1.txt:9-15; zpool-list-before.txt:6"),
    ]
    sens = charts.ddt_sensitivity(res["sensitivity"], res.numbers.chart_budget, Selection())
    rows = [r for rs in excerpts.enrich(sens.to_dict(), None)["datasets"].values() for r in rs if "series" in r]
    assert {r["series"]: r["raw_file"] for r in rows}["alpina (all its pools)"] == (
        "from: zdb-b-archiv.txt:9-15; zpool-list-before.txt:4, 6; zdb-b-raid1.txt:9-15"
    )
    res = _res(ztest_db, dedup.analyse, "ztestlab")
    rows = _linked(charts.ddt_ladder(res["ladder"], res.numbers.chart_budget, Selection()), "l", "04", tmp_path)
    assert [(r["rung"], Path(r["path"]).name, r["raw_lines"]) for r in rows] == [
        (1, "zdb-b.txt", "7-14"),
        (2, "zdb-b.txt", "7-14"),
        (4, "zdb-S.txt", "9"),  # ' Total    1.61K    172M ...'
        (5, "zdb-DD.txt", "15"),
        (6, "zdb-DD.txt", "1-5"),  # 'DDT-sha256-zap-unique: 374 entries, ...' and the four objects after it
    ]


CLAIMS = "papers/ars-zfs-vs-raid/claims.csv"


def _claims_line(n: int) -> str:
    return (ROOT / CLAIMS).read_text(encoding="utf-8").split("\n")[n - 1]


def test_01_stated_figures_link_to_their_claims_lines(seed_db, tmp_path):
    """01's stated n = 2 bars are figures from the study's text: each names its claims.csv line and the passage it
    cites, and opens that line highlighted (the excerpt is read from the repository's file, checked by its SHA-256)."""
    res = _res(seed_db, scaling.analyse, "ars-zfs-vs-raid")
    chart = charts.ratio_bars(res["stated_two_vdevs"], "vdev_class", "ratio", "t", ["s"], 2.0, "x")
    rows = _linked(chart, "stated", "01_vdev_scaling", tmp_path)
    assert [(r["vdev_class"], r["raw_file"], r["raw_lines"], r["stated_in"]) for r in rows] == [
        (
            "single disk",
            CLAIMS,
            "2",
            'ars-2vdev-single-pct: 002_3eed05af777586bc.txt:104 "202 percent, 203 percent, and 207 percent"',
        ),
        (
            "2-wide mirror",
            CLAIMS,
            "3",
            'ars-2vdev-mirror-pct: 002_3eed05af777586bc.txt:104 "202 percent, 203 percent, and 207 percent"',
        ),
        (
            "4-wide RAIDz2",
            CLAIMS,
            "4",
            'ars-2vdev-raidz2-pct: 002_3eed05af777586bc.txt:104 "202 percent, 203 percent, and 207 percent"',
        ),
        (
            "RAIDz2 joker (one vdev, 4 wide)",
            CLAIMS,
            "5",
            'ars-raidz2-joker-n2-pct: 002_3eed05af777586bc.txt:107 "with only 160 percent the performance of a single"',
        ),
    ]
    assert [round(r["ratio"], 6) for r in rows] == [2.02, 2.03, 2.07, 1.6]  # 202 % / 100, ...
    assert _claims_line(3).startswith("ars-2vdev-mirror-pct,ars-zfs-vs-raid,") and ",203,%," in _claims_line(3)
    spec = json.loads((tmp_path / "figures" / "01-vdev-scaling" / "stated.vl.json").read_text())
    assert [r["raw_file"] for rs in spec["datasets"].values() for r in rs if "vdev_class" not in r] == [
        "none: reference line (2x)"
    ]


def test_02_stated_ratios_name_both_claims_and_the_model_its_formula(seed_db, tmp_path):
    """02's stated ratios: a dot divides two figures stated in the study's text, so it names both claims.csv lines
    (and their passages) with the arithmetic, and opens one page with both lines highlighted; a red tick is the
    model, arithmetic on its parameters: 'none: arithmetic ...' with its formula."""
    res = _res(seed_db, recordsize.analyse, "ars-zfs-vs-raid")
    chart = charts.stated_vs_model(res["stated_ratios"], Selection(study="ars-zfs-vs-raid"))
    assert _linked(chart, "stated", "02_recordsize", tmp_path) == []  # no dot is one line: each is two claims
    spec = json.loads((tmp_path / "figures" / "02-recordsize" / "stated.vl.json").read_text())
    every = [r for rs in spec["datasets"].values() for r in rs]
    dots = [r for r in every if r.get("raw_lines") == "2 inputs"]
    assert [(r["claim"], r["raw_file"]) for r in dots] == [
        ("1M recordsize speed-up of RAIDz2 1 MiB writes", f"from: {CLAIMS}:19, 18"),
        ("first (discarded) run vs steady state", f"from: {CLAIMS}:20, 19"),
        ("2 x 4-wide RAIDz2 vs 8-wide RAID6, 1 MiB reads", f"from: {CLAIMS}:23, 24"),
        ("RAIDz2 vs RAID6, single-process 1 MiB reads", f"from: {CLAIMS}:25, 26"),
    ]
    write = dots[0]
    assert (round(write["ratio"], 4), write["derivation"], write["stated_in"]) == (
        1.6725,  # 950 / 568
        "stated ars-raidz2-1m-write-rs1m / stated ars-raidz2-1m-write-rs128k (950.0 MiB/s / 568.0 MiB/s)",
        'ars-raidz2-1m-write-rs1m: 002_3eed05af777586bc.txt:208 "leap from 568MiB/sec to 950MiB/sec"; '
        'ars-raidz2-1m-write-rs128k: 002_3eed05af777586bc.txt:208 "leap from 568MiB/sec to 950MiB/sec"',
    )
    page = (tmp_path / write["raw_href"]).read_text()
    marked = re.findall(r'<span id="L(\d+)" class="hl"><b>\s*\d+</b>  (.*)\n</span>', page)
    assert marked == [("19", html.escape(_claims_line(19))), ("18", html.escape(_claims_line(18)))]
    assert _claims_line(19).startswith("ars-raidz2-1m-write-rs1m,") and ",950,MiB/s," in _claims_line(19)
    ticks = [r for r in every if r.get("raw_file", "").startswith("none: arithmetic")]
    assert [(r["raw_file"], r["theory"], r["derivation"][:40]) for r in ticks] == [
        ("none: arithmetic on the model's parameters", 1.0526315789473684, "models explain 1.053x: no amplification "),
        ("none: arithmetic on the model's parameters", 4 / 6, "streaming model, data disks: 2 x (4 - 2)"),
        ("none: arithmetic on the model's parameters", 3.0, "transfer-bound end of the serial-reader "),
    ]
    assert "raw_href" not in ticks[0]


def test_a_stated_figure_whose_file_changed_gets_no_excerpt(tmp_path):
    """stated_where: the claims file's path (as read: outside the repository, its own path), line and the SHA-256 of
    the bytes read; a file changed since gets no excerpt page (its lines may no longer be the claim's)."""
    import hashlib

    from storagelab.claims import load_claims, stated_where

    study = tmp_path / "papers" / "s"
    study.mkdir(parents=True)
    head = (ROOT / CLAIMS).read_text(encoding="utf-8").split("\n")[:3]
    (study / "claims.csv").write_text("\n".join(head).replace("ars-zfs-vs-raid", "s") + "\n", encoding="utf-8")
    where = stated_where(load_claims(papers_dir=tmp_path / "papers"))
    path = (study / "claims.csv").as_posix()
    digest = hashlib.sha256((study / "claims.csv").read_bytes()).hexdigest()
    assert where.select("claim_id", "path", "line_start", "line_end", "sha256").rows() == [
        ("ars-2vdev-single-pct", path, 2, 2, digest),
        ("ars-2vdev-mirror-pct", path, 3, 3, digest),
    ]
    spec = {"datasets": {"d": where.to_dicts()}, "mark": "bar"}
    assert all(
        r["raw_href"].endswith("#L" + r["raw_lines"]) for r in excerpts.enrich(spec, tmp_path / "a")["datasets"]["d"]
    )
    (study / "claims.csv").write_text("\n".join(head).replace("202", "220") + "\n", encoding="utf-8")
    rows = excerpts.enrich(spec, tmp_path / "b")["datasets"]["d"]
    assert [(r["raw_file"], r["raw_lines"], r.get("raw_href")) for r in rows] == [(path, "2", None), (path, "3", None)]

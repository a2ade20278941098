"""Notebooks 08 and 05 on the h6 new-user trial's data (/work/h6-findings.md; files in
tests/fixtures/fio/newuser-h6, sources in its COMMANDS.md): (a) fio 3.33 runs on a VM labelled as that user labelled
them (the logs beside the 12-s run deliberately unlabelled), (b) published ZFS logs of three pools, no manifest, with
same-named files in different folders. Non-default parameters, as the user ran them."""

from __future__ import annotations

import shutil

import polars as pl
import pytest
from conftest import FIXTURES

from storagelab import charts
from storagelab.analysis import Selection, explore, fio_runs, fio_views, open_db, stacks

SRC = FIXTURES / "fio" / "newuser-h6"
# h6's manifest for (a), as /tmp/h6ds/a/manifest.csv (bonnie row left out); the longw_*.1.log logs have no row
MANIFEST_A = """path,study,host,stack,vdev_type,ram_bytes,phase,notes
shm/shm-randrw70-nj2.json,H6 VM lab,vm h6,tmpfs,ramdisk,25275924480,,hot
shm/shm-seqwrite-jsonplus.json,H6 VM lab,vm h6,tmpfs,ramdisk,,,hot
vda/vda-fsync1.txt,h6 solo,vm h6,ext4/virtio,,,,
vda/vda-fdatasync1.json,H6 VM lab,vm h6,ext4/virtio,jbod,25275924480,,
vda/vda-buffered-read.txt,H6 VM lab,vm h6,,,25275924480,,
vda/vda-randread-repeats.txt,H6 VM lab,vm h6,ext4/virtio,jbod,,,
vda/vda-long-randwrite.txt,H6 VM lab,vm h6,ext4/virtio,jbod,25275924480,,
grid/grid-qd1-nj1.json,H6 VM lab,vm h6,ext4/virtio,,,,
grid/grid-qd1-nj4.json,H6 VM lab,vm h6,ext4/virtio,,,,
grid/grid-qd16-nj1.json,H6 VM lab,,ext4/virtio,,,,
grid/grid-qd16-nj4.json,H6 VM lab,vm h6,ext4/virtio,,,,
"""
NOT_LOGS = shutil.ignore_patterns("*.expected.jsonl", "*.md")  # the golden files and notes beside the logs
# (b) as h6's 08/05 trial read it: the end_fsync runs (sync_seq_write, test_design_h6.py's) left out
NOT_LOGS_B = shutil.ignore_patterns("*.expected.jsonl", "*.md", "sync_seq_write")
POOLS = ("tank_draid_special_slog", "tank_raidz2_nospecial_noslog", "tank_raidz2_nospecial_slog")


def _ingest(raw, manifest: str | None):
    from storagelab.store import ingest

    if manifest is not None:
        (raw / "manifest.csv").write_text(manifest, encoding="utf-8")
    dest = raw.parent / "h6.duckdb"
    kw = {"manifest_path": raw / "manifest.csv"} if manifest is not None else {}
    s = ingest([raw], db_path=dest, parquet_dir=False, progress=False, workers=1, **kw)
    assert s.failed == 0, s.errors
    return dest


@pytest.fixture(scope="module")
def db_a(tmp_path_factory):
    raw = tmp_path_factory.mktemp("h6a") / "raw"
    shutil.copytree(SRC / "a", raw, ignore=NOT_LOGS)
    return _ingest(raw, MANIFEST_A)


@pytest.fixture(scope="module")
def db_b(tmp_path_factory):
    raw = tmp_path_factory.mktemp("h6b") / "raw"
    shutil.copytree(SRC / "b", raw, ignore=NOT_LOGS_B)
    return _ingest(raw, None)


@pytest.fixture(scope="module")
def res_b(db_b):
    with open_db(db_b) as con:
        return fio_views.analyse(con, Selection(study="(unlabelled)"), steady_rounds=6, slope_pct=5, knee_gain_pct=5)


def test_file_names_take_as_many_folders_as_tell_files_apart():
    names = fio_runs.file_names(
        ["/x/tank_a/srw/sync_rand_write.log", "/x/tank_b/srw/sync_rand_write.log", "/x/tank_b/lr/large_read.log"]
    )
    assert names == {
        "/x/tank_a/srw/sync_rand_write.log": "tank_a/srw/sync_rand_write.log",
        "/x/tank_b/srw/sync_rand_write.log": "tank_b/srw/sync_rand_write.log",
        "/x/tank_b/lr/large_read.log": "large_read.log",
    }


def test_08_never_pools_same_named_files_of_three_pools_as_repeats(res_b):
    """F9: the three sync_rand_write.log (three pools) had been '3 runs ... mean of 3 runs', the SLOG and no-SLOG
    slog_punisher.log 'mean of 2 runs' with a confidence interval. Each file is now a setup of its own, named by
    its pool's folder; the pair is compared as two setups with no test (no repeats)."""
    text = "\n".join(res_b.findings)
    assert "mean of 3 runs" not in text and "mean of 2 runs" not in text and "2 runs of" not in text
    for pool in POOLS:
        assert f"on file {pool}/sync_rand_write/sync_rand_write.log (host not labelled): one run" in text
    pair = [f for f in res_b.findings if " write at QD 1 x 8: " in f]
    assert len(pair) == 1
    # one histogram per run (had been one per file name: '5 from fio's printed distribution' for 10 runs)
    assert (
        res_b.findings.count(
            "Latency histograms (share of each run's I/Os per latency bucket): 6 from fio's printed distribution (its own "
            "buckets, all directions together)."
        )
        == 1
    )
    slog, noslog = (f"file tank_raidz2_nospecial_{p}/slog_punisher/slog_punisher.log" for p in ("slog", "noslog"))
    expected = (
        f"{slog} (host not labelled) (1 run(s), mean 74.5 MiB/s (78.1 MB/s)) measured 8.5 % more than {noslog} (host not "
        "labelled) (1 run(s), mean 68.6 MiB/s (72.0 MB/s)), arithmetic on the means only; no faster/slower verdict: no side has repeated runs"
    )
    assert pair[0].split(" write at QD 1 x 8: ")[1].startswith(expected)


def test_05_never_pools_same_named_files_and_says_how_repeats_are_grouped(db_b):
    with open_db(db_b) as con:
        res = stacks.analyse(con, Selection(study="(unlabelled)"), direction="write", min_elapsed_s=10)
    text = "\n".join(res.findings)
    assert "repeated runs" not in text  # had been 'slog_punisher.log: 2 repeated runs, mean 71.6 MiB/s'
    assert (
        "fastest configuration with no flag tank_raidz2_nospecial_slog/slog_punisher/slog_punisher.log at 74.5 MiB/s (78.1 "
        "MB/s), slowest tank_raidz2_nospecial_noslog/slog_punisher/slog_punisher.log at 68.6 MiB/s (72.0 MB/s) "
        "(0.92x of it)." in text
    )
    assert (
        "Repeats are runs of one workload with one label once a 'run N' mark is taken out (the manifest gives no other "
        "column here); 5 run(s) have no label and are named by their file (as much of its path "
        "as tells it from the others): runs appended to one file are repeats, files of one name in different folders "
        "are not. Labels in the manifest would make the grouping certain." in res.findings
    )


def test_08_a_run_of_two_regimes_is_flagged_with_both_figures_and_never_steady(res_b):
    """F12: large_read (raidz2 of 5 HDDs, 2 jobs' bw logs summed per 1-s window) runs at ~410 MiB/s but 22-30 s at
    ~2,490 MiB/s; its average 720.8 MiB/s describes neither. Had been 'steady ... at 356.8 MiB/s', unflagged."""
    (v,) = [v for v in res_b.numbers.steady if v.run.endswith("large_read/large_read_bw")]
    assert (v.state, round(v.start_s, 3), round(v.end_s, 3), v.segment_rounds, v.rounds) == (
        "two regimes",
        22,
        30,
        9,
        59,
    )
    assert (round(v.mean / 2**20, 1), round(v.rest_mean / 2**20, 1)) == (2486.0, 410.0)
    assert (
        "large_read_bw bw read: two regimes, not steady: 9 windows from 22 to 30 s at 2486.0 MiB/s (2606.7 MB/s), "
        "6.1x the other 50 windows' 410.0 MiB/s (429.9 MB/s)" in "\n".join(res_b.findings)
    )
    assert not any(f.startswith("large_read_bw bw read: steady") for f in res_b.findings)
    row = res_b["depth"].filter(pl.col("path").str.ends_with("large_read/large_read.log"))
    assert row["flag"].to_list() == [
        "⚠ two regimes: 2486.0 MiB/s (2606.7 MB/s) for 9 log windows, 410.0 MiB/s (429.9 MB/s) in the other 50"
    ]
    assert row["suspect"].to_list() == [True]
    assert round(row["bw_bytes_per_s"][0] / 2**20, 1) == 720.8
    panel = res_b["series"].filter(pl.col("name") == "large_read_bw")
    assert panel["flag"].unique().to_list() == ["⚠ two regimes"]  # in the chart panel's title too
    assert panel["phase"].value_counts().sort("phase").rows() == [("high regime", 9), ("other regime", 50)]


def test_08_draws_one_line_per_run_in_panels_named_by_folder(res_b):
    """F13: the three pools' sync_rand_write_bw logs had been one panel and one zig-zag line."""
    chart = charts.fio_time_series(res_b["series"], Selection()).to_dict()
    assert chart["spec"]["encoding"]["detail"] == [
        {"field": "run", "type": "nominal"},
        {"field": "stretch", "type": "quantitative"},
    ]
    panels = sorted({p for p in res_b["series"]["name"].unique().to_list() if p.endswith("sync_rand_write_bw")})
    assert panels == [f"{pool}/sync_rand_write/sync_rand_write_bw" for pool in POOLS]


def test_08_index_verdict_counts_runs_and_only_faster_ones(db_a):
    """F14: 'Highest bandwidth vda-long-randwrite.txt ... 10 faster run(s) are flagged' counted flagged result rows
    (the randrw run has two) of every workload, none faster than the headline in its workload; in a one-run study
    '1 faster run(s)' beside no headline run at all."""
    with open_db(db_a) as con:
        lab = fio_views.analyse(con, Selection(study="H6 VM lab"), steady_rounds=4, excursion_pct=15, knee_gain_pct=25)
        solo = fio_views.analyse(con, Selection(study="h6 solo"), excursion_pct=30)
    assert lab.verdict == (
        "Highest bandwidth vda-long-randwrite.txt at 1131.3 MiB/s (1186.2 MB/s); highest IOPS (blocks under 64 KiB): "
        "none, all 9 of its runs are flagged."
    )
    assert lab.caveats == [] or not any("faster run" in c for c in lab.caveats)
    assert solo.verdict == "Highest IOPS (blocks under 64 KiB): none, its one run is flagged."
    assert solo.headline["highest IOPS (blocks under 64 KiB)"] == "none: its one run is flagged (Test design above)"


def test_08_finds_the_unlabelled_logs_beside_a_run(db_a):
    """F15: vda/longw_*.1.log (written by vda-long-randwrite.txt, --write_bw_log=longw, no manifest row) had given
    'no fio log files ... add --write_bw_log'."""
    with open_db(db_a) as con:
        res = fio_views.analyse(con, Selection(study="H6 VM lab"), steady_rounds=4, excursion_pct=15, knee_gain_pct=25)
    assert not any(m.startswith("no fio log files") for m in res.missing)
    assert sorted(v.name + " " + v.kind for v in res.numbers.steady) == [
        "longw bw",
        "longw clat",
        "longw iops",
        "longw lat",
        "longw slat",
    ]


def test_08_names_logs_beside_a_run_that_join_no_run(tmp_path):
    raw = tmp_path / "raw"
    (raw / "vda").mkdir(parents=True)
    shutil.copy(SRC / "a" / "vda" / "vda-long-randwrite.txt", raw / "vda")
    for kind in ("bw", "iops"):  # renamed: their prefix is no job name nor write_*_log value of the output
        shutil.copy(SRC / "a" / "vda" / f"longw_{kind}.1.log", raw / "vda" / f"other_{kind}.1.log")
    db = _ingest(raw, "path,study,host\nvda/vda-long-randwrite.txt,solo,vm h6\n")
    with open_db(db) as con:
        res = fio_views.analyse(con, Selection(study="solo"))
    assert [m for m in res.missing if "log file" in m] == [
        "2 fio log file(s) sit in the folder of a selected run but are tied to no run (other_bw.1.log, "
        "other_iops.1.log): their name's prefix is neither a job name nor a write_*_log= value of the fio output "
        "beside them; give them that run's labels in the manifest, or keep the name fio gives them (NAME_bw.N.log "
        "for --write_bw_log=NAME)"
    ]


def test_05_mixed_names_the_randrw_runs_and_says_what_mixed_is(db_a):
    """F6: '-p direction mixed' had said only 'no fio mixed runs' beside a randrw 70/30 run."""
    with open_db(db_a) as con:
        res = stacks.analyse(con, Selection(study="H6 VM lab"), direction="mixed", min_elapsed_s=1.5)
    assert res.missing == [
        "no fio mixed runs for study H6 VM lab (the runs there are read, write): set the parameter direction to one "
        "of them. 'mixed' is fio's unified_rw_reporting (reads and writes reported as one row), not a randrw "
        "workload; the mixed-mode runs here are under read and write: shm-randrw70-nj2.json (rw=randrw, "
        "rwmixread=70)"
    ]


def test_08_text_bandwidth_is_marked_as_fio_printed_it(db_a):
    """F5: vda-randread-repeats.txt run 2 showed '37,055 IOPS 145.0 MiB/s': the IOPS exact (74,147 I/Os / 2.001 s),
    the MiB/s fio's rounded 'bw=145MiB/s' (74,147 x 4 KiB / 2.001 s = 144.7). The table marks the printed figure
    and a sentence says so, with the widest gap; JSON runs (exact) carry no mark."""
    with open_db(db_a) as con:
        res = fio_views.analyse(con, Selection(study="H6 VM lab"), steady_rounds=4, excursion_pct=15, knee_gain_pct=25)
    assert (
        "MiB/s marked * (4 run(s) of fio's text output) are as fio printed them, rounded to 3-4 significant digits "
        "(its group line's bw=); the IOPS beside them are exact (fio's I/O count over the run time), so the two "
        "columns can disagree by a fraction of a percent: vda-randread-repeats.txt, 37,055 IOPS x 4 KiB = 144.7 MiB/s "
        "beside the printed 145.0 MiB/s." in res.findings
    )
    lines = fio_views.depth_lines(res["depth"])
    marked = [ln.split("IOPS")[1].strip().split("  ")[0] for ln in lines if "MiB/s*" in ln]
    assert marked == ["141.0 MiB/s*", "145.0 MiB/s*", "150.0 MiB/s*", "2360.0 MiB/s*"]
    assert (
        [ln for ln in lines if ln.startswith("grid-qd1-nj1.json")][0].split("IOPS")[1].startswith("      70.8 MiB/s  ")
    )


def test_durable_runs_and_07_name_same_named_files_by_their_folders(res_b, db_b):
    """The F9 naming rule beyond 08's tables: the durable-write section and 07's fastest run had named the two
    slog_punisher.log (no SLOG: p99 8.98 ms; SLOG: 1.43 ms) and the three sync_rand_write.log by base name alone."""
    slog, noslog = (f"tank_raidz2_nospecial_{p}/slog_punisher/slog_punisher.log" for p in ("slog", "noslog"))
    durable = [str(f) for f in res_b.findings if "2 runs, durable-write p99" in str(f)]
    assert len(durable) == 1 and durable[0].split(": ", 1)[1].startswith(
        f"2 runs, durable-write p99 from 1.43 ms ({slog}) to 8.98 ms ({noslog})."
    )
    with open_db(db_b) as con:
        best, faster = explore.fastest_unflagged(con, "write", sel=Selection(study="(unlabelled)"))
    assert (best["label"], round(best["bw_mib_s"], 1), faster) == (slog, 74.5, 0)

"""`storagelab compare`: your lab runs beside a study's runs of the same workload (issue 15). fio runs for real
(Debian package fio) with the homelab study's method, beside the homelab logs in one database."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest
from conftest import RAW
from conftest import storagelab_cli as cli
from session_once import once_per_session

from storagelab.analysis import Selection, compare, open_db
from storagelab.units import MiB

needs_fio = pytest.mark.skipif(
    not shutil.which("fio"), reason="fio is not installed (Debian: apt-get install fio); ./run test installs it"
)
WORKLOAD = "write bs=1MiB iodepth=8 numjobs=8 libaio direct=1"


@pytest.fixture(scope="module")
def db(request, tmp_path_factory):
    """homelab-mergerfs ingested with one `storagelab lab fio` run beside it: built once per session (its tests ran
    on both workers, each built it: 5 s)."""
    return once_per_session(request.config, tmp_path_factory, "compare", _study_and_lab_run)


def _study_and_lab_run(tmp: Path) -> Path:
    db = tmp / "x.duckdb"
    r = cli("ingest", str(RAW / "homelab-mergerfs"), "--db", str(db), "--quiet")
    assert r.returncode == 0, r.stderr
    (tmp / "target").mkdir()
    r = cli(
        "lab",
        "fio",
        "--preset",
        "homelab-seq-write",
        "--size",
        "16M",
        "--runtime",
        "5",  # 5 s: a shorter run is flagged short, and a flagged run is compared with nothing (run_verdicts)
        "--target",
        str(tmp / "target"),
        "--out",
        str(tmp / "out"),
        "--db",
        str(db),
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return db


@pytest.mark.e2e
@needs_fio
def test_lab_runs_beside_the_study(db):
    con = open_db(db)
    res = compare.analyse(con, Selection(study="lab"), "homelab-mergerfs")
    con.close()
    table = res["beside"]
    assert table["match"].unique().to_list() == [WORKLOAD]
    mine = table.filter(pl.col("side") == "mine").row(0, named=True)
    assert (mine["runs"], mine["sizes"]) == (1, "16MiB")
    # the lab labels a target on one block device (ext4 on /dev/vda here) single 1 1: per disk is the run itself
    assert mine["label_set"].endswith("| single 1 1")
    assert mine["per_disk_bytes_per_s"] == mine["bw_mean_bytes_per_s"]
    study = {r["config"]: r for r in table.filter(pl.col("side") == "study").iter_rows(named=True)}
    # the homelab study's 13 configurations of this workload: its labels without 'run N' (the mdadm bitmap
    # settings are three configurations, not four repeats of one)
    assert len(study) == 13
    md = study["mdadm raid1 ext4 (bitmap none)"]
    assert md["label_set"] == "mdadm-raid1+ext4 | mirror 1 2" and md["runs"] == 2 and md["sizes"] == "16GiB"
    assert md["bw_mean_bytes_per_s"] == 554 * MiB and round(md["bw_sd_bytes_per_s"] / MiB, 1) == 19.8
    assert md["per_disk_bytes_per_s"] == md["bw_mean_bytes_per_s"] / 2  # one 2-way mirror: 2 disks
    assert study["ZFS mirror (0.8.4)"]["bw_mean_bytes_per_s"] == 1240 * MiB
    assert study["btrfs raid1"]["design_flags"] == ["overran", "stall"]  # 76 s against runtime=60
    v = res["verdicts"]
    # the 5 configurations whose one run is flagged (direct=1 ignored by ZFS, the stall) are tested against nothing
    assert v.height == 8
    flagged = [f for f in res.findings if "every run flagged" in f]
    assert (
        len(flagged) == 1
        and "the study's btrfs raid1 (btrfs-raid1 | mirror 1 2), 1 run(s): ⚠ overran, stall" in flagged[0]
    )
    pairs = [f for f in res.findings if f not in flagged]
    # one lab run against the two bitmap-none runs: the prediction interval for one new run; else no test
    assert sorted(v["test"].unique().to_list()) == ["none", "prediction_interval"]
    assert v.filter(pl.col("test") == "prediction_interval")["study"].to_list() == [
        "mdadm raid1 ext4 (bitmap none) (mdadm-raid1+ext4 | mirror 1 2)"
    ]
    assert v.filter(pl.col("test") == "none")["differs"].is_null().all()
    assert all("no test: one run each" in f for f in pairs if "bitmap none" not in f)
    assert all(
        "Sizes: yours 16MiB, the study's 16GiB (they differ: the smaller file may be answered by a cache)." in f
        for f in pairs
    )
    assert any("compared as measured, not per disk" in m for m in res.missing)


@pytest.mark.e2e
@needs_fio
def test_compare_command_prints_both_sides(db):
    r = cli("compare", "--study", "homelab-mergerfs", "--mine", "lab", "--db", str(db))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"{WORKLOAD} (write)"
    assert lines[1].startswith("  yours ")
    assert any(
        " mdadm-raid1+ext4 | mirror 1 2 " in x
        and " mdadm raid1 ext4 (bitmap none) " in x
        and " 2 run(s) 554.0 MiB/s (580.9 MB/s) sd 19.8 MiB/s" in x
        and "per disk 277.0 MiB/s" in x
        for x in lines
    )
    assert any(
        " btrfs raid1 " in x and x.endswith("size 16GiB  1 of 1 flagged, not tested: ⚠ overran, stall") for x in lines
    )
    r = cli("compare", "--study", "thumper-x4500", "--mine", "lab", "--db", str(db))
    assert r.returncode == 1 and "missing: no fio runs for study thumper-x4500" in r.stdout


def test_no_common_workload_names_both(seed_db):
    con = open_db(seed_db)
    with pytest.raises(ValueError, match="is the study 'homelab-mergerfs' itself"):
        compare.analyse(con, Selection(study="homelab-mergerfs"), "homelab-mergerfs")
    res = compare.analyse(con, Selection(study="homelab-mergerfs", stack="btrfs"), "homelab-mergerfs")
    con.close()
    assert res["beside"].filter(pl.col("side") == "mine")["label_set"].to_list() == ["btrfs | ? 1 1"]
    assert res["beside"].filter(pl.col("side") == "study").height == 12  # your own file is not the study's


@pytest.mark.e2e
@needs_fio
def test_notebook_08_with_compare_study_into_an_outside_folder(db, tmp_path):
    out = tmp_path / "rep"
    r = cli(
        "run",
        "08_fio",
        "-p",
        "study",
        "lab",
        "-p",
        "compare_study",
        "homelab-mergerfs",
        "-p",
        "db_path",
        str(db),
        "--output",
        str(out),
    )
    assert r.returncode == 0, r.stderr[-3000:]
    page = (out / "08_fio.html").read_text()  # rendered where the run went, with no index beside it
    assert not (tmp_path / "index.html").exists()
    assert "Beside a study" in page and "mdadm-raid1+ext4 | mirror 1 2" in page and "per disk MiB/s" in page
    # the lab run itself, with the time series of its bw/iops/lat logs (issue 15: lab output in notebook 08)
    assert "write-1m-qd8-nj8" in page
    assert [p.name for p in (out / "figures").rglob("time-series.svg")] == ["time-series.svg"]


def test_any_two_selections_side_by_side(seed_db):
    """compare_with / `compare --with`: a second selection written as key=value pairs, not only a study. A run the
    design checks flag (btrfs raid1: 76 s against runtime=60, a stall) is left out of the tests as 08 leaves it out
    (run_verdicts; h6n C2: it had been tested, marked only)."""
    con = open_db(seed_db)
    try:
        mdadm = Selection(study="homelab-mergerfs", stack="mdadm-raid1+ext4")
        res = compare.analyse(con, mdadm, Selection.parse("study=homelab-mergerfs, stack=btrfs-raid1"))
        nvme = compare.analyse(con, mdadm, Selection.parse("study=homelab-mergerfs, stack=btrfs"))
        with pytest.raises(ValueError, match="the two selections are the same"):
            compare.analyse(con, Selection(study="x"), Selection.parse("study=x"))
    finally:
        con.close()
    mine, theirs = "[study homelab-mergerfs, stack mdadm-raid1+ext4]", "[study homelab-mergerfs, stack btrfs-raid1]"
    head = "write bs=1MiB iodepth=8 numjobs=8 libaio direct=1 (write)"
    assert res.findings == [
        f"{head}: not compared or tested, every run flagged: {theirs} btrfs raid1 (btrfs-raid1 | mirror 1 2), 1 "
        "run(s): ⚠ overran, stall. A flagged run is left out of comparisons (the rule of notebooks 05, 08 and 10): its "
        "mean is shown, marked, and nothing is said of it against another run."
    ]
    assert res["verdicts"].is_empty()
    btrfs = "[study homelab-mergerfs, stack btrfs]"
    sizes = f" Sizes: {mine} 16GiB, {btrfs} 16GiB."
    single = f"{btrfs} btrfs (single NVMe) (btrfs | ? 1 1)"
    assert nvme.findings == [
        f"{head}, per disk: {mine} mdadm raid1 ext4 (bitmap chunk 128 MiB) (mdadm-raid1+ext4 | mirror 1 2) against "
        f"{single}: -81.8 % (0.18x); no test: one run each, so run-to-run noise is unknown.{sizes}",
        f"{head}, per disk: {mine} mdadm raid1 ext4 (bitmap internal) (mdadm-raid1+ext4 | mirror 1 2) against "
        f"{single}: -73.5 % (0.26x); no test: one run each, so run-to-run noise is unknown.{sizes}",
        # the one btrfs run against the prediction interval of the two bitmap-none runs (per disk, 277 MiB/s)
        f"{head}, per disk: {mine} mdadm raid1 ext4 (bitmap none) (mdadm-raid1+ext4 | mirror 1 2) against {single}: "
        f"-69.3 % (0.31x); tested: the one run of {btrfs} against the 95 % prediction interval for one new run from "
        f"the 2 runs of {mine} (122.9 MiB/s to 431.1 MiB/s, ±55.6 %), outside it: a difference beyond run-to-run "
        f"noise.{sizes}",
    ]
    for bad in ("host", "colour=red", "host=", "host=a,,stack=b"):
        with pytest.raises(ValueError, match="key=value pairs separated by commas, keys study, stack, vdev_type, host"):
            Selection.parse(bad)
    assert Selection.parse("host=nas2,stack=zfs") == Selection(host="nas2", stack="zfs")


def test_compare_command_with_a_selection(seed_db):
    r = cli(
        "compare", "--mine", "homelab-mergerfs", "--stack", "mdadm-raid1+ext4", "--with",
        "study=homelab-mergerfs,stack=btrfs-raid1", "--db", str(seed_db),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == "write bs=1MiB iodepth=8 numjobs=8 libaio direct=1 (write)"
    # the other side's whole selection, never cut (new-user-2: "study=myfleet,host=v")
    assert any(ln.startswith("  study=homelab-mergerfs,stack=btrfs-raid1 ") for ln in r.stdout.splitlines())
    r = cli("compare", "--mine", "lab", "--db", str(seed_db))
    assert r.returncode == 2 and "--study NAME or --with KEY=VALUE" in r.stderr
    r = cli("compare", "--mine", "lab", "--with", "colour=red", "--db", str(seed_db))
    assert r.returncode == 2 and "key=value pairs" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.e2e
def test_notebook_08_with_compare_with(seed_db, tmp_path):
    out = tmp_path / "rep"
    r = cli(
        "run", "08_fio", "-p", "study", "homelab-mergerfs", "-p", "stack", "mdadm-raid1+ext4",
        "-p", "compare_with", "study=homelab-mergerfs,stack=btrfs-raid1", "-p", "db_path", str(seed_db),
        "--output", str(out),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    page = " ".join((out / "08_fio.html").read_text().split())
    assert "Beside a study or another selection" in page
    assert (
        "(write): not compared or tested, every run flagged: [study homelab-mergerfs, stack btrfs-raid1] btrfs raid1 "
        "(btrfs-raid1 | mirror 1 2), 1 run(s): ⚠ overran, stall." in page
    )

"""Test-design checks and the one run bandwidth, on the real logs that showed each defect: the homelab btrfs raid1
run that ran 76 s against runtime=60 (analyses-2 N7), a fio 3.33 run of two jobs without group_reporting
(new-user-2 defect 2), a sub-second buffered write of a 32 MiB file, and the lab's 2 s runs."""

import shutil

import polars as pl
import pytest
from conftest import FIXTURES, analyse_study

from storagelab.analysis import design, fio_runs, open_db
from storagelab.units import GiB, MiB

LAB = FIXTURES / "fio" / "3.33" / "lab-design"


@pytest.fixture(scope="module")
def lab_db(tmp_path_factory):
    """The lab-design runs and two of the lab's 2 s runs, labelled with this machine's RAM (25,276,510,208 B)."""
    from storagelab.store import ingest

    root = tmp_path_factory.mktemp("labdesign")
    raw = root / "raw" / "designlab"
    raw.mkdir(parents=True)
    rows = ["path,study,label,stack,ram_bytes"]
    for name in ("two_jobs_nogroup.txt", "two_jobs_nogroup_json.txt", "buffered_32m.txt"):
        shutil.copyfile(LAB / name, raw / name)
        rows.append(f"designlab/{name},designlab,{name[:-4]},ext4,25276510208")
    for name in ("randread-4k-qd1-nj1.txt", "randread-4k-qd16-nj1.txt"):
        shutil.copyfile(FIXTURES / "fio" / "3.33" / "lab-psync" / name, raw / name)
        rows.append(f"designlab/{name},designlab,{name[:-4]},ext4,")
    (root / "raw" / "manifest.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    db = root / "lab.duckdb"
    summary = ingest([root / "raw"], db_path=db, manifest_path=root / "raw" / "manifest.csv", parquet_dir=False)
    assert summary.failed == 0, summary.errors
    return db


def _runs(db, study):
    return analyse_study(db, lambda con, sel: design.with_design(fio_runs.runs(con, sel)), study)


def test_two_jobs_without_group_reporting_are_one_run_at_fios_group_figure(lab_db):
    df = _runs(lab_db, "designlab").filter(pl.col("label").str.starts_with("two_jobs"))
    both = {r["label"]: r for r in df.iter_rows(named=True)}
    assert df.height == 2  # one run per file, not one per job
    r = both["two_jobs_nogroup"]
    # fio's own group line in the same file: "WRITE: bw=941MiB/s ... io=256MiB (268MB), run=131-272msec"
    assert r["io_bytes"] == 256 * MiB and r["elapsed_ns"] == 272e6
    assert r["bw_bytes_per_s"] == 268435456 * 1000 // 272 and round(r["bw_bytes_per_s"] / MiB) == 941
    assert fio_runs.run_bandwidth(r["io_bytes"], r["elapsed_ns"]) == pytest.approx(r["bw_bytes_per_s"], rel=1e-9)
    assert r["ios"] == 256 and round(r["iops"], 1) == 941.2
    # the jobs' rates (977 + 471 MiB/s) added are not the run's bandwidth
    j = both["two_jobs_nogroup_json"]
    assert j["elapsed_ns"] == 119e6 and round(j["bw_bytes_per_s"] / MiB, 1) == 2151.3
    con = open_db(lab_db)
    try:
        added = con.execute(
            "SELECT sum(r.bw_bytes_per_s) FROM fio_results r JOIN files f USING (file_id) "
            "WHERE f.label = 'two_jobs_nogroup_json'"
        ).fetchone()[0]
    finally:
        con.close()
    assert round(added / MiB, 1) == 2330.5 and added > j["bw_bytes_per_s"]


def test_run_bandwidth_definition():
    assert fio_runs.run_bandwidth(256 * MiB, 0.196e9) / MiB == pytest.approx(1306.12, abs=0.01)  # new-user-2
    assert fio_runs.run_bandwidth(None, 1e9) is None and fio_runs.run_bandwidth(1, 0) is None
    assert fio_runs.run_iops(33328, 76061e6) == pytest.approx(438.18, abs=0.01)


def test_the_homelab_76_s_run_is_a_stall(seed_db):
    df = _runs(seed_db, "homelab-mergerfs")
    r = df.filter(pl.col("label") == "btrfs raid1").row(0, named=True)
    f = design.flags_of(r)
    assert f.elapsed_s == 76.061 and f.runtime_s == 60 and f.slowest_io_s == 44.735
    assert f.overran and f.long_io and not f.too_short
    assert round(f.overrun_ratio, 2) == 1.27 and round(f.slowest_io_share, 3) == 0.746
    assert r["design_marker"] == "⚠ overran, stall"
    assert design.sentence("btrfs raid1", f) == (
        "btrfs raid1: ran 76,061 ms against runtime=60 s (1.27x): I/O it had issued did not complete in time "
        "(a stall); its slowest I/O took 44,735 ms (75 % of the runtime)."
    )
    # the other 60 s runs finished within 5 % of their runtime; their slowest I/O is under a tenth of it
    others = df.filter(pl.col("label") != "btrfs raid1")
    assert not others["design_overran"].any() and not others["design_long_io"].fill_null(False).any()
    assert set(df.filter(pl.col("design_direct_ignored"))["label"]) == {
        "autotier over ZFS (0.8.4)",
        "mergerfs over ZFS mirror (0.8.4)",
        "mergerfs over ZFS mirror (2.1.4)",
        "ZFS mirror (0.8.4)",
    }
    # no RAM labelled: the cache check is not made where the I/O may go through a cache (direct=1 on ZFS before
    # 2.3), and says so; direct=1 on the other filesystems bypasses the page cache: no RAM needed (False)
    unchecked = df.filter(pl.col("design_fits_in_cache").is_null())
    assert set(unchecked["label"]) == set(df.filter(pl.col("design_direct_ignored"))["label"])
    assert not df["design_fits_in_cache"].fill_null(False).any()
    assert "fits_in_cache" not in f.unknown and not f.fits_in_cache
    assert design.missing(df) == [
        "the cache check (working set against RAM) could not be made for autotier over ZFS (0.8.4) (direct=1 on ZFS "
        "0.8.4, which ignores it), mergerfs over ZFS mirror (0.8.4) (direct=1 on ZFS 0.8.4, which ignores it), "
        "mergerfs over ZFS mirror (2.1.4) (direct=1 on ZFS 2.1.4, which ignores it), ZFS mirror (0.8.4) (direct=1 "
        "on ZFS 0.8.4, which ignores it): the RAM of the machine is not in the labels. Add a ram_bytes column (bytes) "
        "to the manifest (`storagelab lab` records it; on Linux MemTotal in /proc/meminfo, in KiB, or `free -b`), or "
        "ram_bytes=N in its notes"
    ]


def test_short_and_cached_runs(lab_db):
    df = _runs(lab_db, "designlab")
    by = {r["label"]: design.flags_of(r) for r in df.iter_rows(named=True)}
    buf = by["buffered_32m"]
    assert buf.elapsed_s == 0.046 and buf.sub_second and buf.too_short
    assert buf.working_set_bytes == 32 * MiB and buf.cache_bytes == 25276510208 and buf.fits_in_cache
    assert buf.codes == ("sub-second", "cache")  # sub-second says short already
    assert design.marker(buf) == "⚠ sub-second, cache"
    assert design.sentence("buffered_32m", buf) == (
        "buffered_32m: it ran 0.046 s: sub-second, too short to measure a sustained rate; its working set of "
        "32.0 MiB fits in the 23.54 GiB of RAM (+ L2ARC) that can cache it, and its I/O goes through that cache."
    )
    # the lab's 2 s runs (runtime=2, time_based, 16 MiB files, direct=1 on ext4, RAM not labelled)
    qd1 = by["randread-4k-qd1-nj1"]
    assert qd1.elapsed_s == 2.001 and qd1.runtime_s == 2 and qd1.too_short and not qd1.sub_second
    # direct=1 on ext4 goes around the page cache: the cache check needs no RAM (False, not None)
    assert not qd1.overran and qd1.fits_in_cache is False and qd1.codes == ("short",)
    # a threshold is a parameter: at 1 s the 2 s runs pass
    loose = analyse_study(
        lab_db, lambda con, sel: design.with_design(fio_runs.runs(con, sel), min_elapsed_s=1.0), "designlab"
    )
    assert not loose.filter(pl.col("label") == "randread-4k-qd1-nj1")["design_flagged"][0]


def test_direct_on_zfs_before_2_3_bypasses_nothing():
    from storagelab.analysis import plausibility

    assert plausibility.direct_ignored("1", "mergerfs+zfs", "0.8.4") is True
    assert plausibility.direct_ignored("1", "zfs", "2.3.0") is False
    assert plausibility.direct_ignored("1", "zfs", None) is None
    assert plausibility.direct_ignored("1", None, None) is None
    assert plausibility.direct_ignored("0", "zfs", "0.8.4") is False
    assert plausibility.direct_ignored("1", "ext4", None) is False
    # direct=1 on ZFS 0.8 with a file that fits the RAM is cached; on ext4 it is not
    row = dict(wl_size=str(1 * GiB), wl_direct="1", ram_bytes=8 * GiB, elapsed_ns=60e9, wl_runtime="60")
    assert design.check({**row, "stack": "zfs", "zfs_version": "0.8.4"}).fits_in_cache is True
    assert design.check({**row, "stack": "ext4"}).fits_in_cache is False


def test_runtime_units_and_the_arc_hook():
    assert [design.seconds(v) for v in ("60", "60s", "2m", "1h", "500ms", "0", None, "abc")] == [
        60,
        60,
        120,
        3600,
        0.5,
        None,
        None,
        None,
    ]
    f = design.check(dict(elapsed_ns=30e9, wl_runtime="30", arc_hit_ratio=0.93))
    assert f.arc_served and "ARC" in f.codes
    assert design.check(dict(elapsed_ns=30e9, wl_runtime="30")).arc_served is None


def test_a_run_with_nothing_known_raises_nothing():
    f = design.check({})
    assert not f.flagged and set(f.unknown) == {"overran", "long_io", "too_short", "fits_in_cache"}
    empty = design.with_design(pl.DataFrame({"label": []}, schema={"label": pl.String}))
    assert empty.height == 0 and "design_marker" in empty.columns and "design_overran" in empty.columns


def test_a_run_without_a_runtime_limit_cannot_overrun():
    # fio's default runtime=none (a JSON job lists no runtime): it runs until its size is done
    f = design.check(dict(elapsed_ns=0.272e9, wl_runtime="none"))
    assert f.overran is False and "overran" not in f.unknown and f.sub_second
    assert design.check(dict(elapsed_ns=2e9, wl_runtime=None)).overran is None

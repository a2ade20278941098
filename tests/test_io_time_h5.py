"""The h5 new-user trial's findings on its own logs (tests/fixtures/fio/newuser-h5/COMMANDS.md; /work/h5-findings.md):
clat given as the latency where submission holds the I/O's time (A5), an unknown direct= taken as buffered (A2), a
loop device's card without a 'not a disk' flag (A6), iodepth '?' and a 'flagged' run without a flag (B3), runs of one
file named alike (L4, L5)."""

import shutil

import polars as pl
import pytest
from conftest import FIXTURES, analyse_study

from storagelab.analysis import design, disk_card, fio_depth, fio_views, io_time, stacks

H5 = FIXTURES / "fio" / "newuser-h5"
RAM = 25276510208  # the trial VM's RAM, as its manifests label it
OLD_NOTES = (  # the h5 lab's notes (before the lab recorded what backs a loop device)
    "kernel=6.18.44-fc-v657; cpu=AMD EPYC x 2; fio_version=3.33; fstype=btrfs; /dev/loop0: rotational=0 "
    "logical_sector_bytes=512 physical_sector_bytes=512 transport=None driver=None firmware=None device_class=unknown"
)
NOT_A_DISK = (
    "not a disk: loop device loop0, backed by /dev/shm/h9/l.img on tmpfs (RAM): these figures measure what backs it "
    "through the kernel's block layer, not a device of its own (run on the disk itself to measure one)"
)
NEW_NOTES = (  # the lab's notes of the loop-h9 runs, as it wrote them
    "kernel=6.18.44-fc-v657; cpu=AMD EPYC x 2; fio_version=3.33; fstype=btrfs; /dev/loop0: rotational=0 "
    "logical_sector_bytes=512 physical_sector_bytes=512 transport=None driver=None firmware=None device_class=stacked "
    f"backing=/dev/shm/h9/l.img backing_fstype=tmpfs; sanity: {NOT_A_DISK}"
)
LAB = "vm,btrfs,single,1,1,/dev/loop0 (unknown model)"
KESTREL = "kestrel,btrfs-raid1,mirror,1,2,/dev/loop0 /dev/loop1 (tmpfs-backed)"
AFTER = "kestrel,btrfs-single,single,1,1,/dev/loop0 (tmpfs-backed)"
# path, study, label, host, stack, vdev_type, vdev_count, vdev_width, devices, ram_bytes, notes
ROWS = (
    *(
        (f"lab/{r}.txt", "lab", r, LAB, RAM, OLD_NOTES)
        for r in ("randwrite-4k-qd1-nj1", "write-1m-qd1-nj1", "randwrite-4k-qd32-nj1")
    ),
    *((f"loop-h9/{r}.txt", "loop", r, LAB, RAM, NEW_NOTES) for r in ("randwrite-4k-qd1-nj1", "write-1m-qd1-nj1")),
    *((f"kestrel/btr-grid-{q}.txt", "H5", "", KESTREL, RAM, "") for q in ("qd1-nj1", "qd8-nj1", "qd8-nj2")),
    ("kestrel/btr-after-qd8-repeats.txt", "H5", "", AFTER, RAM, ""),
    ("b/rawstor-perftest-4k-2-1.txt", "b", "", ",,,,,", "", ""),
    ("here/buffered-libaio-latpct.json", "here", "", ",,,,,", "", ""),
)


@pytest.fixture(scope="module")
def h5_db(tmp_path_factory):
    from storagelab.store import ingest

    root = tmp_path_factory.mktemp("h5")
    raw = root / "raw"
    shutil.copytree(H5, raw, ignore=shutil.ignore_patterns("*.jsonl", "*.md"))  # the logs, not their goldens
    header = "path,study,label,host,stack,vdev_type,vdev_count,vdev_width,devices,ram_bytes,notes"
    rows = [f'{path},{study},{label},{setup},{ram},"{notes}"' for path, study, label, setup, ram, notes in ROWS]
    (raw / "manifest.csv").write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    db = root / "h5.duckdb"
    summary = ingest([raw], db_path=db, manifest_path=raw / "manifest.csv", parquet_dir=False, progress=False)
    assert summary.failed == 0, summary.errors
    return db


SUBMISSION_4K = (
    "submission holds the I/O's time (slat mean 213 us against clat mean 0.649 us, lat mean 214 us; QD 1 x 1 / "
    "4,665 IOPS = 214 us per I/O): its latency is lat, mean 214 us; fio printed no lat percentiles "
    "(--lat_percentiles=1 gives them); its clat p99 4.45 us is not the I/O's latency"
)


def test_08_gives_lat_where_submission_holds_the_time(h5_db):
    """A5: btrfs on a loop device, libaio, QD 1: slat mean 213,267 ns, clat mean 649 ns, lat mean 213,915 ns at
    4,665 IOPS (1 / 4,665 s = 214 us per I/O). 08 had printed clat's 'p50/p99/p99.9 0.000 / 0.004 / 0.010 ms'; now
    lat's mean, and why. At QD 32 the I/Os wait in completion (clat mean 5.03 ms > slat 0.16 ms): clat stands."""
    res = analyse_study(h5_db, fio_views.analyse, "lab")
    assert f"randwrite-4k-qd1-nj1 write: {SUBMISSION_4K}." in res.findings
    assert any(
        s.startswith("write-1m-qd1-nj1 write: submission holds the I/O's time (slat mean 8.31 ms") for s in res.findings
    )
    lines = {ln[:20].strip(): ln for ln in fio_depth.depth_lines(res["depth"])}
    assert lines["randwrite-4k-qd1-nj1"] == (
        "randwrite-4k-qd1-nj1                 write QD 1 x 1:      4,665 IOPS      18.2 MiB/s  lat mean 0.214 ms "
        "(clat is not its time: submission holds it)  ⚠ short"
    )
    assert lines["randwrite-4k-qd32-nj"].endswith("p50/p99/p99.9 3.457 / 20.316 / 56.361 ms  ⚠ short")
    depth = res["depth"].filter(pl.col("label") == "randwrite-4k-qd1-nj1")
    assert depth["p99_ns"].to_list() == [None] and depth["pct_kind"].to_list() == ["lat mean"]
    # its clat histogram (near-zero latencies) is left out; fio wrote no lat bins (no lat_percentiles=1)
    hist = res.frames["histogram"].select("label", "source").unique().sort("label").rows()
    assert hist == [("randwrite-4k-qd32-nj1", "JSON+ clat")]
    loop = analyse_study(h5_db, fio_views.analyse, "loop")  # lat_percentiles=1: fio's JSON+ lat bins
    assert loop.frames["histogram"].select("label", "source").unique().sort("label").rows() == [
        ("randwrite-4k-qd1-nj1", "JSON+ lat"),
        ("write-1m-qd1-nj1", "JSON+ lat"),
    ]


def test_the_card_flags_clat_and_gives_lat(h5_db):
    """A5 on the card: 'RND4K Q1T1 write: 19.1 MB/s, 4,665 IOPS, p99 0.00445 ms' was clat; A6: the loop device is
    flagged from its devices label though the old lab notes do not say what backs it."""
    res, cards = analyse_study(h5_db, disk_card.analyse, "lab")
    assert disk_card.card_lines(cards) == [
        "vm | /dev/loop0 (unknown model) | btrfs",
        "  SEQ1M Q8T1 read: not run",
        "  SEQ1M Q8T1 write: not run",
        "  SEQ1M Q1T1 read: not run",
        "  SEQ1M Q1T1 write: 125 MB/s, lat mean 8.31 ms, no p99, n=1, FLAGGED",
        "  RND4K Q32T1 read: not run",
        "  RND4K Q32T1 write: 25.2 MB/s, 6,145 IOPS, p99 20.3 ms, n=1, FLAGGED",
        "  RND4K Q1T1 read: not run",
        "  RND4K Q1T1 write: 19.1 MB/s, 4,665 IOPS, lat mean 0.214 ms, no p99, n=1, FLAGGED",
    ]
    rnd = cards[0].results[("RND4K Q1T1", "write")]
    assert rnd.latency == "lat mean" and rnd.lat_mean_ns == pytest.approx(213915.137975)
    assert rnd.latency_reasons == (SUBMISSION_4K,)
    assert f"RND4K Q1T1 write on vm, /dev/loop0 (unknown model) | btrfs: {SUBMISSION_4K}." in res.findings
    items = disk_card.flag_items(cards[0])
    assert items[0] == (
        "SEQ1M Q1T1 write, RND4K Q32T1 write, RND4K Q1T1 write: not a disk: loop device loop0 (what backs it is not "
        "recorded): these figures measure what backs it through the kernel's block layer, not a device of its own "
        "(run on the disk itself to measure one)"
    )
    # L4: each flag once, naming its results (it was 'it ran 2 s ...' beside 'it ran 2.02 s ...', unnamed)
    assert items[1] == "SEQ1M Q1T1 write: it ran 2.02 s, under 5 s: too short to measure a sustained rate"
    assert (
        items[3] == "RND4K Q32T1 write, RND4K Q1T1 write: it ran 2 s, under 5 s: too short to measure a sustained rate"
    )
    assert items[4] == f"RND4K Q1T1 write: {SUBMISSION_4K}" and len(items) == 5


def test_lab_lat_percentiles_on_a_real_loop_device(h5_db):
    """The lab's --lat_percentiles=1 (fio 3.33) on btrfs over a tmpfs-backed loop device made here: the card gives
    lat's p99 (2,342,912 ns) and the lab's own 'not a disk' flag with the backing file (A6)."""
    res, cards = analyse_study(h5_db, disk_card.analyse, "loop")
    lines = disk_card.card_lines(cards)
    assert lines[4] == "  SEQ1M Q1T1 write: 266 MB/s, lat p99 20.3 ms, n=1, FLAGGED"
    assert lines[8] == "  RND4K Q1T1 write: 34.5 MB/s, 8,419 IOPS, lat p99 2.34 ms, n=1, FLAGGED"
    assert cards[0].system["class"] == "stacked"
    assert disk_card.flag_items(cards[0])[0] == f"SEQ1M Q1T1 write, RND4K Q1T1 write: {NOT_A_DISK}"
    assert cards[0].results[("RND4K Q1T1", "write")].latency_reasons == (
        "submission holds the I/O's time (slat mean 118 us against clat mean 0.57 us, lat mean 118 us; QD 1 x 1 / "
        "8,419 IOPS = 119 us per I/O): its latency is lat, whose percentiles fio printed",
    )


def test_buffered_libaio_writes_take_lat_percentiles(h5_db):
    """Buffered libaio writes on ext4 (io_submit copies into the page cache): slat mean 13,167 ns > clat mean
    3,013 ns; fio printed lat's percentiles (lat_percentiles=1): p50/p99/p99.9 2,008/3,280/27,776 ns, not clat's
    (p99 462 ns)."""
    from storagelab.analysis import open_db

    con = open_db(h5_db)
    try:
        ids = con.sql("SELECT file_id FROM files WHERE study = 'here'").fetchall()
        s = fio_depth.per_run(fio_depth.load_summary(con, [i for (i,) in ids]))
    finally:
        con.close()
    row = s.row(0, named=True)
    assert (row["pct_kind"], row["p50_ns"], row["p99_ns"], row["p99_9_ns"]) == ("lat", 2008.0, 3280.0, 27776.0)


def test_littles_law_alone_contradicts_a_clat_p99():
    """Where an output has no slat or lat mean (terse, or disable_slat), QD x jobs / IOPS still tells: the h5 run's
    clat p99 of 4,448 ns against 214 us per I/O."""
    row = dict(clat_mean_ns=648.530798, clat_p99_ns=4448.0, iops=4665.167416, iodepth=1, numjobs=1)
    got = io_time.choose(row)
    assert (
        got.kind == "lat mean"
        and got.p99_ns is None
        and got.reason
        == (
            "its clat p99 4.45 us is under half the time each I/O took (QD 1 x 1 / 4,665 IOPS = 214 us per I/O): its "
            "latency is lat, mean not printed; fio printed no lat percentiles (--lat_percentiles=1 gives them); its clat "
            "p99 4.45 us is not the I/O's latency"
        )
    )
    assert io_time.choose(row, paced=True).kind == "clat"  # rate= / thinktime=: I/Os out of flight on purpose


MAYBE_CACHED = (
    "the page cache may or may not have served btr-after-qd8-repeats.txt (3 runs, 16.0 MiB in 23.54 GiB of RAM + "
    "L2ARC), "
    "btr-grid-qd1-nj1.txt (16.0 MiB in 23.54 GiB of RAM + L2ARC), btr-grid-qd8-nj1.txt (16.0 MiB in 23.54 GiB of "
    "RAM + L2ARC): the working set fits in the RAM, but direct= is not in the output (fio's normal text does not "
    "print it), so whether the I/O went through the page cache is not known. Put fio's command line (with "
    "--direct=) in the manifest's command column, or save fio's output as JSON (its job options list direct)"
)


def test_an_unknown_direct_is_not_taken_as_buffered(h5_db):
    """A2: the grid runs were direct=1 (runs.sh) but fio's normal text does not print direct: 08 said 'its I/O goes
    through that cache'. Now the check is not made, and 08 says what is missing; the qd8-nj2 run without a 'Laying
    out IO file' line (size=?) is said to be maybe the same workload."""
    df = analyse_study(h5_db, lambda con, sel: design.with_design(fio_views.fio_runs.runs(con, sel)), "H5")
    assert df["design_fits_in_cache"].to_list() == [None] * df.height
    res = analyse_study(h5_db, fio_views.analyse, "H5")
    assert not any("goes through that cache" in s for s in res.findings)
    maybe = [s for s in res.missing if s.startswith("the page cache may or may not")]
    assert maybe == [MAYBE_CACHED]
    # 05 gives the same verdict in the same words (design.direct_unknown_sentence), for its direction's runs
    res5 = analyse_study(h5_db, stacks.analyse, "H5", direction="read")
    assert [s for s in res5.missing if s.startswith("the page cache may or may not")] == [MAYBE_CACHED]
    assert (
        "On kestrel | btrfs-raid1 | mirror 1x2 | /dev/loop0 /dev/loop1 (tmpfs-backed): its 2 run(s) of `randread "
        "bs=4KiB libaio direct=? size=16MiB runtime=?` and 1 of `randread bs=4KiB libaio direct=? size=? runtime=?` "
        "share every label and differ only in size, which fio did not print for one of them: they may be one workload "
        "cut in two, and are kept apart (two depth curves, two knees; a mean never joins them). Put fio's command line "
        "in the manifest's command column (or save fio's output as JSON) to tell"
    ) in res.missing


def test_runs_of_one_file_are_named_apart(h5_db):
    """L4/L5: btr-after-qd8-repeats.txt holds 3 runs: 'it ran 2 s ...' per run, named by its place in the file, and
    '4 flagged run(s) left out (btr-after-qd8-repeats.txt, btr-grid-qd8-nj1.txt)' names 4 runs now."""
    res = analyse_study(h5_db, fio_views.analyse, "H5")
    for i in (1, 2, 3):
        assert (
            f"btr-after-qd8-repeats.txt (run {i} of 3): it ran 2 s, under 5 s: too short to measure a sustained rate."
        ) in res.findings
    assert any(
        s.endswith("4 flagged run(s) left out (btr-after-qd8-repeats.txt (3 runs), btr-grid-qd8-nj1.txt).")
        for s in res.findings
    )


def test_iodepth_from_the_latency_target_line(h5_db):
    """B3: rawstor's output starts at its job line (no preamble with iodepth=): 'latency : target=0, window=0,
    percentile=100.00%, depth=2' gives iodepth 2; the knee line no longer counts the run as flagged; its bs, not
    printed, is given as arithmetic (bandwidth / IOPS) and kept '?'."""
    res = analyse_study(h5_db, fio_views.analyse, "b")
    depth = res["depth"]
    assert depth.select("jobname", "iodepth", "flag").rows() == [("randread", 2, None), ("randwrite", 2, None)]
    assert not [s for s in res.findings if s.startswith("Saturation knee")]  # one depth each, none left out
    assert [s for s in res.missing if "block size" in s] == [
        f"rawstor-perftest-4k-2-1.txt (job {job}: its block size is not in its output; its bandwidth over its IOPS "
        f"is {bs} ({rate} / {iops} IOPS): arithmetic on fio's rounded figures, not a setting it printed, so the run "
        "keeps bs=?. Put fio's command line in the manifest's command column"
        for job, bs, rate, iops in (
            ("randread) read", "4,095 B", "35.0 MiB/s (36.7 MB/s)", "8,962"),  # 36,700,160 B/s / 8,962.1 IOPS
            ("randwrite) write", "4,096 B", "9.5 MiB/s (9.9 MB/s)", "2,424"),  # 9,928,704 B/s / 2,423.96 IOPS
        )
    ]

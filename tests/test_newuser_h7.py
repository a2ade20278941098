"""Notebooks 08 and 10 on the h7 new-user trial's data (/work/h7-trial-findings.md T1-T5; files in
tests/fixtures/fio/newuser-h7, sources and commands in its COMMANDS.md): fio 3.33 on ext4 and btrfs raid10 on loop
devices, labelled as h7 labelled them (manifest rows below, verbatim from /tmp/h7ds/a/manifest.csv)."""

from __future__ import annotations

import shutil

import polars as pl
import pytest
from conftest import FIXTURES

from storagelab.analysis import Selection, fio_views, open_db

SRC = FIXTURES / "fio" / "newuser-h7"
# h7's manifest rows for the files copied (/tmp/h7ds/a/manifest.csv), verbatim
MANIFEST = """path,study,label,host,os,stack,vdev_type,vdev_count,vdev_width,devices,ram_bytes,phase,notes
ext4/seqwrite-buffered-256M.txt,h7 homelab,ext4 buffered 256M,h7lab,Debian 12,ext4,single,1,1,loop0 (/dev/shm file),25276510208,,
long/randwrite-60s.json,h7 homelab,ext4 60 s «long»,h7lab,Debian 12,ext4,single,1,1,loop0 (/dev/shm file),25276510208,,
long/long60_bw.1.log,h7 homelab,ext4 60 s «long»,h7lab,Debian 12,ext4,single,1,1,loop0 (/dev/shm file),25276510208,,
long/long60_iops.1.log,h7 homelab,ext4 60 s «long»,h7lab,Debian 12,ext4,single,1,1,loop0 (/dev/shm file),25276510208,,
long/long60_lat.1.log,h7 homelab,ext4 60 s «long»,h7lab,Debian 12,ext4,single,1,1,loop0 (/dev/shm file),25276510208,,
long/long60_clat.1.log,h7 homelab,ext4 60 s «long»,h7lab,Debian 12,ext4,single,1,1,loop0 (/dev/shm file),25276510208,,
long/long60_slat.1.log,h7 homelab,ext4 60 s «long»,h7lab,Debian 12,ext4,single,1,1,loop0 (/dev/shm file),25276510208,,
phase/ext4-fdatasync-before.txt,h7 homelab,ext4 fdatasync,h7lab,Debian 12,ext4,single,1,1,loop0 (/dev/shm file),25276510208,before,barrier=1 commit=5
phase/ext4-fdatasync-after.txt,h7 homelab,ext4 fdatasync,h7lab,Debian 12,ext4,single,1,1,loop0 (/dev/shm file),25276510208,after,nobarrier commit=30
b10/grid-nj1-qd1.txt,h7 raid Ω,btrfs raid10 4 Ω,,,btrfs-raid10,raid10,1,4,4x loop (/dev/shm files),25276510208,,
b10/grid-nj1-qd8.txt,h7 raid Ω,btrfs raid10 4 Ω,,,btrfs-raid10,raid10,1,4,4x loop (/dev/shm files),25276510208,,
b10/grid-nj1-qd32.txt,h7 raid Ω,btrfs raid10 4 Ω,,,btrfs-raid10,raid10,1,4,4x loop (/dev/shm files),25276510208,,
b10/grid-nj4-qd1.txt,h7 raid Ω,btrfs raid10 4 Ω,,,btrfs-raid10,raid10,1,4,4x loop (/dev/shm files),25276510208,,
b10/grid-nj4-qd8.txt,h7 raid Ω,btrfs raid10 4 Ω,,,btrfs-raid10,raid10,1,4,4x loop (/dev/shm files),25276510208,,
b10/grid-nj4-qd32.txt,h7 raid Ω,btrfs raid10 4 Ω,,,btrfs-raid10,raid10,1,4,4x loop (/dev/shm files),25276510208,,
"""
NOT_LOGS = shutil.ignore_patterns("*.expected.jsonl", "*.md")


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    from storagelab.store import ingest

    raw = tmp_path_factory.mktemp("h7") / "raw"
    shutil.copytree(SRC, raw, ignore=NOT_LOGS)
    (raw / "manifest.csv").write_text(MANIFEST, encoding="utf-8")
    dest = raw.parent / "h7.duckdb"
    s = ingest([raw], db_path=dest, parquet_dir=False, progress=False, workers=1, manifest_path=raw / "manifest.csv")
    assert s.failed == 0, s.errors
    return dest


@pytest.fixture(scope="module")
def res_home(db):
    with open_db(db) as con:
        return fio_views.analyse(con, Selection(study="h7 homelab"))


def test_08_a_run_that_later_falls_to_a_fifth_is_not_steady_and_is_flagged_for_its_dip(res_home):
    """T1: long60 (60 s, 1-s bw windows) met both SNIA criteria in 8-12 s (436.6 MiB/s) and had been called 'steady'
    there, while it falls to 82.8 MiB/s at 24-25 s (and to 130-180 MiB/s five more times); its run was unflagged.
    SNIA PTS's steady state holds to the end: no window of this run does. Its 24-25 s windows are under a third of
    its median 364.2 MiB/s: a dip, so the run is flagged and kept out of comparisons."""
    bw = [v for v in res_home.numbers.steady if v.name == "long60" and v.kind == "bw"][0]
    assert (bw.state, bw.start_s, bw.end_s, bw.left_from_s, bw.left_to_s, bw.rounds) == (
        "not steady", 8.0, 12.0, 24.0, 25.0, 59,
    )  # fmt: skip
    assert (round(bw.mean / 2**20, 1), round(bw.left_value / 2**20, 1), round(bw.median / 2**20, 1)) == (
        436.6, 82.8, 364.2,
    )  # fmt: skip
    assert bw.dips == ((24.0, 25.0, 86769664.0),)
    assert (
        "long60 bw write: not steady: falls to 82.8 MiB/s (86.8 MB/s) at 24-25 s, outside +-20 % of the 436.6 MiB/s "
        "(457.8 MB/s) of its windows from 8 to 12 s (the first 5 that meet both criteria); no such window holds to "
        "the end of its 59 windows (SNIA PTS: the steady state lasts to the end of the run). Dips to 82.8 MiB/s (86.8 MB/s) "
        "at 24-25 s (median 364.2 MiB/s (381.9 MB/s)): a third of its median or less, and it recovers (a stall or a "
        "drop, not its start or end); the run is flagged and kept out of comparisons." in res_home.findings
    )
    assert not any(f.startswith("long60 bw write: steady") for f in res_home.findings)
    # its figures link to the log lines they come from: the 24-25 s windows and the 8-12 s windows
    (f,) = [f for f in res_home.findings if f.startswith("long60 bw write: not steady")]
    assert [(c.text, [(i["path"].rsplit("/", 1)[-1], i["line_start"], i["line_end"]) for i in c.inputs])
            for c in f.cites] == [
        ("82.8 MiB/s (86.8 MB/s)", [("long60_bw.1.log", 24, 25)]),
        ("436.6 MiB/s (457.8 MB/s)", [("long60_bw.1.log", 8, 12)]),
    ]  # fmt: skip
    iops = [v for v in res_home.numbers.steady if v.name == "long60" and v.kind == "iops"][0]
    assert (iops.state, iops.left_value, iops.dips) == ("not steady", 21184.0, ((24.0, 25.0, 21184.0),))
    row = res_home["depth"].filter(pl.col("path").str.ends_with("long/randwrite-60s.json"))
    assert row["flag"].to_list() == ["⚠ dips: 82.8 MiB/s (86.8 MB/s) at 24-25 s (median 364.2 MiB/s (381.9 MB/s))"]
    assert row["suspect"].to_list() == [True]
    panel = res_home["series"].filter(pl.col("name") == "long60")
    assert panel["flag"].unique().to_list() == ["⚠ dips"]  # in the chart panels' titles too
    # its slat log (submission latency) stays in the band of 27-31 s to the end: steady there, not at 4-8 s
    slat = [v for v in res_home.numbers.steady if v.name == "long60" and v.kind == "slat"][0]
    assert (slat.state, slat.start_s, round(slat.end_s, 3)) == ("steady", 27.0, 31.0)


def test_steady_to_end_and_dips_on_plain_series():
    """The rules on small series: a window that holds to the end; one that a later fall breaks; a low first or last
    window is no dip."""
    from storagelab.analysis import fio_timeseries as ft

    assert ft.steady_to_end([5, 10, 10, 10, 10, 10, 11, 9])[0][:2] == (1, 10.0)
    # 10 x5 meets both criteria; the 2 at index 7 is outside +-20 % of 10; no later window holds: not steady
    assert ft.steady_to_end([10, 10, 10, 10, 10, 10, 10, 2, 2, 10, 10, 10]) == (None, (7, 8, 2.0))
    assert ft.steady_to_end([10, 10.5, 11, 11.5, 12]) == (None, None)  # no window meets both criteria
    assert ft.low_dips([1, 10, 10, 3, 10, 10, 1]) == (10.0, [(3, 3, 3.0)])
    assert ft.low_dips([1, 10, 10, 10, 10, 10, 1]) == (10.0, [])


def test_10_keeps_fdatasync_buffered_and_direct_unknown_runs_off_the_card_with_the_reason(db):
    """T2/T5: the card had filed ext4-fdatasync-{before,after}.txt (buffered psync, fdatasync=1) under RND4K Q1T1
    write with write()'s page-cache p99 (0.007 ms), seqwrite-buffered-256M.txt under SEQ1M Q1T1 write (3,398 MB/s,
    then its headline), and the btrfs grid's direct-unknown runs under RND4K cells without a word. The card's cells
    are CrystalDiskMark's tests: direct I/O, no fsync/fdatasync/sync; the others are listed apart with why."""
    from storagelab.analysis import disk_card

    with open_db(db) as con:
        res, cards = disk_card.analyse(con, Selection(study="h7 homelab"))
    (card,) = cards
    assert card.results == {}
    assert disk_card.card_lines(cards) == [
        "h7lab | loop0 (/dev/shm file) | ext4",
        "  SEQ1M Q8T1 read: not run",
        "  SEQ1M Q8T1 write: not run",
        "  SEQ1M Q1T1 read: not run",
        "  SEQ1M Q1T1 write: not run as this test (1 run below)",
        "  RND4K Q32T1 read: not run",
        "  RND4K Q32T1 write: not run",
        "  RND4K Q1T1 read: not run",
        "  RND4K Q1T1 write: not run as this test (2 runs below)",
        "  not on the card: seqwrite-buffered-256M.txt (SEQ1M Q1T1 write, 3,398 MB/s): not this test: buffered "
        "(direct=0): the page cache, not the device, may have served it",
        "  not on the card: ext4-fdatasync-after.txt (RND4K Q1T1 write, 75.7 MB/s): not this test: fdatasync=1",
        "  not on the card: ext4-fdatasync-before.txt (RND4K Q1T1 write, 66.1 MB/s): not this test: fdatasync=1",
    ]
    assert res.findings[0] == (
        "**h7lab, loop0 (/dev/shm file) | ext4:** 0 of 8 results: no run of it is CrystalDiskMark's test (below)."
    )
    assert "the highest is" not in "\n".join(res.findings)
    html = disk_card.card_html(card)
    assert "0.007" not in html and "<li>ext4-fdatasync-after.txt (RND4K Q1T1 write, 75.7 MB/s): not this test" in html

    with open_db(db) as con:
        res, cards = disk_card.analyse(con, Selection(study="h7 raid Ω"))
    (card,) = cards
    assert card.results == {}
    assert [disk_card.apart_item(a) for a in card.apart] == [
        f"grid-nj1-qd{qd}.txt (RND4K Q{qd}T1 read, {mb} MB/s): direct= unknown: the card cannot say the device served "
        "it (fio's normal text does not print direct=)"
        for qd, mb in ((1, "68.2"), (32, "243"))
    ]


# the lab's manifest rows of the ten --repeat auto runs (/tmp/h7ds/a/lab/manifest.csv; command left out: the outputs'
# JSON gives every option; notes identical on every row)
LAB_NOTES = (
    "kernel=6.18.44-fc-v657; cpu=AMD EPYC x 2; fio_version=3.33; fstype=ext4; mount_options=rw,relatime; /dev/loop0: "
    "rotational=0 logical_sector_bytes=512 physical_sector_bytes=512 transport=None driver=None firmware=None "
    "device_class=stacked backing=/dev/shm/h7ext4.img backing_fstype=tmpfs; sanity: not a disk: loop device loop0, "
    "backed by /dev/shm/h7ext4.img on tmpfs (RAM): these figures measure what backs it through the kernel's block "
    "layer, not a device of its own (run on the disk itself to measure one)"
)
LAB_RUNS = ["", *(f"-{k}" for k in range(2, 11))]


@pytest.fixture(scope="module")
def db_lab(tmp_path_factory):
    import csv
    import io

    from storagelab.store import ingest

    raw = tmp_path_factory.mktemp("h7lab") / "raw"
    shutil.copytree(SRC / "lab", raw, ignore=NOT_LOGS)
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["path", "study", "label", "host", "os", "stack", "vdev_type", "vdev_count", "vdev_width", "devices"]
               + ["ram_bytes", "notes"])  # fmt: skip
    fixed = ["vm", "Debian GNU/Linux 12 (bookworm) (kernel 6.18.44-fc-v657)", "ext4", "single", "1", "1"]
    fixed += ["/dev/loop0 (unknown model)", "25276510208", LAB_NOTES]
    for s in LAB_RUNS:
        label = "randread-4k-qd1-nj1" + (f" (run {s[1:]})" if s else "")
        for f in (f"randread-4k-qd1-nj1{s}.txt", f"randread-4k-qd1-nj1{s}_bw.1.log"):
            w.writerow([f, "lab", label, *fixed])
    (raw / "manifest.csv").write_text(out.getvalue(), encoding="utf-8")
    dest = raw.parent / "lab.duckdb"
    s = ingest([raw], db_path=dest, parquet_dir=False, progress=False, workers=1, manifest_path=raw / "manifest.csv")
    assert s.failed == 0, s.errors
    return dest


def test_08_and_10_count_the_same_repeats_and_both_say_they_never_settled(db_lab):
    """T3: on the ten `lab fio --preset standard --repeat auto` runs of randread-4k-qd1-nj1 (the lab printed 'spread
    89.2 %: NOT settled at the maximum of 10 runs'), 08 had left run 4 ('two regimes') out (9 runs, 110.6 MiB/s) while
    the card kept all 10 (110.6 MB/s), and neither said the spread never settled. One rule now
    (``fio_views.left_out``): both leave out the same five runs (run 4's two regimes, four runs' dips), both count
    five, the card names each run left out and why, and both say the five's spread is not settled."""
    from storagelab.analysis import disk_card

    with open_db(db_lab) as con:
        res08 = fio_views.analyse(con, Selection(study="lab"))
        res10, (card,) = disk_card.analyse(con, Selection(study="lab"))
    left = (
        "randread-4k-qd1-nj1 (run 10), randread-4k-qd1-nj1 (run 2), randread-4k-qd1-nj1 (run 3), randread-4k-qd1-nj1 "
        "(run 4), randread-4k-qd1-nj1 (run 9)"
    )
    unsettled = (
        "Their spread is 98.9 % (sample sd / mean), above the 5 % tolerance of the lab's repeat-until-settled: not "
        "settled, so their mean is uncertain."
    )
    (rep,) = [f for f in res08.findings if " read at QD 1 x 1: 5 runs of " in f]
    assert rep.startswith(
        "`randread bs=4KiB libaio direct=1 size=1GiB runtime=5s` read at QD 1 x 1: 5 runs of vm | ext4 | single 1x1 | "
        "/dev/loop0 (unknown model): mean 106.3 MiB/s (111.5 MB/s), range 8.5 MiB/s (9.0 MB/s) to 239.7 MiB/s"
    )
    assert rep.endswith(f"{unsettled} 5 flagged run(s) left out ({left}).")
    r = card.results[("RND4K Q1T1", "read")]
    assert (r.n, round(r.bw_bytes_per_s / 1e6, 1)) == (5, 111.5)  # 08's five runs and mean (106.3 MiB/s)
    assert [run for run, _ in r.left_out] == [f"randread-4k-qd1-nj1-{k}.txt" for k in (10, 2, 3, 4, 9)]
    assert dict(r.left_out)["randread-4k-qd1-nj1-4.txt"] == (
        "⚠ two regimes: 155.8 MiB/s (163.3 MB/s) for 3 log windows, 18.8 MiB/s (19.7 MB/s) in the other 6"
    )
    assert (
        "RND4K Q1T1 read on vm, /dev/loop0 (unknown model) | ext4: 5 of its 10 runs left out of its mean, as notebooks "
        "05 and 08 leave them out of their repeats: randread-4k-qd1-nj1-10.txt (⚠ dips: 7.9 MiB/s (8.3 MB/s) at 1.5 s, 13.6 "
        "MiB/s (14.2 MB/s) at 2.5 s (median 52.3 MiB/s (54.8 MB/s))); randread-4k-qd1-nj1-2.txt (⚠ dips: 70.3 MiB/s "
        "(73.8 MB/s) at 3.5 s (median 274.2 MiB/s (287.5 MB/s))); randread-4k-qd1-nj1-3.txt (⚠ dips: 59.7 MiB/s (62.6 "
        "MB/s) at 2 s (median 198.3 MiB/s (208.0 MB/s))); randread-4k-qd1-nj1-4.txt (⚠ two regimes: 155.8 MiB/s "
        "(163.3 MB/s) for 3 log windows, 18.8 MiB/s (19.7 MB/s) in the other 6); randread-4k-qd1-nj1-9.txt (⚠ dips: "
        "0.7 MiB/s (0.8 MB/s) at 2.5 s (median 3.4 MiB/s (3.6 MB/s)))." in res10.findings
    )
    assert f"RND4K Q1T1 read on vm, /dev/loop0 (unknown model) | ext4: 5 runs counted. {unsettled}" in res10.findings


def test_08_names_a_host_less_labelled_setup_by_its_labels_and_says_which_option_cuts_its_grid(db):
    """T4: the six grid-nj{1,4}-qd{1,8,32}.txt runs (btrfs raid10, one label 'btrfs raid10 4 Ω', no host) had been
    named 'on file grid-nj1-qd1.txt (host not labelled)' in both halves of the grid, also in the one that does not
    hold that file; the split (size=48MiB where fio printed 'Laying out IO file', size=? elsewhere) was said only as
    two workloads. Now the setup is named by its labels, and the split by its setup, run counts and option."""
    with open_db(db) as con:
        res = fio_views.analyse(con, Selection(study="h7 raid Ω"))
    setup = "btrfs raid10 4 Ω | host not labelled | btrfs-raid10 | raid10 1x4 | 4x loop (/dev/shm files)"
    text = "\n".join(res.findings)
    assert "grid-nj1-qd1.txt" not in text
    assert (
        f"`randread bs=4KiB libaio direct=? size=? runtime=?` read on {setup}: runs at 8, 32, 32, 128 I/Os in flight"
        in text
    )
    assert sorted(res["depth"]["setup"].unique().to_list()) == [setup]
    assert (
        f"On {setup}: its 2 run(s) of `randread bs=4KiB libaio direct=? size=48MiB runtime=?` and 4 of `randread "
        "bs=4KiB libaio direct=? size=? runtime=?` share every label and differ only in size, which fio did not print "
        "for one of them: they may be one workload cut in two, and are kept apart (two depth curves, two knees; a mean "
        "never joins them). Put fio's command line in the manifest's command column (or save fio's output as JSON) to "
        "tell"
    ) in res.missing


@pytest.mark.e2e
def test_notebook_10_on_the_trials_runs_lists_them_off_the_card(db, tmp_path):
    """T2 end to end: notebook 10 (papermill) on the copied runs prints the card with the three runs apart and no
    page-cache p99 (0.007 ms) or buffered 3,398 MB/s headline."""
    import html
    import re
    import subprocess
    import sys

    out = tmp_path / "report"
    r = subprocess.run(
        [sys.executable, "-m", "storagelab", "run", "10_disk_card", "-p", "study", "h7 homelab", "-p", "db_path",
         str(db), "--output", str(out)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    text = html.unescape(re.sub(r"<[^>]+>", " ", (out / "10_disk_card.html").read_text(encoding="utf-8")))
    text = re.sub(r"\s+", " ", text)
    assert "RND4K Q1T1 write: not run as this test (2 runs below)" in text
    assert (
        "not on the card: ext4-fdatasync-before.txt (RND4K Q1T1 write, 66.1 MB/s): not this test: fdatasync=1" in text
    )
    assert "0.007 ms" not in text and "the highest is" not in text

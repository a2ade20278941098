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
        "the end of its 59 (SNIA PTS: the steady state lasts to the end of the run). Dips to 82.8 MiB/s (86.8 MB/s) "
        "at 24-25 s (median 364.2 MiB/s (381.9 MB/s)): a third of its median or less, and it recovers (a stall or a "
        "drop, not its start or end); the run is flagged and kept out of comparisons." in res_home.findings
    )
    assert not any(f.startswith("long60 bw write: steady") for f in res_home.findings)
    iops = [v for v in res_home.numbers.steady if v.name == "long60" and v.kind == "iops"][0]
    assert (iops.state, iops.left_value, iops.dips) == ("not steady", 21184.0, ((24.0, 25.0, 21184.0),))
    row = res_home["depth"].filter(pl.col("path").str.ends_with("long/randwrite-60s.json"))
    assert row["flag"].to_list() == ["⚠ dips: 82.8 MiB/s (86.8 MB/s) at 24-25 s (median 364.2 MiB/s (381.9 MB/s))"]
    assert row["suspect"].to_list() == [True]
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

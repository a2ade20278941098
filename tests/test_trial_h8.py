"""The s37 new-user trial's own runs (tests/fixtures/trial-h8, made as its COMMANDS.md says; findings in
/work/scratch/h8-findings.md)."""

from __future__ import annotations

import json
import shutil

from conftest import FIXTURES

from storagelab.parsers import parse_bytes

SRC = FIXTURES / "trial-h8"


def test_an_option_given_twice_is_the_last_one_as_fio_ran_it():
    """`fio --ioengine=libaio ... --ioengine=psync` lists ioengine twice in "job options"; fio ran psync (later
    options override; its clat-only latencies, slat 0, are psync's). The run's ioengine, part of its workload key,
    was stored as libaio ('duplicate JSON keys kept first value')."""
    p = parse_bytes((SRC / "ext4-buffered-read-small.json").read_bytes())[0]
    job = p.rows("fio_jobs")[0]
    assert job["ioengine"] == "psync"
    assert json.loads(job["options_json"])["ioengine"] == "psync"
    assert p.warnings == ["line 1: options given twice, kept the last value as fio does: ioengine=psync"]


def test_a_durable_write_run_on_ext4_is_not_asked_for_zfs_sync_settings(tmp_path):
    """The fsync=1 run on ext4 (stack label 'ext4-on-loop', no pool): 08 asked for `zfs get sync,logbias` output
    'labelled with the run's host and pool', settings an ext4 file system does not have. Its durable-write figures
    stay: fio's sync percentiles, p50/p99/p99.9 3392/23200/64750 us, and 381 syncs over 2.007 s."""
    from conftest import analyse_study, ingest_labelled

    from storagelab.analysis import fio_views

    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(SRC / "ext4-fsync-write.txt", raw)
    db = ingest_labelled(
        raw, "path,study,label,host,stack,devices\next4-fsync-write.txt,h8disk,fs,h8box,ext4-on-loop,loop0\n"
    )
    res = analyse_study(db, fio_views.analyse, "h8disk")
    assert not [m for m in res.missing if "zfs get" in m]
    durable = [f for f in res.findings if f.startswith("fs (`randwrite bs=4KiB ioengine=sync")]
    assert len(durable) == 1
    assert "p50/p99/p99.9 3.39/23.2/64.8 ms, max 64.9 ms; 189.8 durable writes/s (fio's count)" in durable[0]


def test_a_card_of_a_device_labelled_loop0_says_it_is_not_a_disk(tmp_path):
    """The trial's SEQ1M Q8T1 read with direct=1 on ext4 on /dev/loop0, labelled devices 'loop0' as lsblk names it:
    3,151 MB/s, the host's page cache behind the loop's backing file, not a disk. The card flagged only its short
    runtime: a loop device was recognised only when written '/dev/loop0'."""
    from conftest import analyse_study, ingest_labelled

    from storagelab.analysis import disk_card

    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(SRC / "ext4-seq1m-q8-read-r2.json", raw)
    db = ingest_labelled(
        raw, "path,study,label,host,stack,devices\next4-seq1m-q8-read-r2.json,h8disk,seq,h8box,ext4-on-loop,loop0\n"
    )
    res, cards = analyse_study(db, disk_card.analyse, "h8disk")
    assert "  SEQ1M Q8T1 read: 3,151 MB/s, p99 12 ms, n=1, FLAGGED" in disk_card.card_lines(cards)
    # the headline's highest result is a flagged one: said where it is named
    assert str(res.findings[0]).startswith(
        "**h8box, loop0 | ext4-on-loop:** 1 of 8 results; the highest is SEQ1M Q8T1 read at 3,151 MB/s (flagged: "
        "below); one run per test"
    )
    (result,) = cards[0].flagged
    assert result.flags[0] == (
        "not a disk: loop device loop0 (what backs it is not recorded): these figures measure what backs it through "
        "the kernel's block layer, not a device of its own (run on the disk itself to measure one)"
    )


def test_a_bare_stacked_device_name_is_a_whole_word_only():
    assert disk_card_names("loop0") == ["loop0"]
    assert disk_card_names("ext4 on loop12 (a file)") == ["loop12"]
    assert disk_card_names("/dev/md0, md1") == ["md0", "md1"]
    assert disk_card_names("Samsung SSD 980 (nvme0n1), dm-3") == ["dm-3"]
    assert disk_card_names("loopback0 sda md") == []


def disk_card_names(label: str) -> list[str]:
    from storagelab.analysis import disk_card

    flags = disk_card.stacked_flags({"devices": label})
    return [w.split(" device ")[1].split(" ")[0].rstrip(",") for w in flags[0].split(" and ")] if flags else []


def test_a_rate_capped_run_kept_at_depth_1_is_not_put_down_to_a_synchronous_engine(tmp_path):
    """`--ioengine=libaio --iodepth=4 --rate=20m`: fio's IO depths say 1=100 %. 08 said 'a synchronous engine such as
    psync caps the depth at 1' of a libaio run; its rate cap is what its options show."""
    from conftest import analyse_study, ingest_labelled

    from storagelab.analysis import fio_views

    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(SRC / "ext4-ratecap-write.json", raw)
    db = ingest_labelled(raw, "path,study,label\next4-ratecap-write.json,h8disk,capped\n")
    res = analyse_study(db, fio_views.analyse, "h8disk")
    assert res.findings[0] == (
        "1 job(s) set iodepth above 1, but fio kept one I/O in flight per job (its IO depths: 1=100%; under a rate "
        "cap (rate=) an I/O can finish before the next is due): they are set at their real depth, 1."
    )

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

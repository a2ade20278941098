"""The h5 new-user trial's fsync=1 pair (tests/fixtures/fio/durable-h5, sources in its COMMANDS.md), with that user's
manifest rows: 08's durable-write ranking names the labels that differ and the phase labels that pair the runs
(finding A3), and 02 asks no recordsize label of btrfs runs (L3)."""

from __future__ import annotations

import shutil

import pytest
from conftest import FIXTURES, analyse_study, ingest_labelled

from storagelab.analysis import fio_views

SRC = FIXTURES / "fio" / "durable-h5"
STUDY = "H5 btrfs/raid: pre→post"
MANIFEST = """path,study,label,host,os,stack,pool,vdev_type,vdev_count,vdev_width,devices,ram_bytes,phase
kestrel/btr-fsync1-after.json,H5 btrfs/raid: pre→post,,kestrel,,btrfs-single,,single,1,1,/dev/loop0 (tmpfs-backed),25276510208,after
kestrel/btr-fsync1.json,H5 btrfs/raid: pre→post,,kestrel,,btrfs-raid1,,mirror,1,2,/dev/loop0 /dev/loop1 (tmpfs-backed),25276510208,before
"""


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    raw = tmp_path_factory.mktemp("h5fsync") / "raw"
    (raw / "kestrel").mkdir(parents=True)
    for name in ("btr-fsync1.json", "btr-fsync1-after.json"):
        shutil.copyfile(SRC / name, raw / "kestrel" / name)
    return ingest_labelled(raw, MANIFEST)


def test_before_after_pair_names_the_labels_that_differ(db):
    res = analyse_study(db, fio_views.analyse, STUDY)
    ranking = [f for f in res.findings if "Set side by side only" in f]
    assert ranking == [
        "`write bs=4KiB ioengine=sync iodepth=1, a sync after every write`: 2 runs, durable-write p99 from 3.39 ms "
        "(btr-fsync1.json) to 23.5 ms (btr-fsync1-after.json). Set side by side only (their labels differ in stack, "
        "vdev_type, vdev_width, devices (the same host kestrel); the phase labels pair them: before "
        "btr-fsync1.json, after btr-fsync1-after.json): no ratio is stated as the effect of one change."
    ]
    assert "machine" not in ranking[0]


def test_02_does_not_ask_for_recordsize_labels_on_btrfs(db):
    """h5 L3: 02 asked to 'label each run's recordsize_bytes' for a btrfs-only study (recordsize is ZFS's)."""
    from storagelab.analysis import recordsize

    res = analyse_study(db, recordsize.analyse, STUDY)
    (line,) = [m for m in res.missing if m.startswith("no fio runs of one workload")]
    assert line == (
        "no fio runs of one workload at two recordsizes, one of them the default 128 KiB, for study H5 btrfs/raid: "
        "pre→post (its fio runs are on labelled stack(s) btrfs-raid1, btrfs-single, not ZFS): recordsize is a "
        "property of ZFS datasets"
    )

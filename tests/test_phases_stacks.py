"""Runs the manifest's phase labels pair as before/after a change (``analysis.phases``), on the h5 trial's fsync=1
pair (tests/fixtures/fio/durable-h5, sources in its COMMANDS.md): 05 pairs them by phase, never as repeats of one
configuration nor as two stacks ranked side by side; 01's baseline and 02's default run are never the mean of a
before and an after run (h5 finding A3, left open for 05, 01 and 02)."""

from __future__ import annotations

import shutil

import pytest
from conftest import FIXTURES, analyse_study, ingest_labelled

from storagelab.analysis import Selection, fio_runs, open_db, recordsize, scaling, stacks

SRC = FIXTURES / "fio" / "durable-h5"
WORKLOAD = "`write bs=4KiB iodepth=1 numjobs=1 sync direct=0 fsync=1 size=8MiB runtime=2s`"
HEAD = "path,study,label,host,stack,vdev_type,vdev_count,vdev_width,devices,ram_bytes,recordsize_bytes,phase\n"
# one label, one stack and layout on one host: only the phase tells the runs apart (a tuning the labels do not name)
ONE_STACK = HEAD + (
    "kestrel/btr-fsync1-after.json,S,fsync1,kestrel,btrfs,mirror,1,2,/dev/loop0 /dev/loop1,25276510208,131072,after\n"
    "kestrel/btr-fsync1.json,S,fsync1,kestrel,btrfs,mirror,1,2,/dev/loop0 /dev/loop1,25276510208,131072,before\n"
)
# the h5 user's own rows: raid1 before, single after, no label column values
USERS = HEAD + (
    "kestrel/btr-fsync1-after.json,S,,kestrel,btrfs-single,single,1,1,/dev/loop0 (tmpfs-backed),25276510208,,after\n"
    "kestrel/btr-fsync1.json,S,,kestrel,btrfs-raid1,mirror,1,2,/dev/loop0 /dev/loop1 (tmpfs-backed),25276510208,,before\n"
)


def _db(tmp_path_factory, manifest: str):
    raw = tmp_path_factory.mktemp("phases") / "raw"
    (raw / "kestrel").mkdir(parents=True)
    for name in ("btr-fsync1.json", "btr-fsync1-after.json"):
        shutil.copyfile(SRC / name, raw / "kestrel" / name)
    return ingest_labelled(raw, manifest)


@pytest.fixture(scope="module")
def one_stack(tmp_path_factory):
    return _db(tmp_path_factory, ONE_STACK)


@pytest.fixture(scope="module")
def users(tmp_path_factory):
    return _db(tmp_path_factory, USERS)


def _paired(res) -> list[str]:
    return [f for f in res.findings if "the phase labels pair" in f]


def test_05_pairs_one_stack_by_phase(one_stack):
    res = analyse_study(one_stack, stacks.analyse, "S", min_elapsed_s=1)
    assert _paired(res) == [
        f"{WORKLOAD}: the phase labels pair its runs as before and after a change (their labels do not say what "
        "differs between them (the same host kestrel and stack btrfs)), not as two stacks or as repeats of one: "
        "before fsync1 (before) at 10.6 MiB/s (11.2 MB/s); after fsync1 (after) at 2.0 MiB/s (2.1 MB/s) (after / "
        "before: 0.19x); one run per phase: run-to-run noise is unknown, so the change cannot be told from noise."
    ]
    ratio = [c for c in _paired(res)[0].cites if c.text == "0.19x"]
    assert [(x["path"].rsplit("/", 1)[1], x["line_start"]) for x in ratio[0].inputs] == [
        ("btr-fsync1-after.json", 66),
        ("btr-fsync1.json", 66),
    ]
    assert not any("fastest run with no flag" in f for f in res.findings)  # not ranked as two stacks
    assert "No configuration was run more than once" in " ".join(res.findings)  # not pooled as repeats
    assert res.frames["repeats"].is_empty()


def test_05_pairs_the_users_labels_and_flags(users):
    res = analyse_study(users, stacks.analyse, "S")
    assert _paired(res) == [
        f"{WORKLOAD}: the phase labels pair its runs as before and after a change (their labels differ in stack, "
        "vdev_type, vdev_width, devices (the same host kestrel)), not as two stacks or as repeats of one: before "
        "btr-fsync1.json at 10.6 MiB/s (11.2 MB/s) ⚠ short; after btr-fsync1-after.json at 2.0 MiB/s (2.1 MB/s) "
        "⚠ short. A flagged run (⚠) is set beside the other only: no ratio is stated; one run per phase: run-to-run "
        "noise is unknown, so the change cannot be told from noise."
    ]
    assert not any("all 2 runs are flagged" in f for f in res.findings)


def test_01_and_02_never_average_a_before_and_an_after_run(one_stack):
    con = open_db(one_stack)
    try:
        runs = fio_runs.runs(con, Selection(study="S"))
    finally:
        con.close()
    scaled = scaling.fio(runs).sort("phase")
    assert scaled.select("phase", "bw_bytes_per_s", "baseline", "baseline_runs").rows() == [
        ("after", 2065399.0, 2065399.0, 1),
        ("before", 11162162.0, 11162162.0, 1),
    ]
    tuned = recordsize.tuned_vs_default(runs).sort("phase")
    assert tuned.select("phase", "default_bw_bytes_per_s", "default_runs").rows() == [
        ("after", 2065399.0, 1),
        ("before", 11162162.0, 1),
    ]


def test_01_says_the_phases_are_never_one_group(one_stack):
    from storagelab.analysis import scaling

    res = analyse_study(one_stack, scaling.analyse, "S")
    assert [f for f in res.findings if f.startswith("2 fio run(s)")] == [
        "2 fio run(s) for study S, 2 labelled with vdev_type and vdev_count; 0 group(s) (same stack, vdev type and "
        "width, workload, direction, phase) hold more than one vdev count: runs labelled phase=before and "
        "phase=after are never one group (a baseline is never the mean of a before and an after run)."
    ]

"""Runs that are not alike are never compared as if they were (notebooks 05 and 08 on real published outputs the
project had not seen; fixtures/fio/published/*.md say where each comes from):

* the four reporting groups of one fio run (ceph, fio 2.16) are four targets, not four repeats;
* four concurrent jobs of one group (ceph, four disks) are four jobs of one run, not four runs;
* jobs with no rw mode and no block size (PerfKitBenchmarker's fio 2.1.4 JSON) are compared with nothing;
* runs at two depths from two machines and two fio versions (M1 / Ryzen) do not measure the depth alone.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from storagelab.analysis import Selection, fio_views, open_db, prose, stacks
from storagelab.store import ingest

PUB = Path(__file__).resolve().parent / "fixtures" / "fio" / "published"
FILES = (
    "fio-2.16-ceph-four-groups.txt",
    "fio-2.2.10-ceph-four-disks-one-group.txt",
    "fio-3.19-m1-randread-8-threads.txt",
    "fio-3.16-ryzen-randread-64-threads.txt",
    "pkb-fio-2.1.4-five-jobs.json",
)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    raw = tmp_path_factory.mktemp("raw")
    for name in FILES:
        shutil.copy(PUB / name, raw / name)
    db = raw.parent / "notalike.duckdb"
    s = ingest([raw], db_path=db, parquet_dir=False, progress=False, workers=1)
    assert (s.ingested, s.failed) == (5, 0), s.errors
    with open_db(db) as con:
        return stacks.analyse(con, Selection(), direction="read"), fio_views.analyse(con, Selection())


def test_05_labels_the_groups_of_one_run_apart_and_pools_none_as_repeats(results):
    r5, _ = results
    runs = r5["runs"]
    ceph = runs.filter(runs["path"].str.ends_with("four-groups.txt")).sort("groupid")
    assert ceph["label"].to_list() == [
        "fio-2.16-ceph-four-groups.txt (group 0: ceph-fuse-replicated)",
        "fio-2.16-ceph-four-groups.txt (group 1: ceph-fuse-erasure_1)",
        "fio-2.16-ceph-four-groups.txt (group 2: ceph-kern-replicated)",
        "fio-2.16-ceph-four-groups.txt (group 3: ceph-kern-erasure_1)",
    ]
    assert r5["repeats"].is_empty()  # had been "4 repeated runs, mean 0.7 MiB/s, spread ±45.3 %"
    assert (
        "No configuration was run more than once: run-to-run noise is unknown, so small differences between runs "
        "cannot be told from noise." in r5.findings
    )
    assert r5.findings[0] == (
        "10 fio read runs for every study, in 4 workloads and 3 of unknown workload; runs are compared only within "
        "a workload."
    )


def test_05_compares_no_run_of_unknown_workload(results):
    r5, _ = results
    assert not any("pkb-fio" in f for f in r5.findings)  # had been one '? bs=?' workload, 'fastest ... 0.01x'
    assert r5.missing[0] == (
        "3 run(s) have no rw mode or block size in their output or command (pkb-fio-2.1.4-five-jobs.json (group 1: "
        "sequential_read), pkb-fio-2.1.4-five-jobs.json (group 3: random_read_test), pkb-fio-2.1.4-five-jobs.json "
        "(group 4: random_read_test_parallel)), so they are compared with no other run: add the fio command line "
        "to the manifest column `command`"
    )
    assert r5.missing[-1].startswith(
        "the RAM of the machine is not in the logs or labels of 10 run(s) (test size not known for 10)"
    )


def test_08_counts_jobs_of_one_run_and_names_what_differs(results):
    _, r8 = results
    assert (
        "`rw bs=1MiB libaio direct=? size=? runtime=?` read: 4 jobs of 1 fio run(s), all with QD 32 x 1 jobs: "
        "IOPS 24 to 58; nothing varies the depth." in r8.findings
    )
    assert (
        "`randread bs=4KiB posixaio direct=? size=? runtime=?` read: from 8 to 64 I/Os in flight, IOPS 59,600 -> "
        "30,900 (0.52x), p99 latency 0.194 -> 4.817 ms. Not one setup: by different fio versions (fio-3.16, "
        "fio-3.19), so the depth is not the only difference." in r8.findings
    )
    unknown = [f for f in r8.findings if f.startswith("`? bs=?")]
    assert len(unknown) == 5 and all(": one run (" in f for f in unknown)  # each job alone, none pooled


def test_figure_keeps_small_intervals_visible():
    # 05 had printed '±0 MiB/s' for a 95 % interval of 0.47 MiB/s
    assert [prose.figure(x) for x in (0.4712, 3.14, 12.4, 1234.5, 0.0)] == ["0.47", "3.1", "12", "1,234", "0"]

"""Notebook 08 (fio_views.analyse) on published real outputs it had failed on: fsync sections (latency only), a
kbench JSON of twelve jobs of six workloads, four thread records printing IOPS=0 (fixtures/fio/published)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from storagelab.analysis import Selection, fio_runs, fio_views, open_db
from storagelab.store import ingest

PUB = Path(__file__).resolve().parent / "fixtures" / "fio" / "published"
FILES = {
    "fio-3.25-fsync-raidz2-slog.txt": "raidz2+slog fsync",
    "fio-3.25-fsync-raidz2-noslog.txt": "raidz2 fsync",
    "fio-3.25-four-threads-iops0.txt": "raidz2 32m randwrite",
    "kbench-fio-3.16-twelve-jobs.json": "kbench ext4",
}


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    raw = tmp_path_factory.mktemp("raw")
    for name in FILES:
        shutil.copy(PUB / name, raw / name)
    (raw / "manifest.csv").write_text(
        "path,study,label,stack\n" + "".join(f"{n},pub,{label},zfs\n" for n, label in FILES.items())
    )
    dest = raw.parent / "pub.duckdb"
    s = ingest([raw], db_path=dest, parquet_dir=False, progress=False, workers=1)
    assert (s.ingested, s.failed) == (4, 0), s.errors
    con = open_db(dest)
    try:
        res = fio_views.analyse(con, Selection(study="pub"), tolerance_pct=15)
        res.frames["runs"] = fio_runs.runs(con, Selection(study="pub"))  # notebook 05's runs, for the last test
        yield res
    finally:
        con.close()


def test_fsync_sections_are_named_not_a_crash(result):
    assert (
        "2 section(s) without IOPS or bandwidth (sync: fio prints only their latencies) are left out of IOPS "
        "against depth." in result.findings
    )
    assert result["depth"].filter(result["depth"]["direction"] == "sync").height == 0


def test_each_kbench_job_has_its_own_workload(result):
    depth = result["depth"].filter(result["depth"]["label"] == "kbench ext4")
    got = {
        (r["workload"].split(" ")[0], r["workload"].split(" ")[1], r["iodepth"], round(r["iops"]))
        for r in depth.iter_rows(named=True)
    }
    assert got == {
        ("randread", "bs=4KiB", 64, 97019),
        ("randwrite", "bs=4KiB", 64, 86845),
        ("randread", "bs=128KiB", 64, 4264),
        ("randwrite", "bs=128KiB", 64, 3894),
        ("randread", "bs=4KiB", 4, 33142),
        ("randwrite", "bs=4KiB", 4, 80982),
        ("read", "bs=4KiB", 64, 107880),
        ("write", "bs=4KiB", 64, 106069),
        ("read", "bs=128KiB", 64, 4277),
        ("write", "bs=128KiB", 64, 3996),
        ("read", "bs=4KiB", 4, 91634),
        ("write", "bs=4KiB", 4, 80341),
    }
    # 4 KiB random reads at 4 and 64 in flight: the IOPS job against the latency job, not the 128 KiB bandwidth job
    assert any(
        f.startswith(
            "`randread bs=4KiB libaio direct=1 size=10GiB runtime=20s` read: from 4 to 64 I/Os in "
            "flight, IOPS 33,142 -> 97,019 (2.93x)"
        )
        for f in result.findings
    ), result.findings


def test_four_thread_records_are_one_run_of_four_jobs_at_their_real_rate(result):
    (run,) = result["depth"].filter(result["depth"]["label"] == "raidz2 32m randwrite").iter_rows(named=True)
    assert (run["threads"], run["numjobs"], run["iodepth"]) == (4, 4, 1)
    # IOPS=0 printed four times: 72 + 74 + 74 + 73 I/Os in about 84.5 s each, summed
    assert run["iops"] == pytest.approx(72 / 84.546 + 74 / 84.547 + 74 / 84.578 + 73 / 84.578)


def test_notebook_05_counts_the_threads_fio_printed_as_numjobs(result):
    """Text output prints no numjobs option: the four thread records of one job are numjobs=4 in the workload of
    notebook 05 too (it had said numjobs=?, where 08 said 4 jobs)."""
    runs = result["runs"]
    (four,) = runs.filter(runs["label"] == "raidz2 32m randwrite").iter_rows(named=True)
    assert (four["numjobs"], four["jobs"]) == (4, 4)
    # direct, size and runtime: from the command line the transcript shows before the output (fio_commands)
    assert four["workload"] == "randwrite bs=32MiB iodepth=1 numjobs=4 posixaio direct=0 size=1GiB runtime=60s"
    assert four["workload_source"] == "command+output"
    (one,) = runs.filter(runs["label"] == "raidz2 fsync").iter_rows(named=True)
    assert one["workload"] == "write bs=4KiB iodepth=1 numjobs=1 sync direct=0 size=22MiB runtime=none"

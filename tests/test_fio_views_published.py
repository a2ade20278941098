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
    # the two fsync runs: TrueNAS pool "main" with and without its Optane SLOG (the published page's headings)
    slog = {"fio-3.25-fsync-raidz2-slog.txt": "Optane M10 16GB"}
    (raw / "manifest.csv").write_text(
        "path,study,label,stack,pool,log_devices\n"
        + "".join(f"{n},pub,{label},zfs,main,{slog.get(n, '')}\n" for n, label in FILES.items())
    )
    dest = raw.parent / "pub.duckdb"
    s = ingest([raw], db_path=dest, parquet_dir=False, progress=False, workers=1)
    assert (s.ingested, s.failed) == (4, 0), s.errors
    con = open_db(dest)
    try:
        res = fio_views.analyse(con, Selection(study="pub"))
        res.frames["runs"] = fio_runs.runs(con, Selection(study="pub"))  # notebook 05's runs, for the last test
        yield res
    finally:
        con.close()


def test_fsync_sections_are_named_not_a_crash(result):
    assert (
        "2 section(s) without IOPS or bandwidth (sync: fio prints only their latencies) are left out of IOPS "
        "against depth; the sync sections are the durable writes below." in result.findings
    )
    assert result["depth"].filter(result["depth"]["direction"] == "sync").height == 0


def test_durable_writes_are_the_sync_percentiles(result):
    """Review N1: 08 had said 'fsync raidz2 no SLOG ... 95 IOPS ... p99 0.056 ms' (write() into the page cache);
    the log's fdatasync p99 is 62 ms (0.26 ms with the SLOG), and the pair was never compared: the SLOG run's
    transcript has no command line, so it is matched by what its output shows (rw=write, bs 4k, sync engine, depth
    1, a sync section; its 1,173 ms hold 5,632 writes of 13.7 us and 5,700 syncs of 192 us: one sync per write)."""
    no_slog = (
        "raidz2 fsync (`write bs=4KiB ioengine=sync iodepth=1, a sync after every write`): latency per durable write (fio's "
        "sync percentiles) p50/p99/p99.9 9.00/62.0/209 ms, max 821 ms; 95.4 durable writes/s (writes / 1 "
        "(fdatasync=1)); its write() p99 0.0560 ms is write()'s own latency, not a durable write."
    )
    with_slog = (
        "raidz2+slog fsync (`write bs=4KiB ioengine=sync iodepth=1, a sync after every write`): latency per durable write "
        "(fio's sync percentiles) p50/p99/p99.9 0.186/0.260/0.302 ms, max 0.345 ms; 4,801.4 durable writes/s (the "
        "run's time); its write() p99 0.0232 ms is write()'s own latency, not a durable write."
    )
    assert no_slog in result.findings
    assert any(f.startswith(with_slog) for f in result.findings)
    assert (
        "`write bs=4KiB ioengine=sync iodepth=1, a sync after every write`, pool main with a SLOG against without: raidz2+slog "
        "fsync (host not labelled | zfs | layout not labelled | SLOG Optane M10 16GB) has a durable-write p99 of "
        "0.260 ms against 62.0 ms for raidz2 fsync (host not labelled | zfs | layout not labelled | no log device "
        "labelled): 238x lower, and 50.3x the durable writes per second. One run each: no run-to-run spread to judge "
        "the difference by." in result.findings
    )
    # the depth table shows the sync percentiles for these jobs, not write()'s
    fsync = result["depth"].filter(result["depth"]["label"] == "raidz2 fsync").row(0, named=True)
    assert (fsync["pct_kind"], fsync["p99_ns"], round(fsync["iops"], 2)) == ("sync", 62_000_000.0, 95.41)
    assert not any("0.056 ms" in f for f in result.findings)


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
            "`randread bs=4KiB libaio direct=1 size=10GiB runtime=20s` read on kbench ext4 | host not labelled | zfs | "
            "layout not labelled: from 4 to 64 I/Os in flight, IOPS 33,142 -> 97,019 (2.93x)"
        )
        for f in result.findings
    ), result.findings


def test_four_thread_records_are_one_run_of_four_jobs_at_their_real_rate(result):
    (run,) = result["depth"].filter(result["depth"]["label"] == "raidz2 32m randwrite").iter_rows(named=True)
    assert (run["threads"], run["numjobs"], run["iodepth"]) == (4, 4, 1)
    # IOPS=0 printed four times: 72 + 74 + 74 + 73 I/Os of the group over its elapsed time (the longest job's,
    # 84,578 ms), as fio's group line
    assert run["iops"] == pytest.approx((72 + 74 + 74 + 73) / 84.578)


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
    assert one["workload"] == "write bs=4KiB iodepth=1 numjobs=1 sync direct=0 fdatasync=1 size=22MiB runtime=none"


def test_two_layouts_are_compared_by_their_run_bandwidth_without_a_noise_they_do_not_have(tmp_path):
    """Review N2: 08 had said "single 1 1 is 692 % faster than raidz2 1 6, outside ... noise (±287 %)" from fio's
    per-sample bw avg (73,816 vs 9,325 KiB/s), while the runs' bandwidths are 61.2 and 9.1 MiB/s (+575 %); one run
    each has no run-to-run noise at all."""
    a = "k8s-homelab-zfs-optane-single-scale-fio3.25-randwrite4k.txt"
    b = "k8s-homelab-zfs-raidz2x6-noslog-scale-fio3.25-randwrite4k.txt"
    raw = tmp_path / "raw"
    raw.mkdir()
    for n in (a, b):
        shutil.copy(PUB / n, raw / n)
    (raw / "manifest.csv").write_text(
        f"path,host,stack,vdev_type,vdev_count,vdev_width\n{a},truenas,zfs,single,1,1\n{b},truenas,zfs,raidz2,1,6\n"
    )
    s = ingest([raw], db_path=tmp_path / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    assert (s.ingested, s.failed) == (2, 0), s.errors
    with open_db(tmp_path / "x.duckdb") as con:
        res = fio_views.analyse(con, Selection())
    assert (
        "`randwrite bs=4KiB posixaio direct=0 size=4GiB runtime=60s` write at QD 1 x 1: truenas | zfs | single 1x1 (1 "
        "run(s), mean 61.2 MiB/s (64.2 MB/s)) measured 574.6 % more than truenas | zfs | raidz2 1x6 (1 run(s), mean 9.1 "
        "MiB/s (9.5 MB/s)), arithmetic on the means only; no faster/slower verdict: no side has repeated runs, so run-to-run noise is unknown. Repeat the runs "
        "(`storagelab lab fio --repeat 3`) for a run-to-run estimate." in res.findings
    )
    assert not any("692" in f or "noise (±" in f for f in res.findings)
    # two layouts: two setups, no depth line or ratio across them
    assert res.numbers.curves[0].other_setups and all(len(c.levels) == 1 for c in res.numbers.curves)


def _08_on_one_published_file(name: str, tmp_path: Path):
    """08's result (fio_views.analyse) on the published file ``name`` alone, unlabelled."""
    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(PUB / name, raw / name)
    s = ingest([raw], db_path=tmp_path / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    assert (s.ingested, s.failed) == (1, 0), s.errors
    with open_db(tmp_path / "x.duckdb") as con:
        return fio_views.analyse(con, Selection())


def test_runs_appended_to_one_file_are_repeats(tmp_path):
    """fio-2.2.10-five-runs-appended.txt: one job run five times, appended to one log. They are five repeats (as
    `storagelab compare` counts them): 08 had ignored them and advised `--repeat 3`. Their bandwidths give the
    interval (t(0.975, 4) = 2.776: CI = 2.776 sd / sqrt(5), PI = 2.776 sd sqrt(1 + 1/5))."""
    import math

    res = _08_on_one_published_file("fio-2.2.10-five-runs-appended.txt", tmp_path)
    bw = res["depth"]["bw_bytes_per_s"].to_list()
    assert len(bw) == 5 and res["depth"]["doc_index"].n_unique() == 5
    mean = sum(bw) / 5
    sd = math.sqrt(sum((x - mean) ** 2 for x in bw) / 4)
    ci, pi = 2.776 * sd / math.sqrt(5) / mean * 100, 2.776 * sd * math.sqrt(1.2) / mean * 100
    assert (round(ci, 1), round(pi, 1)) == (13.2, 32.4)
    (sentence,) = [f for f in res.findings if "5 runs of file" in f]
    assert sentence.startswith(
        "`randread bs=4KiB libaio direct=? size=512MiB runtime=?` read at QD 16 x 8: 5 runs of file "
        "fio-2.2.10-five-runs-appended.txt (host not labelled): mean 568.3 MiB/s (595.9 MB/s), range 490.5 MiB/s "
        "(514.3 MB/s) to 646.7 MiB/s (678.1 MB/s); 95 % confidence interval of the mean ±13.2 %, prediction interval "
        "for one more run ±32.4 % (t distribution, 4 degree(s) of freedom); bootstrap interval of the mean "
    )
    assert not any("--repeat" in f for f in res.findings)


def test_the_slog_transcript_is_matched_to_its_workload_by_its_output_in_05_08_and_durable(result):
    """O3 (issue 24): the SLOG run's transcript has no command line and no manifest command; 05 and 08's depth
    section had made it a workload of its own ("write bs=4KiB iodepth=1 numjobs=1 sync direct=? size=? runtime=?"),
    while the durable section paired it with the no-SLOG run by its output. Now fio_runs matches it once (rw write,
    bs 4 KiB, sync engine, depth 1, one job, a fsync/fdatasync section: only the fdatasync=1 run fits) and every
    section shows the same workload and says what was taken from the match."""
    key = "write bs=4KiB iodepth=1 numjobs=1 sync direct=0 fdatasync=1 size=22MiB runtime=none"
    note = (
        "no command line or options: matched by what its output shows (rw, bs, iodepth, numjobs, ioengine, a "
        f"fsync/fdatasync section) to `{key}`, the one workload of pool main (no host label) it fits; direct, fdatasync, size, "
        "runtime taken from that workload (not in its output)"
    )
    runs = result["runs"].filter(result["runs"]["label"].str.contains("fsync"))
    got = {
        r["label"]: (r["workload"], r["workload_source"], r["workload_inferred"]) for r in runs.iter_rows(named=True)
    }
    assert got == {"raidz2 fsync": (key, "command+output", None), "raidz2+slog fsync": (key, "output (matched)", note)}
    depth = result["depth"].filter(result["depth"]["label"].str.contains("fsync"))
    assert depth["workload"].unique().to_list() == ["write bs=4KiB sync direct=0 fdatasync=1 size=22MiB runtime=none"]
    assert f"raidz2+slog fsync: {note}." in result.findings
    (durable,) = [
        f for f in result.findings if f.startswith("raidz2+slog fsync (`write bs=4KiB ioengine=sync iodepth=1")
    ]
    assert durable.endswith(f" Its workload: {note}.")


def test_two_configurations_with_as_many_ios_in_flight_are_never_one_mean(tmp_path):
    """New user h5 B2: one NVMe at --numjobs=4 --iodepth=8 (65.5k IOPS) and --numjobs=8 --iodepth=4 (76.8k IOPS),
    both 32 I/Os in flight, published in one page. 08 said '2 runs, all with 32 I/Os in flight: 71,159 IOPS (mean of
    2 runs, 65,550-76,767)', a figure of neither run: each configuration is stated alone, linked to its own lines."""
    res = _08_on_one_published_file("fio-3.35-nvme-qd32-4x8-and-8x4.txt", tmp_path)
    (sentence,) = [f for f in res.findings if "I/Os in flight, in 2 configurations" in f]
    # 19,664,989 and 23,030,324 writes in 300.001 s
    assert sentence == (
        "`write bs=8KiB libaio direct=1 size=? runtime=300s` write on file fio-3.35-nvme-qd32-4x8-and-8x4.txt (host "
        "not labelled): 2 run(s), all with 32 I/Os in flight, in 2 configurations (I/O depth x jobs): QD 4 x 8: "
        "76,767 IOPS; QD 8 x 4: 65,550 IOPS. They are not repeats of one run, so no mean is stated; the difference "
        "is that of spreading the I/Os over more or fewer jobs, nothing varies the depth."
    )
    assert not any("mean of 2 runs" in f for f in res.findings)
    spans = [[(i["line_start"], i["line_end"]) for i in c.inputs] for c in sentence.cites]
    # each figure links to its own run: QD 4 x 8 is the second block (jobs=8), QD 8 x 4 the first (jobs=4)
    assert spans == [[(78, 98)], [(26, 46)]]

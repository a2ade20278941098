"""Runs that are not alike are never compared as if they were (notebooks 05 and 08 on real published outputs the
project had not seen; fixtures/fio/published/*.md say where each comes from):

* the four reporting groups of one fio run (ceph, fio 2.16) are four targets, not four repeats;
* four concurrent jobs of one group (ceph, four disks) are four jobs of one run, not four runs;
* jobs with no rw mode and no block size (PerfKitBenchmarker's fio 2.1.4 JSON) are compared with nothing;
* runs at two depths from two machines and two fio versions (M1 / Ryzen) do not measure the depth alone.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import polars as pl
import pytest

from storagelab.analysis import Selection, fio_durable, fio_findings, fio_views, open_db, prose, stacks
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
        "a workload, and a flagged run (⚠) never heads a ranking."
    )


def test_05_compares_no_run_of_unknown_workload(results):
    r5, _ = results
    # had been one '? bs=?' workload, 'fastest ... 0.01x'; its runs' design checks are still made
    assert not any("pkb-fio" in f for f in r5.findings if not f.startswith("Test design:"))
    assert (
        "Test design: pkb-fio-2.1.4-five-jobs.json (group 1: sequential_read): its slowest I/O took 529 ms (19 % of "
        "the run); it ran 2.79 s, under 5 s: too short to measure a sustained rate. Such runs are marked ⚠ and never "
        "head a ranking."
    ) in r5.findings
    assert r5.missing[0] == (
        "3 run(s) have no rw mode or block size in their output or command (pkb-fio-2.1.4-five-jobs.json (group 1: "
        "sequential_read), pkb-fio-2.1.4-five-jobs.json (group 3: random_read_test), pkb-fio-2.1.4-five-jobs.json "
        "(group 4: random_read_test_parallel)), so they are compared with no other run: add the fio command line "
        "to the manifest column `command`"
    )
    assert r5.missing[-1].startswith(
        "the RAM of the machine is not in the logs or labels of 10 run(s) (test size not known for 8, 64.00 GiB for 1, "
        "8.00 GiB for 1)"
    )


def test_08_counts_jobs_of_one_run_and_names_what_differs(results):
    _, r8 = results
    assert (
        "`rw rwmixread=? bs=1MiB libaio direct=? size=? runtime=?` read on file fio-2.2.10-ceph-four-disks-one-group.txt "
        "(host not labelled): 4 jobs of 1 fio run(s), all with 32 I/Os in flight: the run (its reporting group's I/O "
        "over its elapsed time) 183.5 MiB/s (192.4 MB/s); per job (fio's per-job rate, each job alone): 46.7 MiB/s "
        "(48.9 MB/s) (mean of 4 jobs, 24.4 MiB/s (25.5 MB/s) to 58.2 MiB/s (61.0 MB/s)); nothing varies the depth."
        in r8.findings
    )
    # M1 (8 in flight) and Ryzen (64): two machines without host labels, two fio versions: two setups, no line and
    # no ratio across them (08 had said "from 8 to 64 I/Os in flight, IOPS 59,600 -> 30,900 (0.52x)")
    assert (
        "`randread bs=4KiB posixaio direct=? size=1GiB runtime=?` read ran on 2 setups (file "
        "fio-3.16-ryzen-randread-64-threads.txt (host not labelled), file fio-3.19-m1-randread-8-threads.txt (host not "
        "labelled)): a depth curve is drawn and a ratio stated within one setup only; across them the depth is not the "
        "only difference." in r8.findings
    )
    assert not any("I/Os in flight, IOPS" in f for f in r8.findings)
    depth = r8["depth"].filter(r8["depth"]["workload"].str.starts_with("randread"))
    assert depth["setup"].n_unique() == 2
    unknown = [f for f in r8.findings if f.startswith("`? bs=?")]
    assert len(unknown) == 5 and all(": one run (" in f for f in unknown)  # each job alone, none pooled


def test_08_states_the_group_figure_05_gives(results):
    """O4 (issue 24): 08 had said only "46.7 MiB/s (mean of 4 jobs)" for the four-disk group, 05 183.5 / 175.1 MiB/s:
    one definition of a run's bandwidth (the group's I/O over its elapsed time) in both."""
    r5, r8 = results
    four = r5["runs"].filter(r5["runs"]["path"].str.ends_with("four-disks-one-group.txt"))
    assert [round(b / 2**20, 1) for b in four["bw_bytes_per_s"]] == [183.5]  # 05 read (its write: 175.1)
    write = [f for f in r8.findings if "four-disks" in f and "` write on" in f]
    assert len(write) == 1 and (
        "32 I/Os in flight: the run (its reporting group's I/O over its elapsed time) 175.1 MiB/s (183.6 MB/s); "
        "per job (fio's per-job rate, each job alone): 44.5 MiB/s (46.7 MB/s) (mean of 4 jobs," in write[0]
    )


def test_figure_keeps_small_intervals_visible():
    # 05 had printed '±0 MiB/s' for a 95 % interval of 0.47 MiB/s
    assert [prose.figure(x) for x in (0.4712, 3.14, 12.4, 1234.5, 0.0)] == ["0.47", "3.1", "12", "1,234", "0"]


def test_08_sets_a_synchronous_engine_at_its_real_depth(tmp_path):
    """Two real lab runs with psync at iodepth 1 and 16 (fixtures/fio/3.33/lab-psync): fio caps psync at one I/O in
    flight (IO depths 1=100%), so both are at depth 1; 08 had said 'from 1 to 16 I/Os in flight, 0.91x'."""
    src = PUB.parent / "3.33" / "lab-psync"
    raw = tmp_path / "raw"
    raw.mkdir()
    for name in ("randread-4k-qd1-nj1.txt", "randread-4k-qd16-nj1.txt"):
        shutil.copy(src / name, raw / name)
    s = ingest([raw], db_path=tmp_path / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    assert (s.ingested, s.failed) == (2, 0), s.errors
    with open_db(tmp_path / "x.duckdb") as con:
        r8 = fio_views.analyse(con, Selection())
    assert r8["depth"].select("iodepth", "outstanding").rows() == [(1, 1), (1, 1)]
    assert r8.findings[0] == (
        "1 job(s) set iodepth above 1, but fio kept one I/O in flight per job (its IO depths: 1=100%; a synchronous "
        "engine such as psync caps the depth at 1): they are set at their real depth, 1."
    )
    assert not any("I/Os in flight, IOPS" in f for f in r8.findings)


def test_08_sets_the_means_of_repeated_runs_against_each_other(tmp_path):
    """Three real lab runs at each of depths 1, 4 and 16 (fixtures/fio/3.33/lab-repeats): the depth finding takes
    the mean IOPS at each end, with the range, and the median p99 (it had taken one run at each end). Every one of
    these runs is 2 s long, under the design checks' 5 s: flagged 'short', so no ratio is stated from them (h7
    finding 14); the levels still hold the means."""
    src = PUB.parent / "3.33" / "lab-repeats"
    raw = tmp_path / "raw"
    shutil.copytree(src, raw, ignore=shutil.ignore_patterns("*.md", "*.jsonl"))
    names = sorted(p.name for p in raw.glob("*.txt"))
    (raw / "manifest.csv").write_text("path,host,stack\n" + "".join(f"{n},vm,ext4\n" for n in names))
    s = ingest([raw], db_path=tmp_path / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    assert (s.ingested, s.failed) == (9, 0), s.errors
    with open_db(tmp_path / "x.duckdb") as con:
        r8 = fio_views.analyse(con, Selection())
    assert r8.findings[0].startswith(
        "`randread bs=4KiB libaio direct=1 size=16MiB runtime=2s` read on vm | ext4 | layout not labelled: runs at 1, "
        "4, 16 I/Os in flight, but every run on it is flagged: no ratio across depths is stated (a flagged run "
        "measures its test design, not the depth); their figures are in the table and chart, marked ⚠. Flagged "
        "run(s) on it: randread-4k-qd1-nj1-2.txt (⚠ short)"  # one host labelled: one setup
    )
    (curve,) = r8.numbers.curves
    lo, hi = curve.levels[0], curve.levels[-1]
    assert curve.clean_levels == []
    assert [round(x) for x in (lo.iops, lo.iops_low, lo.iops_high, hi.iops, hi.iops_low, hi.iops_high)] == [
        15424,
        13856,
        16738,
        78473,
        73585,
        83074,
    ]
    assert (lo.runs, hi.runs, fio_durable.fmt_latency(lo.p99_ns), fio_durable.fmt_latency(hi.p99_ns)) == (
        3,
        3,
        "0.0773 ms",
        "0.285 ms",
    )
    # the sentence's rule on these levels: were the runs at 4 and 16 unflagged, the ratio would be theirs alone
    partly = dataclasses.replace(curve, clean_levels=curve.levels[1:])
    assert fio_findings.curve_sentence(partly).startswith(
        "`randread bs=4KiB libaio direct=1 size=16MiB runtime=2s` read on vm | ext4 | layout not labelled: from 4 to "
        f"16 I/Os in flight, IOPS {curve.levels[1].iops:,.0f} (mean of 3 runs, {curve.levels[1].iops_low:,.0f}-"
        f"{curve.levels[1].iops_high:,.0f}) -> 78,473 (mean of 3 runs, 73,585-83,074) "
        f"({78473.0 / curve.levels[1].iops:.2f}x) (unflagged runs only: 3 flagged run(s) left out), p99 latency "
    )
    only_one = dataclasses.replace(curve, clean_levels=curve.levels[2:])
    assert ": runs at 1, 4, 16 I/Os in flight, but only the run(s) at 16 I/Os in flight are unflagged: no ratio " in (
        fio_findings.curve_sentence(only_one)
    )


def test_the_read_share_of_a_mixed_mode_is_part_of_the_workload(tmp_path):
    """randrw at 30 % and at 70 % reads (real fio 3.33, fixtures/fio/3.33/randrw-mix) are two workloads: 08 had
    pooled them as one configuration's 'run-to-run spread ±59.4 %'."""
    src = PUB.parent / "3.33" / "randrw-mix"
    raw = tmp_path / "raw"
    shutil.copytree(src, raw, ignore=shutil.ignore_patterns("*.md", "*.jsonl"))
    s = ingest([raw], db_path=tmp_path / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    assert (s.ingested, s.failed) == (2, 0), s.errors
    with open_db(tmp_path / "x.duckdb") as con:
        r5 = stacks.analyse(con, Selection(), direction="read")
        r8 = fio_views.analyse(con, Selection())
    assert sorted(r5["runs"]["workload"].to_list()) == [
        "randrw rwmixread=30 bs=4KiB iodepth=4 numjobs=1 libaio direct=1 size=16MiB runtime=2s",
        "randrw rwmixread=70 bs=4KiB iodepth=4 numjobs=1 libaio direct=1 size=16MiB runtime=2s",
    ]
    assert r5["repeats"].is_empty()
    assert not any("run-to-run spread" in f for f in r8.findings)


def test_05_reads_the_test_size_from_the_laid_out_file(tmp_path):
    """O8 (issue 24): the M1 run labelled with its RAM (16 GiB), no command line: its output's "random-read-4KB-8Thread:
    Laying out IO file (1 file / 1024MiB)" is the size (05 had said size=? and asked for the command line): 8 jobs
    of 1 GiB each fit in 16 GiB of RAM, and 05 says where the size came from."""
    raw = tmp_path / "raw"
    raw.mkdir()
    name = "fio-3.19-m1-randread-8-threads.txt"
    shutil.copy(PUB / name, raw / name)
    (raw / "manifest.csv").write_text(f"path,label,ram_bytes\n{name},m1,17179869184\n")
    ingest([raw], db_path=tmp_path / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    with open_db(tmp_path / "x.duckdb") as con:
        (laid,) = con.execute("SELECT layout_files, layout_bytes FROM fio_jobs").fetchall()
        r5 = stacks.analyse(con, Selection(), direction="read")
    assert laid == (1, 1024 * 2**20)
    assert r5["runs"]["workload"].to_list() == [
        "randread bs=4KiB iodepth=1 numjobs=8 posixaio direct=? size=1GiB runtime=?"
    ]
    assert not any("test size of" in m for m in r5.missing)
    # fio's normal text does not print direct=: a test size below RAM may or may not have been served by the page
    # cache, and 05 says which is not known and what gives it (h5 A2: never taken as buffered)
    assert (
        "the page cache may or may not have served m1 (8.00 GiB in 16.00 GiB of RAM + L2ARC): the working set fits in "
        "the RAM, but direct= is not in the output (fio's normal text does not print it), so whether the I/O went "
        "through the page cache is not known. Put fio's command line (with --direct=) in the manifest's command "
        "column, or save fio's output as JSON (its job options list direct)" in r5.missing
    )
    assert not any(f.startswith("Test size below RAM") for f in r5.findings)
    assert "m1: size 1GiB from fio's 'Laying out IO file' line (whole MiB, rounded down)." in r5.findings


def test_05_chart_uses_a_log_axis_where_bandwidths_span_decades(results):
    """0.5 to 233 MiB/s (the ceph groups beside the M1 run): a linear axis hid all but the largest; on the log axis
    every bar starts at 0.1 MiB/s, so none is dropped, and the ranking order puts flagged runs last."""
    from storagelab import charts

    r5, _ = results
    spec = charts.run_bandwidth(r5["runs"], "read", Selection(), 1.1).to_dict()
    bars, ticks = spec["spec"]["layer"]
    assert bars["encoding"]["x"]["scale"] == {"type": "log", "domain": [0.1, pytest.approx(233.0 * 1.5)]}
    assert bars["encoding"]["x2"] == {"field": "floor_mib_s"}
    assert bars["encoding"]["y"]["sort"] == {"field": "rank", "op": "min", "order": "ascending"}
    homelab_like = r5["runs"].with_columns(bw_mib_s=pl.lit(100.0))  # one decade or less: linear, from zero
    linear = charts.run_bandwidth(homelab_like, "read", Selection(), 1.1).to_dict()
    assert linear["spec"]["layer"][0]["encoding"]["x"]["scale"] == {"zero": True}


def test_08_draws_no_depth_curve_across_labelled_hosts(tmp_path):
    """The M1 (8 in flight) and the Ryzen (64) labelled as two hosts: two setups. new-user-2 defect 5: 08 had drawn
    a line and stated "from 128 to 512 I/Os in flight, IOPS 19,567 -> 1,891 (0.10x)" across hosts, with only a
    caveat."""
    raw = tmp_path / "raw"
    raw.mkdir()
    m1, ryzen = "fio-3.19-m1-randread-8-threads.txt", "fio-3.16-ryzen-randread-64-threads.txt"
    for name in (m1, ryzen):
        shutil.copy(PUB / name, raw / name)
    (raw / "manifest.csv").write_text(f"path,host,stack\n{m1},mba,apfs\n{ryzen},ryzen,ext4\n")
    s = ingest([raw], db_path=tmp_path / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    assert (s.ingested, s.failed) == (2, 0), s.errors
    with open_db(tmp_path / "x.duckdb") as con:
        r8 = fio_views.analyse(con, Selection())
    assert r8.findings[0] == (
        "`randread bs=4KiB posixaio direct=? size=1GiB runtime=?` read ran on 2 setups (mba | apfs | layout not labelled, "
        "ryzen | ext4 | layout not labelled): a depth curve is drawn and a ratio stated within one setup only; across "
        "them the depth is not the only difference."
    )
    assert [len(c.levels) for c in r8.numbers.curves] == [1, 1]
    assert not any("x)" in f and "I/Os in flight, IOPS" in f for f in r8.findings)

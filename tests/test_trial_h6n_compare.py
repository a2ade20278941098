"""The h6n new-user trial (/work/h6n-findings.md) on comparisons and device statistics: `storagelab compare` (and
08's compare_with) with runs fio reported as failed (C1) and runs the design checks flag (C2), 05's disk stats of
appended runs (I1) and 05's appended runs as repeats (I2). Files in tests/fixtures/fio/newuser-h6n-compare (sources in
its COMMANDS.md), labelled as the trial labelled them: the lab's runs with its manifest rows, the hand runs with a
study only, the published VPS logs with nothing."""

from __future__ import annotations

import shutil
import statistics
from pathlib import Path

import polars as pl
import pytest
from conftest import FIXTURES, RAW
from conftest import storagelab_cli as cli

from storagelab.analysis import (
    Selection,
    compare,
    explore,
    fio_failed,
    fio_runs,
    fio_views,
    open_db,
    run_verdicts,
    stacks,
)
from storagelab.analysis.db import frame

SRC = FIXTURES / "fio" / "newuser-h6n-compare"
LAB = "ext4,single,1,1,/dev/loop0 (unknown model)"
CMD = "fio --name={n} --directory=/mnt/h6n/{fs}/lab --rw=write --bs=1M --size={s} --ioengine=libaio --iodepth={q} \
--numjobs=1 --direct=1 --runtime={t} --time_based --group_reporting --unlink=1 --output-format=normal,json+"
NOTE = "fio_version=3.33; fstype={fs}; sanity: not a disk: loop device {dev}, backed by /tmp/h6nds/img/{fs}.img on ext4"
# the lab's manifest rows (/tmp/h6nds/a/lab/manifest.csv) with the log options and most notes cut; the hand runs
# (a/) carry a study only, the published logs (b/) no row at all
MANIFEST = "path,study,label,host,stack,vdev_type,vdev_count,vdev_width,devices,command,notes,ram_bytes\n" + "".join(
    f'lab/{fs}/{name}.txt,lab,{label},vm,{fs},single,1,1,{dev} (unknown model),"{CMD.format(n=name, fs=fs, s=s, t=t, q=name.split("-qd")[1].split("-")[0])}",'
    f'"{NOTE.format(fs=fs, dev=dev.rsplit("/", 1)[-1])}",25276510208\n'
    for fs, name, label, dev, s, t in (
        ("ext4", "write-1m-qd8-nj1", "write-1m-qd8-nj1", "/dev/loop0", "128M", 2),
        ("ext4", "write-1m-qd8-nj1-2", "write-1m-qd8-nj1 (run 2)", "/dev/loop0", "128M", 2),
        ("ext4", "write-1m-qd8-nj1-3", "write-1m-qd8-nj1 (run 3)", "/dev/loop0", "128M", 2),
        ("btrfs", "write-1m-qd8-nj1-11", "write-1m-qd8-nj1 [write-1m-qd8-nj1-11]", "/dev/loop2", "256M", 5),
        ("btrfs", "write-1m-qd1-nj1-11", "write-1m-qd1-nj1 [write-1m-qd1-nj1-11]", "/dev/loop2", "256M", 5),
    )
) + "".join(f"a/{p},h6na,,,,,,,,,,\n" for p in (
    "failed/xfs-seqw-3s-ENOSPC.json", "failed/xfs-seqw-60s-ENOSPC.json", "xfs/seqw-1s.json", "xfs/seqw-60s.json",
    "ext4/fdatasync-randwrite-4k.txt",
))  # fmt: skip


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    from storagelab.store import ingest

    raw = tmp_path_factory.mktemp("h6n") / "raw"
    shutil.copytree(SRC, raw, ignore=shutil.ignore_patterns("*.expected.jsonl", "*.md"))
    (raw / "manifest.csv").write_text(MANIFEST, encoding="utf-8")
    dest = raw.parent / "h6n.duckdb"
    s = ingest([raw], db_path=dest, manifest_path=raw / "manifest.csv", parquet_dir=False, progress=False, workers=1)
    assert s.failed == 0, s.errors
    return dest


@pytest.fixture(scope="module")
def lab_vs_hand(db):
    con = open_db(db)
    yield compare.analyse(con, Selection(study="lab"), Selection.parse("study=h6na"))
    con.close()


WL = "write bs=1MiB iodepth=8 numjobs=1 libaio direct=1"


def test_a_failed_run_is_named_with_its_error_and_never_compared(lab_vs_hand):
    """C1: the two ENOSPC runs (fio stopped after 88 and 297 ms with "error" : 28) had been compared and tested
    ('+264.2 % (3.64x); tested: ...'), marked only 'sub-second'."""
    res = lab_vs_hand
    failed = [f for f in res.findings if ": failed: " in f]
    assert failed == [
        f"[study h6na] xfs-seqw-{t}-ENOSPC.json: failed: fio reported error 28 (No space left on device) for job seqw "
        f"(line 8): it stopped there, so its {rate} ({WL}, write) is only what it did before the error; not compared "
        "or tested."
        for t, rate in (("3s", "521.9 MiB/s (547.2 MB/s)"), ("60s", "1761.4 MiB/s (1846.9 MB/s)"))
    ]
    assert [(c.text, c.inputs[0]["line_start"]) for c in failed[1].cites] == [("error 28 (No space left on device)", 8)]
    table = res["beside"]
    assert not table["labels"].str.contains("ENOSPC").any()  # not in the table, the ratios or the tests
    assert not any("ENOSPC" in f for f in res.findings if ": failed: " not in f)


def test_flagged_runs_are_left_out_of_the_test_as_08_leaves_them(lab_vs_hand):
    """C2: the lab's 2 s ext4 runs (short) against the hand run of 1.009 s (short) had been tested: '+1137.1 %
    (12.37x); tested: ... outside it: a difference beyond run-to-run noise'."""
    res = lab_vs_hand
    rows = {r["config"]: r for r in res["beside"].iter_rows(named=True)}
    ext4 = rows["write-1m-qd8-nj1"]
    assert (ext4["runs"], ext4["flagged_runs"], ext4["values"], ext4["why"]) == (
        3,
        3,
        [],
        ["⚠ short", "⚠ stall, short"],
    )
    # seqw-60s.json leaves its steady band (2,823 -> 6,352 MiB/s at 55-58 s: its bw log): flagged as 08 flags it
    # (h6n E4, run_verdicts), so no pair is left to compare here
    not_steady = (
        "⚠ not steady: rises to 6352.0 MiB/s (6660.6 MB/s) at 55.055-58.058 s from 2823.1 MiB/s (2960.3 MB/s) in "
        "9.009-13.013 s"
    )
    assert rows["seqw-1s.json"]["why"] == ["⚠ short"] and rows["seqw-60s.json"]["why"] == [not_steady]
    assert (
        f"{WL} (write): not compared or tested, every run flagged: [study lab] write-1m-qd8-nj1 (ext4 | single 1 1), "
        "3 run(s): ⚠ short; ⚠ stall, short; [study h6na] seqw-1s.json (? | layout not labelled), 1 run(s): ⚠ short; "
        f"[study h6na] seqw-60s.json (? | layout not labelled), 1 run(s): {not_steady}. A flagged run is left out of "
        "comparisons (the rule of notebooks 05, 08 and 10): its mean is shown, marked, and nothing is said of it "
        "against another run."
    ) in res.findings
    assert res["verdicts"].is_empty()
    assert not any("beyond run-to-run noise" in f for f in res.findings)
    # the hand runs have no RAM label: the cache check not made is said for them (the lab's rows give it)
    assert res.missing[0].startswith(
        "the cache check (working set against RAM) could not be made for [study h6na] seqw-1s.json (direct=1 on a "
        "stack not labelled), [study h6na] seqw-60s.json (direct=1 on a stack not labelled): the RAM of the machine "
        "is not in the labels."
    )


def test_compare_command_prints_flags_and_failures(db):
    r = cli("compare", "--mine", "lab", "--with", "study=h6na", "--db", str(db))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert any(
        x.startswith("  yours ")
        and " write-1m-qd8-nj1 " in x
        and x.endswith("3 of 3 flagged, not tested: ⚠ short; ⚠ stall, short")
        for x in lines
    )
    assert sum(": failed: fio reported error 28 (No space left on device)" in x for x in lines) == 2
    assert not any("ENOSPC.json " in x and " run(s) " in x for x in lines)  # no table row for a failed run


@pytest.fixture(scope="module")
def vps(db):
    con = open_db(db)
    yield stacks.analyse(con, Selection(study="(unlabelled)"), direction="read")
    con.close()


def test_one_disk_of_appended_runs_is_not_several_members(vps):
    """I1: the five appended runs' `sda` lines of linode's fio_randread.log (8, 7, 29, 43 and 27 stray writes during
    a read test) had been read as five members of a mirror: 'sda answers 18x faster: the members are not alike, a
    mirrored write completes only when its slowest member has it'."""
    lat = vps["device_latency"].filter(pl.col("path").str.contains("linode"))
    assert lat.select("doc_index", "disk", "write_ios", "line_start").rows() == [
        (0, "sda", 8, 41), (1, "sda", 7, 74), (2, "sda", 29, 107), (3, "sda", 43, 140), (4, "sda", 27, 173)
    ]  # fmt: skip
    assert lat["ms_per_io"][0] == 1800.0  # ticks=3749760/14400: 14,400 ms / 8 writes, a figure of nothing
    assert not any("disk stats" in f or "members" in f for f in vps.findings)


def test_an_unlabelled_md_array_is_one_array_but_no_mirror(tmp_path):
    """The homelab's mdadm raid1 run (fio's md127 with members nvme0n1 and sdb) with no labels at all: fio's md
    aggregate makes its devices members of one array, but nothing says it is a mirror, so no mirror cause."""
    from storagelab.store import ingest

    raw = tmp_path / "raw" / "nolabels"
    raw.mkdir(parents=True)
    shutil.copy(RAW / "homelab-mergerfs" / "fio-mdadm-raid1-ext4-bitmap-internal.txt", raw / "md.txt")
    dest = tmp_path / "x.duckdb"
    s = ingest([raw.parent], db_path=dest, parquet_dir=False, progress=False, workers=1)
    assert s.failed == 0, s.errors
    con = open_db(dest)
    res = stacks.analyse(con, Selection(study="(unlabelled)"))
    con.close()
    said = [f for f in res.findings if "disk stats" in f]
    assert said == [
        f"{raw / 'md.txt'}: fio's disk stats give very different write times per I/O for its devices (nvme0n1 59.62 "
        "ms, sdb 0.34 ms; sdb answers 174x faster): the members are not alike, and how the array spreads a write over "
        "them its labels do not say (no mirror label); what lets sdb answer that fast the logs do not say."
    ]


def test_appended_runs_are_pooled_as_repeats_and_each_pair_tested_once(vps):
    """I2: 05 had tested scaleway's five appended runs one by one against do-5bucks' prediction interval ('the one
    run of scaleway-vc1s-ubuntu/fio_randread.log against ...' five times) where 08 pools them and uses Welch's t (p =
    0.00034); M1: 05's 'spread' was half the range / mean (±13.7 %) where the lab and 10 say sample sd / mean."""
    said = [str(f) for f in vps.findings if "against it" in f or "repeated runs" in f]
    welch = "tested: Welch's t test on 5 and 5 runs"
    assert said == [
        "do-5bucks-ubuntu/fio_randread.log: 5 repeated runs, mean 568.3 MiB/s (595.9 MB/s), spread 10.6 % (sample sd "
        "/ mean; 95 % confidence interval of the mean ±75 MiB/s, ±13.2 %; 95 % prediction interval for one new run "
        "±184 MiB/s, ±32.4 %, bootstrap interval of the mean 521.3 MiB/s to 613.2 MiB/s).",
        f"  scaleway-vc1s-ubuntu/fio_randread.log against it: -54.2 % (0.46x); {welch} (t = -11.37, df = 4.0, p = "
        "0.00034); the 95 % confidence interval of the difference is -382.9 MiB/s to -232.6 MiB/s: a difference.",
        f"  linode-linode1024-ubuntu/fio_randread.log against it: -80.8 % (0.19x); {welch} (t = -16.28, df = 4.7, p = "
        "2.6e-05); the 95 % confidence interval of the difference is -533.3 MiB/s to -385.3 MiB/s: a difference.",
        "scaleway-vc1s-ubuntu/fio_randread.log: 5 repeated runs, mean 260.5 MiB/s (273.2 MB/s), spread 0.4 % (sample "
        "sd / mean; 95 % confidence interval of the mean ±1.2 MiB/s, ±0.5 %; 95 % prediction interval for one new run "
        "±2.9 MiB/s, ±1.1 %, bootstrap interval of the mean 259.7 MiB/s to 261.1 MiB/s).",
        f"  linode-linode1024-ubuntu/fio_randread.log against it: -58.2 % (0.42x); {welch} (t = -19.01, df = 4.0, p = "
        "4.3e-05); the 95 % confidence interval of the difference is -173.6 MiB/s to -129.4 MiB/s: a difference.",
        # linode's own repeats: both its pairs were tested above, none again
        "linode-linode1024-ubuntu/fio_randread.log: 5 repeated runs, mean 109.0 MiB/s (114.3 MB/s), spread 16.3 % "
        "(sample sd / mean; 95 % confidence interval of the mean ±22 MiB/s, ±20.3 %; 95 % prediction interval for one "
        "new run ±54 MiB/s, ±49.7 %, bootstrap interval of the mean 95.4 MiB/s to 122.7 MiB/s).",
    ]
    # by hand from the group lines (fio 2.2.10 aggrb= KB/s = KiB/s): 611058, 502251, 592499, 541759, 662188 KiB/s
    kib = [611058, 502251, 592499, 541759, 662188]
    assert round(statistics.stdev(kib) / statistics.mean(kib) * 100, 1) == 10.6


def test_an_interval_of_bandwidth_stops_at_zero_and_says_so(db):
    """C3: `compare` had printed '(-1,493.1 MiB/s to 6,212.1 MiB/s, ±163.3 %)' for the lab's ext4 repeats. The
    fixture's three 2 s ext4 runs (1,861.6, 3,378.8 and 2,323.4 MiB/s) give a t prediction interval from -1,342.8
    MiB/s: clipped at 0, said, the ± kept as the t half-width."""
    from storagelab.analysis import fio_runs, prose, stats

    con = open_db(db)
    runs = fio_runs.runs(con, Selection(study="lab"))
    con.close()
    ext4 = runs.filter(pl.col("stack") == "ext4")["bw_bytes_per_s"].sort().to_list()
    assert ext4 == [1951996801.0, 2436212502.0, 3542939698.0]
    rep = stats.summarise(ext4)
    assert (rep.pi.low, round(rep.pi.below / 2**20, 1), round(rep.pi.high / 2**20, 1)) == (0.0, -1342.8, 6385.3)
    assert round(rep.pi.half_pct, 1) == 153.3 and rep.ci.below is None  # the mean's interval stays above zero
    c = stats.compare(
        stats.summarise(runs.filter(pl.col("label").str.contains("qd8-nj1-11"))["bw_bytes_per_s"].to_list()), rep
    )
    assert prose.comparison(c, "btrfs", "ext4") == (
        "-93.1 % (0.07x); tested: the one run of btrfs against the 95 % prediction interval for one new run from the 3 "
        "runs of ext4 (0.0 MiB/s to 6,385.3 MiB/s, ±153.3 %; its t low end, -1,342.8 MiB/s, clipped at 0: a rate is "
        "not negative; 3 runs with a spread of 30.8 % (sample sd / mean) give an interval too wide to tell much), "
        "inside it: 3 runs cannot tell it from run-to-run noise"
    )


def test_a_depth_ratio_from_one_run_each_says_so_and_carries_the_lab_flag(db):
    """E1: 08 had stated 'from 1 to 8 I/Os in flight, bandwidth 157.2 MiB/s -> 173.5 MiB/s (1.10x)' from one run per
    depth, with no word of it and without the lab's 'not a disk' flag its notes carry for both runs."""
    con = open_db(db)
    res = fio_views.analyse(con, Selection(study="lab", stack="btrfs"))
    con.close()
    (said,) = [str(f) for f in res.findings if "I/Os in flight, bandwidth" in f]
    assert said == (
        "`write bs=1MiB libaio direct=1 size=256MiB runtime=5s` write on vm | btrfs | single 1x1 | /dev/loop2 (unknown "
        "model): from 1 to 8 I/Os in flight, bandwidth 157.2 MiB/s (164.8 MB/s) -> 173.5 MiB/s (181.9 MB/s) (1.10x), "
        "p99 latency 20.1 ms -> 75.0 ms. One run each: no noise estimate, so the ratio cannot be told from run-to-run "
        "noise (repeat the runs: `storagelab lab fio --repeat 3`). The lab flagged its runs: not a disk: loop device "
        "loop2, backed by /tmp/h6nds/img/btrfs.img on ext4."
    )


def test_a_durable_write_run_says_what_its_output_cannot(db):
    """E3: 08 had said 'its write() p99 ... is the page cache' (of a zfs-fuse run too: a FUSE daemon, not the page
    cache; the output cannot say where a write went), and 'a sync after every write' beside '(which, and how often,
    its output does not say)' for this text run."""
    con = open_db(db)
    res = fio_views.analyse(con, Selection(study="h6na"))
    con.close()
    (said,) = [str(f) for f in res.findings if f.startswith("fdatasync-randwrite-4k.txt (")]
    assert said == (
        "fdatasync-randwrite-4k.txt (`randwrite bs=4KiB ioengine=psync iodepth=1, a sync after every write`): latency "
        "per durable write (fio's sync percentiles) p50/p99/p99.9 1.07/19.8/70.8 ms, max 148 ms; 371.7 durable "
        "writes/s (the run's time); its write() p99 0.0680 ms is write()'s own latency, not a durable write. Its "
        "workload: its output has a fsync/fdatasync section: fsync or fdatasync was on (which, its output does not "
        "say; how often, it does not print either: one per write is inferred from the run's time, which that many "
        "writes and syncs at their mean latencies fill); size 64MiB from fio's 'Laying out IO file' line (whole MiB, "
        "rounded down)."
    )  # 7,436 KiB / 4 KiB = 1,859 writes / 5.001 s = 371.7/s; sync p99 19,792 us; write() clat p99 68 us


def test_07s_job_table_marks_failed_jobs_and_unprinted_depths(db):
    """J1: 07's fastest-first job table had listed the ENOSPC run third with nothing saying it failed, iodepth null
    for jobs whose output does not print it, and fio's rounded printed IOPS."""
    con = open_db(db)
    jobs = frame(
        con,
        """SELECT f.path, j.jobname, j.iodepth, j.error, r.total_ios / (r.runtime_ns / 1e9) AS iops, r.iops AS printed
           FROM fio_results r JOIN fio_jobs j USING (file_id, job_index) JOIN files f USING (file_id)
           WHERE j.is_final AND r.direction = 'write' AND f.study = 'h6na' ORDER BY f.path""",
    )
    con.close()
    names = [p.rsplit("/", 1)[-1] for p in jobs.filter(pl.col("error") != 0)["path"]]
    assert names == ["xfs-seqw-3s-ENOSPC.json", "xfs-seqw-60s-ENOSPC.json"]
    note = explore.jobs_note(jobs.with_columns(pl.col("path").str.replace(r".*/raw/", "")))
    assert note == (
        "2 job(s) failed: a/failed/xfs-seqw-3s-ENOSPC.json (job seqw, error 28), a/failed/xfs-seqw-60s-ENOSPC.json (job "
        "seqw, error 28): fio stopped on that error, so their figures are what they did before it, not the workload's "
        "rate (05 and 08 name them; `storagelab compare` leaves them out)."
    )
    fds = jobs.filter(pl.col("jobname") == "fdsw").row(0, named=True)
    assert (fds["printed"], round(fds["iops"], 1)) == (371.0, 371.7)  # 'IOPS=371' printed; 1,859 / 5.001 s


def test_a_log_window_has_one_time_whatever_else_is_selected(db):
    """K1: seqw60_bw.1.log lines 55-58 (55,182 to 58,183 ms: the rise to 6,352.0 MiB/s) were 'at 55-58 s' in the h6na
    report and 'at 54.945-57.942 s' in the unlabelled one: the log window was the median gap of every log selected
    (999 ms with the lab's 500 ms logs beside it), not of the run's own log. Now each run's own: one time in every
    report (still the window's end, not the raw timestamp: 55.055 s for the line at 55,182 ms)."""
    from storagelab.analysis.fio_timeseries import combine_jobs, load_log_samples

    con = open_db(db)
    logs = frame(con, "SELECT file_id, path FROM files WHERE format = 'fio-log' ORDER BY path")
    ids = dict(zip([p.rsplit("/", 1)[-1] for p in logs["path"]], logs["file_id"], strict=True))
    own = ids["seqw60_bw.1.log"]
    alone = combine_jobs(load_log_samples(con, [own]))
    beside = combine_jobs(load_log_samples(con, [own, ids["write-1m-qd8-nj1-11_bw.1.log"]]))
    con.close()
    seqw = beside.filter(pl.col("run").str.ends_with("seqw60"))
    assert seqw["time_ns"].to_list() == alone["time_ns"].to_list()
    rise = seqw.filter(pl.col("line_start").is_between(55, 58))
    # window ends at this log's own median gap, 1,001 ms (fio's 1 s windows slip a little each): 55.055-58.058 s
    assert rise["time_ns"].to_list() == [55_055_000_000, 56_056_000_000, 57_057_000_000, 58_058_000_000]
    assert round(rise["value"][-1] / 2**20, 1) == 6352.0  # 6,504,448 KiB/s at 58,183 ms
    lab = beside.filter(~pl.col("run").str.ends_with("seqw60"))
    assert lab["time_ns"][:2].to_list() == [500_000_000, 1_000_000_000]  # its own 500 ms windows


def test_a_failed_run_is_left_out_by_the_rule_of_05_08_and_10_whatever_its_length(db):
    """The rule every report shares (``run_verdicts.left_out``) leaves out a run fio reported as failed, with fio's
    error first in its reason, whatever its length: the 60 s ENOSPC run had been cut to 297 ms and only its
    'sub-second' flag kept it out; a failed run longer than the design checks' minimum counted in 05, 08 and 10."""
    with open_db(db) as con:
        runs = fio_runs.runs(con, Selection(study="h6na"))
        left = run_verdicts.left_out(con, Selection(study="h6na"))
        paths = dict(con.execute("SELECT file_id, path FROM files").fetchall())
    why = {Path(paths[f]).name: w for (f, _, _), w in left.items()}
    for t in ("3s", "60s"):
        assert why[f"xfs-seqw-{t}-ENOSPC.json"].startswith(
            "failed: error 28 (No space left on device) for job seqw; ⚠ "
        ), why
    assert not any(w.startswith("failed") for n, w in why.items() if "ENOSPC" not in n)
    # the rule does not depend on the length: the same run, its elapsed time made 60 s, is still left out
    longer = runs.with_columns(elapsed_ns=pl.lit(60_000_000_000, dtype=runs.schema["elapsed_ns"]))
    with open_db(db) as con:
        judged = run_verdicts.verdicts(con, longer)
    failed = judged.filter(pl.col("failed").is_not_null())
    assert failed.height == 2 and failed["suspect"].all()
    assert failed["why"].str.starts_with("failed: error 28 (No space left on device) for job seqw").all()
    assert judged.filter(pl.col("failed").is_null())["why"].drop_nulls().str.contains("failed").sum() == 0
    with open_db(db) as con:  # 08's missing-data sentence says where the rule puts them
        said = [str(f).rsplit("/", 1)[1] for f in fio_failed.sentences(con, Selection(study="h6na"))]  # label: its path
    assert said == [
        "xfs-seqw-3s-ENOSPC.json: fio reported error 28 (No space left on device) for job seqw: its results are only "
        "what it did before the error: left out of repeats, comparisons and headlines (the rule of 05, 08 and 10), "
        "shown with its other flags.",
        "xfs-seqw-60s-ENOSPC.json: fio reported error 28 (No space left on device) for job seqw: its results are only "
        "what it did before the error: left out of repeats, comparisons and headlines (the rule of 05, 08 and 10), "
        "shown with its other flags.",
    ]

"""Notebook 08 on a second, differently labelled data set (the h7 new-user trial, /work/h7-findings.md): real fio
and zpool outputs from tests/fixtures/, labelled as that user labelled them (hosts boreas and atlas, other fio
versions with the study label only), analysed with non-default parameters."""

from __future__ import annotations

import shutil

import polars as pl
import pytest
from conftest import FIXTURES

from storagelab.analysis import Selection, device_iostat, fio_views, open_db

STUDY = "coldlab-b"
BOREAS = "boreas,Debian 12 (6.18),ext4,,vda (virtio disk),8589934592"
ATLAS = "atlas,Debian 12,zfs,tank,,17179869184"
STD = FIXTURES / "fio" / "3.33" / "lab-standard"
REP = FIXTURES / "fio" / "3.33" / "lab-repeats"
# file under the study -> (real output under tests/fixtures/, label, setup labels)
FILES = {
    **{
        f"boreas/{n}.txt": (STD / f"{n}.txt", f"cdm {n}", BOREAS)
        for n in ("randread-4k-qd1-nj1", "randread-4k-qd32-nj1", "randwrite-4k-qd1-nj1", "read-1m-qd1-nj1")
    },
    "boreas/rep-randread-4k-qd1-nj1-2.txt": (REP / "randread-4k-qd1-nj1-2.txt", "qd1 repeat (run 2)", BOREAS),
    "boreas/rep-randread-4k-qd16-nj1.txt": (REP / "randread-4k-qd16-nj1.txt", "qd16 repeat", BOREAS),
    "misc/fio-2.2-two-groups.txt": (FIXTURES / "fio" / "text-variants" / "fio-2.2-two-groups.txt", "", ",,,,,"),
    "misc/fio-2.0-randrw.txt": (FIXTURES / "fio" / "text-variants" / "fio-2.0-randrw.txt", "", ",,,,,"),
    "misc/fio-2.21-issued-rwt.txt": (FIXTURES / "fio" / "text-variants" / "fio-2.21-issued-rwt.txt", "", ",,,,,"),
    "misc/randrw_libaio_jsonplus.txt": (FIXTURES / "fio" / "3.33" / "randrw_libaio_jsonplus.txt", "", ",,,,,"),
    "atlas/iostat-w.txt": (FIXTURES / "zpool" / "published" / "iostat-w-0.8-trim-slag4-cut.txt", "latency hist", ATLAS),
    "atlas/iostat-l.txt": (FIXTURES / "zpool" / "iostat-l-openzfs2.txt", "wait times", ATLAS),  # CONSTRUCTED by hand
    "atlas/iostat-lq.txt": (FIXTURES / "zpool" / "published" / "iostat-lq-2.0-intervals-pool2.txt", "lq", ATLAS),
}


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    from storagelab.store import ingest

    raw = tmp_path_factory.mktemp("coldlab") / "raw"
    rows = ["path,study,label,host,os,stack,pool,devices,ram_bytes"]
    for name, (src, label, setup) in FILES.items():
        (raw / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, raw / name)
        rows.append(f"{name},{STUDY},{label},{setup}")
    (raw / "manifest.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    dest = raw.parent / "cold.duckdb"
    s = ingest([raw], db_path=dest, manifest_path=raw / "manifest.csv", parquet_dir=False, progress=False, workers=1)
    assert (s.ingested, s.failed) == (len(FILES), 0), s.errors
    return dest


@pytest.fixture(scope="module")
def res(db):
    with open_db(db) as con:
        return fio_views.analyse(con, Selection(study=STUDY), steady_rounds=3, excursion_pct=10, knee_gain_pct=20)


@pytest.fixture(scope="module")
def dev(db):
    with open_db(db) as con:
        return device_iostat.device_beside_fio(con, Selection(study=STUDY))


def test_a_transcript_borrows_no_option_from_another_machine(res):
    """h7 finding 4: fio-2.2-two-groups.txt (fio 2.2.10, no labels, no runtime in its output) took runtime=1s from
    boreas' fio 3.33 run and was flagged 'ran 20,026 ms against runtime=1 s (20.03x) ... a stall'; fio-2.0-randrw.txt
    took direct=1 size=8MiB from another unlabelled file. A run without a host or pool label borrows nothing."""
    assert not any("matched by what its output shows" in f for f in res.findings)
    runs = res.numbers.design.filter(pl.col("path").str.ends_with("fio-2.2-two-groups.txt"))
    assert runs.select("groupid", "workload", "workload_source").unique().sort("groupid").rows() == [
        (0, "randwrite bs=4KiB iodepth=1 numjobs=1 libaio direct=? size=? runtime=?", "output"),
        (1, "read bs=4KiB iodepth=32 numjobs=1 libaio direct=? size=? runtime=?", "output"),
    ]
    (flagged,) = [f for f in res.findings if f.startswith("fio-2.2-two-groups.txt (group 0")]
    assert flagged == "fio-2.2-two-groups.txt (group 0: randwrite): its slowest I/O took 44,735 ms (223 % of the run)."
    assert not any("runtime=1 s (20.03x)" in f for f in res.findings)
    randrw = res.numbers.design.filter(pl.col("path").str.ends_with("fio-2.0-randrw.txt"))
    assert set(randrw["workload"]) == {
        "randrw rwmixread=? bs=4KiB iodepth=4 numjobs=1 libaio direct=? size=? runtime=?"
    }


def test_a_cut_zpool_histogram_gives_no_quantiles_and_says_so(dev):
    """h7 finding 5: atlas/iostat-w.txt (zpool 0.8, pool slag4) stops at the 8us row; the table gave p99 'at most
    8191 ns' from the rows that survived and 0 I/Os for disk and total waits (their I/Os are above the cut), with no
    caveat. Now every row of the cut block has cut_at '8us' and no median or p99, and a line says what is missing."""
    lat = dev["latency"].sort("wait", "op", nulls_last=True)
    assert set(lat["cut_at"]) == {"8us"}
    assert lat["median_max_ns"].null_count() == lat["p99_max_ns"].null_count() == lat.height == 10
    assert lat.filter(pl.col("wait") == "asyncq_wait", pl.col("op") == "write")["ios"].to_list() == [
        18.0 * 2**10 + 1.72 * 2**20 + 10.0 * 2**20 + 10.9 * 2**20 + 3.81 * 2**20
    ]
    assert dev["lines"][0] == (
        "slag4 (report 0, iostat-w.txt): the `zpool iostat -w` histogram stops at the 8us row (the paste is cut; 37 "
        "rows run to 137s): I/Os that waited longer are not in it, so its counts are only those up to 8us and no "
        "median or p99 is given; disk_wait read, disk_wait write, total_wait read, total_wait write show 0 I/Os up "
        "to it: their I/Os, if any, are all above the cut"
    )
    assert not any("99 % at most" in line for line in dev["lines"])


def test_a_flag_resting_on_options_of_the_same_host_says_they_are_borrowed(tmp_path):
    """h7 finding 4, second half: where a transcript does borrow (the same host label on both files), a design flag
    computed from the borrowed runtime says the runtime is not the run's own."""
    from storagelab.store import ingest

    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copyfile(STD / "randwrite-4k-qd1-nj1.txt", raw / "json.txt")
    shutil.copyfile(FIXTURES / "fio" / "text-variants" / "fio-2.2-two-groups.txt", raw / "transcript.txt")
    (raw / "manifest.csv").write_text("path,study,host\njson.txt,one,lab9\ntranscript.txt,one,lab9\n")
    s = ingest([raw], db_path=tmp_path / "x.duckdb", manifest_path=raw / "manifest.csv", parquet_dir=False, workers=1)
    assert (s.ingested, s.failed) == (2, 0), s.errors
    with open_db(tmp_path / "x.duckdb") as con:
        res = fio_views.analyse(con, Selection(study="one"))
    assert (
        "transcript.txt: no command line or options: matched by what its output shows (rw, bs, iodepth, numjobs, "
        "ioengine) to `randwrite bs=4KiB iodepth=1 numjobs=1 libaio direct=1 size=16MiB runtime=1s`, the one "
        "workload of host lab9 it fits; direct, size, runtime, rwmixread taken from that workload (not in its "
        "output)." in res.findings
    )
    (flagged,) = [f for f in res.findings if f.startswith("transcript.txt (group 0")]
    assert flagged == (
        "transcript.txt (group 0: randwrite): ran 20,026 ms against runtime=1 s (20.03x): I/O it had issued did not "
        "complete in time (a stall); its slowest I/O took 44,735 ms (4474 % of the runtime); the runtime and size "
        "these checks use are not in its output: they are the options of the workload it was matched to (same "
        "setup)."
    )


def test_no_ratio_across_depths_from_flagged_runs(res):
    """h7 finding 14: every run behind '11,368 -> 67,054 (5.90x)' was flagged 'short' (1 s runs), yet the ratio was
    stated as a finding while the Test design paragraph said none heads a headline. A ratio now comes from unflagged
    runs only; with fewer than two depths of them, the sentence names the depths and flags and states none."""
    (qd,) = [f for f in res.findings if f.startswith("`randread bs=4KiB libaio direct=1 size=16MiB runtime=1s` read")]
    assert qd == (
        "`randread bs=4KiB libaio direct=1 size=16MiB runtime=1s` read on boreas | ext4 | layout not labelled | vda "
        "(virtio disk): runs at 1, 32 I/Os in flight, but every run on it is flagged: no ratio across depths is "
        "stated (a flagged run measures its test design, not the depth); their figures are in the table and chart, "
        "marked ⚠. Flagged run(s) on it: cdm randread-4k-qd1-nj1 (⚠ short), cdm randread-4k-qd32-nj1 (⚠ short)."
    )
    assert not any("5.90x" in f for f in res.findings)
    assert any(
        f.startswith("Test design: ") and f.endswith("none heads a headline or a ratio across depths):")
        for f in res.findings
    )


def test_the_headline_ranks_no_runs_of_different_workloads(res):
    """h7 finding 10: 'highest IOPS: fio-2.2-two-groups.txt: 84,648 IOPS (read, QD 32 x 1)' ranked a QD 32 read of
    an unlabelled machine against QD 4 random read/writes of others; runs are compared within one workload only.
    The large-block side has one unflagged run (boreas' 1 MiB reads are 'short'): it may head its line."""
    assert res.headline == {
        "runs": "10",
        "highest IOPS (blocks under 64 KiB)": "not ranked: the unflagged runs are of 3 workloads; runs are compared "
        "within one workload only (the findings above, per workload)",
        "highest bandwidth (blocks of 64 KiB and more)": "fio-2.21-issued-rwt.txt: 460.0 MiB/s (482.3 MB/s) (read)",
    }
    assert res.numbers.unranked == {
        "iops": [
            "`randrw rwmixread=? bs=4KiB libaio direct=? size=? runtime=?` read",
            "`randrw rwmixread=? bs=4KiB libaio direct=? size=? runtime=?` write",
            "`read bs=4KiB libaio direct=? size=? runtime=?` read",
        ]
    }
    assert res.verdict == (
        "Highest bandwidth fio-2.21-issued-rwt.txt at 460.0 MiB/s (482.3 MB/s); highest IOPS (blocks under 64 KiB): "
        "not ranked across 3 workloads."  # boreas' faster 1 MiB reads are of another workload
    )


def test_the_device_section_shows_the_average_waits_and_queues(dev):
    """h7 finding 9: atlas/iostat-l.txt was ingested (10 rows) but the section neither showed nor mentioned it."""
    assert dev["waits_table"].filter(pl.col("path").str.ends_with("iostat-l.txt")).drop("path").rows() == [
        ("tank", None, 0, None, "total_wait", 12e6, 3e6, None),
        ("tank", None, 0, None, "disk_wait", 8e6, 1e6, None),
        ("tank", None, 0, None, "syncq_wait", 45e3, 2e3, None),
        ("tank", None, 0, None, "asyncq_wait", 500e3, 2e6, None),
        ("tank", None, 0, None, "scrub", None, None, None),
        ("tank", None, 0, None, "trim", None, None, None),
    ]
    waits = [line for line in dev["lines"] if "average waits" in line or "queues (" in line]
    assert waits == [
        "tank (pool row, report 0 of iostat-l.txt, no time stamp: averages since the pool was imported): average "
        "waits (`zpool iostat -l`, as printed): total_wait read 12 ms, write 3 ms; disk_wait read 8 ms, write 1 ms; "
        "syncq_wait read 45 us, write 2 us; asyncq_wait read 500 us, write 2 ms; scrub not printed ('-'); trim not "
        "printed ('-')",
        "pool2 (pool row, report 0 of iostat-lq.txt, no time stamp: averages since the pool was imported): average "
        "waits (`zpool iostat -l`, as printed): total_wait read 252 us, write 800 us; disk_wait read 242 us, write "
        "113 us; syncq_wait read 6 us, write 1 us; asyncq_wait read 155 us, write 732 us; scrub 452 us; trim 2 ms",
        "pool2 (pool row, report 1 of iostat-lq.txt, no time stamp): average waits (`zpool iostat -l`, as printed): "
        "total_wait read 314 us, write 3 ms; disk_wait read 292 us, write 189 us; syncq_wait read 14 us, write 3 us; "
        "asyncq_wait read 133 us, write 3 ms; scrub not printed ('-'); trim 1 ms",
        "pool2 (pool row, report 0 of iostat-lq.txt, no time stamp): queues (`zpool iostat -q`, I/Os at the moment it printed): trimq_write 7 pending, 2 active (the other 5 queues "
        "empty)",
        "pool2 (pool row, report 1 of iostat-lq.txt, no time stamp): queues (`zpool iostat -q`, I/Os at the moment "
        "it printed): syncq_read 0 pending, 3 active (the other 5 queues empty)",
    ]
    assert not any("no `zpool iostat -l`" in line for line in dev["lines"])

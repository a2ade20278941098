"""The s34 new-user trial's own runs (tests/fixtures/fio/trial-h7, sources in its COMMANDS.md; findings in
/work/h7-trial-findings.md): 05 gives one line per configuration and ranks repeats never against each other (T11);
its headline ranks within one workload only, as 08's does (T12); a run fio stopped on an error is named in 05 and 08
and warned at ingest (T8)."""

from __future__ import annotations

import errno
import os
import shutil
import sys

import pytest
from conftest import FIXTURES, analyse_study, ingest_labelled

from storagelab.analysis import stacks
from storagelab.parsers.fio import failed

SRC = FIXTURES / "fio" / "trial-h7"
PHASE_PAIR = FIXTURES / "fio" / "newuser-h7" / "phase"  # the same trial's before/after pair, kept once
STUDY = "h7 homelab"
SETUP = "h7lab,Debian 12,ext4,single,1,1,loop0 (/dev/shm file),25276510208"
# the trial's manifest rows for these files (/tmp/h7ds/a/manifest.csv), paths flattened
MANIFEST = "path,study,label,host,os,stack,vdev_type,vdev_count,vdev_width,devices,ram_bytes,phase,notes\n" + "".join(
    f"{path},{STUDY},{label},{SETUP},{phase},{notes}\n"
    for path, label, phase, notes in (
        ("rr4k-qd16-run1.json", "ext4 rr4k run 1", "", ""),
        ("rr4k-qd16-run2.json", "ext4 rr4k run 2", "", ""),
        ("rr4k-qd16-run3.json", "ext4 rr4k run 3", "", ""),
        ("randread-1200M-direct.json", "ext4 big ENOSPC", "", "fio failed: ENOSPC"),
        ("randread-900M-direct.json", "ext4 900M 64k", "", ""),
        ("ext4-fdatasync-before.txt", "ext4 fdatasync", "before", "barrier=1 commit=5"),
        ("ext4-fdatasync-after.txt", "ext4 fdatasync", "after", "nobarrier commit=30"),
    )
)
RR4K = "`randread bs=4KiB iodepth=16 numjobs=1 libaio direct=1 size=128MiB runtime=3s`"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    raw = tmp_path_factory.mktemp("h7") / "raw"
    raw.mkdir()
    for f in [*SRC.iterdir(), *PHASE_PAIR.iterdir()]:
        if f.suffix in (".json", ".txt"):
            shutil.copyfile(f, raw / f.name)
    return ingest_labelled(raw, MANIFEST)


def test_05_gives_repeats_one_line_and_no_ratio_between_them(db):
    res = analyse_study(db, stacks.analyse, STUDY, direction="read", min_elapsed_s=1.0)
    text = [str(f) for f in res.findings]
    assert (
        f"{RR4K}: 3 repeats of one configuration (ext4 rr4k, mean 461.4 MiB/s (483.8 MB/s)), no other configuration "
        "to compare it with; repeats are not ranked against each other (their spread is under the repeats below)."
    ) in text
    assert not any("fastest run" in t or "0.72x" in t for t in text)  # was: run 3 fastest, run 1 at 0.72x of it
    assert stacks.table_lines(res["configs"]) == [
        "  1. ext4 rr4k                                     461.4 MiB/s =    483.8 MB/s  mean of 3 runs, ±194.5 MiB/s "
        "(95 % CI)  no device limit labelled",
        "  1. ext4 900M 64k                                1664.4 MiB/s =   1745.3 MB/s  1 run  no device limit labelled",
    ]
    # (397.3 + 438.2 + 548.6) / 3 = 461.4 MiB/s, the mean's cite names its arithmetic and the three runs' lines
    (mean,) = [c for f in res.findings if str(f).startswith(RR4K) for c in f.cites]
    assert (mean.text, mean.derivation, len(mean.inputs)) == ("461.4 MiB/s (483.8 MB/s)", "mean of 3 runs", 3)


def test_05_headline_ranks_within_one_workload_only(db):
    res = analyse_study(db, stacks.analyse, STUDY, direction="read", min_elapsed_s=1.0)
    # was: "Fastest read run with no flag: ext4 900M 64k at 1664 MiB/s" (a 64 KiB run against 4 KiB randread)
    assert res.verdict == (
        "Not ranked across 2 workloads: runs are compared within one workload only (each workload's ranking is in "
        "the findings)."
    )
    assert res.headline["fastest read run with no flag"] == (
        "not ranked: the unflagged runs are of 2 workloads; runs are compared within one workload only (the "
        "findings above, per workload)"
    )


ENOSPC = "ext4 big ENOSPC: fio reported error 28 (No space left on device) for job bigrr: no results."


def test_a_failed_run_is_named_in_05_and_08_and_warned_at_ingest(db):
    """T8: randread-1200M-direct.json, fio's job 'bigrr' with "error" : 28 (ENOSPC laying out the file), no I/O."""
    from storagelab.analysis import fio_views, open_db

    for analyse, kw in ((stacks.analyse, dict(direction="read", min_elapsed_s=1.0)), (fio_views.analyse, {})):
        res = analyse_study(db, analyse, STUDY, **kw)
        (said,) = [m for m in res.missing if "fio reported" in m]
        assert said == ENOSPC
        (c,) = said.cites
        assert (c.text, c.inputs[0]["line_start"]) == ("error 28 (No space left on device)", 9)
    with open_db(db) as con:
        rows = con.execute("SELECT path, warnings FROM files WHERE warnings LIKE '%fio reported%'").fetchall()
    assert [(p.rsplit("/", 1)[-1], w) for p, w in rows] == [
        (
            "randread-1200M-direct.json",
            "line 9: fio reported error 28 (No space left on device) for job bigrr: it stopped there, its results "
            "are what it did before (none if it had not started)",
        )
    ]


@pytest.mark.skipif(sys.platform != "linux", reason="the table names Linux's errno numbers")
def test_the_errno_table_is_linuxs():
    # each name is the errno module's constant of that number (EOPNOTSUPP and ENOTSUP are one number on Linux)
    assert {n: (n if getattr(errno, name) == n else name, msg) for n, (name, msg) in failed.ERRNO.items()} == {
        n: (n, os.strerror(n)) for n in failed.ERRNO
    }
    assert failed.describe(28) == "error 28 (No space left on device)"
    assert failed.describe(300) == "error 300 (not a Linux errno known here)"


PAIR = "`randwrite bs=4KiB iodepth=1 numjobs=1 psync direct=0 fdatasync=1 size=32MiB runtime=2s`"


def test_a_before_after_pair_shows_its_phase_and_what_its_notes_say(db):
    """T9: ext4-fdatasync-{before,after}.txt, one label, phase before/after, notes 'barrier=1 commit=5' /
    'nobarrier commit=30': every table tells the two rows apart, and the notes say what differs."""
    from storagelab.analysis import alignment, fio_views

    five = analyse_study(db, stacks.analyse, STUDY, direction="write", min_elapsed_s=1.0)
    assert stacks.table_lines(five["configs"]) == [
        "  1. ext4 fdatasync (after)                         72.2 MiB/s =     75.7 MB/s  1 run  no device limit labelled",
        "  2. ext4 fdatasync (before)                        63.0 MiB/s =     66.1 MB/s  1 run  no device limit labelled",
    ]
    (paired,) = [str(f) for f in five.findings if "the phase labels pair" in f]
    assert paired.startswith(
        f"{PAIR}: the phase labels pair its runs as before and after a change (their labels differ in notes "
        "('barrier=1 commit=5' / 'nobarrier commit=30') (the same host h7lab and stack ext4)), not as two stacks"
    )
    eight = analyse_study(db, fio_views.analyse, STUDY)
    assert eight["durable"]["run"].to_list() == ["ext4 fdatasync (after)", "ext4 fdatasync (before)"]
    (side,) = [str(f) for f in eight.findings if "Set side by side" in f]
    assert side == (
        "`randwrite bs=4KiB ioengine=psync iodepth=1, a sync after every write`: 2 runs, durable-write p99 from "
        "0.105 ms (ext4 fdatasync (before)) to 0.172 ms (ext4 fdatasync (after)). Set side by side only (their "
        "labels differ in notes ('barrier=1 commit=5' / 'nobarrier commit=30') (the same host h7lab and stack "
        "ext4); the phase labels pair them: before ext4 fdatasync (before), after ext4 fdatasync (after)): no "
        "ratio is stated as the effect of one change."
    )
    three = analyse_study(db, alignment.analyse, STUDY)
    assert (
        "2 fio output(s) are labelled phase=before/after (ext4 fdatasync): 03 compares bonnie++ runs only; 05 and "
        "08 set those fio runs side by side by phase"
    ) in three.missing


def _parse(rel: str):
    from storagelab.parsers import parse_bytes

    parsed, _ = parse_bytes((FIXTURES / rel).read_bytes(), rel)
    return parsed


def _waits(parsed) -> list[tuple]:
    return [
        (r["pool"], r["vdev"], r["sample"], r["wait"], r["op"], r["latency_ns"], r["line_start"])
        for r in parsed.rows("zpool_iostat_latency")
        if r["wait"] == "total_wait"
    ]


def test_arcstat_then_zpool_iostat_keeps_both_outputs():
    """T6: `arcstat 1` (5 rows) then `zpool iostat -vl 1` (2 intervals) in one transcript: both are read, the second
    with the file's line numbers; 08's device view then has the -l waits it asked for."""
    p = _parse("arcstats/linux-2.2-arcstat/arcstat-then-zpool-iostat-vl.log")
    assert (p.tool, p.format, p.count("arcstat_samples")) == ("arcstats", "arcstat", 50)  # 5 rows x 10 fields
    assert p.warnings == ["lines 9-21: read as `zpool iostat -vl 1` output (zpool-iostat), after the arcstat output"]
    assert [(r["pool"], r["vdev"], r["write_ops_per_s"], r["line_start"]) for r in p.rows("zpool_iostat")] == [
        ("default", None, 16.0, 13),
        ("default", "nvme-WD_BLACK_SN850X_4000GB_xxxxxxxxxxx", 16.0, 14),
        ("default", None, 107.0, 19),
        ("default", "nvme-WD_BLACK_SN850X_4000GB_xxxxxxxxxxx", 107.0, 20),
    ]
    assert _waits(p)[:2] == [  # 'total_wait 200us 98us' on line 13
        ("default", None, 0, "total_wait", "read", 200_000.0, 13),
        ("default", None, 0, "total_wait", "write", 98_000.0, 13),
    ]
    assert {r["command"] for r in p.rows("zpool_iostat")} == {"zpool iostat -vl 1"}


def test_zpool_iostat_r_then_l_keeps_the_histograms_and_reads_the_table():
    """T7: `zpool iostat -r` (lines 1-20) then a `zpool iostat -l` table (lines 22-25): was 'invalid: not zpool iostat
    -r output' at line 22, the whole file lost."""
    p = _parse("zpool/published/iostat-r-then-l-data.txt")
    assert (p.format, p.count("zpool_iostat_req_size")) == ("zpool-iostat-r", 192)  # 16 buckets x 6 classes x 2
    assert p.warnings == [
        "lines 22-25: read as zpool list/iostat output (zpool-iostat), after the zpool-iostat-r output"
    ]
    assert _waits(p) == [
        ("data", None, 0, "total_wait", "read", 585_000.0, 25),
        ("data", None, 0, "total_wait", "write", 1_000_000.0, 25),
    ]
    same = _parse("zpool/published/iostat-r-trim-data.txt")  # the same -r block alone: the same rows
    assert [{**r, "line_start": 0} for r in same.rows("zpool_iostat_req_size")] == [
        {**r, "line_start": 0} for r in p.rows("zpool_iostat_req_size")
    ]


def test_an_unknown_command_after_arcstat_is_named_not_dropped(tmp_path):
    text = (FIXTURES / "arcstats/linux-2.2-arcstat/arcstat-then-zpool-iostat-vl.log").read_text()
    f = tmp_path / "t.log"
    f.write_text(text.replace("zpool iostat -vl 1", "iostat -x 1"))
    from storagelab.parsers import parse_bytes

    p, _ = parse_bytes(f.read_bytes(), str(f))
    assert p.warnings == [
        "lines 9-21: the output of `iostat -x 1` after the arcstat output is not read: save it in its own file"
    ]
    assert p.count("arcstat_samples") == 50 and not p.rows("zpool_iostat")


def test_a_pool_member_zdb_marks_not_present_is_said_in_02_and_03(tmp_path):
    """T10: `zdb` of host ninetales, pool Data's first disk printed with `not_present: 1` (lines 74-84)."""
    from conftest import ingest_unlabelled

    from storagelab.analysis import alignment, recordsize

    db = ingest_unlabelled([FIXTURES / "zdb-config/published/ninetales-zdb-not-present.txt"], tmp_path)
    said = (
        "Pool Data: its zdb configuration (ninetales-zdb-not-present.txt) marks disk "
        "/dev/disk/by-id/ata-TOSHIBA_DT01ACA300_365XDT3KS as not present (its device was missing): when it was read, "
        "the pool ran with that member missing (degraded), not as the layout its labels give; runs on the pool then "
        "measured it so (whether the runs were made then, the logs do not say)."
    )
    for analyse in (alignment.analyse, recordsize.analyse):
        res = analyse_study(db, analyse, "(unlabelled)")
        (f,) = [f for f in res.findings if "zdb configuration" in f]
        assert str(f) == said
        assert [(c.text, c.inputs[0]["line_start"], c.inputs[0]["line_end"]) for c in f.cites] == [
            ("not present (its device was missing)", 74, 84)
        ]


def test_many_steady_state_verdicts_are_one_table(tmp_path):
    """T10: the lab's ten `--repeat auto` runs of randread QD1 with their bw logs (h8's fixture
    tests/fixtures/fio/newuser-h7/lab): ten series, one table row each; a sentence only where the cell cannot say it
    all (where a run left its band, dips, two regimes). The trial's whole lab study gave 400 such sentences."""
    from conftest import ingest_unlabelled

    from storagelab.analysis import fio_views

    lab = FIXTURES / "fio/newuser-h7/lab"
    db = ingest_unlabelled(sorted(p for p in lab.iterdir() if p.suffix in (".txt", ".log")), tmp_path)
    res = analyse_study(db, fio_views.analyse, "(unlabelled)")
    table = res["steady_states"]
    assert table.columns == ["run", "direction", "bw"]
    assert dict(zip(table["run"], table["bw"], strict=True)) == {
        "randread-4k-qd1-nj1": "not steady",
        **{f"randread-4k-qd1-nj1-{k}": "not steady, dips" for k in (10, 2, 3, 9)},
        "randread-4k-qd1-nj1-4": "two regimes",
        **{f"randread-4k-qd1-nj1-{k}": "not steady" for k in (5, 6, 7, 8)},
    }
    said = [f for f in res.findings if " bw read: " in f]
    assert [f.split(" bw read: ")[0] for f in said] == [
        "randread-4k-qd1-nj1",  # falls to 65.8 MiB/s at 4.5 s after a window that met both criteria
        *(f"randread-4k-qd1-nj1-{k}" for k in (10, 2, 3, 4, 9)),
    ]
    assert (
        "Steady-state verdicts of 10 logged series (10 runs and directions x log kinds): 9 not steady, 1 two regimes; "
        "one row per run in the table of steady states"
    ) in " ".join(res.findings)


@pytest.mark.e2e
def test_05_notebook_prints_one_line_per_configuration(db, tmp_path):
    """Notebook 05 run by papermill on the trial's small database: its table prints the repeats' mean, never the
    three repeats ranked, and its missing list names the failed run."""
    import json

    from storagelab import report

    params = {"db_path": str(db), "study": STUDY, "direction": "read", "min_elapsed_s": 1.0}
    (run,) = report.run_notebooks(["05_stacks"], params, out_dir=tmp_path, jobs=1)
    assert run.ok, run.error
    nb = json.loads((tmp_path / "executed" / "05_stacks.ipynb").read_text())
    outs = [o for c in nb["cells"] for o in c.get("outputs", [])]
    text = "\n".join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/markdown", "")) for o in outs)
    (table,) = ["".join(o["text"]) for o in outs if "mean of 3 runs" in "".join(o.get("text", ""))]
    assert "  1. ext4 rr4k                                     461.4 MiB/s =    483.8 MB/s  mean of 3 runs" in table
    assert "run 1" not in table and "run 3" not in table  # was: '1. ext4 rr4k run 3 ... 3. ext4 rr4k run 1'
    assert ENOSPC in text

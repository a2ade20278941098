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
    for f in SRC.iterdir():
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
        "(95 % CI)",
        "  1. ext4 900M 64k                                1664.4 MiB/s =   1745.3 MB/s  1 run",
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
        "  1. ext4 fdatasync (after)                         72.2 MiB/s =     75.7 MB/s  1 run",
        "  2. ext4 fdatasync (before)                        63.0 MiB/s =     66.1 MB/s  1 run",
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

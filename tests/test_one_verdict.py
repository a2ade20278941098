"""One set of runs, one verdict, in every report: notebooks 05 (stacks), 08 (fio) and 10 (disk card) leave out the
same runs for the same reasons (``run_verdicts``, the one rule), and wherever two of them report the same
configuration they count the same runs and give the same mean. The s34 trial (/work/h7-trial-findings.md T1, T3)
had found one set of runs with two means and two run counts in two reports, and a 60 s run that falls to 82 MiB/s
mid-run shown in 05 unmarked.

Data: the trial's whole fio data set as the trial labelled it (tests/fixtures/fio/newuser-h7 and trial-h7, laid out
as /tmp/h7ds/a/ was, its manifest rows below verbatim, the lab's ten --repeat auto runs in study 'lab'), the seeds'
database (every study), and the h6 trial's logs (tests/fixtures/fio/newuser-h6) labelled here in a way of our own,
read with parameters other than the notebooks' defaults."""

from __future__ import annotations

import csv
import io
import shutil

import polars as pl
import pytest
from conftest import FIXTURES, ingest_labelled

from storagelab.analysis import Selection, design, disk_card, fio_views, open_db, run_verdicts, stacks
from storagelab.analysis import prose as P

SEVEN, TRIAL, H6 = (FIXTURES / "fio" / d for d in ("newuser-h7", "trial-h7", "newuser-h6"))
NOT_LOGS = shutil.ignore_patterns("*.expected.jsonl", "*.md")
SETUP = "h7lab,Debian 12,ext4,single,1,1,loop0 (/dev/shm file),25276510208"
XFS = "h7lab,Debian 12,xfs,single,1,1,loop1 (/dev/shm file),25276510208"
MFS = "h7lab,Debian 12,mergerfs+ext4+xfs,,,,loop0+loop1,25276510208"
R10 = ",,btrfs-raid10,raid10,1,4,4x loop (/dev/shm files),25276510208"
R5 = ",,btrfs-raid5,raid5,1,3,3x loop (/dev/shm files),25276510208"
LONG = [f"long/{f},h7 homelab,ext4 60 s «long»,{SETUP},," for f in (
    "randwrite-60s.json", *(f"long60_{k}.1.log" for k in ("bw", "iops", "lat", "clat", "slat")))]  # fmt: skip
# the trial's manifest rows for its fio runs (/tmp/h7ds/a/manifest.csv, verbatim; its bonnie++ rows left out)
TRIAL_MANIFEST = "\n".join(
    [
        "path,study,label,host,os,stack,vdev_type,vdev_count,vdev_width,devices,ram_bytes,phase,notes",
        *(f"ext4/rr4k-qd16-run{k}.json,h7 homelab,ext4 rr4k run {k},{SETUP},," for k in (1, 2, 3)),
        f"ext4/randwrite-1s.txt,h7 homelab,ext4 écriture 1 s,{SETUP},,",
        f"ext4/seqwrite-buffered-256M.txt,h7 homelab,ext4 buffered 256M,{SETUP},,",
        f"ext4/randread-1200M-direct.json,h7 homelab,ext4 big ENOSPC,{SETUP},,fio failed: ENOSPC",
        f"ext4/randread-900M-direct.json,h7 homelab,ext4 900M 64k,{SETUP},,",
        *LONG,
        f"phase/ext4-fdatasync-before.txt,h7 homelab,ext4 fdatasync,{SETUP},before,barrier=1 commit=5",
        f"phase/ext4-fdatasync-after.txt,h7 homelab,ext4 fdatasync,{SETUP},after,nobarrier commit=30",
        f"xfs/fsync-4k.txt,h7 homelab,xfs fsync 4k,{XFS},,",
        f"xfs/fdatasync-4k.json,h7 homelab,xfs fdatasync 4k,{XFS},,",
        f"xfs/fdatasync-4k-normal.txt,h7 homelab,xfs fdatasync 8k ✓,{XFS},,",
        f"xfs/randrw70.json,h7 homelab,xfs mix 70/30,{XFS},,",
        f"mfs/seqread-1M.txt,h7 homelab,mergerfs ext4+xfs,{MFS},,",
        f"mfs/randread-4k-direct.json,h7 homelab,mergerfs ext4+xfs,{MFS},,",
        *(f"b10/grid-nj{nj}-qd{qd}.txt,h7 raid Ω,btrfs raid10 4 Ω,{R10},," for nj in (1, 4) for qd in (1, 8, 32)),
        f"b5/seqw1M.txt,h7 raid Ω,btrfs raid5 seq,{R5},,",
        *(f"b5/r5seq_{k}.1.log,h7 raid Ω,btrfs raid5 seq,{R5},," for k in ("bw", "lat", "clat", "slat")),
        f"b5/randwrite4k.json,h7 raid Ω,btrfs raid5 rw4k,{R5},,",
    ]
)


def _lab_rows() -> str:
    """The lab's manifest rows of its ten --repeat auto runs (as tests/test_newuser_h7.py rebuilds them), in study
    'lab' of the same database, paths under lab/."""
    from test_newuser_h7 import LAB_NOTES, LAB_RUNS

    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    fixed = ["vm", "Debian GNU/Linux 12 (bookworm) (kernel 6.18.44-fc-v657)", "ext4", "single", "1", "1"]
    for s in LAB_RUNS:
        label = "randread-4k-qd1-nj1" + (f" (run {s[1:]})" if s else "")
        for f in (f"randread-4k-qd1-nj1{s}.txt", f"randread-4k-qd1-nj1{s}_bw.1.log"):
            w.writerow([f"lab/{f}", "lab", label, *fixed, "/dev/loop0 (unknown model)", "25276510208", "", LAB_NOTES])
    return out.getvalue()


@pytest.fixture(scope="module")
def trial_db(tmp_path_factory):
    raw = tmp_path_factory.mktemp("h7a") / "raw"
    shutil.copytree(SEVEN, raw, ignore=NOT_LOGS)
    for f in TRIAL.iterdir():
        if f.suffix == ".json":
            shutil.copyfile(f, raw / "ext4" / f.name)
    return ingest_labelled(raw, TRIAL_MANIFEST + "\n" + _lab_rows())

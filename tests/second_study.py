"""A second study made only of real tool outputs under tests/fixtures/, labelled as a user would label their
own logs, in a project of its own (a copy of notebooks/, papers/ and data/raw/ under a temporary root).

The analyses must answer for it as they do for the source studies: its numbers, its figures, its claims,
and none of the source studies' numbers, prose or claims.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
STUDY = "fixturelab"
# the environment as the session started: the build may run in a thread beside tests that set variables in-process
# (report.run_notebooks sets the report folder's), and must not inherit them
ENV = dict(os.environ)

CMD_SEQ = "fio --directory=. --ioengine=psync --direct=1 --name=seqwrite --rw=write --bs=1M --size=32M --rate=16m --numjobs=2 --group_reporting"

# file under data/raw/fixturelab/ -> (real output under tests/fixtures/, manifest labels)
FILES = {
    "zdb-b-ztest.txt": (
        "zdb/2.1/b.txt",
        dict(pool="ztest", label="zdb -b ztest"),
    ),  # no prompt line: pool from the manifest
    "zdb-bb-ztest.txt": ("zdb/2.1/bb.txt", dict(pool="ztest", label="zdb -bb ztest")),  # block size histogram
    "zdb-S-ztest.txt": ("zdb/2.1/S.txt", dict(pool="ztest", label="zdb -S ztest")),
    "zdb-DD-ztest.txt": ("zdb/2.1/DD.txt", dict(pool="ztest", label="zdb -DD ztest")),
    "fio-seq-write.txt": (
        "fio/3.33/seq_write_group.txt",
        dict(label="seq write 1M, 2 jobs", stack="ext4", host="lab1"),
    ),
    "fio-seq-read.txt": (
        "fio/3.33/seq_read_group_jsonplus.txt",
        dict(label="seq read 1M, 2 jobs", stack="ext4", host="lab1"),
    ),
    "fio-randrw.txt": ("fio/3.33/randrw_libaio_jsonplus.txt", dict(label="randrw 4k QD4", stack="ext4", host="lab1")),
    "fio-two-groups.txt": ("fio/3.33/two_groups.txt", dict(label="write then randread", stack="ext4", host="lab1")),
    "fio-kb1000.txt": ("fio/3.33/kb_base_1000.txt", dict(label="write 256k kb_base=1000", stack="xfs", host="lab2")),
    "bonnie-before.txt": (
        "bonnie/2.00a/plain.out.txt",
        dict(label="bonnie before", phase="before", partition_start_sector="63"),
    ),
    "bonnie-after.txt": (
        "bonnie/2.00a/x1.out.txt",
        dict(label="bonnie after", phase="after", partition_start_sector="2048"),
    ),
    "fdisk-dos63.txt": ("partitions/fdisk-dos63.txt", dict(label="fdisk -l, MBR at 63")),
    "fdisk-dos2048.txt": ("partitions/fdisk-dos2048.txt", dict(label="fdisk -l, MBR at 2048")),
    "mbuffer-3000m.txt": ("mbuffer/20230301/stderr-3000m.txt", dict(label="dd 3000M through mbuffer")),
    "mbuffer-200m.txt": ("mbuffer/20230301/stderr-200m.txt", dict(label="dd 200M through mbuffer")),
    # a fio run with its log files (log_avg_msec=500, 2 jobs): the output and its bw/iops/clat logs
    "avg.txt": ("fio/3.33/logs/avg.txt", dict(label="seq write 64k with logs", stack="ext4", host="lab2")),
    **{
        f"avg_{kind}.{n}.log": (f"fio/3.33/logs/avg_{kind}.{n}.log", dict(label=f"avg {kind} log job {n}", host="lab2"))
        for kind in ("bw", "iops", "clat")
        for n in (1, 2)
    },
}
# a user's own claims file: one value that holds, one that does not, one formula
CLAIMS = [
    dict(
        claim_id="fixturelab-seq-write-bw",
        quantity="seq write 1M, 2 jobs, group bandwidth",
        value="32768",
        unit="KiB/s",
        value_base="33554432",
        base_unit="bytes/s",
        target=f"{STUDY}/fio-seq-write.txt",
        metric="write.bw_bytes_per_s",
        tolerance="0.01",
        notes="--rate=16m per job, 2 jobs",
    ),
    dict(
        claim_id="fixturelab-bp-count",
        quantity="zdb -b bp count of ztest",
        value="9999",
        unit="bps",
        value_base="9999",
        base_unit="count",
        target=f"{STUDY}/zdb-b-ztest.txt",
        metric="bp_count",
        tolerance="0",
        notes="deliberately wrong",
    ),
]


def _manifest_rows(root: Path) -> list[dict]:
    rows = []
    for name, (src, labels) in FILES.items():
        dest = root / "data" / "raw" / STUDY / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(FIXTURES / src, dest)
        row = {"path": f"{STUDY}/{name}", "study": STUDY, **labels}
        if name == "fio-seq-write.txt":
            row["command"] = CMD_SEQ
        rows.append(row)
    return rows


def make_project(root: Path, with_seeds: bool = True) -> Path:
    """A project under ``root``: notebooks/ and papers/ copied, data/raw/ = the seeds (optional) + fixturelab."""
    shutil.copytree(ROOT / "notebooks", root / "notebooks")
    shutil.copytree(ROOT / "papers", root / "papers")
    raw = root / "data" / "raw"
    if with_seeds:
        shutil.copytree(ROOT / "data" / "raw", raw)
    raw.mkdir(parents=True, exist_ok=True)
    manifest = raw / "manifest.csv"
    header = (ROOT / "data" / "raw" / "manifest.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
    existing = manifest.read_text(encoding="utf-8") if manifest.exists() else ",".join(header) + "\n"
    with open(manifest, "w", newline="", encoding="utf-8") as fh:
        fh.write(existing if existing.endswith("\n") else existing + "\n")
        w = csv.DictWriter(fh, fieldnames=header, lineterminator="\n")
        for row in _manifest_rows(root):
            w.writerow({k: row.get(k, "") for k in header})
    from storagelab.claims import COLUMNS

    (root / "papers" / STUDY).mkdir()
    with open(root / "papers" / STUDY / "claims.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(COLUMNS), lineterminator="\n")
        w.writeheader()
        for c in CLAIMS:
            w.writerow(
                {
                    **{k: "" for k in COLUMNS},
                    **c,
                    "study": STUDY,
                    "source": "my lab notes",
                    "notebook": "05_stacks" if c["metric"].startswith("write") else "04_dedup_ddt",
                    "check": "raw",
                }
            )
    return root


def storagelab(root: Path, *args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    env = dict(ENV, STORAGELAB_ROOT=str(root), PYTHONPATH=str(ROOT / "lib"))
    return subprocess.run(
        [sys.executable, "-m", "storagelab", *args], env=env, cwd=root, capture_output=True, text=True, timeout=timeout
    )

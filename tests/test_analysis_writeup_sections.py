"""Runs under different headings of a Markdown write-up are never repeats, in every format that can carry several
runs in one file: fio (``fio_sections``) and bonnie++ (``bonnie_runs.section``), with or without a manifest label
(the manifest labels the whole file; its sections are as many machines or configurations)."""

from __future__ import annotations

import shutil

import polars as pl
import pytest
from conftest import FIXTURES, ingest_labelled

from storagelab.analysis import Selection, bonnie_table, fio_depth, fio_runs, open_db
from storagelab.parsers import parse_bytes

PUB = FIXTURES / "bonnie" / "published"
VPS = FIXTURES / "fio" / "published" / "fio-3.1-vps-writeup-five-machines.txt"
NODE1, NODE2 = "node 1 (before the firmware update)", "node 2 (after it)"


def writeup() -> bytes:
    """Two real bonnie++ 1.97 outputs of one host name (ceph-admin) pasted into a write-up under two headings."""
    run1, run2 = ((PUB / f"bonnie-1.97-ceph-admin-run{k}.txt").read_text() for k in (1, 2))
    return (
        f"# bonnie++ on our two ceph nodes\n\nSame host name on both (a cloned image).\n\n## {NODE1}\n\n```\n{run1}```\n"
        f"\n## {NODE2}\n\n```\n{run2}```\n"
    ).encode()


def test_bonnie_runs_carry_their_heading():
    parsed, _ = parse_bytes(writeup(), "writeup.txt")
    head = "bonnie++ on our two ceph nodes > "
    assert [(r["run_index"], r["source"], r["line_start"], r["section"]) for r in parsed.rows("bonnie_runs")] == [
        (0, "text", 11, head + NODE1),
        (1, "csv", 18, head + NODE1),
        (2, "text", 27, head + NODE2),
        (3, "csv", 34, head + NODE2),
    ]
    # no fences, no sections: a log whose script echoes '# run 2' is one file of appended runs
    plain, _ = parse_bytes(writeup().replace(b"```\n", b""), "log.txt")
    assert {r["section"] for r in plain.rows("bonnie_runs")} == {None}


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    """One ingest: the bonnie++ write-up unlabelled (study w1) and labelled (w2: one more blank line, so it is not a
    copy), and the five-machine fio write-up labelled (w3)."""
    raw = tmp_path_factory.mktemp("writeups") / "raw"
    raw.mkdir()
    (raw / "writeup.txt").write_bytes(writeup())
    (raw / "labelled.txt").write_bytes(writeup() + b"\n")
    shutil.copy(VPS, raw / VPS.name)
    rows = ["writeup.txt,w1,", "labelled.txt,w2,ceph nodes", f"{VPS.name},w3,vps write-up"]
    con = open_db(ingest_labelled(raw, "path,study,label\n" + "\n".join(rows) + "\n"))
    yield con
    con.close()


@pytest.mark.parametrize("study, base", [("w1", "writeup.txt"), ("w2", "ceph nodes")])
def test_bonnie_runs_under_two_headings_are_two_setups(db, study, base):
    res = bonnie_table.analyse(db, Selection(study=study))
    tab = res["table"]
    assert tab.select("setup", "setup_runs").rows() == [(f"{base} § {NODE1}", 1), (f"{base} § {NODE2}", 1)]
    assert not [f for f in res.findings if "runs of one setup" in f or "repeats" in f]


def test_fio_runs_of_a_labelled_writeup_are_one_setup_per_machine(db):
    """The manifest labels the whole write-up 'vps write-up': its five machines are five setups for the repeats
    (``config_label``) and for the depth curves (``fio_depth``: one curve had pooled them, 'mean of 5 runs')."""
    runs = fio_runs.runs(db, Selection(study="w3")).sort("doc_index")
    names = runs.select(fio_runs.config_label(runs).alias("n"))["n"].to_list()
    assert names[:4] == [
        "vps write-up § aws ec2 micro - 990M",
        "vps write-up § aws ec2 micro - 990M",
        "vps write-up § gcloud micro - 585M",
        "vps write-up § gcloud micro - 585M",
    ]
    assert pl.Series(names).n_unique() == 5
    setups = runs.select(fio_depth._setup(runs, fio_depth.config(runs)).alias("s"))["s"].unique().sort().to_list()
    assert setups == [
        f"vps write-up § {m} | host not labelled | stack not labelled | layout not labelled"
        for m in ("aws ec2 micro - 990M", "gcloud micro - 585M", "linode - 989M",
                  "upcloud - 992M (/usr/bin/python missing, install via: apt-get install python)", "vultr - 488M")
    ]  # fmt: skip

"""reliability-3 low 2: with the homelab-mergerfs logs relabelled `my nas`, `build` still ran 05_stacks for study
homelab-mergerfs (the notebook's default, a paper's study) with no word on the console, and a report folder of a
study no file carries any more stayed in index.html as if current. Done as the campaign did: real relabelling in
manifest.csv, then a real build (of a small project: the homelab-mergerfs paper and a notebook with 05_stacks'
parameters)."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import RAW, ROOT

from storagelab import report

pytestmark = pytest.mark.slow


def _build(project: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"), STORAGELAB_ROOT=str(project))
    return subprocess.run(
        [sys.executable, "-m", "storagelab", "build"], capture_output=True, text=True, env=env, timeout=900
    )


def _label(raw: Path, study: str) -> None:
    logs = sorted(p.name for p in (raw / "homelab-mergerfs").iterdir())[:3]
    with open(raw / "manifest.csv", "w", newline="") as fh:
        csv.writer(fh).writerows([["path", "study"], *[[f"homelab-mergerfs/{n}", study] for n in logs]])


def _plan_only(notebook: Path, dest: Path) -> None:
    """``notebook`` as the build's plan reads it, its parameters cell (the study it defaults to, whether it takes a
    study), with a body that prints the study: what is tested is the build's plan, notes, folders and index, not the
    notebook's analysis (05's took 2/3 of this test's CPU, four runs)."""
    nb = nbformat.read(notebook, as_version=4)
    nb.cells = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(nb.cells) == 1
    nb.cells.append(nbformat.v4.new_code_cell("print(study)"))
    nbformat.write(nb, dest)


def _notes(r: subprocess.CompletedProcess) -> list[str]:
    return [ln for ln in r.stderr.splitlines() if ln.startswith("note: ") and "schema (re)created" not in ln]


def test_a_relabelled_study_is_said_in_one_line_and_its_old_reports_leave_the_index(tmp_path):
    project = tmp_path / "project"
    (project / "notebooks").mkdir(parents=True)
    nb = project / "notebooks" / "05_stacks.ipynb"
    _plan_only(ROOT / "notebooks" / "05_stacks.ipynb", nb)
    shutil.copytree(ROOT / "papers" / "homelab-mergerfs", project / "papers" / "homelab-mergerfs")
    raw = project / "data" / "raw"
    raw.mkdir(parents=True)
    logs = sorted((RAW / "homelab-mergerfs").iterdir())[:3]
    (raw / "homelab-mergerfs").mkdir()
    for p in logs:
        shutil.copy(p, raw / "homelab-mergerfs" / p.name)
    reports = project / "reports"

    _label(raw, "my nas")  # the campaign's relabelling
    r = _build(project)
    assert r.returncode == 0, r.stderr
    spaced = report.report_dir(nb, {"study": "my nas"}).name
    assert _notes(r) == [
        "note: no file is labelled study 'homelab-mergerfs': its reports show papers/homelab-mergerfs/'s claims "
        "without data"
    ], r.stderr
    index = (reports / "index.html").read_text()
    assert f"<h2 id='{spaced}'>my nas</h2>" in index

    _label(raw, "lab2")  # relabelled again: reports/<my nas>/ is from the earlier build, no file carries 'my nas'
    r = _build(project)
    assert r.returncode == 0, r.stderr
    assert _notes(r) == [
        "note: no file is labelled study 'homelab-mergerfs': its reports show papers/homelab-mergerfs/'s claims "
        "without data",
        f"note: {reports / spaced} holds reports of study 'my nas', which no file is labelled with now: left out of "
        "index.html (delete the folder if it is not needed)",
    ], r.stderr
    index = (reports / "index.html").read_text()
    assert "<h2 id='lab2'>lab2</h2>" in index
    assert spaced not in index and "my nas" not in index
    assert (reports / spaced / "executed").is_dir()  # kept: the user's to delete


def test_a_papers_study_that_ships_no_logs_gets_no_note(tmp_path, monkeypatch):
    """ars-zfs-vs-raid has claims and no data/raw/ars-zfs-vs-raid/: its reports are claims alone by design, so the
    build says nothing of it; a study whose logs folder exists but whose files carry no label is named."""
    (tmp_path / "homelab-mergerfs").mkdir()
    monkeypatch.setattr(report.paths, "RAW", tmp_path)
    monkeypatch.setattr(report, "_folder_and_identity", lambda nb, p: (None, {"selection": {"study": p["study"]}}))
    plan = [(Path(f"{s}.ipynb"), {"study": s}) for s in ("ars-zfs-vs-raid", "homelab-mergerfs", "thumper-x4500")]
    assert report.studies_without_files(plan, {"thumper-x4500"}) == ["homelab-mergerfs"]

"""Report folders are unique per selection (issue 26, high 4): studies `my nas` and `my_nas` rendered into one
reports/my_nas/ with exit 0, and index.html lost one of them. Two selections never share a folder; a folder that
holds another selection's reports is an error, never a silent overwrite."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, ROOT

from storagelab import report


def _cli(project: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"), STORAGELAB_ROOT=str(project))
    return subprocess.run(
        [sys.executable, "-m", "storagelab", *args], capture_output=True, text=True, env=env, timeout=600
    )


def test_selections_that_one_folder_name_would_spell_get_folders_of_their_own():
    nb = ROOT / "notebooks" / "08_fio.ipynb"
    names = {
        study: report.report_dir(nb, {"study": study}).name
        for study in ("my nas", "my_nas", "my/nas", "all", "(unlabelled)", "unlabelled", "a--stack-zfs", "a-")
    }
    assert names["my_nas"] == "my_nas" and names["unlabelled"] == "unlabelled"  # spelled as they are: unchanged
    assert names["my nas"].startswith("my_nas~") and names["my/nas"].startswith("my_nas~")
    assert names["all"].startswith("all~") and names["(unlabelled)"].startswith("unlabelled~")
    assert names["a--stack-zfs"].startswith("a--stack-zfs~")
    assert report.report_dir(nb, {"study": "a", "stack": "zfs"}).name == "a--stack-zfs"
    assert report.report_dir(ROOT / "notebooks" / "07_explore.ipynb", {}).name == "all"  # every study
    assert len(set(names.values())) == len(names)
    assert names["my nas"] == report.report_dir(nb, {"study": "my nas"}).name  # the same selection, the same folder


def test_folders_never_differ_only_in_case():
    """reliability-5 (processes) low 3: studies `my_nas` and `My_NAS` got folders `my_nas` and `My_NAS`, one folder
    on a case-insensitive filesystem (macOS, Windows, an SMB share), where the build then refused the second
    selection. A name with a capital letter now gets its hash too (keeping its letters), so the folders of two
    selections differ in more than case."""
    nb = ROOT / "notebooks" / "08_fio.ipynb"
    studies = ("my_nas", "My_NAS", "MY_NAS", "my_NAS")
    names = [report.report_dir(nb, {"study": s}).name for s in studies]
    assert names[0] == "my_nas" and all(n.startswith(s + "~") for n, s in zip(names[1:], studies[1:], strict=True))
    assert len({n.lower() for n in names}) == 4
    assert report.report_dir(nb, {"study": "a", "stack": "ZFS"}).name.startswith("a--stack-ZFS~")


@pytest.mark.slow
def test_build_of_studies_my_nas_and_my_underscore_nas_keeps_both_reports(tmp_path):
    """The campaign's steps: studies `my nas` and `my_nas` in the manifest, then build."""
    project = tmp_path / "project"
    (project / "notebooks").mkdir(parents=True)
    (project / "papers").mkdir()
    shutil.copy(ROOT / "notebooks" / "08_fio.ipynb", project / "notebooks")
    raw = project / "data" / "raw"
    raw.mkdir(parents=True)
    shutil.copy(FIXTURES / "fio" / "3.33" / "seq_write_group.txt", raw / "a.txt")
    shutil.copy(FIXTURES / "fio" / "3.33" / "seq_read_group_jsonplus.txt", raw / "b.txt")
    with open(raw / "manifest.csv", "w", newline="") as fh:
        csv.writer(fh).writerows([["path", "study"], ["a.txt", "my nas"], ["b.txt", "my_nas"]])
    r = _cli(project, "build")
    assert r.returncode == 0, r.stdout + r.stderr
    reports = project / "reports"
    folders = sorted(d.name for d in reports.iterdir() if d.is_dir() and d.name != "_thumbnails")  # the index's
    spaced = report.report_dir(project / "notebooks" / "08_fio.ipynb", {"study": "my nas"}).name
    assert folders == sorted(["my_nas", spaced])
    assert {d.name for d in reports.iterdir() if d.is_dir()} == {*folders, "_thumbnails"}
    studies = {
        name: json.loads((reports / name / "summaries" / "08_fio.json").read_text())["study"] for name in folders
    }
    assert studies == {"my_nas": "my_nas", spaced: "my nas"}
    assert json.loads((reports / spaced / ".selection.json").read_text()) == {
        "selection": {"study": "my nas"},
        "parameters": {},
    }
    index = (reports / "index.html").read_text()
    assert f"href='{spaced}/08_fio.html'" in index and "href='my_nas/08_fio.html'" in index
    assert f"<h2 id='{spaced}'>my nas</h2>" in index and "<h2 id='my_nas'>my_nas</h2>" in index

    # a folder that holds another selection's reports is refused, before anything runs
    (reports / "my_nas" / ".selection.json").write_text(json.dumps({"selection": {"study": "x"}, "parameters": {}}))
    r = _cli(project, "run", "08_fio", "-p", "study", "my_nas")
    assert r.returncode == 2
    assert r.stderr == (
        f"storagelab run: {reports / 'my_nas'} holds the reports of study 'x', not of study 'my_nas': "
        "move that folder away, or run with --output\n"
    )


@pytest.mark.slow
def test_report_after_a_killed_run_says_the_page_is_unfinished(tmp_path):
    """reliability-2 low: `report` after a killed `run` rendered a notebook whose cells were still "running" as
    a normal page. Here `run` is SIGKILLed in the middle of a cell: since reliability-13 its half-run notebook stays
    in its own run folder and the report folder is as it was (no page); put where a run killed before left it, the
    notebook renders as unfinished."""
    import signal
    import time

    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    project = tmp_path / "project"
    (project / "notebooks").mkdir(parents=True)
    (project / "papers").mkdir()
    nb = new_notebook(
        cells=[
            new_code_cell("answer = 42  # a number", metadata={"tags": ["parameters"]}),
            new_code_cell("print('first')"),
            new_code_cell("import time\ntime.sleep(120)"),
            new_code_cell("print('never')"),
        ],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    nbformat.write(nb, project / "notebooks" / "slow.ipynb")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"), STORAGELAB_ROOT=str(project))
    p = subprocess.Popen(
        [sys.executable, "-m", "storagelab", "run", "slow"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    end = time.monotonic() + 120
    while time.monotonic() < end:  # papermill saves the notebook as each cell starts
        staged = list((project / "reports" / "all").glob(".storagelab-run-*/executed/slow.ipynb"))
        executed = staged[0] if staged else project / "nowhere"
        if executed.exists() and "time.sleep(120)" in executed.read_text():
            cells = nbformat.read(executed, as_version=4).cells
            if cells[-2].metadata.get("papermill", {}).get("status") == "running":
                break
        time.sleep(0.1)
    else:
        p.kill()
        pytest.fail("the slow cell never started")
    p.send_signal(signal.SIGKILL)
    p.wait(30)
    assert not (project / "reports" / "all" / "executed").exists()  # the report folder as it was: empty
    (project / "reports" / "all" / "executed").mkdir()
    shutil.copy(executed, project / "reports" / "all" / "executed" / "slow.ipynb")  # where the old run left it
    r = _cli(project, "report")
    assert r.returncode == 0, r.stderr
    notice = (
        "This run did not finish: it stopped at code cell 3 of 4 (killed or interrupted), and 2 cell(s) did not "
        "run; what follows is incomplete. Run the notebook again."
    )
    page = (project / "reports" / "all" / "slow.html").read_text()
    assert f'<div class="sl-unfinished" style="color:#a31515;font-weight:bold">{notice}</div>' in page
    index = (project / "reports" / "index.html").read_text()
    assert "UNFINISHED</span>" in index and notice in index


def test_another_selection_into_an_output_folder_outside_reports_is_refused(monkeypatch, tmp_path):
    """reliability-25: `run 07_explore -p study homelab-mergerfs --output o`, then `-p study thumper-x4500 --output
    o` replaced the first page with the second's, exit 0 (only reports/ folders recorded their selection). An
    --output folder outside reports/ records each notebook's selection: another is refused before anything runs;
    the same one replaces its report, and every notebook with its own default study goes into one folder."""
    from test_reliability13_processes import NB, _fake_papermill, _files

    from storagelab.errors import ParameterError
    from storagelab.paths import NOTEBOOKS

    folder = tmp_path / "o"
    monkeypatch.setitem(sys.modules, "papermill", _fake_papermill(["a"], "mergerfs"))
    (ran,) = report.run_notebooks(plans=[(NB, {"study": "homelab-mergerfs"})], out_dir=folder, jobs=1)
    assert ran.ok
    before = _files(folder)
    with pytest.raises(ParameterError) as e:
        report.run_notebooks(plans=[(NB, {"study": "thumper-x4500"})], out_dir=folder, jobs=1)
    assert str(e.value) == (
        f"{folder} holds 07_explore's report of study 'homelab-mergerfs', not of study 'thumper-x4500': give "
        "--output another folder"
    )
    assert _files(folder) == before
    assert json.loads((folder / ".selection.07_explore.json").read_text()) == {
        "selection": {"study": "homelab-mergerfs"},
        "parameters": {},
    }
    monkeypatch.setitem(sys.modules, "papermill", _fake_papermill(["b"], "again"))
    assert report.run_notebooks(plans=[(NB, {"study": "homelab-mergerfs"})], out_dir=folder, jobs=1)[0].ok
    assert json.loads((folder / "summaries" / "07_explore.json").read_text()) == {"headline": "again"}
    both = [(NB, {}), (NOTEBOOKS / "08_fio.ipynb", {})]  # '' and 'homelab-mergerfs', the notebooks' defaults
    assert [r.ok for r in report.run_notebooks(plans=both, out_dir=tmp_path / "all", jobs=1)] == [True, True]

"""reliability-32, report folders: a report folder renamed away and another put in its place while `report` (or the
render step of `build` and `run`) renders a *later* folder, after the first one's pages were written."""

from __future__ import annotations

import json
import re

import nbformat
from test_reliability31_folders import render_swapping, swap_folders

from storagelab import report


def two_studies(root) -> None:
    """Report folders a and b of studies AAA and BBB: a selection record, a summary, and two executed notebooks each
    (nb, and only_a or only_b), every text naming its study."""
    for name, word in (("a", "AAA"), ("b", "BBB")):
        (root / name / "executed").mkdir(parents=True)
        (root / name / ".selection.json").write_text(json.dumps({"selection": {"study": word}, "parameters": {}}))
        (root / name / "summaries").mkdir()
        summary = {"notebook": "nb", "title": f"{word}-title", "study": word, "answers": f"{word}-answers"}
        (root / name / "summaries" / "nb.json").write_text(json.dumps(summary))
        for nb_name in ("nb", f"only_{name}"):
            nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(f"# {word}-page")])
            nb.metadata["title"] = f"{word}-title"
            nbformat.write(nb, str(root / name / "executed" / f"{nb_name}.ipynb"))


def test_a_folder_swapped_after_its_render_leaves_none_of_its_runs_in_the_index_under_the_other(tmp_path, monkeypatch):
    """`mv reports/a a.away; mv reports/b reports/a` while `report` rendered b (after a): a's runs stayed keyed by the
    name a, and the index joined them to b's summary under b's heading (a's title and parameters on b's card) and named
    a's pages under a/, where they are not (exit 0)."""
    two_studies(tmp_path)
    # the swap, once a is rendered, while b renders
    render_swapping(tmp_path, monkeypatch, lambda nb, name: "BBB" in nb.cells[0].source, lambda: swap_folders(tmp_path))
    assert "AAA-page" in (tmp_path / "a.away" / "only_a.html").read_text()  # each folder's pages its own
    assert "BBB-page" in (tmp_path / "a" / "nb.html").read_text()
    index = (tmp_path / "index.html").read_text()
    for href in re.findall(r"href='([^'#:]+\.html)'", index):
        assert (tmp_path / href).exists(), href  # the old code named a/only_a.html
    under_b = index.split(">BBB</h2>", 1)[1].split("<h2", 1)[0]
    assert "AAA" not in under_b  # the old code: a's title on the cards under b's heading


def test_a_killed_commit_s_moves_ended_by_a_sweep_go_into_its_own_folder(tmp_path, monkeypatch):
    """A build killed in its commit leaves its stage with the record of its moves, and the next command's sweep ends
    them: `mv reports/A A.away; mv reports/B reports/A` once the sweep had taken the stage (by a rename) had its moves go
    by the name into B: B's figures of that notebook removed (those the run did not draw) and B's summary with them
    (the run wrote none), exit 0. Through a handle of the stage they go into A, wherever it is now."""
    from storagelab import paths, reportstage

    a, b, slug = tmp_path / "a", tmp_path / "b", paths.slug("nb")
    (b / "figures" / slug).mkdir(parents=True)
    (b / "figures" / slug / "b-only.svg").write_text("<svg>B</svg>")
    (b / "summaries").mkdir()
    (b / "summaries" / "nb.json").write_text("B's summary")
    stage = a / f"{reportstage.PREFIX}4194305-nb-h49fabcd"  # a pid no process has (above Linux's pid_max)
    (stage / "figures" / slug).mkdir(parents=True)
    (stage / "figures" / slug / "a.svg").write_text("<svg>A</svg>")
    (stage / reportstage.READY).write_text(json.dumps({"notebook": "nb", "figures": ["a.svg"], "summary": False}))
    real = reportstage._move

    def swap_then_move(*args):  # the swap, once the sweep has taken the stage
        if b.exists():
            a.rename(tmp_path / "a.away")
            b.rename(a)
        return real(*args)

    monkeypatch.setattr(reportstage, "_move", swap_then_move)
    reportstage.sweep(a)
    assert (a / "figures" / slug / "b-only.svg").read_text() == "<svg>B</svg>"  # the old code removed it
    assert (a / "summaries" / "nb.json").read_text() == "B's summary"  # and this
    assert not (a / "figures" / slug / "a.svg").exists()
    moved = tmp_path / "a.away"
    assert (moved / "figures" / slug / "a.svg").read_text() == "<svg>A</svg>"
    assert not any(p.name.startswith(reportstage.PREFIX) for p in moved.iterdir())  # the stage removed


def test_a_folder_swapped_in_while_the_selections_are_checked_is_not_claimed(tmp_path, monkeypatch):
    """`build --study homelab-mergerfs` claims reports/homelab-mergerfs and reports/all: `mv reports/homelab-mergerfs
    H.away; mv reports/thumper-x4500 reports/homelab-mergerfs` once homelab's record was read and before the folder's
    identity was taken (while the next folder was checked) had homelab's runs claim thumper's folder: its
    01_vdev_scaling page replaced by homelab's, homelab's 05_stacks and 08_fio added, all under thumper's selection,
    exit 0. Now the claim is refused, and nothing is recorded for runs to write into."""
    import pytest

    from storagelab import paths
    from storagelab.errors import ParameterError

    reports = tmp_path / "reports"
    monkeypatch.setattr(paths, "REPORTS", reports)
    nb = paths.NOTEBOOKS / "08_fio.ipynb"
    for study in ("homelab-mergerfs", "thumper-x4500"):
        report._claim_folders([(nb, {"study": study})])
    held, swapped = report._held, []

    def read_then_swap(marker):  # the swap, once homelab's record is read, before the next folder's
        theirs = held(marker)
        if marker.parent.name == "all" and not swapped:
            (reports / "homelab-mergerfs").rename(reports / "H.away")
            (reports / "thumper-x4500").rename(reports / "homelab-mergerfs")
            swapped.append(1)
        return theirs

    monkeypatch.setattr(report, "_held", read_then_swap)
    report._CLAIMED.clear()
    with pytest.raises(ParameterError, match="moved or replaced while its selection was checked"):
        report._claim_folders([(nb, {"study": "homelab-mergerfs"}), (paths.NOTEBOOKS / "07_explore.ipynb", {})])
    assert swapped and report._CLAIMED == {}  # the old code: homelab's runs claimed thumper's folder


def test_ctrl_c_in_a_build_s_ingest_stops_the_build(monkeypatch):
    """SIGINT to `build` during its ingest: the ingest said "interrupted; ... run ingest again to finish" (130), and
    the build went on: every notebook ran on the part of the logs stored, the reports were replaced, then exit 130."""
    import argparse

    from storagelab import cli

    ran = []
    monkeypatch.setattr(cli, "cmd_ingest", lambda args: 130)
    monkeypatch.setattr(report, "run_notebooks", lambda **kw: ran.append(kw) or [])
    monkeypatch.setattr(report, "build_plan", lambda: ran.append("plan") or [])
    assert cli._build(argparse.Namespace(wait=0.0, study=None)) == 130
    assert ran == []  # the old code planned and ran the notebooks

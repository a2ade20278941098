"""Reliability-13, processes (docs/reliability-13-processes.md): each test does what the attack did."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import time
import types
from pathlib import Path

import pytest

from storagelab import paths, report

NB = Path("/nowhere/07_explore.ipynb")  # only its name is used: papermill is the fake below


def _fake_papermill(figures: list[str], headline: str, then: str = "", ready: Path | None = None) -> types.ModuleType:
    """A papermill whose execute_notebook writes what a notebook run writes (figures, a raw excerpt, the summary,
    the executed notebook) where the run says (STORAGELAB_REPORT_DIR, its output path), then ``then``: 'hang'
    (says so in the file ``ready``, and sleeps), 'interrupt' (Ctrl-C) or 'fail' (a cell raised)."""

    def execute_notebook(src, dest, **kw):
        where = Path(os.environ[paths.REPORT_DIR_ENV])
        figs = paths.figure_dir("07_explore", where / "figures")
        figs.mkdir(parents=True, exist_ok=True)
        for name in figures:
            for suffix in (".svg", ".png", ".vl.json"):
                (figs / f"{name}{suffix}").write_text(f"{headline} {name}")
        (where / "raw").mkdir(exist_ok=True)
        (where / "raw" / f"{headline}.html").write_text("<html></html>")
        Path(dest).write_text(json.dumps({"cells": [], "headline": headline}))
        if then == "hang" and ready is not None:
            ready.write_text("1")
            time.sleep(60)
        if then == "interrupt":
            raise KeyboardInterrupt
        if then == "fail":
            raise RuntimeError("a cell raised")
        (where / "summaries").mkdir(exist_ok=True)
        (where / "summaries" / "07_explore.json").write_text(json.dumps({"headline": headline}))

    return types.SimpleNamespace(execute_notebook=execute_notebook)  # type: ignore[return-value]


def _files(folder: Path) -> dict[str, str]:
    """The report folder's files and their text; not the run folders (.storagelab-run-*), which the next run sweeps."""
    return {
        str(p.relative_to(folder)): p.read_text()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not str(p.relative_to(folder)).startswith(".storagelab-run-")
    }


def _run(monkeypatch, folder: Path, figures: list[str], headline: str, then: str = ""):
    monkeypatch.setitem(__import__("sys").modules, "papermill", _fake_papermill(figures, headline, then))
    return report.run_notebooks(plans=[(NB, {})], out_dir=folder, jobs=1)


def _killed_run(folder: Path, figures: list[str], headline: str, ready: Path) -> None:  # in a forked child
    import sys  # noqa: PLC0415

    sys.modules["papermill"] = _fake_papermill(figures, headline, "hang", ready)  # type: ignore[assignment]
    report.run_notebooks(plans=[(NB, {})], out_dir=folder, jobs=1)


def test_a_run_killed_or_stopped_in_its_notebook_leaves_the_last_good_report_whole(monkeypatch, tmp_path):
    """Attack (main 6e8c9c7, reliability-9 Low 6 again): `build` in a built clone, SIGTERM to its group at 60 s, in
    its notebooks: `summaries=13 figures=42 unfinished=2 broken_links=12` where the good build left 15, 54, 0, 0
    (14 figure files gone, 2 executed notebooks half-written, 12 links of the old pages to figures that were gone).
    Each run removed its report's summary and figures before it ran, and papermill wrote the executed notebook in
    place. Now a run writes into a folder of its own, moved into the report folder once every run has ended: killed
    (SIGKILL here: nothing of the run's own code runs after it) or stopped by Ctrl-C, the report is as it was;
    ended, it is replaced whole (a figure no longer drawn goes); a failed run replaces it with its failure."""
    folder = tmp_path / "rep" / "all"
    (ok,) = _run(monkeypatch, folder, ["a", "b"], "good")
    assert ok.ok and ok.executed == folder / "executed" / "07_explore.ipynb" and getattr(ok, "stage", None) is None
    good = _files(folder)
    assert sorted(good) == [
        "executed/07_explore.ipynb",
        "figures/07-explore/a.png",
        "figures/07-explore/a.svg",
        "figures/07-explore/a.vl.json",
        "figures/07-explore/b.png",
        "figures/07-explore/b.svg",
        "figures/07-explore/b.vl.json",
        "raw/good.html",
        "summaries/07_explore.json",
    ]
    child = multiprocessing.get_context("fork").Process(
        target=_killed_run, args=(folder, ["a"], "killed", tmp_path / "ready")
    )
    child.start()
    for _ in range(300):
        if (tmp_path / "ready").exists():
            break
        time.sleep(0.02)
    assert (tmp_path / "ready").exists()
    os.kill(child.pid, signal.SIGKILL)
    child.join(10)
    assert child.exitcode == -signal.SIGKILL
    assert _files(folder) == good  # before: the summary and figures gone, the executed notebook the killed run's
    assert [p.name.split("-")[2] for p in folder.glob(".storagelab-run-*")] == [str(child.pid)]  # for the next run
    with pytest.raises(KeyboardInterrupt):
        _run(monkeypatch, folder, ["c"], "stopped", "interrupt")
    assert _files(folder) == good
    (failed,) = _run(monkeypatch, folder, ["a"], "failed", "fail")
    assert not failed.ok
    assert json.loads((folder / "summaries" / "07_explore.json").read_text())["status"] == "failed"
    (new,) = _run(monkeypatch, folder, ["a"], "new")
    assert new.ok
    assert _files(folder) == {
        "executed/07_explore.ipynb": json.dumps({"cells": [], "headline": "new"}),
        "figures/07-explore/a.png": "new a",
        "figures/07-explore/a.svg": "new a",
        "figures/07-explore/a.vl.json": "new a",
        "raw/failed.html": "<html></html>",
        "raw/good.html": "<html></html>",
        "raw/new.html": "<html></html>",
        "summaries/07_explore.json": json.dumps({"headline": "new"}),
    }
    assert sorted(p.name for p in folder.iterdir()) == ["executed", "figures", "raw", "summaries"]  # no run folder

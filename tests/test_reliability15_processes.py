"""Reliability-15, processes and signals (docs/reliability-15-processes.md): each test does what the attack did."""

from __future__ import annotations

import io
import json
import multiprocessing
import os
import signal
import subprocess
import sys
import types
from pathlib import Path

from test_reliability13_processes import _files  # the report folder's files, without its run folders

from storagelab import paths, report, reportstage

NBS = [paths.NOTEBOOKS / "07_explore.ipynb", paths.NOTEBOOKS / "08_fio.ipynb"]  # names, parameters: papermill is fake


def _papermill(headline: str) -> types.ModuleType:
    """A papermill whose execute_notebook writes what a notebook run writes (two figures, a raw excerpt, the
    executed notebook, the summary) where the run says (STORAGELAB_REPORT_DIR, its output path)."""

    def execute_notebook(src, dest, **kw):
        stem, where = Path(src).stem, Path(os.environ[paths.REPORT_DIR_ENV])
        figs = paths.figure_dir(stem, where / "figures")
        figs.mkdir(parents=True, exist_ok=True)
        for name in ("a", "b"):
            (figs / f"{name}.svg").write_text(f"{headline} {name}")
        (where / "raw").mkdir(exist_ok=True)
        (where / "raw" / f"{stem}-{headline}.html").write_text(headline)
        Path(dest).write_text(headline)
        (where / "summaries").mkdir(exist_ok=True)
        (where / "summaries" / f"{stem}.json").write_text(json.dumps({"headline": headline}))

    return types.SimpleNamespace(execute_notebook=execute_notebook)  # type: ignore[return-value]


def _expected(headline: str, raws: tuple[str, ...]) -> dict[str, str]:
    files = {f"raw/{stem}-{h}.html": h for stem in ("07_explore", "08_fio") for h in raws}
    for stem in ("07_explore", "08_fio"):
        files[f"executed/{stem}.ipynb"] = headline
        files[f"summaries/{stem}.json"] = json.dumps({"headline": headline})
        for name in ("a", "b"):
            files[f"figures/{paths.slug(stem)}/{name}.svg"] = f"{headline} {name}"
    return dict(sorted(files.items()))


def test_another_commands_sweep_between_a_builds_workers_ending_and_its_moves_keeps_the_builds_runs(
    monkeypatch, tmp_path
):
    """Attack (reliability-14 Medium 3, write-stagerace.py): a build's runs wrote into folders named by its pool
    workers' pids; the workers end before the build moves the runs into the report folder, and in that window
    another command's sweep of the same folder (a `run --output` of it from another clone: another report tree's
    lock) took them for a killed run's and removed them; the build's moves then removed the report's figures and
    summaries, leaving only the old executed notebooks. Here two notebooks run in a real pool of two workers, and
    a real second process sweeps the folder once the pool has ended, before the moves. Now a run's folder is named
    by the build (alive until it has moved it): the sweep leaves it, and the report is the build's, whole."""
    folder = tmp_path / "rep" / "all"
    monkeypatch.setitem(sys.modules, "papermill", _papermill("old"))
    report.run_notebooks(plans=[(nb, {}) for nb in NBS], out_dir=folder, jobs=1)
    assert _files(folder) == _expected("old", ("old",))
    real_run_all = report._run_all

    def run_all_then_another_sweep(*a, **kw):
        real_run_all(*a, **kw)  # the pool has ended: its workers are gone
        code = "import sys; from pathlib import Path; from storagelab import reportstage; reportstage.sweep(Path(sys.argv[1]))"
        env = dict(os.environ, PYTHONPATH=str(Path(report.__file__).resolve().parents[1]))
        subprocess.run([sys.executable, "-c", code, str(folder)], check=True, env=env, timeout=60)

    monkeypatch.setattr(report, "_run_all", run_all_then_another_sweep)
    monkeypatch.setitem(sys.modules, "papermill", _papermill("new"))
    results = report.run_notebooks(plans=[(nb, {}) for nb in NBS], out_dir=folder, jobs=2)
    assert [r.ok for r in results] == [True, True]
    assert _files(folder) == _expected("new", ("new", "old"))  # before: only the old executed notebooks left
    assert not list(folder.glob(".storagelab-run-*"))


def _killed_in_the_moves(folder: Path, after: int) -> None:  # in a forked child: SIGKILL at its ``after``-th rename
    sys.modules["papermill"] = _papermill("new")  # type: ignore[assignment]
    real, done = os.replace, [0]

    def replace(src, dst):
        # a move into the report folder (by the stage's name, or through its handle: reportstage.commit, reliability-31)
        if (".storagelab-run-" in str(src) or str(src).startswith("/proc/self/fd/")) and not str(src).endswith(".part"):
            done[0] += 1
            if done[0] == after:
                os.kill(os.getpid(), signal.SIGKILL)
        real(src, dst)

    os.replace = replace
    report.run_notebooks(plans=[(nb, {}) for nb in NBS], out_dir=folder, jobs=1)


def test_a_build_killed_between_its_moves_leaves_them_for_the_next_command_to_end(monkeypatch, tmp_path):
    """Attack (reliability-14 Low 1, write-movekill.py): a build killed (SIGKILL) between the renames that move its
    runs into the report folder left a mixed report, new figures under an old summary and executed notebook (or a
    second notebook all old), each file whole, which `report` rendered so, until the next build ran every notebook
    again. Here a real run of two notebooks is SIGKILLed at each of its moves in turn. Now the moves are recorded
    before the first, and the next command's sweep of the folder (run, build; `report` too) ends them."""
    folder = tmp_path / "rep" / "all"
    monkeypatch.setitem(sys.modules, "papermill", _papermill("old"))
    report.run_notebooks(plans=[(nb, {}) for nb in NBS], out_dir=folder, jobs=1)
    for after in (1, 3, 4, 5, 8):  # of 2 x (2 figures, 1 raw page, the executed notebook, the summary)
        child = multiprocessing.get_context("fork").Process(target=_killed_in_the_moves, args=(folder, after))
        child.start()
        child.join(30)
        assert child.exitcode == -signal.SIGKILL, after
        assert reportstage.sweep(folder), after  # the next command's sweep: the killed run's folders are gone
        assert _files(folder) == _expected("new", ("new", "old")), after  # before: old and new files mixed
        assert not list(folder.glob(".storagelab-run-*"))
        monkeypatch.setitem(sys.modules, "papermill", _papermill("old"))
        report.run_notebooks(plans=[(nb, {}) for nb in NBS], out_dir=folder, jobs=1)
        assert _files(folder) == _expected("old", ("new", "old"))


def test_run_output_into_another_clones_report_folder_waits_for_that_clones_build(tmp_path):
    """Attack (reliability-14 Medium 3, with two real commands): `run 07_explore --output OTHER/reports/all` from
    one clone while OTHER's build wrote OTHER/reports: the run held the lock of OTHER/reports/all, the build that of
    OTHER/reports, so both wrote reports/all at once (and the run's sweep could take the build's finished runs for
    a killed run's). Here this test holds OTHER/reports as a build does; the run is a real process. Now it holds
    OTHER/reports too: it waits, and says for whom."""
    from storagelab import reportlock  # noqa: PLC0415

    other = tmp_path / "other" / "reports"
    (other / "all" / "executed").mkdir(parents=True)
    env = dict(os.environ, PYTHONPATH=str(Path(report.__file__).resolve().parents[1]), PYTHONUNBUFFERED="1")
    cmd = [sys.executable, "-m", "storagelab", "run", "07_explore", "--output", str(other / "all")]
    with reportlock.writing(other):
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        try:
            first = p.stdout.readline() if p.stdout else ""
        finally:
            p.kill()
            p.wait(30)
    assert (
        first
        == f"storagelab run: waiting for another storagelab command (pid {os.getpid()}) to finish writing {other}\n"
    )


class _ReaderGoneAfterOneLine:
    """A stdout whose reader takes one line and ends (`| head -1`): every later write is EPIPE."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def write(self, text: str) -> int:
        if self.lines:
            raise BrokenPipeError(32, "Broken pipe")
        self.lines.append(text)
        return len(text)

    def flush(self) -> None:
        pass

    def fileno(self) -> int:
        raise io.UnsupportedOperation("fileno")


def test_lab_fio_whose_reader_goes_away_keeps_the_run_it_made_and_says_it_stopped(tmp_path, monkeypatch):
    """Attack (main fd5ef0a): `lab fio --depth-jobs 1x1 --size 16M --runtime 2 --out O | head -1` -> statuses `0 0`,
    not a word, O empty: the lab said its run's sanity line while it saved the run, the BrokenPipeError (an OSError)
    was taken for the manifest's full disk and the finished run removed; the command (`lab fio`, not `lab`) was not
    among those that say a reader gone stopped them. Now the run made is kept and labelled, no other starts, and
    the command ends 141 with `stopped unfinished` (a re-run makes the rest). Here fio gives a real 3.33 output."""
    from storagelab import cli, terminal  # noqa: PLC0415
    from storagelab.lab import run_fio_matrix  # noqa: PLC0415

    out, target, runs = fake_fio_runs(tmp_path, monkeypatch)
    stdout = _ReaderGoneAfterOneLine()
    monkeypatch.setattr(sys, "stdout", stdout)
    try:
        try:
            run_fio_matrix(runs, target=target, out=out, ingest=False)
        except BrokenPipeError:
            pass
    finally:
        getattr(terminal, "READER_GONE", []).clear()  # the next test's lab says its lines again
    assert stdout.lines == [f"[1/2] {runs[0].run_id}: 1 left after this, about 8s to go\n"]
    assert (out / f"{runs[0].run_id}.txt").read_bytes() == FIO_33_OUTPUT.read_bytes()  # before: O empty
    assert f"{runs[0].run_id}.txt" in (out / "manifest.csv").read_text()
    assert not (out / f"{runs[1].run_id}.txt").exists()
    assert cli._reader_gone("lab fio") == 141  # before: 0, and not a word


FIO_33_OUTPUT = Path(__file__).resolve().parent / "fixtures" / "fio" / "3.33" / "lab-psync" / "randread-4k-qd1-nj1.txt"


def fake_fio_runs(tmp_path, monkeypatch) -> tuple[Path, Path, list]:
    """A `fio` on PATH that prints a real fio 3.33 output (lab-psync's randread), and two smoke runs of it: (OUT,
    TARGET, runs)."""
    from storagelab.lab import PRESETS, build_runs  # noqa: PLC0415

    real = FIO_33_OUTPUT
    (tmp_path / "bin").mkdir()
    fio = tmp_path / "bin" / "fio"
    fio.write_text(f'#!/bin/sh\n[ "$1" = --version ] && {{ echo fio-3.33; exit 0; }}\ncat {real}\n')
    fio.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fio.parent}:{os.environ['PATH']}")
    out, target = tmp_path / "out", tmp_path / "t"
    runs = build_runs(PRESETS["smoke"], target=target, out=out, rw=["randread", "write"])[:2]
    return out, target, runs

"""Reliability-16, processes and signals (issue 26): attacks on reliability-15's fixes that found something on main
15424c4. See docs/reliability-16-processes.md."""

from __future__ import annotations

import errno
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_reliability15_processes import _ReaderGoneAfterOneLine, fake_fio_runs


class _FullStdout(_ReaderGoneAfterOneLine):
    """`>/dev/full`: the first write fails with ENOSPC; later ones are lost silently (``show`` points fd 1 at
    /dev/null once a write failed: as there)."""

    def __init__(self) -> None:
        super().__init__()
        self.tries = 0

    def write(self, text: str) -> int:
        self.tries += 1
        if self.tries == 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        return len(text)


def test_lab_fio_resumed_into_a_full_stdout_stops_and_says_so(tmp_path, monkeypatch):
    """Attack (main 15424c4): a resumed `lab fio --depth-jobs 1x1,2x1 ... --out O >/dev/full` (1x1 saved before) ->
    rc 0, not a word, every run made: its first line (`1 of 2 runs already saved ...: skipped (resume)`) failed
    before the runs began, and ``_catch_stop_signals`` cleared what ``show`` remembered (reliability-15's
    `>/dev/full` fix reached only a line said during the runs). Now it stops before the next run and ends with
    `standard output: No space left on device` (exit 2). Here fio gives a real 3.33 output."""
    from storagelab import terminal  # noqa: PLC0415
    from storagelab.lab import run_fio_matrix  # noqa: PLC0415

    out, target, runs = fake_fio_runs(tmp_path, monkeypatch)
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert run_fio_matrix(runs[:1], target=target, out=out, ingest=False) == 0  # the first run saved
    full = _FullStdout()
    monkeypatch.setattr(sys, "stdout", full)
    try:
        with pytest.raises(OSError, match="standard output: No space left on device"):  # before: returned 0
            run_fio_matrix(runs, target=target, out=out, ingest=False)
    finally:
        terminal.READER_GONE.clear()  # the next test's lab says its lines again
    assert full.tries == 1
    assert not (out / f"{runs[1].run_id}.txt").exists()  # before: made, its lines lost


def test_a_command_stopped_by_sigterm_while_its_notebook_holds_stderr_still_says_its_line():
    """Attack (main 15424c4): `run 07_explore`, SIGTERM (or SIGHUP) to it while its notebook runs -> 143 (129), stderr
    empty: fd 2 was the file ``report._StderrFilter`` holds the kernel's stderr in, and the line went there. Here the
    real filter holds fd 2 when the signal comes."""
    code = (
        "import os, signal\n"
        "from storagelab import report, stopsignals\n"
        "stopsignals.on_stop_signals('run')\n"
        "with report._StderrFilter():\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    signal.pause()\n"
    )
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1] / "lib"))
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=30)
    assert (p.returncode, p.stderr) == (143, "storagelab run: terminated (SIGTERM)\n")  # before: (143, "")


def test_a_run_folders_record_naming_a_notebook_with_a_nul_is_not_read(tmp_path):
    """Attack (main 15424c4): a killed commit's `.storagelab-ready.json` whose notebook name holds a NUL -> ``sweep``
    raised ValueError ('embedded null byte': the finisher's guard catches OSError only), having taken the folder:
    every later run, build and report of that report folder raised it again. Now the record is not read: the folder
    is removed as a killed run's that had not begun its moves."""
    from storagelab import reportstage  # noqa: PLC0415

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stage = tmp_path / f"{reportstage.PREFIX}{int(gone.stdout)}-nb-abcdefgh"
    stage.mkdir()
    (stage / reportstage.READY).write_text('{"notebook": "nb\\u0000", "figures": ["\\u0000"]}')
    assert reportstage.sweep(tmp_path) == [stage]  # before: ValueError
    assert list(tmp_path.iterdir()) == []

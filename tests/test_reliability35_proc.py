"""Reliability-35 (processes): what the campaign's signal attacks found, each held here."""

from __future__ import annotations

import signal

from storagelab.lab import fio as labfio
from storagelab.lab.presets import Run


def test_a_lab_fio_stopped_between_two_runs_says_it_stopped(tmp_path, monkeypatch):
    """reliability-35: `lab fio` given SIGTERM (or SIGHUP, Ctrl-C) after one run had ended and before the next began
    ended 143 with no line saying it stopped: its last lines ("lab fio: 7 files from 1 runs", the ingest's) read as
    a whole matrix (2 of 22 signalled tries). `lab bonnie` says "interrupted: N completed runs kept" there."""
    monkeypatch.setattr(labfio, "_cmd", lambda argv: "fio-3.33")
    monkeypatch.setattr(labfio, "describe_system", lambda: {})
    monkeypatch.setattr(labfio, "describe_target", lambda target: {})
    ran = []

    def run_one(self, i, n, run):  # the run ends whole, then the stop comes (while it is saved)
        ran.append(run.run_id)
        self.spent.append(0.1)
        self.on_signal(signal.SIGTERM, None)

    monkeypatch.setattr(labfio._Matrix, "run_one", run_one)
    runs = [Run(f"write-4k-qd{d}-nj1", "write", "4k", d, 1, "4M", 1, 1, ["fio", f"--name=x{d}"]) for d in (1, 2)]
    lines: list[str] = []
    rc = labfio.run_fio_matrix(runs, target=tmp_path / "t", out=tmp_path / "out", ingest=False, log=lines.append)
    assert rc == 128 + signal.SIGTERM and ran == ["write-4k-qd1-nj1"]
    assert [line for line in lines if line.startswith("interrupted")] == [
        "interrupted: 1 completed runs kept (a re-run resumes)"
    ], lines

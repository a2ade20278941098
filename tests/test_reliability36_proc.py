"""Reliability-36 (processes): what the campaign's signal attacks found, each held here."""

from __future__ import annotations

import os
import shlex
import signal
from pathlib import Path

from storagelab.lab import bonnie as labbonnie
from storagelab.lab import fio as labfio
from storagelab.lab.manifest import append_manifest
from storagelab.lab.presets import Run


def _saved(out, name, command):
    (out / name).write_text("saved\n")
    append_manifest(out / "manifest.csv", [{"path": name, "study": "lab", "label": "x", "command": command}])


def _lab_stubbed(monkeypatch) -> tuple[list, list]:
    """`lab fio` with no fio, no system description and no ingest: each run is stopped by a Ctrl-C before it begins.
    The run ids it would have run, and the files it would have ingested, as lists filled as it goes."""
    monkeypatch.setattr(labfio, "_cmd", lambda argv: "fio-3.33")
    monkeypatch.setattr(labfio, "describe_system", lambda: {})
    monkeypatch.setattr(labfio, "describe_target", lambda target: {})
    ran: list = []
    ingested: list = []

    def run_one(self, i, n, run):  # Ctrl-C before this run began
        ran.append(run.run_id)
        self.on_signal(signal.SIGINT, None)

    monkeypatch.setattr(labfio._Matrix, "run_one", run_one)
    monkeypatch.setattr(labfio, "_ingest", lambda files, db, manifest: ingested.extend(f.name for f in files) or 0)
    return ran, ingested


def test_a_lab_fio_run_killed_while_it_was_saved_is_run_again_not_taken_as_saved(tmp_path, monkeypatch):
    """reliability-36: `lab fio` SIGKILLed at its manifest append (after the run's output was renamed into OUT,
    before its rows) left the run's .txt and logs with no row; the re-run said "6 of 8 runs already saved:
    skipped (resume)" and its ingest stored the run unlabelled, exit 0, for good. Now the run is made again, and a
    re-run stopped before it ingests none of its unlabelled files."""
    ran, ingested = _lab_stubbed(monkeypatch)
    run = Run("write-4k-qd1-nj1", "write", "4k", 1, 1, "4M", 1, 1, ["fio", "--name=write-4k-qd1-nj1"])
    out = tmp_path / "out"
    out.mkdir()
    _saved(out, "write-4k-qd1-nj1.txt", shlex.join(run.argv))
    for name in ("write-4k-qd1-nj1-2.txt", "write-4k-qd1-nj1-2_bw.1.log"):  # the killed run's: no manifest row
        (out / name).write_text("unlabelled\n")
    lines: list[str] = []
    rc = labfio.run_fio_matrix([run], target=tmp_path / "t", out=out, repeat=2, log=lines.append)
    assert rc == 130 and ran == ["write-4k-qd1-nj1-2"], lines
    assert (
        f"lab fio: write-4k-qd1-nj1-2.txt in {out} has no manifest row (a run stopped while it was saved): run again"
        in lines
    )
    assert ingested == ["write-4k-qd1-nj1.txt"]


def test_a_lab_bonnie_run_killed_while_it_was_saved_is_run_again_not_taken_as_saved(tmp_path, monkeypatch):
    """The same for `lab bonnie` (its output renamed, then its row written: a SIGKILL between the two)."""
    monkeypatch.setattr(labbonnie, "describe_system", lambda: {"ram_bytes": 1 << 30, "host": "h"})
    monkeypatch.setattr(labbonnie, "_target_and_flags", lambda target, size_mib, ram: ({}, []))
    ran, ingested = [], []

    def run_bonnie(argv, fh, stop, running):  # Ctrl-C while this run ran
        ran.append(fh.name)
        stop.append(signal.SIGINT)

    monkeypatch.setattr(labbonnie, "_run_bonnie", run_bonnie)
    monkeypatch.setattr(labbonnie, "_ingest", lambda files, db, manifest: ingested.extend(f.name for f in files) or 0)
    out = tmp_path / "out"
    out.mkdir()
    target = tmp_path / "t"
    argv = ["bonnie++", "-d", str(target / ".storagelab-bonnie"), "-s", "16", "-r", "8", "-n", "0", "-m", "h"]
    argv += ["-u", "root"] if labbonnie.os.geteuid() == 0 else []
    _saved(out, "bonnie-16m-n0.txt", shlex.join(argv))
    (out / "bonnie-16m-n0-2.txt").write_text("unlabelled\n")  # the killed run's: no manifest row
    lines: list[str] = []
    rc = labbonnie.run_bonnie(target=target, out=out, size_bytes=16 << 20, db=None, files=0, repeat=2, log=lines.append)
    assert rc == 130 and [n.rsplit("/", 1)[-1] for n in ran] == [".bonnie-16m-n0-2.txt.part"], lines
    assert ingested == ["bonnie-16m-n0.txt"]


def test_a_lab_bonnie_stopped_while_its_last_run_is_saved_says_it_and_exits_129(tmp_path, monkeypatch):
    """reliability-36: `lab bonnie` given SIGHUP (to the process) at the rename of its last run's output ended 0 with
    no line: its loop reads a stop only before each run. `lab fio` says "interrupted: N completed runs kept" there."""
    system = {"ram_bytes": 1 << 30, "host": "h", "cpu": "c", "kernel": "k", "os": "o"}
    monkeypatch.setattr(labbonnie, "describe_system", lambda: system)
    monkeypatch.setattr(labbonnie, "_target_and_flags", lambda target, size_mib, ram: ({}, []))
    output = (Path(__file__).parent / "fixtures" / "bonnie" / "2.00a" / "plain.out.txt").read_bytes()
    monkeypatch.setattr(labbonnie, "_run_bonnie", lambda argv, fh, stop, running: fh.write(output) and None)
    real = labbonnie.append_manifest

    def append_manifest(manifest, rows):  # the hang-up comes while the run is saved
        os.kill(os.getpid(), signal.SIGHUP)
        return real(manifest, rows)

    monkeypatch.setattr(labbonnie, "append_manifest", append_manifest)
    lines: list[str] = []
    rc = labbonnie.run_bonnie(
        target=tmp_path / "t",
        out=tmp_path / "out",
        size_bytes=16 << 20,
        db=None,
        files=0,
        ingest=False,
        log=lines.append,
    )
    assert rc == 128 + signal.SIGHUP, lines
    assert lines[-1] == "interrupted: 1 completed runs kept (a re-run resumes)"
    assert (tmp_path / "out" / "bonnie-16m-n0.txt").exists()  # the run itself whole and kept

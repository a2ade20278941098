"""Reliability-37 (processes): what the campaign's signal attacks found, each held here."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import time
from pathlib import Path

from test_reliability36_proc import _lab_stubbed

from storagelab.lab import fio as labfio
from storagelab.lab.manifest import append_manifest
from storagelab.lab.presets import Run


def test_a_lab_fio_run_killed_in_the_middle_of_its_manifest_rows_is_run_again(tmp_path, monkeypatch):
    """reliability-37: `lab fio` SIGKILLed while it appended a run's 13 manifest rows (15 KB: two writes of the
    file's 8 KB buffer) left the output's row and 5 logs' rows, not the other 7; the re-run said "3 of 8 runs already
    saved: skipped (resume)" and its ingest stored those 7 logs with no label, study or command, exit 0, no word.
    Now a run with a log that has no row is made again, and its files are not ingested as saved."""
    ran, ingested = _lab_stubbed(monkeypatch)
    run = Run("write-4k-qd1-nj1", "write", "4k", 1, 1, "4M", 1, 1, ["fio", "--name=write-4k-qd1-nj1"])
    out = tmp_path / "out"
    out.mkdir()
    names = ["write-4k-qd1-nj1.txt", "write-4k-qd1-nj1_bw.1.log", "write-4k-qd1-nj1_lat.1.log"]
    for name in names:
        (out / name).write_text("saved\n")
    rows = [{"path": n, "study": "lab", "label": "x", "command": shlex.join(run.argv)} for n in names[:2]]
    append_manifest(out / "manifest.csv", rows)  # the lat log's row never written: the kill came first
    lines: list[str] = []
    rc = labfio.run_fio_matrix([run], target=tmp_path / "t", out=out, repeat=1, log=lines.append)
    assert rc == 130 and ran == ["write-4k-qd1-nj1"], lines
    assert (
        f"lab fio: write-4k-qd1-nj1_lat.1.log in {out} has no manifest row (a run stopped while it was saved): run again"
        in lines
    )
    assert ingested == []


def test_two_registrations_of_the_kernel_at_once_do_not_share_a_stage(tmp_path):
    """reliability-37: ./run's register_kernel (cafb0c26) staged ipykernel's spec in one fixed folder in the
    environment, emptied first: a second ./run starting while the first installed removed the first's staged spec,
    and the first failed (FileNotFoundError traceback, exit 1; its kernel spec removed), 4 of 8 tries in the window.
    Here PY is a stub: its install writes into $TMPDIR, waits, and fails if what it wrote is gone."""
    func = subprocess.run(
        ["sed", "-n", "/^register_kernel() {/,/^}/p", str(Path(__file__).resolve().parent.parent / "run")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    env_dir = tmp_path / "env"
    env_dir.mkdir()
    (env_dir / ".storagelab-kernel-stage").mkdir()  # one an older ./run left when it was killed
    stub = tmp_path / "py"
    stub.write_text(
        "#!/bin/bash\n"
        f'if [ "$1" = -c ]; then echo {env_dir}; exit 0; fi\n'
        'echo spec > "$TMPDIR/kernel.json" && sleep 0.4 && [ -f "$TMPDIR/kernel.json" ]\n'
    )
    stub.chmod(0o755)
    script = f"set -euo pipefail\nPY={stub}\n{func}\nregister_kernel\n"
    first = subprocess.Popen(["bash", "-c", script])
    time.sleep(0.2)
    second = subprocess.run(["bash", "-c", script])
    assert (first.wait(10), second.returncode) == (0, 0)
    assert os.listdir(env_dir) == []


def test_storagelab_lab_passes_a_hang_up_to_jupyterlab_as_its_clean_stop(monkeypatch):
    """reliability-37: `storagelab lab` given SIGHUP passed it on as SIGHUP, which JupyterLab does not handle: it died
    at once (exit 129 said), its kernels ended only by their parent poll, and its jpserver-PID.json, -open.html and
    the kernels' connection files stayed in the Jupyter runtime folder (2 of 2 SIGHUPs; SIGINT and SIGTERM: none)."""
    from storagelab import labstart

    sent: list[int] = []

    class Proc:
        def send_signal(self, sig):
            sent.append(sig)

        def poll(self):
            return 0

    monkeypatch.setattr(labstart, "_arm", lambda again: None)
    for sig in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM):
        labstart.pass_on(Proc(), sig)
    assert sent == [signal.SIGTERM] * 3


def test_jupyterlab_ignores_the_group_s_hang_up_and_takes_it_from_storagelab_lab(monkeypatch):
    """The same when the terminal closes: SIGHUP goes to the whole group, JupyterLab included, which it killed at once
    (a SIGHUP to the group: its runtime files left). JupyterLab now ignores SIGHUP as it ignores SIGINT; `storagelab
    lab` passes it on as SIGTERM. Its child set-up is run in a forked child here."""
    from storagelab import cli, labstart

    seen: list[object] = []

    class Popen:
        def __init__(self, argv, env, preexec_fn, cwd):
            pid = os.fork()
            if pid == 0:
                preexec_fn()
                os._exit(1 if signal.getsignal(signal.SIGHUP) is signal.SIG_IGN else 2)
            seen.append(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))

        def poll(self):
            return 0

    monkeypatch.setattr(subprocess, "Popen", Popen)
    monkeypatch.setattr(labstart, "wait", lambda proc: 0)
    assert cli.cmd_lab(type("Args", (), {"extra": []})()) == 0
    assert seen == [1]

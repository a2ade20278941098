"""Reliability-21 (issue 26), environment: reliability-20's JupyterLab, report and working-folder fixes attacked
again, and their neighbours (docs/reliability-21-env.md)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from types import SimpleNamespace


def unstoppable_lab(monkeypatch, seconds: int) -> list[subprocess.Popen]:
    """`storagelab lab`'s JupyterLab replaced by a program that ignores SIGTERM for ``seconds``, and this process's
    own SIGTERM 0.05 s after it started (passed on by the lab), the lab's re-send every 0.1 s: the list gets it."""
    import threading  # noqa: PLC0415

    from storagelab import labstart  # noqa: PLC0415

    real = subprocess.Popen
    held: list[subprocess.Popen] = []

    def started(argv, **kwargs):
        cmd = f"trap '' TERM; echo started; exec sleep {seconds}"
        proc = real(["sh", "-c", cmd], stdout=subprocess.PIPE, **kwargs)
        assert proc.stdout is not None and proc.stdout.readline() == b"started\n"
        held.append(proc)
        threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGTERM)).start()  # this process's stop, passed on
        return proc

    monkeypatch.setattr(subprocess, "Popen", started)
    monkeypatch.setattr(labstart, "AGAIN_AFTER", 0.1)
    return held


def test_a_jupyterlab_that_never_stops_is_killed_in_the_end(monkeypatch, capsys):
    """`storagelab lab`, SIGTERM, and a JupyterLab whose stop never ends (here: one that ignores SIGTERM, as a server
    whose shutdown is stuck does) -> SIGTERM every 10 s for ever: `storagelab lab` needed kill -9, and the server
    stayed after it with the terminal's (or a pipe's) end and its port. It is now killed after the third try."""
    from storagelab import cli, labstart  # noqa: PLC0415

    held = unstoppable_lab(monkeypatch, 4)
    began = time.monotonic()
    try:
        rc = cli.cmd_lab(SimpleNamespace(extra=[]))
    finally:
        if held[0].poll() is None:
            held[0].kill()
        held[0].wait()
    assert time.monotonic() - began < 1.5
    assert (rc, held[0].returncode) == (137, -signal.SIGKILL)
    assert held[0].stdout is not None and held[0].stdout.read() == b""  # the pipe is free: nobody holds its end
    assert capsys.readouterr().err == "storagelab lab: JupyterLab still ran 0.4 s after the stop signal: killed\n"
    assert labstart._again == []


def test_lab_options_relative_to_something_else_are_kept(tmp_path, monkeypatch):
    """`cd THEIRS; storagelab lab --FileCheckpoints.checkpoint_dir=.ckpt` (a folder relative to each notebook's, as
    documented) with THEIRS/.ckpt present -> THEIRS/.ckpt: root's server wrote every checkpoint there, through their
    links. preferred_dir is an API path under the root folder, and a planted "True" turned a flag into a path. Options
    that do name a file from the working folder (client_ca, sock, extra_static_paths) are made absolute."""
    from storagelab.labstart import from_working_folder  # noqa: PLC0415

    for name in (".ckpt", "notebooks", "True", "ca.pem", "lab.sock", "static"):
        (tmp_path / name).mkdir()
    monkeypatch.chdir(tmp_path)
    kept = [
        "--FileCheckpoints.checkpoint_dir=.ckpt",
        "--ContentsManager.preferred_dir=notebooks",
        "--ServerApp.preferred_dir",
        "notebooks",
        "--ServerApp.show_config=True",
        "--LabApp.copy_absolute_path=True",
    ]
    assert from_working_folder(kept) == kept
    made = ["--ServerApp.client_ca=ca.pem", "--ServerApp.sock=lab.sock", "--ServerApp.extra_static_paths=static"]
    assert from_working_folder(made) == [f"{m.partition('=')[0]}={tmp_path}/{m.partition('=')[2]}" for m in made]

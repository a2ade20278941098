"""Reliability-21 (issue 26), environment: reliability-20's JupyterLab, report and working-folder fixes attacked
again, and their neighbours (docs/reliability-21-env.md)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from types import SimpleNamespace


def test_a_jupyterlab_that_never_stops_is_killed_in_the_end(monkeypatch, capsys):
    """`storagelab lab`, SIGTERM, and a JupyterLab whose stop never ends (here: one that ignores SIGTERM, as a server
    whose shutdown is stuck does) -> SIGTERM every 10 s for ever: `storagelab lab` needed kill -9, and the server
    stayed after it with the terminal's (or a pipe's) end and its port. It is now killed after the third try."""
    import threading  # noqa: PLC0415

    from storagelab import cli, labstart  # noqa: PLC0415

    real = subprocess.Popen
    held: list[subprocess.Popen] = []

    def started(argv, **kwargs):
        proc = real(["sh", "-c", "trap '' TERM; echo started; exec sleep 4"], stdout=subprocess.PIPE, **kwargs)
        assert proc.stdout is not None and proc.stdout.readline() == b"started\n"
        held.append(proc)
        threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGTERM)).start()  # this process's stop, passed on
        return proc

    monkeypatch.setattr(subprocess, "Popen", started)
    monkeypatch.setattr(labstart, "AGAIN_AFTER", 0.1)
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

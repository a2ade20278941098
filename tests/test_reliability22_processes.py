"""Reliability-22, processes: what a notebook worker of ``run``/``build`` keeps of its command (docs/reliability-22-processes.md)."""

from __future__ import annotations

import fcntl
import os

from storagelab import report, reportlock


def test_notebook_worker_holds_neither_the_report_lock_nor_the_commands_streams(tmp_path):
    """A notebook worker stuck on a stopped FUSE mount outlives its command: it must hold no copy of the report
    tree's lock (every later build waited for it) nor the command's stdout (the user's pipe stayed open)."""
    relay_r, relay_w = os.pipe()
    go_r, go_w = os.pipe()
    ready_r, ready_w = os.pipe()
    with reportlock.writing(tmp_path):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the worker
            try:
                os.close(go_w)
                os.close(ready_r)
                try:
                    report._notebook_worker_init(os.getppid(), relay_w)
                except TypeError:  # the old initializer: the parent only
                    report._notebook_worker_init(os.getppid())
                os.write(1, b"out")
                os.write(ready_w, b"k")
                os.read(go_r, 1)
            finally:
                os._exit(0)
        os.close(ready_w)
        os.close(go_r)
        os.close(relay_w)
        assert os.read(ready_r, 1) == b"k"
    try:
        fd = os.open(tmp_path / reportlock.LOCK, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the command has let go: nothing else holds it
        finally:
            os.close(fd)
        os.set_blocking(relay_r, False)
        assert os.read(relay_r, 16) == b"out"  # its stdout is the relay's pipe, not the command's
    finally:
        os.close(go_w)
        os.waitpid(pid, 0)
        for f in (relay_r, ready_r):
            os.close(f)


def test_a_stopped_lab_bonnie_stops_waiting_for_a_bonnie_that_even_sigkill_does_not_end(monkeypatch, tmp_path):
    """Attack: `lab bonnie` on a FUSE mount over a stopped one, Ctrl-C: bonnie++ waits in the kernel, where SIGKILL
    does not end it (a real `cat` on a bindfs over a stopped bindfs, state D after kill -9), and the lab waited for it
    for ever: only kill -9 of the lab ended it. Here a `sleep 3` whose kill does nothing plays it."""
    import subprocess

    import pytest

    from storagelab.lab import bonnie

    monkeypatch.setattr(bonnie, "KILLED_WAIT_S", 0.2, raising=False)
    killed: list = []
    monkeypatch.setattr(subprocess.Popen, "kill", lambda self: killed.append(self))  # in the kernel: SIGKILL waits
    try:
        with open(tmp_path / "out", "wb") as fh, pytest.raises(getattr(bonnie, "StillInTheKernel", RuntimeError)) as e:
            bonnie._run_bonnie(["sleep", "3"], fh, [2], [])  # main: returned (-9, b'') after the 3 s
        assert str(e.value) == (
            f"note: bonnie++ (pid {killed[0].pid}) still waits for a file system that does not answer, even killed,"
            " and will end once it answers"
        )
    finally:
        monkeypatch.undo()
        for p in killed[:1]:
            p.kill()
            p.wait()


def test_a_stopped_lab_fio_stops_waiting_for_a_fio_that_even_sigkill_does_not_end(monkeypatch):
    """The same for `lab fio` (_wait_for_fio): killed after its grace, a fio in the kernel was waited for for ever."""
    import subprocess

    import pytest

    from storagelab.lab import fio

    monkeypatch.setattr(fio, "STOP_GRACE_S", 0.0)
    monkeypatch.setattr(fio, "KILLED_WAIT_S", 0.2, raising=False)
    killed: list = []
    monkeypatch.setattr(subprocess.Popen, "kill", lambda self: killed.append(self))  # in the kernel: SIGKILL waits
    p = subprocess.Popen(["sleep", "4"], stderr=subprocess.PIPE)
    try:
        with pytest.raises(getattr(fio, "StillInTheKernel", RuntimeError)):  # main: returned after the sleep's 4 s
            fio._wait_for_fio(p, [15])
        assert killed == [p]
    finally:
        monkeypatch.undo()
        p.kill()
        p.communicate()

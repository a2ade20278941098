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

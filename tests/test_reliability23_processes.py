"""Reliability-23, processes (issue 26): reliability-22's process fixes and their neighbours."""

from __future__ import annotations

import fcntl
import os
import threading

from storagelab import stopsignals


def _full_pipe() -> tuple[int, int]:
    r, w = os.pipe()
    fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, 4096)
    os.set_blocking(w, False)
    try:
        while True:
            os.write(w, b"x" * 512)
    except BlockingIOError:
        pass
    os.set_blocking(w, True)
    return r, w


def test_the_stop_line_never_blocks_on_a_stderr_whose_reader_stopped_reading(monkeypatch):
    # `storagelab build 2>&1 | less`, less stopped: SIGTERM's handler waited in its write of the one line, and the
    # command no longer ended (a hang until kill -9; Python's default SIGTERM would have ended it)
    r, w = _full_pipe()
    monkeypatch.setattr(stopsignals, "_STDERR", [w])
    t = threading.Thread(target=stopsignals.line, args=("build", 15), daemon=True)
    try:
        t.start()
        t.join(1)
        assert not t.is_alive()
    finally:
        os.set_blocking(r, False)
        while t.is_alive():
            try:
                os.read(r, 1 << 16)
            except BlockingIOError:
                t.join(0.05)
        os.close(r)
        os.close(w)

"""Reliability-20, processes and signals (issue 26): a stop signal that a thread other than the main one takes (polars'
own thread, while the main thread holds the signal across a fork) still stops `lab bonnie` and `lab fio` at once."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import threading
import time

from storagelab.lab import bonnie


def test_a_sigterm_another_thread_took_while_bonnie_started_still_stops_bonnie():
    """The clean-clone run's lost SIGTERM: the main thread held SIGTERM (the fork hook's ``_block``) when it came, so
    the kernel gave it to polars' thread, which blocks nothing. Python only noted it there, and the main thread, in
    ``communicate`` on bonnie++'s stderr, never looked again: the lab waited for bonnie++ (stopped by the test: for
    ever). Here a thread of the test plays polars' thread, the real kill comes once bonnie++ (a `sleep 5`) runs, and
    the main thread holds SIGTERM the while. Main's code: bonnie++ ran its 5 s to the end and nothing stopped."""
    stop: list[int] = []
    running: list[subprocess.Popen] = []
    done = threading.Event()

    def on_signal(signum, frame):  # run_bonnie's own handler
        stop.append(signum)
        for p in running:
            p.kill()

    def other_thread():  # blocks nothing (started before the main thread holds SIGTERM), as polars' thread
        while not running and not done.is_set():
            time.sleep(0.005)
        if running:
            os.kill(os.getpid(), signal.SIGTERM)  # process-directed: the main thread holds it, this thread takes it
        done.wait(10)

    taker = threading.Thread(target=other_thread, daemon=True)
    old = signal.signal(signal.SIGTERM, on_signal)
    taker.start()
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    try:
        started = time.monotonic()
        err = bonnie._run_bonnie(["sleep", "5"], subprocess.DEVNULL, stop, running)
        took = time.monotonic() - started
    finally:
        done.set()
        taker.join()
        signal.pthread_sigmask(signal.SIG_BLOCK, ())  # the noted SIGTERM runs ``on_signal`` before the old handler
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
        signal.signal(signal.SIGTERM, old)
    assert (stop, err) == ([signal.SIGTERM], (-signal.SIGKILL, b""))
    assert took < 2.0


class _ReaderGone(io.StringIO):
    """A stderr whose reader has ended (`cmd 2>&1 >/dev/null | true`): every write fails with EPIPE."""

    def write(self, text):
        raise BrokenPipeError(32, "Broken pipe")


def test_a_command_that_fails_with_its_stderr_reader_gone_still_exits_2(tmp_path, monkeypatch):
    """`storagelab sql 'selec 1' 2>&1 >/dev/null | true` ended 0: the error line's EPIPE was taken for stdout's
    reader gone, which ends a command that only prints with 0 (and `run no_such_notebook` with 141, 'stopped
    unfinished'). The line is lost; the exit still says the command failed. Main's code: 0."""
    from storagelab import cli

    monkeypatch.setattr(sys, "stderr", _ReaderGone())
    assert cli.main(["sql", "--db", str(tmp_path / "missing.duckdb"), "select 1"]) == 2


def test_the_import_hold_of_ctrl_c_keeps_a_ctrl_c_the_parent_held():
    """A command started with SIGINT blocked by its parent (a wrapper's mask) had it unblocked after its first
    import: the Ctrl-C the parent held ended it (`storagelab build: interrupted`, reliability-20). Main's code:
    SIGINT no longer blocked."""
    from storagelab import cli

    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        with cli._sigint_held():
            pass
        assert signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, ())
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def test_a_lab_run_under_nohup_keeps_ignoring_sighup():
    """`nohup storagelab lab bonnie ...`, then the terminal closed: the lab's handler replaced the ignored SIGHUP,
    and the hang-up discarded the running benchmark ('interrupted: bonnie-128m-n0 discarded', reliability-20). A
    signal the parent ignores stays ignored, as ``stopsignals.on_stop_signals`` leaves it. Main's code: the handler."""
    from storagelab.lab import fio

    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        old = fio._catch_stop_signals(lambda signum, frame: None)
        try:
            assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
        finally:
            fio._restore_signals(old)
    finally:
        signal.signal(signal.SIGHUP, before)

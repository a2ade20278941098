"""SIGTERM and SIGHUP end a command with one line and 143 or 129, as Ctrl-C ends it with one line and 130.

At Python's defaults a command killed by `kill`, `timeout` or a closed terminal ended without a word (issue 26's
campaigns, Low). ``cli._guarded`` installs ``on_stop_signals`` next to its Ctrl-C latch, for the process's own command only.
The exit is at once, as at the defaults (``os._exit``: nothing more of the command runs, as before): children end as
they did (those started with ``procs.die_with_parent`` with this process). A command that catches these signals
itself (lab's benchmarks, `run`'s wait for the report tree, JupyterLab's server) puts its own handler over this one
for that time. A process forked from this one (a pool worker) that kept the handler dies by the signal, as before."""

from __future__ import annotations

import functools
import os
import select
import signal
import sys
import threading
from contextlib import suppress

from . import _early_stop

WHAT = {signal.SIGTERM: "terminated (SIGTERM)", signal.SIGHUP: "hung up (SIGHUP: its terminal closed?)"}


_STDERR: list[int] = []  # the command's own stderr, as it was when ``on_stop_signals`` was installed (see ``line``)


def line(cmd: str, signum: int) -> None:
    """The command's one line for ``signum`` (on a closed terminal there may be nowhere to write it: not an error).
    Written to the command's own stderr: while a notebook runs, fd 2 is a file that holds the kernel's stderr
    (``report._StderrFilter``), and `run`'s line went there and was lost with the file (reliability-16)."""
    text = f"storagelab {cmd}: {WHAT.get(signum, f'signal {signum}')}\n".encode()
    bounded_write(_STDERR[0] if _STDERR else 2, text)


def bounded_write(fd: int, text: bytes, wait_ms: int = 200) -> None:
    """``text`` (shorter than PIPE_BUF) to ``fd`` if it has room within ``wait_ms``, else dropped: a stderr whose
    reader stopped reading (a stopped `| less`, a full pipe) blocked the write in the handler, and SIGTERM no longer
    ended the command (reliability-23: a hang until kill -9, where Python's default would have ended it). For every
    last line before an ``os._exit`` (the stuck-read watcher's, ``pool_deaths``' for unkillable workers)."""
    with suppress(OSError, ValueError):
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        if poller.poll(wait_ms):
            os.write(fd, text)


def on_stop_signals(cmd: str) -> None:
    """SIGTERM and SIGHUP, where still at their defaults, end ``cmd`` with its line and 128 + the signal."""
    owner = os.getpid()
    with suppress(OSError):  # a copy of fd 2 as it is now (not inherited by a program run: os.dup's fds are not)
        copy = os.dup(2)
        for fd in _STDERR:
            os.close(fd)
        _STDERR[:] = [copy]

    def stop(signum, frame) -> None:
        if os.getpid() != owner:  # a forked child: the signal's default, as before this handler
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        line(cmd, signum)
        os._exit(128 + signum)

    for sig in WHAT:
        with suppress(ValueError):  # not the main thread: the defaults stay
            if signal.getsignal(sig) in (signal.SIG_DFL, _early_stop):  # the start-up handler (storagelab/__init__)
                signal.signal(sig, stop)
    if not _FORKS_HOOKED:
        # a forked child (a pool worker) starts with the defaults: Python clears the signals its handler noted just
        # after a fork, so a SIGTERM sent to a new worker (Pool.terminate) was lost and the pool waited for it; they
        # are blocked across the fork and unblocked once the default is back
        os.register_at_fork(before=_block, after_in_parent=_unblock, after_in_child=_defaults)
        _FORKS_HOOKED.append(True)
        sys.unraisablehook = functools.partial(_ctrl_c_dropped, owner, sys.unraisablehook)


def _ctrl_c_dropped(owner: int, previous, unraisable) -> None:
    """A KeyboardInterrupt that Python dropped (raised inside a fork hook, such as logging's, or a ``__del__``:
    "Exception ignored in ...") is a Ctrl-C taken again, not a traceback and a lost Ctrl-C (reliability-33: a
    Ctrl-C that another thread took while `build` forked ran its handler inside logging's fork hook; the build ran
    on for 200 s, ran every notebook, and ended 130). In a forked child (a pool worker given the group's Ctrl-C
    inside ``_defaults``) it was dropped already: now without the traceback; its parent stops it."""
    if not issubclass(unraisable.exc_type, KeyboardInterrupt):
        previous(unraisable)
    elif os.getpid() == owner:
        _send_again(_raiser(unraisable.exc_traceback, signal.SIGINT))


def _raiser(tb, first: int) -> int:
    """The signal whose handler raised the exception of traceback ``tb`` (``first`` tried first: one handler may
    serve several signals); Python's own Ctrl-C handler, in C, leaves no frame: SIGINT."""
    codes = set()
    while tb is not None:
        codes.add(tb.tb_frame.f_code)
        tb = tb.tb_next
    for sig in (first, *(s for s in BLOCKED if s != first)):
        handler = signal.getsignal(sig)
        if getattr(getattr(handler, "__func__", handler), "__code__", None) in codes:
            return sig
    return signal.SIGINT if signal.getsignal(signal.SIGINT) is signal.default_int_handler else first


_FORKS_HOOKED: list[bool] = []


# Ctrl-C too (reliability-17): a SIGINT that came during a fork ran its handler at the start of the after-fork hook,
# and its KeyboardInterrupt was dropped there (28 of 200 tries of a forking loop lost it); blocked, it is taken below
BLOCKED = {*WHAT, signal.SIGINT}


_BEFORE = threading.local()  # the signals of BLOCKED that the forking thread already blocked before the fork


def _block() -> None:
    _BEFORE.blocked = signal.pthread_sigmask(signal.SIG_BLOCK, BLOCKED) & BLOCKED


def _unblock() -> None:
    # only what ``_block`` blocked: a signal the thread held before the fork stays held (spark-ingest holds Ctrl-C
    # while its JVM starts, and pyspark's fork of the JVM unblocked it: the command ended mid-start and the JVM
    # printed 60 lines of Java stack traces; found by the clean-clone run of the reliability-17 merges)
    # one signal at a time: a handler that raises while ``sig`` is unblocked ran for ``sig``. A signal that came
    # during the fork runs its handler here, inside the fork hook, and a handler that raises (the lab's
    # KeyboardInterrupt) has its exception dropped by Python, and the signal with it (a SIGTERM of `lab bonnie` while
    # it started bonnie++ was lost: the lab ran on, reliability-16); it is sent again once the hook has returned.
    # Reliability-17: a snapshot of the pending signals taken before the unblock missed one that came between the two
    # (4 of 100 tries lost it), and a re-send that came during the next fork reached the process through the timer's
    # own thread, which did not block it, and ran its handler inside that fork's hook (lost again).
    # No loop: a loop's jump back may run a handler noted meanwhile (by another thread), and an exception there
    # would leave the next signal blocked for good; each unblock is in a `finally` of the one before.
    held = getattr(_BEFORE, "blocked", set())
    try:
        _unblock_one(signal.SIGTERM, held)
    finally:
        try:
            _unblock_one(signal.SIGHUP, held)
        finally:
            _unblock_one(signal.SIGINT, held)


def _unblock_one(sig: int, held: set) -> None:
    if sig in held:
        return
    try:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {sig})
    except BaseException as e:  # noqa: BLE001
        # the handler that raised may be another signal's, noted before: a Ctrl-C taken while SIGTERM was unblocked
        # was sent again as SIGTERM, "terminated (SIGTERM)" and 143 (reliability-33: 7 of 20 forks)
        _send_again(_raiser(e.__traceback__, sig))


def _send_again(sig: int) -> None:
    """``sig`` to this process's main thread (a thread-directed signal: blocked there during another fork, it waits
    for that fork's ``_unblock``) 50 ms from now, from a thread that blocks the stop signals itself. Not while the
    interpreter ends: the thread could never run and its start waited for good (reliability-34 processes: a
    KeyboardInterrupt raised in a ``__del__`` at exit); the process is ending anyway."""
    if sys.is_finalizing():
        return
    main = threading.main_thread().ident

    def again() -> None:
        signal.pthread_sigmask(signal.SIG_BLOCK, BLOCKED)
        with suppress(OSError, ProcessLookupError):
            signal.pthread_kill(main, sig)  # type: ignore[arg-type]

    threading.Timer(0.05, again).start()


def take_noted() -> None:
    """Run now, in the main thread, the handlers of the signals that another thread has already taken.

    A process-directed signal goes to any thread that does not block it, and it goes elsewhere while the main thread
    holds it (``_block``, across a fork). polars starts a thread of its own at import (``polars-ooc-cleaner``) that
    blocks nothing. If that thread took the signal, Python only noted it, and the handler runs at the main thread's
    next check of its signals. A main thread that then waits in a read (``communicate``) makes no such check. So a
    SIGTERM that came while `lab bonnie` started bonnie++ was taken there, and the lab waited for bonnie++ to end
    (reliability-20: 1 in 2,000 tries under load). Python checks its signals in ``pthread_sigmask`` (an empty set
    changes nothing). A wait calls this between its short timeouts."""
    signal.pthread_sigmask(signal.SIG_BLOCK, ())


_COMMANDS_CTRL_C = ("_on_sigint", "CtrlC._handler", "_early_interrupt")  # the program's own Ctrl-C handlers


def _ctrl_c_left_to_the_parent(signum, frame) -> None:
    """A forked child's Ctrl-C until its own set-up decides (a pool worker's initializer ignores it): the terminal
    sends it to the whole group, and the parent stops its children. Reset to the default by an exec."""


def _defaults() -> None:
    for sig in WHAT:
        with suppress(ValueError):
            if getattr(signal.getsignal(sig), "__qualname__", "").startswith("on_stop_signals."):
                signal.signal(sig, signal.SIG_DFL)
    # reliability-33 (processes, Medium left): a group Ctrl-C while `build` started a pool worker ran the command's
    # handler in the child before its initializer: a KeyboardInterrupt traceback from ForkProcess-1 (1 of 14 tries)
    with suppress(ValueError):
        if getattr(signal.getsignal(signal.SIGINT), "__qualname__", "") in _COMMANDS_CTRL_C:
            signal.signal(signal.SIGINT, _ctrl_c_left_to_the_parent)
    _unblock()


def stopped(cmd: str, signum: int) -> int:
    """A command that stopped its child on ``signum`` (JupyterLab): its one line, and 130, 143 or 129."""
    if signum == signal.SIGINT:
        bounded_write(2, f"storagelab {cmd}: interrupted\n".encode())
    else:
        line(cmd, signum)
    return 128 + signum

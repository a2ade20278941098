"""Ctrl-C that ends a command whose main thread is stuck in one system call that never returns.

A read of a FUSE file system whose process does not answer (a colleague's sshfs gone away, a mount whose process was
stopped) waits in the kernel until the answer comes or a *fatal* signal arrives: SIGTERM (its default action kills)
ended such an ingest, but Ctrl-C, which storagelab handles in Python, only marks the signal as pending, and Python
runs its handler once the call returns: never (issue 26, reliability-11 store Low 2: `ingest` of the user's hanging
FUSE folder ignored SIGINT). The kernel gives the signal to the stuck thread, which never returns to take it, so no
handler of any thread runs. Within ``exit_when_stuck``, a thread looks at the main thread's pending signals
(``/proc/self/task/<tid>/status``) four times a second: a SIGINT pending there and not blocked for ``GRACE`` seconds
means the main thread is inside one call that does not return; the thread then says the command's one line and ends
the process with 130 (``os._exit``, which the kernel carries out as a fatal signal to the stuck thread). In every
other case the signal is taken within milliseconds, the watcher does nothing, and the command stops as it always
did.

SIGTERM and SIGHUP are watched alike (reliability-17, h1): since ``stopsignals`` gives them a Python handler (for
their one line), they are no longer fatal either, so `kill` (and a closed terminal) left `sql` of a stopped FUSE
mount in the kernel's wait, state D, until kill -9; now they end it after ``GRACE`` s with 143 or 129 and the
command's line naming the signal."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from . import stopsignals

INGEST_STUCK = (
    "storagelab ingest: interrupted while reading a file system that does not answer (a FUSE or network mount?); "
    "every file written before the stop is in the database, run ingest again to finish"
)
GRACE = 3.0  # seconds a SIGINT may stay pending on the main thread, not blocked, before the process ends
POLL = 0.25  # seconds between two looks at /proc/self/task/<main>/status


WATCHED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # the signals storagelab handles in Python to stop


def _signal_waiting(status: str) -> int | None:
    """The first of WATCHED that the thread's /proc status shows pending (its own or the process's) and not blocked;
    None when there is none."""
    wanted = ("SigPnd:", "ShdPnd:", "SigBlk:")
    f = {ln[:6]: int(ln[7:].strip(), 16) for ln in status.splitlines() if ln.startswith(wanted)}
    pending = (f.get("SigPnd", 0) | f.get("ShdPnd", 0)) & ~f.get("SigBlk", 0)
    return next((sig for sig in WATCHED if pending & 1 << (sig - 1)), None)


def _watch(status_file: str, line: str, done: threading.Event) -> None:
    since = None
    while not done.wait(POLL):
        try:
            with open(status_file) as f:
                waiting = _signal_waiting(f.read())
        except OSError:
            return
        since = (since or time.monotonic()) if waiting else None
        if waiting and since is not None and time.monotonic() - since >= GRACE and not done.is_set():
            line = _LINES[-1] if _LINES else line  # the innermost block's (build's ingest: the ingest's line)
            said = line if waiting == signal.SIGINT else line.replace("interrupted", stopsignals.WHAT[waiting], 1)
            stopsignals.bounded_write(2, (said + "\n").encode())  # a stopped stderr reader must not hold it
            os._exit(128 + waiting)


@contextmanager
def exit_when_stuck(line: str) -> Iterator[None]:
    """Within the block, a SIGINT that the main thread has not taken for ``GRACE`` s ends the process: ``line`` on
    stderr, exit 130 (a SIGTERM or SIGHUP: ``line`` naming it, 143 or 129). Only from the main thread, where /proc shows the signals pending."""
    status_file = f"/proc/self/task/{threading.get_native_id()}/status"
    if threading.current_thread() is not threading.main_thread() or not os.path.exists(status_file):
        yield
        return
    if _LINES:  # within another block (build runs the ingest): its watcher says this line meanwhile, one watcher
        _LINES.append(line)
        try:
            yield
        finally:
            _LINES.pop()
        return
    done = threading.Event()
    watcher = threading.Thread(target=_watch, args=(status_file, line, done), daemon=True)
    # the watcher never takes the stop signals itself: started with them blocked (a thread starts with its creator's
    # mask), they go to the main thread, or wait while it holds them (spark-ingest holds Ctrl-C while its JVM starts;
    # the watcher took it there, the command ended mid-start and the half-started JVM held the pipes: test_spark's
    # Ctrl-C test, after reliability-18 watched every command)
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, WATCHED)
    try:
        watcher.start()
    except RuntimeError:  # no thread to be had (the user's processes at `ulimit -u`): the block runs unwatched, as
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        yield  # before this watch; it ended in a traceback ("can't start new thread", reliability-17)
        return
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    _LINES.append(line)
    try:
        yield
    finally:
        done.set()
        _LINES.pop()
        watcher.join(1)


_LINES: list[str] = []  # the lines of the blocks entered, innermost last (one watcher for them all)


def current_line() -> str | None:
    """The stuck line of the innermost block entered (None outside every block)."""
    return _LINES[-1] if _LINES else None


OWN_LINE = ("ingest",)  # commands that enter ``exit_when_stuck`` with a line of their own (INGEST_STUCK)
STUCK_TAIL = (
    "interrupted while reading a file system that does not answer (a FUSE or network mount?); run it again once the "
    "mount answers"
)


def run_unstuck(args) -> int:
    """``args.func(args)`` within ``exit_when_stuck``, for every command (ingest has its own line). Reliability-15
    (h1): root's `sql --db` of a database in the second user's folder, their bindfs stopped: Ctrl-C left it in the
    kernel's FUSE wait (`request_wait_answer`, state D), and once the interrupt had been sent to the stopped file
    system SIGTERM no longer ended it either: only kill -9 did. Reliability-18 (h6): only sql, parse, export, compare
    and schema were watched, and `run -p db_path` of a database on such a mount (its check, ``older_database``, reads
    it before any notebook runs) ignored Ctrl-C and SIGTERM alike until kill -9; so every command is watched now (a
    command whose main thread waits in Python takes its signals at once, and the watcher never acts there)."""
    if getattr(args, "cmd", None) in OWN_LINE:
        return args.func(args)
    with exit_when_stuck(f"storagelab {args.cmd}: {STUCK_TAIL}"):
        return args.func(args)

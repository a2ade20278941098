"""One storagelab command at a time writes a report tree (``reports/``, or a ``run --output`` folder).

A notebook run starts by removing its report's old summary and figures, then papermill rewrites the executed
notebook cell by cell; a render reads them all. Two builds at once in one clone therefore undid each other: a second
build killed in its first notebooks had removed the summaries and figures the first had just written, and the first
ended "0 failed" with reports saying "No summary" (reliability-7). So ``build``, ``run`` and ``report`` hold an
exclusive lock (flock on ``<tree>/.storagelab.lock``, released by the kernel however the holder ends) while they
write; a second one waits for it (``run`` and ``report`` until it is free, ``build`` for ``--wait`` seconds, as for
the database) and says once that it waits, and for whom.

The lock file is this user's alone (0600): flock needs only a file open for reading, and the first lock file
(``.storagelab.lock``, 0644) let any user who could read it hold it, so root's ``report`` and ``run`` waited for ever,
named "another storagelab command (pid )" (reliability-8). The holder named is the one the kernel lists
(/proc/locks), with its user when it is not this one."""

from __future__ import annotations

import fcntl
import math
import os
import pwd
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from .errors import StoragelabError
from .terminal import say

LOCK = ".storagelab-writer.lock"  # 0600; not the old 0644 .storagelab.lock, which other users may hold open
OLD_LOCK = ".storagelab.lock"
_HELD: set[int] = set()  # this process's lock descriptors, which a forked notebook worker closes (close_inherited)


class ReportsBusyError(StoragelabError):
    """Another storagelab command is writing the report tree."""


@contextmanager
def writing(tree: Path, wait: float = 0.0, retry: str = "", command: str = "") -> Iterator[None]:
    """Hold the report tree ``tree`` for this process until the block ends (its notebook workers close their copy).
    Another holder: wait up to ``wait`` seconds (saying so once), then ReportsBusyError naming it and ``retry``."""
    from .ownership import foreign_link, shared  # noqa: PLC0415

    why = foreign_link(tree)
    if not why:
        tree.mkdir(parents=True, exist_ok=True)
        # again once made: a free name on its way may have been made another user's link before the mkdir, which
        # followed it, and the writers walk the tree's path as given (reliability-9 High 3, the lab's --out)
        why = foreign_link(tree, strict=True) or shared(tree.resolve())
        why = why or foreign_link(tree, strict=True, steady=True)  # reliability-13: swapped by RENAME_EXCHANGE
    if why:  # the notebooks, pages and charts are written there by names known in advance (docs/write-paths.md)
        raise StoragelabError(f"the report folder {why}; give a folder of your own")
    fd = os.open(tree / LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    _HELD.add(fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # a FIFO there made the pid's write below "[Errno 22] Invalid argument"
            raise StoragelabError(f"{tree / LOCK} is not a regular file ({stat.filemode(st.st_mode)}): remove it")
        if st.st_uid == os.getuid():
            os.fchmod(fd, 0o600)  # made under another umask or mode: others could open it, and hold it
        deadline, said = time.monotonic() + wait, False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                holder = _holder(fd)
                if time.monotonic() >= deadline:
                    raise ReportsBusyError(f"{tree} is being written by {holder}: {retry}") from None
                if not said:
                    say(f"storagelab {command}: waiting for {holder} to finish writing {tree}")
                    said = True
                time.sleep(0.2)
        with suppress(OSError):  # the pid, for a waiter without /proc/locks; a full disk refused it ("[Errno 28]")
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        with suppress(OSError):  # the old lock file: nothing uses it now, and another user may hold it open
            (tree / OLD_LOCK).unlink()
        yield
    finally:
        _HELD.discard(fd)
        os.close(fd)


def close_inherited() -> None:
    """In a forked worker: close the lock descriptors the fork copied. A worker stuck in the kernel on a stopped
    FUSE mount outlives its command (SIGKILL waits too), and with the copy it held the report tree's lock: every
    later ``build``, ``run`` and ``report`` of the tree waited for it (reliability-21-read, Medium 2). The command
    holds the lock for its workers; they write only their stage folders, which the command commits."""
    for fd in list(_HELD):
        with suppress(OSError):
            os.close(fd)
    _HELD.clear()


def _holder(fd: int) -> str:
    """Who holds the lock on ``fd``'s file, as words: the pid the kernel lists for it (/proc/locks; the pid written
    in the file may still be the previous holder's for a moment), with the user when it is not this one."""
    st = os.fstat(fd)
    where = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    pid = ""
    with suppress(OSError):
        for line in Path("/proc/locks").read_text().splitlines():
            fields = line.split()
            if "FLOCK" in fields and "->" not in fields and where in fields:
                pid = fields[fields.index(where) - 1]
                break
    pid = pid or os.pread(fd, 32, 0).decode(errors="replace").strip()
    if not pid.isdigit():
        return "another process"
    try:
        uid = os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return f"another storagelab command (pid {pid})"
    if uid == os.getuid():
        return f"another storagelab command (pid {pid})"
    return f"another process (pid {pid}, user {_user(uid)})"


def _user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def run_holding(command: str, tree: Path, work: Callable[[], int], wait: float = math.inf, retry: str = "") -> int:
    """``work()`` holding ``tree``; ``build`` waits ``--wait`` seconds, ``run`` and ``report`` until it is free.
    Still held when the wait is over: one line, exit 2."""
    try:
        with writing(tree, wait, retry, command):
            return work()
    except ReportsBusyError as e:
        say(f"storagelab {command}: {e}")
        return 2

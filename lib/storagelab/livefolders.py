"""A folder of this process's that ``readcopies.remove_dead`` must leave alone while the process lives, whatever its
name's pid says (reliability-27).

``remove_dead`` judges a folder named ``<prefix><pid>-<start time>-`` by that pid: gone, or another process's start
time, and the folder is removed. A pid is a pid of one pid namespace only: a run in another container sharing the
folder ("/", /tmp; ``unshare --pid --fork --mount-proc``) sees no such process, or another one, and removed a live
run's folders: spark-ingest's chain under "/" and its Spark folder in /tmp (its ``blockmgr-*``), and the live run
failed with `NoSuchFileException` and 300 lines of Java and Python. So the folder's owner also holds a shared flock on
it for as long as it lives (an open file, not a pid: the kernel's, seen the same from every namespace), and
``remove_dead`` removes a folder only while it holds the exclusive one (``taken``)."""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from pathlib import Path

_HELD: dict[str, int] = {}  # folder -> the open file holding its shared lock (closed by ``release`` or at exit)


def mkdtemp_held(prefix: str, dir: str | None = None) -> str:  # noqa: A002 - tempfile.mkdtemp's name
    """``tempfile.mkdtemp(prefix=..., dir=...)``, the new folder held (see the module's text) until ``release``."""
    while True:
        folder = tempfile.mkdtemp(prefix=prefix, dir=dir)
        try:
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:  # removed before it could be held (reliability-28: 8 in 100 reads): make another
            continue
        fcntl.flock(fd, fcntl.LOCK_SH)  # waits while a remove_dead that judged it dead holds it and removes it
        if os.fstat(fd).st_nlink:  # still there: nothing can take it now
            _HELD[folder] = fd
            return folder
        os.close(fd)  # removed between its making and the lock: make another


def release(folder: str) -> None:
    """Stop holding ``folder`` (before or after its removal)."""
    fd = _HELD.pop(folder, None)
    if fd is not None:
        os.close(fd)


def remove(folder: Path | str) -> None:
    """Remove ``folder`` (a ``mkdtemp_held`` one, or not) and stop holding it."""
    shutil.rmtree(folder, ignore_errors=True)
    release(str(folder))


def taken(fd: int) -> bool:
    """Take the exclusive lock of the folder open as ``fd`` (kept until ``fd`` is closed): False while a live process
    holds it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True

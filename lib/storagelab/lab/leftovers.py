"""What bonnie++ leaves in the lab's work folder when `lab bonnie` is killed outright (SIGKILL: nothing of its own
runs; its guard kills bonnie++ at once): its ``Bonnie.<pid>`` file, as large as --size (issue 26's campaigns, Low).

Each run marks the folder as its own (``.storagelab-lab-<pid>-<start>``, ``<start>`` the process's start time, as
readcopies names its folders) before bonnie++ starts, and removes the folder when it ends. The next `lab bonnie` on
that target removes what a dead run left, only when certainly the lab's (reliability-14 High 1: a sweep removed
files that were not its own): the work folder opened without following a link and this user's; the target root's or
this user's and not writable by others (unless sticky: else a name could be swapped in between); a mark there whose
process is gone and none whose process lives (a live run's files are its own); only the names bonnie++ makes
(``Bonnie.<digits>``, ``Bonnie.<digits>.<digits>``) that are this user's, each found without following a link.
Anything else is left, and said."""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import stat
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from .. import livefolders
from ..readcopies import start_time

MARK = ".storagelab-lab-"
_MARK = re.compile(re.escape(MARK) + r"(\d+)-(\d+)$")
_BONNIE = re.compile(r"Bonnie\.\d+(\.\d+)?$")


def claim(work: Path) -> int:
    """Make ``work`` if need be and mark it as this process's (before bonnie++ starts in it), holding a shared lock
    on it until :func:`release`: another lab run on the same target (several may share the folder) removes the
    folder only when no run holds it (reliability-16: the first to end removed the other's live files). Returns
    the folder's descriptor, for :func:`release`."""
    while True:
        work.mkdir(mode=0o700, exist_ok=True)
        try:
            fd = os.open(work, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except FileNotFoundError:
            continue  # removed by a run that ended in between: made again
        # this user's alone before it is locked: flock needs only a folder open for reading, and another user's
        # exclusive flock on root's 0755 work folder held root's `lab bonnie` here for good, deaf to Ctrl-C and SIGTERM
        # (their handlers return, so the wait is resumed; reliability-32). One older code made 0755 is made 0700
        with suppress(OSError):
            if (st := os.fstat(fd)).st_uid == os.getuid() and st.st_mode & 0o077:
                os.fchmod(fd, 0o700)
        fcntl.flock(fd, fcntl.LOCK_SH)
        try:
            here = os.lstat(work)
            if (here.st_dev, here.st_ino) == (os.fstat(fd).st_dev, os.fstat(fd).st_ino):
                break
        except FileNotFoundError:
            pass
        os.close(fd)  # the folder was removed while waiting for the lock: made again
    pid = os.getpid()
    try:
        mfd = os.open(f"{MARK}{pid}-{start_time(pid) or 0}", os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600, dir_fd=fd)
    except OSError:
        os.close(fd)
        raise
    os.close(mfd)
    return fd


def release(work: Path, fd: int) -> None:
    """The end of this process's run in ``work`` (``fd`` from :func:`claim`): the folder removed when no other lab
    run holds it, else only this run's mark (bonnie++ removes its own files; a killed one's, the last run to end)."""
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = os.getpid()
            with suppress(OSError):
                os.unlink(f"{MARK}{pid}-{start_time(pid) or 0}", dir_fd=fd)
            return
        with suppress(OSError):
            here = os.lstat(work)
            if (here.st_dev, here.st_ino) == (os.fstat(fd).st_dev, os.fstat(fd).st_ino):
                shutil.rmtree(work, ignore_errors=True)
    finally:
        os.close(fd)


def clean(work: Path) -> list[str]:
    """Remove what dead lab runs left in ``work`` (see the module's text); the lines to say (none: nothing left)."""
    try:
        top = os.stat(work.parent)
        fd = os.open(work, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return []  # no work folder (the usual case), or a link of that name: not ours to look into
    try:
        names = os.listdir(fd)
        left = [n for n in names if _BONNIE.match(n)]
        if not left:
            return []
        marks = [(n, m) for n in names if (m := _MARK.match(n))]
        live = [m[1] for _, m in marks if start_time(int(m[1])) == m[2]]
        try:  # held by a live run (claim), whatever its mark says: its files are its own
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            live = live or ["(its mark unread)"]
        safe = top.st_uid in (0, os.getuid()) and (not top.st_mode & 0o022 or top.st_mode & stat.S_ISVTX)
        if live or not marks or not safe or os.fstat(fd).st_uid != os.getuid():
            why = (
                f"in use by the lab run of pid {live[0]}"
                if live
                else "not certainly a dead lab run's (no mark of the run that made them, or a folder others can change)"
            )
            return [f"lab bonnie: {work}: {', '.join(sorted(left))} {why}: left as they are"]
        removed = []
        for n in left:
            try:
                st = os.lstat(n, dir_fd=fd)
            except FileNotFoundError:
                continue  # gone in between
            if st.st_uid != os.getuid():
                continue
            if stat.S_ISDIR(st.st_mode):
                shutil.rmtree(n, dir_fd=fd)
            elif stat.S_ISREG(st.st_mode):
                os.unlink(n, dir_fd=fd)
            else:
                continue
            removed.append(n)
        for n, _ in marks:
            os.unlink(n, dir_fd=fd)
        return (
            [f"lab bonnie: removed {', '.join(removed)} from {work}: left by a lab run that was killed"]
            if removed
            else []
        )
    finally:
        os.close(fd)


FIO_MARK = ".storagelab-lab-fio-"
_FIO_MARK = re.compile(re.escape(FIO_MARK) + r"(\d+)-(\d+)$")


def _fio_mark() -> str:
    return f"{FIO_MARK}{os.getpid()}-{start_time(os.getpid()) or 0}"


# reliability-27: a mark is also held (a shared flock, until ``unmark_fio`` or this process's end): its name's pid is of
# one pid namespace, and a lab run in another one on the same target (another container) took a live run's mark for a
# dead one's and removed the test files its fio was writing
_HELD: dict[Path, int] = {}


def mark_fio(target: Path, run_id: str) -> None:
    """Note in ``target`` that this process's fio now writes the test files of ``run_id`` there."""
    mark = target / _fio_mark()
    if mark not in _HELD:
        fd = os.open(mark, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        fcntl.flock(fd, fcntl.LOCK_SH)
        _HELD[mark] = fd
    fd = _HELD[mark]
    os.ftruncate(fd, 0)
    os.pwrite(fd, run_id.encode(), 0)


def unmark_fio(target: Path) -> None:
    mark = target / _fio_mark()
    with suppress(OSError):
        os.unlink(mark)
    if (fd := _HELD.pop(mark, None)) is not None:
        os.close(fd)


def _held(path: Path) -> bool:
    """Whether a live process holds the mark ``path`` (``mark_fio``), whatever pid its name holds."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        return not livefolders.taken(fd)  # the same test as for the folders runs hold
    finally:
        os.close(fd)


def _read_mark(path: Path) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        return os.read(fd, 4096).decode("utf-8", "replace").strip()
    finally:
        os.close(fd)


def clean_fio(target: Path, test_files: Callable[[Path, str], list[Path]]) -> list[str]:
    """Remove the test files fio left in ``target`` for a lab run killed outright: those of the run its mark names
    (``test_files``: fio's names for that run), when the mark's process is gone, under the module's conditions."""
    try:
        top = os.stat(target)
        names = os.listdir(target)
    except OSError:
        return []
    marks = [(n, m) for n in names if (m := _FIO_MARK.match(n))]
    dead = [(n, m) for n, m in marks if start_time(int(m[1])) != m[2] and not _held(target / n)]
    if not dead:
        return []
    busy = {_read_mark(target / n) for n, m in marks if (n, m) not in dead}  # the runs live lab fio runs are in
    if top.st_uid not in (0, os.getuid()) or (top.st_mode & 0o022 and not top.st_mode & stat.S_ISVTX):
        return [f"lab fio: {target}: test files of a killed lab run may be left; not removed (others can change it)"]
    fd = os.open(target, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    lines = []
    try:
        for n, _ in dead:
            try:
                mfd = os.open(n, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd)
            except OSError:
                continue
            try:
                ours = os.fstat(mfd).st_uid == os.getuid() and stat.S_ISREG(os.fstat(mfd).st_mode)
                run_id = os.read(mfd, 4096).decode("utf-8", "replace").strip()
            finally:
                os.close(mfd)
            if not ours or not run_id or "/" in run_id or run_id in busy:
                continue  # a live lab run on this target runs the same job, in the same files: left (and its mark)
            removed = []
            for p in test_files(target, run_id):
                try:
                    st = os.lstat(p.name, dir_fd=fd)
                except FileNotFoundError:
                    continue  # gone since it was listed (reliability-17: a traceback)
                if st.st_uid == os.getuid() and stat.S_ISREG(st.st_mode):
                    os.unlink(p.name, dir_fd=fd)
                    removed.append(p.name)
            os.unlink(n, dir_fd=fd)
            if removed:
                lines.append(f"lab fio: removed {', '.join(removed)} from {target}: left by a lab run that was killed")
    finally:
        os.close(fd)
    return lines

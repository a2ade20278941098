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

import os
import re
import shutil
import stat
from pathlib import Path

from ..readcopies import start_time

MARK = ".storagelab-lab-"
_MARK = re.compile(re.escape(MARK) + r"(\d+)-(\d+)$")
_BONNIE = re.compile(r"Bonnie\.\d+(\.\d+)?$")


def claim(work: Path) -> None:
    """Mark ``work`` as this process's (before bonnie++ starts in it)."""
    pid = os.getpid()
    fd = os.open(work / f"{MARK}{pid}-{start_time(pid) or 0}", os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600)
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
            st = os.lstat(n, dir_fd=fd)
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

"""Whether a lab output folder (``--out``) is this user's alone. The lab and fio write there by names known in
advance (``.<run>.txt.part``, fio's ``<run>_bw.1.log``), so a symlink another user planted under such a name would
be written through, as this user (root: any file; reliability-5). Checked when the command starts, and again when
the lab makes the folder: one that did not exist then may have been made since by another user (in a shared
parent such as /tmp)."""

from __future__ import annotations

import fcntl
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..ownership import _group_members, foreign_link, movable_by_others, others_can_write  # noqa: F401  (lab.cli and tests import them from here)


def foreign(option: str, path: Path | None, *, steady: bool = False) -> str | None:
    """The words refusing ``option PATH`` when a symlink of another user's is on its way (``foreign_link``), else
    None: they could turn it, after the checks, to a folder of theirs holding symlinks under the names the lab, fio
    or bonnie++ write."""
    link = foreign_link(path, steady=steady) if path else None  # steady: ownership.foreign_link (reliability-13)
    if not link:
        return None
    return f"{option} {path}: {link}, who could turn it to a folder of theirs once it is checked; give the real path"


def refusal(what: str, out: Path) -> str | None:
    """The one line refusing ``out`` to ``storagelab lab WHAT`` when another user can write into it, else None.
    FileNotFoundError when it does not exist."""
    st = out.stat()
    owner = others_can_write(st, out)
    if not owner:
        return None
    return (
        f"storagelab lab {what}: --out {out} {owner} (mode {stat.filemode(st.st_mode)}): another user could put a "
        "symlink there under a name the lab or fio writes, and have them overwrite any file you can write; give a "
        "folder of your own (e.g. a new folder under it)"
    )


def made_ours(what: str, out: Path) -> str | None:
    """Make ``out`` (and its parents) when missing; then ``refusal`` of the folder that is there now."""
    out.mkdir(parents=True, exist_ok=True)
    return refusal(what, out)


LOCK = ".storagelab-lab.lock"  # hidden: an ingest of OUT skips it


@contextmanager
def one_run_at_a_time(what: str, out: Path) -> Iterator[str | None]:
    """Within the block, this process alone writes ``out`` (an exclusive flock on its ``LOCK`` file, 0600, released by the kernel
    however the process ends; not inherited by fio or bonnie++); the line refusing it when another lab run holds it,
    else None. Reliability-24: two `lab fio` with one --out wrote the same ``.<run>.txt.part`` and fio logs: one
    run's output was found cut (NUL bytes) and not kept, the other ended with a bare 'No such file or directory' on
    its .part, and left the logs of its run in OUT without manifest rows (an ingest of OUT took 6 unlabelled files).
    Reliability-25: the lock was the folder's own, and another user who could read OUT (root's 0755 folder) locked it
    and every lab run of its owner there was refused, 'being written by another lab run'."""
    while True:
        try:  # a file of its own, not the folder: any user who can read OUT could lock that (reliability-25)
            fd = os.open(out / LOCK, os.O_RDONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o600)
        except OSError as e:
            yield f"storagelab lab {what}: --out {out}: cannot use {LOCK} there ({e.strerror}): remove it"
            return
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
                yield f"storagelab lab {what}: --out {out}: {LOCK} there is not a file of yours: remove it"
                return
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield (
                    f"storagelab lab {what}: --out {out} is being written by another lab run (their runs would "
                    "overwrite each other's files); wait for it to end, or give another --out"
                )
                return
            try:
                here = os.lstat(out / LOCK)
            except FileNotFoundError:
                continue  # removed by the run that held it, which ended in between: made again
            if (here.st_dev, here.st_ino) != (st.st_dev, st.st_ino):
                continue
            try:
                yield None
            finally:
                os.unlink(out / LOCK)  # still held: a run that opened it meanwhile sees it gone (above)
            return
        finally:
            os.close(fd)

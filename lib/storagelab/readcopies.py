"""The folders of ``database._private_copy`` (a reader's private copy of a database, where no hard link can be
made): named after the reader's process, so that the next reader removes those of readers that died.

A reader killed in the middle of its copy (SIGKILL: nothing of its own runs) left ``storagelab-read-*`` in the
temporary folder, as big as the database, and nothing ever removed it (issue 26, reliability-13 h7). Each folder is
now ``storagelab-read-<pid>-<start>-<random>``, ``<start>`` the process's start time (``/proc/<pid>/stat``, clock
ticks since boot), and a reader making a copy first removes every such folder whose process is gone (no process
with that pid, or one with another start time: the pid was reused) when it is this user's own folder, checked on
the descriptor it is opened by (``O_NOFOLLOW``: a symlink or another user's folder of that name is left alone).
Nothing is removed unless the temporary folder is root's or this user's, and sticky or writable by its owner alone
(/tmp is sticky), so that another user cannot swap the name between the check and the removal; the removal itself
(``shutil.rmtree``, by descriptor) follows no link inside it."""

from __future__ import annotations

import errno
import os
import re
import shutil
import stat
import tempfile
from pathlib import Path

from . import livefolders

PREFIX = "storagelab-read-"
_NAME = re.compile(re.escape(PREFIX) + r"(\d+)-(\d+)-[^/]+$")


def start_time(pid: int) -> str | None:
    """The start time of process ``pid`` (clock ticks since boot, field 22 of /proc/<pid>/stat), or None when
    there is no such process (or no /proc)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read().decode("ascii", "replace")
    except OSError:
        return None
    return data[data.rindex(")") + 2 :].split()[19]  # after the command name, which may hold spaces


def new_folder() -> Path:
    """A new 0700 folder for this process's copy, in the temporary folder, after the removal of dead readers'."""
    remove_dead()
    # held (livefolders.remove lets it go), reliability-28: a reader of another pid namespace removed a live one's
    return Path(livefolders.mkdtemp_held(f"{PREFIX}{os.getpid()}-{start_time(os.getpid()) or 0}-"))


def dead_reader_prefix(prefix: str) -> str:
    """``prefix`` with this process's pid and start time: the name of a folder ``remove_dead(..., prefix)`` removes
    once this process is gone (reliability-15: ``database._private_view``'s ``.<db>.read-*`` beside a database in a
    shared folder, left by a reader SIGKILLed between its making and its removal, 2 in 150 kills, each holding a hard
    link to the database, were never removed)."""
    return f"{prefix}{os.getpid()}-{start_time(os.getpid()) or 0}-"


def remove_dead(tmpdir: str | None = None, prefix: str = PREFIX) -> list[str]:
    """Remove the copies of readers that are gone (see the module's text); returns the names removed. ``prefix``:
    another kind of such folder (``dead_reader_prefix``)."""
    tmpdir = tmpdir or tempfile.gettempdir()
    pattern = _NAME if prefix == PREFIX else re.compile(re.escape(prefix) + r"(\d+)-(\d+)-[^/]+$")
    try:
        top = os.stat(tmpdir)
        names = os.listdir(tmpdir)
    except OSError:
        return []
    if top.st_uid not in (0, os.getuid()) or (top.st_mode & 0o022 and not top.st_mode & stat.S_ISVTX):
        return []  # another user could swap a name there between the check and the removal: nothing removed
    removed = []
    for name in names:
        m = pattern.match(name)
        if not m or start_time(int(m[1])) == m[2]:  # not a copy's name, or its reader is alive
            continue
        try:
            fd = os.open(os.path.join(tmpdir, name), os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:  # a symlink, a file, or gone
            continue
        try:
            st = os.fstat(fd)
            if st.st_uid != os.getuid() or not stat.S_ISDIR(st.st_mode):
                continue  # another user's folder of that name: theirs to remove
            if not livefolders.taken(fd):  # reliability-27: its pid is of another pid namespace, its owner alive
                continue
            shutil.rmtree(os.path.join(tmpdir, name), ignore_errors=True)  # under the lock: its owner-to-be waits
        finally:
            os.close(fd)
        removed.append(name)
    return removed


def no_room(db: Path, e: OSError, size: int, tmpdir: str) -> str | None:
    """The line for a copy that did not fit (``e`` a full disk or quota), naming the copy, its size and the temporary
    folder: a bare ``[Errno 28] No space left on device`` did not say it was the copy (reliability-13 h7); else None."""
    if e.errno not in (errno.ENOSPC, errno.EDQUOT):
        return None
    return (
        f"{db}: no room for this reader's private copy of the database ({size:,} bytes, made where no hard link to "
        f"it can be made) in the temporary folder {tmpdir} ({e.strerror}): free space there, or set TMPDIR "
        "to a folder of yours with room"
    )


def read_target(db: Path) -> tuple[Path, tuple[int, int] | None]:
    """The database file a reader is to open for ``db``: (its path with no symlink left in it, the (device, inode)
    of the file found there), opened as ingest opens an input (``ingest_open.open_input``). Reliability-15 (h1):
    ``storagelab sql --db`` given the second user's symlink to root's 0600 database opened it by that name and
    printed root's rows; a file reached through another user's link is read only when it is theirs (StoreError
    otherwise). One this user may not read: (``db``, None), DuckDB's own open says so; any other failure (a name swapped
    meanwhile): StoreError, never an open by the name unchecked."""
    from .errors import StoreError  # noqa: PLC0415
    from .ingest_open import open_input  # noqa: PLC0415

    try:
        fh = open_input(db, reader_views=True)  # the hard links of other readers' views (and killed ones') beside it
    except OSError as e:
        if e.errno == errno.EACCES:  # a reader who may not read it: DuckDB's open says so
            return db, None
        raise StoreError(f"{db}: {e.strerror}") from None  # never opened by its name unchecked (a race's loser)
    with fh:
        st = os.fstat(fh.fileno())
        real = os.readlink(f"/proc/self/fd/{fh.fileno()}")
    if not real.startswith("/") or real.endswith(" (deleted)"):  # its name replaced since it was opened
        raise StoreError(f"{db}: replaced while it was opened; not read")
    return Path(real), (st.st_dev, st.st_ino)


def copy_exactly(src: int, to: Path, size: int) -> bool:
    """The first ``size`` bytes of the descriptor ``src`` copied into the new file ``to``, its holes left holes;
    whether ``src`` holds exactly ``size`` bytes (False: it grew or shrank while it was copied, the copy is not it).
    Reliability-17 (h1): a reader's private copy wrote every byte of the file, to its end: the user's 2 GiB sparse
    file (3.5 MB on disk) in their folder, given to root's `sql --db`, wrote 2 GiB into /tmp (a 1 TB one fills the
    disk), and a part grown after its size was checked was copied whole."""
    with open(to, "xb") as out:
        pos = 0
        while pos < size:
            try:
                start = os.lseek(src, pos, os.SEEK_DATA)
                end = min(os.lseek(src, start, os.SEEK_HOLE), size)
            except OSError as e:  # ENXIO: a hole up to the end; EINVAL: no SEEK_DATA there (read it all)
                if e.errno == errno.ENXIO:
                    break
                if e.errno != errno.EINVAL:
                    raise
                start, end = pos, size
            if start >= size:
                break
            os.lseek(src, start, os.SEEK_SET)
            out.seek(start)
            while start < end:
                block = os.read(src, min(end - start, 1 << 20))
                if not block:
                    return False  # shorter than it was
                out.write(block)
                start += len(block)
            pos = end
        out.truncate(size)
    return os.fstat(src).st_size == size


def identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino

"""Whether the bytes at a path are still the ones an ingest read, without reading them: the file's *stamp*.

A stamp is what stat said of a file when it was listed (size, mtime, inode, ctime), kept with the SHA-256 of the
bytes then read. A stored file (or a copy on record) is skipped unread only when it is listed with the stamp that
was recorded with the bytes its record holds. Size and mtime alone cannot tell two same-size logs of one tar
second apart: `mv` keeps mtimes and `touch -d` sets them back, and every store campaign (reliability-24, -25, -27)
found files skipped with another file's rows. `mv` puts another inode at a path, and any write, `touch` or rename
sets a file's ctime to the time of the change, which no user can set back.

A stat vouches only for a ctime the clock has passed (git's "racy" files): a file changed in the clock tick of its
listing could be changed again in that tick, keeping its ctime. File times come from the kernel's coarse clock
(CLOCK_REALTIME_COARSE, a tick of 1-10 ms); a ctime in whole seconds (a filesystem that keeps only seconds) is
taken to be up to 2 s late. A listed file whose ctime the clock has not passed is stat'ed again once the tick is
over (a wait of at most WAIT_NS); one that still cannot vouch keeps no stamp, and is read again at its next ingest.
So does every file of a file system whose ctime is not real (realctime.py: vfat, sshfs, other FUSE file systems).

The stamps live in the table ``file_stamps_at_open``, the store's own bookkeeping beside ``meta``: not part of the
schema (an older database gains it, its files read once more), not exported to Parquet. A stamp is trusted only beside a
record with its SHA-256, so a stamp left behind (a kill between two writes) can only make a file be read again."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

import pyarrow as pa

from .. import paths
from . import db, faults
from .listing import ListedFile

if TYPE_CHECKING:
    from .worker import Outcome

TABLE = "file_stamps_at_open"
OLD_TABLE = "file_stamps"  # the table of the stamps kept before the descriptor was checked
WAIT_NS = 50_000_000  # the longest wait for the clock to pass a just-changed file's ctime
_SECOND = 1_000_000_000
_COARSE = 5  # CLOCK_REALTIME_COARSE (Linux): the clock file times are taken from


class Stamp(NamedTuple):
    sha256: str
    size: int
    mtime_ns: int
    ino: int
    ctime_ns: int


def clock_ns() -> int:
    """The time a file changed from now on can have as its ctime, at the least."""
    if sys.platform.startswith("linux"):
        return time.clock_gettime_ns(_COARSE)
    return time.time_ns() - _SECOND  # a clock of unknown grain: a second's margin


def vouches(ctime_ns: int, clock: int) -> bool:
    """Whether a stat with this ctime, taken after ``clock`` was read, vouches for the bytes: any later change gets
    another ctime."""
    late = 2 * _SECOND if ctime_ns % _SECOND == 0 else 0
    return 0 <= ctime_ns and ctime_ns + late < clock


def settle(listing: list[ListedFile], clock: int) -> list[ListedFile]:
    """The listing with each file's stamp one that vouches, or its ctime -1 (no stamp): ``clock`` is
    ``clock_ns()`` read before the listing's stats. Files changed in the listing's last tick are stat'ed again once
    the clock has passed their ctime."""
    racy = [i for i, f in enumerate(listing) if f.ctime_ns >= 0 and not vouches(f.ctime_ns, clock)]  # -1: realctime
    if not racy:
        return listing
    out = list(listing)
    soon = [c for i in racy if (c := out[i].ctime_ns) % _SECOND and c - clock < WAIT_NS]
    deadline = time.monotonic_ns() + WAIT_NS
    while soon and clock_ns() <= max(soon) and time.monotonic_ns() < deadline:
        time.sleep(0.001)
    again = clock_ns()
    for i in racy:
        f = out[i]
        try:
            st = os.stat(f.path)
        except OSError:
            out[i] = f._replace(ctime_ns=-1)
            continue
        # reliability-34: a link's key is the file it led to when listed (reliability-35: on its device)
        if f.link and (st.st_ino, st.st_dev) != (f.ino, f.dev or st.st_dev):
            out[i] = f._replace(ctime_ns=-1)  # re-pointed since: the read refuses another inode (led_elsewhere)
        elif vouches(st.st_ctime_ns, again):
            out[i] = f._replace(size=st.st_size, mtime_ns=st.st_mtime_ns, ino=st.st_ino, ctime_ns=st.st_ctime_ns)
        else:
            out[i] = f._replace(ctime_ns=-1)
    return out


def matches(stamp: Stamp | None, item: ListedFile, sha256: str) -> bool:
    """Whether ``item`` (as listed) holds the bytes of SHA-256 ``sha256``, by its recorded stamp."""
    return (
        stamp is not None
        and item.ctime_ns >= 0
        and stamp == (sha256, item.size, item.mtime_ns, item.ino, item.ctime_ns)
    )


def holds(key: str, stamp: Stamp | None, sha256: str) -> bool:
    """Whether the file stored as ``key`` (not listed by this run) holds the bytes of SHA-256 ``sha256`` now, by
    its recorded stamp."""
    if stamp is None or stamp.sha256 != sha256:
        return False
    try:
        st = os.stat(key if key.startswith("/") else paths.ROOT / key)
    except (OSError, ValueError):
        return False
    return (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns) == stamp[1:]


# Before ba05dbb (reliability-29 store, High 1) a stamp was kept without checking that the descriptor read was the
# file listed: a folder swapped between an ingest's listing and its read, and back after, left the listing's stamps over
# the other folder's bytes, skipped for ever. Those stamps were in OLD_TABLE, and code of that age still writes there
# when it is run again on a database (another checkout, an older venv, a CI image: reliability-31 store, Medium 1).
# Today's stamps are in a table no older code reads or writes, and OLD_TABLE is dropped, unread: its files are read
# once more. A stamp here is trusted only beside a record with its SHA-256 and a file whose ctime is the one stamped,
# so a file an older code stored or read since (another SHA-256, or another ctime) is read again.
OLD_MARK = "file_stamps"  # 4621ad2's meta key that marked OLD_TABLE's stamps as checked ones: OLD_TABLE's alone


def ensure(con) -> None:
    """The table, in a database of any age, holding only stamps of today's kind; the bookkeeping of older rules
    (the size-and-second rule's, and stamps kept before the descriptor was checked), gone."""
    con.execute(f"DROP TABLE IF EXISTS {OLD_TABLE}")
    con.execute(
        f"CREATE TABLE IF NOT EXISTS {TABLE} (path VARCHAR, sha256 VARCHAR, size_bytes BIGINT, mtime_ns BIGINT, "
        "inode UBIGINT, ctime_ns BIGINT)"
    )
    con.execute("DELETE FROM meta WHERE starts_with(key, 'failed:') OR key = ?", [OLD_MARK])


def load(con) -> dict[str, Stamp]:
    return {
        r[0]: Stamp(*r[1:])
        for r in con.execute(f"SELECT path, sha256, size_bytes, mtime_ns, inode, ctime_ns FROM {TABLE}").fetchall()
    }


class Read(NamedTuple):
    """A file read by an ingest: its listing's stamp with the SHA-256 of its bytes (a worker's Outcome has these
    attributes too)."""

    key: str
    sha256: str
    size: int
    mtime_ns: int
    ino: int
    ctime_ns: int


def put(con, read: Sequence[Read] | Sequence[Outcome]) -> None:
    """In the caller's transaction: the stamps of files read, in place of their old ones (a file whose listing
    cannot vouch keeps none)."""
    if not read:
        return
    con.execute(f"DELETE FROM {TABLE} WHERE path IN (SELECT unnest(?::VARCHAR[]))", [[r.key for r in read]])
    kept = [r for r in read if r.ctime_ns >= 0 and r.sha256]
    if kept:
        tbl = pa.table(
            {
                "path": pa.array([r.key for r in kept], pa.string()),
                "sha256": pa.array([r.sha256 for r in kept], pa.string()),
                "size_bytes": pa.array([r.size for r in kept], pa.int64()),
                "mtime_ns": pa.array([r.mtime_ns for r in kept], pa.int64()),
                "inode": pa.array([r.ino for r in kept], pa.uint64()),
                "ctime_ns": pa.array([r.ctime_ns for r in kept], pa.int64()),
            }
        )
        db.insert(con, TABLE, tbl)


def save(con, read: Sequence[Read]) -> None:
    """The stamps of the files this run read (``put``); then those of paths with no record leave."""
    con.execute("BEGIN")
    try:
        put(con, read)
        con.execute(
            f"DELETE FROM {TABLE} WHERE path NOT IN (SELECT path FROM files UNION ALL SELECT path FROM duplicates)"
        )
        con.execute("COMMIT")
    except BaseException:
        faults.rollback(con)
        raise

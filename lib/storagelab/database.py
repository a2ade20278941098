"""Opening the database file, the one piece the ingest (``store``) and the read side (``analysis.db``, ``dataset``)
share: ``connect`` with its one-line errors, the schema signature a database is checked against, and the fault
injection the tests use. Nothing here loads the ingest or a parser."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import shlex
import signal
import stat
import time
from pathlib import Path

import duckdb

from . import livefolders, paths, readcopies
from .errors import DatabaseBusyError, StoreError
from .interrupts import track
from .livewriters import live_writer, unseen_writer
from .ownership import loose_file
from .schema import ddl
from .usernames import user_name

# created with the tables (and part of the schema signature): a path is stored once
EXTRA_DDL = ["CREATE UNIQUE INDEX IF NOT EXISTS files_path ON files (path)"]


_FAULT = os.environ.get("STORAGELAB_FAULT")  # tests only: "stage" or "stage:N" (see inject)
_FAULT_SEEN: dict[str, int] = {}


def inject(stage: str) -> None:
    """Fault injection for tests/test_store_faults.py: with STORAGELAB_FAULT=stage[:N] the process
    SIGKILLs itself the N-th time (default 1st) it reaches ``stage``. A no-op otherwise. Callers
    call it as ``faults.inject(...)`` so that a test may replace it."""
    if _FAULT is None:
        return
    name, _, n = _FAULT.partition(":")
    if name == stage:
        _FAULT_SEEN[stage] = k = _FAULT_SEEN.get(stage, 0) + 1
        if k >= int(n or 1):
            os.kill(os.getpid(), signal.SIGKILL)


def first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


def data_file_given(db: Path) -> str:
    """The line for a --db that names a CSV, Parquet or JSON file (DuckDB opens one as an in-memory database)."""
    return (
        f"{db} is not a DuckDB database file: DuckDB reads it as a data file (CSV, Parquet, JSON). --db takes "
        f"a database file, e.g. {db.with_suffix('.duckdb')}"
    )


def folder_given(db: Path) -> str:
    """The line for a --db that names a folder: a dataset's (``export --dataset``: it has no database file inside)
    or any other."""
    if (db / "_storagelab" / "meta.json").is_file():  # dataset.META_DIR
        return (
            f"{db} is a dataset folder (storagelab export --dataset), not a database: --db takes the database file "
            f"it was exported from (by default {paths.DB}); the notebooks read the dataset with -p db_path {db}"
        )
    return f"{db} is a folder: --db takes a database file, e.g. {db / 'storagelab.duckdb'}"


def disk_full(e: BaseException) -> bool:
    """The error is a full disk (or a file over the filesystem's size limit), as Python or DuckDB say it."""
    low = str(e).lower()
    return (
        "no space left" in low
        or "file too large" in low
        or "disk is full" in low
        or getattr(e, "errno", None) in (28, 27)
    )


def describe(db: Path, e: BaseException, *, opening: bool = True) -> str:
    """One line for a database or disk fault: what happened and what to do. ``opening``: the
    database could not be opened (else: it failed while an ingest wrote it)."""
    said = first_line(e)
    low = str(e).lower()
    if disk_full(e):
        return (
            f"{db}: disk full ({said}). Every file committed before it is in the database; free some "
            "space and run ingest again to finish"
        )
    if "in-memory database in read-only mode" in low:  # DuckDB's answer to a CSV/JSON/Parquet file given as --db
        return data_file_given(db)
    if "read-only" in low or "read only" in low or "permission denied" in low or getattr(e, "errno", None) in (13, 30):
        return (
            f"{db}: cannot write ({said}): the file, its folder or the filesystem is read-only. "
            "Use --db with a writable place; `storagelab sql` and the notebooks can still read it"
        )
    if "is a directory" in low:
        return folder_given(db)
    if opening and ("out of memory" in low or isinstance(e, (MemoryError, duckdb.OutOfMemoryException))):
        # not a damaged file: under a low `ulimit -v` DuckDB may fail to allocate while it opens a good database
        return (
            f"{db}: out of memory while opening it ({said}); the database is unchanged: raise the memory limit "
            "(ulimit -v), or close other programs, and run the command again"
        )
    damaged = ("corrupt", "checksum", "not a valid", "could not read enough bytes", "truncated")
    if isinstance(e, duckdb.Error) and (opening or any(w in low for w in damaged)):
        return (
            f"{db} is not a usable DuckDB database ({said}): it may be truncated, corrupt or another kind "
            "of file. Move it away (or delete it: ingest rebuilds the database from the raw files)"
        )
    if isinstance(e, duckdb.Error) and ("out of memory" in low or isinstance(e, duckdb.OutOfMemoryException)):
        # the floor `ulimit -v` is checked against (memfloor) is where threads stop crashing, not what a given ingest
        # needs: at the floor it suggested, data/raw's ingest --dataset ran out every time and "run ingest again" failed
        # the same way (reliability-7 Low 11)
        return (
            f"{db}: the database failed during the ingest ({said}). Every file committed before it is in the "
            "database; raise the memory limit (ulimit -v) and run ingest again: the floor checked at the start only "
            "keeps storagelab's threads from crashing, an ingest of many files can need more"
        )
    if isinstance(e, duckdb.Error):
        return (
            f"{db}: the database failed during the ingest ({said}). Every file committed before it is in "
            "the database; run ingest again"
        )
    return f"{db}: {said}"


def connect(
    db_path: Path | str | None = None, *, read_only: bool = False, wait: float = 0.0, wait_option: str | None = None
) -> duckdb.DuckDBPyConnection:
    """Open the database. Another process holding it gives DatabaseBusyError (after waiting up to
    ``wait`` s; its message names ``wait_option`` when the command has one); a database that
    cannot be opened (a folder, not DuckDB, corrupt, read-only) gives StoreError."""
    db = Path(db_path or paths.DB)
    from .checks import dotdot_refusal, not_utf8  # noqa: PLC0415

    if why := not_utf8("the database", db) or dotdot_refusal("the database", db):  # reliability-13
        raise StoreError(why)
    st = _stat(db)  # once: a name swapped between two looks was "not a regular file (-rw-r--r--)" (reliability-28 Low)
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise StoreError(folder_given(db))
    if st is not None and not stat.S_ISREG(st.st_mode):  # reliability-13: DuckDB's open of a FIFO waited for ever
        raise StoreError(f"{db} is not a regular file ({stat.filemode(st.st_mode)}): give a DuckDB database file")
    if read_only and st is None:
        raise FileNotFoundError(f"{db} does not exist: run `storagelab ingest` (or ./run build) first")
    from .ownership import beside_refusal, read_refusal  # noqa: PLC0415

    if read_only and (why := read_refusal(db)):  # reliability-13/15: a read followed the user's link
        raise StoreError(why)
    if not read_only:
        # reliability-8 Low 9: another user's symlink as --db was followed. Reliability-9 High 1: in /tmp (sticky) the
        # user planted <db>.wal -> a root-only file once the database existed, and DuckDB appended its log to it
        _refuse_shared(db)
    # reliability-9 (h1): reading stays allowed in /tmp, but a WAL another user put beside the database there was
    # replayed into what `sql` showed (rows and labels of their choosing)
    if why := beside_refusal(db):
        raise StoreError(f"{db}: {why}; remove it if it is not yours, or give a database of your own")
    if not read_only:
        try:
            db.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StoreError(f"cannot create the folder {db.parent}: {e.strerror or e}") from None
        # checked again once made (reliability-10 High 2): a folder made under a default ACL naming another user, or
        # with root's umask 000, is theirs to add names to, and the user's <db>.wal was appended to a root-only file
        _refuse_shared(db)
    real, ident = readcopies.read_target(db) if read_only else (db, None)  # reliability-15: no user's link to ours
    if real != db and (why := beside_refusal(real)):
        raise StoreError(f"{db}: {why}; remove it if it is not yours, or give a database of your own")
    deadline, new = time.monotonic() + wait, not read_only and not db.exists()
    # reliability-34: a descriptor of theirs that /proc does not show, probed before DuckDB's own read-write open (which
    # the kernel's count of writers cannot tell from theirs): an ingest into root's database ran the view they wrote
    hidden = _READ_ONLY if read_only else None if new else _unseen(real)
    while True:
        view = None
        try:
            view = _private_view(real, ident) if read_only else None  # reliability-10 High 3: a WAL planted later
            opened = duckdb.connect(str(view or real), read_only=read_only, config=_spill_config_of(db, real))
            con = track(_database_file(opened, db))
            if (read_only or not new) and (why := _their_sql(con, real, ident, view, hidden)):  # an ingest runs SQL too
                con.close()
                raise StoreError(f"{db}: {why}")
            if new:  # another user who can read it can hold DuckDB's lock and stop every ingest (reliability-9)
                os.chmod(db, 0o600)
            return con
        except duckdb.IOException as e:
            if "could not set lock" not in str(e).lower() and "conflicting lock" not in str(e).lower():
                raise StoreError(describe(db, e)) from None
            if time.monotonic() >= deadline:
                retry = f"retry with {wait_option} SECONDS" if wait_option else "retry when it has finished"
                raise DatabaseBusyError(
                    f"{db} is in use by another process ({'a writer' if read_only else 'an ingest or an open notebook'}"
                    f"{_other_user(e, db)}); close it or {retry}. DuckDB said: {first_line(e)}"
                ) from None
            time.sleep(0.2)
        except duckdb.Error as e:
            raise StoreError(describe(db, e)) from None
        finally:
            if view:
                livefolders.remove(view.parent)  # DuckDB holds what it opened; the names can go


def _stat(db: Path) -> os.stat_result | None:
    """``db``'s stat (its links followed), None where ``Path.exists`` says False (no such name, a link loop)."""
    try:
        return os.stat(db)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.EBADF):
            return None
        raise


def _spill_config_of(db: Path, real: Path) -> dict:
    """``spill_config`` for the database file ``real`` (``db`` as given), read just before DuckDB's open; its name
    swapped while it was resolved: StoreError."""
    try:
        return spill_config(real)
    except OSError as e:
        raise StoreError(f"{db}: its name changed while it was opened ({e.strerror}); not read") from None


def _private_view(db: Path, ident: tuple[int, int] | None = None) -> Path | None:
    """For a database read in a folder another user can add names to (/tmp): the database (and its WAL, when it is
    its owner's or this user's) hard-linked into a new 0700 folder beside it, whose path is then opened: DuckDB reads
    ``<db>.wal`` by name when it opens, and the user's WAL, planted between ``beside_refusal`` and the open (a fresh
    process's DuckDB takes milliseconds to get there), was replayed into root's `sql` in 11 of 60 tries. A link names
    one file for good: what is checked is what DuckDB reads. None when the folder is private, or no link can be made
    there (another user's database, which a user may not hard-link; a read-only file system): opened by its name."""

    from .ownership import beside_refusal, only_owner_adds, private_folder  # noqa: PLC0415

    real = db if ident is not None else db.resolve()  # ident: ``db`` is the link-free path checked (not resolved again)
    mine = only_owner_adds(real.parent, os.getuid())  # no one else can swap a name in it, nor the folder itself
    if private_folder(real.parent) and (ident is None or mine):
        return None
    if not mine and not _ours_stay(real.parent):
        # reliability-15: another user's folder (theirs to rename in): neither its name nor a folder of ours made in
        # it is opened by name, but a copy of the file checked, read through its descriptor. Reliability-28 (h2): a
        # sticky one of theirs too (its owner may rename any name in it): the second user renamed root's view folder
        # away once it was made and put a folder of theirs under its name, and root's read ran their database's view
        return _private_copy(db, real, ident)
    try:
        readcopies.remove_dead(str(real.parent), f".{real.name}.read-")  # those of readers killed (SIGKILL) meanwhile
        # held while it lives (reliability-28: a reader of another pid namespace judged it by its pid, removed it)
        folder = Path(livefolders.mkdtemp_held(readcopies.dead_reader_prefix(f".{real.name}.read-"), str(real.parent)))
    except OSError:  # a folder this user may not write (another's), a read-only mount of a shared one
        return _private_copy(db, real, ident)
    view = folder / real.name
    try:
        os.link(real, view)
    except OSError:  # another user's database (protected_hardlinks), a file system without hard links, or gone
        livefolders.remove(folder)
        return _private_copy(db, real, ident)
    if ident is not None and readcopies.identity(view) != ident:  # a folder on its way swapped since it was checked
        livefolders.remove(folder)
        raise StoreError(f"{db}: replaced while it was opened (its name or a folder on its way was swapped); not read")
    wal = real.with_name(real.name + ".wal")
    try:
        os.link(wal, folder / wal.name, follow_symlinks=False)
    except FileNotFoundError:
        pass  # no WAL
    except OSError as e:  # a folder planted there (no hard link to one): never fall back to reading it by name
        livefolders.remove(folder)
        raise StoreError(f"{db}: {wal} cannot be read safely ({e.strerror}); remove it if it is not yours") from None
    if why := beside_refusal(view):  # the WAL linked: the very file DuckDB will read, whoever swaps names now
        livefolders.remove(folder)
        raise StoreError(
            f"{db}: {why.replace(str(view), str(real))}; remove it if it is not yours, or give a database of your own"
        )
    return view


def _ours_stay(folder: Path) -> bool:
    """Whether a name this user makes in ``folder`` stays what it names: a sticky folder of root's or this user's
    (/tmp: only a name's owner and the folder's may rename it), not on another user's FUSE mount, and no folder
    above it another user could rename it with."""
    from .ownership import _served_by_another_user, movable_by_others  # noqa: PLC0415

    try:
        st = folder.stat()
    except OSError:
        return False
    if not st.st_mode & stat.S_ISVTX or st.st_uid not in (0, os.getuid()):
        return False
    return not _served_by_another_user(folder) and not movable_by_others(folder)


def _private_copy(db: Path, real: Path, ident: tuple[int, int] | None = None) -> Path | None:
    """Where no hard link can be made (reliability-11: a file system without them; a non-root reader of another
    user's database, which fs.protected_hardlinks refuses to link): the database and its WAL copied, each through one
    descriptor checked as opened, into a new 0700 folder of this user's temporary folder. Opening them by name let
    the user's WAL, toggled at ``<db>.wal`` between the check and DuckDB's open, be replayed (1 of 40 root `sql`
    runs on a FUSE file system without links). None when only the database's owner and root can add names in its
    folder (nobody else's WAL can appear there): opened by its name. A writer holding the database: busy, as DuckDB
    says it."""
    import fcntl  # noqa: PLC0415
    import tempfile  # noqa: PLC0415

    from .ownership import beside_refusal, only_owner_adds  # noqa: PLC0415

    try:
        src = os.open(real, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:  # never DuckDB's open by name: another user's FIFO there by then blocked it for good (r29, h6)
        if e.errno == errno.EACCES:
            raise StoreError(f"{db}: cannot be read (permission denied): ask its owner for read access") from None
        raise StoreError(f"{db}: {e.strerror} when it was opened (its name swapped meanwhile?); not read") from None
    folder, size = None, 0
    try:
        st = os.fstat(src)
        size = st.st_size
        if ident is not None and (st.st_dev, st.st_ino) != ident:
            raise StoreError(
                f"{db}: replaced while it was opened (its name or a folder on its way was swapped); not read"
            )
        if ident is None and only_owner_adds(real.parent, st.st_uid):
            return None
        try:
            fcntl.lockf(src, fcntl.LOCK_SH | fcntl.LOCK_NB)  # as DuckDB's read-only open: a writer's lock stops it
        except OSError:
            raise duckdb.IOException(f'Could not set lock on file "{real}": Conflicting lock is held') from None
        folder = readcopies.new_folder()  # named for this process: the next reader removes it if this one dies
        _copy_fd(src, folder / real.name)
        wal = real.with_name(real.name + ".wal")
        try:
            w = os.open(wal, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            w = None
        except OSError as e:  # a symlink or a FIFO there: never read it by name
            raise StoreError(
                f"{db}: {wal} cannot be read safely ({e.strerror}); remove it if it is not yours"
            ) from None
        if w is not None:
            try:
                wst = os.fstat(w)
                if not stat.S_ISREG(wst.st_mode) or wst.st_uid not in (0, os.getuid(), st.st_uid):
                    who = user_name(wst.st_uid)
                    raise StoreError(
                        f"{db}: {wal} is a file of another user's ({who}), beside the database: DuckDB would replay "
                        "it into the database, so another user could change what the database holds; remove it if it "
                        "is not yours, or give a database of your own"
                    )
                size += wst.st_size
                _copy_fd(w, folder / wal.name)
                # its mode as copied, for _their_sql (0600 plus the write bits others had: the folder is ours, 0700)
                os.chmod(folder / wal.name, 0o600 | stat.S_IMODE(wst.st_mode) & (stat.S_IWGRP | stat.S_IWOTH))
            finally:
                os.close(w)
        if why := beside_refusal(folder / real.name):  # cannot happen: a new 0700 folder of ours
            raise StoreError(f"{db}: {why}")
        return folder / real.name
    except BaseException as e:
        if folder is not None:
            livefolders.remove(folder)
        if isinstance(e, OSError) and (said := readcopies.no_room(db, e, size, tempfile.gettempdir())):
            raise StoreError(said) from None  # a bare "[Errno 28] No space left on device" did not say which copy
        raise
    finally:
        os.close(src)


def _copy_fd(src: int, to: Path) -> None:
    """The file ``src`` copied to ``to`` (holes kept, never past the size it had when this began)."""
    if not readcopies.copy_exactly(src, to, os.fstat(src).st_size):
        raise StoreError(f"{to.name}: changed while this reader copied it (a writer at work?); run it again")


def _refuse_shared(db: Path) -> None:
    """StoreError when another user could change what the database ``db`` to write leads to, or add a name beside
    it (``ownership.file_refusal``, a sticky folder refused too)."""
    from .ownership import file_refusal  # noqa: PLC0415

    if why := file_refusal(db, sticky_ok=False):
        raise StoreError(
            f"{db}: {why}: another user could change what it leads to, or put a symlink under a name DuckDB "
            f"writes beside it ({db.name}.wal, {db.name}.tmp/) and have it overwrite any file you can write; "
            "give a database in a folder of your own"
        )


def _other_user(e: Exception, db: Path) -> str:
    """When the process DuckDB names as the lock's holder ("... held in /usr/bin/python3 (PID 123)") is another
    user's: the words saying so, and how to keep other users out (a reader holds the lock as well as a writer:
    reliability-9, a user's read-only open stopped root's ingest and build); else ''."""
    import re  # noqa: PLC0415

    m = re.search(r"\(PID (\d+)\)", str(e))
    try:
        uid = os.stat(f"/proc/{m.group(1)}").st_uid if m else os.getuid()
    except OSError:
        return ""
    if uid == os.getuid():
        return ""
    import pwd  # noqa: PLC0415

    try:
        name = pwd.getpwuid(uid).pw_name
    except KeyError:
        name = str(uid)
    return f", pid {m.group(1)} of the user {name}: `chmod go-rwx {db}` keeps other users from opening it"


def spill_config(db: Path | None = None) -> dict[str, str]:
    """DuckDB's settings for database ``db`` (None: in memory): no spilling to disk when the folder it would spill
    into (``<db>.tmp/`` beside it; ``./.tmp/`` in memory) is one another user can add names to, as /tmp: DuckDB
    makes that folder and its files by name, through a symlink the user put there (a query then fails for memory
    instead). Reading a database in /tmp stays allowed; writing one there is refused (``connect``)."""
    from .ownership import private_folder  # noqa: PLC0415

    folder = Path(db).resolve().parent if db is not None else Path.cwd()  # DuckDB 2 resolves the path's links
    return {} if private_folder(folder) else {"temp_directory": ""}


# databases (and datasets) of other users', or that others can write, this process has read: a report of one shows
# an excerpt only of bytes whose SHA-256 its row carries, or of the project's own files (excerpts, reliability-24)
THEIRS: list[str] = []
# who wrote each database of THEIRS (its owner; -1: anyone, a database others can write or a dataset others can
# change): an excerpt of theirs shows only a file they could read themselves (excerpts, reliability-27)
THEIR_UIDS: dict[str, int] = {}


_READ_ONLY = ""  # _their_sql's ``hidden`` for a read-only open: probed there, after DuckDB's open


def _unseen(real: Path) -> str | None:
    try:
        return unseen_writer(real, os.stat(real), loose=loose_file)
    except OSError:
        return None


def their_writers() -> set[int]:
    """The users whose word the databases (and datasets) of THEIRS read by this process are: -1 for anyone."""
    return {THEIR_UIDS.get(p, -1) for p in THEIRS}


def _their_sql(
    con: duckdb.DuckDBPyConnection,
    real: Path,
    ident: tuple[int, int] | None,
    view: Path | None = None,
    hidden: str | None = "",
) -> str | None:
    """Why another user's database is not read: it holds views or macros (SQL of theirs that a query of this
    user's would run with this user's rights). Reliability-18 (h6): the second user's view ``fio_results`` selected
    ``read_text('/root/h18v/in/secret.txt')``, and root's `sql --db` of their database printed root's 0600 file (a
    notebook's report of it would hold it). A storagelab database has neither; None for this user's and root's."""
    try:
        st = os.stat(real)
        owner = st.st_uid if ident is None or (st.st_dev, st.st_ino) == ident else -1
        # reliability-24 (h1): root's own database left writable by others (mode 0666, or a group's): the second user
        # rewrote its bytes in place with a view of read_text('/root/...'), and root's `sql --db` printed the file
        mode = stat.S_IMODE(st.st_mode)
        # its WAL, replayed into what is read (root's umask 000 made it 0666): the one DuckDB opened, in the reader's
        # private view when there is one. Reliability-27 (h2): the name beside ``real`` was looked at; the second user
        # renamed root's 0666 WAL (in a folder of theirs) away between the reader's copy of it and this check, and
        # root's `sql --db` ran the view they had written into it (16 of 100 runs printed root's 0600 file; 20 of 60
        # in a sticky folder of theirs, through the hard-linked view)
        with contextlib.suppress(OSError):
            mode |= stat.S_IMODE(os.lstat(f"{view or real}.wal").st_mode) & (stat.S_IWGRP | stat.S_IWOTH)
        # reliability-33: root's database made 0600 after the second user opened it for writing (while 0666): they
        # wrote a view of read_text('/root/...') through their descriptor and root's `sql --db` printed the file
        # r-34: a queued descriptor; for a read-write open, probed before it (``hidden``), as the probe would count it
        mode |= (
            stat.S_IWOTH
            if live_writer(st) or (hidden if hidden != _READ_ONLY else unseen_writer(real, st, loose=loose_file))
            else 0
        )
    except OSError:
        owner, mode = -1, 0
    from .ownership_fuse import fuse_mounter  # noqa: PLC0415

    # reliability-28 (h2): on a FUSE file system of the second user's (bindfs --force-user=root --perms=0600) their
    # database showed as root's 0600, and root's `sql --db` ran its view of read_text('/root/...'): its mounter's word
    served = fuse_mounter(real) if owner in (0, os.getuid()) else None
    owner = owner if served is None else served
    shared = mode & (stat.S_IWGRP | stat.S_IWOTH)
    if owner in (0, os.getuid()) and not shared:
        return None
    whose = "of another user's" if owner not in (0, os.getuid()) else f"that other users can write (mode {mode:04o})"
    whose += (
        " (on a FUSE file system they mounted: its owners and modes are theirs to show)" if served is not None else ""
    )
    views = [v for (v,) in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()]
    macros = [f for (f,) in con.execute("SELECT function_name FROM duckdb_functions() WHERE NOT internal").fetchall()]
    if views or macros:
        names = ", ".join(sorted(set(views + macros))[:5])
        return (
            f"a database {whose} with views or macros ({names}): their SQL would run with your rights; not "
            "read (a storagelab database has none: ingest their logs into a database of yours)"
        )
    # reliability-18 (h6): a table of theirs named `files"; COPY (SELECT content FROM read_text('/root/...')) TO
    # '/tmp/...' ...; SELECT 1 FROM "files`: the 07_explore notebook's count per table (f'... FROM "{name}"') ran it
    # as root; every name of a storagelab database is a plain one
    every = con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE NOT internal UNION ALL "
        "SELECT column_name FROM duckdb_columns() WHERE NOT internal UNION ALL "
        "SELECT schema_name FROM duckdb_schemas() WHERE NOT internal"
    ).fetchall()
    odd = sorted({n for (n,) in every if not _PLAIN.fullmatch(n)})
    if odd:
        return (
            f"a database {whose} with a table or column named {odd[0]!r} (not a plain name: SQL made of it "
            "would run theirs with your rights): not read (ingest their logs into a database of yours)"
        )
    THEIRS.append(str(real))  # read: its paths are their word, excerpts of what it names need the bytes' SHA-256
    THEIR_UIDS[str(real)] = owner if owner not in (0, os.getuid()) and not shared else -1
    return None


_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _database_file(con: duckdb.DuckDBPyConnection, db: Path) -> duckdb.DuckDBPyConnection:
    """``con``, when it is the database file ``db``. DuckDB opens a path ending in .csv, .parquet or .json as
    an in-memory database holding that file as a table: an ingest there would report success and keep
    nothing."""
    # fetchall: a result left unfinished would stop the caller's next con.sql() (DuckDB 2)
    path = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchall()
    if not path or path[0][0] is None:
        con.close()
        raise StoreError(data_file_given(db))
    return con


def schema_signature() -> str:
    return hashlib.sha256("\n".join(ddl() + EXTRA_DDL).encode()).hexdigest()[:16]


UNFINISHED = "unfinished"  # meta key: an ingest that changes stored files began and has not finished (store.db)


def unfinished_ingest(con: duckdb.DuckDBPyConnection, db: Path | str) -> str | None:
    """The line for a database whose last ingest was stopped (killed, Ctrl-C, a full disk) after it began to change
    files already stored and before it finished: until an ingest of the same paths runs to its end, one content can
    be stored under two paths, and a failure or a copy be listed beside rows it replaced. Every reader refuses it
    with this line rather than give a count that can be wrong. None for a database that is whole (or not ours)."""
    try:
        rows = con.execute("SELECT value FROM meta WHERE key = ?", [UNFINISHED]).fetchall()
    except duckdb.Error as e:  # no meta table: not a storagelab database; its queries will say so
        stopped_by_ctrl_c(e)
        return None
    if not rows:
        return None
    try:
        shown = [str(s) for _, s in json.loads(rows[0][0])]
    except (ValueError, TypeError):
        shown = []
    gone = [s for s in shown if s and not os.path.lexists(s)]
    named = " ".join(shlex.quote(_holding(s) if s in gone else s) for s in dict.fromkeys(shown) if s)
    cmd = f"storagelab ingest {named} --db {shlex.quote(str(db))}".replace("  ", " ")
    if gone:  # moved or deleted since: an ingest of it fails (no such file), one of a folder holding it finishes it
        return (
            f"{db}: its last ingest was stopped before it finished, so a count read from it now can be wrong, and "
            f"{', '.join(gone)} no longer exist{'s' if len(gone) == 1 else ''}: run `{cmd}` (a folder holding it) "
            "to finish it"
        )
    return (
        f"{db}: its last ingest was stopped before it finished, so a count read from it now can be wrong: run "
        f"`{cmd}` again (with the same options) to finish it"
    )


def _holding(path: str) -> str:
    """The nearest folder holding ``path`` that exists (``.`` for a relative path none of whose folders does).
    Reliability-19 (h8): a relative path (another user's database can list any) reached ``""``, which
    ``os.path.dirname`` keeps, and root's `sql --db` of it spun at 100% CPU for ever."""
    parent = os.path.dirname(path.rstrip("/")) or ("/" if path.startswith("/") else ".")
    while parent and not os.path.isdir(parent):
        parent = os.path.dirname(parent)
    return parent or "."


def interrupted(e: BaseException) -> bool:
    """Ctrl-C while DuckDB ran a statement: DuckDB 2 raises RuntimeError('Query interrupted')
    (older versions InterruptException), or an error that names the KeyboardInterrupt, instead of it."""
    if isinstance(e, duckdb.InterruptException) or (isinstance(e, RuntimeError) and "interrupted" in str(e).lower()):
        return True
    # a KeyboardInterrupt raised while DuckDB read a registered Arrow table comes back wrapped:
    # InvalidInputException("... reading the schema of the object registered as '...' failed: KeyboardInterrupt")
    return isinstance(e, duckdb.Error) and "KeyboardInterrupt" in str(e)


def stopped_by_ctrl_c(e: BaseException) -> None:
    """KeyboardInterrupt for a query that a Ctrl-C stopped (DuckDB runs the signal handlers and returns their
    KeyboardInterrupt as its InterruptException): a check that takes any error as "no such table" must not take a
    Ctrl-C as an answer and carry on (reliability-34: `report` rendered on for 35 s, no line)."""
    if interrupted(e):
        raise KeyboardInterrupt from e


def not_built(con: duckdb.DuckDBPyConnection, db: Path | str) -> str | None:
    """The line for a database that has no storagelab tables yet (a DuckDB file with no table, or with `files` but
    no `meta`: an ingest killed before it made them all), where readers got DuckDB's raw 'Table with name files does
    not exist' (issue 26's campaigns, Low); None when its tables are there, or when it holds other tables (not ours)."""
    try:
        rows = con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()").fetchall()
    except duckdb.Error as e:
        stopped_by_ctrl_c(e)  # reliability-34: a Ctrl-C here is not "its tables are there"
        return None
    names = {r[0] for r in rows}
    if "meta" in names or (names and "files" not in names):
        return None
    return (
        f"{db}: not a built storagelab database: it has {'no tables' if not names else 'only some of its tables'} "
        f"(an ingest stopped before it made them?): run `storagelab ingest FOLDER --db {db}` to build it"
    )


def sql_error(e: Exception, con: duckdb.DuckDBPyConnection, db: Path | str) -> str:
    """`sql`'s message for a failed query: a table missing from a database with none of storagelab's is ``not_built``
    (what to run), anything else DuckDB's own error."""
    return (isinstance(e, duckdb.CatalogException) and not_built(con, db)) or str(e)

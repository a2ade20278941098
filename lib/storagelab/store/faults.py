"""Faults of the database, the disk and the user (Ctrl-C): how they are told apart and worded, and
the test hook that kills an ingest at a named stage."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import duckdb

from ..errors import StoragelabError


class StoreError(StoragelabError):
    """The database cannot be opened or written: corrupt or not a DuckDB file, a folder, read-only,
    disk full. The message is one line and says what to do."""


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


def describe(db: Path, e: BaseException, *, opening: bool = True) -> str:
    """One line for a database or disk fault: what happened and what to do. ``opening``: the
    database could not be opened (else: it failed while an ingest wrote it)."""
    said = first_line(e)
    low = str(e).lower()
    if (
        "no space left" in low
        or "file too large" in low
        or "disk is full" in low
        or getattr(e, "errno", None) in (28, 27)
    ):
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
        return f"{db} is a folder: --db takes a database file, e.g. {db / 'storagelab.duckdb'}"
    damaged = ("corrupt", "checksum", "not a valid", "could not read enough bytes", "truncated")
    if isinstance(e, duckdb.Error) and (opening or any(w in low for w in damaged)):
        return (
            f"{db} is not a usable DuckDB database ({said}): it may be truncated, corrupt or another kind "
            "of file. Move it away (or delete it: ingest rebuilds the database from the raw files)"
        )
    if isinstance(e, duckdb.Error):
        return (
            f"{db}: the database failed during the ingest ({said}). Every file committed before it is in "
            "the database; run ingest again"
        )
    return f"{db}: {said}"


def environmental(e: BaseException) -> bool:
    """A fault of the database or the disk (not of one file's rows): the ingest stops."""
    if isinstance(
        e,
        (
            OSError,
            duckdb.IOException,
            duckdb.FatalException,
            duckdb.InternalException,
            duckdb.TransactionException,
            duckdb.InterruptException,
        ),
    ):
        return True
    low = str(e).lower()
    return any(w in low for w in ("no space left", "file too large", "read-only", "invalidated", "failed to commit"))


def interrupted(e: BaseException) -> bool:
    """Ctrl-C while DuckDB ran a statement: DuckDB 2 raises RuntimeError('Query interrupted')
    (older versions InterruptException), or an error that names the KeyboardInterrupt, instead of it."""
    if isinstance(e, duckdb.InterruptException) or (isinstance(e, RuntimeError) and "interrupted" in str(e).lower()):
        return True
    # a KeyboardInterrupt raised while DuckDB read a registered Arrow table comes back wrapped:
    # InvalidInputException("... reading the schema of the object registered as '...' failed: KeyboardInterrupt")
    return isinstance(e, duckdb.Error) and "KeyboardInterrupt" in str(e)


def rollback(con) -> None:
    """ROLLBACK when a transaction is open (a failed COMMIT has already ended it)."""
    try:
        con.execute("ROLLBACK")
    except duckdb.Error:
        pass


class CtrlC:
    """A Ctrl-C that is never lost: within ``with CtrlC() as ctrl_c:`` SIGINT raises KeyboardInterrupt as
    usual and is also remembered, so that ``ctrl_c.check()`` (between transactions) and the end of the block
    raise it again. DuckDB's Python client runs Python's signal handlers while a statement executes and may
    drop the KeyboardInterrupt when the statement completes anyway; without the latch such an ingest would
    finish and exit 0. Installed only in the main thread over Python's default handler (a program that
    handles SIGINT itself, or ignores it, keeps its handler)."""

    def __init__(self) -> None:
        self.pressed = False
        self._old = None

    def __enter__(self) -> CtrlC:

        if threading.current_thread() is threading.main_thread():
            old = signal.getsignal(signal.SIGINT)
            if old is signal.default_int_handler:
                self._old = old
                signal.signal(signal.SIGINT, self._handler)
        return self

    def _handler(self, signum, frame) -> None:
        self.pressed = True
        raise KeyboardInterrupt

    def check(self) -> None:
        if self.pressed:
            raise KeyboardInterrupt

    def __exit__(self, exc_type, exc, tb) -> None:
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)
            self._old = None
        if exc_type is None:
            self.check()

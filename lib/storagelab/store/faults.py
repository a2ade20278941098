"""Faults of the database, the disk and the user (Ctrl-C): how they are told apart and worded, and
the test hook that kills an ingest at a named stage."""

from __future__ import annotations

import signal
import threading

import duckdb

from ..database import data_file_given, describe, first_line, inject, interrupted  # noqa: F401 - faults.inject etc., as callers name them
from ..errors import StoreError  # noqa: F401 - faults.StoreError
from ..interrupts import interrupt_all


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
        interrupt_all()  # DuckDB's worker threads stop too (see interrupts.py)
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

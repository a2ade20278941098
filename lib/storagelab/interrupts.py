"""Ctrl-C that stops a running DuckDB statement at once.

DuckDB's Python client runs Python's signal handlers while a statement executes, and a handler that raises
(KeyboardInterrupt) ends the statement in the main thread; but the statement then waits for the tasks its
worker threads are running, which never look at Python's signals: a long query went on for minutes after
Ctrl-C (reliability-3, medium 1). ``interrupt_all()``, called from the SIGINT handler before it raises, sets
DuckDB's own interrupt flag on every connection storagelab opened, which those tasks do check."""

from __future__ import annotations

import weakref

_OPEN = weakref.WeakSet()  # connections opened by storagelab (database.connect, dataset.open_dataset)


def track(con):
    """``con``, remembered (weakly) so that Ctrl-C can interrupt the statement it runs."""
    _OPEN.add(con)
    return con


def interrupt_all() -> None:
    """Interrupt the statement each open connection runs (a no-op on an idle or closed one)."""
    for con in list(_OPEN):
        try:
            con.interrupt()
        except Exception:  # noqa: BLE001  (a closed connection: nothing to stop)
            pass

"""Ctrl-C that still ends a blocking system call once polars is imported.

polars (2.x) installs a SIGINT handler of its own as it is imported (the Rust crate signal-hook, chained to Python's),
with SA_RESTART: a system call the main thread waits in (the open of a FIFO, a read of a pipe or of a network file
system) is restarted after Ctrl-C instead of failing with EINTR, so Python never runs its handler, and Ctrl-C did
nothing for as long as the call waited (reliability-31 read: `storagelab run` of another user's FIFO notebook ignored
Ctrl-C for good; the same upstream: pola-rs/polars#21739). In the command line program, Python's handler is put back
as soon as polars has been imported (Python's sigaction sets no SA_RESTART), whatever imports it and whenever.

What that gives up: polars' own abort of a query running in Rust at Ctrl-C. The CLI's handler (``cli._guarded``)
already replaced polars' whenever polars was imported before it, and storagelab's queries are over one selection's
rows: Ctrl-C during one is taken when it returns.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import signal
import sys
import threading
from collections.abc import Sequence
from types import ModuleType

WATCHED = "polars"


def python_handler_again() -> None:
    """SIGINT's handler set again to the one Python holds for it (one a library installed in C since is dropped);
    only the main thread can set a handler."""
    if threading.current_thread() is not threading.main_thread():
        return
    handler = signal.getsignal(signal.SIGINT)
    if handler is not None:  # None: a handler Python did not install (kept)
        signal.signal(signal.SIGINT, handler)


class _Loader(importlib.abc.Loader):
    """The module's own loader, and Python's SIGINT handler put back once the module has run."""

    def __init__(self, real: importlib.abc.Loader) -> None:
        self.real = real

    def create_module(self, spec):
        return self.real.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        module.__loader__ = self.real  # what the module and its readers see is its own loader
        if module.__spec__ is not None:
            module.__spec__.loader = self.real
        try:
            self.real.exec_module(module)
        finally:
            python_handler_again()


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None):
        if fullname != WATCHED:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is not None and spec.loader is not None:
            spec.loader = _Loader(spec.loader)
        return spec


def watch() -> None:
    """From now on, importing polars leaves Python's SIGINT handler in place (if polars is already imported: put
    back now)."""
    if WATCHED in sys.modules:
        python_handler_again()
    elif not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())

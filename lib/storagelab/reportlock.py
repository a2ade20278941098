"""One storagelab command at a time writes a report tree (``reports/``, or a ``run --output`` folder).

A notebook run starts by removing its report's old summary and figures, then papermill rewrites the executed
notebook cell by cell; a render reads them all. Two builds at once in one clone therefore undid each other: a second
build killed in its first notebooks had removed the summaries and figures the first had just written, and the first
ended "0 failed" with reports saying "No summary" (reliability-7). So ``build``, ``run`` and ``report`` hold an
exclusive lock (flock on ``<tree>/.storagelab.lock``, released by the kernel however the holder ends) while they
write; a second one waits for it (``run`` and ``report`` until it is free, ``build`` for ``--wait`` seconds, as for
the database) and says once that it waits, and for whom."""

from __future__ import annotations

import fcntl
import math
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import StoragelabError
from .terminal import say

LOCK = ".storagelab.lock"


class ReportsBusyError(StoragelabError):
    """Another storagelab command is writing the report tree."""


@contextmanager
def writing(tree: Path, wait: float = 0.0, retry: str = "", command: str = "") -> Iterator[None]:
    """Hold the report tree ``tree`` for this process (and the notebook workers it forks) until the block ends.
    Another holder: wait up to ``wait`` seconds (saying so once), then ReportsBusyError naming it and ``retry``."""
    tree.mkdir(parents=True, exist_ok=True)
    fd = os.open(tree / LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        deadline, said = time.monotonic() + wait, False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                holder = f"another storagelab command (pid {os.pread(fd, 32, 0).decode(errors='replace').strip()})"
                if time.monotonic() >= deadline:
                    raise ReportsBusyError(f"{tree} is being written by {holder}: {retry}") from None
                if not said:
                    say(f"storagelab {command}: waiting for {holder} to finish writing {tree}")
                    said = True
                time.sleep(0.2)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)


def run_holding(command: str, tree: Path, work: Callable[[], int], wait: float = math.inf, retry: str = "") -> int:
    """``work()`` holding ``tree``; ``build`` waits ``--wait`` seconds, ``run`` and ``report`` until it is free.
    Still held when the wait is over: one line, exit 2."""
    try:
        with writing(tree, wait, retry, command):
            return work()
    except ReportsBusyError as e:
        say(f"storagelab {command}: {e}")
        return 2

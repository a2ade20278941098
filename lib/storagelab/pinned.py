"""A folder held by an open handle while a command reads and writes in it by name, so that a rename of it (or of a
folder swapped in under its name) cannot send those reads and writes to another folder (reliability-31: `mv
reports/A A.away; mv reports/B reports/A` while a report was rendered or a run committed wrote A's pages into B).

On Linux the handle's path is ``/proc/self/fd/N``: every name under it is looked up from the folder the handle holds,
wherever it is now. An error's file names are given back under the folder's own name: a user reads
``reports/A/x.html: No space left on device``, never ``/proc/self/fd/42/x.html``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

_FDS = Path("/proc/self/fd")


@contextlib.contextmanager
def folder(named: Path) -> Iterator[Path]:
    """``named`` as the folder it is now (a path through an open handle of it, where the system has one)."""
    with held(named) as here:
        yield named if here is None else here  # gone or unreadable: as before (nothing to render, or its errors)


@contextlib.contextmanager
def held(named: Path) -> Iterator[Path | None]:
    """``folder``, or None when ``named`` cannot be opened as a folder now (gone, a file at its name, unreadable).
    reliability-35 (folders): read by the name instead, a folder's reads could each be of another folder moved under
    it (the index made while a name held a file for a moment, then folders again: thumper-x4500's summary under the
    heading of ars-zfs-vs-raid's record, exit 0)."""
    try:
        fd = os.open(named, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        yield None
        return
    here = _FDS / str(fd)
    try:
        with named_in_errors({here: named}):
            yield here if here.is_dir() else named
    finally:
        os.close(fd)


@contextlib.contextmanager
def named_in_errors(names: dict[Path, Path]) -> Iterator[None]:
    """An OSError raised inside, with each path under a key of ``names`` given back under its value."""
    try:
        yield
    except OSError as e:
        for attr in ("filename", "filename2"):
            if isinstance(value := getattr(e, attr), str):
                setattr(e, attr, shown(value, names))
        raise


def shown(text: str, names: dict[Path, Path]) -> str:
    """``text`` with every path under a key of ``names`` (longest first) written under its value."""
    for held, named in sorted(names.items(), key=lambda kv: -len(str(kv[0]))):
        text = text.replace(str(held) + "/", str(named) + "/")
        if text == str(held):
            text = str(named)
    return text


def read_bytes(path: Path) -> bytes:
    """The bytes of the regular file ``path``, opened without waiting (O_NONBLOCK): a FIFO (or a device) put in a report
    folder under a name the render or the index reads (a summary, a record, an executed notebook, a chart's spec) is an
    OSError, as an unreadable file is; reliability-33 (folders): `mkfifo reports/A/summaries/x.json` had `report` wait
    for a writer for good."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        with os.fdopen(os.dup(fd), "rb") as f:
            return f.read()
    finally:
        os.close(fd)


def read_text(path: Path) -> str:
    """``read_bytes`` as UTF-8 text."""
    return read_bytes(path).decode("utf-8")

"""What is wrong with what a command was given, checked before it starts: paths that are not the files they should
be, a database this user cannot read, too low a limit of open files. Each gives one line (or None: all is well)."""

from __future__ import annotations

import os
import resource
import stat
from pathlib import Path

from . import paths


def special_files(targets: list[str]) -> str | None:
    """What is wrong with a named path that is neither a regular file nor a folder (a FIFO would block the read
    forever, a device such as /dev/zero never ends); None when every one is a file or a folder (or missing)."""

    for t in targets:
        try:
            mode = os.stat(t).st_mode
        except OSError:
            continue  # missing or unreadable: said by the caller
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
            return f"{t}: {kind}, not a log file (save the output to a file first)"
    return None


def not_a_file(path: Path) -> str:
    """Why a path the user gave as a file is not one: a folder, a device or FIFO (/dev/null), or nothing at all."""
    if path.is_dir():
        return "is a folder"
    return "is not a regular file (a device, a FIFO or a socket)" if path.exists() else "does not exist"


def unreadable(db: str | None) -> str | None:
    """The line for a database file that exists but this user cannot read (e.g. chmod 000)."""
    path = Path(db or paths.DB)
    if path.is_file() and not os.access(path, os.R_OK):
        return f"{path}: cannot be read (permission denied): ask its owner for read access, or use --db with a copy"
    return None


NOTEBOOK_COMMANDS = frozenset({"run", "notebooks", "build"})  # each runs notebooks in kernels
# open files a notebook's run needs (its kernel's sockets, DuckDB, polars' and the charts' threads): 09_bonnie failed
# at ulimit -n 48 and 64, ran at 96 and 128 (docs/reliability-6-processes.md, Low 5)
FILES_NEEDED = 128


def too_few_files(command: str | None) -> str | None:
    """One line when the limit of open files (ulimit -n) is below what a notebook's run needs, said once before any
    kernel starts (each notebook failed with its own 2 lines). A soft limit below it and a hard limit that allows it
    is raised instead, silently."""
    if command not in NOTEBOOK_COMMANDS:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= FILES_NEEDED:
        return None
    if hard == resource.RLIM_INFINITY or hard >= FILES_NEEDED:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (FILES_NEEDED, hard))
            return None
        except (ValueError, OSError):  # pragma: no cover - a system that refuses a raise within the hard limit
            pass
    return (
        f"the limit of open files (ulimit -n {soft}) is below the {FILES_NEEDED} a notebook's run needs (its "
        f"kernel, the database and the charts each hold files): raise it (e.g. ulimit -n 1024) and run again"
    )

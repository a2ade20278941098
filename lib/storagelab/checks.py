"""What is wrong with what a command was given, checked before it starts: paths that are not the files they should
be, a database this user cannot read, too low a limit of open files, a name DuckDB cannot take. Each gives one line
(or None: all is well)."""

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
    soft = _below(resource.RLIMIT_NOFILE, FILES_NEEDED)
    if soft is None:
        return None
    return (
        f"the limit of open files (ulimit -n {soft}) is below the {FILES_NEEDED} a notebook's run needs (its "
        f"kernel, the database and the charts each hold files): raise it (e.g. ulimit -n 1024) and run again"
    )


LAB_COMMANDS = frozenset({"lab fio", "lab bonnie", "lab zfs-sweep"})
# processes and threads (ulimit -u counts both, for all of the user's processes) a command needs: `run 07_explore` as
# a user under ulimit -u 8 ended "Aborted" (134, nothing else said), at 16 "Kernel died before replying to
# kernel_info", at 32 a Rust panic ("could not spawn threads"), at 48 it ran; `lab fio` under 3 a PanicException
# traceback (polars' thread), under 8 it stopped with 143, at 16 it ran (reliability-13). A build runs two notebooks
# at once: twice a run's, and a margin.
PROCESSES_NEEDED = {**dict.fromkeys(NOTEBOOK_COMMANDS, 128), **dict.fromkeys(LAB_COMMANDS, 32)}


def too_few_processes(command: str | None) -> str | None:
    """One line when the limit of processes (ulimit -u) is below what ``command`` needs, said before it starts; a
    soft limit below it and a hard limit that allows it is raised instead, silently. Root is not held to it."""
    needed = PROCESSES_NEEDED.get(command or "")
    if needed is None or os.geteuid() == 0:
        return None
    soft = _below(resource.RLIMIT_NPROC, needed)
    if soft is None:
        return None
    return (
        f"the limit of processes (ulimit -u {soft}) is below the {needed} `storagelab {command}` needs (its kernels, "
        f"tools and their threads count, with every other process of yours): raise it (e.g. ulimit -u 4096) and run "
        "again"
    )


def too_low_limits(command: str | None) -> str | None:
    """The limits of open files and of processes, checked before the command starts (see too_few_*)."""
    return too_few_files(command) or too_few_processes(command)


def _below(limit: int, needed: int) -> int | None:
    """The soft ``limit`` when it is below ``needed`` and cannot be raised to it (the hard limit is lower); None when it
    is enough or was raised, silently."""
    soft, hard = resource.getrlimit(limit)
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return None
    if hard == resource.RLIM_INFINITY or hard >= needed:
        try:
            resource.setrlimit(limit, (needed, hard))
            return None
        except (ValueError, OSError):  # pragma: no cover - a system that refuses a raise within the hard limit
            pass
    return soft


# the options whose path DuckDB (or the notebook that records it) opens: a name that is not UTF-8 raised
# RuntimeError: std::bad_cast inside duckdb.connect, a traceback (reliability-12 Low 1, reliability-13)
DUCKDB_PATH_OPTIONS = (("db", "--db"), ("dataset", "--dataset"), ("parquet", "--parquet"), ("output", "--output"))


def not_utf8(what: str, path: Path | str) -> str | None:
    """Why ``path`` cannot be given to DuckDB: its name is not UTF-8 (Python keeps such bytes as surrogates, DuckDB
    takes UTF-8 only), as one line naming ``what`` (the option); None when it is UTF-8."""
    try:
        os.fsencode(path).decode("utf-8")
    except UnicodeDecodeError as e:
        return (
            f"{what} {os.fsencode(path).decode('utf-8', 'backslashreplace')}: its name is not UTF-8 (byte {os.fsencode(path)[e.start]:#04x}), which DuckDB (and the notebook files that record it) cannot take; "
            "rename it, or give a path whose name is UTF-8"
        )
    return None


def names_refusal(args) -> str | None:
    """The first path option of a command (``DUCKDB_PATH_OPTIONS``) whose name DuckDB cannot open, as one line."""
    for attr, option in DUCKDB_PATH_OPTIONS:
        given = getattr(args, attr, None)
        if isinstance(given, str) and (why := not_utf8(option, given)):
            return why
    return None


def given_refusal(args) -> str | None:
    """``names_refusal``, then a path given that root's own FUSE view shows from folders another user can mount a
    FUSE file system on (``fuseviews``: a stopped server of theirs would hold the command for good)."""
    from . import fuseviews  # noqa: PLC0415  (only where a command runs)

    return names_refusal(args) or fuseviews.refusal(args)


def dotdot_refusal(what: str, path: Path | str) -> str | None:
    """Why ``path`` must not be given to DuckDB: it holds a ``..`` after a symlink, which the checks follow as the
    kernel does (up from the link's target) while DuckDB drops it with the name before it (reliability-13:
    ``--db /proc/self/cwd/../../root/x.duckdb`` was checked as /root/x.duckdb and opened as /proc/root/x.duckdb; with
    ``/tmp/rootslink/../x.duckdb`` DuckDB would open /tmp/x.duckdb, a name another user can plant). None otherwise."""
    given = os.path.abspath(path)  # abspath is lexical too, as DuckDB
    raw = os.path.join(os.getcwd(), path) if not os.path.isabs(path) else os.fspath(path)
    if ".." not in Path(raw).parts or os.path.realpath(given) == os.path.realpath(raw):
        return None
    return (
        f"{what} {path}: a '..' after a symlink leads to {os.path.realpath(raw)}, but DuckDB would open "
        f"{given}; give the path without '..'"
    )

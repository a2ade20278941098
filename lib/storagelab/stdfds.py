"""A command started with its standard input, output or error closed (``cmd >&-``, ``2>&-``, ``<&-``, a daemon's
exec) gets /dev/null in their place before it opens anything.

Unix gives a new file the lowest free descriptor: with 1 closed, the first file a command opened became its standard
output, and every child inherited it as theirs. ``run 07_explore >&-`` gave the report tree's lock file descriptor 1
and its kernel died ("Kernel died before replying to kernel_info"); ``sql`` and ``parse`` ended in a traceback
(Python sets ``sys.stdout`` to None); with 2 closed, ``ingest`` ended 1 at its first line on stderr, without a word
and without its database (reliability-13). A command whose output is its result (``sql``, ``parse``, ``schema``,
``compare``) with stdout closed is refused in one line on stderr: its result would go nowhere."""

from __future__ import annotations

import os
import sys

_CLOSED: list[int] = []  # the standard descriptors this process found closed (and filled with /dev/null)


def fill_closed() -> list[int]:
    """Open /dev/null on each of descriptors 0, 1, 2 that is closed, and give Python streams on them; those that were."""
    closed = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            closed.append(fd)
    for fd in closed:
        null = os.open(os.devnull, os.O_RDWR)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
        os.set_inheritable(fd, True)  # os.open's are not: the children (a kernel, fio) would find it closed again
        stream = open(fd, "r" if fd == 0 else "w", closefd=False, encoding="utf-8", errors="replace")  # noqa: SIM115
        name = ("stdin", "stdout", "stderr")[fd]
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)
    _CLOSED[:] = closed
    return closed


def closed_stdout() -> str | None:
    """The line for a command whose result is its standard output, found closed; else None."""
    if 1 in _CLOSED:
        return "standard output is closed (>&-): the result would go nowhere; send it to a file or to /dev/null"
    return None


def refusal(args) -> str | None:
    """Why ``args``' command cannot run: its result goes to a standard output that was closed."""
    result = args.cmd in ("parse", "compare") or (args.cmd == "sql" and not getattr(args, "parquet", None))
    # reliability-17: `run --list >&-` and `lab fio --dry-run >&-` ended 0 without a word, their lists lost
    result = result or (args.cmd in ("run", "notebooks") and getattr(args, "list", False))
    if result or (args.cmd == "schema" and not getattr(args, "write", False)):
        return closed_stdout()
    return None

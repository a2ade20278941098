"""Text on its way to a terminal: names (files, studies, labels) may hold control characters, which a terminal
takes as commands (ESC ] 0 ; ... BEL sets its title; other sequences move the cursor or rewrite the screen) and a
newline or a tab breaks a one-line message in two. Every line the command line prints of its own goes through
``one_line``; the database keeps names as they are."""

from __future__ import annotations

import errno
import os
import re
import sys
from contextlib import suppress
from typing import TextIO

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # C0, DEL and C1: what a terminal acts on instead of showing
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def one_line(text: str) -> str:
    """``text`` with each control character written as an escape (``\\n``, ``\\t``, ``\\r``, else ``\\xNN``, as
    ``ls`` quotes such names): one line, shown as it is."""
    return _CONTROL.sub(lambda m: _NAMED.get(m.group(), f"\\x{ord(m.group()):02x}"), text)


def say(text: str, file: TextIO | None = None) -> None:
    """Write ``text`` as ``one_line`` (to stderr unless ``file`` is given) in one write, flushed: print's text and
    newline are two writes, and the notebook workers share stdout, so two workers' lines ran together
    ('... -> reports/all/==> running 10_disk_card.ipynb ...')."""
    _write(file or sys.stderr, one_line(text) + "\n")


def _write(out: TextIO, text: str) -> None:
    try:
        out.write(text)
        out.flush()
    except BrokenPipeError:
        # stderr's reader gone (`cmd 2>&1 >/dev/null | true`): the line is lost, and the command still ends as it
        # ended. It was taken for stdout's reader gone: `sql 'selec 1'` ended 0, `run no_such` 141 (reliability-20)
        if out is not sys.stderr:
            raise
    except OSError:
        # a stderr that cannot be written (`2>/dev/full`, a full disk): the line is lost, and later ones go to
        # /dev/null. Raised, its first warning ended `ingest 2>/dev/full` in the middle, with Python's 'lost
        # sys.stderr' and exit 1 ("some files failed"), all files stored (reliability-24)
        if out is not sys.stderr:
            raise
        with suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), out.fileno())


READER_GONE: list[OSError] = []  # set by ``show`` once stdout cannot be written: its reader ended (| head -1), or full


def show(text: str) -> None:
    """``say`` to stdout: a command's own progress lines (``storagelab lab``'s ``log``). A reader gone (``| head -1``)
    or a stdout that cannot be written (``>/dev/full``) is remembered (``READER_GONE``: the lab stops before its next
    run, then ends as ``stop_if_reader_gone`` says), not raised where the line was said: the lab said a run's sanity
    lines while it saved the run, and the error (an OSError) was taken for the manifest's full disk: the finished
    run removed; exit 0 and not a word for `| head -1` (reliability-15). Later lines go to /dev/null."""
    if READER_GONE:
        return
    try:
        say(text, sys.stdout)
    except OSError as e:
        READER_GONE.append(e)
        with suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def stop_if_reader_gone() -> None:
    """Raise what ``show`` met (BrokenPipeError: the command ends as one whose reader went away, 141 and its line;
    another OSError: its one line, 2), once the runs made so far are kept."""
    if READER_GONE:
        e = READER_GONE[0]
        raise e if isinstance(e, BrokenPipeError) else OSError(e.errno, f"standard output: {e.strerror}")


def say_lines(text: str, file: TextIO | None = None) -> None:
    """``say`` for a message whose lines are its form (DuckDB's errors: the error, its candidates, the query with a
    caret under the place): each line through ``one_line``, printed as lines, not as one line of ``\\n``."""
    _write(file or sys.stderr, "".join(one_line(x.expandtabs(4)) + "\n" for x in text.rstrip("\n").split("\n")))


def os_error_text(e: OSError) -> str:
    """An OSError a command did not catch, as its line: the file and the reason; where the working folder is gone
    (removed or renamed while the shell was in it) and the name was relative or none, that, not `[Errno 2] No such
    file or directory` (issue 26's campaigns, Low)."""
    name = os.fsdecode(e.filename) if isinstance(e.filename, (str, bytes)) else None
    if not (name and os.path.isabs(name)):
        try:
            os.getcwd()
        except FileNotFoundError:
            return "the working folder is gone (removed while the shell was in it): cd to a folder that exists"
    if name and e.errno == errno.ENOTDIR:
        part = _file_on_the_way(name)
        return one_line(f"{name}: {'a file' if part == name else part + ' is a file'}, not a folder")
    return one_line(f"{name}: {e.strerror}") if name and e.strerror else str(e)


def _file_on_the_way(name: str) -> str:
    """Where a bare "Not a directory" is in ``name``: its first part that exists and is not a folder."""
    part = os.sep if name.startswith(os.sep) else ""
    for piece in (p for p in name.split(os.sep) if p):
        part = os.path.join(part, piece)
        with suppress(OSError):
            if os.path.lexists(part) and not os.path.isdir(part):
                return part
    return "a part of it"

"""The .md files an ingest leaves out (write-ups, notes) that hold a tool's output: said, never read silently.

A benchmark write-up saved as Markdown (a forum or GitHub page with fio's output in fences) is a common way
outputs arrive; `storagelab parse` reads it, the ingest leaves every .md out as documentation. Each left-out
.md of a reasonable size is parsed here, and one whose parse gives rows is named in a warning."""

from __future__ import annotations

from pathlib import Path

from .. import parsers
from ..errors import ParseError
from .listing import ListedFile, printable

MAX_BYTES = 4 * 1024 * 1024  # a write-up larger than this is not looked into
SHOWN = 5  # names in the warning; the rest counted


def holding_output(documents: list[ListedFile]) -> list[tuple[str, str]]:
    """(path, format) of each document whose whole text parses as a known tool's output with rows."""
    found = []
    for d in documents:
        if d.size > MAX_BYTES:
            continue
        try:
            parsed, _ = parsers.parse_bytes(Path(d.path).read_bytes(), d.path)
        except (ParseError, OSError, UnicodeError, ValueError):
            continue
        if any(parsed.tables.values()):
            found.append((d.path, parsed.format))
    return found


def warning(found: list[tuple[str, str]]) -> str | None:
    """One line naming the .md files that hold a tool's output, or None."""
    if not found:
        return None
    names = ", ".join(f"{printable(p)} ({fmt})" for p, fmt in found[:SHOWN])
    more = f" and {len(found) - SHOWN} more" if len(found) > SHOWN else ""
    return (
        f"{len(found)} .md file(s) hold a tool's output but were left out, as .md files are read as documentation: "
        f"{names}{more}; rename them to .txt to ingest them"
    )

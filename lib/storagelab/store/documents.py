"""The .md files an ingest leaves out (write-ups, notes) that hold a tool's output: said, never read silently.

A benchmark write-up saved as Markdown (a forum or GitHub page with fio's output in fences) is a common way
outputs arrive; `storagelab parse` reads it, the ingest leaves every .md out as documentation. Each left-out
.md of a reasonable size is parsed here, and one whose parse gives rows is named in a warning. The verdicts are
kept in the database's ``meta`` (``SEEN_KEY``: each .md's size, mtime and format, with the code that judged
them): the next ingest parses only the .md files that are new or changed, or all of them once the code changed,
and names the unchanged ones from what it kept."""

from __future__ import annotations

import json

from .. import parsers
from ..errors import ParseError
from ..ingest_open import open_input
from .listing import ListedFile, printable

MAX_BYTES = 4 * 1024 * 1024  # a write-up larger than this is not looked into
SHOWN = 5  # names in the warning; the rest counted


SEEN_KEY = "write_ups"  # meta: {"code": ..., "files": {key: [size, mtime_ns, format or null]}}


def output_format(d: ListedFile) -> str | None:
    """The format of a document whose whole text parses as a known tool's output with rows, else None."""
    if d.size > MAX_BYTES:
        return None
    try:
        with open_input(d.path) as fh:  # a FIFO or another user's link to a file of root's put there since the listing
            data = fh.read(MAX_BYTES + 1)
        parsed, _ = parsers.parse_bytes(data, d.path)
    except (ParseError, OSError, UnicodeError, ValueError):
        return None
    return parsed.format if any(parsed.tables.values()) else None


def holding_output(documents: list[ListedFile], seen: dict | None = None) -> list[tuple[str, str]]:
    """(path, format) of each document that holds a tool's output. ``seen`` (key -> [size, mtime_ns, format]) gives
    the verdicts of documents unchanged since they were judged; the others are parsed, and ``seen`` is updated to
    the documents given (a removed one is dropped)."""
    known = dict(seen or {})
    found = []
    for d in documents:
        was = known.get(d.key)
        fmt = was[2] if was is not None and was[:2] == [d.size, d.mtime_ns] else output_format(d)
        if seen is not None:
            seen[d.key] = [d.size, d.mtime_ns, fmt]
        if fmt:
            found.append((d.path, fmt))
    if seen is not None:
        for key in set(known) - {d.key for d in documents}:
            del seen[key]
    return found


def checked(con, documents: list[ListedFile], code: str) -> list[tuple[str, str]]:
    """``holding_output`` with the verdicts the last ingest into ``con`` kept (when its code was ``code``), and
    this ingest's kept for the next."""
    rows = con.execute("SELECT value FROM meta WHERE key = ?", [SEEN_KEY]).fetchall()
    kept = json.loads(rows[0][0]) if rows else {}
    seen = kept.get("files", {}) if kept.get("code") == code else {}
    found = holding_output(documents, seen)
    con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", [SEEN_KEY, json.dumps({"code": code, "files": seen})])
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

"""The contract every parser module follows (written down as ``contract.ParserModule``, a Protocol).

A parser module (``storagelab.parsers.<tool>``) exposes (optional hooks: see ``contract.py``):

* ``TOOL``: the tool name stored in ``files.tool``.
* ``TABLES``: ``{table_name: Table(...)}`` - the columns it fills, in base units.
  ``storagelab.schema`` collects these into the DuckDB DDL and docs/schema.md.
* ``sniff(text) -> str | None``: the format name if the content is this tool's output
  (cheap: looks at content, never at the file name), else None.
* ``parse(text, fmt=None) -> Parsed``: pure, text in, rows out. Raises ``ParseError``
  (with a 1-based line number and what was expected) on anything it cannot read.

Rows are plain dicts whose keys are column names of the declared table, minus
``file_id`` (the store adds it). A parser on a hot path may instead fill a ``Tuples`` table
(``parsed.tuples(name, columns)``): one tuple per row in a fixed column order, which the
store turns into columns without building a dict per row; read back, it gives the same dicts. Text formats set ``line_start``/``line_end`` (1-based,
inclusive) so every number can be traced back to a raw log line.

Streaming (bounded memory on logs of any size). A module may also offer
``parse_stream(open_lines, fmt, parsed, name=None) -> Parsed`` for the formats in its
``STREAM_FORMATS``: ``open_lines()`` gives the lines (as ``lines_of`` splits them) afresh each time it is
called, and the parser fills ``parsed``, calling ``parsed.checkpoint()`` wherever no row it holds will
change again. When the store gives ``parsed`` a ``sink`` (a huge file), a checkpoint hands the rows held so
far to the sink (which writes them to the database in the file's transaction) and the parser goes on
with empty tables: counts must come from ``parsed.count(table)``, and a change to rows already handed
over goes through ``parsed.update_flushed``. ``parsed.restart()`` forgets every row (a fast path that
gives up); ``NotStreamable`` sends the file back to the whole-file path. Without a sink, all of this is a
no-op, and ``parse(text)`` is ``parse_stream`` over the text's lines: one code path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import ParseError  # re-exported for parser modules

__all__ = ["Col", "Table", "Parsed", "ParseError", "Tuples", "lines_of", "NotStreamable", "RowSink"]

SQL_TYPES = {"VARCHAR", "BIGINT", "INTEGER", "DOUBLE", "BOOLEAN", "TIMESTAMP", "TIMESTAMPTZ"}


@dataclass(frozen=True)
class Col:
    name: str
    type: str
    doc: str = ""

    def __post_init__(self):
        if self.type not in SQL_TYPES:
            raise ValueError(f"column {self.name}: unsupported type {self.type}")


@dataclass(frozen=True)
class Table:
    doc: str
    columns: tuple[Col, ...]

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def row_columns(self) -> tuple[str, ...]:
        """The columns a parser fills, in the table's order (all but file_id): the order of a Tuples row."""
        return tuple(c.name for c in self.columns if c.name != "file_id")


def table(doc: str, *cols: tuple[str, str, str] | tuple[str, str]) -> Table:
    """Shorthand: ``table("doc", ("col", "DOUBLE", "what, unit"), ...)``; file_id is prepended."""
    columns = [Col("file_id", "INTEGER", "files.file_id of the raw file")]
    columns += [Col(*c) for c in cols]
    return Table(doc, tuple(columns))


LINES = (
    ("line_start", "INTEGER", "first raw line (1-based) of this record"),
    ("line_end", "INTEGER", "last raw line (1-based, inclusive) of this record"),
)


class Tuples:
    """A table held as one tuple per row, in the order of ``names``. Reads as a list of dicts
    (iteration, indexing, ``==`` with a list of dicts), so consumers need not know."""

    __slots__ = ("names", "data")

    def __init__(self, names: tuple[str, ...], data: list[tuple] | None = None):
        self.names = tuple(names)
        self.data = [] if data is None else data

    def append(self, row: dict[str, Any]) -> None:
        extra = set(row) - set(self.names)
        if extra:
            raise KeyError(f"columns {sorted(extra)} are not among {self.names}")
        self.data.append(tuple(row.get(n) for n in self.names))

    def __len__(self) -> int:
        return len(self.data)

    def __iter__(self):
        names = self.names
        return (dict(zip(names, t, strict=True)) for t in self.data)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [dict(zip(self.names, t, strict=True)) for t in self.data[i]]
        return dict(zip(self.names, self.data[i], strict=True))

    def __eq__(self, other) -> bool:
        if isinstance(other, (Tuples, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    def __repr__(self) -> str:
        return f"Tuples({self.names}, {len(self.data)} rows)"


class RowSink(Protocol):
    """Where a streaming parse hands its rows (the store: into the file's open transaction)."""

    def write(self, tables: dict[str, list[dict[str, Any]] | Tuples]) -> None: ...

    def discard(self) -> None: ...

    def update(self, table: str, values: dict[str, Any], where: dict[str, Any]) -> None: ...


class NotStreamable(Exception):
    """A streaming parser met something only the whole-file parse reads right (e.g. a JSON document inside
    fio's normal output): the store parses the file whole instead."""


@dataclass
class Parsed:
    """What a parser returns for one file."""

    tool: str
    format: str
    tool_version: str | None = None
    tables: dict[str, list[dict[str, Any]] | Tuples] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    sink: RowSink | None = field(default=None, repr=False, compare=False)
    batch_rows: int = field(default=50_000, repr=False, compare=False)  # rows held before a checkpoint flushes
    flushed: dict[str, int] = field(default_factory=dict, repr=False, compare=False)  # rows handed to the sink

    def add(self, table_name: str, row: dict[str, Any]) -> None:
        self.tables.setdefault(table_name, []).append(row)

    def tuples(self, table_name: str, names: tuple[str, ...]) -> list[tuple]:
        """The row list of a Tuples table (created with ``names`` if new): append tuples to it."""
        t = self.tables.get(table_name)
        if t is None:
            t = self.tables[table_name] = Tuples(names)
        elif not isinstance(t, Tuples) or t.names != tuple(names):
            raise TypeError(f"{table_name} already holds rows of another shape")
        return t.data

    def rows(self, table_name: str) -> list[dict[str, Any]] | Tuples:
        """The rows held (all of them unless a sink took some: see ``count``)."""
        return self.tables.get(table_name, [])

    @property
    def n_rows(self) -> int:
        """Rows held (not yet handed to a sink)."""
        return sum(len(v) for v in self.tables.values())

    def count(self, table_name: str) -> int:
        """Rows of the table so far, held or handed to the sink."""
        return self.flushed.get(table_name, 0) + len(self.tables.get(table_name, ()))

    def checkpoint(self) -> None:
        """No row held will change again: with a sink, hand them over once there are ``batch_rows``."""
        if self.sink is not None and self.n_rows >= self.batch_rows:
            self.flush()

    def flush(self) -> None:
        """Hand every row held to the sink (none without one). The row lists are emptied in place, so a
        parser may keep the list ``tuples`` gave it."""
        if self.sink is None:
            return
        out: dict[str, list[dict[str, Any]] | Tuples] = {}
        for name, rows in self.tables.items():
            if not len(rows):
                continue
            if isinstance(rows, Tuples):
                out[name] = Tuples(rows.names, rows.data[:])
                rows.data.clear()
            else:
                out[name] = rows[:]
                rows.clear()
            self.flushed[name] = self.flushed.get(name, 0) + len(out[name])
        if out:
            self.sink.write(out)

    def update_flushed(self, table_name: str, values: dict[str, Any], where: dict[str, Any]) -> None:
        """Set ``values`` on the rows of the table already handed to the sink that match ``where``
        (the parser changes the rows it holds itself)."""
        if self.sink is not None and self.flushed.get(table_name):
            self.sink.update(table_name, values, where)

    def restart(self) -> None:
        """Forget every row and warning so far, those handed to the sink included."""
        if self.sink is not None and self.flushed:
            self.sink.discard()
        self.flushed.clear()
        for rows in self.tables.values():
            (rows.data if isinstance(rows, Tuples) else rows).clear()
        self.tables.clear()
        self.warnings.clear()


# The prompt line of a terminal transcript: 'root@host:~# cmd', '[user@host dir]$ cmd', 'root@truenas[~]# cmd'
# (csh on FreeBSD/TrueNAS), 'user@host ~ $ cmd' (Gentoo), 'host% cmd', '$ cmd', '# cmd', or a bare prompt after the
# output ('root@host:~# '). Parsers of outputs that are pasted with their command skip it.
SHELL_PROMPT = re.compile(
    r"^\s*(?:\[[^\]\n]*\]\s*"
    r"|[\w.-]+@[\w.-]+(?::[^\s$#%>]*|\[[^\]\n]*\]|\s+[~/][^\s$#%>]*)?\s*"
    r"|[\w.-]+:[^\s$#%>]*\s*|[\w.-]+(?:\s+[~/][^\s$#%>]*\s*)?)?[$#%>](?:\s|$)"
)


def not_this_format(text: str, message: str, expected: str) -> ParseError:
    """The error of a parser given text that is not its tool's output: ``message``, at the first non-blank line."""
    first = next((i for i, ln in enumerate(lines_of(text), 1) if ln.strip()), 1)
    return ParseError(message, line=first, expected=expected)


def lines_of(text: str) -> list[str]:
    """Split into lines without losing line numbering (``\\r\\n`` and ``\\n`` end a line; a bare
    ``\\r`` stays inside its line, as progress output of fio/zdb leaves it)."""
    return text.replace("\r\n", "\n").split("\n")

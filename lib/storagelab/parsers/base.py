"""The contract every parser module follows.

A parser module (``storagelab.parsers.<tool>``) exposes:

* ``TOOL``: the tool name stored in ``files.tool``.
* ``TABLES``: ``{table_name: Table(...)}`` - the columns it fills, in base units.
  ``storagelab.schema`` collects these into the DuckDB DDL and docs/schema.md.
* ``sniff(text) -> str | None``: the format name if the content is this tool's output
  (cheap: looks at content, never at the file name), else None.
* ``parse(text, fmt=None) -> Parsed``: pure, text in, rows out. Raises ``ParseError``
  (with a 1-based line number and what was expected) on anything it cannot read.

Rows are plain dicts whose keys are column names of the declared table, minus
``file_id`` (the store adds it). Text formats set ``line_start``/``line_end`` (1-based,
inclusive) so every number can be traced back to a raw log line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import ParseError  # re-exported for parser modules

__all__ = ["Col", "Table", "Parsed", "ParseError", "lines_of"]

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


def table(doc: str, *cols: tuple[str, str, str] | tuple[str, str]) -> Table:
    """Shorthand: ``table("doc", ("col", "DOUBLE", "what, unit"), ...)``; file_id is prepended."""
    columns = [Col("file_id", "INTEGER", "files.file_id of the raw file")]
    columns += [Col(*c) for c in cols]
    return Table(doc, tuple(columns))


LINES = (("line_start", "INTEGER", "first raw line (1-based) of this record"),
         ("line_end", "INTEGER", "last raw line (1-based, inclusive) of this record"))


@dataclass
class Parsed:
    """What a parser returns for one file."""

    tool: str
    format: str
    tool_version: str | None = None
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def add(self, table_name: str, row: dict[str, Any]) -> None:
        self.tables.setdefault(table_name, []).append(row)

    def rows(self, table_name: str) -> list[dict[str, Any]]:
        return self.tables.get(table_name, [])

    @property
    def n_rows(self) -> int:
        return sum(len(v) for v in self.tables.values())


def lines_of(text: str) -> list[str]:
    """Split into lines without losing line numbering (``\\r\\n`` and ``\\n`` end a line; a bare
    ``\\r`` stays inside its line, as progress output of fio/zdb leaves it)."""
    return text.replace("\r\n", "\n").split("\n")

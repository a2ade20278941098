"""The DuckDB schema, in one place: core tables here, tool tables from each parser's TABLES.

``ddl()`` gives the CREATE statements; ``markdown()`` renders docs/schema.md (a test keeps
the committed page equal to it).
"""

from __future__ import annotations

from .manifest import FIELDS as MANIFEST_FIELDS
from .parsers import modules
from .parsers.base import Col, Table

FILES = Table(
    "One row per ingested raw file: provenance, and the labels from the manifest.",
    tuple(
        [
            Col("file_id", "INTEGER", "primary key"),
            Col("path", "VARCHAR", "path relative to the project root (absolute when outside it)"),
            Col("sha256", "VARCHAR", "SHA-256 of the file's bytes"),
            Col("size_bytes", "BIGINT", "file size, bytes"),
            Col("mtime_ns", "BIGINT", "file modification time, ns since the epoch (for fast unchanged checks)"),
            Col("tool", "VARCHAR", "tool that wrote the file (detected from content)"),
            Col("tool_version", "VARCHAR", "tool version as printed, where the output says it"),
            Col("format", "VARCHAR", "output format (fio-normal, fio-json, bonnie-text+csv, zdb-b, ...)"),
            Col("parser_version", "VARCHAR", "storagelab and parser version that produced the rows"),
            Col("ingested_at", "TIMESTAMPTZ", "when the rows were written"),
            Col("n_rows", "INTEGER", "rows written for this file, all tables"),
            Col("warnings", "VARCHAR", "parser warnings, one per line"),
        ]
        + [Col(f"label_{n}" if n == "path" else n, t, d) for n, t, d in MANIFEST_FIELDS if n != "path"]
    ),
)

INGEST_ERRORS = Table(
    "Files that could not be ingested (the latest attempt per path).",
    (
        Col("path", "VARCHAR", "path as given"),
        Col("sha256", "VARCHAR", "SHA-256 of the bytes, when the file could be read"),
        Col(
            "kind",
            "VARCHAR",
            "empty, binary, encoding, unknown-format, truncated, invalid, unsupported-version, compression, too-large, io",
        ),
        Col("line", "INTEGER", "1-based line of the problem, when known"),
        Col("message", "VARCHAR", "what went wrong"),
        Col("expected", "VARCHAR", "what the parser expected there"),
        Col("attempted_at", "TIMESTAMPTZ", "when"),
    ),
)

LABEL_NAMES = {n for n, _t, _d in MANIFEST_FIELDS if n != "path"}

DUPLICATES = Table(
    "Files whose bytes are those of a file already in `files` (same SHA-256): not stored twice, listed "
    "here so that the next ingest skips them by path, size and mtime without reading them. Each keeps its "
    "own manifest labels: a study whose logs are copies of another study's selects the stored rows by them.",
    (
        Col("path", "VARCHAR", "path of the copy, as `files.path`"),
        Col("sha256", "VARCHAR", "SHA-256 of its bytes (that of the stored file)"),
        Col("size_bytes", "BIGINT", "file size, bytes"),
        Col("mtime_ns", "BIGINT", "modification time, ns since the epoch"),
        Col("same_as", "VARCHAR", "`files.path` of the stored file with these bytes"),
        Col("found_at", "TIMESTAMPTZ", "when the copy was found"),
    )
    + tuple(
        Col(c.name, c.type, c.doc + " (the copy's own manifest label: selecting by it selects the stored file's rows)")
        for c in FILES.columns
        if c.name in LABEL_NAMES
    ),
)

CORE = {"files": FILES, "ingest_errors": INGEST_ERRORS, "duplicates": DUPLICATES}


def tool_tables() -> dict[str, tuple[str, Table]]:
    """table name -> (tool, Table) for every parser module."""
    out: dict[str, tuple[str, Table]] = {}
    for mod in modules():
        for name, tab in mod.TABLES.items():
            if name in out or name in CORE:
                raise RuntimeError(f"table {name} declared twice")
            out[name] = (mod.TOOL, tab)
    return out


def all_tables() -> dict[str, Table]:
    tabs = dict(CORE)
    tabs.update({k: v[1] for k, v in tool_tables().items()})
    return tabs


def ddl() -> list[str]:
    stmts = []
    for name, tab in all_tables().items():
        cols = ",\n  ".join(f'"{c.name}" {c.type}' for c in tab.columns)
        stmts.append(f'CREATE TABLE IF NOT EXISTS "{name}" (\n  {cols}\n)')
    stmts.append('CREATE TABLE IF NOT EXISTS "meta" (key VARCHAR PRIMARY KEY, value VARCHAR)')
    return stmts


def markdown() -> str:
    lines = [
        "# Database schema",
        "",
        "Generated from the code by `storagelab schema` (`lib/storagelab/schema.py` and each parser's",
        "`TABLES`); `tests/test_schema.py` fails when this page is out of date.",
        "",
        "One unit per quantity: **bytes**, **bytes per second**, **nanoseconds**, **counts** (and plain",
        "percentages). Column names carry the unit (`_bytes`, `_bytes_per_s`, `_ns`, `_pct`).",
        "Every tool table has `file_id` (join to `files`) and, for text formats, `line_start`/`line_end`:",
        "the raw lines each record came from. Every table is also written as Parquet to",
        "`data/parsed/<table>.parquet`.",
        "",
    ]
    tools = tool_tables()
    for name, tab in all_tables().items():
        tool = tools.get(name, ("core",))[0]
        lines += [f"## `{name}` ({tool})", "", tab.doc, "", "| column | type | meaning |", "| --- | --- | --- |"]
        lines += [f"| `{c.name}` | {c.type} | {c.doc} |" for c in tab.columns]
        lines.append("")
    return "\n".join(lines)

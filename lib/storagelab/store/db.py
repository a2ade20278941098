"""The database itself: opening it, its schema (created or rebuilt in one transaction), the
bookkeeping in ``meta`` (code signature, parser versions, table generations) and the one way rows
are inserted (an Arrow table per statement)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from .. import __version__
from ..database import (  # noqa: F401 - store.connect, store.schema_signature
    EXTRA_DDL,
    UNFINISHED,
    connect,
    schema_signature,
    unfinished_ingest,
)
from ..parsers import modules, parser_version, source_hash
from ..schema import ddl
from . import faults

if TYPE_CHECKING:  # in annotations only: the commands that only read (sql, export, run) never import pyarrow here
    import pyarrow as pa

# DuckDB keeps written pages cached up to its limit (default 80 % of RAM): an ingest would hold the database in
# memory; pages past this limit are read back from the file when needed. 160 MB: 100,000 fio JSON files peak at
# 455 MiB for the whole ingest (537 MiB at 256 MB), in the same time; a 500 MB log at 281 MiB (benchmarks/)
INGEST_MEMORY_MB = 160


def code_signature() -> str:
    """Hash of the sources the schema and the parser versions come from (every parser module,
    base.py, units.py, schema.py, manifest.py and the package version): while it is unchanged,
    the schema and parser versions recorded in ``meta`` hold, and an ingest with nothing to parse
    need not import (and compile the regular expressions of) every parser."""

    here = Path(__file__).parent.parent
    files = sorted((here / "parsers").rglob("*.py")) + [here / n for n in ("units.py", "schema.py", "manifest.py")]
    return source_hash(files, here, __version__.encode() + "\n".join(EXTRA_DDL).encode())[:16]


def ensure_schema(con: duckdb.DuckDBPyConnection, code: str | None = None) -> bool:
    """Create the tables; if the code's schema changed since the database was built, rebuild it empty.

    Returns True when the database was (re)created. data/parsed/ is disposable by design:
    everything in it is rebuilt from data/raw/. With ``code`` (``code_signature()``) equal to the
    one recorded when the schema was last checked, the check is skipped.
    """
    existing = [
        r[0]
        for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' AND table_type = 'BASE TABLE'"
        ).fetchall()
    ]
    if "meta" in existing:
        meta = dict(con.execute("SELECT key, value FROM meta WHERE key IN ('code', 'schema', 'db_id')").fetchall())
        if meta.get("db_id"):
            if code is not None and meta.get("code") == code and meta.get("schema"):
                return False
            if meta.get("schema") == schema_signature():
                return False
    # everything in one transaction: a kill leaves the old database or the new one, never a mix
    # (tables with no meta beside them are left-overs, dropped too)
    con.execute("BEGIN")
    try:
        for i, name in enumerate(existing):
            con.execute(f'DROP TABLE IF EXISTS "{name}"')
            if i == len(existing) // 2:
                faults.inject("schema-drop")
        for stmt in ddl() + EXTRA_DDL:
            con.execute(stmt)
        con.executemany(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)", [("schema", schema_signature()), ("db_id", uuid.uuid4().hex)]
        )
        con.execute("COMMIT")
    except BaseException:
        faults.rollback(con)
        raise
    return True


def current_parser_versions() -> dict[str, str]:
    """tool -> parser_version of the code as it is now (imports every parser)."""

    return {m.TOOL: parser_version(m) for m in modules()}


def parser_versions(con: duckdb.DuckDBPyConnection, code: str) -> dict[str, str]:
    """tool -> parser_version of the current code: from ``meta`` when the code is the one recorded
    there (ensure_schema ran first, so the schema is current), else computed and recorded."""
    meta = dict(con.execute("SELECT key, value FROM meta WHERE key IN ('code', 'versions')").fetchall())
    if meta.get("code") == code and meta.get("versions"):
        return json.loads(meta["versions"])
    versions = current_parser_versions()
    con.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [("versions", json.dumps(versions)), ("code", code)])
    return versions


def bump(con, tables: Iterable[str]) -> None:
    """Give these tables a new generation (in the caller's transaction): their Parquet stamps no
    longer match, so the next export rewrites them."""
    con.execute(
        "INSERT OR REPLACE INTO meta SELECT 'gen:' || t, ? FROM unnest(?::VARCHAR[]) u(t)",
        [uuid.uuid4().hex[:16], sorted(set(tables))],
    )  # one statement: executemany costs ~2 ms a row


def register_insert(con, name: str, tbl: pa.Table) -> None:
    """INSERT an Arrow table (its columns in the table's order) into table ``name``: one statement.
    Callers call it as ``db.register_insert`` so that a test may replace it."""
    insert(con, f'"{name}"', tbl)


def insert(con, target: str, tbl: pa.Table) -> None:
    """``INSERT INTO target SELECT * FROM tbl`` (``target`` quoted as in SQL), in the connection's transaction, with the
    same casts and errors; as a relation, not through a view registered and dropped for the one statement (those two
    catalog changes were a quarter of its CPU: 0.76 ms a small batch, 1.0 ms with them; a streamed log inserts a
    batch per checkpoint)."""
    con.from_arrow(tbl).insert_into(target)


def with_view(con, view: str, tbl: pa.Table, sql: str, params: list | None = None):
    """Run ``sql`` with ``tbl`` registered as ``view`` (UPDATE ... FROM a whole column set in one
    statement: executemany costs milliseconds a row); its result."""
    con.register(view, tbl)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        unregister(con, view)


def unregister(con, view: str) -> None:
    """Drop a registered view; in a transaction that has failed (an interrupted INSERT) this fails
    too, and the first error is the one that matters."""
    try:
        con.unregister(view)
    except duckdb.Error:
        pass


def mark_unfinished(con, targets: list[tuple[str, str]]) -> None:
    """Record, in its own transaction before an ingest changes any file already stored, that it has begun:
    ``targets`` are (key, as the user named it) of what it ingests (the key of a folder ends in "/"; "" as named:
    the default folder). Added to those of an earlier ingest that was stopped too. Every reader refuses the database
    while it is there (``database.unfinished_ingest``)."""
    pending = dict(_pending(con))
    pending.update((k, v) for k, v in targets if k not in pending)
    con.execute("BEGIN")
    con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", [UNFINISHED, json.dumps(sorted(pending.items()))])
    con.execute("COMMIT")


def finishes_stopped(con, covered: Callable[[str], bool]) -> bool:
    """Whether this run covers the paths of a stopped ingest (``finish_unfinished`` will then clear them)."""
    return any(covered(k) for k, _ in _pending(con))


def finish_unfinished(con, covered: Callable[[str], bool]) -> None:
    """An ingest ran to its end: the stopped ingests whose paths it covered (``covered(key)``) are finished by it,
    as an ingest of a path makes the database hold what a clean ingest of that path would."""
    pending = _pending(con)
    if not pending:
        return
    left = [(k, v) for k, v in pending if not covered(k)]
    con.execute("BEGIN")
    if left:
        con.execute("UPDATE meta SET value = ? WHERE key = ?", [json.dumps(left), UNFINISHED])
    else:
        con.execute("DELETE FROM meta WHERE key = ?", [UNFINISHED])
    con.execute("COMMIT")


def _pending(con) -> list[tuple[str, str]]:
    rows = con.execute("SELECT value FROM meta WHERE key = ?", [UNFINISHED]).fetchall()
    if not rows:
        return []
    try:
        return [(str(k), str(v)) for k, v in json.loads(rows[0][0])]
    except (ValueError, TypeError):
        return [("", "")]  # unreadable (edited by hand): finished by an ingest of the project's root folder

"""The DuckDB store: schema, incremental ingest with per-file atomicity, provenance, Parquet export.

Ingest, in short:

1. list the files (directories are walked; manifest/README/hidden files are skipped);
2. skip a file whose path, size and mtime are unchanged since it was ingested by the same
   parser version (no read at all), or that is a known copy of a stored file (``duplicates``);
   a file whose SHA-256 is already in the database is listed as a copy, not stored twice;
3. read, hash and parse the rest: on large sets a process pool parses chunks of files, each
   chunk's rows typed into one Arrow table per table (sent back as an Arrow IPC stream);
   parsing is pure and never touches the database;
4. write the parsed files in batches (up to ``batch_files`` files or ``batch_rows`` rows), one
   transaction per batch: a file's old rows (when its content changed) are deleted and its new
   rows inserted in the same transaction, so a file is either wholly in the database or not at
   all, even if the process is killed; if a batch fails, its files are retried one transaction each;
   a file's labels (from the manifest) are written with its rows, in the same transaction;
5. record failures in ``ingest_errors`` (they never stop the others); a stored file gone from a
   listed folder is removed, or, when a new path holds its bytes, renamed (rows and file_id kept);
   re-apply the labels when the manifest differs from the one last applied;
6. bring the Parquet files up to date: each table's export is stamped with the table's generation
   (``meta``: a token changed in every transaction that writes the table) and row count; every
   run rewrites the tables whose stamp does not match (temp file, then rename), so an export cut
   short by a kill or a full disk is redone by the next run. The Parquet folder belongs to its
   database: ``data/parsed/`` for the default one, ``<name>-parquet/`` beside any other.

Paths are canonical (resolved, relative to the project root when inside it; bytes of a non-UTF-8
name as ``\\xNN``), each listed once, and unique in ``files``. The schema is created or rebuilt in
one transaction. Every database or disk fault ends the ingest with a StoreError (one line); the
database keeps every transaction committed before it.

Where the time goes, and what was tried: benchmarks/results/ingest.md (``./run bench``).
"""

from __future__ import annotations

import gc
import hashlib
import json
import math
import os
import signal
import sys
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import islice
from operator import itemgetter
from pathlib import Path

import duckdb
import pyarrow as pa

from . import ignore, paths
from .errors import DatabaseBusyError, ParseError, StoragelabError
from .manifest import LABEL_COLUMNS, Manifest
from .manifest import load as load_manifest
from .parsers import parse_bytes, parser_version
from .parsers.base import Tuples
from .schema import all_tables, ddl, tool_tables

INGEST_MEMORY_MB = 256
# created with the tables (and part of the schema signature): a path is stored once
EXTRA_DDL = ["CREATE UNIQUE INDEX IF NOT EXISTS files_path ON files (path)"]
STAMP = ".parquet-stamp.json"  # in the Parquet folder: table -> stamp of the export it holds
SKIP_NAMES = {"manifest.csv", "README", "README.md", "README.txt", ".gitkeep"}
_ARROW = {
    "VARCHAR": pa.string(),
    "BIGINT": pa.int64(),
    "INTEGER": pa.int32(),
    "DOUBLE": pa.float64(),
    "BOOLEAN": pa.bool_(),
    "TIMESTAMPTZ": pa.timestamp("us", tz="UTC"),
    "TIMESTAMP": pa.timestamp("us"),
}


# ----------------------------------------------------------------------------- faults


class StoreError(StoragelabError):
    """The database cannot be opened or written: corrupt or not a DuckDB file, a folder, read-only,
    disk full. The message is one line and says what to do."""


_FAULT = os.environ.get("STORAGELAB_FAULT")  # tests only: "stage" or "stage:N" (see _fault)
_FAULT_SEEN: dict[str, int] = {}


def _fault(stage: str) -> None:
    """Fault injection for tests/test_store_faults.py: with STORAGELAB_FAULT=stage[:N] the process
    SIGKILLs itself the N-th time (default 1st) it reaches ``stage``. A no-op otherwise."""
    if _FAULT is None:
        return
    name, _, n = _FAULT.partition(":")
    if name == stage:
        _FAULT_SEEN[stage] = k = _FAULT_SEEN.get(stage, 0) + 1
        if k >= int(n or 1):
            os.kill(os.getpid(), signal.SIGKILL)


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


def describe_fault(db: Path, e: BaseException, *, opening: bool = True) -> str:
    """One line for a database or disk fault: what happened and what to do. ``opening``: the
    database could not be opened (else: it failed while an ingest wrote it)."""
    said = _first_line(e)
    low = str(e).lower()
    if (
        "no space left" in low
        or "file too large" in low
        or "disk is full" in low
        or getattr(e, "errno", None) in (28, 27)
    ):
        return (
            f"{db}: disk full ({said}). Every file committed before it is in the database; free some "
            "space and run ingest again to finish"
        )
    if "read-only" in low or "read only" in low or "permission denied" in low or getattr(e, "errno", None) in (13, 30):
        return (
            f"{db}: cannot write ({said}): the file, its folder or the filesystem is read-only. "
            "Use --db with a writable place; `storagelab sql` and the notebooks can still read it"
        )
    if "is a directory" in low:
        return f"{db} is a folder: --db takes a database file, e.g. {db / 'storagelab.duckdb'}"
    if isinstance(e, duckdb.Error) and (opening or any(w in low for w in ("corrupt", "checksum", "not a valid"))):
        return (
            f"{db} is not a usable DuckDB database ({said}): it may be truncated, corrupt or another kind "
            "of file. Move it away (or delete it: ingest rebuilds the database from the raw files)"
        )
    if isinstance(e, duckdb.Error):
        return (
            f"{db}: the database failed during the ingest ({said}). Every file committed before it is in "
            "the database; run ingest again"
        )
    return f"{db}: {said}"


def _environmental(e: BaseException) -> bool:
    """A fault of the database or the disk (not of one file's rows): the ingest stops."""
    if isinstance(
        e,
        (
            OSError,
            duckdb.IOException,
            duckdb.FatalException,
            duckdb.InternalException,
            duckdb.TransactionException,
            duckdb.InterruptException,
        ),
    ):
        return True
    low = str(e).lower()
    return any(w in low for w in ("no space left", "file too large", "read-only", "invalidated", "failed to commit"))


def _interrupted(e: BaseException) -> bool:
    """Ctrl-C while DuckDB ran a statement: DuckDB 2 raises RuntimeError('Query interrupted')
    (older versions InterruptException) instead of KeyboardInterrupt."""
    return isinstance(e, duckdb.InterruptException) or (isinstance(e, RuntimeError) and "interrupted" in str(e).lower())


def _rollback(con) -> None:
    """ROLLBACK when a transaction is open (a failed COMMIT has already ended it)."""
    try:
        con.execute("ROLLBACK")
    except duckdb.Error:
        pass


# ----------------------------------------------------------------------------- connection


def connect(
    db_path: Path | str | None = None, *, read_only: bool = False, wait: float = 0.0, wait_option: str | None = None
) -> duckdb.DuckDBPyConnection:
    """Open the database. Another process holding it gives DatabaseBusyError (after waiting up to
    ``wait`` s; its message names ``wait_option`` when the command has one); a database that
    cannot be opened (a folder, not DuckDB, corrupt, read-only) gives StoreError."""
    db = Path(db_path or paths.DB)
    if db.is_dir():
        raise StoreError(f"{db} is a folder: --db takes a database file, e.g. {db / 'storagelab.duckdb'}")
    if read_only and not db.exists():
        raise FileNotFoundError(f"{db} does not exist: run `storagelab ingest` (or ./run build) first")
    if not read_only:
        try:
            db.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StoreError(f"cannot create the folder {db.parent}: {e.strerror or e}") from None
    deadline = time.monotonic() + wait
    while True:
        try:
            return duckdb.connect(str(db), read_only=read_only)
        except duckdb.IOException as e:
            if "could not set lock" not in str(e).lower() and "conflicting lock" not in str(e).lower():
                raise StoreError(describe_fault(db, e)) from None
            if time.monotonic() >= deadline:
                retry = f"retry with {wait_option} SECONDS" if wait_option else "retry when it has finished"
                raise DatabaseBusyError(
                    f"{db} is in use by another process ({'a writer' if read_only else 'an ingest or an open notebook'}); "
                    f"close it or {retry}. DuckDB said: {_first_line(e)}"
                ) from None
            time.sleep(0.2)
        except duckdb.Error as e:
            raise StoreError(describe_fault(db, e)) from None


def schema_signature() -> str:
    return hashlib.sha256("\n".join(ddl() + EXTRA_DDL).encode()).hexdigest()[:16]


def code_signature() -> str:
    """Hash of the sources the schema and the parser versions come from (every parser module,
    base.py, units.py, schema.py, manifest.py and the package version): while it is unchanged,
    the schema and parser versions recorded in ``meta`` hold, and an ingest with nothing to parse
    need not import (and compile the regular expressions of) every parser."""
    from . import __version__

    here = Path(__file__).parent
    files = sorted((here / "parsers").rglob("*.py")) + [here / n for n in ("units.py", "schema.py", "manifest.py")]
    h = hashlib.sha256(__version__.encode() + "\n".join(EXTRA_DDL).encode())
    for f in files:
        h.update(f.relative_to(here).as_posix().encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


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
                _fault("schema-drop")
        for stmt in ddl() + EXTRA_DDL:
            con.execute(stmt)
        con.executemany(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)", [("schema", schema_signature()), ("db_id", uuid.uuid4().hex)]
        )
        con.execute("COMMIT")
    except BaseException:
        _rollback(con)
        raise
    return True


def _parser_versions(con: duckdb.DuckDBPyConnection, code: str) -> dict[str, str]:
    """tool -> parser_version of the current code: from ``meta`` when the code is the one recorded
    there (ensure_schema ran first, so the schema is current), else computed and recorded."""
    meta = dict(con.execute("SELECT key, value FROM meta WHERE key IN ('code', 'versions')").fetchall())
    if meta.get("code") == code and meta.get("versions"):
        return json.loads(meta["versions"])
    versions = _current_parser_versions()
    con.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [("versions", json.dumps(versions)), ("code", code)])
    return versions


# ----------------------------------------------------------------------------- files


def _listing(targets: Iterable[Path | str], skipped: list[str] | None = None) -> Iterator[tuple[str, str, int, int]]:
    """(key, path, size, mtime_ns) of every file to ingest, sorted by relative path, with one scandir
    per folder and one stat per file. Hidden entries, manifest/README/.gitkeep and .md/.ipynb files
    are skipped; keys are made from the folder's key unless a symlink is involved (then resolved one
    by one, as ``key_for`` does). A symlink in a folder to a file outside that folder is not
    followed (said in ``skipped``): a folder's logs are the files in it. Only the four values are
    kept per file (100,000 stat results would hold ~100 MB)."""
    for t in targets:
        p = Path(t)
        if p.is_dir():
            top = key_for(p)
            prefix = "" if top == "." else top + "/"
            real_top = p.resolve()
            found: list = []
            _scan(p, "", found)
            found.sort(key=lambda f: f[0].replace("/", "\0"))  # part by part, as Path.rglob's sorted tuples
            for rel, path, size, mtime_ns, link in found:
                if link:
                    real = Path(path).resolve()
                    if not real.is_relative_to(real_top):
                        if skipped is not None:
                            skipped.append(
                                f"{_printable(path)}: a symlink to {_printable(str(real))}, outside "
                                f"{_printable(str(p))}: not followed (copy the file in instead)"
                            )
                        continue
                key = key_for(Path(path)) if link else _printable(prefix + rel)
                yield (path if key == path else key), path, size, mtime_ns  # one string when they agree
        elif p.exists():
            st = p.stat()
            yield key_for(p), str(p), st.st_size, st.st_mtime_ns
        else:
            raise FileNotFoundError(f"{p}: no such file or directory")


def _unique_listing(listing: Iterable[tuple[str, str, int, int]]) -> list[tuple[str, str, int, int]]:
    """Each file once: a folder listed twice, a file and its folder, a symlink to a listed file
    all give the same (canonical) key."""
    seen: set[str] = set()
    out = []
    for item in listing:
        if item[0] not in seen:
            seen.add(item[0])
            out.append(item)
    return out


def _scopes(targets: Iterable[Path | str]) -> list[str]:
    """Key prefixes of the listed folders: a stored file under one of them that is no longer
    there is gone (removed or renamed). "" stands for the project root (every relative key)."""
    out = []
    for t in targets:
        p = Path(t)
        if p.is_dir():
            k = key_for(p)
            out.append("" if k == "." else k.rstrip("/") + "/")
    return out


def _in_scope(key: str, scopes: list[str]) -> bool:
    return any(key.startswith(s) if s else not key.startswith("/") for s in scopes)


def _scan(folder: Path | str, rel: str, found: list) -> None:
    """Like Path.rglob: symlinked folders are not entered, symlinked files are kept. Hidden
    entries (and everything under them) and the skipped names are left out. Appends
    (relative path, path, size, mtime_ns, is a symlink). Iterative: any depth of folders."""
    todo = [(folder, rel)]
    while todo:
        folder, rel = todo.pop()
        with os.scandir(folder) as it:
            entries = list(it)
        for e in entries:
            name = e.name
            if name.startswith("."):
                continue
            try:
                is_dir = e.is_dir()
            except OSError:
                is_dir = False
            if is_dir:
                if not e.is_symlink():
                    todo.append((e.path, rel + name + "/"))
                continue
            try:
                if not e.is_file() or name in SKIP_NAMES or name.endswith((".md", ".ipynb")):
                    continue
                st = e.stat()
            except OSError:
                continue
            found.append((rel + name, e.path, st.st_size, st.st_mtime_ns, e.is_symlink()))


def _printable(text: str) -> str:
    """A path as valid UTF-8 text: the bytes of a name that is not UTF-8 (kept by Python as
    surrogates) become ``\\xNN``, so the file is still stored, under a distinct readable key."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def key_for(path: Path) -> str:
    """How a path is stored: resolved (symlinks followed), relative to the project root when
    inside it, as UTF-8 text (see _printable)."""
    ap = path.resolve()
    try:
        return _printable(ap.relative_to(paths.ROOT.resolve()).as_posix())
    except ValueError:
        return _printable(ap.as_posix())


# ----------------------------------------------------------------------------- parsing (worker side)


@dataclass
class Outcome:
    key: str
    path: str
    size: int
    mtime_ns: int
    sha256: str | None = None
    tool: str | None = None
    tool_version: str | None = None
    format: str | None = None
    parser_version: str | None = None
    warnings: list[str] = field(default_factory=list)
    columns: dict | None = None  # table -> its rows (dicts or Tuples), until parse_chunk takes them
    n_rows: int = 0
    error: dict | None = None
    table_rows: dict | None = None  # table -> how many rows this file has in its chunk's table
    rows: tuple | None = None  # (tables of its chunk, {table: (first row, rows)}): set by _parse_all


_TOOL_TABLES: dict | None = None
_VERSIONS: dict = {}  # parser module -> parser_version(module), fixed for the life of a process


def _tool_table_columns() -> dict[str, list[str]]:
    global _TOOL_TABLES
    if _TOOL_TABLES is None:
        _TOOL_TABLES = {name: [c.name for c in tab.columns] for name, (_tool, tab) in tool_tables().items()}
    return _TOOL_TABLES


def parse_one(job: tuple[str, str, int, int], data: bytes | None = None) -> Outcome:
    """Read (unless ``data`` holds the file's bytes already, as Spark's binaryFile gives them), hash and parse one
    file: its Outcome, with its rows by table, or its error."""
    key, path, size, mtime_ns = job
    out = Outcome(key, path, size, mtime_ns)
    if data is None:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as e:
            out.error = dict(kind="io", line=None, message=str(e), expected=None)
            return out
    out.sha256 = hashlib.sha256(data).hexdigest()
    try:
        parsed, mod = parse_bytes(data, path)
    except ParseError as e:
        out.error = dict(kind=e.kind, line=e.line, message=e.message, expected=e.expected)
        return out
    except Exception as e:  # a parser bug must not lose the other files
        out.error = dict(kind="parser-bug", line=None, message=f"{type(e).__name__}: {e}", expected=None)
        return out
    cols = _tool_table_columns()
    unknown = [t for t in parsed.tables if t not in cols]
    if unknown:
        out.error = dict(
            kind="parser-bug", line=None, message=f"parser produced unknown table {unknown[0]}", expected=None
        )
        return out
    out.tool, out.format, out.tool_version = parsed.tool, parsed.format, parsed.tool_version
    out.parser_version = _VERSIONS.get(mod) or _VERSIONS.setdefault(mod, parser_version(mod))
    out.warnings = list(parsed.warnings)
    out.columns = {t: rows for t, rows in parsed.tables.items() if rows}
    out.table_rows = {t: len(rows) for t, rows in out.columns.items()}
    out.n_rows = sum(out.table_rows.values())
    return out


_SHAPES: dict[tuple, bool] = {}


def _columns_of(table: str, parts: list[tuple[int, object]], names: list[str]) -> dict[str, list]:
    """Every column of ``table`` but file_id (None where a row has none), from the (seq, rows) of
    several files, rows kept in file order (the writer takes each file's rows as one
    range): rows are dicts or Tuples, each run of files of one shape transposed in one C-level pass.
    KeyError(sorted unknown names) when rows hold a column the table does not declare."""
    wanted = [c for c in names if c != "file_id"]
    out: dict[str, list] = {c: [] for c in wanted}
    runs: list[tuple[tuple | None, list]] = []  # (names of Tuples, or None for dicts; [(seq, rows)])
    for seq, rows in parts:
        shape = rows.names if isinstance(rows, Tuples) else None
        if runs and runs[-1][0] == shape:
            runs[-1][1].append((seq, rows))
        else:
            runs.append((shape, [(seq, rows)]))
    for shape, group in runs:
        data: list = []
        for _, rows in group:
            data.extend(rows.data if shape is not None else rows)
        for c, values in _transpose(table, shape, data, wanted).items():
            out[c].extend(values)
    return out


def _transpose(table: str, shape: tuple | None, data: list, wanted: list[str]) -> dict:
    """Columns (every one of ``wanted``) of tuples in the order ``shape``, or of dicts (shape None)."""
    n = len(data)
    if shape is not None:
        if (table, shape) not in _SHAPES:
            bad = set(shape) - set(wanted)
            if bad:
                raise KeyError(sorted(bad))
            _SHAPES[(table, shape)] = True
        got = dict(zip(shape, zip(*data)))
        return {c: got[c] if c in got else [None] * n for c in wanted}
    k = len(wanted)
    if k >= 2 and all(len(r) == k for r in data):
        try:  # every row has exactly every column (the usual case): one C-level pass per row
            return dict(zip(wanted, zip(*map(itemgetter(*wanted), data))))
        except KeyError:
            pass
    bad = set().union(*(r.keys() for r in data)) - set(wanted)
    if bad:
        raise KeyError(sorted(bad))
    return {c: [r.get(c) for r in data] for c in wanted}


def parse_chunk(
    jobs: list[tuple[str, str, int, int]], contents: list[bytes] | None = None
) -> tuple[list[Outcome], dict[str, pa.Table]]:
    """Parse several files (read from disk, or ``contents``: their bytes, in job order); their rows come back as
    one Arrow table per table (typed here, in the worker, so the writer only concatenates), each file's rows one
    range, in file order (the Outcomes' ``table_rows`` say how many). The Outcomes carry no rows."""
    enabled = gc.isenabled()
    gc.disable()  # many short-lived objects and no cycles: the collector would only rescan them
    try:
        outs = [parse_one(j, None if contents is None else contents[i]) for i, j in enumerate(jobs)]
        parts: dict[str, list] = {}
        for seq, out in enumerate(outs):
            for table, rows in (out.columns or {}).items():
                parts.setdefault(table, []).append((seq, rows))
            out.columns = None
        cols = _tool_table_columns()
        tabs = all_tables()
        built = {}
        for table, got in parts.items():
            try:
                built[table] = _arrow(tabs[table], _columns_of(table, got, cols[table]))
            except (KeyError, *_UNFIT):  # the files whose rows are wrong fail, the others go on
                for seq, rows in got:
                    try:
                        _arrow(tabs[table], _columns_of(table, [(seq, rows)], cols[table]))
                    except KeyError as e:  # a parser bug
                        outs[seq].error = dict(
                            kind="parser-bug",
                            line=None,
                            expected=None,
                            message=f"parser produced unknown columns {e.args[0]} for {table}",
                        )
                    except _UNFIT as e:  # a number the column's type cannot hold (past 64 bits)
                        outs[seq].error = _unfit_error(tabs[table], table, rows, e)
                if table not in built and not any(outs[seq].error for seq, _ in got):
                    raise  # pragma: no cover - fails as a whole but in no single file
        failed = {seq for seq, out in enumerate(outs) if out.error and out.table_rows}
        if failed:  # a file that failed in one table has no rows in any
            for seq in failed:
                outs[seq].table_rows = {}
            built = {
                table: _arrow(tabs[table], _columns_of(table, kept, cols[table]))
                for table, got in parts.items()
                if (kept := [(seq, rows) for seq, rows in got if seq not in failed])
            }
        return outs, built
    finally:
        if enabled:
            gc.enable()


_UNFIT = (OverflowError, pa.ArrowException, TypeError, ValueError)
_INT_BITS = {"BIGINT": 63, "INTEGER": 31}


def _unfit_error(tab, table: str, rows, e: BaseException) -> dict:
    """The error of a file one of whose values its column cannot hold, with the row's line."""
    records = [dict(zip(rows.names, r)) for r in rows.data] if isinstance(rows, Tuples) else rows
    types = {c.name: c.type for c in tab.columns}
    for r in records:
        for name, v in r.items():
            if isinstance(v, int) and not isinstance(v, bool):
                bits = _INT_BITS.get(types.get(name))
                too_big = v.bit_length() > bits if bits else abs(v) > 1.7e308
                if too_big:
                    digits = str(v) if len(str(v)) <= 30 else f"{str(v)[:12]}... ({len(str(v))} digits)"
                    return dict(
                        kind="invalid",
                        line=r.get("line_start"),
                        message=f"{table}.{name}: {digits} is out of range",
                        expected=f"a number that fits a {types.get(name)}",
                    )
    return dict(kind="parser-bug", line=None, expected=None, message=f"{table}: {type(e).__name__}: {e}")


def parse_chunk_ipc(jobs: list[tuple[str, str, int, int]]) -> tuple[list[Outcome], dict[str, bytes]]:
    """parse_chunk for a pool worker: each table as one Arrow IPC stream (a single bytes object
    crosses the pipe, several times cheaper than pickling the table's many small buffers)."""
    outs, tables = parse_chunk(jobs)
    encoded = {}
    for name, tbl in tables.items():
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, tbl.schema) as writer:
            writer.write_table(tbl)
        encoded[name] = sink.getvalue()
    return outs, encoded


def _arrow(tab, cols: dict[str, list]) -> pa.Table:
    """Columns of ``tab`` present in ``cols`` as an Arrow table of the SQL types."""
    names = [c for c in tab.columns if c.name in cols]
    return pa.Table.from_arrays(
        [_array(cols[c.name], c.type) for c in names], schema=pa.schema([(c.name, _ARROW[c.type]) for c in names])
    )


def _array(values: list, sql_type: str) -> pa.Array:
    typ = _ARROW[sql_type]
    if sql_type in ("BIGINT", "INTEGER", "DOUBLE"):
        try:  # exact ints (and ints or floats for DOUBLE) convert as they are
            return pa.array(values, type=typ)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError):
            cast = float if sql_type == "DOUBLE" else int
            values = [None if v is None else cast(v) for v in values]
    return pa.array(values, type=typ)


# ----------------------------------------------------------------------------- ingest


@dataclass
class Summary:
    ingested: int = 0
    replaced: int = 0
    skipped: int = 0
    failed: int = 0
    rows: int = 0
    bytes_read: int = 0
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)
    rebuilt_schema: bool = False
    duplicates: int = 0  # of the skipped: copies of a stored file (table duplicates)
    ignored: int = 0  # listed but matched by an ignore file (not read)
    ignore_files: list[str] = field(default_factory=list)
    removed: int = 0  # stored files gone from the listed folders: their rows deleted
    renamed: int = 0  # stored files found under another path (same SHA-256): rows kept, path changed
    warnings: list[str] = field(default_factory=list)  # manifest rows with no file, files with no row, ...
    parquet_error: str | None = None  # the Parquet export failed (the database is complete)

    def line(self) -> str:
        copies = f" ({self.duplicates} identical to another file)" if self.duplicates else ""
        moved = "".join(f", {n} {what}" for n, what in ((self.renamed, "renamed"), (self.removed, "removed")) if n)
        ign = f", ignored {self.ignored} ({', '.join(self.ignore_files)})" if self.ignored else ""
        return (
            f"ingested {self.ingested} (of which {self.replaced} replaced), skipped {self.skipped} unchanged"
            f"{copies}{moved}{ign}, failed {self.failed}; {self.rows} rows in {self.seconds:.2f} s"
        )


def _current_parser_versions() -> dict[str, str]:
    from .parsers import modules

    return {m.TOOL: parser_version(m) for m in modules()}


def parquet_dir_for(db: Path) -> Path:
    """Where a database's Parquet files go: data/parsed/ for the default database, else a folder
    ``<name>-parquet`` beside it (two databases never share, nor clobber, one set of files)."""
    db = Path(db)
    try:
        if db.resolve() == paths.DB.resolve():
            return paths.DB.parent
    except OSError:  # pragma: no cover
        pass
    return db.with_name(db.stem + "-parquet")


WARN_MAX = 20  # warnings of one kind listed in full; the others are counted


def ingest(
    targets: Iterable[Path | str] | None = None,
    *,
    db_path: Path | str | None = None,
    manifest_path: Path | str | None = None,
    parquet_dir: Path | str | None | bool = None,
    workers: int | None = None,
    batch_files: int = 5000,
    batch_rows: int = 100_000,
    wait: float = 0.0,
    progress: Callable[[int, int], None] | bool | None = None,
) -> Summary:
    """Ingest files and folders into the database (see the module docstring). ``parquet_dir``:
    None for the database's own folder (parquet_dir_for), False for none. A folder that is
    listed is mirrored: its stored files that are gone are removed (or renamed, by SHA-256).
    ``manifest_path`` None: the manifest.csv of the one folder listed, else data/raw/manifest.csv."""
    t0 = time.perf_counter()
    if workers is not None and workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    if batch_files < 1 or batch_rows < 1:
        raise ValueError(f"batch_files and batch_rows must be at least 1, got {batch_files}, {batch_rows}")
    if not (math.isfinite(wait) and wait >= 0):
        raise ValueError(f"wait must be a number of seconds >= 0, got {wait}")
    targets = list(targets) if targets else [paths.RAW]
    db = Path(db_path or paths.DB)
    manifest = load_manifest(Path(manifest_path) if manifest_path else _default_manifest(targets))
    summary = Summary()
    if manifest.missing:
        summary.warnings.append(f"no manifest at {manifest.path}: the files under {manifest.root} are unlabelled")
    outside: list[str] = []
    listing, ignored, summary.ignore_files = ignore.split(
        _unique_listing(_listing(targets, outside)), targets
    )  # .storagelabignore
    summary.ignored = len(ignored)
    summary.warnings += outside[:WARN_MAX] + (
        [f"{len(outside) - WARN_MAX} more symlinks not followed"] if len(outside) > WARN_MAX else []
    )
    scopes = _scopes(targets)

    con = connect(db, wait=wait, wait_option="--wait")
    gc_was_enabled = gc.isenabled()
    try:
        # DuckDB keeps written pages cached up to its limit (default 80 % of RAM): a large ingest would
        # hold the database in memory; pages past this limit are read back from the file if needed
        if INGEST_MEMORY_MB:
            con.execute(f"SET memory_limit = '{INGEST_MEMORY_MB}MB'")
        gc.disable()  # the batches are many small objects without cycles: a collector pass only rescans them
        if ignored:  # an ignored file's old failure is no longer listed
            con.execute("BEGIN")
            if con.execute(
                "DELETE FROM ingest_errors WHERE path IN (SELECT unnest(?::VARCHAR[]))", [[e[0] for e in ignored]]
            ).fetchone()[0]:
                _bump(con, ["ingest_errors"])
            con.execute("COMMIT")
        _ingest(con, db, listing, scopes, manifest, summary, parquet_dir, workers, batch_files, batch_rows, progress)
    except (duckdb.Error, OSError, RuntimeError) as e:
        if _interrupted(e):
            raise KeyboardInterrupt from None
        if isinstance(e, RuntimeError):
            raise
        raise StoreError(describe_fault(db, e, opening=False)) from e
    finally:
        try:
            con.close()
        except duckdb.Error:  # pragma: no cover - a connection a disk fault invalidated
            pass
        if gc_was_enabled:
            gc.enable()
    summary.seconds = time.perf_counter() - t0
    return summary


def _default_manifest(targets: list) -> Path:
    """data/raw/manifest.csv, or the manifest.csv in the one folder listed (logs kept outside
    data/raw/ are labelled by a manifest beside them)."""
    if len(targets) == 1 and Path(targets[0]).is_dir() and (Path(targets[0]) / "manifest.csv").is_file():
        return Path(targets[0]) / "manifest.csv"
    return paths.MANIFEST


def _ingest(
    con,
    db: Path,
    listing,
    scopes,
    manifest: Manifest,
    summary: Summary,
    parquet_dir,
    workers,
    batch_files,
    batch_rows,
    progress,
) -> None:
    code = code_signature()
    summary.rebuilt_schema = ensure_schema(con, code)
    _fault("schema-ready")
    versions = _parser_versions(con, code)
    known = {
        r[0]: r[1:]
        for r in con.execute(
            "SELECT path, sha256, size_bytes, mtime_ns, file_id, tool, parser_version FROM files"
        ).fetchall()
    }
    copies = {
        r[0]: r[1:]
        for r in con.execute("SELECT path, sha256, size_bytes, mtime_ns, same_as FROM duplicates").fetchall()
    }
    listed = {item[0] for item in listing}
    # stored files no longer in the listed folders: renamed (their bytes under a new path) or removed
    gone = {k: known.pop(k) for k in [k for k in known if k not in listed and _in_scope(k, scopes)]}
    gone_copies = [k for k in copies if k not in listed and _in_scope(k, scopes)]
    gone_sha = {v[0]: k for k, v in gone.items() if versions.get(v[4]) == v[5]}  # sha256 -> old path
    labels_of = _labels_by_key(manifest)

    jobs = []
    untouched_copies = []
    touched: list[tuple[int, int]] = []
    for key, path, size, mtime_ns in listing:
        old = known.get(key)
        if old and old[1] == size and old[2] == mtime_ns and versions.get(old[4]) == old[5]:
            summary.skipped += 1
            continue
        copy = None if old else copies.get(key)
        if copy and copy[1] == size and copy[2] == mtime_ns:
            untouched_copies.append((copy, (key, path, size, mtime_ns)))
            continue
        jobs.append((key, path, size, mtime_ns))
    rereading = {j[0] for j in jobs}  # stored files read again: judged by what they hold now
    if untouched_copies:  # skipped unread while the stored file they copy is there and untouched
        stored = {v[0] for v in known.values()}
        for copy, job in untouched_copies:
            if copy[0] in stored and copy[3] not in rereading:
                summary.skipped += 1
                summary.duplicates += 1
            else:
                jobs.append(job)
    shas = {v[0]: k for k, v in known.items() if k not in rereading} if jobs else {}  # (copies are not in known)

    bar = _progress(len(jobs), progress)
    next_id = (con.execute("SELECT coalesce(max(file_id), 0) FROM files").fetchone()[0] or 0) + 1
    batch: list[Outcome] = []
    batch_n = 0  # rows in the batch: a batch is written when it holds batch_files files or batch_rows rows
    seen_in_run: dict[str, str] = {}
    found: list[tuple] = []  # copies of stored files (path, sha256, size, mtime_ns, same_as)
    unique: list[str] = []  # paths listed as copies that now hold other bytes
    renames: list[tuple] = []  # (new path, size, mtime_ns, file_id, old path)
    outcomes = _parse_all(jobs, workers)
    try:
        for out in outcomes:
            bar(1)
            summary.bytes_read += out.size
            if out.error:
                summary.failed += 1
                summary.errors.append(_error_text(out))
                _record_error(con, out)
                continue
            old = known.get(out.key)
            current = versions.get(out.tool)
            if old and old[0] == out.sha256 and old[5] == current:
                touched.append((out.mtime_ns, old[3]))
                summary.skipped += 1
                seen_in_run.setdefault(out.sha256, out.key)
                continue
            if not old and out.sha256 in gone_sha and out.sha256 not in seen_in_run:
                was = gone_sha.pop(out.sha256)  # a stored file under a new name: keep its rows
                renames.append((out.key, out.size, out.mtime_ns, gone.pop(was)[3], was))
                seen_in_run[out.sha256] = out.key
                if out.key in copies:
                    unique.append(out.key)
                continue
            dup = shas.get(out.sha256) or seen_in_run.get(out.sha256)
            if dup and dup != out.key and not old:
                summary.skipped += 1
                summary.duplicates += 1
                found.append((out.key, out.sha256, out.size, out.mtime_ns, dup))
                continue
            seen_in_run[out.sha256] = out.key
            if out.key in copies:
                unique.append(out.key)  # a former copy, now different: stored, no longer a copy
            batch.append(out)
            batch_n += out.n_rows
            if len(batch) >= batch_files or batch_n >= batch_rows:
                next_id = _write_batch(con, batch, known, next_id, summary, labels_of)
                batch, batch_n = [], 0
        if batch:
            next_id = _write_batch(con, batch, known, next_id, summary, labels_of)
    finally:
        outcomes.close()  # a pool's workers end here, also on an error or Ctrl-C
    if touched:
        con.execute("BEGIN")
        view = "_ingest_touched"  # one statement over an Arrow table (executemany costs milliseconds a row)
        con.register(
            view,
            pa.table(
                {
                    "mtime_ns": pa.array([t[0] for t in touched], pa.int64()),
                    "file_id": pa.array([t[1] for t in touched], pa.int32()),
                }
            ),
        )
        try:
            con.execute(f'UPDATE files SET mtime_ns = t.mtime_ns FROM "{view}" t WHERE files.file_id = t.file_id')
        finally:
            _unregister(con, view)
        _bump(con, ["files"])
        con.execute("COMMIT")
    if renames:
        _rename(con, renames, labels_of)
        summary.renamed = len(renames)
    _fault("before-removals")
    if gone or gone_copies:
        summary.removed = _remove(con, gone, gone_copies)
    if found or unique:
        _record_copies(con, found, unique)
    _fault("before-labels")
    applied = hashlib.sha256(repr((key_for(manifest.root), sorted(manifest.rows.items()))).encode()).hexdigest()
    done = con.execute("SELECT value FROM meta WHERE key = 'labels'").fetchone()
    if not done or done[0] != applied:  # another manifest than the one last applied
        _apply_labels(con, manifest, applied)
    _errors_of_gone(con, listed, scopes)
    _manifest_warnings(manifest, summary, listing, listed, scopes, known, copies, gone_copies, renames)
    _copy_warnings(manifest, summary, labels_of, found, copies, gone_copies, unique)
    if parquet_dir is not False:
        out_dir = Path(parquet_dir) if parquet_dir else parquet_dir_for(db)
        try:
            export_parquet(con, out_dir)
        except (duckdb.Error, OSError) as e:
            if _interrupted(e):
                raise KeyboardInterrupt from None
            summary.parquet_error = (
                f"Parquet export to {out_dir} failed: {describe_fault(out_dir, e, opening=False)} "
                "(the database is complete; the next ingest rewrites the Parquet files)"
            )


def _labels_by_key(manifest: Manifest) -> dict[str, dict]:
    """Manifest rows by stored path (key_for form)."""
    prefix = key_for(manifest.root).rstrip("/") + "/"
    if prefix == "./":
        prefix = ""
    return {prefix + rel: labels for rel, labels in manifest.rows.items()}


def _manifest_warnings(
    manifest: Manifest, summary: Summary, listing, listed: set, scopes, known, copies, gone_copies, renames
) -> None:
    """Rows that match no file, and listed files with no row (under the manifest's folder)."""
    if manifest.missing:
        return
    prefix = key_for(manifest.root).rstrip("/") + "/"
    if prefix == "./":
        prefix = ""
    rows = _labels_by_key(manifest)
    where = manifest.path
    present = listed | known.keys() | (copies.keys() - set(gone_copies)) | {r[0] for r in renames}
    ghosts = [(manifest.lines.get(k[len(prefix) :], 0), k) for k in rows if k not in present and _in_scope(k, scopes)]
    for line, k in sorted(ghosts)[:WARN_MAX]:
        summary.warnings.append(
            f"{where}:{line}: {k[len(prefix) :]}: no such file under {manifest.root} "
            "(a typo, or a file that was moved or deleted?)"
        )
    if len(ghosts) > WARN_MAX:
        summary.warnings.append(f"{where}: {len(ghosts) - WARN_MAX} more rows match no file")
    unlabelled = [item[0] for item in listing if item[0].startswith(prefix) and item[0] not in rows]
    for k in unlabelled[:WARN_MAX]:
        summary.warnings.append(f"{k}: no row in {where} (stored without labels)")
    if len(unlabelled) > WARN_MAX:
        summary.warnings.append(f"{len(unlabelled) - WARN_MAX} more files have no row in {where}")


def _copy_warnings(
    manifest: Manifest, summary: Summary, labels_of: dict, found: list, copies: dict, gone_copies: list, unique: list
) -> None:
    """A copy (same bytes as a stored file) whose manifest row says something else than the stored
    file's: its rows are stored once, under the stored file's labels; say so."""
    pairs = {f[0]: f[4] for f in found}
    pairs.update((k, v[3]) for k, v in copies.items() if k not in pairs and k not in unique and k not in gone_copies)
    clashes = [
        (k, same) for k, same in sorted(pairs.items()) if labels_of.get(k) and labels_of.get(k) != labels_of.get(same)
    ]
    for k, same in clashes[:WARN_MAX]:
        summary.warnings.append(
            f"{k}: the same bytes as {same}, stored once under that path and its labels; "
            "its own manifest row is not applied (set duplicate_of, or remove the copy)"
        )
    if len(clashes) > WARN_MAX:
        summary.warnings.append(f"{len(clashes) - WARN_MAX} more copies have manifest rows that are not applied")


def _bump(con, tables: Iterable[str]) -> None:
    """Give these tables a new generation (in the caller's transaction): their Parquet stamps no
    longer match, so the next export rewrites them."""
    con.execute(
        "INSERT OR REPLACE INTO meta SELECT 'gen:' || t, ? FROM unnest(?::VARCHAR[]) u(t)",
        [uuid.uuid4().hex[:16], sorted(set(tables))],
    )  # one statement: executemany costs ~2 ms a row


def _rename(con, renames: list[tuple], labels_of: dict) -> None:
    """Stored files found under a new path (same bytes): path, size, mtime and labels change,
    the rows and file_id stay. One transaction (and one UPDATE: a renamed folder of 10,000 files
    is as quick as one file)."""
    cols = ["path", "size_bytes", "mtime_ns", *LABEL_COLUMNS]
    tab = {c.name: c for c in all_tables()["files"].columns}
    data = {
        "file_id": [r[3] for r in renames],
        "path": [r[0] for r in renames],
        "size_bytes": [r[1] for r in renames],
        "mtime_ns": [r[2] for r in renames],
    }
    for c in LABEL_COLUMNS:
        data[c] = [(labels_of.get(r[0]) or {}).get(c) for r in renames]
    table = pa.Table.from_arrays(
        [_array(data[c], tab[c].type) for c in ["file_id", *cols]],
        schema=pa.schema([(c, _ARROW[tab[c].type]) for c in ["file_id", *cols]]),
    )
    sets = ", ".join(f'"{c}" = r."{c}"' for c in cols)
    con.execute("BEGIN")
    con.register("_renames", table)
    try:
        con.execute(f'UPDATE files SET {sets} FROM "_renames" r WHERE files.file_id = r.file_id')
        con.execute("DELETE FROM ingest_errors WHERE path IN (SELECT unnest(?::VARCHAR[]))", [data["path"]])
        con.execute(
            "UPDATE duplicates SET same_as = r.new FROM (SELECT unnest(?::VARCHAR[]) AS old, "
            "unnest(?::VARCHAR[]) AS new) r WHERE duplicates.same_as = r.old",
            [[r[4] for r in renames], data["path"]],
        )
        _bump(con, ["files", "ingest_errors", "duplicates"])
        con.execute("COMMIT")
    except BaseException:
        _rollback(con)
        raise
    finally:
        _unregister(con, "_renames")


def _remove(con, gone: dict, gone_copies: list[str]) -> int:
    """Delete the stored files that are gone (their rows in every table) and the copies that are
    gone, in one transaction. Returns how many stored files were removed."""
    ids = [v[3] for v in gone.values()]
    tables = _tables_of({v[4] for v in gone.values()}) if gone else []
    con.execute("BEGIN")
    for name in tables + (["files"] if ids else []):
        con.execute(f'DELETE FROM "{name}" WHERE file_id IN (SELECT unnest(?::INTEGER[]))', [ids])
    # copies of a removed file, and copies that are gone themselves
    con.execute(
        "DELETE FROM duplicates WHERE path IN (SELECT unnest(?::VARCHAR[])) "
        "OR same_as IN (SELECT unnest(?::VARCHAR[]))",
        [gone_copies, list(gone)],
    )
    _bump(con, tables + ["files", "duplicates"])
    con.execute("COMMIT")
    return len(ids)


def _errors_of_gone(con, listed: set, scopes: list[str]) -> None:
    """Errors of files that are no longer in the listed folders are dropped."""
    if not scopes:
        return
    stale = [
        p
        for (p,) in con.execute("SELECT path FROM ingest_errors").fetchall()
        if p not in listed and _in_scope(p, scopes)
    ]
    if stale:
        con.execute("BEGIN")
        con.execute("DELETE FROM ingest_errors WHERE path IN (SELECT unnest(?::VARCHAR[]))", [stale])
        _bump(con, ["ingest_errors"])
        con.execute("COMMIT")


def _record_copies(con, found: list[tuple], unique: list[str]) -> None:
    now = datetime.now(UTC)
    con.execute("BEGIN")
    con.execute("DELETE FROM duplicates WHERE path IN (SELECT unnest(?::VARCHAR[]))", [[f[0] for f in found] + unique])
    if found:  # one statement over an Arrow table (executemany costs milliseconds a row)
        names = [c.name for c in all_tables()["duplicates"].columns]
        cols = [list(col) for col in zip(*found)] + [[now] * len(found)]
        types = {c.name: _ARROW[c.type] for c in all_tables()["duplicates"].columns}
        _register_insert(con, "duplicates", pa.table({n: pa.array(v, types[n]) for n, v in zip(names, cols)}))
    _bump(con, ["duplicates"])
    con.execute("COMMIT")


def _progress(total: int, progress) -> Callable[[int], None]:
    if callable(progress):
        done = [0]

        def step(n: int) -> None:
            done[0] += n
            progress(done[0], total)

        return step
    if progress is False or total < 20:
        return lambda n: None
    from tqdm import tqdm

    bar = tqdm(total=total, unit="file", file=sys.stderr, mininterval=0.5, leave=False)
    return bar.update


def _parse_all(jobs: list, workers: int | None) -> Iterator[Outcome]:
    """Outcomes in job order. Files are parsed in chunks (one task, one Arrow table per table);
    with a pool, at most a few chunks per worker are in flight, so memory stays bounded however
    many files there are and however slow the writer is. The workers die with this process
    (any signal, see procs.worker_init) and are ended when the generator is closed early."""
    n = workers if workers is not None else (os.cpu_count() or 1)
    pooled = n > 1 and len(jobs) >= 200
    size = max(8, min(128, len(jobs) // (8 * n))) if pooled else 32
    chunks = (jobs[i : i + size] for i in range(0, len(jobs), size))
    if not pooled:
        results: Iterable = map(parse_chunk, chunks)
        yield from _outcomes(results)
        return
    from concurrent.futures import ProcessPoolExecutor

    from .parsers import modules
    from .procs import worker_init

    modules()  # imported before the fork: the workers share them
    pool = ProcessPoolExecutor(max_workers=n, initializer=worker_init, initargs=(os.getpid(),))
    finished = False
    try:
        pending: deque = deque(pool.submit(parse_chunk_ipc, c) for c in islice(chunks, 3 * n))

        def results():
            while pending:
                done = pending.popleft().result()
                nxt = next(chunks, None)
                if nxt is not None:
                    pending.append(pool.submit(parse_chunk_ipc, nxt))
                yield done

        yield from _outcomes(results())
        finished = True
    finally:
        if finished:
            pool.shutdown(wait=True)
        else:  # stopped early (an error, Ctrl-C): the chunks in flight are not waited for
            for proc in list((getattr(pool, "_processes", None) or {}).values()):
                proc.terminate()
            pool.shutdown(wait=True, cancel_futures=True)


def _outcomes(results: Iterable[tuple[list[Outcome], dict]]) -> Iterator[Outcome]:
    for outs, tables in results:
        tables = {
            name: pa.ipc.open_stream(t).read_all() if isinstance(t, pa.Buffer) else t for name, t in tables.items()
        }
        at: dict[str, int] = {}  # a file's rows follow those of the files before it in the chunk
        for out in outs:
            spans = {}
            for table, n in (out.table_rows or {}).items():
                start = at.get(table, 0)
                spans[table] = (start, n)
                at[table] = start + n
            out.rows, out.table_rows = (tables, spans), None
        yield from outs


def _error_text(out: Outcome) -> str:
    e = out.error or {}
    where = _printable(out.path) + (f":{e['line']}" if e.get("line") else "")
    text = f"{where}: {e.get('kind')}: {e.get('message')}"
    if e.get("expected"):
        text += f" (expected {e['expected']})"
    return text


def _record_error(con, out: Outcome) -> None:
    e = out.error or {}
    con.execute("BEGIN")
    con.execute("DELETE FROM ingest_errors WHERE path = ?", [out.key])
    con.execute(
        "INSERT INTO ingest_errors VALUES (?, ?, ?, ?, ?, ?, ?)",
        [out.key, out.sha256, e.get("kind"), e.get("line"), e.get("message"), e.get("expected"), datetime.now(UTC)],
    )
    _bump(con, ["ingest_errors"])
    con.execute("COMMIT")


def _write_batch(
    con, batch: list[Outcome], known: dict, next_id: int, summary: Summary, labels_of: dict | None = None
) -> int:
    """One transaction for the batch: the files' old rows out, their rows, files rows and labels
    in. If it fails for one file's sake, each file is retried in its own transaction; a fault of
    the database or the disk stops the ingest (StoreError, from ingest)."""
    first = next_id
    try:
        con.execute("BEGIN")
        next_id = _insert(con, batch, known, next_id, labels_of)
        _fault("batch-rows")
        con.execute("COMMIT")
        _fault("batch-committed")
        _count(batch, known, summary)
        return next_id
    except Exception as e:
        _rollback(con)
        if _interrupted(e):
            raise KeyboardInterrupt from None
        if _environmental(e):
            raise
    next_id = first
    for out in batch:  # isolate the file that breaks the batch
        try:
            con.execute("BEGIN")
            next_id = _insert(con, [out], known, next_id, labels_of)
            con.execute("COMMIT")
            _count([out], known, summary)
        except Exception as e:  # pragma: no cover - needs a store bug to reach
            _rollback(con)
            if _interrupted(e):
                raise KeyboardInterrupt from None
            if _environmental(e):
                raise
            out.error = dict(kind="store", line=None, message=f"{type(e).__name__}: {e}", expected=None)
            summary.failed += 1
            summary.errors.append(_error_text(out))
            _record_error(con, out)
    return next_id


def _tables_of(tools: set) -> list[str]:
    """The tool tables of these tools (every tool table when one is unknown: a file recorded by a
    parser that no longer exists)."""
    tables = tool_tables()
    if not tools or not tools <= {tool for tool, _ in tables.values()}:
        return list(tables) if tools else []
    return [name for name, (tool, _) in tables.items() if tool in tools]


def _count(batch, known, summary):
    for out in batch:
        summary.ingested += 1
        summary.rows += out.n_rows
        if out.key in known:
            summary.replaced += 1


def _insert(con, batch: list[Outcome], known: dict, next_id: int, labels_of: dict | None = None) -> int:
    tabs = all_tables()
    old_ids = [known[o.key][3] for o in batch if o.key in known]
    changed = {"files", "ingest_errors"}
    if old_ids:
        for name in _tables_of({known[o.key][4] for o in batch if o.key in known}) + ["files"]:
            con.execute(f'DELETE FROM "{name}" WHERE file_id IN (SELECT unnest(?::INTEGER[]))', [old_ids])
            changed.add(name)
    con.execute("DELETE FROM ingest_errors WHERE path IN (SELECT unnest(?::VARCHAR[]))", [[o.key for o in batch]])

    now = datetime.now(UTC)
    n = len(batch)
    fids = list(range(next_id, next_id + n))
    next_id += n
    given = {
        "file_id": fids,
        "path": [o.key for o in batch],
        "sha256": [o.sha256 for o in batch],
        "size_bytes": [o.size for o in batch],
        "mtime_ns": [o.mtime_ns for o in batch],
        "tool": [o.tool for o in batch],
        "tool_version": [o.tool_version for o in batch],
        "format": [o.format for o in batch],
        "parser_version": [o.parser_version for o in batch],
        "ingested_at": [now] * n,
        "n_rows": [o.n_rows for o in batch],
        "warnings": ["\n".join(o.warnings) or None for o in batch],
    }
    if labels_of:  # the labels go in with the rows: a kill can never leave a stored file unlabelled
        labels = [labels_of.get(o.key) for o in batch]
        if any(labels):
            for c in LABEL_COLUMNS:
                given[c] = [lab.get(c) if lab else None for lab in labels]
    file_cols = {c.name: given.get(c.name) or [None] * n for c in tabs["files"].columns}
    chunks: dict[int, tuple[dict, list]] = {}  # id(chunk tables) -> (tables, [(file_id, spans)] in order)
    for out, fid in zip(batch, fids):
        if out.rows is not None:
            tables, spans = out.rows
            chunks.setdefault(id(tables), (tables, []))[1].append((fid, spans))
    _append(con, "files", tabs["files"], file_cols)
    # each file's rows are a contiguous range of its chunk's table: runs of neighbouring files are
    # sliced out (no copy) and the file_id column is built alongside, so files of a chunk that are
    # not in this batch (unchanged, copies, or in another batch) are simply not taken
    per_table: dict[str, list[pa.Table]] = {}
    for tables, files in chunks.values():
        for name, tbl in tables.items():
            pieces, ids = [], []
            start = end = None
            for fid, spans in files:
                span = spans.get(name)
                if not span:
                    continue
                first, n = span
                ids.extend([fid] * n)
                if first == end:
                    end += n
                else:
                    if start is not None:
                        pieces.append(tbl.slice(start, end - start))
                    start, end = first, first + n
            if start is None:
                continue
            pieces.append(tbl.slice(start, end - start))
            part = pieces[0] if len(pieces) == 1 else pa.concat_tables(pieces)
            file_id = pa.array(ids, type=pa.int32())
            per_table.setdefault(name, []).append(
                pa.Table.from_arrays(
                    [file_id if c.name == "file_id" else part.column(c.name) for c in tabs[name].columns],
                    schema=pa.schema([(c.name, _ARROW[c.type]) for c in tabs[name].columns]),
                )
            )
    for name, parts in per_table.items():
        _register_insert(con, name, pa.concat_tables(parts))
    _bump(con, changed | per_table.keys())
    for out in batch:
        out.columns = out.rows = None  # free memory early
    return next_id


def _append(con, name: str, tab, cols: dict[str, list]) -> None:
    if not cols or not next(iter(cols.values())):
        return
    schema = pa.schema([(c.name, _ARROW[c.type]) for c in tab.columns])
    arrays = [_array(cols[c.name], c.type) for c in tab.columns]
    _register_insert(con, name, pa.Table.from_arrays(arrays, schema=schema))


def _register_insert(con, name: str, tbl: pa.Table) -> None:
    view = f"_ingest_{name}"
    con.register(view, tbl)
    try:
        con.execute(f'INSERT INTO "{name}" SELECT * FROM "{view}"')
    finally:
        _unregister(con, view)


def _unregister(con, view: str) -> None:
    """Drop a registered view; in a transaction that has failed (an interrupted INSERT) this fails
    too, and the first error is the one that matters."""
    try:
        con.unregister(view)
    except duckdb.Error:
        pass


def _apply_labels(con, manifest: Manifest, applied: str | None = None) -> bool:
    """Labels come from the manifest every time, so editing the manifest needs no re-parse.

    Files under the manifest's folder get its labels (NULL when not listed); only rows whose
    labels differ are written, in one transaction with ``applied`` (the manifest's hash) recorded
    as ``meta.labels``. Returns whether any row changed."""
    prefix = key_for(manifest.root).rstrip("/") + "/"
    rows = _labels_by_key(manifest)
    cols = LABEL_COLUMNS
    types = {c.name: c.type for c in all_tables()["files"].columns}
    data = {"path": list(rows)}
    for c in cols:
        data[c] = [r.get(c) for r in rows.values()]
    schema = pa.schema([("path", pa.string())] + [(c, _ARROW[types[c]]) for c in cols])
    sets = ", ".join(f'"{c}" = m."{c}"' for c in cols)
    differs = " OR ".join(f'files."{c}" IS DISTINCT FROM m."{c}"' for c in cols)
    wanted = ", ".join(f'l."{c}"' for c in cols)
    con.execute("BEGIN")
    con.register("_manifest", pa.Table.from_pydict(data, schema=schema))
    try:
        n = con.execute(
            f"UPDATE files SET {sets} FROM (SELECT f.file_id, {wanted} FROM files f "
            f'LEFT JOIN "_manifest" l ON f.path = l.path WHERE {"true" if prefix == "./" else "starts_with(f.path, ?)"}) m '
            f"WHERE files.file_id = m.file_id AND ({differs})",
            [] if prefix == "./" else [prefix],
        ).fetchone()
        changed = bool(n and n[0])
        if changed:
            _bump(con, ["files"])
        if applied:
            con.execute("INSERT OR REPLACE INTO meta VALUES ('labels', ?)", [applied])
        con.execute("COMMIT")
    except BaseException:
        _rollback(con)
        raise
    finally:
        _unregister(con, "_manifest")
    return changed


def _table_stamps(con) -> dict[str, str]:
    """table -> its stamp: database id, generation (meta ``gen:<table>``, changed by every
    transaction that writes the table) and row count."""
    meta = dict(con.execute("SELECT key, value FROM meta WHERE key = 'db_id' OR starts_with(key, 'gen:')").fetchall())
    names = list(all_tables())
    counts = dict(con.execute(" UNION ALL ".join(f"SELECT '{n}', count(*) FROM \"{n}\"" for n in names)).fetchall())
    return {n: f"{meta.get('db_id')}:{meta.get('gen:' + n, '0')}:{counts[n]}" for n in names}


def export_parquet(con, out_dir: Path) -> list[Path]:
    """Bring ``out_dir/<table>.parquet`` up to date with the database: every table whose export is
    missing or stamped otherwise than the table now is (see _table_stamps) is written to a
    temporary file and renamed over the old one, then its stamp is recorded in ``out_dir/STAMP``.
    A kill or a full disk leaves the old file and the old stamp: the next run writes it again."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp_file = out_dir / STAMP
    try:
        stamps = json.loads(stamp_file.read_text())
        if not isinstance(stamps, dict):
            stamps = {}
    except (OSError, ValueError):
        stamps = {}
    written = []
    current = _table_stamps(con)
    for name in [n for n in stamps if n not in current]:  # a table the schema no longer has
        (out_dir / f"{name}.parquet").unlink(missing_ok=True)
        del stamps[name]
    for name, want in current.items():
        dest = out_dir / f"{name}.parquet"
        if stamps.get(name) == want and dest.exists():
            continue
        tmp = out_dir / f".{name}.parquet.{os.getpid()}.tmp"
        target = tmp.as_posix().replace("'", "''")  # COPY takes no bound parameter for its target
        try:
            con.execute(f"COPY (SELECT * FROM \"{name}\") TO '{target}' (FORMAT PARQUET)")
            _fault("parquet-copied")
            os.replace(tmp, dest)
        finally:
            if tmp.exists():
                tmp.unlink()
        _fault("parquet-renamed")
        stamps[name] = want
        tmp_stamp = stamp_file.with_name(f"{STAMP}.{os.getpid()}.tmp")
        tmp_stamp.write_text(json.dumps(stamps, indent=0, sort_keys=True))
        os.replace(tmp_stamp, stamp_file)
        written.append(dest)
    return written

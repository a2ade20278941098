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
5. record failures in ``ingest_errors`` (they never stop the others), apply the manifest's
   labels, and export the tables that changed to ``data/parsed/<table>.parquet``.

Where the time goes, and what was tried: benchmarks/results/ingest.md (``./run bench``).
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from itertools import islice
from operator import itemgetter
from pathlib import Path

import duckdb
import pyarrow as pa

from . import ignore, paths
from .errors import DatabaseBusyError, ParseError
from .manifest import LABEL_COLUMNS, Manifest
from .manifest import load as load_manifest
from .parsers import parse_bytes, parser_version
from .parsers.base import Tuples
from .schema import all_tables, ddl, tool_tables

INGEST_MEMORY_MB = 256
SKIP_NAMES = {"manifest.csv", "README", "README.md", "README.txt", ".gitkeep"}
_ARROW = {
    "VARCHAR": pa.string(), "BIGINT": pa.int64(), "INTEGER": pa.int32(), "DOUBLE": pa.float64(),
    "BOOLEAN": pa.bool_(), "TIMESTAMPTZ": pa.timestamp("us", tz="UTC"), "TIMESTAMP": pa.timestamp("us"),
}


# ----------------------------------------------------------------------------- connection

def connect(db_path: Path | str | None = None, *, read_only: bool = False, wait: float = 0.0) -> duckdb.DuckDBPyConnection:
    """Open the database. Another process holding it gives DatabaseBusyError (after waiting up to ``wait`` s)."""
    db = Path(db_path or paths.DB)
    if read_only and not db.exists():
        raise FileNotFoundError(f"{db} does not exist: run `storagelab ingest` (or ./run build) first")
    if not read_only:
        db.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + wait
    while True:
        try:
            return duckdb.connect(str(db), read_only=read_only)
        except duckdb.IOException as e:
            if "lock" not in str(e).lower():
                raise
            if time.monotonic() >= deadline:
                raise DatabaseBusyError(
                    f"{db} is in use by another process ({'a writer' if read_only else 'an ingest or an open notebook'}); "
                    f"close it or retry with --wait SECONDS. DuckDB said: {str(e).splitlines()[0]}"
                ) from None
            time.sleep(0.2)


def schema_signature() -> str:
    return hashlib.sha256("\n".join(ddl()).encode()).hexdigest()[:16]


def code_signature() -> str:
    """Hash of the sources the schema and the parser versions come from (every parser module,
    base.py, units.py, schema.py, manifest.py and the package version): while it is unchanged,
    the schema and parser versions recorded in ``meta`` hold, and an ingest with nothing to parse
    need not import (and compile the regular expressions of) every parser."""
    from . import __version__

    here = Path(__file__).parent
    files = sorted((here / "parsers").rglob("*.py")) + [here / n for n in ("units.py", "schema.py", "manifest.py")]
    h = hashlib.sha256(__version__.encode())
    for f in files:
        h.update(f.relative_to(here).as_posix().encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


def ensure_schema(con: duckdb.DuckDBPyConnection, code: str | None = None) -> bool:
    """Create the tables; if the code's schema changed since the database was built, rebuild it empty.

    Returns True when the database was (re)created. data/parsed/ is disposable by design:
    everything in it is rebuilt from data/raw/. With ``code`` (``code_signature()``) equal to the
    one recorded when the schema was last checked, the check is skipped.
    """
    have = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'meta'").fetchone()[0]
    if have:
        meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
        if code is not None and meta.get("code") == code and meta.get("schema"):
            return False
        if meta.get("schema") == schema_signature():
            return False
        for (name,) in con.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'").fetchall():
            con.execute(f'DROP TABLE IF EXISTS "{name}"')
    for stmt in ddl():
        con.execute(stmt)
    con.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", [schema_signature()])
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

def _listing(targets: Iterable[Path | str]) -> Iterator[tuple[str, str, int, int]]:
    """(key, path, size, mtime_ns) of every file to ingest, sorted by relative path, with one scandir
    per folder and one stat per file. Hidden entries, manifest/README/.gitkeep and .md/.ipynb files
    are skipped; keys are made from the folder's key unless a symlink is involved (then resolved one
    by one, as ``key_for`` does). Only the four values are kept per file (100,000 stat results
    would hold ~100 MB)."""
    for t in targets:
        p = Path(t)
        if p.is_dir():
            top = key_for(p)
            prefix = "" if top == "." else top + "/"
            found: list = []
            _scan(p, "", found)
            found.sort(key=lambda f: f[0].replace("/", "\0"))  # part by part, as Path.rglob's sorted tuples
            for rel, path, size, mtime_ns, link in found:
                key = key_for(Path(path)) if link else prefix + rel
                yield (path if key == path else key), path, size, mtime_ns  # one string when they agree
        elif p.exists():
            st = p.stat()
            yield key_for(p), str(p), st.st_size, st.st_mtime_ns
        else:
            raise FileNotFoundError(f"{p}: no such file or directory")


def _scan(folder: Path | str, rel: str, found: list) -> None:
    """Like Path.rglob: symlinked folders are not entered, symlinked files are kept. Hidden
    entries (and everything under them) and the skipped names are left out. Appends
    (relative path, path, size, mtime_ns, is a symlink)."""
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
                _scan(e.path, rel + name + "/", found)
            continue
        try:
            if not e.is_file() or name in SKIP_NAMES or name.endswith((".md", ".ipynb")):
                continue
            st = e.stat()
        except OSError:
            continue
        found.append((rel + name, e.path, st.st_size, st.st_mtime_ns, e.is_symlink()))


def key_for(path: Path) -> str:
    """How a path is stored: relative to the project root when inside it."""
    ap = path.resolve()
    try:
        return ap.relative_to(paths.ROOT.resolve()).as_posix()
    except ValueError:
        return ap.as_posix()


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


def parse_one(job: tuple[str, str, int, int]) -> Outcome:
    key, path, size, mtime_ns = job
    out = Outcome(key, path, size, mtime_ns)
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
        out.error = dict(kind="parser-bug", line=None, message=f"parser produced unknown table {unknown[0]}",
                         expected=None)
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


def parse_chunk(jobs: list[tuple[str, str, int, int]]) -> tuple[list[Outcome], dict[str, pa.Table]]:
    """Parse several files; their rows come back as one Arrow table per table (typed here, in the
    worker, so the writer only concatenates), each file's rows one range, in file order (the
    Outcomes' ``table_rows`` say how many). The Outcomes carry no rows (``columns`` is None)."""
    enabled = gc.isenabled()
    gc.disable()  # many short-lived objects and no cycles: the collector would only rescan them
    try:
        outs = [parse_one(j) for j in jobs]
        parts: dict[str, list] = {}
        for seq, out in enumerate(outs):
            for table, rows in (out.columns or {}).items():
                parts.setdefault(table, []).append((seq, rows))
            out.columns = None
        cols = _tool_table_columns()
        built = {}
        for table, got in parts.items():
            try:
                built[table] = _columns_of(table, got, cols[table])
            except KeyError:  # a parser bug: the files whose rows are wrong fail, the others go on
                for seq, rows in got:
                    try:
                        _columns_of(table, [(seq, rows)], cols[table])
                    except KeyError as e:
                        outs[seq].error = dict(kind="parser-bug", line=None, expected=None,
                                               message=f"parser produced unknown columns {e.args[0]} for {table}")
        failed = {seq for seq, out in enumerate(outs) if out.error and out.table_rows}
        if failed:  # a file that failed in one table has no rows in any
            for seq in failed:
                outs[seq].table_rows = {}
            built = {table: _columns_of(table, kept, cols[table]) for table, got in parts.items()
                     if (kept := [(seq, rows) for seq, rows in got if seq not in failed])}
        tabs = all_tables()
        return outs, {table: _arrow(tabs[table], columns) for table, columns in built.items()}
    finally:
        if enabled:
            gc.enable()


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
    return pa.Table.from_arrays([_array(cols[c.name], c.type) for c in names],
                                schema=pa.schema([(c.name, _ARROW[c.type]) for c in names]))


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

    def line(self) -> str:
        copies = f" ({self.duplicates} identical to another file)" if self.duplicates else ""
        ign = f", ignored {self.ignored} ({', '.join(self.ignore_files)})" if self.ignored else ""
        return (f"ingested {self.ingested} (of which {self.replaced} replaced), skipped {self.skipped} unchanged"
                f"{copies}{ign}, failed {self.failed}; {self.rows} rows in {self.seconds:.2f} s")


def _current_parser_versions() -> dict[str, str]:
    from .parsers import modules
    return {m.TOOL: parser_version(m) for m in modules()}


def ingest(targets: Iterable[Path | str] | None = None, *, db_path: Path | str | None = None,
           manifest_path: Path | str | None = None, parquet_dir: Path | str | None = None,
           workers: int | None = None, batch_files: int = 5000, batch_rows: int = 100_000, wait: float = 0.0,
           progress: Callable[[int, int], None] | bool | None = None) -> Summary:
    t0 = time.perf_counter()
    targets = list(targets) if targets else [paths.RAW]
    db = Path(db_path or paths.DB)
    manifest = load_manifest(Path(manifest_path) if manifest_path else paths.MANIFEST)
    summary = Summary()
    listing, ignored, summary.ignore_files = ignore.split(_listing(targets), targets)  # .storagelabignore
    summary.ignored = len(ignored)

    con = connect(db, wait=wait)
    # DuckDB keeps written pages cached up to its limit (default 80 % of RAM): a large ingest would
    # hold the database in memory; pages past this limit are read back from the file if needed
    if INGEST_MEMORY_MB:
        con.execute(f"SET memory_limit = '{INGEST_MEMORY_MB}MB'")
    gc_was_enabled = gc.isenabled()
    gc.disable()  # the batches are many small objects without cycles: a collector pass only rescans them
    try:
        code = code_signature()
        summary.rebuilt_schema = ensure_schema(con, code)
        versions = _parser_versions(con, code)
        known = {r[0]: r[1:] for r in con.execute(
            "SELECT path, sha256, size_bytes, mtime_ns, file_id, tool, parser_version FROM files").fetchall()}

        copies = {r[0]: r[1:] for r in con.execute(
            "SELECT path, sha256, size_bytes, mtime_ns, same_as FROM duplicates").fetchall()}

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
        del listing
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
        written: set[str] = set()  # tables whose rows changed (their Parquet files are rewritten)
        if ignored and con.execute("DELETE FROM ingest_errors WHERE path IN (SELECT unnest(?::VARCHAR[]))",
                                   [[e[0] for e in ignored]]).fetchone()[0]:
            written.add("ingest_errors")  # an ignored file's old failure is no longer listed
        for out in _parse_all(jobs, workers):
            bar(1)
            summary.bytes_read += out.size
            if out.error:
                summary.failed += 1
                summary.errors.append(_error_text(out))
                _record_error(con, out)
                written.add("ingest_errors")
                continue
            old = known.get(out.key)
            current = versions.get(out.tool)
            if old and old[0] == out.sha256 and old[5] == current:
                touched.append((out.mtime_ns, old[3]))
                summary.skipped += 1
                seen_in_run.setdefault(out.sha256, out.key)
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
                next_id = _write_batch(con, batch, known, next_id, summary, written)
                batch, batch_n = [], 0
        if batch:
            next_id = _write_batch(con, batch, known, next_id, summary, written)
        if touched:
            con.executemany("UPDATE files SET mtime_ns = ? WHERE file_id = ?", touched)
            written.add("files")
        if found or unique:
            _record_copies(con, found, unique)
            written.add("duplicates")
        labels = hashlib.sha256(repr((key_for(manifest.root), sorted(manifest.rows.items()))).encode()).hexdigest()
        done = con.execute("SELECT value FROM meta WHERE key = 'labels'").fetchone()
        if written or touched or not done or done[0] != labels:  # new rows, or another manifest
            if _apply_labels(con, manifest):
                written.add("files")
            con.execute("INSERT OR REPLACE INTO meta VALUES ('labels', ?)", [labels])
        if parquet_dir is not False:
            export_parquet(con, Path(parquet_dir) if parquet_dir else db.parent,
                           only_if_missing=not summary.rebuilt_schema, tables=written)
    finally:
        con.close()
        if gc_was_enabled:
            gc.enable()
    summary.seconds = time.perf_counter() - t0
    return summary


def _record_copies(con, found: list[tuple], unique: list[str]) -> None:
    now = datetime.now(timezone.utc)
    con.execute("BEGIN")
    con.execute("DELETE FROM duplicates WHERE path IN (SELECT unnest(?::VARCHAR[]))",
                [[f[0] for f in found] + unique])
    if found:
        con.executemany("INSERT INTO duplicates VALUES (?, ?, ?, ?, ?, ?)", [(*f, now) for f in found])
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
    many files there are and however slow the writer is."""
    n = workers if workers is not None else (os.cpu_count() or 1)
    pooled = n > 1 and len(jobs) >= 200
    size = max(8, min(128, len(jobs) // (8 * n))) if pooled else 32
    chunks = (jobs[i:i + size] for i in range(0, len(jobs), size))
    if not pooled:
        results: Iterable = map(parse_chunk, chunks)
        yield from _outcomes(results)
        return
    from concurrent.futures import ProcessPoolExecutor

    from .parsers import modules
    modules()  # imported before the fork: the workers share them
    with ProcessPoolExecutor(max_workers=n) as pool:
        pending: deque = deque(pool.submit(parse_chunk_ipc, c) for c in islice(chunks, 3 * n))

        def results():
            while pending:
                done = pending.popleft().result()
                nxt = next(chunks, None)
                if nxt is not None:
                    pending.append(pool.submit(parse_chunk_ipc, nxt))
                yield done
        yield from _outcomes(results())


def _outcomes(results: Iterable[tuple[list[Outcome], dict]]) -> Iterator[Outcome]:
    for outs, tables in results:
        tables = {name: pa.ipc.open_stream(t).read_all() if isinstance(t, pa.Buffer) else t
                  for name, t in tables.items()}
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
    where = out.path + (f":{e['line']}" if e.get("line") else "")
    text = f"{where}: {e.get('kind')}: {e.get('message')}"
    if e.get("expected"):
        text += f" (expected {e['expected']})"
    return text


def _record_error(con, out: Outcome) -> None:
    e = out.error or {}
    con.execute("BEGIN")
    con.execute("DELETE FROM ingest_errors WHERE path = ?", [out.key])
    con.execute("INSERT INTO ingest_errors VALUES (?, ?, ?, ?, ?, ?, ?)",
                [out.key, out.sha256, e.get("kind"), e.get("line"), e.get("message"), e.get("expected"),
                 datetime.now(timezone.utc)])
    con.execute("COMMIT")


def _write_batch(con, batch: list[Outcome], known: dict, next_id: int, summary: Summary,
                 written: set[str] | None = None) -> int:
    first = next_id
    if written is not None:
        written.update(("files", "ingest_errors"))
        written.update(t for out in batch if out.rows for t in out.rows[0])
        # replaced files: their old rows go from the tables of the tool that wrote them
        written.update(_tables_of({known[o.key][4] for o in batch if o.key in known}))
    try:
        con.execute("BEGIN")
        next_id = _insert(con, batch, known, next_id)
        con.execute("COMMIT")
        _count(batch, known, summary)
        return next_id
    except Exception:
        con.execute("ROLLBACK")
    next_id = first
    for out in batch:  # isolate the file that breaks the batch
        try:
            con.execute("BEGIN")
            next_id = _insert(con, [out], known, next_id)
            con.execute("COMMIT")
            _count([out], known, summary)
        except Exception as e:  # pragma: no cover - needs a store bug to reach
            con.execute("ROLLBACK")
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


def _insert(con, batch: list[Outcome], known: dict, next_id: int) -> int:
    tabs = all_tables()
    old_ids = [known[o.key][3] for o in batch if o.key in known]
    if old_ids:
        for name in _tables_of({known[o.key][4] for o in batch if o.key in known}) + ["files"]:
            con.execute(f'DELETE FROM "{name}" WHERE file_id IN (SELECT unnest(?::INTEGER[]))', [old_ids])
    con.execute("DELETE FROM ingest_errors WHERE path IN (SELECT unnest(?::VARCHAR[]))", [[o.key for o in batch]])

    now = datetime.now(timezone.utc)
    n = len(batch)
    fids = list(range(next_id, next_id + n))
    next_id += n
    given = {
        "file_id": fids, "path": [o.key for o in batch], "sha256": [o.sha256 for o in batch],
        "size_bytes": [o.size for o in batch], "mtime_ns": [o.mtime_ns for o in batch],
        "tool": [o.tool for o in batch], "tool_version": [o.tool_version for o in batch],
        "format": [o.format for o in batch], "parser_version": [o.parser_version for o in batch],
        "ingested_at": [now] * n, "n_rows": [o.n_rows for o in batch],
        "warnings": ["\n".join(o.warnings) or None for o in batch],
    }
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
            per_table.setdefault(name, []).append(pa.Table.from_arrays(
                [file_id if c.name == "file_id" else part.column(c.name) for c in tabs[name].columns],
                schema=pa.schema([(c.name, _ARROW[c.type]) for c in tabs[name].columns])))
    for name, parts in per_table.items():
        _register_insert(con, name, pa.concat_tables(parts))
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
        con.unregister(view)


def _apply_labels(con, manifest: Manifest) -> bool:
    """Labels come from the manifest every time, so editing the manifest needs no re-parse.

    Files under the manifest's folder get its labels (NULL when not listed); only rows whose
    labels differ are written. Returns whether any row changed."""
    prefix = key_for(manifest.root).rstrip("/") + "/"
    rows = {prefix + rel: labels for rel, labels in manifest.rows.items()}
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
            f'UPDATE files SET {sets} FROM (SELECT f.file_id, {wanted} FROM files f '
            f'LEFT JOIN "_manifest" l ON f.path = l.path WHERE starts_with(f.path, ?)) m '
            f'WHERE files.file_id = m.file_id AND ({differs})', [prefix]).fetchone()
        con.execute("COMMIT")
    finally:
        con.unregister("_manifest")
    return bool(n and n[0])


def export_parquet(con, out_dir: Path, *, only_if_missing: bool = False,
                   tables: Iterable[str] = ()) -> list[Path]:
    """Write every table to ``out_dir/<table>.parquet`` (atomically: temp file, then rename);
    with ``only_if_missing``, only the missing files and those of ``tables``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    tables = set(tables)
    for name in all_tables():
        dest = out_dir / f"{name}.parquet"
        if only_if_missing and name not in tables and dest.exists():
            continue
        tmp = dest.with_suffix(".parquet.tmp")
        target = tmp.as_posix().replace("'", "''")  # COPY takes no bound parameter for its target
        con.execute(f"COPY (SELECT * FROM \"{name}\") TO '{target}' (FORMAT PARQUET)")
        os.replace(tmp, dest)
        written.append(dest)
    return written

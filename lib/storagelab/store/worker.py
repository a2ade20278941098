"""Reading, hashing and parsing files, away from the database.

Files are parsed in chunks: a chunk's rows come back as one Arrow table per table (typed in the
worker, so the writer only slices and concatenates), each file's rows one contiguous range in file
order. On large sets a process pool parses the chunks (each table crosses the pipe as one Arrow IPC
stream); parsing is pure and never touches the database. All the speed machinery of the ingest is
here: chunking, the pool, Arrow and IPC, and the garbage collector paused while rows are built."""

from __future__ import annotations

import gc
import hashlib
import os
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from itertools import islice
from types import ModuleType
from typing import NamedTuple

import pyarrow as pa

from ..errors import ParseError
from ..ingest_open import open_input
from ..parsers import modules, parse_bytes, parser_version
from ..parsers.base import Parsed
from ..pool_deaths import NO_THREAD, kill, pool_result, stopped_at_the_end, thread_end, worker_died
from ..schema import all_tables, tool_tables
from . import arrow
from .listing import ListedFile, led_elsewhere, printable, stamp_of_read
from .workerio import Relay, relayed_worker_init

POOL_MIN_FILES = 200  # fewer files are parsed in this process: a pool's start-up costs more than it saves
CHUNK_FILES_MIN, CHUNK_FILES_MAX = 8, 128  # files per chunk (one pool task) ...
CHUNKS_PER_WORKER = 8  # ... aiming at this many chunks per worker, so the workers finish together
CHUNK_FILES_SERIAL = 32  # files per chunk without a pool
IN_FLIGHT_PER_WORKER = 8  # chunks submitted ahead per worker: bounded memory however slow the writer is, and enough
# (130-260 ms of parsing) that the workers still have work while this process writes a batch (100-150 ms): with 3, the
# two workers sat idle 1.1-1.9 s of a 9,800-file ingest waiting for chunks (at load 10; 0-0.1 s with 8)


class RowsInChunk(NamedTuple):
    """Where a parsed file's rows are: its chunk's Arrow tables, and per table (first row, row count)."""

    tables: dict[str, pa.Table]
    spans: dict[str, tuple[int, int]]


@dataclass
class Outcome:
    """One file after parsing: what it is and where its rows are, or its error."""

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
    error: dict | None = None  # kind, line, message, expected
    table_rows: dict | None = None  # table -> how many rows this file has in its chunk's table
    rows: RowsInChunk | None = None  # set by parse_all
    ino: int = 0  # the listing's stamp (filestamps.py), kept with the rows stored
    ctime_ns: int = -1


_TOOL_TABLE_COLUMNS: dict | None = None
_VERSIONS: dict = {}  # parser module -> parser_version(module), fixed for the life of a process


def tool_table_columns() -> dict[str, list[str]]:
    global _TOOL_TABLE_COLUMNS
    if _TOOL_TABLE_COLUMNS is None:
        _TOOL_TABLE_COLUMNS = {name: [c.name for c in tab.columns] for name, (_tool, tab) in tool_tables().items()}
    return _TOOL_TABLE_COLUMNS


def version_of(mod) -> str:
    return _VERSIONS.get(mod) or _VERSIONS.setdefault(mod, parser_version(mod))


def parse_one(job: ListedFile, data: bytes | None = None) -> Outcome:
    """Read (unless ``data`` holds the file's bytes already, as Spark's binaryFile gives them), hash and parse one
    file: its Outcome, with its rows by table, or its error. ``job``: a ListedFile (or its values)."""
    job = ListedFile(*job)
    out = Outcome(*job[:4], ino=job.ino, ctime_ns=job.ctime_ns)
    if data is None:
        try:
            # listed as a file (or a link); another user may have put a FIFO or a link there since
            with open_input(job.path, last_link=job.link) as fh:
                if moved := led_elsewhere(job, opened := os.fstat(fh.fileno())):
                    raise moved
                out.ctime_ns = stamp_of_read(job, opened)  # another file at its name: no stamp
                data = fh.read(job.size + 1)  # reliability-17: a file grown since it was listed is not read whole
        except OSError as e:
            out.error = dict(kind="io", line=None, message=str(e), expected=None)
            return out
        if len(data) != job.size:  # its rows would not be those of the size stored (nor bounded by the listed size)
            now = "more" if len(data) > job.size else f"{len(data):,}"
            message = (
                f"the file changed while it was read ({job.size:,} bytes when listed, {now} now): not stored this "
                "time; the next ingest reads it again"
            )
            out.error = dict(kind="io", line=None, message=message, expected=None)
            return out
    out.sha256 = hashlib.sha256(data).hexdigest()
    try:
        parsed, mod = parse_bytes(data, job.path)
    except ParseError as e:
        out.error = dict(kind=e.kind, line=e.line, message=e.message, expected=e.expected)
        return out
    except Exception as e:  # a parser bug must not lose the other files
        out.error = dict(kind="parser-bug", line=None, message=f"{type(e).__name__}: {e}", expected=None)
        return out
    unknown = [t for t in parsed.tables if t not in tool_table_columns()]
    if unknown:
        out.error = dict(
            kind="parser-bug", line=None, message=f"parser produced unknown table {unknown[0]}", expected=None
        )
        return out
    out.tool, out.format, out.tool_version = parsed.tool, parsed.format, parsed.tool_version
    out.parser_version = version_of(mod)
    out.warnings = list(parsed.warnings)
    out.columns = {t: rows for t, rows in parsed.tables.items() if rows}
    out.table_rows = {t: len(rows) for t, rows in out.columns.items()}
    out.n_rows = sum(out.table_rows.values())
    return out


def typed_tables(row_sets: dict[str, list], on_error) -> dict[str, pa.Table]:
    """Arrow tables of several files' rows: ``row_sets`` maps a table to [(file's number, its rows)];
    a file whose rows do not fit (a column the table does not declare, a number past 64 bits) is
    reported as ``on_error(number, error)`` and the table is built without it."""
    cols = tool_table_columns()
    tabs = all_tables()
    built, failed = {}, set()
    for name, got in row_sets.items():
        try:
            built[name] = arrow.table(tabs[name], arrow.columns(name, [rows for _, rows in got], cols[name]))
            continue
        except (KeyError, arrow.RowShapeError, *arrow.UNFIT):  # the files whose rows are wrong fail, the others go on
            pass
        for seq, rows in got:
            try:
                arrow.table(tabs[name], arrow.columns(name, [rows], cols[name]))
            except arrow.RowShapeError as e:  # a parser bug
                failed.add(seq)
                on_error(seq, dict(kind="parser-bug", line=None, expected=None, message=str(e)))
            except KeyError as e:  # a parser bug
                failed.add(seq)
                message = f"parser produced unknown columns {e.args[0]} for {name}"
                on_error(seq, dict(kind="parser-bug", line=None, expected=None, message=message))
            except arrow.UNFIT as e:  # a number the column's type cannot hold
                failed.add(seq)
                on_error(seq, arrow.unfit_error(tabs[name], name, rows, e))
        if not failed.intersection(seq for seq, _ in got):
            raise RuntimeError(f"{name}: the rows fail together but in no single file")  # pragma: no cover
    if failed:  # a file that failed in one table has no rows in any
        built = {
            name: arrow.table(tabs[name], arrow.columns(name, kept, cols[name]))
            for name, got in row_sets.items()
            if (kept := [rows for seq, rows in got if seq not in failed])
        }
    return built


def parse_as_ingest(data: bytes, path: str) -> tuple[Parsed, ModuleType]:
    """``parse_bytes``, failing as ingest fails the file (reliability-32: ``storagelab parse`` printed a traceback
    for a parser bug, losing the files after it, and exit 0 for a number its column cannot hold): a parser bug,
    an unknown table, rows that do not fit their columns raise a ParseError with ingest's kind, line and words."""
    try:
        parsed, mod = parse_bytes(data, path)
    except ParseError:
        raise
    except Exception as e:  # a parser bug: one line, as ingest stores it
        raise ParseError(f"{type(e).__name__}: {e}", kind="parser-bug", path=path) from None
    unknown = [t for t in parsed.tables if t not in tool_table_columns()]
    errors: list[dict] = []
    if unknown:
        errors.append(
            dict(kind="parser-bug", line=None, expected=None, message=f"parser produced unknown table {unknown[0]}")
        )
    else:
        typed_tables({name: [(0, rows)] for name, rows in parsed.tables.items() if rows}, lambda _, e: errors.append(e))
    if errors:
        e = errors[0]
        raise ParseError(e["message"], line=e["line"], expected=e["expected"], kind=e["kind"], path=path)
    return parsed, mod


def parse_chunk(
    jobs: list[ListedFile], contents: list[bytes] | None = None
) -> tuple[list[Outcome], dict[str, pa.Table]]:
    """Parse several files (read from disk, or ``contents``: their bytes, in job order); their rows come back as
    one Arrow table per table, each file's rows one range, in file order (the Outcomes' ``table_rows`` say how
    many). The Outcomes carry no rows."""
    enabled = gc.isenabled()
    gc.disable()  # many short-lived objects and no cycles: the collector would only rescan them
    try:
        outs = [parse_one(j, None if contents is None else contents[i]) for i, j in enumerate(jobs)]
        row_sets: dict[str, list] = {}
        for seq, out in enumerate(outs):
            for name, rows in (out.columns or {}).items():
                row_sets.setdefault(name, []).append((seq, rows))
            out.columns = None

        def fail(seq: int, error: dict) -> None:
            outs[seq].error = error
            outs[seq].table_rows = {}

        return outs, typed_tables(row_sets, fail)
    finally:
        if enabled:
            gc.enable()


def parse_chunk_ipc(jobs: list[ListedFile]) -> tuple[list[Outcome], dict[str, bytes]]:
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


def parse_all(jobs: list[ListedFile], workers: int | None) -> Iterator[Outcome]:
    """Outcomes in job order, each with its ``rows``. With a pool, at most IN_FLIGHT_PER_WORKER
    chunks per worker are in flight, so memory stays bounded however many files there are and
    however slow the writer is. The workers die with this process (any signal, see
    procs.worker_init) and are ended when the generator is closed early."""
    n = workers if workers is not None else (os.cpu_count() or 1)
    pooled = n > 1 and len(jobs) >= POOL_MIN_FILES
    size = (
        max(CHUNK_FILES_MIN, min(CHUNK_FILES_MAX, len(jobs) // (CHUNKS_PER_WORKER * n)))
        if pooled
        else CHUNK_FILES_SERIAL
    )
    chunks = (jobs[i : i + size] for i in range(0, len(jobs), size))
    if not pooled:
        yield from _with_rows(map(parse_chunk, chunks))
        return
    modules()  # imported before the fork: the workers share them
    relay = Relay()  # the workers' stdout and stderr: never the command's (workerio)
    try:
        pool = ProcessPoolExecutor(max_workers=n, initializer=relayed_worker_init, initargs=(os.getpid(), relay.fd))
        with stopped_at_the_end(pool):  # closed early (an error, Ctrl-C): the chunks not started are cancelled
            pending: deque = deque(_submit(pool, c) for c in islice(chunks, IN_FLIGHT_PER_WORKER * n))

            def results():
                while pending:
                    done = _result(pool, pending.popleft())
                    nxt = next(chunks, None)
                    if nxt is not None:
                        pending.append(_submit(pool, nxt))
                    yield done

            yield from _with_rows(results())
    finally:
        relay.close()


def _submit(pool: ProcessPoolExecutor, chunk: list[ListedFile]) -> Future:
    """``pool.submit``; a thread the pool could not start (out of memory under ``ulimit -v``) is a broken pool."""
    try:
        return pool.submit(parse_chunk_ipc, chunk)
    except BrokenProcessPool as e:  # a worker died (killed, or out of memory): which, and how
        raise worker_died(pool, DOING, FEWER) from e
    except RuntimeError as e:
        if NO_THREAD not in str(e):
            raise
        _kill_workers(pool)
        raise BrokenProcessPool(f"out of memory: the process pool {e}") from e


def _result(pool: ProcessPoolExecutor, fut: Future):
    """The chunk's result, or WorkerDied for a worker that died (pool_deaths.pool_result: also when the pool cannot
    notice it, or its queue feeder thread died). The pool's manager thread can die too (a thread it could not start,
    out of memory under ``ulimit -v``): its futures then never end, and the ingest waited for ever. Checked every
    half second."""

    def manager_gone() -> None:
        manager = getattr(pool, "_executor_manager_thread", None)
        if manager is not None and not manager.is_alive() and not fut.done():
            _kill_workers(pool)
            raise BrokenProcessPool(
                f"out of memory: the process pool's manager thread ended ({thread_end(manager)})"
            ) from None

    return pool_result(fut, pool, DOING, FEWER, check=manager_gone)


DOING, FEWER = "it parsed files", "give fewer --workers"  # what a worker did, and the advice (pool_deaths.worker_died)


def _kill_workers(pool: ProcessPoolExecutor) -> None:
    """End the workers of a pool whose manager is gone: they wait for work that will never come, and Python's exit
    waits for them (the ingest printed its line, then hung)."""
    kill(list((getattr(pool, "_processes", None) or {}).values()))


def _with_rows(results: Iterable[tuple[list[Outcome], dict]]) -> Iterator[Outcome]:
    """Each Outcome of each chunk with its ``rows``: its chunk's tables and its span in each."""
    for outs, tables in results:
        tables = {
            name: pa.ipc.open_stream(t).read_all() if isinstance(t, pa.Buffer) else t for name, t in tables.items()
        }
        at: dict[str, int] = {}  # a file's rows follow those of the files before it in the chunk
        for out in outs:
            spans = {}
            for name, n in (out.table_rows or {}).items():
                start = at.get(name, 0)
                spans[name] = (start, n)
                at[name] = start + n
            out.rows, out.table_rows = RowsInChunk(tables, spans), None
        yield from outs


def error_text(out: Outcome) -> str:
    """How a failed file is reported: path[:line]: kind: message (expected ...)."""
    e = out.error or {}
    return str(
        ParseError(
            e.get("message"), line=e.get("line"), expected=e.get("expected"), kind=e.get("kind") or "invalid"
        ).with_path(printable(out.path))
    )

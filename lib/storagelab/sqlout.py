"""`storagelab sql` output: an aligned table, CSV, JSON lines or a Parquet file.

On a terminal the table shows at most ``TERMINAL_ROWS`` rows (``--limit N`` to change) and cuts
cells longer than ``TERMINAL_CELL`` characters, then says how many rows it showed. When the output
is piped or redirected, every row and every character is written and nothing else (no footer, no
notes), so ``storagelab sql ... | sort`` and ``> out.csv`` get the data only.

Text forms: NULL is ``NULL`` in the table, an empty field in CSV and ``null`` in JSON; booleans are
``true``/``false``; floats are written in full (Python's shortest round-trip form); timestamps in
ISO 8601; lists and structs as JSON. In the table, newlines and tabs inside a value are shown as
``\\n`` and ``\\t`` so that a row stays on one line, other control characters (ESC, BEL: a file's name may hold
them) as ``\\xNN``.
"""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import fcntl
import glob
import json
import math
import os
import re
import stat
import sys
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import TextIO

from . import paths
from .terminal import one_line

TERMINAL_ROWS = 40
TERMINAL_CELL = 60
_FETCH = 10_000


def _json_value(v):
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return None if math.isnan(v) or math.isinf(v) else v
    if isinstance(v, decimal.Decimal):
        return int(v) if v == v.to_integral_value() else float(v)
    if isinstance(v, (dt.datetime, dt.date, dt.time)):
        return v.isoformat()
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    if isinstance(v, (list, tuple)):
        return [_json_value(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _json_value(x) for k, x in v.items()}
    return str(v)  # timedelta, UUID, ...


def _text(v) -> str:
    """A value as CSV/table text (None is handled by the caller)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return v
    if isinstance(v, float):
        return repr(v) if not math.isnan(v) else "nan"
    if isinstance(v, (dt.datetime, dt.date, dt.time)):
        return v.isoformat(sep=" ") if isinstance(v, dt.datetime) else v.isoformat()
    if isinstance(v, (list, tuple, dict)):
        return json.dumps(_json_value(v), ensure_ascii=False)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    if isinstance(v, (int, decimal.Decimal, uuid.UUID, dt.timedelta)):
        return str(v)
    return str(v)


def _rows(cur, limit: int | None) -> Iterator[tuple]:
    left = limit
    while left is None or left > 0:
        batch = cur.fetchmany(_FETCH if left is None else min(_FETCH, left))
        if not batch:
            return
        yield from batch
        if left is not None:
            left -= len(batch)


def _names(cur) -> list[str]:
    names, seen = [], {}
    for d in cur.description:
        n = d[0]
        seen[n] = seen.get(n, 0) + 1
        names.append(n if seen[n] == 1 else f"{n}_{seen[n]}")  # JSON keys must differ
    return names


def write_csv(cur, out: TextIO, limit: int | None) -> int:
    w = csv.writer(out, lineterminator="\n")
    w.writerow([d[0] for d in cur.description])
    n = 0
    for row in _rows(cur, limit):
        w.writerow(["" if v is None else _text(v) for v in row])
        n += 1
    return n


def write_json(cur, out: TextIO, limit: int | None) -> int:
    """JSON lines: one object per row, keys in column order."""
    names = _names(cur)
    n = 0
    for row in _rows(cur, limit):
        out.write(json.dumps(dict(zip(names, (_json_value(v) for v in row), strict=True)), ensure_ascii=False) + "\n")
        n += 1
    return n


def _numeric(type_code) -> bool:
    t = str(type_code).upper()
    return any(k in t for k in ("INT", "DOUBLE", "FLOAT", "DECIMAL", "REAL", "NUMBER")) and "[]" not in t


def write_table(cur, out: TextIO, limit: int | None, *, terminal: bool) -> tuple[int, bool]:
    """An aligned table (header, dashes, rows; numbers right-aligned). ``limit`` None: the terminal's
    default cap (all rows when piped); 0: all rows. Returns (rows shown, more rows exist)."""
    names = [d[0] for d in cur.description]
    right = [_numeric(d[1]) for d in cur.description]
    cap = (TERMINAL_ROWS if terminal else None) if limit is None else (limit or None)
    rows = list(_rows(cur, None if cap is None else cap + 1))
    more = cap is not None and len(rows) > cap
    rows = rows[:cap] if more else rows

    def cell(v) -> str:
        s = "NULL" if v is None else one_line(_text(v))  # reliability-32: ESC, BEL of a file's name went out raw
        if terminal and len(s) > TERMINAL_CELL:
            s = s[: TERMINAL_CELL - 1] + "…"
        return s

    body = [[cell(v) for v in row] for row in rows]
    widths = [max([len(n)] + [len(r[i]) for r in body]) for i, n in enumerate(names)]

    def line(cells, is_header=False) -> str:
        parts = [
            c.rjust(w) if right[i] and not is_header else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    out.write(line(names, True) + "\n")
    out.write("  ".join("-" * w for w in widths) + "\n")
    for r in body:
        out.write(line(r) + "\n")
    return len(body), more


_EXPLAIN = re.compile(r"\s*explain\s+(?:analy[sz]e\s+|\((?:[^()']|'[^']*')*\)\s*)?", re.I)


def _kind(con, statement) -> str:
    """The statement's type; for EXPLAIN, the type of the statement it explains (EXPLAIN ANALYZE runs it: 'EXPLAIN
    ANALYZE COPY files TO ...' wrote the file, reliability-28 input)."""
    kind = statement.type.name
    if kind == "EXPLAIN" and (m := _EXPLAIN.match(statement.query)):
        inner = con.extract_statements(statement.query[m.end() :])
        return _kind(con, inner[0]) if len(inner) == 1 else kind
    return kind


_WRITERS = (b"COPY", b"EXPORT", b"ATTACH")


def _writer(query: str) -> str | None:
    """COPY, EXPORT or ATTACH anywhere in the query as DuckDB's tokenizer reads it (a keyword: not in a string, a
    comment or a quoted name). A COPY in a CTE ('WITH t AS (COPY files TO ...) SELECT 1': DuckDB 2.0 allows it, and
    the statement's type is SELECT) or after EXPLAIN ANALYZE and a comment ('EXPLAIN/**/ANALYZE/**/COPY ...') wrote
    its file, and 'ATTACH ... (READ_WRITE)' created a database file (reliability-29 input)."""
    import duckdb  # noqa: PLC0415  (the caller's connection is DuckDB's already)

    raw = query.encode()  # the tokenizer's offsets are bytes
    for start, kind in duckdb.tokenize(query):
        if kind == duckdb.token_type.keyword and (m := re.match(rb"[A-Za-z_]+", raw[start:])):
            if (word := m.group().upper()) in _WRITERS:
                return word.decode()
    return None


def _explained(query: str) -> str:
    """The first word after EXPLAIN [ANALYZE] [(options)], comments skipped, as DuckDB's tokenizer reads it."""
    import duckdb  # noqa: PLC0415

    raw, depth = query.encode(), 0
    for start, kind in duckdb.tokenize(query):
        if kind == duckdb.token_type.comment or not (m := re.match(rb"[A-Za-z_]+|\S", raw[start:])):
            continue
        word = m.group().upper()
        depth += (word == b"(") - (word == b")")
        if depth or word == b")" or word in (b"EXPLAIN", b"ANALYZE", b"ANALYSE"):
            continue
        return word.decode(errors="replace")
    return ""


def run(
    con,
    query: str,
    *,
    fmt: str = "table",
    limit: int | None = None,
    parquet: str | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
    terminal: bool | None = None,
) -> int:
    """Run ``query`` and write its result; duckdb.Error propagates to the caller. Returns an exit code.

    ``limit``: at most that many rows; None: all rows, except the table on a terminal
    (``TERMINAL_ROWS``); 0: all rows."""
    out = out or sys.stdout
    err = err or sys.stderr
    if terminal is None:
        terminal = out.isatty()
    statements = con.extract_statements(query)  # a syntax error raises duckdb.Error here, as it would below
    if len(statements) > 1:
        raise ValueError(
            f"{len(statements)} statements: give one at a time (DuckDB would show only the last one's result)"
        )
    kind = _kind(con, statements[0]) if statements else None
    if kind == "SET":  # SET, RESET, PRAGMA name=value: for this process only, which ends after this statement
        raise ValueError(
            "SET changes nothing here: sql runs one statement per process, and a setting lasts as long as the process "
            "(put it before a query in a notebook or duckdb's own shell)"
        )
    if kind == "LOAD" or (kind == "EXPLAIN" and _explained(query) in ("INSTALL", "FORCE", "LOAD")):
        # INSTALL, FORCE INSTALL, LOAD: ~/.duckdb/extensions written, a library run; 'EXPLAIN/**/ANALYZE/**/LOAD x'
        # slipped past _EXPLAIN's blanks and loaded (reliability-30)
        raise ValueError("INSTALL and LOAD write or run a DuckDB extension: sql only reads")
    con.execute("SET autoinstall_known_extensions = false")  # 'read_parquet(''https://...'')' installed httpfs into
    # ~/.duckdb (reliability-30)
    kind = _writer(query) or kind
    if kind == "ATTACH":
        raise ValueError(
            "ATTACH opens or creates another database: sql reads its --db only (read_duckdb reads another)"
        )
    if kind in ("COPY", "EXPORT"):
        # a read-only database still lets DuckDB write files: sql only reads
        raise ValueError(
            f"{kind} writes files: sql only reads (write a result with --csv > FILE, --json > FILE or --parquet FILE)"
        )
    if parquet:
        rel = con.sql(query)
        if rel is None:
            raise ValueError("the query returns no result to write")
        if limit:
            rel = rel.limit(limit)
        _write_parquet(rel, Path(parquet))
        if terminal:
            import pyarrow.parquet as pq  # noqa: PLC0415  (on a terminal only)

            # r-24: not read_parquet(name), which DuckDB globs: `--parquet 'o[1].parquet'` counted o1.parquet's rows
            n = pq.ParquetFile(parquet).metadata.num_rows
            err.write(f"wrote {n} rows to {parquet}\n")
        return 0
    cur = con.execute(query)
    if cur is None:  # DuckDB returns None for a query of only blanks, comments or semicolons
        raise ValueError("the query is empty: nothing to run (write a SELECT, e.g. 'SELECT * FROM files LIMIT 5')")
    if cur.description is None:  # a statement without a result (e.g. SET)
        return 0
    if fmt == "csv":
        write_csv(cur, out, limit or None)
    elif fmt == "json":
        write_json(cur, out, limit or None)
    else:
        shown, more = write_table(cur, out, limit, terminal=terminal)
        if terminal:
            if more:
                err.write(
                    f"({shown} rows shown, more exist: --limit N for more, --limit 0 for all, "
                    f"or --csv/--json/--parquet FILE)\n"
                )
            else:
                err.write(f"({shown} row{'s' if shown != 1 else ''})\n")
    return 0


def _write_parquet(rel, dest: Path) -> None:
    """The result into ``dest`` through a new temporary file beside it, renamed over it when whole: a failed or
    interrupted write leaves what was there. The temporary names come from a lock file made by mkstemp and held (a
    shared flock) while the write runs: the sweep of another `sql --parquet` of ``dest`` leaves a held one's files."""

    _sweep_orphans(dest)
    # reliability-32: made as .lock, the file was not yet held when a sweep of another pid namespace took it for a
    # killed write's (flock got) and removed it; the sweeps after judged the live write by its pid (gone there) and
    # removed its files (1 of 8 writes failed). Made under a name no sweep takes, held, then renamed (the held file).
    fd, new = tempfile.mkstemp(prefix=f".{dest.name}.{os.getpid()}.", suffix=".new", dir=dest.parent)
    lock = new[: -len(".new")] + ".lock"
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        os.rename(new, lock)
    except BaseException:
        Path(new).unlink(missing_ok=True)
        os.close(fd)
        raise
    try:
        tmp = lock[: -len(".lock")] + ".tmp"
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))  # its name ours, as mkstemp makes them
        try:
            rel.write_parquet(tmp)
            os.replace(tmp, dest)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    finally:
        Path(lock).unlink(missing_ok=True)
        os.close(fd)


def _sweep_orphans(dest: Path) -> None:
    """Remove the temporary files of earlier writes of ``dest`` that are over: killed (SIGKILL, or SIGTERM or SIGHUP,
    which end `sql` at once), a write left its lock file and DuckDB's ``tmp_`` file, as large as the part of the result
    written: 1.6 GB after 9 kills of one `sql --parquet` (reliability-13). This user's regular files only. A write is
    over when its lock file is not held; one without a lock file (an older version's) when its name's pid is gone.
    Reliability-28 (processes): judged by that pid alone, a live write in another pid namespace (another container
    sharing the folder) lost its files to this sweep, 3 of 3 writes failed."""
    from .procs import alive  # noqa: PLC0415

    # reliability-14: exactly the names `_write_parquet` makes (mkstemp's 8 characters), not every `.NAME.<digits>.*.tmp`:
    # the glob alone took root's own `.res.77777.notes.tmp` beside `--parquet res`, and the live temporary files of a
    # write of `res.2024.parquet` (read as process 2024, gone), whose write then failed
    own = re.compile(rf"(?:tmp_)?\.{re.escape(dest.name)}\.([0-9]+)\.([a-z0-9_]{{8}})\.(tmp|lock)")
    over: dict[tuple[str, str], bool] = {}
    for prefix in (".", "tmp_."):
        for f in sorted(dest.parent.glob(f"{glob.escape(prefix + dest.name)}.*")):  # the pattern ``own`` tells
            if not (m := own.fullmatch(f.name)) or (m[3] == "lock" and prefix != "."):
                continue
            with suppress(OSError):
                st = f.lstat()
                if not (stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid()):
                    continue
                key = (m[1], m[2])
                if key not in over:
                    over[key] = _write_over(dest.parent / f".{dest.name}.{m[1]}.{m[2]}.lock", int(m[1]), alive)
                if over[key]:
                    f.unlink()


def _write_over(lock: Path, pid: int, alive) -> bool:
    """Whether the write that made this lock file (or would have) is over: its lock not held; without one, its pid
    gone."""
    try:  # r-33: O_NONBLOCK: another user's FIFO at the lock's name (a sticky folder) held this open for ever
        fd = os.open(lock, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return not alive(pid)
    except OSError:
        return False
    try:
        if not stat.S_ISREG((st := os.fstat(fd)).st_mode) or st.st_uid != os.getuid():
            return not alive(pid)  # not a lock file of this user's: none
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def pinned_target(target: str) -> tuple[str | None, str]:
    """``sql --parquet TARGET`` with its folder resolved once, strictly, before it is checked: (why not, or None; the
    path to check and write). Checked and written by the name as given, a free name on its way (/tmp/h12P) passed the
    check and was then the user's link to a folder of theirs when the result was written: root's result went there
    (10 of 6000 tries; reliability-12)."""
    from .ownership import foreign_link, resolved  # noqa: PLC0415

    given = Path(target)
    # reliability-13: resolved first, a link of the user's on the way (/tmp/theirs -> /root/x) led to a folder of
    # root's, which passed, and --force replaced a root-only file there; now every name on the way is one no other
    # user can change, so the folder resolved below is the one it leads to for good
    if (why := foreign_link(given.parent, strict=True, steady=True)) and os.path.lexists(given.parent):
        return (
            f"--parquet {target}: {why}: another user could change where it leads; write it to a folder of your own",
            target,
        )
    try:
        folder = resolved(given.parent, strict=True)
    except OSError as e:
        return (
            f"--parquet {target}: the folder {given.parent}: {e.strerror or e}; give a file in a folder that exists",
            target,
        )
    return None, str(folder / given.name)


def parquet_target_refused(target: str, db: str | None, force: bool) -> str | None:
    """Why ``sql --parquet TARGET`` must not write: TARGET is the database itself (or its write-ahead log), a file inside a dataset folder
    (a part file or its meta.json) or one of the database's own Parquet copies (never, even with --force), a folder,
    or an existing file (unless --force)."""
    from .ownership import file_refusal  # noqa: PLC0415

    dest, database = Path(target), Path(db or paths.DB)
    if why := file_refusal(dest):
        return f"--parquet {target}: {why}: another user could change what it leads to once it is checked; write it to a folder of your own"
    if dest.exists() and database.exists() and os.path.samefile(dest, database):
        return f"--parquet {target} is the database itself: write the result to another file"
    if os.path.realpath(dest) == os.path.realpath(database) + ".wal":  # DuckDB replays it when it opens the database
        return f"--parquet {target} is the database's write-ahead log: write the result to another file"
    if owner := store_file_owner(dest, database):
        return f"--parquet {target} is inside {owner}, which storagelab writes: write the result to a file outside it"
    if dest.is_dir():
        return f"--parquet {target} is a folder: give a file name, e.g. {_suggested_file(dest, database)}"
    if (kind := _not_a_file(dest)) is not None:  # the result is renamed over the name: a link or a device would go
        return f"--parquet {target} is {kind}, not a regular file: the result would replace it; give a file name"
    if dest.exists() and not force:
        return f"--parquet {target} exists: add --force to replace it, or give another file name"
    return None


def _suggested_file(folder: Path, database: Path) -> Path:
    """A file name for the result in (or, for a dataset folder, which storagelab writes, beside) ``folder`` that
    ``parquet_target_refused`` accepts: `--parquet DATASET` suggested DATASET/result.parquet, then refused it
    (reliability-7 Low 4)."""
    from .dataset import META_DIR  # noqa: PLC0415  (duckdb: kept out of the CLI's start-up)

    here = Path(os.path.realpath(folder))
    for inside in [here, *here.parents]:
        if (inside / META_DIR).is_dir():  # the dataset's own folder, or one in it
            return inside.parent / f"{inside.name}-result.parquet"
    return folder / "result.parquet"


def _not_a_file(dest: Path) -> str | None:
    """What ``dest`` is when it exists and is no regular file (a symlink, a device, a FIFO: `--parquet /dev/stdout
    --force` replaced the system's /dev/stdout link with a Parquet file, reliability-9), as words; else None."""
    try:
        mode = dest.lstat().st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode):
        return None
    return "a symlink" if stat.S_ISLNK(mode) else f"a special file ({stat.filemode(mode)})"


def store_file_owner(dest: Path, database: Path) -> str | None:
    """The dataset folder ``dest`` is inside (any depth), or the database's Parquet folder when ``dest`` is one of
    its table copies (``<table>.parquet``), as the user named it; else None. Overwriting either leaves a dataset
    that is refused, or a copy that the next ingest does not rewrite (its stamp still matches)."""
    from .dataset import META_DIR  # noqa: PLC0415  (duckdb: kept out of the CLI's start-up)
    from .schema import all_tables  # noqa: PLC0415
    from .store.export import parquet_dir_for  # noqa: PLC0415

    where = Path(os.path.realpath(dest))
    for folder in where.parents:
        if (folder / META_DIR).is_dir():
            return f"the dataset {folder}"
    copies = Path(os.path.realpath(parquet_dir_for(database)))
    if where.parent == copies and where.name in {f"{t}.parquet" for t in all_tables()}:
        return f"{copies}, the Parquet copy of the database {database}"
    return None

"""Every write of an ingest, each in its own transaction: a batch of parsed files (their old rows out,
their rows, ``files`` rows and labels in), a failure, renames, removals, copies, new mtimes.

Every transaction that writes a table also bumps its generation (``db.bump``), which is how the
Parquet export knows what to rewrite."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime

import pyarrow as pa

from ..manifest import LABEL_COLUMNS
from ..schema import all_tables, tool_tables
from . import arrow, db, faults, filestamps
from .plan import Copy, Rename, StoredFile
from .worker import Outcome


def tables_of(tools: set) -> list[str]:
    """The tool tables of these tools (every tool table when one is unknown: a file recorded by a
    parser that no longer exists)."""
    tables = tool_tables()
    if not tools or not tools <= {tool for tool, _ in tables.values()}:
        return list(tables) if tools else []
    return [name for name, (tool, _) in tables.items() if tool in tools]


def write_batch(
    con, batch: list[Outcome], stored: dict[str, StoredFile], next_id: int, labels_of: dict
) -> tuple[int, list[Outcome]]:
    """One transaction for the batch. If it fails for one file's sake, each file is retried in its
    own transaction; a fault of the database or the disk (or Ctrl-C: KeyboardInterrupt) stops the
    ingest. Returns the next free file_id and the files that failed (with their ``error``,
    recorded in ``ingest_errors``)."""
    first = next_id
    try:
        con.execute("BEGIN")
        next_id = insert_files(con, batch, stored, next_id, labels_of)
        faults.inject("batch-rows")
        con.execute("COMMIT")
        faults.inject("batch-committed")
        return next_id, []
    except Exception as e:
        _stop_on_fault(con, e)
    next_id, failed = first, []
    for out in batch:  # isolate the file that breaks the batch
        try:
            con.execute("BEGIN")
            next_id = insert_files(con, [out], stored, next_id, labels_of)
            con.execute("COMMIT")
        except Exception as e:  # pragma: no cover - needs a store bug to reach
            _stop_on_fault(con, e)
            out.error = dict(kind="store", line=None, message=f"{type(e).__name__}: {e}", expected=None)
            record_error(con, out)
            failed.append(out)
    return next_id, failed


def _stop_on_fault(con, e: Exception) -> None:
    """After a failed transaction: roll back; Ctrl-C and faults of the database or the disk go on up."""
    faults.rollback(con)
    if faults.interrupted(e):
        raise KeyboardInterrupt from None
    if faults.environmental(e):
        raise e


def delete_rows(con, file_ids: list[int], tables: Iterable[str]) -> None:
    for name in tables:
        con.execute(f'DELETE FROM "{name}" WHERE file_id IN (SELECT unnest(?::INTEGER[]))', [file_ids])


def files_rows(batch: list[Outcome], file_ids: list[int], labels_of: dict) -> pa.Table:
    """The ``files`` rows of parsed files, with their labels (written with their rows: a kill can never
    leave a stored file unlabelled)."""
    now = datetime.now(UTC)
    n = len(batch)
    given = {
        "file_id": file_ids,
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
    labels = [labels_of.get(o.key) for o in batch]
    if any(labels):
        for c in LABEL_COLUMNS:
            given[c] = [lab.get(c) if lab else None for lab in labels]
    tab = all_tables()["files"]
    return arrow.table(tab, {c.name: given.get(c.name) or [None] * n for c in tab.columns})


def insert_files(con, batch: list[Outcome], stored: dict[str, StoredFile], next_id: int, labels_of: dict) -> int:
    """In the caller's transaction: the old rows of the batch's stored files out, their rows and
    ``files`` rows in. Returns the next free file_id."""
    changed = {"files", "ingest_errors"}
    replaced = [stored[o.key] for o in batch if o.key in stored]
    if replaced:
        tables = tables_of({f.tool for f in replaced}) + ["files"]
        delete_rows(con, [f.file_id for f in replaced], tables)
        changed.update(tables)
    con.execute("DELETE FROM ingest_errors WHERE path IN (SELECT unnest(?::VARCHAR[]))", [[o.key for o in batch]])
    file_ids = list(range(next_id, next_id + len(batch)))
    db.register_insert(con, "files", files_rows(batch, file_ids, labels_of))
    filestamps.put(con, batch)  # with the rows: a stopped first ingest's re-run only adds (it reads no stored file)
    tables = _rows_by_table(batch, file_ids)
    for name, tbl in tables.items():
        db.register_insert(con, name, tbl)
    db.bump(con, changed | tables.keys())
    for out in batch:
        out.columns = out.rows = None  # free memory early
    return next_id + len(batch)


def _rows_by_table(batch: list[Outcome], file_ids: list[int]) -> dict[str, pa.Table]:
    """Each table's rows of the batch's files, with their file_id column. A file's rows are a range of
    its chunk's table: runs of neighbouring files are sliced out (no copy), so files of a chunk that
    are not in this batch (unchanged, copies, or in another batch) are simply not taken."""
    tabs = all_tables()
    chunks: dict[int, tuple[dict, list]] = {}  # id(chunk tables) -> (tables, [(file_id, spans)] in order)
    for out, fid in zip(batch, file_ids, strict=True):
        if out.rows is not None:
            chunks.setdefault(id(out.rows.tables), (out.rows.tables, []))[1].append((fid, out.rows.spans))
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
            per_table.setdefault(name, []).append(with_file_id(tabs[name], part, pa.array(ids, type=pa.int32())))
    return {name: pa.concat_tables(parts) for name, parts in per_table.items()}


def with_file_id(tab, part: pa.Table, file_id: pa.Array) -> pa.Table:
    """A tool table's rows with their file_id column, every column in the table's order."""
    return pa.Table.from_arrays(
        [file_id if c.name == "file_id" else part.column(c.name) for c in tab.columns], schema=arrow.schema_of(tab)
    )


def record_error(con, out: Outcome) -> None:
    """The file's failure replaces its former one in ``ingest_errors``."""
    e = out.error or {}
    con.execute("BEGIN")
    con.execute("DELETE FROM ingest_errors WHERE path = ?", [out.key])
    con.execute(
        "INSERT INTO ingest_errors VALUES (?, ?, ?, ?, ?, ?, ?)",
        [out.key, out.sha256, e.get("kind"), e.get("line"), e.get("message"), e.get("expected"), datetime.now(UTC)],
    )
    db.bump(con, ["ingest_errors"])
    con.execute("COMMIT")


def forget_errors(con, paths: list[str]) -> None:
    """The failures of these paths (ignored now, or gone) are no longer listed."""
    if not paths:
        return
    con.execute("BEGIN")
    n = con.execute("DELETE FROM ingest_errors WHERE path IN (SELECT unnest(?::VARCHAR[]))", [paths]).fetchone()[0]
    if n:
        db.bump(con, ["ingest_errors"])
    con.execute("COMMIT")


def touch(con, touched: list[tuple[int, int]]) -> None:
    """New mtimes of stored files whose bytes did not change, -1 for one whose stamp no longer holds (one statement
    over an Arrow table)."""
    if not touched:
        return
    tbl = pa.table(
        {
            "mtime_ns": pa.array([t[0] for t in touched], pa.int64()),
            "file_id": pa.array([t[1] for t in touched], pa.int32()),
        }
    )
    con.execute("BEGIN")
    db.with_view(
        con,
        "_ingest_touched",
        tbl,
        'UPDATE files SET mtime_ns = t.mtime_ns FROM "_ingest_touched" t WHERE files.file_id = t.file_id',
    )
    db.bump(con, ["files"])
    con.execute("COMMIT")


def rename(con, renames: list[Rename], labels_of: dict) -> None:
    """Stored files found under a new path (same bytes): path, size, mtime and labels change,
    the rows and file_id stay. One transaction (and one UPDATE: a renamed folder of 10,000 files
    is as quick as one file)."""
    cols = ["path", "size_bytes", "mtime_ns", *LABEL_COLUMNS]
    data = {
        "file_id": [r.file_id for r in renames],
        "path": [r.key for r in renames],
        "size_bytes": [r.size for r in renames],
        "mtime_ns": [r.mtime_ns for r in renames],
    }
    for c in LABEL_COLUMNS:
        data[c] = [(labels_of.get(r.key) or {}).get(c) for r in renames]
    table = arrow.table(all_tables()["files"], data)
    sets = ", ".join(f'"{c}" = r."{c}"' for c in cols)
    con.execute("BEGIN")
    try:
        db.with_view(
            con, "_renames", table, f'UPDATE files SET {sets} FROM "_renames" r WHERE files.file_id = r.file_id'
        )
        con.execute("DELETE FROM ingest_errors WHERE path IN (SELECT unnest(?::VARCHAR[]))", [data["path"]])
        con.execute(
            "UPDATE duplicates SET same_as = r.new FROM (SELECT unnest(?::VARCHAR[]) AS old, "
            "unnest(?::VARCHAR[]) AS new) r WHERE duplicates.same_as = r.old",
            [[r.old_key for r in renames], data["path"]],
        )
        db.bump(con, ["files", "ingest_errors", "duplicates"])
        con.execute("COMMIT")
    except BaseException:
        faults.rollback(con)
        raise


def remove(con, gone: dict[str, StoredFile], gone_copies: list[str]) -> int:
    """Delete the stored files that are gone (their rows in every table) and the copies that are
    gone, in one transaction. Returns how many stored files were removed."""
    ids = [f.file_id for f in gone.values()]
    tables = tables_of({f.tool for f in gone.values()}) if gone else []
    con.execute("BEGIN")
    delete_rows(con, ids, tables + (["files"] if ids else []))
    # copies of a removed file, and copies that are gone themselves
    con.execute(
        "DELETE FROM duplicates WHERE path IN (SELECT unnest(?::VARCHAR[])) "
        "OR same_as IN (SELECT unnest(?::VARCHAR[]))",
        [gone_copies, list(gone)],
    )
    db.bump(con, tables + ["files", "duplicates"])
    con.execute("COMMIT")
    return len(ids)


def record_copies(con, found: list[Copy], unique: list[str], labels_of: dict) -> None:
    """Copies found in this run are listed in ``duplicates``, with their own labels (and leave ``ingest_errors``);
    paths that no longer hold a copy leave it."""
    now = datetime.now(UTC)
    con.execute("BEGIN")
    con.execute("DELETE FROM duplicates WHERE path IN (SELECT unnest(?::VARCHAR[]))", [[f.key for f in found] + unique])
    # a file that failed before and now holds a stored file's bytes is a copy, no longer a failure
    cleared = con.execute(
        "DELETE FROM ingest_errors WHERE path IN (SELECT unnest(?::VARCHAR[]))", [[f.key for f in found]]
    ).fetchone()[0]
    if found:
        cols = {
            name: list(col)
            for name, col in zip(
                ("path", "sha256", "size_bytes", "mtime_ns", "same_as"), zip(*found, strict=True), strict=True
            )
        }
        cols["found_at"] = [now] * len(found)
        for c in LABEL_COLUMNS:
            cols[c] = [(labels_of.get(f.key) or {}).get(c) for f in found]
        tab = all_tables()["duplicates"]
        db.register_insert(con, "duplicates", arrow.table(tab, cols))
    db.bump(con, ["duplicates", "ingest_errors"] if cleared else ["duplicates"])
    con.execute("COMMIT")


def drop_stale_copies(con) -> list[tuple[str, str]]:
    """Copies whose stored file now holds other bytes (it was read again, by an ingest of its own folder, and the copy
    was not: in another folder, or ignored) point at another stored file holding their bytes, or leave
    ``duplicates`` when none does: else their labels would select the other bytes' rows. Returns (copy, the stored
    file it was listed as a copy of) of those that left."""
    con.execute("BEGIN")
    try:
        stale = _stale_copies(con, lambda path: True)
        left = [(p, old) for p, old, other in stale if not other]
        if stale:
            db.bump(con, ["duplicates"])
        con.execute("COMMIT")
    except BaseException:
        faults.rollback(con)
        raise
    return left


def settle_stopped(con, covered: Callable[[str], bool], listed: set[str]) -> list[str]:
    """A run that finishes a stopped ingest leaves no mix behind in its paths (``covered``). It read or checked every
    file it ``listed``; a file it did not look at (ignored since the stop, or in a folder it cannot read) can still be
    as the stopped run left it, beside files it changed: one content stored under two paths, a path stored and listed
    as a copy, or stored and failed, a copy of a file that no longer holds its bytes. Settled here, in the database
    alone (such a file is not read): of the paths that store one content, the one outside the run, else one listed,
    else the first keeps the rows, and the run's others become its copies with their own labels (a clean ingest
    stores one content once); the stored row wins over a copy's or a failure's row left by the stopped run; a copy
    whose file now holds other bytes is the copy of a file that holds its bytes, or, with none, no longer on record
    (its labels would select the other bytes' rows). Returns the paths settled."""
    copy_of, both, failed = _stopped_mix(con, covered, listed)
    gone = con.execute(
        "SELECT file_id, tool FROM files WHERE path IN (SELECT unnest(?::VARCHAR[]))", [list(copy_of)]
    ).fetchall()
    tables = tables_of({tool for _, tool in gone}) if gone else []
    labels = ", ".join(f'"{c}"' for c in LABEL_COLUMNS)
    con.execute("BEGIN")
    try:
        con.execute("DELETE FROM duplicates WHERE path IN (SELECT unnest(?::VARCHAR[]))", [both + list(copy_of)])
        con.execute("DELETE FROM ingest_errors WHERE path IN (SELECT unnest(?::VARCHAR[]))", [failed])
        if copy_of:
            con.execute(
                f"INSERT INTO duplicates (path, sha256, size_bytes, mtime_ns, same_as, found_at, {labels}) "
                f"SELECT f.path, f.sha256, f.size_bytes, f.mtime_ns, m.keep, now(), {labels} FROM files f "
                "JOIN (SELECT unnest(?::VARCHAR[]) AS path, unnest(?::VARCHAR[]) AS keep) m USING (path)",
                [list(copy_of), list(copy_of.values())],
            )
            con.execute(
                "UPDATE duplicates SET same_as = m.keep FROM (SELECT unnest(?::VARCHAR[]) AS old, "
                "unnest(?::VARCHAR[]) AS keep) m WHERE duplicates.same_as = m.old",
                [list(copy_of), list(copy_of.values())],
            )
            delete_rows(con, [i for i, _ in gone], [*tables, "files"])
        stale = [p for p, _, _ in _stale_copies(con, covered)]
        db.bump(con, [*tables, "files", "duplicates", "ingest_errors"])
        con.execute("COMMIT")
    except BaseException:
        faults.rollback(con)
        raise
    return sorted({*copy_of, *both, *failed, *stale})


def _stopped_mix(con, covered: Callable[[str], bool], listed: set[str]) -> tuple[dict[str, str], list, list]:
    """settle_stopped's paths: (a stored path -> the stored path it becomes a copy of), the stored paths also listed
    as copies, the stored paths also listed as failed."""
    groups = con.execute(
        "SELECT list(path ORDER BY path), list(path ORDER BY path) FILTER (mtime_ns = -1) FROM files GROUP BY sha256 "
        "HAVING count(*) > 1"
    ).fetchall()
    copy_of: dict[str, str] = {}
    for group, unsure in groups:
        mine = [p for p in group if covered(p)]
        if not mine:  # reliability-27: none of the run's (two paths of another folder, both to be read again: -1)
            continue
        # reliability-25: a path outside the run whose stamp no longer held when the run met its bytes (plan._original:
        # its mtime -1, read at its next ingest) keeps no rows of another's: `ingest s1` after s1/b and s2/a exchanged
        # made s1/b, read and stored, a copy of s2/a, and s1/b's numbers went under s2/a's labels
        outside = [p for p in group if not covered(p) and p not in (unsure or [])]
        keep = next(iter(outside), None) or next((p for p in mine if p in listed), mine[0])
        copy_of.update((p, keep) for p in mine if p != keep)
    both = [p for (p,) in con.execute("SELECT path FROM files JOIN duplicates USING (path)").fetchall() if covered(p)]
    failed = [
        p for (p,) in con.execute("SELECT path FROM files JOIN ingest_errors USING (path)").fetchall() if covered(p)
    ]
    return copy_of, both, failed


def _stale_copies(con, covered: Callable[[str], bool]) -> list[tuple[str, str, str | None]]:
    """In the caller's transaction: the copies (of ``covered`` paths) whose stored file no longer holds their bytes
    point at one that does, or leave ``duplicates`` when none does. Returns (path, its old same_as, its new one or
    None)."""
    rows = con.execute(
        "SELECT d.path, d.same_as, (SELECT min(s.path) FROM files s WHERE s.sha256 = d.sha256) FROM duplicates d "
        "LEFT JOIN files f ON f.path = d.same_as WHERE f.sha256 IS DISTINCT FROM d.sha256"
    ).fetchall()
    stale = [(p, old, other) for p, old, other in rows if covered(p)]
    for path, _old, other in stale:
        if other:
            con.execute("UPDATE duplicates SET same_as = ? WHERE path = ?", [other, path])
        else:
            con.execute("DELETE FROM duplicates WHERE path = ?", [path])
    return stale

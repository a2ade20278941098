"""The database as a hive-partitioned Parquet dataset that DuckDB, Spark and Trino read as is
(``storagelab export --dataset DIR``, ``storagelab ingest --dataset DIR``, ``storagelab spark-ingest``).

Layout::

    DIR/_storagelab/meta.json                     the commit point: generation, schema, tables, the part files
    DIR/files/tool=fio/study=my-nas/month=2026-11/part-<generation>.parquet
    DIR/fio_groups/tool=fio/study=my-nas/month=2026-11/part-<generation>.parquet
    ...
    DIR/ingest_errors/part-<generation>.parquet   tables without a file of their own: one file
    DIR/duplicates/part-<generation>.parquet

Every tool table and ``files`` are partitioned by the file's ``tool``, its ``study`` label and the month it was
ingested (``month=YYYY-MM``, from ``files.ingested_at``); a file with no study label is in
``study=__HIVE_DEFAULT_PARTITION__`` (read back as NULL, as Hive and Spark write it). The partition values live in
the folder names only: ``files``' own ``tool`` and ``study`` columns are not repeated inside its Parquet files,
and readers get them back from the path (as strings). A study label that would not make a folder name (longer
than ``MAX_FOLDER_VALUE`` bytes once escaped, or the NULL folder's own name) is kept readable but shortened and
suffixed with a hash of the whole label (``folder_value``); ``meta.json`` maps it back (``study_folders``), and
``open_dataset`` shows the whole label.

Written as the database is: a run writes new part files (named by its generation, never over an old one), then
``_storagelab/meta.json`` (temporary name, fsync, rename) listing every part file of the new dataset with its
size, then deletes the part files no longer listed. A run killed at any point leaves the old ``meta.json`` over the
old files (still there): the old dataset, whole; the next run removes what the killed one left. ``open_dataset``
reads exactly the listed files and refuses, with what to run, a dataset whose listed files are missing or of
another size, or one written by another version of storagelab. Readers that glob the folders (Spark, Trino,
``read_parquet('DIR/t/**')``) see a consistent dataset whenever no write is running and none was cut short.

Incremental: a partition is rewritten only when its stamp (a hash of its ``files`` rows and the schema) changed.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import re
import stat
import uuid
from pathlib import Path

import duckdb

from . import datasetheld, livefolders
from .database import disk_full, first_line, inject, not_built, schema_signature, spill_config, unfinished_ingest
from .datasetheld import held, save_json_at, sweep_at
from .errors import StoreError
from .ingest_open import _resolve, open_input, read_input
from .interrupts import track
from .livewriters import live_writer, unseen_writer
from .ownership import SharedFolderError, loose_file, made_refusal
from .schema import all_tables

FORMAT = "storagelab-dataset/2"
NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
META_DIR = datasetheld.META_DIR
PARTITION_KEYS = ("tool", "study", "month")
UNPARTITIONED = ("ingest_errors", "duplicates")
MONTH_SQL = "strftime(f.ingested_at AT TIME ZONE 'UTC', '%Y-%m')"
MAX_FOLDER_VALUE = 120  # bytes of an escaped partition value (a folder name is at most 255 bytes)
# reliability-24: and the rest of Hive's/Spark's set (ExternalCatalogUtils.escapePathName): DuckDB reads "*" and "?"
# (Spark also "[", "{") in a path as a pattern, so the parts of a study labelled "a*" (folder study=a*) matched study=a's
# too, and open_dataset counted study a's rows twice, without a word
_ESCAPED = "/%=\\\n\r\t:\"#'*?[]^{\x7f"
_PATTERN = re.compile(r"[*?\[]")  # what DuckDB's read_parquet takes for a glob (FileSystem::HasGlob)


def _tables() -> dict:

    return all_tables()


def _q(v: str) -> str:
    return "'" + v.replace("'", "''") + "'"


def _escape(v: str) -> str:
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED or ord(c) < 32 else c for c in v)


def folder_value(v: str | None) -> str | None:
    """The label a partition folder carries for the label ``v``: ``v`` itself, unless ``v`` is the NULL folder's
    name or too long for a folder name once escaped; then its readable start, ``~`` and a hash of all of it."""
    if v is None or v == "":
        return None
    if v != NULL_PARTITION and len(_escape(v).encode()) <= MAX_FOLDER_VALUE:
        return v
    digest = hashlib.sha256(v.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    head = ""
    for c in v:
        if len(_escape(head + c).encode()) > MAX_FOLDER_VALUE - 17:
            break
        head += c
    return f"{head}~{digest}"


def partition_value(v: str | None) -> str:
    """A partition folder's value: NULL as Hive writes it; '/', '%', ... escaped as Hive escapes them."""
    v = folder_value(v)
    return NULL_PARTITION if v is None else _escape(v)


def partition_dir(table: str, tool: str | None, study: str | None, month: str | None) -> Path:
    return Path(
        table, f"tool={partition_value(tool)}", f"study={partition_value(study)}", f"month={partition_value(month)}"
    )


def study_folders(labels) -> dict[str, str]:
    """folder value -> label, for the labels whose folder carries another value (see folder_value)."""
    return {fv: v for v in labels if v and (fv := folder_value(v)) != v}


def partitions(con) -> dict[tuple, str]:
    """(tool, study, month) -> stamp: a hash of that partition's files rows (labels, sha256, parser version, ingest
    time) and the schema signature."""

    sig = schema_signature()
    rows = con.execute(f"""
        SELECT f.tool, f.study, {MONTH_SQL} AS month, md5(string_agg(CAST(f AS VARCHAR), '|' ORDER BY f.file_id))
        FROM files f GROUP BY ALL""").fetchall()
    return {(t, s, m): hashlib.sha256(f"{sig}|{h}".encode()).hexdigest()[:32] for t, s, m, h in rows}


def _copy(con, query: str, dest: Path) -> int | None:
    """Write ``query`` to ``dest`` (temporary name, then rename); returns its size, None (and no file) when the
    query has no rows."""
    n = con.execute(f"SELECT count(*) FROM ({query})").fetchone()[0]
    if not n:
        return None
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    try:
        con.execute(f"COPY ({query}) TO {_q(tmp.as_posix())} (FORMAT PARQUET)")
        inject("dataset-part-copied")
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    return dest.stat().st_size


def _where(key: tuple) -> str:
    tool, study, month = key
    return " AND ".join(
        [
            "f.tool IS NULL" if tool is None else f"f.tool = {_q(tool)}",
            "f.study IS NULL" if study is None else f"f.study = {_q(study)}",
            f"{MONTH_SQL} = {_q(month)}" if month is not None else f"{MONTH_SQL} IS NULL",
        ]
    )


def _write_partition(con, out: Path, key: tuple, tables: dict, part: str) -> dict[str, tuple[str, int]]:
    """The partition's Parquet files, one per table with rows: table -> (path relative to ``out``, size)."""
    written = {}
    where = _where(key)
    for name, tab in tables.items():
        if name in UNPARTITIONED:
            continue
        rel = (partition_dir(name, *key) / part).as_posix()
        if name == "files":
            cols = ", ".join(f'f."{c.name}"' for c in tab.columns if c.name not in ("tool", "study"))
            query = f"SELECT {cols} FROM files f WHERE {where} ORDER BY f.file_id"
        else:
            cols = ", ".join(f't."{c.name}"' for c in tab.columns)
            order = ", ".join(f't."{c}"' for c in ("file_id", "line_start") if c in {x.name for x in tab.columns})
            query = f'SELECT {cols} FROM "{name}" t JOIN files f USING (file_id) WHERE {where} ORDER BY {order}'
        size = _copy(con, query, out / rel)
        if size is not None:
            written[name] = (rel, size)
    return written


def save_json(path: Path, data) -> None:
    """Replace ``path`` with ``data`` atomically and durably: temporary name, fsync, rename."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w") as f:
            f.write(json.dumps(data, indent=1, sort_keys=True))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:  # a full disk, Ctrl-C: the part written would hold its space until the next export
        tmp.unlink(missing_ok=True)
        raise


def meta(con) -> dict:

    tables = _tables()
    versions = dict(con.execute("SELECT DISTINCT tool, parser_version FROM files WHERE tool IS NOT NULL").fetchall())
    studies = [s for (s,) in con.execute("SELECT DISTINCT study FROM files").fetchall()]
    return {
        "format": FORMAT,
        "schema_signature": schema_signature(),
        "parser_versions": versions,
        "partition_keys": list(PARTITION_KEYS),
        "null_partition": NULL_PARTITION,
        "study_folders": study_folders(studies),
        "tables": {n: [[c.name, c.type] for c in t.columns] for n, t in tables.items()},
    }


def read_meta(path: Path | str) -> dict | None:
    """The dataset's meta.json when it is one this version wrote (it lists its part files), else None."""
    try:  # reliability-15: opened as an input is (another user's link to a dataset of root's: StoreError)
        info = json.loads(read_input(Path(path) / META_DIR / "meta.json"))
    except OSError as e:
        if e.errno == errno.EPERM:
            raise StoreError(f"{path}: {e.strerror}") from None
        return None
    except ValueError:
        return None
    ok = isinstance(info, dict) and info.get("format") == FORMAT and isinstance(info.get("parts"), dict)
    if ok and (outside := _outside_part(info["parts"])) is not None:
        raise StoreError(
            f"{path}: its {META_DIR}/meta.json lists a part file outside the dataset's folder ({outside!r}): not read"
        )
    return info if ok else None


_NAME = re.compile(r"[a-z][a-z0-9_]*")


def _odd_table(tables) -> str | None:
    """What in meta.json's ``tables`` (table -> [[column, type], ...]) is not a plain name or one of the schema's
    column types (the readers' SQL is made of them), else None."""
    if not isinstance(tables, dict):
        return repr(tables)[:80]
    types = {c.type for t in _tables().values() for c in t.columns}
    for name, cols in tables.items():
        if not isinstance(name, str) or not _NAME.fullmatch(name) or not isinstance(cols, list):
            return repr(name)[:80]
        for col in cols:
            ok = isinstance(col, list) and len(col) == 2 and isinstance(col[0], str) and _NAME.fullmatch(col[0])
            if not ok or col[1] not in types:
                return repr(col)[:80]
    return None


def _outside_part(parts: dict) -> str | None:
    """A part's name in ``parts`` (table -> {relative name: size}) that is not a plain relative path inside the
    dataset (absolute, with "..", "." or an empty step, or a NUL), else None. Reliability-17: a meta.json of the
    second user's listing ``../x/../../root/f`` had root's private copy of their dataset create /root/f, a file of
    root's with their bytes (the copy's folder and the dataset's are at other depths, so one name led to their file
    on the read and to root's folder on the write)."""
    for files in parts.values():
        for rel in files if isinstance(files, dict) else ():
            if not isinstance(rel, str) or "\x00" in rel or any(s in ("", ".", "..") for s in rel.split("/")):
                return str(rel)  # "/x" starts with an empty step
    return None


def _check_database(con, name: Path | str | None = None) -> None:
    """A database built by another version of storagelab is refused (its columns are not the schema's). ``name``:
    the database as the user gave it, for the messages (what DuckDB has open may be a private read copy of it,
    ``.<db>.read-*/<db>``, which the line named, a path gone once the command ends)."""

    db = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchall()
    name = name or (db[0][0] if db and db[0][0] else "the database")
    if empty := not_built(con, name):  # was a traceback (no meta)
        raise StoreError(empty)
    rows = con.execute("SELECT value FROM meta WHERE key = 'schema'").fetchall()
    if rows and rows[0][0] != schema_signature():
        raise StoreError(
            "the database was built by another version of storagelab (its tables differ from this one's): run "
            "`storagelab ingest` (with the same --db) to rebuild it, then export again"
        )
    stopped = unfinished_ingest(con, name)
    if stopped:
        raise StoreError(stopped)


def _partitioned_parts(con, out: Path, old: dict, tables: dict, part: str, counts: dict) -> tuple[dict, dict]:
    """Every partition's part files: the old ones where its stamp is unchanged and they are all there, else new
    ones. Returns (table -> {path: size}, stamps)."""
    parts: dict[str, dict[str, int]] = {n: {} for n in tables}
    old_stamps = old.get("stamps") or {}
    old_parts = old.get("parts") or {}
    current = {json.dumps(k): v for k, v in partitions(con).items()}
    counts["removed"] = sum(1 for k in old_stamps if k not in current)
    for key, stamp in sorted(current.items()):
        dirs = {n: partition_dir(n, *json.loads(key)).as_posix() + "/" for n in tables if n not in UNPARTITIONED}
        kept = {n: {r: z for r, z in (old_parts.get(n) or {}).items() if r.startswith(d)} for n, d in dirs.items()}
        # kept["files"] empty: the partition's folder has another name now (reliability-24: a label's escaping)
        if old_stamps.get(key) == stamp and kept.get("files") and all(_present(out, p) for p in kept.values()):
            for n, files in kept.items():
                parts[n].update(files)
            counts["unchanged"] += 1
            continue
        for n, (rel, size) in _write_partition(con, out, tuple(json.loads(key)), tables, part).items():
            parts[n][rel] = size
            counts["files"] += 1
        counts["written"] += 1
    return parts, current


def _present(out: Path, files: dict[str, int]) -> bool:
    for rel, size in files.items():
        try:
            if (out / rel).stat().st_size != size:
                return False
        except OSError:
            return False
    return True


def _owned_folder(out: Path) -> Path:
    """``out`` resolved, when only this user can write into it and its folders (and swap them): the path the export
    then uses; else SharedFolderError. The export writes there by names known in advance (.<part>.<pid>.tmp,
    _storagelab/.meta.json.<pid>.tmp), through any symlink another user put under them (reliability-8, as run
    --output in reliability-7)."""
    why, real = made_refusal(out)  # another user's symlink on the way (turned at will), or one gone since the mkdir
    if why:  # reliability-24: "inside THEIRS" was told to use "a new folder under it", inside theirs again
        mine = "whose parent folders only you (or root) can change" if " is inside " in why else "of your own"
        raise SharedFolderError(
            f"--dataset {why}: another user could put a symlink there under a name the export writes "
            f"(.<part>.<pid>.tmp, _storagelab/.meta.json.<pid>.tmp), and have it overwrite any file you can write; give "
            f"a folder {mine}{'' if ' is inside ' in why else ' (e.g. a new folder under it)'}"
        )
    return real


def _make_folders(folder: Path) -> list[tuple[int, str, tuple[int, int]]]:
    """``mkdir -p folder``, noting each folder this call made as its parent's descriptor, its name and its identity
    (device, inode): what :func:`_remove_made` may remove, and nothing else (reliability-17: the refusal's clean-up
    removed by path, so a parent the user swapped for their link in between led it to empty folders of someone
    else's; and a folder listed as there but made by the mkdir on the other side of a swap was never removed)."""
    made = []
    try:
        for here in [*reversed(folder.parents), folder][1:]:
            parent = os.open(here.parent, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.mkdir(here.name, dir_fd=parent)
            except FileExistsError:
                os.close(parent)
                continue
            except BaseException:
                os.close(parent)
                raise
            try:
                st = os.stat(here.name, dir_fd=parent, follow_symlinks=False)
            except OSError:
                os.close(parent)  # renamed away as soon as made: not to be found again, nor removed
                continue
            made.append((parent, here.name, (st.st_dev, st.st_ino)))
    except BaseException:
        _remove_made(made)  # a name on the way swapped meanwhile (the error says which): what was made goes
        for fd, _, _ in made:
            os.close(fd)
        raise
    return made


def _remove_made(made: list[tuple[int, str, tuple[int, int]]]) -> None:
    """Remove the empty folders :func:`_make_folders` made, the last made first: each by its name in the parent it
    was made in (a descriptor: no link on the way is followed), only while that name is still the folder made."""
    for parent, name, made_id in reversed(made):
        with contextlib.suppress(OSError):
            st = os.stat(name, dir_fd=parent, follow_symlinks=False)
            if (st.st_dev, st.st_ino) == made_id and st.st_uid == os.getuid():
                os.rmdir(name, dir_fd=parent)


def writer_lock(path: Path):
    """The dataset's lock file ``path``, open (made if need be) for its one writer's flock, and this user's alone
    (0600): flock needs only a file open for reading, and with the lock file 0644 another user held a shared lock on
    it and root's `export --dataset`, `ingest --dataset` and `spark-ingest` waited for ever, saying nothing
    (reliability-32; the report lock was the same in reliability-8). One made 0644 by older code is made 0600."""
    fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with contextlib.suppress(OSError):
        if (st := os.fstat(fd)).st_uid == os.getuid() and st.st_mode & 0o077:
            os.fchmod(fd, 0o600)
    return os.fdopen(fd, "rb")


def still_held(lock, out: Path) -> None:
    """Refuse when ``out``'s lock file is no longer the one ``lock`` holds (None: not checked): reliability-36, the
    folder renamed away and another put at its name after spark-ingest's last table write (see ``datasetheld``)."""
    with held(lock, out):
        pass


def export(con, out: Path | str, db: Path | str | None = None) -> dict:
    """Bring the dataset at ``out`` up to date with the database ``con`` (see the module's docstring: new part
    files, then meta.json, then the old part files go; ``db``: the database's name as the user gave it, for
    messages). Returns counts: partitions written, removed and unchanged, and Parquet files written."""
    _check_database(con, db)
    if why := not_ours(out):
        raise StoreError(why)
    made = _make_folders(Path(out).absolute() / META_DIR)
    try:
        out = _owned_folder(Path(out))
    except BaseException:  # reliability-13/15 Low: a refused export left an empty root-owned _storagelab/ there
        _remove_made(made)  # (r-17: any error of the check, e.g. a name gone as it was walked under a swap)
        raise
    finally:
        for fd, _, _ in made:
            os.close(fd)
    with writer_lock(out / META_DIR / ".lock") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one writer at a time: another's sweep would delete this one's new parts
        part = f"part-{uuid.uuid4().hex[:16]}.parquet"
        try:
            return _export(con, out, part, lock)
        except (OSError, duckdb.Error) as e:
            if (read_meta(out) or {}).get("generation") != part[5:-8]:  # not committed: its parts are no one's
                _drop_generation(out, part)
            if disk_full(e):
                raise StoreError(
                    f"{out}: disk full ({first_line(e)}). The dataset is as it was before this run; free some space "
                    "and run the export again"
                ) from e
            raise


def _drop_generation(out: Path, part: str) -> None:
    """Delete the part files (and temporary files) of an uncommitted run named ``part``: on a full disk they would
    hold the space the next run needs."""
    for name in _tables():
        for f in (out / name).rglob(f"*{part}*") if (out / name).is_dir() else ():
            f.unlink(missing_ok=True)


def _export(con, out: Path, part: str, lock=None) -> dict:
    old = _keepable(read_meta(out) or {})
    tables = _tables()
    counts = dict(written=0, removed=0, unchanged=0, files=0)
    parts, stamps = _partitioned_parts(con, out, old, tables, part, counts)
    hashes = {}
    for name in UNPARTITIONED:  # the small unpartitioned tables: rewritten when they differ
        cols = ", ".join(f'"{c.name}"' for c in tables[name].columns)
        (hashes[name],) = con.execute(
            f"SELECT md5(coalesce(string_agg(CAST(t AS VARCHAR), '|' ORDER BY CAST(t AS VARCHAR)), '')) "
            f'FROM (SELECT {cols} FROM "{name}") t'
        ).fetchone()
        before = (old.get("parts") or {}).get(name) or {}
        if (old.get("hashes") or {}).get(name) == hashes[name] and _present(out, before):
            parts[name] = dict(before)
            counts["kept"] = 1
            continue
        size = _copy(con, f'SELECT {cols} FROM "{name}" ORDER BY ALL', out / name / part)
        if size is not None:
            parts[name] = {f"{name}/{part}": size}
            counts["files"] += 1
    info = meta(con) | {"generation": part[5:-8], "parts": parts, "stamps": stamps, "hashes": hashes}
    if writers := _others_rows(old, counts.pop("kept", 0) or counts["unchanged"]):
        info["rows_of_others"] = writers
    inject("dataset-before-commit")
    with held(lock, out, parts) as (top, meta_dir):  # the folder moved and another put at its name (r-36, r-37)
        save_json_at(meta_dir, "meta.json", info)
        inject("dataset-committed")
        sweep_at(top, meta_dir, _tables(), {rel for files in parts.values() for rel in files}, _ours)
    return counts


def sweep(out: Path, parts: dict[str, dict[str, int]], lock=None) -> int:
    """Delete what a dataset's meta.json does not list: part files of former generations or of a killed run,
    temporary files, Spark's ``_temporary``, staging folders, a former version's stamps.json; then empty partition
    folders; in the folder whose lock file ``lock`` holds (``datasetheld``). Returns how many files went."""
    with held(lock, out) as (top, meta_dir):
        return sweep_at(top, meta_dir, _tables(), {rel for files in parts.values() for rel in files}, _ours)


def _ours(name: str) -> bool:
    """A file a dataset writer puts in a table's folder: part files (and Spark's .crc of them), temporary files."""
    plain = name.lstrip(".")
    return plain.startswith("part-") or name.endswith(".tmp")


def is_dataset(path: Path | str) -> bool:
    return (Path(path) / META_DIR / "meta.json").is_file()


def not_ours(out: Path | str, option: str = "--dataset") -> str | None:
    """Why a dataset must not be written to ``out``, as one line: a folder with no ``_storagelab/`` (not a dataset,
    nor a first write cut short) whose table folder (``files/``, ``fio_groups/``, ...) holds something; else None.
    Reliability-27: `export --dataset ~/work`, whose ``files/`` held the user's part-1-notes.txt and draft.tmp, deleted
    them in the sweep (the names a writer makes), exit 0 and not a word."""
    out = Path(out)
    try:
        if (out / META_DIR).is_dir():
            return None
        held = next((n for n in _tables() if (out / n).is_dir() and any((out / n).iterdir())), None)
    except OSError:  # cannot be read: the write itself says why
        return None
    if held is None:
        return None
    return (
        f"{option} {out}: its folder {held}/ holds files, and it is not a storagelab dataset (no {META_DIR}/): a "
        "dataset write deletes what it does not list in its table folders: give a new or empty folder"
    )


def _refuse_if_unreadable(path: Path, info: dict | None) -> dict:
    """The dataset's meta.json if its listed part files are all there as written, else a one-line StoreError
    saying what to run."""
    rerun = f"run `storagelab export --dataset {path}` (or the `storagelab spark-ingest` that wrote it) again"
    if info is None:
        raise StoreError(
            f"{path} was written by another version of storagelab (its meta.json lists no part files): {rerun}"
        )

    if info.get("schema_signature") != schema_signature():
        raise StoreError(
            f"{path} was written by another version of storagelab (its tables differ from this one's): rebuild the "
            f"database with `storagelab ingest`, then {rerun}"
        )
    if (odd := _odd_table(info.get("tables"))) is not None:
        # reliability-18 (h6): the views are SQL made of these names and types; the second user's meta.json gave a
        # column the type `VARCHAR) ... ; COPY (SELECT content FROM read_text('/root/...')) TO '/tmp/...'; ...`,
        # and root's open_dataset (a notebook's db_path) copied root's 0600 file into /tmp for them
        raise StoreError(
            f"{path}: its {META_DIR}/meta.json lists a table or column that is not of this version's schema ({odd}): "
            f"not read; {rerun}"
        )
    for files in info["parts"].values():
        for rel, size in files.items():
            try:  # each part as an input: not a file of root's through another user's link (reliability-15)
                with open_input(path / rel) as fh:
                    ok = os.fstat(fh.fileno()).st_size == size
            except OSError as e:
                if e.errno == errno.EPERM:
                    raise StoreError(f"{path / rel}: {e.strerror}") from None
                ok = False
            if not ok and (read_meta(path) or {}).get("generation") != info.get("generation"):
                raise _Rewritten  # a newer commit swept it meanwhile: open_dataset opens that one (reliability-17)
            if not ok:
                raise StoreError(
                    f"{path}: {rel} is missing or not the file _storagelab/meta.json lists (a write was cut short, "
                    f"or the folder was edited): {rerun}"
                )
    return info


def open_dataset(path: Path | str) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with one view per table over exactly the Parquet files the dataset's
    meta.json lists (each table's own columns in schema order, ``files``' tool and study from the folder names,
    shortened study labels shown whole), so the analyses run on it as on the database. A dataset whose files do
    not match its meta.json, or of another version, is refused (StoreError, one line)."""
    path = Path(path)
    for tries in range(3):
        try:
            return _open(path)
        except _Rewritten:
            if tries == 2:
                raise StoreError(f"{path} was rewritten 3 times while it was opened: open it again") from None
    raise AssertionError("unreachable")


class _Rewritten(Exception):
    """The dataset was rewritten (a new meta.json committed, the former parts swept) while ``_open`` made its views."""


def _keepable(old: dict) -> dict:
    """The former meta.json, with nothing of it to keep (no stamp or hash matches) when its rows' writers are not
    this export's (``rows_of_others``): a partition's stamp is its files' labels and SHA-256s, which another user's
    rows copy with numbers of their choosing. Reliability-28 (h2): root's `export --db THEIRS --dataset ROOTS` (every
    bandwidth of theirs 1 B/s), then `export --db OWN --dataset ROOTS`: "0 written, 1 unchanged", and ROOTS went on
    holding their numbers; the other way round, an export of THEIRS kept root's. Reliability-29 (h2): -1 is anyone,
    not one writer: `export --db THEIRS` (their 0666 database: -1), then root's own group-writable one (-1), kept theirs."""
    from .database import their_writers  # noqa: PLC0415

    others = old.get("rows_of_others") or []
    if isinstance(others, list) and set(others) == their_writers() and -1 not in others:
        return old
    return old | {"stamps": dict.fromkeys(old.get("stamps") or {}), "hashes": {}}


def _others_rows(old: dict, kept: int) -> list[int]:
    """The users (-1: any) whose rows the dataset now holds: the database exported is another user's, or others can
    write it (``database.their_writers``), and, where parts of the former export are kept, the former's. Reliability-27
    (h2): `export --db THEIRS --dataset ROOTS` made their rows root's own, and root's report of ROOTS showed pages of
    root's 0600 file their rows named (with its SHA-256, which a published report prints): read back, such a dataset
    counts as theirs (``_open``)."""
    from .database import their_writers  # noqa: PLC0415

    before = old.get("rows_of_others") if kept else None
    return sorted(their_writers() | {u for u in before or () if isinstance(u, int)})


def _open(path: Path) -> duckdb.DuckDBPyConnection:
    """``open_dataset``'s one try."""
    if not is_dataset(path):
        raise FileNotFoundError(f"{path}: not a storagelab dataset (no {META_DIR}/meta.json)")
    info = _refuse_if_unreadable(path, read_meta(path))
    where = Path(_resolve(os.fspath(path))[0])  # read from where the links led when checked, not through them again
    copy = None if _only_ours(where, info) else _checked_copy(path, where, info)
    if copy is not None:
        from .database import THEIRS  # noqa: PLC0415

        THEIRS.append(str(path))  # another user can change it: its paths are their word (excerpts)
    others = info.get("rows_of_others")
    if isinstance(others, list) and others:  # exported from another user's database: their word too
        from .database import THEIR_UIDS, THEIRS  # noqa: PLC0415

        for uid in others:
            THEIRS.append(f"{path}\0{uid}")
            THEIR_UIDS[THEIRS[-1]] = uid if isinstance(uid, int) else -1
    try:
        return _views(path, copy or where, info, materialize=copy is not None)
    except (
        duckdb.Error
    ) as e:  # read now, not at the first query: a part that is not Parquet (a user's) said in one line
        if copy is None and _swept(path, info, e):
            raise _Rewritten from None  # nothing read yet: open the new commit (reliability-17)
        if copy is None:
            raise
        raise StoreError(f"{path}: its Parquet files cannot be read ({first_line(e)})") from None
    finally:
        if copy is not None:
            livefolders.remove(copy)


def _only_ours(where: Path, info: dict) -> bool:
    """Whether only this user and root can add, swap or rename a name in the dataset's folder, the folders above it
    and every folder below it holding a listed part: then DuckDB may read the parts by name."""
    from .ownership import only_owner_adds  # noqa: PLC0415

    if not only_owner_adds(where, os.getuid()):
        return False
    folders = {(where / rel).parent for files in info["parts"].values() for rel in files} | {where / META_DIR}
    for folder in folders:
        while folder != where and where in folder.parents:
            try:
                st = os.lstat(folder)
            except OSError:
                return False
            if st.st_uid not in (0, os.getuid()) or st.st_mode & 0o022 or stat.S_ISLNK(st.st_mode):
                return False
            folder = folder.parent
    # reliability-33: and every listed part: root's part made 0666, rewritten by the second user (its size kept, as
    # meta.json lists it) with every bandwidth 1, was read by name and its numbers counted as root's (sum changed, rc 0)
    # (and a part another user's process holds open for writing, opened while it was writable: livewriters)
    # reliability-34: and meta.json, which says which parts there are: root's made 0666 (or its folder 0777, their
    # meta.json renamed in), the second user left a part of `files` out of it: 38 rows read as 31, unmarked, rc 0
    named = [where / META_DIR / "meta.json", *(where / rel for files in info["parts"].values() for rel in files)]
    stats = [_only_ours_file(path) for path in named]
    if not all(stats) or live_writer(*(st for st in stats if st)) is not None:
        return False  # reliability-34: and one held for writing where /proc shows no holder (livewriters)
    return not any(unseen_writer(str(path), st, loose=loose_file) for path, st in zip(named, stats, strict=True) if st)


def _only_ours_file(path: Path) -> os.stat_result | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st if stat.S_ISREG(st.st_mode) and st.st_uid in (0, os.getuid()) and not st.st_mode & 0o022 else None


def _checked_copy(path: Path, where: Path, info: dict) -> Path:
    """Reliability-15 (h1): the listed parts of a dataset another user can change, copied into a private folder of
    this reader's, each read through the descriptor ``open_input`` checked (their links are followed only to files of
    theirs, and a name swapped after the check is not what DuckDB reads): DuckDB read the parts by name, and the user
    swapping a table folder of theirs for their link to root's had root read root's 0700 dataset (1-2 in 400-600
    tries)."""
    from . import readcopies  # noqa: PLC0415

    copy = readcopies.new_folder()
    try:
        for files in info["parts"].values():
            for rel, size in files.items():
                (copy / rel).parent.mkdir(parents=True, exist_ok=True)
                with open_input(where / rel) as src:
                    if not readcopies.copy_exactly(src.fileno(), copy / rel, size):  # no more than meta.json lists
                        raise StoreError(f"{path}: {rel} changed while it was read: read it again")
    except OSError as e:
        livefolders.remove(copy)
        if e.errno in (errno.ENOSPC, errno.EDQUOT):  # a write: no file name on the error (it said "copy of None")
            raise StoreError(
                f"{path}: no room for this reader's private copy of the dataset (read so where another user can "
                f"change its files) in the temporary folder {copy.parent} ({e.strerror}): free space there, or set "
                "TMPDIR to a folder of yours with room"
            ) from None
        raise StoreError(f"{path}: cannot make this reader's private copy of {e.filename}: {e.strerror}") from None
    except BaseException:
        livefolders.remove(copy)
        raise
    return copy


def _views(path: Path, where: Path, info: dict, *, materialize: bool) -> duckdb.DuckDBPyConnection:
    """The connection ``open_dataset`` returns, reading the parts under ``where`` (into tables when ``materialize``:
    a private copy removed once read)."""
    con = track(duckdb.connect(":memory:", config=spill_config()))  # its spill folder is ./.tmp
    con.execute('CREATE TABLE "meta" (key VARCHAR PRIMARY KEY, value VARCHAR)')
    con.execute(
        "INSERT INTO meta VALUES ('dataset', ?), ('schema_signature', ?), ('generation', ?)",
        [str(path), info["schema_signature"], None if materialize else str(info.get("generation"))],
    )
    folders = info.get("study_folders") or {}
    con.execute("CREATE TABLE _study_folders (folder VARCHAR, study VARCHAR)")
    if folders:
        con.executemany("INSERT INTO _study_folders VALUES (?, ?)", list(folders.items()))
    for name, cols in info["tables"].items():
        files = sorted((where / rel).as_posix() for rel in (info["parts"].get(name) or {}))
        if pattern := next((f for f in files if _PATTERN.search(f)), None):  # r-24: read as a glob, not as named
            raise StoreError(
                f"{path}: {pattern} holds *, ? or [, which DuckDB reads as a pattern (other parts' rows with them): "
                f"run `storagelab export --dataset {path}` again (this version escapes them), from a folder without them"
            )
        if not files:
            spec = ", ".join(f'"{c}" {t}' for c, t in cols)
            con.execute(f'CREATE TABLE "{name}" ({spec})')
            continue
        select = ", ".join(f'CAST(t."{c}" AS {t}) AS "{c}"' for c, t in cols)
        hive = "false" if name in UNPARTITIONED else "true"
        source = (
            f"read_parquet([{', '.join(_q(f) for f in files)}], "
            f"hive_partitioning={hive}, hive_types_autocast=false, union_by_name=true)"
        )
        if name == "files" and folders:
            select = select.replace('CAST(t."study" AS', 'CAST(coalesce(s.study, t."study") AS')
            source += " t LEFT JOIN _study_folders s ON s.folder = t.study"
        else:
            source += " t"
        con.execute(f'CREATE {"TABLE" if materialize else "VIEW"} "{name}" AS SELECT {select} FROM {source}')
    return con


def _swept(path: Path, info: dict, error: BaseException) -> bool:
    """Whether ``error`` (DuckDB's, making the views: their files are bound then) came from a newer commit's sweep
    of the part files ``info`` listed: spark-ingest's rewrites failed 1 open of a reader's loop each (reliability-17)."""
    return (
        isinstance(error, duckdb.IOException)
        and "No files found" in str(error)
        and (read_meta(path) or {}).get("generation") != info.get("generation")
    )


def rewritten(con, error: BaseException) -> str | None:
    """Why a query on ``open_dataset``'s views failed, as one line, when the dataset was rewritten after they were
    made (a newer meta.json: a writer's sweep removed the part files the views name); else None. DuckDB said only
    ``IO Error: No files found that match the pattern ".../part-....parquet"`` (reliability-13/15/17 Low: 1 read in
    each spark-ingest rewrite). Not retried here: the caller's earlier answers came from the former generation."""
    if not isinstance(error, duckdb.IOException) or "No files found" not in str(error):
        return None
    try:
        known = dict(con.execute("SELECT key, value FROM meta WHERE key IN ('dataset', 'generation')").fetchall())
    except duckdb.Error:
        return None
    if not known.get("generation") or not known.get("dataset"):
        return None  # not a dataset's views (a database; a private copy, read into tables)
    now = (read_meta(known["dataset"]) or {}).get("generation")
    if now == known["generation"]:
        return None
    return (
        f"{known['dataset']} was rewritten after it was opened (generation {known['generation']} -> {now}): the "
        "files this connection read are gone; open it again"
    )

"""The database as a hive-partitioned Parquet dataset that DuckDB, Spark and Trino read as is
(``storagelab export --dataset DIR``, ``storagelab ingest --dataset DIR``, ``storagelab spark-ingest``).

Layout::

    DIR/_storagelab/meta.json                     schema signature, parser versions, tables and their columns
    DIR/_storagelab/stamps.json                   one stamp per partition (what was last written there)
    DIR/files/tool=fio/study=my-nas/month=2026-11/part-0.parquet
    DIR/fio_groups/tool=fio/study=my-nas/month=2026-11/part-0.parquet
    ...
    DIR/ingest_errors/part-0.parquet              tables without a file of their own: one file
    DIR/duplicates/part-0.parquet

Every tool table and ``files`` are partitioned by the file's ``tool``, its ``study`` label and the month it was
ingested (``month=YYYY-MM``, from ``files.ingested_at``); a file with no study label is in
``study=__HIVE_DEFAULT_PARTITION__`` (read back as NULL, as Hive and Spark write it). The partition values live in
the folder names only: ``files``' own ``tool`` and ``study`` columns are not repeated inside its Parquet files,
and readers get them back from the path (as strings). Tool tables gain ``tool``, ``study`` and ``month`` columns
when read with hive partitioning; ``open_dataset`` selects each table's own columns, in schema order.

Incremental: a partition is rewritten only when its stamp (a hash of its ``files`` rows and the schema) changed;
a partition whose files are gone is removed. Each Parquet file is written under a temporary name and renamed,
and a partition's stamp is recorded only after all its tables are in place, so a killed export leaves readable
files and the next export rewrites what it had not finished.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import duckdb

NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
META_DIR = "_storagelab"
PART = "part-0.parquet"
PARTITION_KEYS = ("tool", "study", "month")
UNPARTITIONED = ("ingest_errors", "duplicates")
MONTH_SQL = "strftime(f.ingested_at AT TIME ZONE 'UTC', '%Y-%m')"


def _tables() -> dict:
    from .schema import all_tables

    return all_tables()


def _q(v: str) -> str:
    return "'" + v.replace("'", "''") + "'"


def partition_value(v: str | None) -> str:
    """A partition folder's value: NULL as Hive writes it; '/' and '%' escaped as Hive escapes them."""
    if v is None or v == "":
        return NULL_PARTITION
    return "".join(f"%{ord(c):02X}" if c in "/%=\\\n\r\t:" or ord(c) < 32 else c for c in v)


def partition_dir(table: str, tool: str | None, study: str | None, month: str | None) -> Path:
    return Path(
        table, f"tool={partition_value(tool)}", f"study={partition_value(study)}", f"month={partition_value(month)}"
    )


def partitions(con) -> dict[tuple, str]:
    """(tool, study, month) -> stamp: a hash of that partition's files rows (labels, sha256, parser version, ingest
    time) and the schema signature."""
    from .store import schema_signature

    sig = schema_signature()
    rows = con.execute(f"""
        SELECT f.tool, f.study, {MONTH_SQL} AS month, md5(string_agg(CAST(f AS VARCHAR), '|' ORDER BY f.file_id))
        FROM files f GROUP BY ALL""").fetchall()
    return {(t, s, m): hashlib.sha256(f"{sig}|{h}".encode()).hexdigest()[:32] for t, s, m, h in rows}


def _copy(con, query: str, dest: Path) -> bool:
    """Write ``query`` to ``dest`` (temporary name, then rename); nothing, and no file, when it has no rows."""
    n = con.execute(f"SELECT count(*) FROM ({query})").fetchone()[0]
    if not n:
        dest.unlink(missing_ok=True)
        return False
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    try:
        con.execute(f"COPY ({query}) TO {_q(tmp.as_posix())} (FORMAT PARQUET)")
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    return True


def _where(key: tuple) -> str:
    tool, study, month = key
    return " AND ".join(
        [
            "f.tool IS NULL" if tool is None else f"f.tool = {_q(tool)}",
            "f.study IS NULL" if study is None else f"f.study = {_q(study)}",
            f"{MONTH_SQL} = {_q(month)}" if month is not None else f"{MONTH_SQL} IS NULL",
        ]
    )


def _write_partition(con, out: Path, key: tuple, tables: dict) -> int:
    written = 0
    where = _where(key)
    for name, tab in tables.items():
        if name in UNPARTITIONED:
            continue
        dest = out / partition_dir(name, *key) / PART
        if name == "files":
            cols = ", ".join(f'f."{c.name}"' for c in tab.columns if c.name not in ("tool", "study"))
            query = f"SELECT {cols} FROM files f WHERE {where} ORDER BY f.file_id"
        else:
            cols = ", ".join(f't."{c.name}"' for c in tab.columns)
            order = ", ".join(f't."{c}"' for c in ("file_id", "line_start") if c in {x.name for x in tab.columns})
            query = f'SELECT {cols} FROM "{name}" t JOIN files f USING (file_id) WHERE {where} ORDER BY {order}'
        written += _copy(con, query, dest)
    return written


def _remove_partition(out: Path, key: tuple, tables: dict) -> None:
    for name in tables:
        if name in UNPARTITIONED:
            continue
        folder = out / partition_dir(name, *key)
        shutil.rmtree(folder, ignore_errors=True)
        for parent in (folder.parent, folder.parent.parent):  # empty study=, tool= folders
            try:
                parent.rmdir()
            except OSError:
                break


def _save_json(path: Path, data) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
    os.replace(tmp, path)


def meta(con) -> dict:
    from .store import schema_signature

    tables = _tables()
    versions = dict(con.execute("SELECT DISTINCT tool, parser_version FROM files WHERE tool IS NOT NULL").fetchall())
    return {
        "format": "storagelab-dataset/1",
        "schema_signature": schema_signature(),
        "parser_versions": versions,
        "partition_keys": list(PARTITION_KEYS),
        "null_partition": NULL_PARTITION,
        "tables": {n: [[c.name, c.type] for c in t.columns] for n, t in tables.items()},
    }


def export(con, out: Path | str) -> dict:
    """Bring the dataset at ``out`` up to date with the database ``con``. Returns counts: partitions written,
    removed and unchanged, and Parquet files written."""
    out = Path(out)
    (out / META_DIR).mkdir(parents=True, exist_ok=True)
    stamps_file = out / META_DIR / "stamps.json"
    try:
        old = json.loads(stamps_file.read_text())
        old = old if isinstance(old, dict) else {}
    except (OSError, ValueError):
        old = {}
    tables = _tables()
    current = {json.dumps(k): v for k, v in partitions(con).items()}
    counts = dict(written=0, removed=0, unchanged=0, files=0)
    for key in [k for k in old if k not in current and k != "_unpartitioned"]:
        _remove_partition(out, tuple(json.loads(key)), tables)
        del old[key]
        counts["removed"] += 1
        _save_json(stamps_file, old)
    for key, stamp in sorted(current.items()):
        if old.get(key) == stamp:
            counts["unchanged"] += 1
            continue
        counts["files"] += _write_partition(con, out, tuple(json.loads(key)), tables)
        old[key] = stamp
        counts["written"] += 1
        _save_json(stamps_file, old)
    # the small unpartitioned tables: rewritten when they differ
    sig = {}
    for name in UNPARTITIONED:
        cols = ", ".join(f'"{c.name}"' for c in tables[name].columns)
        (h,) = con.execute(
            f"SELECT md5(coalesce(string_agg(CAST(t AS VARCHAR), '|' ORDER BY CAST(t AS VARCHAR)), '')) "
            f'FROM (SELECT {cols} FROM "{name}") t'
        ).fetchone()
        sig[name] = h
        if (old.get("_unpartitioned") or {}).get(name) != h or not (out / name / PART).exists():
            if _copy(con, f'SELECT {cols} FROM "{name}" ORDER BY ALL', out / name / PART):
                counts["files"] += 1
    old["_unpartitioned"] = sig
    _save_json(stamps_file, old)
    _save_json(out / META_DIR / "meta.json", meta(con))
    return counts


def is_dataset(path: Path | str) -> bool:
    return (Path(path) / META_DIR / "meta.json").is_file()


def open_dataset(path: Path | str) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with one view per table over the dataset's Parquet files (each table's own
    columns in schema order, ``files``' tool and study from the folder names), so the analyses run on it as on
    the database."""
    path = Path(path)
    if not is_dataset(path):
        raise FileNotFoundError(f"{path}: not a storagelab dataset (no {META_DIR}/meta.json)")
    info = json.loads((path / META_DIR / "meta.json").read_text())
    con = duckdb.connect(":memory:")
    con.execute('CREATE TABLE "meta" (key VARCHAR PRIMARY KEY, value VARCHAR)')
    con.execute(
        "INSERT INTO meta VALUES ('dataset', ?), ('schema_signature', ?)", [str(path), info["schema_signature"]]
    )
    for name, cols in info["tables"].items():
        files = sorted((path / name).rglob("*.parquet")) if (path / name).is_dir() else []
        files = [f for f in files if not f.name.startswith(".")]
        if not files:
            spec = ", ".join(f'"{c}" {t}' for c, t in cols)
            con.execute(f'CREATE TABLE "{name}" ({spec})')
            continue
        glob = (path / name).as_posix() + ("/*.parquet" if name in UNPARTITIONED else "/**/*.parquet")
        select = ", ".join(f'CAST("{c}" AS {t}) AS "{c}"' for c, t in cols)
        hive = "false" if name in UNPARTITIONED else "true"
        con.execute(
            f'CREATE VIEW "{name}" AS SELECT {select} FROM read_parquet({_q(glob)}, '
            f"hive_partitioning={hive}, hive_types_autocast=false, union_by_name=true)"
        )
    return con

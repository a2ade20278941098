"""Read-only access for the analyses: open the database, run bound queries into polars, provenance."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from .. import paths, store


def open_db(db_path: str | Path | None = None, wait: float = 30.0):
    """A read-only connection: notebooks never write the database (ingest may wait for them). A dataset folder
    (``storagelab export --dataset``) works too: views over its Parquet files, the same tables and columns."""
    from .. import dataset

    if db_path and Path(db_path).is_dir() and dataset.is_dataset(db_path):
        return dataset.open_dataset(db_path)
    return store.connect(db_path or paths.DB, read_only=True, wait=wait)


def frame(con, sql: str, params: list | None = None) -> pl.DataFrame:
    """Run a parameterized query (values are bound, never pasted into the SQL) into polars."""
    cur = con.execute(sql, params or [])
    cols = [d[0] for d in cur.description]
    rows = cur.fetchall()
    return pl.DataFrame(rows, schema=cols, orient="row", infer_schema_length=None)


def provenance(con, file_ids) -> pl.DataFrame:
    """The raw files behind a result: path, sha256, tool version, parser version, ingest time."""
    ids = sorted({int(i) for i in file_ids if i is not None})
    return frame(
        con,
        """
        SELECT file_id, path, substr(sha256, 1, 16) AS sha256_16, tool, tool_version, format,
               parser_version, strftime(ingested_at, '%Y-%m-%d %H:%M:%S UTC') AS ingested_at
        FROM files WHERE list_contains(?::INTEGER[], file_id) ORDER BY path""",
        [ids],
    )

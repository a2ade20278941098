"""Read-only access for the analyses: open the database, run bound queries into polars, provenance."""

from __future__ import annotations

import warnings
from pathlib import Path

import duckdb
import polars as pl
from polars.datatypes import DataTypeClass

from .. import dataset, paths
from ..database import connect, not_built, schema_signature, stopped_by_ctrl_c, unfinished_ingest
from ..errors import DatabaseBusyError, StoreError


def open_db(db_path: str | Path | None = None, wait: float = 30.0):
    """A read-only connection: notebooks never write the database (ingest may wait for them). A dataset folder
    (``storagelab export --dataset``) works too: views over its Parquet files, the same tables and columns."""

    if db_path and Path(db_path).is_dir() and dataset.is_dataset(db_path):
        return dataset.open_dataset(db_path)
    con = connect(db_path or paths.DB, read_only=True, wait=wait)
    _same_schema(con, Path(db_path or paths.DB))
    stopped = not_built(con, db_path or paths.DB) or unfinished_ingest(con, db_path or paths.DB)
    if stopped:
        con.close()
        raise StoreError(stopped)
    return con


def _same_schema(con, db: Path) -> None:
    """A database built by another version of storagelab (other tables or columns) is refused with what to do,
    instead of failing in the middle of a query ('Table with name fio_commands does not exist')."""

    try:
        # fetchall: a result left unfinished would stop the caller's next con.sql() (DuckDB 2)
        rows = con.execute("SELECT value FROM meta WHERE key = 'schema'").fetchall()
    except Exception as e:  # noqa: BLE001 - no meta table: not a storagelab database; its queries will say so
        stopped_by_ctrl_c(e)
        return
    recorded = rows[0][0] if rows else None
    if recorded is not None and recorded != schema_signature():
        con.close()
        raise StoreError(
            f"{db} was built by another version of storagelab (its tables differ from this one's): run "
            f"`storagelab ingest --db {db}` (or ./run build) to rebuild it from the raw files"
        )


def frame(con, sql: str, params: list | None = None) -> pl.DataFrame:
    """Run a parameterized query (values are bound, never pasted into the SQL) into polars, column by
    column through Arrow. Integers of every SQL width (and DuckDB's HUGEINT sums, DECIMAL(38,0) in
    Arrow) come out as Int64, decimals as DECIMAL(38, scale): one type per kind of value, so frames of
    different queries join and stack."""
    with warnings.catch_warnings():  # DuckDB warns that a DB-API result's Arrow output is one more copy
        warnings.filterwarnings("ignore", "Arrow output on a DB-API result", UserWarning)
        # con.execute (not con.sql): it runs whatever an earlier statement left unfetched on the connection
        df = pl.from_arrow(_run(con, sql, params).to_arrow_table())
    assert isinstance(df, pl.DataFrame)  # from an Arrow table (a Series comes only from an Arrow array)
    return df.with_columns(
        pl.col(name).cast(dtype) for name, old in df.schema.items() if (dtype := _one_type(old)) is not None
    )


def frame_by_rows(con, sql: str, params: list | None = None) -> pl.DataFrame:
    """``frame`` the plain way, through Python rows (polars infers each column's type from its values):
    the reference the Arrow path is tested equal to."""
    cur = _run(con, sql, params)
    cols = [d[0] for d in cur.description]
    return pl.DataFrame(cur.fetchall(), schema=cols, orient="row", infer_schema_length=None)


def _run(con, sql: str, params: list | None):
    """``con.execute``; on a dataset rewritten since it was opened, one line (``dataset.rewritten``)."""
    try:
        return con.execute(sql, params or [])
    except duckdb.IOException as e:
        if why := dataset.rewritten(con, e):
            raise StoreError(why) from None
        raise


def _one_type(dtype: pl.DataType | DataTypeClass) -> pl.DataType | DataTypeClass | None:
    """The type ``frame`` gives a column that Arrow delivers as ``dtype`` (None: keep it)."""
    if dtype.is_integer():
        return None if dtype == pl.Int64 else pl.Int64
    if isinstance(dtype, pl.Decimal):
        return pl.Int64 if dtype.scale == 0 else (None if dtype.precision == 38 else pl.Decimal(38, dtype.scale))
    if isinstance(dtype, pl.List):
        inner = _one_type(dtype.inner)
        return None if inner is None else pl.List(inner)
    return None


def provenance(con, file_ids) -> pl.DataFrame:
    """The raw files behind a result: path, sha256, tool version, parser version, ingest time (in UTC, as
    labelled, whatever the session's time zone: strftime of a TIMESTAMPTZ alone writes local time)."""
    ids = sorted({int(i) for i in file_ids if i is not None})
    return frame(
        con,
        """
        SELECT file_id, path, substr(sha256, 1, 16) AS sha256_16, tool, tool_version, format,
               parser_version, strftime(timezone('UTC', ingested_at), '%Y-%m-%d %H:%M:%S UTC') AS ingested_at
        FROM files WHERE list_contains(?::INTEGER[], file_id) ORDER BY path""",
        [ids],
    )


def older_database(db: str | None) -> str | None:
    """What to run when the database the notebooks will read (``db``, or the default one) was built by another
    version of storagelab: said once, before any kernel starts. Each notebook said it inside its failure, twice,
    among 4 lines, exit 1 (reliability-5 and -6). A database busy or missing is left to the notebooks (a notebook
    given by its path may read none). A folder that is no dataset: said in `run`'s words (reliability-29, h6:
    connect's line told `run`, which has no --db, to give "--db DIR/storagelab.duckdb")."""
    if not db and not paths.DB.exists():
        return None
    if Path(db or paths.DB).is_dir() and not (db and dataset.is_dataset(db)):
        shown = paths.DB.relative_to(paths.ROOT) if paths.DB.is_relative_to(paths.ROOT) else paths.DB
        given = f"-p db_path {db}" if db else f"the default database {shown}"
        return f"{given} is a folder, neither a database file nor a dataset (storagelab export --dataset): name one"
    try:
        open_db(db or None, wait=0).close()
    except DatabaseBusyError:
        return None
    except StoreError as e:
        return str(e)
    return None

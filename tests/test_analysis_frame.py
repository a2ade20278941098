"""analysis.db.frame reads query results column by column through Arrow (2.5x faster on the notebooks'
largest query at 100,000 runs); it gives what reading them row by row gives (frame_by_rows, where polars
infers each column's type from the Python values), on every table of the seed database and on the SQL
types Arrow delivers differently."""

from __future__ import annotations

import duckdb
import polars as pl
import pytest

from storagelab.analysis.db import frame, frame_by_rows


def same_frame(con, sql: str, params: list | None = None) -> pl.DataFrame:
    """frame == frame_by_rows, value for value and type for type; a column that is NULL in every row is
    typed by the database in frame (Null by rows, which has no values to infer a type from)."""
    fast, plain = frame(con, sql, params), frame_by_rows(con, sql, params)
    assert fast.columns == plain.columns
    for name, dtype in plain.schema.items():
        if dtype == pl.Null:
            assert fast[name].null_count() == fast.height, name
        else:
            assert fast.schema[name] == dtype, (name, fast.schema[name], dtype)
    assert fast.with_columns(pl.col(c).cast(pl.Null) for c, t in plain.schema.items() if t == pl.Null).equals(
        plain, null_equal=True
    )
    return fast


def test_every_table_of_the_seed_database(seed_db):
    con = duckdb.connect(str(seed_db), read_only=True)
    tables = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall()]
    assert len(tables) > 25
    rows = 0
    for name in tables:
        rows += same_frame(con, f'SELECT * FROM "{name}" ORDER BY ALL').height
    assert rows > 500  # every row of the seed logs (825 today)


def test_types_arrow_delivers_otherwise():
    con = duckdb.connect()
    df = same_frame(
        con,
        "SELECT 7::INTEGER AS i32, 3::SMALLINT AS i16, 200::UTINYINT AS u8, sum(x) AS huge_sum, 1.5 AS dec, "
        "2.25::DECIMAL(5,2) AS dec2, [1, 2]::INTEGER[] AS ints, count(*) AS n, avg(x) AS mean, 'a' AS s, "
        "TIMESTAMPTZ '2026-11-24 12:00:00+00' AS at, NULL AS nothing FROM (SELECT 9007199254740993::BIGINT AS x)",
    )
    assert df.row(0) == (
        7,
        3,
        200,
        9007199254740993,
        pytest.approx(1.5),
        pytest.approx(2.25),
        [1, 2],
        1,
        9007199254740992.0,
        "a",
        df["at"][0],
        None,
    )
    assert df.schema["huge_sum"] == pl.Int64 and df.schema["ints"] == pl.List(pl.Int64)


def test_no_rows_keeps_the_columns_typed():
    con = duckdb.connect()
    df = frame(con, "SELECT 1::INTEGER AS a, 'x' AS b WHERE false")
    assert df.height == 0 and df.schema == pl.Schema({"a": pl.Int64, "b": pl.String})


def test_bound_parameters_and_an_unfinished_earlier_result():
    """07_explore fetched one row of a statement and then queried again: frame runs regardless."""
    con = duckdb.connect()
    con.execute("SELECT * FROM range(10)").fetchone()
    assert frame(con, "SELECT ?::BIGINT * 2 AS v", [21]).to_dicts() == [{"v": 42}]

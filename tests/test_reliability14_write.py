"""Reliability-14 (issue 26), writing and processes: attacks on reliability-13's fixes, each a test that fails on the
code it was found on (main 6673d12)."""

from __future__ import annotations

import os


def test_sql_parquet_removes_only_the_temporary_files_it_made_itself(tmp_path):
    """Attack (main 6673d12): `sql "select 1" --parquet /root/h14wp/res` removed root's own `.res.77777.notes.tmp`
    beside it (any `.res.<digits>.*.tmp` of a process gone was taken for a killed write's), and, while another `sql
    --parquet /root/h14wp/res.2024.parquet` was writing, its `tmp_.res.2024.parquet.<pid>.XXXXXXXX.tmp` (read as
    process 2024): that write failed (`IO Error: Could not rename file ...`). Now only the exact names a write of
    this file makes (`.res.<pid>.<8 characters>.tmp`, DuckDB's `tmp_` one), of a process gone, are removed."""
    import duckdb  # noqa: PLC0415

    from storagelab import sqlout  # noqa: PLC0415

    not_its_own = {
        ".res.77777.notes.tmp": "my notes",
        ".res.77777.tmp": "another tool's",
        # a live write of res.999999.parquet (999999: above any pid_max, so `gone` to the old code)
        f".res.999999.parquet.{os.getpid()}.abcd1234.tmp": "",
        f"tmp_.res.999999.parquet.{os.getpid()}.abcd1234.tmp": "PAR1 part written",
    }
    for name, text in not_its_own.items():
        (tmp_path / name).write_text(text)
    for name in (".res.999998.k3j4h5g6.tmp", "tmp_.res.999998.k3j4h5g6.tmp"):  # a killed write of res: removed
        (tmp_path / name).write_text("cut")
    sqlout._write_parquet(duckdb.sql("select 42 x"), tmp_path / "res")
    left = {f.name: f.read_text() for f in tmp_path.iterdir() if f.name != "res"}
    assert left == not_its_own
    assert duckdb.sql(f"select x from read_parquet('{tmp_path / 'res'}')").fetchall() == [(42,)]

"""The open lows of issue 26's campaigns (docs/reliability-15-lows.md), each doing what the attack did."""

from __future__ import annotations

import duckdb

from storagelab import cli


def test_sqls_duckdb_error_is_printed_as_its_lines_not_with_literal_backslash_n(tmp_path, capsys):
    """`sql` printed DuckDB's error as one line with `\\n` in it: the caret no longer stood under the place."""
    db = tmp_path / "e.duckdb"
    duckdb.connect(str(db)).close()
    assert cli.main(["sql", "--db", str(db), "select nosuch from range(3)"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        'storagelab sql: Binder Error: Referenced column "nosuch" not found in FROM clause!',
        'Candidate bindings: "range"',
        "",
        "LINE 1: select nosuch from range(3)",
        "               ^^^^^^",
    ]

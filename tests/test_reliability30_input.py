"""reliability-30 input: `sql` must not install or load a DuckDB extension (it wrote ~/.duckdb/extensions)."""

import io

import duckdb
import pytest

from storagelab import sqlout


@pytest.mark.parametrize("query", ["INSTALL json", "FORCE INSTALL '/nonexistent/x.duckdb_extension'", "LOAD json"])
def test_sql_refuses_install_and_load(query):
    con = duckdb.connect(":memory:")
    with pytest.raises(ValueError, match="INSTALL and LOAD"):
        sqlout.run(con, query, out=io.StringIO(), err=io.StringIO(), terminal=False)


def test_sql_turns_off_the_automatic_install_of_extensions():
    con = duckdb.connect(":memory:")
    con.execute("SET autoinstall_known_extensions = true")
    sqlout.run(con, "SELECT 1", out=io.StringIO(), err=io.StringIO(), terminal=False)
    assert con.execute("SELECT current_setting('autoinstall_known_extensions')").fetchone()[0] is False


@pytest.mark.parametrize("query", ["EXPLAIN/**/ANALYZE/**/LOAD '/nonexistent/x'", "EXPLAIN (ANALYZE)/*c*/LOAD '/n/x'"])
def test_sql_refuses_a_load_behind_explain_and_comments(query):
    con = duckdb.connect(":memory:")
    with pytest.raises(ValueError, match="INSTALL and LOAD"):
        sqlout.run(con, query, out=io.StringIO(), err=io.StringIO(), terminal=False)

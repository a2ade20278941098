"""`storagelab sql` in each output form, on data/raw/ ingested (the seed_db fixture): exact outputs."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import duckdb
import pytest
from conftest import ROOT

from storagelab import sqlout

Q = (
    "SELECT label, stack, vdev_count, bw_bytes_per_s/2^20 AS mib_s, vdev_count IS NULL AS no_count "
    "FROM fio_groups JOIN files USING (file_id) WHERE label LIKE 'autotier%' OR label LIKE 'btrfs%' ORDER BY label"
)
ODD = "SELECT 'a,\"b\"' AS s, NULL AS n, [1, 2] AS l, 1.5::DECIMAL(4,1) AS d, 'x\ny' AS nl, 'nan'::DOUBLE AS f"


def sql(db, *args, stdin=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"))
    r = subprocess.run(
        [sys.executable, "-m", "storagelab", "sql", *args, "--db", str(db)],
        capture_output=True,
        text=True,
        env=env,
        input=stdin,
    )
    assert "Traceback" not in r.stderr
    return r


def test_table_when_piped_is_every_row_in_full_and_nothing_else(seed_db):
    r = sql(seed_db, Q)
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout == (
        "label                      stack          vdev_count  mib_s  no_count\n"
        "-------------------------  -------------  ----------  -----  --------\n"
        "autotier over ZFS (0.8.4)  autotier+zfs         NULL  184.0  true\n"
        "autotier over ext4         autotier+ext4        NULL  658.0  true\n"
        "btrfs (single NVMe)        btrfs                   1  902.0  false\n"
        "btrfs raid1                btrfs-raid1             1  438.0  false\n"
    )


def test_table_piped_has_no_row_cap_and_no_cut_columns(seed_db):
    r = sql(seed_db, "SELECT repeat('x', 300) AS wide, range AS i FROM range(100)")
    lines = r.stdout.splitlines()
    assert len(lines) == 102 and lines[-1] == "x" * 300 + "  " + "99".rjust(2)
    assert "…" not in r.stdout


def test_csv(seed_db):
    r = sql(seed_db, Q, "--csv")
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout == (
        "label,stack,vdev_count,mib_s,no_count\n"
        "autotier over ZFS (0.8.4),autotier+zfs,,184.0,true\n"
        "autotier over ext4,autotier+ext4,,658.0,true\n"
        "btrfs (single NVMe),btrfs,1,902.0,false\n"
        "btrfs raid1,btrfs-raid1,1,438.0,false\n"
    )
    assert sql(seed_db, ODD, "--csv").stdout == 's,n,l,d,nl,f\n"a,""b""",,"[1, 2]",1.5,"x\ny",nan\n'


def test_json_lines(seed_db):
    r = sql(seed_db, Q, "--json")
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout.splitlines()[0] == (
        '{"label": "autotier over ZFS (0.8.4)", "stack": "autotier+zfs", '
        '"vdev_count": null, "mib_s": 184.0, "no_count": true}'
    )
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert [(x["label"], x["vdev_count"], x["mib_s"]) for x in rows] == [
        ("autotier over ZFS (0.8.4)", None, 184.0),
        ("autotier over ext4", None, 658.0),
        ("btrfs (single NVMe)", 1, 902.0),
        ("btrfs raid1", 1, 438.0),
    ]
    assert sql(seed_db, ODD, "--json").stdout == (
        '{"s": "a,\\"b\\"", "n": null, "l": [1, 2], "d": 1.5, "nl": "x\\ny", "f": null}\n'
    )


def test_odd_values_in_the_table(seed_db):
    assert sql(seed_db, ODD).stdout == (
        's      n     l       d    nl    f\n-----  ----  ------  ---  ----  ---\na,"b"  NULL  [1, 2]  1.5  x\\ny  nan\n'
    )


def test_parquet(seed_db, tmp_path):
    out = tmp_path / "g.parquet"
    r = sql(seed_db, Q, "--parquet", str(out))
    assert r.returncode == 0 and r.stdout == "" and r.stderr == ""
    con = duckdb.connect()
    got = con.execute("SELECT label, vdev_count, mib_s FROM read_parquet(?)", [str(out)]).fetchall()
    assert got == [
        ("autotier over ZFS (0.8.4)", None, 184.0),
        ("autotier over ext4", None, 658.0),
        ("btrfs (single NVMe)", 1, 902.0),
        ("btrfs raid1", 1, 438.0),
    ]
    r = sql(seed_db, Q, "--parquet", str(tmp_path / "no" / "such" / "dir.parquet"))
    assert r.returncode == 2 and r.stderr.startswith("storagelab sql: ")


@pytest.mark.parametrize("fmt", [[], ["--csv"], ["--json"]])
def test_limit(seed_db, fmt, tmp_path):
    full = sql(seed_db, Q, *fmt).stdout.splitlines()
    two = sql(seed_db, Q, *fmt, "--limit", "2").stdout.splitlines()
    head = {(): 2, ("--csv",): 1, ("--json",): 0}[tuple(fmt)]
    assert two == full[: head + 2]
    assert sql(seed_db, Q, *fmt, "--limit", "0").stdout.splitlines() == full


def test_limit_applies_to_parquet(seed_db, tmp_path):
    out = tmp_path / "one.parquet"
    assert sql(seed_db, Q, "--parquet", str(out), "--limit", "1").returncode == 0
    assert duckdb.connect().execute("SELECT count(*) FROM read_parquet(?)", [str(out)]).fetchone()[0] == 1


def test_bad_limit_and_two_formats_are_usage_errors(seed_db):
    r = sql(seed_db, Q, "--limit", "-3")
    assert r.returncode == 2 and "argument --limit: expected a whole number >= 0, got '-3'" in r.stderr
    r = sql(seed_db, Q, "--csv", "--json")
    assert r.returncode == 2 and "argument --json: not allowed with argument --csv" in r.stderr


def test_query_from_stdin(seed_db):
    r = sql(seed_db, "-", "--csv", stdin="SELECT count(*) AS n FROM files WHERE tool = 'mbuffer'")
    assert r.returncode == 0 and r.stdout == "n\n8\n"


def test_syntax_error_is_one_message(seed_db):
    r = sql(seed_db, "SELEC 1")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith('storagelab sql: Parser Error: syntax error at or near "SELEC"')


def test_statement_without_rows(seed_db):
    r = sql(seed_db, "CHECKPOINT")  # DuckDB answers with an empty 'Success' column (a SET is refused: reliability-28)
    assert r.returncode == 0 and r.stdout == "Success\n-------\n" and r.stderr == ""


# ----------------------------------------------------------------------------- on a terminal (in-process)


def _terminal(seed_db, query, limit=None, monkeypatch=None):
    con = duckdb.connect(str(seed_db), read_only=True)
    out, err = io.StringIO(), io.StringIO()
    try:
        rc = sqlout.run(con, query, limit=limit, out=out, err=err, terminal=True)
    finally:
        con.close()
    return rc, out.getvalue(), err.getvalue()


def test_terminal_caps_rows_and_cuts_long_cells(seed_db):
    rc, out, err = _terminal(seed_db, "SELECT range AS i, repeat('y', 100) AS long FROM range(50)")
    lines = out.splitlines()
    assert rc == 0 and len(lines) == 2 + sqlout.TERMINAL_ROWS
    assert lines[2] == " 0  " + "y" * (sqlout.TERMINAL_CELL - 1) + "…"
    assert err == "(40 rows shown, more exist: --limit N for more, --limit 0 for all, or --csv/--json/--parquet FILE)\n"


def test_terminal_limit_overrides_the_cap(seed_db):
    rc, out, err = _terminal(seed_db, "SELECT range AS i FROM range(50)", limit=0)
    assert len(out.splitlines()) == 52 and err == "(50 rows)\n"
    rc, out, err = _terminal(seed_db, "SELECT range AS i FROM range(50)", limit=45)
    assert len(out.splitlines()) == 47 and err.startswith("(45 rows shown, more exist")
    rc, out, err = _terminal(seed_db, "SELECT 1 AS one")
    assert out == "one\n---\n  1\n" and err == "(1 row)\n"


@pytest.mark.parametrize("query", ["", "   ", ";", "-- only a comment"])
def test_an_empty_query_is_one_line_not_a_traceback(seed_db, query, capsys):
    """The first case, and an empty query on stdin, through the command (a process: exit code and one line); the
    other cases through cli.main in the test's process, which returns the same code and prints the same line (6
    processes fewer, ~0.5 s of CPU each; issue 28)."""
    if query == "":
        r = sql(seed_db, query)
        rc, stderr = r.returncode, r.stderr
        r = sql(seed_db, "-", stdin="\n")
        assert r.returncode == 2 and "the query is empty" in r.stderr
    else:
        from storagelab import cli

        rc = cli.main(["sql", query, "--db", str(seed_db)])
        stderr = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in stderr
    assert stderr.startswith("storagelab sql: the query is empty: nothing to run"), stderr


def test_copy_and_export_are_refused_and_write_nothing(seed_db, tmp_path):
    """DuckDB's read-only mode still runs COPY ... TO and EXPORT DATABASE: sql refuses them by name."""
    for query, kind in (
        (f"COPY (SELECT path FROM files) TO '{tmp_path / 'out.csv'}'", "COPY"),
        (f"EXPORT DATABASE '{tmp_path / 'dump'}'", "EXPORT"),
    ):
        r = sql(seed_db, query)
        assert r.returncode == 2 and r.stdout == "" and "Traceback" not in r.stderr
        assert r.stderr.strip() == (
            f"storagelab sql: {kind} writes files: sql only reads "
            "(write a result with --csv > FILE, --json > FILE or --parquet FILE)"
        )
    assert list(tmp_path.iterdir()) == []


def test_several_statements_are_refused_not_half_shown(seed_db):
    r = sql(seed_db, "SELECT * FROM files; SELECT 1")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == (
        "storagelab sql: 2 statements: give one at a time (DuckDB would show only the last one's result)"
    )
    assert sql(seed_db, "SELECT 1;").returncode == 0  # one statement with its semicolon

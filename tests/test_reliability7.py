"""The seventh attack campaign's data-side findings (docs/reliability-7-store.md), each re-run as the attack ran:
real logs, real ingests (in-process: the code the command line runs) or the real command line, each state compared
with what a user must see."""

import os
import shutil
import subprocess
import sys

import duckdb
import pytest
from conftest import RAW, ROOT

from storagelab.store import ingest

BONNIE = sorted((RAW / "freebsd-bonnie-dedup").glob("bonnie-raid1*.txt"))[:2]  # real bonnie++ output (data/raw)


def _studies(db) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT regexp_extract(path, '[^/]+$'), study FROM files ORDER BY 1").fetchall()
    finally:
        con.close()


def test_ignoring_a_folder_with_its_own_manifest_keeps_its_stored_files_labels(tmp_path):
    """reliability-7 Medium 1: LOGS/b/c has its own manifest.csv (read with the folder's, manifest.with_nested);
    its files are stored with its labels. `b/` then goes into .storagelabignore: the README says an ignored file stays
    in the database as it was, with its labels; the ingest cleared their study (the subfolder's manifest was only
    looked for beside the files listed, and ignored files are not). Also when the files are deleted while ignored."""
    logs = tmp_path / "logs"
    sub = logs / "b" / "c"
    sub.mkdir(parents=True)
    for f in BONNIE:
        shutil.copy(f, sub / f.name)
    (sub / "manifest.csv").write_text("path,study\n" + "".join(f"{f.name},cee\n" for f in BONNIE))
    db = tmp_path / "x.duckdb"
    labelled = [(f.name, "cee") for f in BONNIE]
    assert ingest([logs], db_path=db, parquet_dir=False, progress=False).failed == 0
    assert _studies(db) == labelled
    (logs / ".storagelabignore").write_text("b/\n")
    assert ingest([logs], db_path=db, parquet_dir=False, progress=False).ignored == 2
    assert _studies(db) == labelled  # was [(name, None), (name, None)]
    for f in BONNIE:
        (sub / f.name).unlink()
    assert ingest([logs], db_path=db, parquet_dir=False, progress=False).removed == 0
    assert _studies(db) == labelled  # deleted while ignored: not looked at, stays as it was


@pytest.mark.e2e
def test_sql_parquet_never_writes_over_the_databases_write_ahead_log(tmp_path):
    """reliability-7 Low: after a killed ingest the database's committed rows can be in its WAL (db.duckdb.wal, not
    yet checkpointed). `sql ... --parquet db.duckdb.wal --force` replaced it with the Parquet file (exit 0), and DuckDB
    then opened the database without those rows, without a word (the killed ingest's 259 files back to 268). Now
    refused like the database itself, even with --force (one CLI run: about 1 s idle, e2e for the loaded machine)."""
    db = tmp_path / "db.duckdb"
    con = duckdb.connect(str(db))
    con.execute("PRAGMA disable_checkpoint_on_shutdown")
    con.execute("CREATE TABLE files AS SELECT 7 AS n")
    con.close()
    wal = tmp_path / "db.duckdb.wal"
    before = wal.read_bytes()
    r = subprocess.run(
        [sys.executable, "-m", "storagelab", "sql", "select 1 as x", "--db", str(db), "--parquet", str(wal), "--force"],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT / "lib")),
        timeout=60,
    )
    assert (r.returncode, r.stdout, r.stderr) == (
        2,
        "",
        f"storagelab sql: --parquet {wal} is the database's write-ahead log: write the result to another file\n",
    )
    assert wal.read_bytes() == before
    assert duckdb.connect(str(db), read_only=True).execute("SELECT n FROM files").fetchall() == [(7,)]

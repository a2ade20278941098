"""A database and a dataset written by an older storagelab (this repository a few days back: commit 0cc9852 of
11-23 for the database, e3931bf of 11-26 for the dataset, before meta.json listed its part files), opened with
this code: every command says in one line what to run, never a traceback (issue 26: 'tracebacks on older
databases and datasets'). The old code comes from this repository's own history (git archive)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from conftest import ROOT
from session_once import once_per_session

pytestmark = pytest.mark.e2e

OLD_DB_COMMIT = "0cc9852"  # 11-23: before `export` existed, another schema
OLD_DATASET_COMMIT = "e3931bf"  # 11-26, just before the dataset's meta.json became its commit point


def _old_tree(commit: str, dest: Path) -> Path:
    if not shutil.which("git") or not (ROOT / ".git").exists():
        pytest.skip("needs this repository's git history")
    archive = dest.with_suffix(".tar")
    r = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "-o", str(archive), commit, "lib", "data/raw"], capture_output=True
    )
    if r.returncode:
        pytest.skip(f"commit {commit} is not in this clone's history")
    with tarfile.open(archive) as t:
        t.extractall(dest, filter="data")
    return dest


def _storagelab(lib: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "storagelab", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(lib)),
        timeout=600,
    )


@pytest.fixture(scope="module")
def old(request, tmp_path_factory) -> tuple[Path, Path]:
    """(a database, a dataset) written by the older code: built once per session (both tests are among the longest,
    LONG_FIRST hands them to both workers at the start: each built the two old trees, 2 x 46 s)."""
    return once_per_session(request.config, tmp_path_factory, "old-versions", _old_db_and_dataset)


def _old_db_and_dataset(root: Path) -> tuple[Path, Path]:
    tree = _old_tree(OLD_DB_COMMIT, root / "db-tree")
    db = root / "old.duckdb"
    r = _storagelab(tree / "lib", "ingest", str(tree / "data" / "raw"), "--db", str(db), "--no-parquet")
    assert r.returncode == 0, r.stderr
    tree = _old_tree(OLD_DATASET_COMMIT, root / "ds-tree")
    ds = root / "old-ds"
    r = _storagelab(
        tree / "lib", "ingest", str(tree / "data" / "raw"), "--db", str(root / "x.duckdb"), "--dataset", str(ds)
    )
    assert r.returncode == 0, r.stderr
    return db, ds


def _one_line(r: subprocess.CompletedProcess, verb: str, says: str) -> None:
    assert "Traceback" not in r.stdout + r.stderr, r.stderr
    lines = r.stderr.splitlines()
    assert r.returncode == 2 and len(lines) == 1, (r.returncode, r.stderr)
    assert lines[0].startswith(f"storagelab {verb}: ") and says in lines[0], lines[0]


def test_an_older_database_gets_one_line_saying_what_to_run(old, tmp_path):
    db, _ds = old
    rebuild = "was built by another version of storagelab (its tables differ from this one's): run `storagelab ingest"
    _one_line(_storagelab(ROOT / "lib", "compare", "--study", "homelab-mergerfs", "--db", str(db)), "compare", rebuild)
    _one_line(_storagelab(ROOT / "lib", "export", "--db", str(db), "--dataset", str(tmp_path / "d")), "export", rebuild)
    # run: said once before any kernel starts (it was 4 lines, the reason twice inside the notebook's failure, exit 1)
    r = _storagelab(ROOT / "lib", "run", "08_fio", "-p", "db_path", str(db), "--output", str(tmp_path / "r"))
    _one_line(r, "run", f"{db} {rebuild}")
    assert r.stdout == "" and not (tmp_path / "r").exists()
    r = _storagelab(ROOT / "lib", "sql", "select count(*) from files", "--db", str(db), "--csv")  # sql: as it is
    assert (r.returncode, r.stdout) == (0, "count_star()\n38\n")
    r = _storagelab(ROOT / "lib", "ingest", str(ROOT / "data" / "raw"), "--db", str(db), "--no-parquet")
    assert r.returncode == 0 and "note: database schema (re)created" in r.stderr.splitlines()
    assert r.stdout.startswith("ingested 38 ")


def test_an_older_dataset_gets_one_line_saying_what_to_run(old, tmp_path):
    _db, ds = old
    again = f"{ds} was written by another version of storagelab (its meta.json lists no part files): run `storagelab export --dataset {ds}`"
    _one_line(_storagelab(ROOT / "lib", "compare", "--study", "homelab-mergerfs", "--db", str(ds)), "compare", again)
    r = _storagelab(ROOT / "lib", "run", "08_fio", "-p", "db_path", str(ds), "--output", str(tmp_path / "r"))
    _one_line(r, "run", again)
    # what it says to run works: this version's export over the old dataset
    db = tmp_path / "new.duckdb"
    r = _storagelab(
        ROOT / "lib", "ingest", str(ROOT / "data" / "raw"), "--db", str(db), "--no-parquet", "--dataset", str(ds)
    )
    assert r.returncode == 0, r.stderr
    from storagelab.dataset import open_dataset

    con = open_dataset(ds)
    try:
        assert con.execute("SELECT count(*) FROM files").fetchone() == (38,)
    finally:
        con.close()

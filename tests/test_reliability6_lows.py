"""The sixth campaign's lows (docs/reliability-6-store.md, docs/reliability-6-processes.md), each re-run as the attack
ran where that is cheap: real logs, the command line, the exact line a user sees."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys

import duckdb
import pytest
from conftest import RAW, ROOT

from storagelab import dataset, store

LOG = RAW / "homelab-mergerfs" / "fio-btrfs-single.txt"  # real fio output (data/raw)
SECRET = RAW / "homelab-mergerfs" / "fio-autotier-ext4.txt"
KW = dict(manifest_path=None, parquet_dir=False, progress=False)


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"))
    return subprocess.run(
        [sys.executable, "-m", "storagelab", *args], capture_output=True, text=True, env=env, timeout=120
    )


def test_a_manifest_that_is_a_device_is_not_a_regular_file(tmp_path):
    """store Low 7: `--manifest /dev/null` said it "does not exist"."""
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(LOG, logs / "a.txt")
    r = _cli("ingest", str(logs), "--db", str(tmp_path / "t.duckdb"), "--manifest", "/dev/null")
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == (
        "storagelab ingest: --manifest /dev/null is not a regular file (a device, a FIFO or a socket): check the "
        "name, or leave --manifest out to use the manifest.csv of the folder you ingest "
        f"({ROOT / 'data' / 'raw' / 'manifest.csv'} by default)\n"
    )


def test_sql_on_a_dataset_folder_says_it_is_a_dataset(tmp_path):
    """store Low 7: `sql --db DATASET_FOLDER` suggested DATASET_FOLDER/storagelab.duckdb, a file no dataset has."""
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(LOG, logs / "a.txt")
    db, ds = tmp_path / "t.duckdb", tmp_path / "ds"
    store.ingest([logs], db_path=db, **KW)
    con = duckdb.connect(str(db), read_only=True)
    try:
        dataset.export(con, ds)
    finally:
        con.close()
    r = _cli("sql", "SELECT 1", "--db", str(ds))
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == (
        f"storagelab sql: {ds} is a dataset folder (storagelab export --dataset), not a database: --db takes the "
        f"database file it was exported from (by default {ROOT / 'data' / 'parsed' / 'storagelab.duckdb'}); the "
        f"notebooks read the dataset with -p db_path {ds}\n"
    )
    plain = tmp_path / "plain"
    plain.mkdir()
    r = _cli("sql", "SELECT 1", "--db", str(plain))
    assert (
        r.stderr
        == f"storagelab sql: {plain} is a folder: --db takes a database file, e.g. {plain / 'storagelab.duckdb'}\n"
    )


def test_a_failed_meta_json_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    """store Low 2: meta.json's write failing on a full disk left `_storagelab/.meta.json.PID.tmp` (holding space on
    the full disk until the next export). The disk is full at the fsync here (ENOSPC, as a tmpfs gives it)."""
    target = tmp_path / "meta.json"
    target.write_text('{"old": 1}')

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(dataset.os, "fsync", full)
    with pytest.raises(OSError, match="No space left"):
        dataset.save_json(target, {"new": 2})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["meta.json"]
    assert target.read_text() == '{"old": 1}'


def test_a_symlink_to_an_ignored_file_is_ignored(tmp_path):
    """store Low 6: with `secret/` ignored, `link.txt -> secret/x.txt` stored the file under the ignored path
    (a symlink's key is its target's). The ignore rule applies to the stored path too now."""
    tree = tmp_path / "T"
    (tree / "secret").mkdir(parents=True)
    shutil.copy(SECRET, tree / "secret" / "x.txt")
    shutil.copy(LOG, tree / "y.txt")
    (tree / "link.txt").symlink_to("secret/x.txt")
    (tree / ".storagelabignore").write_text("secret/\n")
    db = tmp_path / "t.duckdb"
    s = store.ingest([tree], db_path=db, **KW)
    assert (s.ingested, s.ignored, s.failed) == (1, 1, 0)
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT path FROM files").fetchall() == [(str(tree / "y.txt"),)]
    finally:
        con.close()
    r = _cli("parse", str(tree))  # parse lists the same files
    assert str(tree / "secret" / "x.txt") not in r.stdout and "link.txt" not in r.stdout, r.stdout
    assert r.returncode == 0, r.stderr


def test_a_symlink_out_of_an_ignored_folder_is_not_ignored_by_its_target(tmp_path):
    """The other way round: a file that is not ignored stays, whatever links to it."""
    tree = tmp_path / "T"
    (tree / "secret").mkdir(parents=True)
    shutil.copy(LOG, tree / "y.txt")
    (tree / "secret" / "link.txt").symlink_to("../y.txt")
    (tree / ".storagelabignore").write_text("secret/\n")
    db = tmp_path / "t.duckdb"
    s = store.ingest([tree], db_path=db, **KW)
    assert (s.ingested, s.failed) == (1, 0)
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT path FROM files").fetchall() == [(str(tree / "y.txt"),)]
    finally:
        con.close()

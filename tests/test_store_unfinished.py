"""Issue 26 (reliability-5 lows 1-2, reliability-6 Low 1): a re-ingest stopped between its batches (SIGKILL, Ctrl-C, a
full disk) could leave, until the next ingest, one content under two paths (its runs counted twice), a copy or a
failure listed beside rows it replaced, and a failed path's old rows beside its new failure, and every reader gave
those numbers silently. Now an ingest that changes files already stored records that it has begun (``meta``
``unfinished``) before its first change and clears it when it has finished, and every reader (``sql``, ``export
--dataset``, the notebooks' ``open_db``, ``run``'s check, ``compare``) refuses such a database with one line, exit 2.
A first ingest (or an ingest that only adds new paths) stays readable after a stop: what it wrote is whole and true.

The kills are real: the ingest runs as a process from the command line and SIGKILLs itself at a named stage
(``STORAGELAB_FAULT``, ``store.faults.inject``); Ctrl-C is a KeyboardInterrupt raised at that stage in-process."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from conftest import RAW
from test_store_faults import _snapshot

from storagelab import store
from storagelab.analysis.db import open_db
from storagelab.errors import StoreError

LOGS = RAW / "homelab-mergerfs"
NAMES = ["fio-autotier-ext4.txt", "fio-autotier-zfs.txt", "fio-btrfs-raid1.txt", "fio-btrfs-single.txt"]
DOUBLED = "SELECT path FROM files WHERE sha256 IN (SELECT sha256 FROM files GROUP BY 1 HAVING count(*) > 1) ORDER BY 1"
KW = dict(manifest_path=None, parquet_dir=False, progress=False)


def _tree(tmp_path: Path) -> Path:
    raw = tmp_path / "raw"
    raw.mkdir()
    for name in NAMES:
        shutil.copy(LOGS / name, raw / name)
    return raw


def _a_to_b(raw: Path) -> None:
    """The attacks' changes: two files swap contents, a file rewritten with another stored file's bytes while that
    file changes too, and a stored file whose new bytes fail to parse."""
    a, b, c, d = (raw / n for n in NAMES)
    a_bytes, b_bytes, d_bytes = a.read_bytes(), b.read_bytes(), d.read_bytes()
    a.write_bytes(b_bytes)  # swapped
    b.write_bytes(a_bytes)
    c.write_bytes(d_bytes)  # c now holds d's stored bytes ...
    d.write_bytes(d_bytes + b"\n")  # ... and d changed


def _storagelab(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "storagelab", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, **env),
    )


def _ingest_cmd(raw: Path, db: Path) -> list[str]:
    return ["ingest", str(raw), "--db", str(db), "--no-parquet", "--quiet", "--batch-files", "1"]


def _line(raw: Path, db: Path) -> str:
    return (
        f"{db}: its last ingest was stopped before it finished, so a count read from it now can be wrong: run "
        f"`storagelab ingest {raw} --db {db}` again (with the same options) to finish it"
    )


def _doubled(db: Path) -> list[str]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return [p for (p,) in con.execute(DOUBLED).fetchall()]
    finally:
        con.close()


def _refused_everywhere(raw: Path, db: Path, tmp_path: Path) -> None:
    """Every reader says the one line, exit 2, and no number."""
    line = _line(raw, db)
    r = _storagelab("sql", "SELECT count(*) FROM files", "--db", str(db))
    assert (r.returncode, r.stdout, r.stderr) == (2, "", f"storagelab sql: {line}\n")
    r = _storagelab("export", "--db", str(db), "--dataset", str(tmp_path / "ds"))
    assert (r.returncode, r.stdout, r.stderr) == (2, "", f"storagelab export: {line}\n")
    assert not (tmp_path / "ds" / "_storagelab" / "meta.json").exists()
    with pytest.raises(StoreError) as e:
        open_db(db)
    assert str(e.value) == line


@pytest.mark.e2e
def test_a_killed_re_ingest_is_refused_by_every_reader_until_the_next_ingest(tmp_path):
    raw = _tree(tmp_path)
    (raw / "e.txt").write_bytes((LOGS / "fio-mergerfs-hdd.txt").read_bytes())
    db = tmp_path / "t.duckdb"
    store.ingest([raw], db_path=db, **KW)
    _a_to_b(raw)
    (raw / "e.txt").write_bytes(b"nothing fio printed\n")  # a stored file whose re-read fails
    killed = _storagelab(*_ingest_cmd(raw, db), STORAGELAB_FAULT="batch-committed:1")
    assert killed.returncode == -signal.SIGKILL
    a, b, c, d = (str(raw / n) for n in NAMES)
    assert _doubled(db) == [a, b]  # the state the readers used to count: a's new bytes are b's old ones, still there
    _refused_everywhere(raw, db, tmp_path)

    finished = _storagelab(*_ingest_cmd(raw, db))
    assert finished.returncode == 1, finished.stderr  # e.txt
    clean = tmp_path / "clean.duckdb"
    store.ingest([raw], db_path=clean, **KW)
    assert _snapshot(db, raw) == _snapshot(clean, raw)
    assert _doubled(db) == []
    r = _storagelab("sql", "SELECT count(*) AS n FROM files", "--db", str(db), "--csv")
    assert (r.returncode, r.stdout) == (0, "n\n4\n")
    open_db(db).close()


@pytest.mark.e2e
@pytest.mark.parametrize("stage", ["batch-committed:2", "before-removals", "before-labels", "before-finished"])
def test_a_re_ingest_killed_at_any_later_stage_is_refused_and_then_finished(tmp_path, stage):
    raw = _tree(tmp_path)
    db = tmp_path / "t.duckdb"
    store.ingest([raw], db_path=db, **KW)
    _a_to_b(raw)
    (raw / NAMES[0]).rename(raw / "moved.txt")  # and a rename, written after the batches
    killed = _storagelab(*_ingest_cmd(raw, db), STORAGELAB_FAULT=stage)
    assert killed.returncode == -signal.SIGKILL
    r = _storagelab("sql", "SELECT 1", "--db", str(db))
    assert (r.returncode, r.stderr) == (2, f"storagelab sql: {_line(raw, db)}\n")
    assert _storagelab(*_ingest_cmd(raw, db)).returncode == 0
    clean = tmp_path / "clean.duckdb"
    store.ingest([raw], db_path=clean, **KW)
    assert _snapshot(db, raw) == _snapshot(clean, raw)
    assert _storagelab("sql", "SELECT 1", "--db", str(db)).returncode == 0


def test_ctrl_c_in_a_re_ingest_leaves_it_refused(tmp_path, monkeypatch):
    raw = _tree(tmp_path)
    db = tmp_path / "t.duckdb"
    store.ingest([raw], db_path=db, **KW)
    _a_to_b(raw)

    def stop(stage: str) -> None:
        if stage == "batch-committed":
            raise KeyboardInterrupt

    monkeypatch.setattr(store.faults, "inject", stop)
    with pytest.raises(KeyboardInterrupt):
        store.ingest([raw], db_path=db, batch_files=1, **KW)
    monkeypatch.undo()
    assert _doubled(db) == [str(raw / NAMES[0]), str(raw / NAMES[1])]
    with pytest.raises(StoreError) as e:
        open_db(db)
    assert str(e.value) == _line(raw, db)
    store.ingest([raw], db_path=db, **KW)
    assert _doubled(db) == []
    open_db(db).close()


@pytest.mark.e2e
def test_a_killed_first_ingest_stays_readable(tmp_path):
    """A first ingest only adds: every file it wrote before the stop is whole and readable."""
    raw = _tree(tmp_path)
    db = tmp_path / "t.duckdb"
    killed = _storagelab(*_ingest_cmd(raw, db), STORAGELAB_FAULT="batch-committed:2")
    assert killed.returncode == -signal.SIGKILL
    r = _storagelab("sql", "SELECT path, sha256 FROM files ORDER BY 1", "--db", str(db), "--csv")
    assert r.returncode == 0, r.stderr
    sha = {str(raw / n): hashlib.sha256((raw / n).read_bytes()).hexdigest() for n in NAMES}
    assert r.stdout.splitlines() == ["path,sha256"] + [f"{p},{sha[p]}" for p in sorted(sha)[:2]]
    # its re-run only adds too: readable after a stop as well
    killed = _storagelab(*_ingest_cmd(raw, db), STORAGELAB_FAULT="batch-committed:1")
    assert killed.returncode == -signal.SIGKILL
    open_db(db).close()


@pytest.mark.e2e
def test_a_stopped_ingest_is_finished_only_by_an_ingest_that_covers_its_paths(tmp_path):
    raw = _tree(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(LOGS / "fio-mergerfs-hdd.txt", other / "x.txt")
    db = tmp_path / "t.duckdb"
    store.ingest([raw], db_path=db, **KW)
    _a_to_b(raw)
    assert _storagelab(*_ingest_cmd(raw, db), STORAGELAB_FAULT="batch-committed:1").returncode == -signal.SIGKILL
    store.ingest([other], db_path=db, **KW)  # another folder: the stopped ingest's paths are still mixed
    with pytest.raises(StoreError) as e:
        open_db(db)
    assert str(e.value) == _line(raw, db)
    store.ingest([raw / NAMES[0]], db_path=db, **KW)  # one of its files: not all of them
    with pytest.raises(StoreError):
        open_db(db)
    store.ingest([tmp_path], db_path=db, **KW)  # a folder holding the stopped ingest's folder: finished
    assert _doubled(db) == []
    open_db(db).close()

"""The eighth reliability campaign (docs/reliability-8-store.md), the data side.

Medium 1: a re-ingest killed between its batches leaves one content under two paths (the "unfinished" marker makes
every reader refuse it); if a file of the mix was then ignored (or its folder made unreadable) before the re-run, the
re-run cleared the marker while that file kept the rows the stopped run had not replaced yet: the content counted
twice, and every reader accepted it. The kill is real (the ingest SIGKILLs itself after its first batch)."""

from __future__ import annotations

import errno
import hashlib
import os
import signal

import duckdb
import pytest
from test_store_unfinished import DOUBLED, KW, NAMES, _a_to_b, _ingest_cmd, _storagelab, _tree

from storagelab import store
from storagelab.analysis.db import open_db
from storagelab.store import export


def _state(db) -> tuple[list, list, list]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        doubled = [p for (p,) in con.execute(DOUBLED).fetchall()]
        stored = con.execute("SELECT path, sha256 FROM files ORDER BY 1").fetchall()
        copies = con.execute("SELECT path, sha256, same_as FROM duplicates ORDER BY 1").fetchall()
        return doubled, stored, copies
    finally:
        con.close()


@pytest.mark.e2e
@pytest.mark.parametrize("ignored", ["one file of the mix", "every file"])
def test_a_file_of_a_stopped_mix_ignored_before_the_re_run_is_not_counted_twice(tmp_path, ignored):
    raw = _tree(tmp_path)
    db = tmp_path / "t.duckdb"
    store.ingest([raw], db_path=db, **KW)
    _a_to_b(raw)  # a and b swap their bytes (and c, d change)
    killed = _storagelab(*_ingest_cmd(raw, db), STORAGELAB_FAULT="batch-committed:1")
    assert killed.returncode == -signal.SIGKILL
    a, b = (str(raw / n) for n in NAMES[:2])
    doubled, stored, _ = _state(db)
    assert doubled == [a, b]  # a holds b's old bytes (written), b still holds them (not yet rewritten)
    b_sha = dict(stored)[b]

    (raw / ".storagelabignore").write_text(NAMES[1] + "\n" if ignored == "one file of the mix" else "*.txt\n")
    store.ingest([raw], db_path=db, **KW)

    doubled, stored, copies = _state(db)
    assert doubled == []
    assert (a, b_sha) in stored and b not in dict(stored)
    # b is not read (ignored): its stored bytes are a's now, so it is a's copy, with its own labels, as a clean ingest
    # of a tree holding both would list it; its rows are counted once, under a
    assert copies == [(b, b_sha, a)]
    open_db(db).close()  # the stopped ingest is finished: readable


@pytest.mark.e2e
def test_a_copy_of_a_stopped_mix_ignored_before_the_re_run_is_not_left_pointing_at_other_bytes(tmp_path):
    """Medium 1, the copy case: d a copy of c; c changed, the re-ingest killed after c's batch (d's copy row still
    says 'same bytes as c'), d then ignored: d stayed listed as c's copy with bytes c no longer holds, so d's labels
    selected c's new rows."""
    raw = _tree(tmp_path)
    c, d = raw / NAMES[0], raw / "z-copy.txt"  # read after c
    d.write_bytes(c.read_bytes())
    db = tmp_path / "t.duckdb"
    store.ingest([raw], db_path=db, **KW)
    assert _state(db)[2] == [(str(d), hashlib.sha256(c.read_bytes()).hexdigest(), str(c))]
    c.write_bytes(c.read_bytes() + b"\n")
    killed = _storagelab(*_ingest_cmd(raw, db), STORAGELAB_FAULT="batch-committed:1")
    assert killed.returncode == -signal.SIGKILL
    (raw / ".storagelabignore").write_text(d.name + "\n")
    s = store.ingest([raw], db_path=db, **KW)
    assert _state(db)[2] == []  # d's bytes are stored nowhere now: not on record (as in a clean ingest ignoring it)
    assert s.warnings[-1].endswith(f"settled from what the database holds, without reading them: {d}")
    open_db(db).close()


@pytest.mark.e2e
def test_an_ingest_of_other_paths_never_copies_a_stopped_mix_into_the_parquet_copy(tmp_path):
    """Medium 2: with a stopped re-ingest of T pending, an ingest of another folder U wrote the Parquet copy of every
    table from the mixed database (T's content twice in files.parquet), exit 0, while every reader of it refused."""
    raw = _tree(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (other / "u.txt").write_bytes((raw / NAMES[2]).read_bytes() + b"\n")
    db, pq = tmp_path / "t.duckdb", tmp_path / "pq"
    kw = dict(KW, parquet_dir=pq)
    store.ingest([raw], db_path=db, **kw)
    before = duckdb.sql(f"SELECT path, sha256 FROM '{pq}/files.parquet' ORDER BY 1").fetchall()
    _a_to_b(raw)
    killed = _storagelab(*_ingest_cmd(raw, db), STORAGELAB_FAULT="batch-committed:1")
    assert killed.returncode == -signal.SIGKILL

    s = store.ingest([other], db_path=db, **kw)
    assert duckdb.sql(f"SELECT path, sha256 FROM '{pq}/files.parquet' ORDER BY 1").fetchall() == before
    assert s.warnings[-1].startswith(f"the Parquet copy in {pq} is not rewritten (it stays as it was): {db}: its last")

    store.ingest([raw], db_path=db, **kw)  # finishes T: the copy follows the database again
    copy = duckdb.sql(f"SELECT path, sha256 FROM '{pq}/files.parquet' ORDER BY 1").fetchall()
    assert copy == _state(db)[1] and len({sha for _, sha in copy}) == len(copy) == 5


@pytest.mark.e2e
def test_a_stopped_ingest_of_a_folder_moved_since_names_a_command_that_finishes_it(tmp_path):
    """Low 1: the refusal said to run `storagelab ingest T` again, which fails once T is moved or deleted (no such
    file or directory), and nothing said what else finishes it: the database stayed refused."""
    raw = _tree(tmp_path)
    db = tmp_path / "t.duckdb"
    store.ingest([raw], db_path=db, **KW)
    _a_to_b(raw)
    assert _storagelab(*_ingest_cmd(raw, db), STORAGELAB_FAULT="batch-committed:1").returncode == -signal.SIGKILL
    raw.rename(tmp_path / "moved")
    r = _storagelab("sql", "SELECT 1", "--db", str(db))
    assert (r.returncode, r.stderr) == (
        2,
        f"storagelab sql: {db}: its last ingest was stopped before it finished, so a count read from it now can be "
        f"wrong, and {raw} no longer exists: run `storagelab ingest {tmp_path} --db {db}` (a folder holding it) to "
        "finish it\n",
    )
    store.ingest([tmp_path], db_path=db, **KW)  # the command it names
    assert _state(db)[0] == []
    open_db(db).close()


def test_a_failed_write_of_the_parquet_copys_stamp_leaves_no_temporary_file(tmp_path):
    """reliability-7 Low 6, still on main in this campaign (a 2 MB tmpfs: db-parquet/.parquet-stamp.json.PID.tmp
    left): the write fails for real here, its temporary name a link to /dev/full (ENOSPC from the kernel)."""
    stamp = tmp_path / export.STAMP
    stamp.write_text("{}")
    tmp = tmp_path / f"{export.STAMP}.{os.getpid()}.tmp"
    tmp.symlink_to("/dev/full")
    with pytest.raises(OSError) as e:
        export._write_stamps(stamp, {"files": "1"})
    assert e.value.errno == errno.ENOSPC
    assert sorted(p.name for p in tmp_path.iterdir()) == [export.STAMP]
    assert stamp.read_text() == "{}"

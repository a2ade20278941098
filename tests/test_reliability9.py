"""The ninth reliability campaign (docs/reliability-9-store.md), the data side: each test does what the attack did.

High 1: DuckDB keeps a database's write-ahead log beside it, ``<db>.wal``, and replays it into the database whenever
it opens it (read-only too). A database in /tmp (a sticky folder, which ``file_refusal`` allows) had that name free
for any user: the second user copied there a WAL they had made from a copy of root's (world-readable) database, and
root's ``sql`` showed their rows and labels; root's next ``ingest`` kept them (and wrote on into their file)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys

import duckdb
import pytest
from test_reliability5_processes import _as_user
from test_reliability6_processes import USER, shared_tmp  # noqa: F401  (the fixture: a /tmp folder the user can enter)
from test_store_unfinished import KW, LOGS, NAMES

from storagelab import store
from storagelab.store import StoreError, connect

_CRAFT = """import duckdb, os, sys
c = duckdb.connect(sys.argv[1])
c.execute("PRAGMA disable_checkpoint_on_shutdown"); c.execute("SET checkpoint_threshold = '10GB'")
c.execute("UPDATE files SET study = 'theirs'")
os._exit(0)"""


@pytest.mark.e2e
@pytest.mark.skipif(os.geteuid() != 0, reason="the attack needs root and a second user")
def test_a_write_ahead_log_another_user_put_beside_a_database_in_tmp_is_refused(shared_tmp):  # noqa: F811
    """The user's WAL (made by their own DuckDB from a copy of root's database: here a subprocess that exits before
    checkpointing) copied by them to x.duckdb.wal in a sticky folder: without the fix `sql` read study 'theirs' and an
    ingest kept it. Now a read-only open refuses it (a write is refused for the folder itself), and the database
    holds what root wrote."""
    pub = shared_tmp / "pub"
    pub.mkdir()
    pub.chmod(0o1777)
    db = pub / "x.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE files (path VARCHAR, study VARCHAR)")
    con.execute("INSERT INTO files VALUES ('a.txt', 'ours')")
    con.close()
    craft = shared_tmp / "craft"
    craft.mkdir()
    shutil.copy(db, craft / "x.duckdb")
    subprocess.run([sys.executable, "-c", _CRAFT, str(craft / "x.duckdb")], check=True)
    (craft / "x.duckdb.wal").chmod(0o644)
    subprocess.run(
        ["cp", str(craft / "x.duckdb.wal"), str(pub / "x.duckdb.wal")], check=True, preexec_fn=_as_user(USER)
    )
    said = (
        f"{db}: {pub / 'x.duckdb.wal'} is a file of another user's ({USER}), beside the database: DuckDB would replay "
        "it into the database and append every write to it, so another user could change what the database holds; "
        "remove it if it is not yours, or give a database of your own"
    )
    with pytest.raises(StoreError) as e:
        connect(db, read_only=True)  # reading a database in /tmp stays allowed, but not through their WAL
    assert str(e.value) == said
    with pytest.raises(StoreError) as e:
        connect(db)  # writing one there is refused for the folder already (681f192)
    assert str(e.value).startswith(f"{db}: {db} is in {pub}, which can be written by every user (mode drwxrwxrwt)")
    os.replace(pub / "x.duckdb.wal", craft / "kept.wal")  # what DuckDB would have read: the user's rows
    shutil.copy(craft / "kept.wal", craft / "x.duckdb.wal")
    assert duckdb.connect(str(craft / "x.duckdb")).execute("SELECT study FROM files").fetchall() == [("theirs",)]
    con = connect(db, read_only=True)
    assert con.execute("SELECT study FROM files").fetchall() == [("ours",)]
    con.close()


def test_a_copy_in_another_folder_is_not_left_pointing_at_bytes_its_stored_file_no_longer_holds(tmp_path):
    """Attack (no kill): U/c.txt stored, T/d.txt its copy; c changes and only U is ingested. Before, d stayed in
    `duplicates` as `same_as U/c.txt` with bytes c no longer holds, so a selection by d's labels got c's new rows
    (`D,T/d.txt,56d8a67c,U/c.txt  F,U/c.txt,4cd0aecb`), until T was ingested again. Now d leaves `duplicates` (its
    bytes are stored by no file), the ingest says so, and the next ingest of T stores it: a clean ingest's state."""
    t, u = tmp_path / "T", tmp_path / "U"
    t.mkdir()
    u.mkdir()
    shutil.copy(LOGS / NAMES[0], u / "c.txt")
    shutil.copy(LOGS / NAMES[0], t / "d.txt")
    db = tmp_path / "db.duckdb"
    store.ingest([u, t], db_path=db, **KW)
    shutil.copy(LOGS / NAMES[1], u / "c.txt")
    said = store.ingest([u], db_path=db, **KW)
    assert said.warnings[1:] == [
        f"{t / 'd.txt'} was listed as a copy of {u / 'c.txt'}, which now holds other bytes: no longer listed as a "
        "copy (its own bytes are not stored; ingest its folder to store them)"
    ]
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM duplicates").fetchone() == (0,)
    con.close()
    store.ingest([t], db_path=db, **KW)
    con = duckdb.connect(str(db), read_only=True)
    shas = {p: s for p, s in con.execute("SELECT path, sha256 FROM files").fetchall()}
    con.close()
    digest = hashlib.sha256((LOGS / NAMES[0]).read_bytes()).hexdigest()
    assert shas == {str(t / "d.txt"): digest, str(u / "c.txt"): hashlib.sha256((u / "c.txt").read_bytes()).hexdigest()}

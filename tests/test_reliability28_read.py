"""Reliability-28, the read side (issue 26): see docs/reliability-28-read.md."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def test_a_database_on_a_fuse_mount_of_another_user_s_is_read_as_theirs_whatever_owner_it_shows(tmp_path, monkeypatch):
    # the attack: the second user's bindfs (--force-user=root --force-group=root --perms=0600 -o allow_other) over a
    # folder of theirs showed their database as root's 0600, in a root 0700 folder; root's `sql --db` of it ran their
    # view of read_text('/root/...') and printed root's 0600 file (and, without a view, their rows were root's word)
    import duckdb

    from storagelab import database, ownership
    from storagelab.errors import StoreError

    at = tmp_path / "mnt"
    at.mkdir(mode=0o700)
    db = at / "x.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE t (a INT)")
        con.execute("CREATE VIEW fio_leak AS SELECT 'ROOTSECRET' AS content")
    db.chmod(0o600)
    them = os.getuid() + 1002
    info = tmp_path / "mountinfo"  # the line the kernel wrote for the attack's mount, at this test's folder
    info.write_bytes(
        Path("/proc/self/mountinfo").read_bytes()
        + f"42 27 0:39 / {at} rw,nosuid,nodev,relatime - fuse /tmp/h44r-u/back rw,user_id={them},group_id={them},"
        "default_permissions,allow_other\n".encode()
    )
    monkeypatch.setattr(ownership, "MOUNTINFO", str(info))
    with pytest.raises(StoreError, match=r"of another user's \(on a FUSE file system they mounted.*\(fio_leak\)"):
        database.connect(db, read_only=True)  # main: opened, `SELECT * FROM fio_leak` gave ROOTSECRET
    with duckdb.connect(str(db)) as con:
        con.execute("DROP VIEW fio_leak")
    database.connect(db, read_only=True).close()
    assert database.their_writers() == {them}  # main: set() (its rows root's own word: pages of any file they name)


def test_an_export_of_one_s_own_database_keeps_nothing_of_another_user_s_rows_in_the_dataset(tmp_path, monkeypatch):
    # the attack: root's `export --db THEIRS --dataset ROOTS` (their copy of root's database, every bandwidth 1 B/s),
    # then `export --db OWN --dataset ROOTS`: "0 partition(s) written, 1 unchanged" (a partition's stamp is its
    # files' labels and SHA-256s, which their rows copied), and ROOTS went on holding their numbers
    import duckdb

    from storagelab import database, dataset

    own, theirs = own_and_theirs(tmp_path)

    def export(db):
        with database.connect(db, read_only=True) as con:
            dataset.export(con, tmp_path / "roots", db)
        with dataset.open_dataset(tmp_path / "roots") as con:
            return con.execute("SELECT count(*), sum(value) FROM fio_log_samples").fetchone()

    with duckdb.connect(str(own)) as con:
        ours = con.execute("SELECT count(*), sum(value) FROM fio_log_samples").fetchone()
    assert ours == (64, 7838506)
    monkeypatch.setattr(database, "THEIRS", [str(theirs)])  # read as the second user's (their_database_read, unrooted)
    monkeypatch.setattr(database, "THEIR_UIDS", {str(theirs): os.getuid() + 1002})
    assert export(theirs) == (64, 64)
    database.THEIRS.clear()  # a later process: root's `export --db OWN --dataset ROOTS`
    assert export(own) == ours  # main: (64, 64), their numbers kept as "unchanged"
    monkeypatch.setattr(database, "THEIRS", [str(theirs)])
    assert export(theirs) == (64, 64)  # and the other way round: root's numbers were kept as theirs


def test_a_private_view_made_in_a_sticky_folder_of_another_user_s_cannot_be_swapped_for_theirs(tmp_path, monkeypatch):
    # the attack: root's 0600 database in a sticky (1777) folder of the second user's, who may rename any name in it;
    # they renamed root's private view folder (.db.duckdb.read-*/, a hard link of root's database) away once it was
    # made and put a folder of theirs, holding their database with a view of read_text('/root/...'), under its name:
    # root's `sql --db` ran the view (8 of 30 runs printed root's 0600 file)
    import duckdb

    from storagelab import database

    if os.geteuid() != 0:
        pytest.skip("needs root to give the folder to another user")
    folder, theirs = tmp_path / "st", tmp_path / "theirs"
    folder.mkdir()
    theirs.mkdir()
    db = folder / "db.duckdb"
    duckdb.connect(str(db)).close()
    db.chmod(0o600)
    with duckdb.connect(str(theirs / "db.duckdb")) as con:
        con.execute("CREATE VIEW fio_leak AS SELECT 'ROOTSECRET' AS content")
    os.chown(folder, 1002, 1002)
    folder.chmod(0o1777)
    took = database._spill_config_of

    def swapped(given, real):  # between the view's making and DuckDB's open: the second user's two renames
        for view in folder.glob(".db.duckdb.read-*"):
            view.rename(folder / "gone")
            theirs.rename(view)
        return took(given, real)

    monkeypatch.setattr(database, "_spill_config_of", swapped)
    with database.connect(db, read_only=True) as con:
        assert not con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()  # main: fio_leak


def own_and_theirs(tmp_path: Path) -> tuple[Path, Path]:
    """A database of one fio log ingested in-process, and a copy of it whose every sample value is 1 (theirs)."""
    import shutil

    import duckdb

    from storagelab.store import ingest

    (tmp_path / "logs").mkdir()
    shutil.copy(Path(__file__).parent / "fixtures/fio/3.33/logs/raw_clat.1.log", tmp_path / "logs")
    (tmp_path / "m.csv").write_text("path,study,label\n")
    own, theirs = tmp_path / "own.duckdb", tmp_path / "theirs.duckdb"
    ingest(
        [tmp_path / "logs"], db_path=own, manifest_path=tmp_path / "m.csv", parquet_dir=False, progress=False, workers=1
    )
    shutil.copy(own, theirs)
    with duckdb.connect(str(theirs)) as con:
        con.execute("UPDATE fio_log_samples SET value = 1")
    return own, theirs

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

"""Reliability-34, the read side (h2): root's reads and runs of files another local user controls."""

from __future__ import annotations

import array
import grp
import os
import socket

import pytest

from storagelab import livewriters, ownership, usernames
from storagelab.livewriters import unseen_writer


def _hidden(path) -> socket.socket:
    """A descriptor open for writing on ``path``, sent through a UNIX socket and closed: held only in the queue."""
    fd = os.open(path, os.O_RDWR)
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    a.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))])
    os.close(fd)
    a.close()
    return b


def test_a_file_held_for_writing_only_in_a_sockets_queue_is_not_ours(tmp_path, monkeypatch):
    # reliability-34: the second user opened root's 0666 notebook for writing, sent the descriptor through a socket of
    # theirs and closed it; root made it 0644, `storagelab run` passed it (/proc showed no holder), and the cell they
    # wrote through the descriptor they took back ran as root
    tmp_path.chmod(0o700)
    nb, mine = tmp_path / "nb.ipynb", tmp_path / "mine.ipynb"
    for p in (nb, mine):
        p.write_text("{}")
        p.chmod(0o644)
    monkeypatch.setattr(livewriters, "_processes", list)  # the visible holders' scan (seconds here): none
    queue = _hidden(nb)
    try:
        assert "where /proc shows no process holding it" in (ownership.file_writers(str(nb)) or "")
        with open(mine, "r+"):  # held for writing by this process (root's own): not another user's
            assert unseen_writer(mine, os.stat(mine), loose=ownership.loose_file) is None
        assert unseen_writer(mine, os.stat(mine), loose=ownership.loose_file) is None
    finally:
        queue.close()  # the queued descriptor goes with it
    assert unseen_writer(nb, os.stat(nb), loose=ownership.loose_file) is None


def test_a_groups_members_are_those_of_every_entry_with_its_gid(monkeypatch):
    # reliability-34: root's folder of group h51g (listing no one, 0775) passed as root's alone while the second user
    # was a member of h51g2, the same gid (`groupadd -o`): getgrgid gives the first entry; their next login's
    # processes have the gid and renamed their notebook over root's
    first, second = grp.struct_group(("h51g", "x", 4242, [])), grp.struct_group(("h51g2", "x", 4242, ["bob"]))
    monkeypatch.setattr(usernames.grp, "getgrgid", lambda gid: first)
    monkeypatch.setattr(usernames.grp, "getgrall", lambda: [first, second])
    monkeypatch.setattr(usernames, "group_users", lambda gid: set())
    monkeypatch.setattr(usernames.pwd, "getpwall", list)
    assert usernames.group_members(4242) == {"bob"}


def test_a_database_held_for_writing_in_a_sockets_queue_is_theirs_to_an_ingest_too(tmp_path, monkeypatch):
    # reliability-34: root's database 0666 with their view of read_text(root's file), their descriptor queued in a
    # socket, then 0600: a read-write open (an ingest) was judged after DuckDB's own O_RDWR open, which the kernel's
    # count of writers cannot tell from theirs, and the view ran
    import duckdb

    from storagelab import database
    from storagelab.errors import StoreError

    monkeypatch.setattr(livewriters, "_processes", list)
    tmp_path.chmod(0o700)
    db, secret = tmp_path / "rw.duckdb", tmp_path / "secret.txt"
    secret.write_text("root's\n")
    with duckdb.connect(str(db)) as con:
        con.execute(f"CREATE VIEW fio_results AS SELECT content FROM read_text('{secret}')")
    db.chmod(0o600)
    queue = _hidden(db)
    try:
        for read_only in (True, False):
            with pytest.raises(StoreError, match="views or macros"):
                database.connect(db, read_only=read_only).close()
    finally:
        queue.close()


def test_a_datasets_meta_json_others_can_change_makes_it_theirs(tmp_path):
    # reliability-34: root's dataset with meta.json made 0666 (or _storagelab 0777, their meta.json renamed in): the
    # second user left a part of `files` out of its list; open_dataset read 31 rows of 38, unmarked, rc 0
    from storagelab import dataset

    where = tmp_path / "ds"
    part = where / "files" / "part-1.parquet"
    part.parent.mkdir(parents=True)
    part.write_bytes(b"PAR1")
    for d in (where, part.parent):
        d.chmod(0o755)
    part.chmod(0o644)
    meta, info = where / "_storagelab" / "meta.json", {"parts": {"files": {"files/part-1.parquet": 4}}}
    meta.parent.mkdir(mode=0o755)
    meta.parent.chmod(0o755)
    meta.write_text("{}")
    meta.chmod(0o644)
    assert dataset._only_ours(where, info)
    meta.chmod(0o666)
    assert not dataset._only_ours(where, info)
    meta.chmod(0o644)
    meta.parent.chmod(0o777)
    assert not dataset._only_ours(where, info)


def test_pythonexecutable_in_another_users_folder_is_refused(tmp_path):
    # reliability-34 (Low 1): CPython takes its prefix (its standard library) from PYTHONEXECUTABLE's folder, which
    # was not checked: the kernels would run with the second user's os.py
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    assert "PYTHONEXECUTABLE" in (ownership.environment_refusal({"PYTHONEXECUTABLE": str(shared / "python")}) or "")
    assert ownership.environment_refusal({"PYTHONEXECUTABLE": "/usr/bin/python3"}) is None

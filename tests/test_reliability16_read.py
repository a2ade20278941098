"""Reliability-16 (h7): the read side of reliability-15's fixes."""

import os

import pytest

from storagelab import readcopies
from storagelab.errors import StoreError


def _shared(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)  # as /tmp
    return shared


def test_a_hard_link_in_tmp_to_another_database_is_not_read(tmp_path):
    # with fs.protected_hardlinks=0 another user can link root's other database into /tmp under a name of theirs:
    # root's `sql --db /tmp/their-name` read it (the readers'-views exception took any extra name for a view)
    secret = tmp_path / "secret.db"
    secret.write_bytes(b"root's other database")
    os.link(secret, _shared(tmp_path) / "theirs.db")
    with pytest.raises(StoreError, match="a hard link"):
        readcopies.read_target(tmp_path / "shared" / "theirs.db")


def test_the_readers_views_beside_a_database_in_tmp_are_still_allowed(tmp_path):
    db = _shared(tmp_path) / "lab.db"
    db.write_bytes(b"a database")
    for reader in ("1-2-abc", "3-4-def"):
        view = tmp_path / "shared" / f".lab.db.read-{reader}"
        view.mkdir(mode=0o700)
        os.link(db, view / "lab.db")
    real, ident = readcopies.read_target(db)
    assert (real, ident) == (db, (db.stat().st_dev, db.stat().st_ino))


@pytest.mark.parametrize("raw", ["abc", "1e3", "0", "-1"])
def test_an_odd_file_size_limit_is_one_line_not_a_traceback(raw):
    from storagelab import ingest_open  # noqa: PLC0415

    assert ingest_open._limit(raw) == (
        64 * 2**30,
        f"STORAGELAB_MAX_FILE_BYTES={raw!r} is not a number of bytes above 0: not read (unset it)",
    )
    assert ingest_open._limit(" 100 ") == (100, None)
    assert ingest_open._limit("") == (64 * 2**30, None)

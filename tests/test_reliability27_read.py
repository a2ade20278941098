"""Reliability-27, the read side (issue 26): see docs/reliability-27-read.md."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("folder_mode", [0o777, 0o1777])
def test_a_wal_others_can_write_renamed_away_after_the_reader_took_it_still_refuses_its_views(
    tmp_path, monkeypatch, folder_mode
):
    # root's database (0600) and its WAL (0666: root's umask 000), in a folder the second user can rename in (0777:
    # the reader copies both; 1777 of theirs: hard-linked). They wrote a view into the WAL and renamed the WAL away
    # between the reader's copy (or link) of it and the check of its mode: root's `sql --db` ran the view
    import duckdb

    from storagelab import database
    from storagelab.errors import StoreError

    folder = tmp_path / "f"
    folder.mkdir()
    db, wal = folder / "x.duckdb", folder / "x.duckdb.wal"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE t (a INT)")
        con.execute("CHECKPOINT")
        con.execute("PRAGMA disable_checkpoint_on_shutdown")
        con.execute("CREATE VIEW fio_leak AS SELECT 'ROOTSECRET' AS content")
    db.chmod(0o600)
    wal.chmod(0o666)
    folder.chmod(folder_mode)
    took = database._spill_config_of

    def renamed_away(given, real):  # called between the private view's copy (or link) and DuckDB's open
        wal.rename(folder / "keep")
        return took(given, real)

    monkeypatch.setattr(database, "_spill_config_of", renamed_away)
    with pytest.raises(StoreError, match=r"other users can write \(mode 0622\) with views or macros \(fio_leak\)"):
        database.connect(db, read_only=True)  # main: opened, `SELECT * FROM fio_leak` gave ROOTSECRET

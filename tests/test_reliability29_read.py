"""Reliability-29, the read side (issue 26): see docs/reliability-29-read.md."""

from __future__ import annotations

import os
from types import SimpleNamespace

# root's own logs (three fio outputs of data/raw/homelab-mergerfs) as root's ingest stored them
_ROOTS = [
    ("/root/h45r/logs/fio-autotier-ext4.txt", "56d8a67c1a0dd97b3cf85e44b72a8ccbb8e59129b9085a756f5597678cca654a"),
    ("/root/h45r/logs/fio-btrfs-raid1.txt", "717dcc9f73ca1d79c7f97dbcf16d45b96b71b225cd39a88b4cf78ac94af72d14"),
    ("/root/h45r/logs/fio-zfs-mirror-zfs0.8.4.txt", "cd480f10da1056925e18d5017eb45f53c9066d26a3d9dd7e1c75c40d5a1165da"),
]


def _former_ids(monkeypatch, rows: list[dict], old: dict) -> dict:
    """spark_ingest._old_file_ids over a former dataset whose ``files`` parts hold ``rows`` (every listed part intact)."""
    from storagelab import spark_ingest

    monkeypatch.setattr(spark_ingest, "hadoop_size", lambda spark, target: 1)
    collected = SimpleNamespace(collect=lambda: rows)
    read = SimpleNamespace(parquet=lambda *paths: SimpleNamespace(select=lambda *cols: collected))
    spark = SimpleNamespace(read=SimpleNamespace(option=lambda key, value: read))
    return spark_ingest._old_file_ids(spark, "/root/h45r/ds", old | {"parts": {"files": {"files/p.parquet": 1}}})


def test_a_spark_ingest_keeps_no_file_id_of_another_user_s_rows_and_no_id_two_files_held(monkeypatch):
    # the attack: root's `export --db THEIRS --dataset ROOTS` (their database: root's three files, every one file_id 1),
    # then root's `spark-ingest LOGS ROOTS` of root's own logs kept their ids: the three files all file_id 1, each
    # table's rows joined to every file (9 rows for 3), and meta.json no longer said whose rows had been there, exit 0
    from storagelab import spark_ingest

    theirs = [{"path": p, "sha256": s, "file_id": 1} for p, s in _ROOTS]
    assert _former_ids(monkeypatch, theirs, {"rows_of_others": [1002]}) == {}
    assert _former_ids(monkeypatch, theirs, {}) == {}  # one id held by three files (however it came there): none kept
    odd = [{"path": _ROOTS[0][0], "sha256": _ROOTS[0][1], "file_id": 2**31}, *theirs[1:2]]  # not an INTEGER id
    assert _former_ids(monkeypatch, odd, {}) == {(_ROOTS[1][0], _ROOTS[1][1]): 1}
    own = [{"path": p, "sha256": s, "file_id": i} for i, (p, s) in enumerate(_ROOTS, 1)]
    assert _former_ids(monkeypatch, own, {}) == {(p, s): i for i, (p, s) in enumerate(_ROOTS, 1)}  # root's: kept
    stored = [dict(key=p, sha256=s, size=1, mtime_ns=0, tool="fio", tool_version=None, format="fio-normal",
                   parser_version=1, n_rows=1, warnings=[]) for p, s in _ROOTS]  # fmt: skip
    ids = _former_ids(monkeypatch, theirs[:1] + [dict(theirs[1], file_id=7)], {})  # one file 1, one 7
    _, id_rows = spark_ingest._file_rows(
        stored, ids, {}, spark_ingest.all_tables()["files"], spark_ingest.datetime.now()
    )
    assert [r[1] for r in id_rows] == [1, 7, 8]


def test_an_export_keeps_no_part_of_a_dataset_whose_rows_were_anyone_s(tmp_path, monkeypatch):
    # the attack: root's `export --db THEIRS --dataset ROOTS` (the second user's 0666 database: its rows anyone's, -1;
    # every bandwidth 1 B/s), then root's `export --db OWN --dataset ROOTS` of its own group-writable (0660) database,
    # also -1: "0 partition(s) written, 1 unchanged", and ROOTS went on holding their numbers under root's command
    from test_reliability28_read import own_and_theirs

    from storagelab import database, dataset

    own, theirs = own_and_theirs(tmp_path)
    theirs.chmod(0o666)
    own.chmod(0o660)

    def export(db):
        monkeypatch.setattr(database, "THEIRS", [])  # each export its own process
        monkeypatch.setattr(database, "THEIR_UIDS", {})
        with database.connect(db, read_only=True) as con:
            dataset.export(con, tmp_path / "roots", db)
        with dataset.open_dataset(tmp_path / "roots") as con:
            return con.execute("SELECT count(*), sum(value) FROM fio_log_samples").fetchone()

    assert export(theirs) == (64, 64)
    assert dataset.read_meta(tmp_path / "roots")["rows_of_others"] == [-1]
    assert export(own) == (64, 7838506)  # main: (64, 64), their numbers kept as "unchanged"


def test_a_database_renamed_away_while_connect_looks_at_it_is_not_called_a_non_regular_file(tmp_path, monkeypatch):
    # reliability-28 Low 1: connect looked at the name four times (is_dir, exists, is_file, stat); the second user
    # renaming it away and back in between had `sql --db` say "is not a regular file (-rw-r--r--)" of a regular file
    import duckdb

    from storagelab import database

    db = tmp_path / "db.duckdb"
    duckdb.connect(str(db)).close()
    real_stat, looks = os.stat, []

    def stat(path, *a, **k):
        if os.fspath(path) == str(db):
            looks.append(path)
            if len(looks) == 3:  # gone for this one look (renamed away and back)
                raise FileNotFoundError(2, "No such file or directory", str(path))
        return real_stat(path, *a, **k)

    monkeypatch.setattr(os, "stat", stat)
    with database.connect(db, read_only=True) as con:
        assert con.execute("SELECT 42").fetchone() == (42,)  # main: StoreError "... is not a regular file (-rw-r--r--)"

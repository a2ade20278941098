"""Reliability-29, this session's own fixes attacked (issue 26): see docs/reliability-29-newest.md."""

from __future__ import annotations

import pytest
from test_reliability29_read import _ROOTS, _former_ids


def test_a_spark_ingest_re_run_keeps_no_file_id_that_leaves_no_room_for_its_new_files(monkeypatch):
    # the attack: a dataset's files part with one file_id edited to 2**31 - 1 (a valid INTEGER, kept by 918f84e), then
    # `spark-ingest LOGS DS` with one log more: its id counted from the largest kept, 2**31, and PySpark's traceback
    # (VALUE_OUT_OF_BOUNDS) at every re-run onto that dataset, which stayed as it was (exit 1)
    from storagelab import spark_ingest

    rows = [{"path": p, "sha256": s, "file_id": i} for (p, s), i in zip(_ROOTS, (1, 2**31 - 1, 2**30 + 1), strict=True)]
    ids = _former_ids(monkeypatch, rows, {})
    assert ids == {_ROOTS[0]: 1}  # main: 2**31 - 1 and 2**30 + 1 kept too
    stored = [dict(key=p, sha256=s, size=1, mtime_ns=0, tool="fio", tool_version=None, format="fio-normal",
                   parser_version=1, n_rows=1, warnings=[]) for p, s in [*_ROOTS, ("/root/h45r/logs/new.txt", "0" * 64)]]  # fmt: skip
    _, id_rows = spark_ingest._file_rows(
        stored, ids, {}, spark_ingest.all_tables()["files"], spark_ingest.datetime.now()
    )
    assert [r[1] for r in id_rows] == [1, 2, 3, 4]
    twice = [{"path": _ROOTS[0][0], "sha256": _ROOTS[0][1], "file_id": i} for i in (5, 6)]  # one file, two ids
    assert _former_ids(monkeypatch, twice, {}) == {}  # main: 5 or 6, as the set's order fell
    assert _former_ids(monkeypatch, [dict(twice[0], file_id=True)], {}) == {}  # a BOOLEAN column: main kept True


def test_run_names_a_folder_at_the_database_s_place_in_its_own_words(tmp_path, monkeypatch):
    # `storagelab run` (no --db option) with a folder at data/parsed/storagelab.duckdb, or `-p db_path DIR` of a folder
    # that is no dataset: "... is a folder: --db takes a database file, e.g. DIR/storagelab.duckdb"
    from storagelab import paths
    from storagelab.analysis.db import older_database

    monkeypatch.setattr(paths, "ROOT", tmp_path)
    monkeypatch.setattr(paths, "DB", tmp_path / "data" / "parsed" / "storagelab.duckdb")
    paths.DB.mkdir(parents=True)
    said = (
        "the default database data/parsed/storagelab.duckdb is a folder, neither a database file nor a dataset "
        "(storagelab export --dataset): name one"
    )
    assert older_database(None) == said
    assert older_database(str(tmp_path)) == (
        f"-p db_path {tmp_path} is a folder, neither a database file nor a dataset (storagelab export --dataset): "
        "name one"
    )


def test_a_database_gone_for_a_moment_is_never_opened_by_its_name(tmp_path):
    # the attack: root's read of the second user's database (connect(read_only), as sql --db / run -p db_path / compare
    # do) while they exchange it with a FIFO by three renames: _private_copy's own open found no file (ENOENT, mid-swap)
    # and returned None, connect then had DuckDB open the name, their FIFO by then: blocked for good, two SIGINTs did
    # nothing, SIGKILL only (2 of 2 in-process loops within 300 tries)
    from storagelab import database
    from storagelab.errors import StoreError

    gone = tmp_path / "x.duckdb"
    with pytest.raises(StoreError):
        database._private_copy(gone, gone, (1, 2))  # main: None (open it by its name)

"""Reliability-28 (store): the stamp rule (size, mtime, inode, ctime; store/filestamps.py) met by a stopped
ingest's mix. In-process: a stop is a KeyboardInterrupt raised at the fault stage, as in test_store_unfinished."""

from __future__ import annotations

import pytest
from test_store_identity import CONTENTS, _ingest, state

from storagelab import store

C0, C1 = CONTENTS[0], CONTENTS[0].replace(b"1", b"2", 1)  # one size
KW = dict(manifest_path=None, parquet_dir=False, progress=False, workers=1)


def test_a_stopped_ingests_path_stored_and_on_record_as_a_copy_is_not_promoted_onto_itself(tmp_path, monkeypatch):
    """s2/a, a copy on record of s1/c, rewritten (its stamp gone) while s1/c took s1/b's bytes; `ingest s2` read
    s2/a and stored it (its original no longer held the bytes) and was stopped before the copy's row left
    `duplicates`: s2/a both stored and a copy. The ingest that finishes it read s1/c (now a copy of s1/b: gone),
    skipped s2/a on its stamp and promoted s2/a, "the copy still on disk", onto s1/c's rows: 'Duplicate key
    "path: .../s2/a.txt"', at every try, the store refused by every reader (reliability-28, found by the loop)."""
    logs = tmp_path / "logs"
    for name, data in (("s1/b.txt", C1), ("s1/c.txt", C0), ("s2/a.txt", C0)):
        (logs / name).parent.mkdir(parents=True, exist_ok=True)
        (logs / name).write_bytes(data)
    db = tmp_path / "d.duckdb"
    _ingest(logs, db)
    (logs / "s1/c.txt").write_bytes(C1)
    (logs / "s2/a.txt").write_bytes(C0)  # the same bytes, another ctime: read again

    def stop(stage: str) -> None:
        if stage == "before-removals":
            raise KeyboardInterrupt

    monkeypatch.setattr(store.faults, "inject", stop)
    with pytest.raises(KeyboardInterrupt):
        store.ingest([logs / "s2"], db_path=db, **KW)
    monkeypatch.undo()
    _ingest(logs, db)
    _ingest(logs, tmp_path / "clean.duckdb")
    assert state(db, logs) == state(tmp_path / "clean.duckdb", logs)

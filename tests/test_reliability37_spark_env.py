"""Reliability-37 (spark-env): a dataset's commit and sweep in the folder whose lock the writer holds."""

from __future__ import annotations

import json
import os

import pytest


@pytest.fixture
def two(tmp_path, monkeypatch):
    """A (its lock held, as spark-ingest's ``_one_writer`` holds it; a listed and a stray part file) and B (another
    committed dataset, a part file in each table)."""
    from storagelab import dataset, spark_ingest

    for d in "AB":
        (tmp_path / d / "_storagelab").mkdir(parents=True)
        (tmp_path / d / "files" / "tool=x").mkdir(parents=True)
        (tmp_path / d / "files" / "tool=x" / f"part-{d}.parquet").write_bytes(b"x")
    (tmp_path / "A" / "files" / "tool=x" / "part-stray.parquet").write_bytes(b"x")
    b_parts = {name: {f"{name}/part-B.parquet": 1} for name in dataset._tables() if name != "files"}
    for name in b_parts:  # B's other tables, which the sweep of A walks after the files table
        (tmp_path / "B" / name).mkdir()
        (tmp_path / "B" / name / "part-B.parquet").write_bytes(b"x")
    b_meta = json.dumps({"parts": {"files": {"files/tool=x/part-B.parquet": 1}} | b_parts})
    (tmp_path / "B" / "_storagelab" / "meta.json").write_text(b_meta)
    (tmp_path / "B" / "_storagelab" / ".lock").write_bytes(b"")
    with dataset.writer_lock(tmp_path / "A" / "_storagelab" / ".lock") as lock:
        monkeypatch.setitem(spark_ingest._LOCKS, tmp_path / "A", lock)
        yield tmp_path, b_meta


def _swap(w) -> None:
    (w / "A").rename(w / "Aold")
    (w / "B").rename(w / "A")


def test_the_dataset_folder_swapped_during_the_sweep_deletes_nothing_of_the_other_folder(two, monkeypatch):
    """`mv A Aold; mv B A` (B another committed dataset) while the sweep ran, after the commit: the check before the
    sweep (reliability-36's `still_held`) had passed and the walk went on by name into B: B's part files deleted,
    its meta.json listing them, exit 0 (`export --dataset` and `ingest --dataset` with real timing, no hooks: 3 of 6
    tries, `exreal.py`). The sweep now works through the held folder's descriptor: B untouched."""
    from storagelab import spark_ingest

    w, b_meta = two
    real_unlink = os.unlink

    def unlink(path, *a, **k):
        if str(path).endswith("part-stray.parquet") and (w / "B").exists():
            _swap(w)
        return real_unlink(path, *a, **k)

    monkeypatch.setattr(os, "unlink", unlink)
    spark_ingest._sweep(None, str(w / "A"), {"files": {"files/tool=x/part-A.parquet": 1}})
    listed = [p for ps in json.loads(b_meta)["parts"].values() for p in ps]
    assert [p for p in listed if not (w / "A" / p).exists()] == []  # B (now at A) untouched
    assert (w / "A" / "_storagelab" / "meta.json").read_text() == b_meta
    assert sorted(p.name for p in (w / "Aold" / "files" / "tool=x").iterdir()) == ["part-A.parquet"]


def test_the_dataset_folder_swapped_as_meta_json_is_renamed_commits_in_the_folder_written(two, monkeypatch):
    """The same swap between meta.json's fsync and its rename: the rename went by name into B, which had no such
    temporary file: a bare "...tmp: No such file or directory", exit 2 (`exreal.py`), the commit lost. Now meta.json
    is written in the folder the run wrote and holds; B untouched."""
    from storagelab import spark_ingest

    w, b_meta = two
    real_fsync = os.fsync

    def fsync(fd):
        real_fsync(fd)
        if (w / "B").exists():
            _swap(w)

    monkeypatch.setattr(os, "fsync", fsync)
    spark_ingest._write_meta(None, str(w / "A"), {"parts": {"files": {"files/tool=x/part-A.parquet": 1}}})
    assert (w / "A" / "_storagelab" / "meta.json").read_text() == b_meta
    assert "part-A" in (w / "Aold" / "_storagelab" / "meta.json").read_text()


def test_parts_written_while_the_folder_was_swapped_away_and_back_are_not_committed(two):
    """`mv A Aold; mv B A` as a table's write began, `mv A B; mv Aold A` before the commit (its lock check then
    passed): the table's part files were in B, A's meta.json listed them (missing), the sweep deleted A's old
    ones, exit 0 (`export --dataset`, hooks: `exback.py`; spark-ingest's `_write_meta` the same). Now a listed
    part file not in the held folder at its size refuses the commit."""
    import pytest

    from storagelab import spark_ingest
    from storagelab.errors import StoreError

    w, _ = two
    (w / "B" / "files" / "tool=x" / "part-new.parquet").write_bytes(b"xy")  # written while B had A's name
    parts = {"files": {"files/tool=x/part-A.parquet": 1, "files/tool=x/part-new.parquet": 2}}
    with pytest.raises(StoreError, match="part-new.parquet, a part file this run wrote, is not in that folder"):
        spark_ingest._write_meta(None, str(w / "A"), {"parts": parts})
    assert not (w / "A" / "_storagelab" / "meta.json").exists()

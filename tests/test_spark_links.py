"""spark-ingest of a local folder reads a symlink inside the folder through it, as the local ingest does, while a
file Spark listed as a file is opened by its own name unfollowed (a link put there since: not read through)."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

FIO = Path(__file__).parent / "fixtures" / "fio" / "3.33" / "json_only.txt"


def test_a_symlink_inside_a_local_folder_is_read_and_a_link_put_at_a_file_is_not(tmp_path, monkeypatch):
    pytest.importorskip("pyspark")
    from storagelab import spark_ingest  # noqa: PLC0415

    data = tmp_path / "data"
    data.mkdir()
    (data / "a.txt").write_bytes(FIO.read_bytes())
    (data / "b.txt").symlink_to("a.txt")  # a link inside the folder: read through it
    (data / "c.txt").write_bytes(FIO.read_bytes())
    outside = tmp_path / "outside.txt"
    outside.write_bytes(FIO.read_bytes())
    now, size = datetime.now(UTC), FIO.stat().st_size
    rows = [dict(path=f"file:{data}/{n}", modificationTime=now, length=size) for n in ("a.txt", "b.txt", "c.txt")]
    real_chunk = spark_ingest.parse_chunk

    def swapped(jobs, contents):  # c.txt, listed as a file, replaced by a link once listed
        (data / "c.txt").unlink()
        (data / "c.txt").symlink_to(outside)
        return real_chunk(jobs, contents)

    monkeypatch.setattr(spark_ingest, "parse_chunk", swapped)
    out = list(spark_ingest.parse_partition(rows, (tmp_path / "staging").as_uri(), spark_ingest.local_input(str(data))))
    assert [(r["n_rows"] > 0, (r["error"] or {}).get("message")) for r in out] == [
        (True, None),
        (True, None),  # b.txt: the code before this test's fix refused it as a link put in its place
        (False, f"[Errno 40] a symlink was put in its place while it was read: '{data}/c.txt'"),
    ]
    assert [os.path.basename(r["key"]) for r in out] == ["a.txt", "a.txt", "c.txt"]  # a link is stored as its target

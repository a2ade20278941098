"""Reliability-36 (store): 7ce0a048 stores a listed symlink's read only while its key still names the inode read, but
did not look up a key holding a backslash (a name that is not UTF-8 is stored with ``\\xNN`` escapes; a name may
hold a ``\\`` of its own). On a quiet ext4 image (inode numbers reused at once): cur.txt -> ``z\\q.txt`` listed, the
target deleted, a same-size m2.txt written (given its inode number) and cur.txt re-pointed to it before the read:
``z\\q.txt``, gone, was held with m2.txt's bytes, failed 0 (4 of 4 names: a backslash, not UTF-8, both, a literal
``\\xff``). Now such a key is checked through the file the link leads to at the read."""

from __future__ import annotations

import os

import pytest

from storagelab.store import listing

NAMES = ["z\\q.txt", os.fsdecode(b"z\xff.txt"), os.fsdecode(b"z\\\xfe.txt"), "z\\xff.txt"]


def _two_log_folders(tmp_path):
    """tmp_path/mnt/A and B, each a sub/ of a log and an ignored .log, and an ignore file saying ``*.log``."""
    from test_store_identity import CONTENTS

    logs = tmp_path / "mnt"
    for d in "AB":
        (logs / d / "sub").mkdir(parents=True)
        (logs / d / "sub" / "a.txt").write_bytes(CONTENTS[0])
        (logs / d / "sub" / "skip.log").write_bytes(CONTENTS[1])
        (logs / d / ".storagelabignore").write_text("*.log\n")
    return logs


@pytest.mark.parametrize("name", NAMES, ids=["backslash", "not-utf8", "both", "literal-escape"])
def test_a_link_to_a_backslash_key_re_pointed_to_a_reused_inode_number_is_refused(tmp_path, name):
    (tmp_path / name).write_text("x\n")
    (tmp_path / "cur.txt").symlink_to(name)
    (item,) = [f for f in listing.list_files([tmp_path]) if f.path.endswith("cur.txt")]
    st = os.stat(tmp_path / name)
    assert "\\" in item.key and item.link
    assert listing.led_elsewhere(item, st) is None  # untouched: read as listed
    (tmp_path / "m2.txt").write_text("y\n")
    os.remove(tmp_path / name)
    os.remove(tmp_path / "cur.txt")
    (tmp_path / "cur.txt").symlink_to("m2.txt")
    reused = list(os.stat(tmp_path / "m2.txt"))
    reused[1], reused[2] = item.ino, item.dev  # st_ino, st_dev: what a reused inode number reads as
    assert isinstance(listing.led_elsewhere(item, os.stat_result(reused)), OSError)


def test_a_target_under_data_raw_re_pointed_after_pinned_raw_is_taken_under_the_pinned_folder(tmp_path, monkeypatch):
    """data/raw a symlink (-> A), `ingest data/raw/sub` with data/raw re-pointed to B between ddd0e33b's pinned_raw
    and the target's pin (hooked): the target was B/sub, data/raw taken as A, so B/sub was a folder outside data/raw:
    B's data/raw ignore file (``*.log``) was not read and B/sub/skip.log was stored, its manifest not read either,
    exit 0. Now a target named under data/raw/ is taken under the folder pinned_raw took."""

    from storagelab import paths
    from storagelab.store import ingest, pipeline

    logs = _two_log_folders(tmp_path)
    raw = tmp_path / "data" / "raw"
    raw.parent.mkdir()
    monkeypatch.setattr(paths, "RAW", raw)
    monkeypatch.setattr(paths, "MANIFEST", raw / "manifest.csv")

    def point(d):
        (tmp_path / ".t").symlink_to(logs / d)
        os.replace(tmp_path / ".t", raw)

    point("A")
    pin = pipeline.pinned_raw
    monkeypatch.setattr(pipeline, "pinned_raw", lambda: (pin(), point("B"))[0])
    for i, target in enumerate([raw / "sub", raw / "sub" / ".." / "sub"]):
        s = ingest([target], db_path=tmp_path / f"d{i}.duckdb", manifest_path=None, parquet_dir=False, progress=False)
        point("A")
        assert (s.ingested, s.ignored, s.failed) == (1, 1, 0), s.line()


def test_spark_ingest_matches_ignore_files_with_the_data_raw_its_input_was_pinned_with(tmp_path, monkeypatch):
    """`spark-ingest data/raw/sub DS`, data/raw a symlink re-pointed from B to A while the run took the dataset's lock
    and read its old meta (seconds): the INPUT was pinned to B/sub, and _job's ignore matcher took data/raw again (A):
    B/sub outside it, B's ignore file (``*.log``) not read, so the dataset would hold B/sub/skip.log. Now the matcher
    takes the data/raw pinned_input took."""
    import contextlib

    from storagelab import paths, spark_ingest, sparkjvm

    logs = tmp_path / "mnt"
    for d in "AB":
        (logs / d / "sub").mkdir(parents=True)
        (logs / d / ".storagelabignore").write_text("*.log\n")
    raw = tmp_path / "data" / "raw"
    raw.parent.mkdir()
    monkeypatch.setattr(paths, "RAW", raw)

    def point(d):
        (tmp_path / ".t").symlink_to(logs / d)
        os.replace(tmp_path / ".t", raw)

    def job(spark, input_path, output, manifest, old_ids, staging, ignored):  # the run's own matcher
        return {"ignored": ignored(str(logs / "B" / "sub" / "skip.log")), "input": input_path}

    point("B")
    monkeypatch.setattr(spark_ingest, "_one_writer", lambda out: contextlib.nullcontext())
    monkeypatch.setattr(spark_ingest, "_old_meta", lambda spark, out: point("A"))  # the flip, during the run
    monkeypatch.setattr(spark_ingest, "_old_file_ids", lambda spark, out, old: {})
    monkeypatch.setattr(sparkjvm, "drop_unfinished_jobs", lambda *a: None)
    monkeypatch.setattr(spark_ingest, "_job", job)
    for given in (str(raw / "sub"), (raw / "sub").as_uri()):
        point("B")
        assert spark_ingest.run(None, given, str(tmp_path / "ds")) == {
            "ignored": True,
            "input": str(logs / "B" / "sub") if given.startswith("/") else (logs / "B" / "sub").as_uri(),
        }


def test_spark_ingest_reads_dotdot_after_a_link_as_ingest_does(tmp_path, monkeypatch):
    """`spark-ingest L/../b DS` (L -> far/q): pinned_input made the name absolute with abspath first, which drops
    "L/.." lexically, so the run read ./b while `ingest L/../b` (b31a23c4) and the `file:` URI read far/b, the folder
    the kernel gives. Now the name is joined to the working folder as it is and pinned as ingest's."""
    from storagelab.store.pipeline import pinned_input

    for d in ("b", "far/b", "far/q"):
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / "L").symlink_to("far/q")
    monkeypatch.chdir(tmp_path)
    assert pinned_input("L/../b")[0] == str(tmp_path / "far" / "b")
    assert pinned_input("a/../b")[0] == str(tmp_path / "b")


def test_data_raw_a_folder_replaced_by_a_link_as_an_ingest_of_a_folder_in_it_starts_is_refused(tmp_path, monkeypatch):
    """data/raw a real folder when pinned_raw took it (its name is then all that is pinned), renamed away and a
    symlink to B put in its place before `ingest data/raw/sub` pinned its target: the target was B/sub, outside the
    name data/raw, so B's ignore file was not read and B/sub/skip.log stored (and kept: README, a stored file that
    is ignored stays). Now that is refused, in a line, with nothing written."""
    from test_store_identity import CONTENTS

    from storagelab import paths
    from storagelab.store import StoreError, ingest, pipeline

    raw, far = tmp_path / "data" / "raw", tmp_path / "mnt" / "B"
    for top in (raw, far):
        (top / "sub").mkdir(parents=True)
        (top / "sub" / "skip.log").write_bytes(CONTENTS[1])
        (top / ".storagelabignore").write_text("*.log\n")
    monkeypatch.setattr(paths, "RAW", raw)
    monkeypatch.setattr(paths, "MANIFEST", raw / "manifest.csv")

    def to_link():
        raw.rename(tmp_path / "data" / "raw.old")
        raw.symlink_to(far)

    pin = pipeline.pinned_raw
    monkeypatch.setattr(pipeline, "pinned_raw", lambda: (pin(), to_link())[0])
    with pytest.raises(StoreError, match="a folder when the ingest started, a symlink now"):
        ingest([raw / "sub"], db_path=tmp_path / "d.duckdb", manifest_path=None, parquet_dir=False, progress=False)
    assert not (tmp_path / "d.duckdb").exists()

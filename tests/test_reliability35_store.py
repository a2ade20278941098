"""Reliability-35 (store): a file read through a listed symlink was checked against the inode listed, without the
device. Two file systems made alike (two ext4 disks or loop images, files made in one order) hold files with one
inode number: logs/cur.txt -> d1/x.txt (kept for x.txt's key), re-pointed to d2/y.txt (same size) between the listing
and the read: the read passed the check and d1/x.txt, untouched, was held with y.txt's bytes, exit 0, until the next
ingest (hooked: 1 of 1; a racer re-pointing the link during 15 ingests: 1). Now a link's device is listed too."""

from __future__ import annotations

import os
from pathlib import Path

from storagelab.store import filestamps, listing


def _stat_like(st: os.stat_result, dev: int) -> os.stat_result:
    values = list(st)
    values[2] = dev  # st_dev
    return os.stat_result(values)


def _listed_link(tmp_path):
    (tmp_path / "x.txt").write_text("x\n")
    (tmp_path / "cur.txt").symlink_to("x.txt")
    (item,) = [f for f in listing.list_files([tmp_path]) if f.path.endswith("cur.txt")]
    return item, os.stat(tmp_path / "x.txt")


def test_a_link_read_on_another_device_with_the_listed_inode_is_refused(tmp_path):
    item, st = _listed_link(tmp_path)
    assert item.link and item.ino == st.st_ino and item.dev == st.st_dev
    assert listing.led_elsewhere(item, st) is None
    assert isinstance(listing.led_elsewhere(item, _stat_like(st, st.st_dev + 1)), OSError)


def test_settle_keeps_no_stamp_for_a_link_now_on_another_device(tmp_path, monkeypatch):
    item, st = _listed_link(tmp_path)
    other = _stat_like(st, st.st_dev + 1)
    monkeypatch.setattr(filestamps.os, "stat", lambda p, *a, **k: other)
    (out,) = filestamps.settle([item], 0)  # clock 0: stat'ed again
    assert out.ctime_ns == -1


def test_spark_ingest_takes_a_folder_named_through_a_link_as_the_folder_it_leads_to(tmp_path, monkeypatch):
    """`spark-ingest logs/cur DS` with cur flipped between A and B (same names, same sizes) during the run: the keys
    were resolved on the executors and the files read by their names under cur: 18 of 38 files stored with the other
    folder's bytes, "0 failed", exit 0 (a racer, no hooks). Now the INPUT is pinned at the start, as ingest's."""
    import contextlib

    from storagelab import spark_ingest, sparkjvm

    (tmp_path / "A").mkdir()
    (tmp_path / "cur").symlink_to("A")
    seen = []
    monkeypatch.setattr(spark_ingest, "_one_writer", lambda out: contextlib.nullcontext())
    monkeypatch.setattr(spark_ingest, "_old_meta", lambda spark, out: None)
    monkeypatch.setattr(spark_ingest, "_old_file_ids", lambda spark, out, old: {})
    monkeypatch.setattr(sparkjvm, "drop_unfinished_jobs", lambda *a: None)
    monkeypatch.setattr(spark_ingest, "_job", lambda spark, input_path, *a: seen.append(input_path) or {})
    monkeypatch.chdir(tmp_path)
    for given, want in (("cur", str(tmp_path / "A")), ((tmp_path / "cur").as_uri(), (tmp_path / "A").as_uri()),
                        ("A", str(tmp_path / "A")), ("s3a://lab/cur", "s3a://lab/cur")):  # fmt: skip
        spark_ingest.run(None, given, str(tmp_path / "ds"))
        assert seen.pop() == want


def test_a_folder_named_with_dotdot_after_a_symlink_is_pinned(tmp_path, monkeypatch):
    """`ingest logs/L/../B` with L -> q (beside B: the name is logs/B once ".." is taken lexically, so _pinned kept
    it as given), L re-pointed to far/q between the folder's key and its scan: B's files held with far/B's bytes, exit
    0. Now a name with ".." is pinned to the folder it resolves to."""
    import hashlib

    import duckdb
    from test_store_identity import CONTENTS

    from storagelab.store import ingest, listing

    logs = tmp_path / "logs"
    for i, d in enumerate(("B", "q", "far/B", "far/q")):
        (logs / d).mkdir(parents=True)
        (logs / d / "f.txt").write_bytes(CONTENTS[i])
    (logs / "L").symlink_to("q")
    scan = listing._scan

    def flipped(*a, **k):
        (logs / ".t").symlink_to("far/q")
        os.replace(logs / ".t", logs / "L")
        return scan(*a, **k)

    monkeypatch.setattr(listing, "_scan", flipped)
    db = tmp_path / "d.duckdb"
    ingest([Path(f"{logs}/L/../B")], db_path=db, manifest_path=None, parquet_dir=False, progress=False, workers=1)
    con = duckdb.connect(str(db), read_only=True)
    held = con.execute("SELECT path, sha256 FROM files UNION ALL SELECT path, sha256 FROM duplicates").fetchall()
    con.close()
    assert held, "nothing stored"
    for key, sha in held:
        assert hashlib.sha256(Path(key).read_bytes()).hexdigest() == sha, key


def test_a_named_link_made_a_loop_after_the_listing_is_an_os_error_not_a_traceback(tmp_path, monkeypatch):
    """`ingest logs/a-l.txt` (a link to z.txt) made a loop (`ln -sf a-l.txt a-l.txt`) after the listing: the target's
    key, taken again after the listing (pipeline._target_keys), raised Python 3.11's RuntimeError out of the ingest (a
    traceback from the CLI). Now an OSError (ELOOP), which the ingest gives as its StoreError: the CLI's one line,
    exit 2, nothing written."""
    import pytest
    from test_store_identity import CONTENTS

    from storagelab.store import StoreError, ingest, listing

    (tmp_path / "z.txt").write_bytes(CONTENTS[0])
    link = tmp_path / "a-l.txt"
    link.symlink_to("z.txt")
    key_of = listing._key_of

    def looped(p):
        (tmp_path / ".t").symlink_to("a-l.txt")
        os.replace(tmp_path / ".t", link)
        return key_of(p)

    monkeypatch.setattr(listing, "_key_of", looped)
    with pytest.raises(StoreError, match="Too many levels of symbolic links"):
        ingest([link], db_path=tmp_path / "d.duckdb", manifest_path=None, parquet_dir=False, progress=False, workers=1)


def test_data_raw_itself_a_symlink_re_pointed_during_an_ingest_of_it_is_read_as_it_was(tmp_path, monkeypatch):
    """High 4: data/raw a symlink (-> A), re-pointed to B during `storagelab ingest` (no target, as `build` runs it):
    998595e9 kept data/raw unpinned (for its ignore rules), so its key, its scan and the scope each went through the
    link again: B's three files taken as renamed into A under names that do not exist, B's no longer held, exit 0
    (hooked); a racer, no hooks: a folder's four present, unchanged files removed in 6 of 8 CLI runs. Now data/raw is
    taken as the folder it leads to at the start; its ignore file still applies, named as data/raw's."""
    import hashlib

    import duckdb
    from test_store_identity import CONTENTS

    from storagelab import paths
    from storagelab.store import ingest, listing

    fio, at = CONTENTS[0], CONTENTS[0].index(b"IOPS=") + 5
    logs = tmp_path / "mnt"
    for n, d in enumerate("AB"):
        (logs / d).mkdir(parents=True)
        for i in range(3):  # six fio logs alike but for one number (same size)
            (logs / d / f"{d.lower()}{i}.txt").write_bytes(fio[:at] + f"{n * 3 + i:04d}".encode() + fio[at + 4 :])
        (logs / d / "skip.log").write_bytes(CONTENTS[4])
        (logs / d / ".storagelabignore").write_text("*.log\n")
    raw = tmp_path / "data" / "raw"
    raw.parent.mkdir()
    monkeypatch.setattr(paths, "RAW", raw)
    monkeypatch.setattr(paths, "MANIFEST", raw / "manifest.csv")

    def point(d):
        (tmp_path / ".t").symlink_to(logs / d)
        os.replace(tmp_path / ".t", raw)

    db = tmp_path / "d.duckdb"
    run = lambda: ingest(None, db_path=db, manifest_path=None, parquet_dir=False, progress=False, workers=1)  # noqa: E731
    point("A"), run(), point("B"), run(), point("A")
    scan = listing._scan
    monkeypatch.setattr(listing, "_scan", lambda *a, **k: (point("B"), scan(*a, **k))[1])
    summary = run()
    assert (summary.renamed, summary.removed, summary.failed, summary.ingested) == (0, 0, 0, 0), summary.line()
    assert summary.ignore_files == [str(raw / ".storagelabignore")] and summary.ignored == 1
    con = duckdb.connect(str(db), read_only=True)
    held = con.execute("SELECT path, sha256 FROM files UNION ALL SELECT path, sha256 FROM duplicates").fetchall()
    con.close()
    assert sorted(Path(k).name for k, _ in held) == ["a0.txt", "a1.txt", "a2.txt", "b0.txt", "b1.txt", "b2.txt"]
    for key, sha in held:
        assert hashlib.sha256(Path(key).read_bytes()).hexdigest() == sha, key


def test_a_link_re_pointed_to_a_new_file_with_the_deleted_targets_inode_number_is_refused(tmp_path):
    """The same-device form of High 1 (the helper's note): a-l.txt -> x.txt listed; x.txt deleted and its inode number
    given to a new y.txt, the link re-pointed to it; the read's inode and device equal the listed ones, so x.txt's key
    would be held with y.txt's bytes, though no x.txt exists. Now the key must still name the inode read. (The
    number's reuse is the kernel's to give: the read's stat is made to carry it.)"""
    item, st = _listed_link(tmp_path)
    (tmp_path / "y.txt").write_text("y\n")
    os.remove(tmp_path / "x.txt")
    os.remove(tmp_path / "cur.txt")
    (tmp_path / "cur.txt").symlink_to("y.txt")
    reused = list(os.stat(tmp_path / "y.txt"))
    reused[1], reused[2] = item.ino, item.dev  # st_ino, st_dev: what a reused inode number reads as
    assert isinstance(listing.led_elsewhere(item, os.stat_result(reused)), OSError)
    assert listing.led_elsewhere(item, st) is not None  # x.txt gone: whatever the read found, not x.txt's bytes

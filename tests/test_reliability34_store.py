"""Reliability-34 (store): a file listed through a symlink is stored as the file the link led to (its key), and read
only if the descriptor is the inode listed (led_elsewhere, 948bf989). The key and that inode were taken at different
times: the inode by the scan's stat of the link (or by settle's stat again of a file changed in the listing's last
tick), the key by resolving the link. Re-pointed between the two and back before the read (a-l.txt -> m.txt at the
stat, -> z.txt at the resolve, -> m.txt at the read), the read passed the check and z.txt, untouched, was held with
m.txt's bytes, exit 0, until the next ingest. Now the inode is the resolved path's, and settle keeps a link's inode."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_store_filestamps import _sha
from test_store_identity import OneSecond

from storagelab.store import filestamps, ingest, listing, stream


def _repoint(link: Path, to: str) -> None:
    tmp = link.with_name(".t-" + link.name)
    tmp.symlink_to(to)
    os.replace(tmp, link)


@pytest.mark.parametrize(("when", "named", "streamed"), [("resolve", False, False), ("resolve", True, False),
                                                        ("resolve", False, True), ("settle", False, False),
                                                        ("settle", True, True)])  # fmt: skip
def test_a_link_re_pointed_inside_the_listing_leaves_its_target_with_its_own_bytes(
    tmp_path, monkeypatch, when, named, streamed
):
    if streamed:
        monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 0)
    tree = OneSecond(tmp_path, {"s1/z.txt": 0, "s1/m.txt": 1})  # same size, same mtime: only the inodes differ
    link = tree.logs / "s1/a-l.txt"  # sorted before z.txt: the listing kept for z.txt's key
    link.symlink_to("m.txt" if when == "resolve" else "z.txt")
    settle, resolve = filestamps.settle, Path.resolve
    if when == "resolve":  # stat'ed leading to m.txt; re-pointed to z.txt as it is resolved; back before the read
        pending = [True]

        def resolving(self, strict=False):
            if pending and self == link:
                pending.clear()
                _repoint(link, "z.txt")
            return resolve(self, strict)

        monkeypatch.setattr(Path, "resolve", resolving)

        def back(listing, clock):
            _repoint(link, "m.txt")
            return settle(listing, clock)
    else:  # listed leading to z.txt; re-pointed to m.txt before settle stats again the files of the last tick

        def back(listing, clock):
            _repoint(link, "m.txt")
            return settle(listing, 0)  # every file listed in the clock's last tick: each stat'ed again

    monkeypatch.setattr(filestamps, "settle", back)
    s = ingest([link if named else tree.logs / "s1"], db_path=tree.tmp / "d.duckdb", manifest_path=None,
               parquet_dir=False, progress=False, workers=1)  # fmt: skip
    monkeypatch.undo()
    assert tree.held("s1").get("s1/z.txt") in (None, _sha(0))  # the code before: m.txt's bytes
    if s.errors:
        assert "leads to another file now" in " ".join(str(e) for e in s.errors), s.errors
    tree.ingest("s1")
    assert tree.held("s1")["s1/z.txt"] == _sha(0)
    assert tree.held("s1")["s1/m.txt"] == _sha(1)


@pytest.mark.parametrize("when", ["scan", "settle", "file"])
def test_a_folder_named_through_a_link_re_pointed_during_the_ingest(tmp_path, monkeypatch, when):
    """`ingest logs/cur` (cur -> s1) and `ln -sfn s2 logs/cur` during it: at the scan (after the folder's key was
    made) s2's files were held as s1's; after the listing (before the removals' scope was made) s2's files were
    taken as gone, or renamed into s1's; exit 0. `ingest logs/cur/a.txt`, the same at settle: s1/a.txt held with
    s2/a.txt's bytes. Now the folder is the one cur led to at the start, throughout."""
    tree = OneSecond(tmp_path, {"s1/a.txt": 0, "s1/b.txt": 1, "s2/a.txt": 2, "s2/c.txt": 1})
    tree.write("s1/a.txt", 1)  # s1 is read again
    cur = tree.logs / "cur"
    cur.symlink_to("s1")
    if when == "scan":
        scan = listing._scan

        def flipped(*a, **k):
            _repoint(cur, "s2")
            return scan(*a, **k)

        monkeypatch.setattr(listing, "_scan", flipped)
    else:
        settle = filestamps.settle

        def flipped(listed, clock):
            _repoint(cur, "s2")
            return settle(listed, clock)

        monkeypatch.setattr(filestamps, "settle", flipped)
    target = cur / "a.txt" if when == "file" else cur
    ingest([target], db_path=tree.tmp / "d.duckdb", manifest_path=None, parquet_dir=False, progress=False, workers=1)
    monkeypatch.undo()
    assert tree.held("s2") == tree.on_disk("s2")  # the code before: s2's files gone (or one renamed into s1)
    assert tree.held("s1") == tree.on_disk("s1")  # the code before: s1's files held with s2's bytes


def test_a_listed_link_made_a_loop_after_the_scan_is_left_out_not_a_traceback(tmp_path, monkeypatch):
    """a-l.txt -> z.txt at the scan, made a loop (a-l.txt -> a-l.txt) before it was resolved: Path.resolve raised
    RuntimeError (Python 3.11) out of the ingest. Now left out, as a link gone since the scan."""
    tree = OneSecond(tmp_path, {"s1/z.txt": 0})
    link = tree.logs / "s1/a-l.txt"
    link.symlink_to("z.txt")
    scan = listing._scan

    def looped(*a, **k):
        out = scan(*a, **k)
        _repoint(link, "a-l.txt")
        return out

    monkeypatch.setattr(listing, "_scan", looped)
    ingest([tree.logs / "s1"], db_path=tree.tmp / "d.duckdb", manifest_path=None, parquet_dir=False,
           progress=False, workers=1)  # fmt: skip
    monkeypatch.undo()
    assert tree.held("s1")["s1/z.txt"] == _sha(0)

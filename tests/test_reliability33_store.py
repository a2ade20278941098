"""Reliability-33 (store): a symlink listed as a link is stored as the file it led to (its key); re-pointed, or
replaced by a file, between the listing and the read, the bytes read through it are another file's. They were held
as the link's target (z.txt, a file no one touched), exit 0, until the next ingest. Now an io error row: the next
ingest reads it again."""

from __future__ import annotations

import pytest
from test_store_filestamps import _sha
from test_store_identity import OneSecond

from storagelab.store import filestamps, ingest, stream


@pytest.mark.parametrize(("kind", "named", "streamed"), [("file", False, False), ("link-in", True, False),
                                                       ("link-out", False, True)])  # fmt: skip
def test_a_link_re_pointed_after_the_listing_leaves_its_target_with_its_own_bytes(
    tmp_path, monkeypatch, kind, named, streamed
):
    if streamed:  # every file streamed (stream.prepare opens it)
        monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 0)
    tree = OneSecond(tmp_path, {"s1/z.txt": 0, "s1/m.txt": 1})
    link = tree.logs / "s1/a-l.txt"  # sorted before z.txt: the link is the listing kept for z.txt's key
    link.symlink_to("z.txt")
    tree.write("s1/z.txt", 0)  # a new ctime: read at the next ingest
    outside = tmp_path / "outside.txt"
    outside.write_bytes(tree.SAME_SIZE[2])
    settle = filestamps.settle

    def swapped(listing, clock):  # after the listing, before the read
        out = settle(listing, clock)
        link.unlink()
        if kind == "file":
            tree.write("s1/a-l.txt", 2)
        else:
            link.symlink_to("m.txt" if kind == "link-in" else outside)
        return out

    monkeypatch.setattr(filestamps, "settle", swapped)
    s = ingest([link if named else tree.logs / "s1"], db_path=tree.tmp / "d.duckdb", manifest_path=None,
               parquet_dir=False, progress=False, workers=1)  # fmt: skip
    assert tree.held("s1").get("s1/z.txt") in (None, _sha(0))  # the code before: m.txt's bytes or C2
    assert "leads to another file now" in " ".join(str(e) for e in s.errors), s.errors
    monkeypatch.setattr(filestamps, "settle", settle)
    tree.ingest("s1")
    assert tree.held("s1")["s1/z.txt"] == _sha(0)

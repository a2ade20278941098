"""Reliability-35 (store): a file read through a listed symlink was checked against the inode listed, without the
device. Two file systems made alike (two ext4 disks or loop images, files made in one order) hold files with one
inode number: logs/cur.txt -> d1/x.txt (kept for x.txt's key), re-pointed to d2/y.txt (same size) between the listing
and the read: the read passed the check and d1/x.txt, untouched, was held with y.txt's bytes, exit 0, until the next
ingest (hooked: 1 of 1; a racer re-pointing the link during 15 ingests: 1). Now a link's device is listed too."""

from __future__ import annotations

import os

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

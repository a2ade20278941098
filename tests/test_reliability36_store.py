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

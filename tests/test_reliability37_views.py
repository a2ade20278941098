"""Reliability-37, the lead's view rule: through a view of root's own (FUSE, overlay) a file whose file behind it
cannot be found and judged is refused, never passed unjudged."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from test_reliability34_read import _hidden  # a descriptor held only in a UNIX socket's queue
from test_reliability36_read import _mounted

from storagelab import livewriters, ownership

_FUSE = os.geteuid() == 0 and os.path.exists("/dev/fuse")


def _folders(tmp_path: Path, *names: str) -> list[Path]:
    tmp_path.chmod(0o700)
    made = [tmp_path / name for name in names]
    for folder in made:
        folder.mkdir()
    return made


@pytest.mark.skipif(not (_FUSE and shutil.which("mergerfs")), reason="needs root, mergerfs and /dev/fuse")
def test_a_mergerfs_pools_file_is_judged_by_the_branch_file_it_shows(tmp_path):
    # reliability-37 (lead): root's mergerfs pool of two branches; the second user held a branch's notebook open for
    # writing (opened while 0666, then 0644), its descriptor only in a socket's queue. The pool's file has inode
    # numbers of its own and no lease can be asked through FUSE: the writer was not seen and `run` passed
    one, two, pool = _folders(tmp_path, "one", "two", "pool")
    nb = two / "nb.ipynb"
    nb.write_text("{}")
    nb.chmod(0o644)
    with _mounted(["mergerfs", f"{one}:{two}", str(pool)], pool):
        assert os.stat(pool / "nb.ipynb").st_ino != nb.stat().st_ino
        assert ownership.file_writers(str(pool / "nb.ipynb")) is None  # a file no one else can write: passes
        queue = _hidden(nb)
        try:
            assert "where /proc shows no process holding it" in (ownership.file_writers(str(pool / "nb.ipynb")) or "")
        finally:
            queue.close()


@pytest.mark.skipif(not (_FUSE and shutil.which("mergerfs")), reason="needs root, mergerfs and /dev/fuse")
def test_a_mergerfs_pool_that_will_not_say_its_branch_file_is_refused(tmp_path):
    # with its xattrs off, the pool cannot say which branch file it shows: refused, not passed unjudged
    one, pool = _folders(tmp_path, "one", "pool")
    (one / "nb.ipynb").write_text("{}")
    (one / "nb.ipynb").chmod(0o644)
    with _mounted(["mergerfs", "-o", "xattr=nosys", str(one), str(pool)], pool):
        words = ownership.file_writers(str(pool / "nb.ipynb")) or ""
        assert f"root's view (fuse.mergerfs at {pool}) does not say which branch file it shows" in words


@pytest.mark.skipif(not (_FUSE and shutil.which("bindfs")), reason="needs root, bindfs and /dev/fuse")
def test_a_bindfs_view_whose_folder_moved_away_is_refused(tmp_path):
    # the folder behind root's bindfs view renamed after the mount: the view still shows its files, mountinfo still
    # names the old folder, and the file behind is not found there: refused (it passed unjudged before)
    src, mnt = _folders(tmp_path, "src", "mnt")
    (src / "nb.ipynb").write_text("{}")
    (src / "nb.ipynb").chmod(0o644)
    with _mounted(["bindfs", str(src), str(mnt)], mnt):
        assert ownership.file_writers(str(mnt / "nb.ipynb")) is None
        src.rename(tmp_path / "moved")
        words = ownership.file_writers(str(mnt / "nb.ipynb")) or ""
        assert f"at {mnt}) shows {mnt / 'nb.ipynb'}, whose file behind it is not found in {src}" in words


def test_an_unreadable_mount_table_or_a_fuse_view_with_no_folder_behind_is_refused(tmp_path, monkeypatch):
    nb = tmp_path / "nb.ipynb"
    nb.write_text("{}")
    nb.chmod(0o644)
    st = nb.stat()
    device = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    monkeypatch.setattr(livewriters, "_mounts", lambda pid="self": None)
    assert "the mount table (/proc/self/mountinfo) cannot be read" in (ownership.file_writers(str(nb)) or "")
    # root's sshfs-like FUSE mount over the folder: a source that is no local folder, and no server found to ask
    sshfs = f"99 1 {device} / {tmp_path} rw - fuse.sshfs me@host:/srv rw,user_id=0,group_id=0".split()
    monkeypatch.setattr(livewriters, "_mounts", lambda pid="self": [sshfs])
    assert f"root's view (fuse.sshfs at {tmp_path}) has no local folder behind it" in (
        ownership.file_writers(str(nb)) or ""
    )
    # another user's FUSE mount is not asked here (it may be stopped): ownership's FUSE rule names its mounter
    theirs = f"99 1 {device} / {tmp_path} rw - fuse.sshfs me@host:/srv rw,user_id=1002,group_id=1002".split()
    monkeypatch.setattr(livewriters, "_mounts", lambda pid="self": [theirs])
    assert livewriters.unseen_writer(nb, st, loose=ownership.loose_file) is None
    # a container's own root file system (an overlay at "/" whose layers live outside it) is no view
    root = f"99 1 {device} / / rw - overlay overlay rw,lowerdir=/var/lib/x/l,upperdir=/var/lib/x/u".split()
    monkeypatch.setattr(livewriters, "_mounts", lambda pid="self": [root])
    assert livewriters.unseen_writer(nb, st, loose=ownership.loose_file) is None


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to mount an overlay")
def test_an_overlay_whose_layer_moved_away_is_refused(tmp_path):
    lower, upper, work, mnt = _folders(tmp_path, "lower", "upper", "work", "mnt")
    (lower / "nb.ipynb").write_text("{}")
    (lower / "nb.ipynb").chmod(0o644)
    layers = f"lowerdir={lower},upperdir={upper},workdir={work}"
    with _mounted(["mount", "-t", "overlay", "overlay", "-o", layers, str(mnt)], mnt):
        assert ownership.file_writers(str(mnt / "nb.ipynb")) is None
        lower.rename(tmp_path / "moved")  # the overlay keeps its layer; mountinfo names the old path
        assert "whose file behind it is not found in" in (ownership.file_writers(str(mnt / "nb.ipynb")) or "")

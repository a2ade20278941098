"""Reliability-37, the lead's view rule: through a view of root's own (FUSE, overlay) a file whose file behind it
cannot be found and judged is refused, never passed unjudged."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
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


_SECOND = "storagelab-rel5"


def _second_user() -> bool:
    import pwd

    try:
        pwd.getpwnam(_SECOND)
    except KeyError:
        return False
    return True


@pytest.mark.skipif(
    not (_FUSE and shutil.which("bindfs") and shutil.which("mergerfs") and shutil.which("runuser") and _second_user()),
    reason="needs root, bindfs, mergerfs, /dev/fuse and the second user storagelab-rel5",
)
def test_a_path_through_roots_fuse_view_of_folders_another_user_can_mount_on_is_refused_before_any_lookup():
    # reliability-37 (read, High 3): the second user's bindfs (allow_other) on a folder of theirs, inside a folder
    # root's own bindfs view (and mergerfs pool) shows; they stopped it (kill -STOP): root's `run`, `sql` and `ingest`
    # through the view waited in the kernel for good, SIGKILL included (69-143 s, until their SIGCONT). Now the paths
    # a command is given are judged lexically first: a FUSE mount of theirs behind the view, or a folder they own or
    # can write behind it (where they could mount one later), refuses the command before the path is looked up
    import argparse
    import grp
    import pwd

    from storagelab import checks, fuseviews

    user = pwd.getpwnam(_SECOND)
    tmp_path = Path(tempfile.mkdtemp(prefix="sl-r37-views-", dir="/tmp"))  # a folder the second user can reach
    tmp_path.chmod(0o755)
    theirs, mine, view, pool = tmp_path / "theirs", tmp_path / "mine", tmp_path / "view", tmp_path / "pool"
    for folder in (theirs, mine, view, pool):
        folder.mkdir()
    (mine / "nb.ipynb").write_text("{}")
    os.chown(theirs, user.pw_uid, grp.getgrgid(user.pw_gid).gr_gid)
    as_them = ["runuser", "-u", _SECOND, "--"]
    subprocess.run([*as_them, "mkdir", str(theirs / "src"), str(theirs / "mnt")], check=True, timeout=30)
    subprocess.run(
        [*as_them, "bindfs", "--no-allow-other", str(theirs / "src"), str(theirs / "mnt")], check=True
    )  # no allow_other: as on a default machine
    try:
        with _mounted(["bindfs", str(tmp_path), str(view)], view):
            mounts = livewriters._mounts()
            words = fuseviews.hazard(str(view / "theirs" / "mnt" / "x.duckdb"), mounts) or ""
            assert f"is shown by root's FUSE view (fuse at {view}) of {tmp_path}" in words
            assert f"{theirs / 'mnt' / 'x.duckdb'} lies on a FUSE mount of {_SECOND}'s at {theirs / 'mnt'}" in words
            # no mount of theirs yet, but a folder of theirs behind the view: they could make one there
            assert f"is inside {theirs}, which is another user's" in (
                fuseviews.hazard(str(view / "theirs" / "src" / "f"), mounts) or ""
            )
            assert fuseviews.hazard(str(view / "mine" / "nb.ipynb"), mounts) is None  # root's folders alone
            assert fuseviews.hazard(str(theirs / "mnt" / "x.duckdb"), mounts) is None  # directly: Ctrl-C ends a wait
            given = argparse.Namespace(cmd="sql", db=str(view / "theirs" / "mnt" / "x.duckdb"), params=[])
            assert "lies on a FUSE mount of" in (checks.given_refusal(given) or "")
            # a symlink (data/raw one) into the view: followed up to the view, never through it
            (mine / "raw").symlink_to(view / "theirs" / "mnt")
            followed = fuseviews._links_followed(str(mine / "raw" / "logs"), mounts)
            assert followed == str(view / "theirs" / "mnt" / "logs")
            given = argparse.Namespace(cmd="ingest", targets=[str(mine / "raw")], params=[])
            assert "lies on a FUSE mount of" in (checks.given_refusal(given) or "")
        with _mounted(["mergerfs", f"{mine}:{theirs / 'mnt'}", str(pool)], pool):
            words = fuseviews.hazard(str(pool / "nb.ipynb"), livewriters._mounts()) or ""
            assert f"is shown by root's FUSE view (fuse.mergerfs at {pool}) of {theirs / 'mnt'}" in words
    finally:
        subprocess.run([*as_them, "fusermount", "-u", str(theirs / "mnt")], check=False, timeout=30)
        shutil.rmtree(tmp_path, ignore_errors=True)

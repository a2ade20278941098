"""Reliability-36, the read side (h2): root's reads and runs of files another local user controls."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from test_reliability34_read import _hidden  # a descriptor held only in a UNIX socket's queue

from storagelab import ownership


@contextlib.contextmanager
def _mounted(command: list[str], point: Path):
    """A view mounted at ``point`` by ``command`` (bindfs, mount), unmounted after."""
    subprocess.run(command, check=True, timeout=30)
    try:
        yield point
    finally:
        subprocess.run(["umount", str(point)], check=False, timeout=30)


def _hidden_writer_seen(held: Path, *judged: Path) -> None:
    """With a descriptor of ``held`` open for writing kept only in a socket's queue, each of ``judged`` is named as
    held for writing by no process /proc shows."""
    queue = _hidden(held)
    try:
        for path in judged:
            assert "where /proc shows no process holding it" in (ownership.file_writers(str(path)) or "")
    finally:
        queue.close()


@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("bindfs") or not os.path.exists("/dev/fuse"),
    reason="needs root, bindfs and /dev/fuse to mount root's own views of a folder",
)
@pytest.mark.parametrize("view", ["bindfs", "overlay"])
def test_a_bind_mount_of_a_folder_inside_roots_own_view_is_judged_by_the_file_behind_it(tmp_path, view):
    # reliability-36: root's bindfs view (an overlay) of its folder, and a bind mount of a folder inside the view
    # (mountinfo root "/sub"): the second user held the file behind it open for writing (opened while 0666, then
    # 0644); through the view the writer was seen, through the bind mount of its folder not: `run` passed, and the
    # cell they wrote ran as root
    tmp_path.chmod(0o700)
    src, mnt, upper, work, bound = (tmp_path / name for name in ("src", "mnt", "upper", "work", "bound"))
    for folder in (src / "sub", mnt, upper, work, bound):
        folder.mkdir(parents=True)
    nb = src / "sub" / "nb.ipynb"
    nb.write_text("{}")
    nb.chmod(0o644)
    mount = ["bindfs", str(src), str(mnt)]
    if view == "overlay":
        mount = ["mount", "-t", "overlay", "overlay", "-o", f"lowerdir={src},upperdir={upper},workdir={work}", str(mnt)]
    subprocess.run(mount, check=True, timeout=30)
    try:
        subprocess.run(["mount", "--bind", str(mnt / "sub"), str(bound)], check=True, timeout=30)
        try:
            assert ownership.file_writers(str(bound / "nb.ipynb")) is None
            queue = _hidden(nb)  # the kernel's count of the file behind the view
            try:
                words = ownership.file_writers(str(bound / "nb.ipynb")) or ""
                assert "where /proc shows no process holding it" in words
            finally:
                queue.close()
        finally:
            subprocess.run(["umount", str(bound)], check=False, timeout=30)
    finally:
        subprocess.run(["umount", str(mnt)], check=False, timeout=30)


def test_a_group_password_in_etc_group_itself_makes_its_users_whoever_knows_it(tmp_path, monkeypatch):
    # reliability-36: root's folder of group h53g (0775); /etc/group held h53g's password hash and /etc/gshadow no
    # h53g line (a group made by hand, or gshadow not used): no one listed, so the folder passed as root's alone; the
    # second user typed the password to `sg h53g`, renamed their notebook over root's, and its cell ran as root
    import grp

    from storagelab import usernames

    entry = grp.struct_group(("h53g", "$6$salt$hash", 4253, []))
    monkeypatch.setattr(usernames.grp, "getgrgid", lambda gid: entry)
    monkeypatch.setattr(usernames.grp, "getgrall", lambda: [entry])
    monkeypatch.setattr(usernames, "group_users", lambda gid: set())
    monkeypatch.setattr(usernames.pwd, "getpwall", list)
    gshadow = tmp_path / "gshadow"
    monkeypatch.setattr(usernames, "GSHADOW", str(gshadow))
    gshadow.write_text("root:*::\n")
    assert usernames.group_members(4253) == {"whoever knows its password"}
    gshadow.unlink()  # no gshadow at all
    assert usernames.group_members(4253) == {"whoever knows its password"}
    for locked in ("x", "!", "*", "", "!$6$salt$hash"):
        other = grp.struct_group(("h53g", locked, 4253, []))
        monkeypatch.setattr(usernames.grp, "getgrall", lambda other=other: [other])
        assert usernames.group_members(4253) == set()


@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("bindfs") or not os.path.exists("/dev/fuse"),
    reason="needs root, bindfs and /dev/fuse to mount root's own views of a folder",
)
@pytest.mark.parametrize("view", ["metacopy", "bindfs-perms"])
def test_a_view_of_roots_showing_a_mode_the_file_behind_it_has_not_is_judged_by_that_file(tmp_path, view):
    # reliability-36: root's overlay mounted with metacopy=on; its notebook 0666 in the lower layer; root's
    # `chmod 644` through the view copied up the mode alone (its bytes still the lower file's): the view showed 0644,
    # the second user wrote their cell into the lower file, and `run` of the view ran it as root. bindfs -p og-w alike
    tmp_path.chmod(0o700)
    src, mnt, upper, work = (tmp_path / name for name in ("src", "mnt", "upper", "work"))
    for folder in (src, mnt, upper, work):
        folder.mkdir()
    nb = src / "nb.ipynb"
    nb.write_text("{}")
    nb.chmod(0o666)
    mount = ["bindfs", "-p", "og-w", str(src), str(mnt)]
    if view == "metacopy":
        layers = f"lowerdir={src},upperdir={upper},workdir={work},metacopy=on,redirect_dir=on"
        mount = ["mount", "-t", "overlay", "overlay", "-o", layers, str(mnt)]
    subprocess.run(mount, check=True, timeout=30)
    try:
        if view == "metacopy":
            (mnt / "nb.ipynb").chmod(0o644)
        assert os.stat(mnt / "nb.ipynb").st_mode & 0o777 == 0o644 and nb.stat().st_mode & 0o777 == 0o666
        words = ownership.file_writers(str(mnt / "nb.ipynb")) or ""
        assert f"root's view shows of {nb}, which can be written by every user" in words
        if view == "metacopy":
            (mnt / "nb.ipynb").rename(mnt / "renamed.ipynb")  # its redirect to the lower file's name
            assert f"shows of {nb}, which can be" in (ownership.file_writers(str(mnt / "renamed.ipynb")) or "")
    finally:
        subprocess.run(["umount", str(mnt)], check=False, timeout=30)


@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("bindfs") or not os.path.isdir("/dev/shm") or not os.path.exists("/dev/fuse"),
    reason="needs root, bindfs, /dev/fuse and /dev/shm to mount root's own views of a folder",
)
@pytest.mark.parametrize("view", ["overlay-upper-in-tmpfs", "bindfs-of-bindfs", "overlay-of-bindfs"])
def test_a_view_on_two_file_systems_or_of_another_view_is_judged_by_the_file_behind_it(tmp_path, view):
    # reliability-36: root's overlay of its folder with its upper layer in /dev/shm (tmpfs): its files take a device
    # of the layer's, which no mount has, so the view was not found and the writer behind it was not seen: `run`
    # passed, and the cell the second user wrote through their descriptor ran as root. A view of root's view alike
    tmp_path.chmod(0o700)
    shm = tempfile.mkdtemp(dir="/dev/shm")
    src, mid, mnt, upper, work = (tmp_path / n for n in ("src", "mid", "mnt", "upper", "work"))
    for folder in (src, mid, mnt, upper, work):
        folder.mkdir()
    nb = src / "nb.ipynb"
    nb.write_text("{}")
    nb.chmod(0o644)
    mounts = {
        "overlay-upper-in-tmpfs": [[f"lowerdir={src},upperdir={shm}/upper,workdir={shm}/work", mnt]],
        "bindfs-of-bindfs": [[src, mid], [mid, mnt]],
        "overlay-of-bindfs": [[src, mid], [f"lowerdir={mid},upperdir={upper},workdir={work}", mnt]],
    }[view]
    os.mkdir(f"{shm}/upper")
    os.mkdir(f"{shm}/work")
    done = []
    try:
        for what, at in mounts:
            is_dir = isinstance(what, os.PathLike)
            run = (
                ["bindfs", str(what), str(at)] if is_dir else ["mount", "-t", "overlay", "overlay", "-o", what, str(at)]
            )
            subprocess.run(run, check=True, timeout=30)
            done.insert(0, at)
        assert ownership.file_writers(str(mnt / "nb.ipynb")) is None
        queue = _hidden(nb)  # the kernel's count of the file behind the views
        try:
            assert "where /proc shows no process holding it" in (ownership.file_writers(str(mnt / "nb.ipynb")) or "")
        finally:
            queue.close()
    finally:
        for at in done:
            subprocess.run(["umount", str(at)], check=False, timeout=30)
        shutil.rmtree(shm, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to mount an overlay")
@pytest.mark.parametrize("how", ["lowerdir+=", "a:b,c names"])
def test_an_overlays_lower_layers_given_one_by_one_or_with_escaped_names_are_found(tmp_path, how):
    # reliability-36: mountinfo shows an overlay mounted with lowerdir+= (one layer each, the new mount API) as such,
    # and "\:" and "\," in a layer's name escaped: the lower layers were not found, so the writer of the file behind
    # root's view was not seen
    tmp_path.chmod(0o700)
    names = ("one", "two" if how == "lowerdir+=" else "t:w,o", "upper", "work", "mnt")
    one, two, upper, work, mnt = (tmp_path / n for n in names)
    for folder in (one, two, upper, work, mnt):
        folder.mkdir()
    nb = two / "nb.ipynb"
    nb.write_text("{}")
    nb.chmod(0o644)
    escaped = str(two).replace(":", "\\:").replace(",", "\\,")
    lower = f"lowerdir+={one},lowerdir+={two}" if how == "lowerdir+=" else f"lowerdir={one}:{escaped}"
    layers = f"{lower},upperdir={upper},workdir={work}"
    with _mounted(["mount", "-t", "overlay", "overlay", "-o", layers, str(mnt)], mnt):
        _hidden_writer_seen(nb, mnt / "nb.ipynb")


@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("bindfs") or not os.path.exists("/dev/fuse"),
    reason="needs root, bindfs and /dev/fuse to mount root's own view of a folder",
)
def test_a_writer_through_roots_own_fuse_view_is_not_cleared_as_root_by_the_fuse_process(tmp_path):
    # reliability-36: the second user opened root's notebook through root's bindfs view (allow_other) while it was
    # 0666 and kept the descriptor in a socket's queue; bindfs (root's) held the file behind for writing, so the
    # kernel's count was cleared as root's own: `run` of the folder's own file (and of the view) passed, and the
    # cell they wrote through the view ran as root
    tmp_path.chmod(0o700)
    src, mnt = tmp_path / "src", tmp_path / "mnt"
    src.mkdir()
    mnt.mkdir()
    nb = src / "nb.ipynb"
    nb.write_text("{}")
    nb.chmod(0o644)
    with _mounted(["bindfs", str(src), str(mnt)], mnt):  # held through the view: bindfs holds the file behind it
        _hidden_writer_seen(mnt / "nb.ipynb", nb, mnt / "nb.ipynb")


@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("bindfs") or not os.path.exists("/dev/fuse"),
    reason="needs root, bindfs and /dev/fuse to mount root's own view of a folder",
)
def test_a_link_resolved_by_roots_bindfs_view_is_judged_by_the_file_it_leads_to(tmp_path):
    # reliability-36: root's `bindfs --resolve-symlinks` view of its folder shows a symlink of the folder as the file
    # it leads to; the file behind the view was taken to be the link (not a regular file), so the writer of the file
    # it leads to was not seen (the folder's own link, followed, was judged)
    tmp_path.chmod(0o700)
    src, mnt, other = tmp_path / "src", tmp_path / "mnt", tmp_path / "other"
    for folder in (src, mnt, other):
        folder.mkdir()
    nb = other / "nb.ipynb"
    nb.write_text("{}")
    nb.chmod(0o644)
    (src / "nb.ipynb").symlink_to(nb)
    with _mounted(["bindfs", "--resolve-symlinks", str(src), str(mnt)], mnt):
        _hidden_writer_seen(nb, mnt / "nb.ipynb")


@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("bindfs") or not os.path.exists("/dev/fuse"),
    reason="needs root, bindfs and /dev/fuse to mount root's own view of a folder",
)
def test_roots_bindfs_view_of_a_folder_whose_name_has_a_space_is_judged_by_the_file_behind_it(tmp_path):
    # reliability-36: bindfs names its mount "bindfs" (not the folder) when the folder's name has a space: the folder
    # behind root's view was not found, and the writer of the file behind it was not seen
    tmp_path.chmod(0o700)
    src, mnt = tmp_path / "s p", tmp_path / "m n"
    src.mkdir()
    mnt.mkdir()
    nb = src / "nb.ipynb"
    nb.write_text("{}")
    nb.chmod(0o644)
    with _mounted(["bindfs", str(src), str(mnt)], mnt):
        _hidden_writer_seen(nb, mnt / "nb.ipynb")


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to mount an overlay")
def test_an_overlay_of_layers_named_by_relative_paths_is_refused_as_unjudged(tmp_path):
    # reliability-36: root's overlay mounted from its folder with relative layer paths (`mount -t overlay overlay -o
    # lowerdir=l,upperdir=u,workdir=w m`): mountinfo keeps them relative, the layers were not found, and the writer
    # of the file behind the view was not seen
    tmp_path.chmod(0o700)
    for name in ("l", "u", "w", "m"):
        (tmp_path / name).mkdir()
    nb = tmp_path / "l" / "nb.ipynb"
    nb.write_text("{}")
    nb.chmod(0o644)
    mount = ["mount", "-t", "overlay", "overlay", "-o", "lowerdir=l,upperdir=u,workdir=w", "m"]
    subprocess.run(mount, check=True, timeout=30, cwd=tmp_path)
    try:
        words = ownership.file_writers(str(tmp_path / "m" / "nb.ipynb")) or ""
        assert "root's view shows from folders its mount names by relative paths (" in words
    finally:
        subprocess.run(["umount", str(tmp_path / "m")], check=False, timeout=30)


def test_a_cache_file_another_user_holds_open_for_writing_is_made_again(tmp_path, monkeypatch):
    # reliability-36: root's cache folder and its bundle once open to all; the second user opened the bundle for
    # writing then, and kept the descriptor (hidden in a socket's queue) after root made them 0700/0600 again: a whole
    # entry of theirs (its SHA-256 line right) written through it was read back, and goes into every report page as
    # script
    import hashlib

    from storagelab import usercache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    tmp_path.chmod(0o700)
    assert usercache.cached_text("h53r.txt", lambda: "made") == "made"
    path = tmp_path / "xdg" / "storagelab" / "h53r.txt"
    body = b"theirs <script>alert(1)</script>"
    path.write_bytes(hashlib.sha256(body).hexdigest().encode() + b"\n" + body)
    assert usercache.cached_text("h53r.txt", lambda: "made") == body.decode()  # a whole entry: read
    queue = _hidden(path)
    try:
        assert usercache.cached_text("h53r.txt", lambda: "made") == "made"
    finally:
        queue.close()


def test_a_notebook_that_is_not_json_is_one_line_not_a_traceback(tmp_path):
    # reliability-36: `storagelab run` of a notebook cut short (read while it was rewritten, or saved half) ended in
    # nbformat's NotJSONError traceback
    from storagelab import nbparams

    nb = tmp_path / "broken.ipynb"
    nb.write_text('{"cells": [{"cell_type": "code", "metad')
    with pytest.raises(nbparams.ParameterError, match="not a notebook \\(not JSON\\)"):
        nbparams.notebook_parameters(nb)

"""Reliability-35, the read side (h2): root's reads and runs of files another local user controls."""

from __future__ import annotations

import array
import os
import shutil
import socket
import subprocess

import pytest
from test_reliability34_read import _hidden  # a descriptor held only in a UNIX socket's queue

from storagelab import livewriters, ownership


def _fake_setuid_holder(proc, pid: int, real: int, path) -> None:
    """A set-user-ID root program another user ran, as /proc shows it: real uid theirs, effective root, holding a
    descriptor of ``path`` open for writing (inherited from their process)."""
    d, st = proc / str(pid), os.stat(path)
    (d / "fd").mkdir(parents=True)
    (d / "fdinfo").mkdir()
    (d / "status").write_text(f"Name:\tsu\nUid:\t{real}\t0\t0\t0\nGid:\t{real}\t{real}\t{real}\t{real}\nGroups:\t\n")
    (d / "fd" / "7").symlink_to(path)
    (d / "fdinfo" / "7").write_text(f"pos:\t0\nflags:\t0100002\nmnt_id:\t7\nino:\t{st.st_ino}\n")
    (d / "mountinfo").write_text(f"7 1 {os.major(st.st_dev)}:{os.minor(st.st_dev)} / / rw - ext4 /dev/x rw\n")


def test_a_set_user_id_program_holding_their_descriptor_is_theirs(tmp_path, monkeypatch):
    # reliability-35: the second user opened root's 0666 notebook for writing, hid one descriptor in a socket's
    # queue and gave another to `su root` (set-user-ID root, waiting at its password prompt: /proc showed euid 0);
    # root made the notebook 0644: the lease probe's writer was cleared as root's own (the su), `storagelab run`
    # passed, and the cell they wrote through the hidden descriptor ran as root
    tmp_path.chmod(0o700)
    nb = tmp_path / "nb.ipynb"
    nb.write_text("{}")
    nb.chmod(0o644)
    proc = tmp_path / "proc"
    (proc / "self").mkdir(parents=True)
    (proc / "self" / "mountinfo").write_text(open("/proc/self/mountinfo").read())
    monkeypatch.setattr(livewriters, "PROC", str(proc))
    _fake_setuid_holder(proc, 4242, os.getuid() + 4242, nb)
    fd = os.open(nb, os.O_RDWR)  # the one hidden in a socket's queue (the kernel's count of writers)
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    a.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))])
    os.close(fd)
    a.close()
    try:
        assert "(pid 4242) holds open for writing" in (ownership.file_writers(str(nb)) or "")
        monkeypatch.setattr(livewriters, "_processes", list)  # the visible holders' scan: none
        assert "where /proc shows no process holding it" in (ownership.file_writers(str(nb)) or "")
    finally:
        b.close()


def test_a_groups_administrators_and_password_in_gshadow_are_its_users(tmp_path, monkeypatch):
    # reliability-35: root's folder of group h52g (0775, /etc/group listing no one) passed as root's alone; the second
    # user, h52g's administrator in /etc/gshadow (gpasswd -A), added themselves after the check (gpasswd -a), renamed
    # their notebook over root's (sg h52g) and took themselves out: its cell ran as root, exit 0
    import grp

    from storagelab import usernames

    entry = grp.struct_group(("h52g", "x", 4243, []))
    monkeypatch.setattr(usernames.grp, "getgrgid", lambda gid: entry)
    monkeypatch.setattr(usernames.grp, "getgrall", lambda: [entry])
    monkeypatch.setattr(usernames, "group_users", lambda gid: set())
    monkeypatch.setattr(usernames.pwd, "getpwall", list)
    gshadow = tmp_path / "gshadow"
    monkeypatch.setattr(usernames, "GSHADOW", str(gshadow), raising=False)
    gshadow.write_text("root:*::\nh52g:!:bob:\nother:!:carol:dave\n")
    assert usernames.group_members(4243) == {"bob"}
    gshadow.write_text("h52g:$6$salt$hash::\n")
    assert usernames.group_members(4243) == {"whoever knows its password"}
    gshadow.write_text("h52g:!::\n")
    assert usernames.group_members(4243) == set()


@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("bindfs") or not os.path.exists("/dev/fuse"),
    reason="needs root, bindfs and /dev/fuse to mount root's own views of a folder",
)
@pytest.mark.parametrize("view", ["bindfs", "overlay"])
def test_a_file_seen_through_roots_own_view_of_a_folder_is_judged_by_the_file_behind_it(tmp_path, view):
    # reliability-35: root ran its notebook through its own bindfs view of its folder (allow_other), and through an
    # overlay of it; the second user held the file behind it open for writing (opened while 0666): the descriptor was
    # on the folder's device, the view's stat on FUSE's (the overlay's), FUSE files were never probed and the
    # overlay's own lease was free: `run` passed, and the cell they wrote ran as root
    tmp_path.chmod(0o700)
    src, mnt, upper, work = (tmp_path / name for name in ("src", "mnt", "upper", "work"))
    for folder in (src, mnt, upper, work):
        folder.mkdir()
    nb = src / "nb.ipynb"
    nb.write_text("{}")
    nb.chmod(0o644)
    mount = ["bindfs", str(src), str(mnt)]
    if view == "overlay":
        mount = ["mount", "-t", "overlay", "overlay", "-o", f"lowerdir={src},upperdir={upper},workdir={work}", str(mnt)]
    subprocess.run(mount, check=True, timeout=30)
    try:
        assert ownership.file_writers(str(mnt / "nb.ipynb")) is None
        queue = _hidden(nb)  # the kernel's count of the file behind the view
        try:
            assert "where /proc shows no process holding it" in (ownership.file_writers(str(mnt / "nb.ipynb")) or "")
        finally:
            queue.close()
    finally:
        subprocess.run(["umount", str(mnt)], check=False, timeout=30)

"""Reliability-15 (issue 26), paths: the attacks of the campaign on every command that makes or names a path, done
again here as the second user did them (docs/reliability-15-paths.md)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from test_reliability5_processes import _as_user
from test_reliability6_processes import USER, shared_tmp  # noqa: F401  (the fixture: a /tmp folder the user can enter)

from storagelab import ownership

_ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="the attacks need root and a second user")


def _user(*argv: str) -> None:
    subprocess.run(argv, check=True, preexec_fn=_as_user(USER))


@_ROOT_ONLY
@pytest.mark.skipif(not shutil.which("bindfs") or not os.path.exists("/dev/fuse"), reason="needs bindfs and /dev/fuse")
def test_a_path_entry_under_the_users_fuse_mount_closed_to_root_is_refused(shared_tmp, tmp_path, monkeypatch):  # noqa: F811
    """Reliability-15: the user's folder in a folder of root's (0755, as /home), their bindfs mounted over it without
    allow_other: root cannot enter it (EACCES), and the check of a folder closed to this user (2a54a53) judged it by
    root's folder above it and passed PATH=/root/h15r/bob/bin. The user unmounted once the check was done and root's
    `lab fio` ran their bin/fio, hidden under the mount, as uid 0 (twice in a 3-run matrix). Refused now: the mount
    is another user's, and a folder this user can enter did not close the path (a refusal below it is a mount's, or
    an NFS root_squash folder's, whose owner can open it later)."""
    roots = shared_tmp / "roots"  # root's 0755 folder, as /home
    roots.mkdir()
    roots.chmod(0o755)
    bob, src = roots / "bob", shared_tmp / "src"
    for folder in (bob, src):
        folder.mkdir()
        shutil.chown(folder, USER, USER)
    _user("mkdir", "-m", "755", str(bob / "bin"))
    _user("bindfs", "--no-allow-other", "-o", "nonempty", str(src), str(bob))
    try:
        with pytest.raises(PermissionError):
            (bob / "bin").stat()
        assert ownership.environment_refusal({"PATH": f"/usr/bin:{bob / 'bin'}"}) == (
            f"the environment's PATH ({bob / 'bin'}): {bob / 'bin'} is on a FUSE file system (fuse of {src}) mounted "
            f"by the user {USER}, whose process shows any owner and mode and can change its names at any time: "
            "another user could put their own files under the names written or read there as you (a Jupyter "
            "kernel's startup scripts, its connection file); unset PATH or give a folder of your own"
        )
        # and without the mount's line (an NFS folder under root_squash refuses root the same way): root can enter
        # root's folder above, so it is not what closed the path
        empty = tmp_path / "mountinfo"
        empty.write_text("")
        monkeypatch.setattr(ownership, "MOUNTINFO", str(empty))
        assert ownership.environment_refusal({"PATH": str(bob / "bin")}) == (
            f"the environment's PATH ({bob / 'bin'}): {bob / 'bin'}: Permission denied while it was checked (a folder of "
            "another user's on its way?): another user could put their own files under the names written or read "
            "there as you (a Jupyter kernel's startup scripts, its connection file); unset PATH or give a folder of "
            "your own"
        )
    finally:
        subprocess.run(["fusermount", "-u", str(bob)], check=False)


def _exchange(a: Path, b: Path) -> None:
    import ctypes  # noqa: PLC0415

    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.renameat2(-100, os.fsencode(a), -100, os.fsencode(b), 2) == 0, os.strerror(ctypes.get_errno())


@_ROOT_ONLY
def test_a_folder_and_a_link_swapped_while_resolved_are_named_not_invalid_argument(shared_tmp, monkeypatch):  # noqa: F811
    """Reliability-13/-14 Lows, reliability-15: the user swaps their folder /tmp/h15X and their link to a folder of
    root's with renameat2(RENAME_EXCHANGE); a resolve whose lstat saw the link and whose readlink then met the folder
    failed with a bare "[Errno 22] Invalid argument: '/tmp/h15X'" (spark-ingest's and the lab's checks, 19 of 3600
    tries here; file_refusal and made_refusal raised it). Done here at that moment: each check now says what happened, and refuses."""
    pub = shared_tmp / "pub"
    pub.mkdir()
    pub.chmod(0o1777)  # as /tmp
    roots = shared_tmp / "roots"
    roots.mkdir()
    x, link = pub / "h15X", pub / "h15X.l"
    _user("mkdir", "-m", "755", str(x))
    _user("ln", "-s", str(roots), str(link))
    _user("mv", "-T", str(link), str(x) + ".t")  # the name is their link now, their folder beside it
    _user("mv", "-T", str(x), str(link))
    _user("mv", "-T", str(x) + ".t", str(x))
    real_readlink = os.readlink

    def swapped_readlink(path, *a, **k):  # the user's exchange, between realpath's lstat and its readlink
        if os.fspath(path) == str(x) and os.path.islink(x):
            _exchange(x, link)
        return real_readlink(path, *a, **k)

    monkeypatch.setattr(os, "readlink", swapped_readlink)
    said = f"{x}: {ownership.SWAPPED}"
    assert ownership.spark_output(str(x / "out")) == (f"output {x / 'out'}: {said}", str(x / "out"))
    _exchange(x, link)  # back: the name is their link again
    with pytest.raises(OSError, match=r"stopped being a symlink while it was resolved \(another user may be swapping"):
        ownership.resolved(x / "out")
    assert [p.name for p in roots.rglob("*")] == ["out"]  # made, then checked (rule 5): empty, nothing written

"""Reliability-12 (issue 26): the attacks on reliability-11's fixes that broke them, each done again here."""

from __future__ import annotations

import os
from pathlib import Path

from storagelab import ownership

# the kernel's line in /proc/self/mountinfo for the user's bindfs -u 0 -g 0 -p 0755 -o allow_other (reliability-11),
# its mount point the test's folder: the kernel escapes only space, tab, newline and backslash, other bytes as they are
_BINDFS = b"54 27 0:50 / %s rw,nosuid,nodev,relatime - fuse /tmp/h12u/src rw,user_id=%d,group_id=%d,allow_other\n"


def test_a_fuse_mount_of_another_users_at_a_name_that_is_not_utf8_is_refused(tmp_path, monkeypatch):
    """Reliability-12: the user's bindfs at /tmp/h12<0xff>m showed root 0755; mountinfo read with errors="replace"
    named it /tmp/h12\\ufffdm, which matched no path, so it passed for root's, and root's `run --output` there
    truncated a root-only file through the user's symlink at out/executed/08_fio.ipynb."""
    at = Path(os.fsdecode(os.fsencode(tmp_path) + b"/h12\xffm"))
    at.mkdir()
    other = os.getuid() + 1
    info = tmp_path / "mountinfo"
    info.write_bytes(open("/proc/self/mountinfo", "rb").read() + _BINDFS % (os.fsencode(at), other, other))
    monkeypatch.setattr(ownership, "MOUNTINFO", str(info))
    assert ownership._mount_of(str(at / "out")) == (
        "fuse",
        "/tmp/h12u/src",
        f"rw,user_id={other},group_id={other},allow_other",
    )
    assert ownership.shared(at) == (
        f"{at} is on a FUSE file system (fuse of /tmp/h12u/src) mounted by the user {ownership._user_name(other)}, "
        "whose process shows any owner and mode and can change its names at any time (mode "
        f"{__import__('stat').filemode(at.stat().st_mode)})"
    )
    assert ownership.made_refusal(at)[0] is not None

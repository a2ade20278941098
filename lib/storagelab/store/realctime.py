"""Which file systems keep a real ctime, the time of a file's last change that no user can set (filestamps.py).

Some report a ctime that is not one: vfat/exFAT and sshfs show the mtime, and a FUSE file system shows whatever its
process says (bindfs --ctime-from-mtime). On those, a rewrite whose mtime is set back keeps its stamp: reliability-28
(store) found 38 of 40 such rounds skipped for ever on a bindfs with --ctime-from-mtime. A file on a device whose
file system is not one of KEEPS_CTIME (by /proc/self/mountinfo, ``ownership.MOUNTINFO``) keeps no stamp and is read at every ingest."""

from __future__ import annotations

import os
from collections.abc import Callable

from .. import ownership

# the kernel's own ctime: set by the VFS at every change (or passed on from a server's or a host's own)
KEEPS_CTIME = frozenset(
    "ext2 ext3 ext4 xfs btrfs zfs f2fs jfs reiserfs nilfs2 bcachefs tmpfs ramfs overlay nfs nfs4 ceph virtiofs".split()
)


def devices() -> Callable[[int], bool]:
    """Whether a file on device ``st_dev`` has a real ctime, from the mounts as they are now. Without mountinfo (not
    Linux) every device is taken to keep one."""
    try:
        with open(ownership.MOUNTINFO, encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().splitlines()
    except OSError:
        return lambda dev: True
    kinds: dict[int, set[str]] = {}
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, rest = left.split(), right.split()
        if len(fields) < 3 or not rest or ":" not in fields[2]:
            continue
        major, _, minor = fields[2].partition(":")
        if major.isdigit() and minor.isdigit():
            kinds.setdefault(os.makedev(int(major), int(minor)), set()).add(rest[0])
    real = {dev for dev, types in kinds.items() if types <= KEEPS_CTIME}
    return real.__contains__

"""Who a file's owner and mode really are the word of: on a FUSE file system another user mounted, their process
answers every lookup and shows any owner and mode it likes (bindfs --force-user=root --perms=0600). The kernel
records who mounted it (``user_id=`` in /proc/self/mountinfo, read by ``ownership``); that user is the file's writer,
whatever ``stat`` says."""

from __future__ import annotations

import os
from pathlib import Path


def fuse_mounter(path: Path | str) -> int | None:
    """The uid of the user, neither root nor this one, whose FUSE file system ``path`` lies on (-1 when its names
    changed while they were resolved); None when it lies on no such file system."""
    from .ownership import _mount_of, resolved  # noqa: PLC0415

    try:
        mount = _mount_of(str(resolved(Path(path))))
    except OSError:
        return -1
    if mount is None or not mount[0].startswith("fuse"):
        return None
    options = mount[2].split(",")
    uid = next((int(o[8:]) for o in options if o.startswith("user_id=") and o[8:].isdigit()), 0)
    return None if uid in (0, os.getuid()) else uid

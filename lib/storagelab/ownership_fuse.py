"""Who a file's owner and mode really are the word of: on a FUSE file system another user mounted, their process
answers every lookup and shows any owner and mode it likes (bindfs --force-user=root --perms=0600). The kernel
records who mounted it (``user_id=`` in /proc/self/mountinfo, read by ``ownership``); that user is the file's writer,
whatever ``stat`` says."""

from __future__ import annotations

import os
import stat
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


def file_writers(path: str, invoker: int | None = None) -> str | None:
    """Who other than this user, root and ``invoker`` can change the file ``path``, as the words after "is a file":
    its owner, or (a regular file of this user's or root's) its mode or access control list letting another user
    write it; None when no one can, or when it is missing (its folder, checked apart, says who could make it).
    Reliability-32: root's own PYTHONSTARTUP with `setfacl -m u:bob:rw` passed (its owner was looked at alone), and
    the line bob wrote into it ran in root's notebook kernel."""
    from .ownership import _user_name, _writable_by_others  # noqa: PLC0415

    try:
        st = os.stat(path)
    except OSError:
        return None
    if st.st_uid not in (0, os.getuid(), invoker):
        return f"of another user's ({_user_name(st.st_uid)})"
    loose = stat.S_ISREG(st.st_mode) and _writable_by_others(st, path, made_in=False)
    return f"that {loose}" if loose else None

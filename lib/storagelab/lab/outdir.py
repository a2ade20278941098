"""Whether a lab output folder (``--out``) is this user's alone. The lab and fio write there by names known in
advance (``.<run>.txt.part``, fio's ``<run>_bw.1.log``), so a symlink another user planted under such a name would
be written through, as this user (root: any file; reliability-5). Checked when the command starts, and again when
the lab makes the folder: one that did not exist then may have been made since by another user (in a shared
parent such as /tmp)."""

from __future__ import annotations

import grp
import os
import pwd
import stat
from pathlib import Path


def refusal(what: str, out: Path) -> str | None:
    """The one line refusing ``out`` to ``storagelab lab WHAT`` when another user can write into it, else None.
    FileNotFoundError when it does not exist."""
    st = out.stat()
    owner = others_can_write(st)
    if not owner:
        return None
    return (
        f"storagelab lab {what}: --out {out} {owner} (mode {stat.filemode(st.st_mode)}): another user could put a "
        "symlink there under a name the lab or fio writes, and have them overwrite any file you can write; give a "
        "folder of your own (e.g. a new folder under it)"
    )


def made_ours(what: str, out: Path) -> str | None:
    """Make ``out`` (and its parents) when missing; then ``refusal`` of the folder that is there now."""
    out.mkdir(parents=True, exist_ok=True)
    return refusal(what, out)


def others_can_write(st: os.stat_result) -> str | None:
    """How users other than this one can write into the folder of stat ``st`` (another owns it, every user may,
    or its group may and has another user in it), as the words after its name; None when only this user can. A
    group-writable folder of this user's own group (Debian's user-private groups, umask 002) is this user's alone."""
    if st.st_uid != os.getuid():
        return "is another user's"
    if st.st_mode & 0o002:
        return "can be written by every user"
    if st.st_mode & 0o020 and (others := _group_members(st.st_gid) - {_user_name(os.getuid())}):
        users = ", ".join(sorted(others)[:3])
        return f"can be written by its group {_group_name(st.st_gid)}, which has other users ({users})"
    return None


def _group_members(gid: int) -> set[str]:
    """The users in group ``gid``: its listed members and the users whose primary group it is."""
    try:
        members = set(grp.getgrgid(gid).gr_mem)
    except KeyError:  # a group without a name: its users are unknown, so assume there are others
        return {f"gid {gid}"}
    return members | {u.pw_name for u in pwd.getpwall() if u.pw_gid == gid}


def _group_name(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def _user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)

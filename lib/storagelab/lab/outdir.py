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
    return _writable_by_others(st)


def movable_by_others(folder: Path) -> str | None:
    """How another user could swap ``folder`` for one of theirs after it was checked (rename it away, put their own
    folder, holding their symlinks, under its name): a folder above it that another user (not root) owns, or that
    another user can write and that lacks the sticky bit (/tmp has it: there only a name's owner may rename it).
    The words to say, naming that folder; None when no such folder is above it (reliability-7: a root-owned --target
    in a 0777 folder was swapped between the check and fio, and fio overwrote a root-only file)."""
    for parent in folder.absolute().parents:
        try:
            st = parent.stat()
        except OSError:
            continue
        if st.st_uid not in (0, os.getuid()):
            why = "is another user's"
        elif st.st_mode & stat.S_ISVTX:
            continue
        elif not (why := _writable_by_others(st) or ""):
            continue
        return (
            f"is inside {parent}, which {why} (mode {stat.filemode(st.st_mode)}): another user could rename "
            f"{folder.name} away once it is checked and put a folder of theirs in its place"
        )
    return None


def _writable_by_others(st: os.stat_result) -> str | None:
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

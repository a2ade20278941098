"""Users and groups by name, for the lines that say who could write or change a file."""

from __future__ import annotations

import grp
import pwd

from .livewriters import group_users


def group_members(gid: int) -> set[str]:
    """The users in group ``gid``: its listed members, the users whose primary group it is, and (reliability-33) the
    users of running processes in it (``livewriters.group_users``)."""
    try:
        members = set(grp.getgrgid(gid).gr_mem)
    except KeyError:  # a group without a name: its users are unknown, so assume there are others
        return {f"gid {gid}"}
    # reliability-34: every entry with that gid (getgrgid gives the first): root's folder of group h51g (no members)
    # passed while the second user was in h51g2, the same gid (groupadd -o), which their next login's processes have
    members |= {m for g in grp.getgrall() if g.gr_gid == gid for m in g.gr_mem}
    return members | {u.pw_name for u in pwd.getpwall() if u.pw_gid == gid} | group_users(gid)


def group_name(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)

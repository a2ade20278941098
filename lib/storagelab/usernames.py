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
    names = {g.gr_name for g in grp.getgrall() if g.gr_gid == gid}
    members |= {m for g in grp.getgrall() if g.gr_gid == gid for m in g.gr_mem} | _gshadow(names)
    # reliability-36: a password in /etc/group itself (no line in /etc/gshadow, or no gshadow): newgrp and sg take it
    if any(_password(g.gr_passwd) for g in grp.getgrall() if g.gr_gid == gid and g.gr_passwd != "x"):
        members.add("whoever knows its password")
    return members | {u.pw_name for u in pwd.getpwall() if u.pw_gid == gid} | group_users(gid)


GSHADOW = "/etc/gshadow"  # a test gives another


def _gshadow(names: set[str]) -> set[str]:
    """The administrators and members /etc/gshadow lists for the groups ``names``, and "whoever knows its password"
    for one with a password: each can join it (gpasswd -a, newgrp) whenever they like. Reliability-35: root's folder
    of group h52g (0775, /etc/group listing no one) passed as root's alone; the second user, its administrator
    (gpasswd -A), added themselves after the check and renamed their notebook over root's, and its cell ran as root.
    Unreadable (not root): nothing learnt."""
    try:
        with open(GSHADOW, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return set()
    out = set()
    for fields in (line.split(":") for line in lines):
        if len(fields) >= 4 and fields[0] in names:
            out |= {m for m in (fields[2] + "," + fields[3]).split(",") if m}
            if _password(fields[1]):
                out.add("whoever knows its password")
    return out


def _password(field: str) -> bool:
    """Whether a group's password field holds a password (not empty, not locked with "!" or "*")."""
    return bool(field) and not field.startswith(("!", "*"))


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

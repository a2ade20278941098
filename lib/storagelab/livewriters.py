"""Who can write a file now through what a running process of theirs already holds, whatever its mode says today.

A file's mode and access control list say who may open it for writing from now on; a process that opened it while it
was writable keeps its descriptor (or a shared writable mapping), and a process keeps the groups it started with
after its user is taken out of a group. Reliability-33: root's notebook, 0666, opened for writing by the second user,
then made 0644 by root (the fix reliability-32's refusal seemed to ask for): `storagelab run` passed it, and the cell
they wrote through their descriptor ran as root. Read from /proc: root sees every process; another user's processes
are closed to a user who is not root, who then learns nothing from here (their modes still say the rest)."""

from __future__ import annotations

import os
import stat

from .usernames import user_name

PROC = "/proc"  # a test gives another


def live_writer(st: os.stat_result, trusted: int | None = None) -> str | None:
    """How a running process of a user other than this one and root can write the file of stat ``st`` (a descriptor
    open for writing, a shared writable mapping of it, or its group among the process's groups while the mode lets
    the group write), as words after "that"; ``trusted``: a user whose processes count as this one's; None when none can. A descriptor passed through a socket and held only
    there is not seen (nor is one of a process in another PID namespace)."""
    me = os.getuid()
    try:
        pids = [p for p in os.listdir(PROC) if p.isdigit()]
    except OSError:
        return None
    for pid in pids:
        try:
            uid, groups = _credentials(pid)
        except (OSError, ValueError):
            continue  # gone, or not ours to read
        if uid in (0, me, trusted):
            continue
        who = f"the user {user_name(uid)} (pid {pid})"
        if st.st_mode & stat.S_IWGRP and st.st_gid in groups:
            return f"{who} can write as a member of its group, which a process of theirs still is"
        if _holds_for_writing(pid, st) or _maps_for_writing(pid, st):
            return f"{who} holds open for writing, whatever its mode is now (opened while it was writable)"
    return None


def _credentials(pid: str) -> tuple[int, set[int]]:
    """A process's effective user and its groups (effective and supplementary), from its status."""
    uid, groups = -1, set()
    with open(f"{PROC}/{pid}/status", encoding="utf-8", errors="replace") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key == "Uid":
                uid = int(value.split()[1])
            elif key == "Gid":
                groups.add(int(value.split()[1]))
            elif key == "Groups":
                groups.update(int(g) for g in value.split())
    return uid, groups


def _holds_for_writing(pid: str, st: os.stat_result) -> bool:
    try:
        fds = os.listdir(f"{PROC}/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            here = os.stat(f"{PROC}/{pid}/fd/{fd}")
            if (here.st_dev, here.st_ino) != (st.st_dev, st.st_ino):
                continue
            with open(f"{PROC}/{pid}/fdinfo/{fd}", encoding="ascii", errors="replace") as f:
                flags = next(int(line.split()[1], 8) for line in f if line.startswith("flags:"))
        except (OSError, ValueError, StopIteration, IndexError):
            continue
        if flags & (os.O_WRONLY | os.O_RDWR):
            return True
    return False


def _maps_for_writing(pid: str, st: os.stat_result) -> bool:
    """Whether a shared writable mapping of the file is in the process (it writes the file through memory)."""
    try:
        with open(f"{PROC}/{pid}/maps", encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return False
    for line in lines:
        fields = line.split()
        if len(fields) >= 5 and fields[1][1] == "w" and fields[1][3] == "s" and fields[4] == str(st.st_ino):
            major, minor = (int(x, 16) for x in fields[3].split(":"))
            if os.makedev(major, minor) == st.st_dev:
                return True
    return False

"""Who can write a file now through what a running process of theirs already holds, whatever its mode says today.

A file's mode and access control list say who may open it for writing from now on; a process that opened it while it
was writable keeps its descriptor (or a shared writable mapping), and a process keeps the groups it started with
after its user is taken out of a group. Reliability-33: root's notebook, 0666, opened for writing by the second user,
then made 0644 by root (the fix reliability-32's refusal seemed to ask for): `storagelab run` passed it, and the cell
they wrote through their descriptor ran as root. Read from /proc: root sees every process; another user's processes
are closed to a user who is not root, who then learns nothing from here (their modes still say the rest)."""

from __future__ import annotations

import os
import pwd
import stat
import time

PROC = "/proc"  # a test gives another


def live_writer(*stats: os.stat_result, trusted: int | None = None) -> str | None:
    """How a running process of a user other than this one and root can write a file of ``stats`` (a descriptor
    open for writing, a shared writable mapping of it, or its group among the process's groups while the mode lets
    the group write), as words after "that"; None when none can. ``trusted``: a user whose processes count as this
    one's. A descriptor passed through a socket and held only there is not seen (nor one of a process in another PID
    namespace)."""
    files = {(st.st_dev, st.st_ino) for st in stats}
    for uid, pid, groups, written in _processes():
        if uid == trusted:
            continue
        who = f"the user {_name(uid)} (pid {pid})"
        if any(st.st_mode & stat.S_IWGRP and st.st_gid in groups for st in stats):
            return f"{who} can write as a member of its group, which a process of theirs still is"
        if files & written:
            return f"{who} holds open for writing, whatever its mode is now (opened while it was writable)"
    return None


def group_users(gid: int) -> set[str]:
    """The users other than this one and root with a running process in group ``gid`` (as its group or one of its
    supplementary groups): taken out of the group, a user keeps it in the processes they started before.
    Reliability-33: root's notebook in root's folder of group h50g (0775), the second user out of h50g in /etc/group,
    their shell still in it: they renamed their notebook over root's after the check, and its cell ran as root."""
    return {_name(uid) for uid, groups in _others_groups() if gid in groups}


def _name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


_SCANNED: dict[tuple, list[tuple[int, str, set[int], set[tuple[int, int]]]]] = {}
_GROUPS: dict[tuple, list[tuple[int, set[int]]]] = {}  # the credentials alone, for group_users


def _scan_key() -> tuple | None:
    """One scan serves the calls of two seconds while no process starts or ends (a database opened many times, a
    dataset's parts, the folders of a path)."""
    try:
        return (PROC, tuple(sorted(p for p in os.listdir(PROC) if p.isdigit())), int(time.monotonic() // 2))
    except OSError:
        return None


def _others(pids: tuple[str, ...]):
    """(user, pid, groups) of each process of ``pids`` whose user is other than this one and root."""
    for pid in pids:
        try:
            uid, groups = _credentials(pid)
        except (OSError, ValueError):
            continue  # gone, or not ours to read
        if uid not in (0, os.getuid()):
            yield uid, pid, groups


def _processes() -> list[tuple[int, str, set[int], set[tuple[int, int]]]]:
    """(user, pid, groups, files it can write through what it holds) of each process of a user other than this one
    and root: each scan reads every such process's descriptors and mappings."""
    if (key := _scan_key()) is None:
        return []
    if key not in _SCANNED:
        found = [(u, p, g, _held_for_writing(p) | _mapped_for_writing(p)) for u, p, g in _others(key[1])]
        _SCANNED.clear()
        _SCANNED[key] = found
    return _SCANNED[key]


def _others_groups() -> list[tuple[int, set[int]]]:
    """(user, groups) of each process of a user other than this one and root, from their status alone.
    Reliability-34 (processes): a folder path checked folder by folder asked for a group's users once per
    group-writable folder, and each ask read every process's descriptors and mappings: with 3,000 processes of
    another user, `run` of one notebook took 167 s instead of 21 s (112 s in 22 scans)."""
    if (key := _scan_key()) is None:
        return []
    if key in _SCANNED:
        return [(u, g) for u, _, g, _ in _SCANNED[key]]
    if key not in _GROUPS:
        found = [(u, g) for u, _, g in _others(key[1])]
        _GROUPS.clear()
        _GROUPS[key] = found
    return _GROUPS[key]


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


def _held_for_writing(pid: str) -> set[tuple[int, int]]:
    """The (device, inode) of each file the process holds a descriptor open for writing to, from its fdinfo alone
    (flags, mnt_id, ino): a stat through /proc/PID/fd/N asks the file's file system, and on a FUSE mount whose
    process the second user stopped (kill -STOP) root's `run` of its own notebook waited there until Ctrl-C."""
    try:
        fds = os.listdir(f"{PROC}/{pid}/fd")
    except OSError:
        return set()
    out, devices = set(), _devices(pid)
    for fd in fds:
        try:
            with open(f"{PROC}/{pid}/fdinfo/{fd}", encoding="ascii", errors="replace") as f:
                info = dict(line.split(":", 1) for line in f if ":" in line)
            flags, mount, ino = int(info["flags"], 8), int(info["mnt_id"]), int(info["ino"])
        except (OSError, ValueError, KeyError):
            continue
        if flags & (os.O_WRONLY | os.O_RDWR) and mount in devices:
            out.add((devices[mount], ino))
    return out


def _devices(pid: str) -> dict[int, int]:
    """Mount id -> device number, from the process's mountinfo (its own mount namespace's ids)."""
    try:
        with open(f"{PROC}/{pid}/mountinfo", encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().splitlines()
    except OSError:
        return {}
    out = {}
    for line in lines:
        fields = line.split()
        if len(fields) > 2 and fields[0].isdigit() and ":" in fields[2]:
            major, minor = fields[2].split(":", 1)
            out[int(fields[0])] = os.makedev(int(major), int(minor))
    return out


def _mapped_for_writing(pid: str) -> set[tuple[int, int]]:
    """The (device, inode) of each file the process maps shared and writable (it writes the file through memory)."""
    try:
        with open(f"{PROC}/{pid}/maps", encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return set()
    out = set()
    for line in lines:
        fields = line.split()
        if len(fields) >= 5 and fields[1][1] == "w" and fields[1][3] == "s" and fields[4].isdigit():
            major, minor = (int(x, 16) for x in fields[3].split(":"))
            out.add((os.makedev(major, minor), int(fields[4])))
    return out

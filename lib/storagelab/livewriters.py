"""Who can write a file now through what a running process of theirs already holds, whatever its mode says today.

A file's mode and access control list say who may open it for writing from now on; a process that opened it while it
was writable keeps its descriptor (or a shared writable mapping), and a process keeps the groups it started with
after its user is taken out of a group. Reliability-33: root's notebook, 0666, opened for writing by the second user,
then made 0644 by root (the fix reliability-32's refusal seemed to ask for): `storagelab run` passed it, and the cell
they wrote through their descriptor ran as root. Read from /proc: root sees every process; another user's processes
are closed to a user who is not root, who then learns nothing from here (their modes still say the rest)."""

from __future__ import annotations

import errno
import fcntl
import os
import pwd
import re
import signal
import stat
import time
from collections.abc import Callable

PROC = "/proc"  # a test gives another
# how a file's own owner, mode, group and access control list let another user write it, as words after "that" (the
# file behind root's own view is judged by it too: ``ownership.loose_file``, given by each caller, as that module
# imports this one)
Loose = Callable[[os.stat_result, str], "str | None"]


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


def any_writer(path: str | os.PathLike, st: os.stat_result, trusted: int | None = None, *, loose: Loose) -> str | None:
    """``live_writer``'s words for the file ``path`` (stat ``st``), else ``unseen_writer``'s."""
    return live_writer(st, trusted=trusted) or unseen_writer(path, st, trusted, loose=loose)


def unseen_writer(
    path: str | os.PathLike, st: os.stat_result, trusted: int | None = None, *, loose: Loose
) -> str | None:
    """How a descriptor no process shows in /proc can write the regular file ``path`` (whose stat is ``st``), as
    words after "that"; None when the kernel says no one holds it open for writing, or when what does is a process
    of this user's, root's or ``trusted``'s. Reliability-34: the second user opened root's 0666 notebook for
    writing, sent the descriptor through a UNIX socket of theirs and closed it (held only in the socket's queue:
    /proc/PID/fd shows a socket); root made the notebook 0644 and `storagelab run` passed it, and the cell they wrote
    through the descriptor they took back ran as root. The kernel counts every open for writing (a queued
    descriptor, io_uring's registered files, a shared writable mapping, a process in another PID namespace): a read
    lease is refused while any exists."""
    if not stat.S_ISREG(st.st_mode):
        return None
    mounts = _mounts()
    if isinstance(behind := _backing(path, st, mounts), str):  # a view of ours whose file behind is not judged
        return behind
    if behind and (words := _behind(*behind, trusted, loose) or any_writer(*behind, trusted, loose=loose)):
        return words  # root's own view of a folder (bindfs, an overlay): the file behind it
    if _fuse(st.st_dev, mounts):  # a FUSE file's open asks its (perhaps stopped) process
        return None
    try:  # the name found by O_PATH (no device's open runs), then that very file opened: a name swapped for a link
        found = os.open(path, os.O_PATH | os.O_CLOEXEC)  # to /dev/watchdog is never opened as root (nor a FIFO)
    except OSError:
        return None
    try:
        now = os.fstat(found)
        same = stat.S_ISREG(now.st_mode) and (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino)
        fd = os.open(f"/proc/self/fd/{found}", os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC) if same else -1
    except OSError:
        fd = -1
    finally:
        os.close(found)
    if fd < 0:
        return None  # another file there now, or gone: the callers' own checks judge names that change
    try:  # O_NONBLOCK: another process's lease is not waited on
        fcntl.fcntl(fd, fcntl.F_SETSIG, signal.SIGURG)  # a writer opening in the instant the lease is held breaks it
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)  # with SIGURG (ignored), not SIGIO (which ends a process)
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
        return None
    except OSError as e:
        if e.errno != errno.EAGAIN:  # not this user's to lease, or a file system without leases: nothing learnt
            return None
    finally:
        os.close(fd)
    if _held_by_us(st, trusted):
        return None
    return (
        "a process holds open for writing where /proc shows no process holding it (a descriptor sent through a UNIX "
        "socket and not yet taken, or registered with io_uring), whatever its mode is now"
    )


def _behind(path: str, st: os.stat_result, trusted: int | None, loose: Loose) -> str | None:
    """How the file ``path`` (stat ``st``) behind root's own view is another user's or writable by others, as words
    after "that"; None when it is not. Reliability-36: an overlay mounted with metacopy=on; root's chmod 644 through
    it of its notebook (0666 in the lower layer) copied up the mode alone, and the view showed 0644 while its bytes
    were still the lower file's: the second user wrote their cell there, and `run` of the view ran it as root. The
    same with bindfs's --perms or --force-user, which show a mode or owner the file behind does not have."""
    if st.st_uid not in (0, os.getuid(), trusted):
        return f"root's view shows of {path}, the user {_name(st.st_uid)}'s"
    words = loose(st, path)
    return f"root's view shows of {path}, which {words}" if words else None


def _held_by_us(st: os.stat_result, trusted: int | None) -> bool:
    """Whether a process of this user's, root's or ``trusted``'s holds the file of ``st`` open or mapped for writing
    (root's own build writing its database): the kernel's count cannot say whose a writer is."""
    file, ours = (st.st_dev, st.st_ino), (0, os.getuid(), trusted)
    first = [str(os.getpid()), str(os.getppid())]  # this one (DuckDB's own) and its parent (a build's kernel's)
    for pid in [*first, *(p for p in os.listdir(PROC) if p.isdigit() and p not in first)]:
        try:
            uid, _ = _credentials(pid)
        except (OSError, ValueError):
            continue
        if uid in ours and file in _held_for_writing(pid) | _mapped_for_writing(pid) and not _serves_fuse(pid):
            return True
    return False


def _serves_fuse(pid: str) -> bool:
    """Whether the process serves a FUSE file system (holds /dev/fuse): what it holds open it holds for whoever
    opened the file through its mount. Reliability-36: the second user opened root's notebook through root's bindfs
    view (allow_other) while it was 0666 and kept that descriptor in a socket's queue; bindfs (root's) held the file
    behind for writing, and cleared the hidden writer as root's own: `run` of the folder's own file passed, and the
    cell they wrote through the view ran as root."""
    try:
        fds = os.listdir(f"{PROC}/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"{PROC}/{pid}/fd/{fd}") == "/dev/fuse":  # the link's text alone: no file system asked
                return True
        except OSError:
            continue
    return False


def _backing(
    path: str | os.PathLike, st: os.stat_result, mounts: list[list[str]] | None
) -> tuple[str, os.stat_result] | str | None:
    """The file that a view of this user's or root's shows at ``path`` (stat ``st``), and its stat; words after
    "that" when the path lies on such a view (a FUSE file system of root's or this user's, an overlay) and the file
    behind it cannot be found and judged; None when it lies on no view (and on another user's FUSE mount, not asked:
    it may be stopped; the FUSE rule refuses it). Reliability-35: root ran its notebook through its own bindfs view
    of its folder (and through an overlay of it); the second user held the file behind it open for writing (opened
    while 0666), visibly in /proc: the descriptor was on the folder's device, the view's stat on FUSE's (the
    overlay's), so nothing matched and the view's own lease was free; the cell they wrote ran as root. Each campaign
    after found another form that hid the file behind (r-36: six), so a view whose file behind is not found is
    refused, never passed unjudged (r-37: a mergerfs pool, whose files have inodes of its own, passed so).
    ``mounts``: ``_mounts()``."""
    if mounts is None:
        return "lies where the mount table (/proc/self/mountinfo) cannot be read, so no view over it can be judged"
    view = _view(path, mounts)
    if view is None or _unescape(view[0][4]) == "/":  # the namespace's own root (a container's overlay) is no view
        return None
    fields, at, rel = view  # reliability-36: an overlay of layers on two file systems (an upper in tmpfs) gives its
    kind, options = fields[at + 1], fields[at + 3].split(",")  # files a device of each layer's, not the mount's
    if kind != "overlay" and not kind.startswith("fuse"):
        return None
    shown = f"root's view ({kind} at {_unescape(fields[4])})"
    if kind.startswith("fuse"):
        users = {int(o[8:]) for o in options if o.startswith("user_id=") and o[8:].isdigit()}
        if not users <= {0, os.getuid()}:
            return None  # another user's: not asked (it may be stopped); the FUSE rule refuses it
        if fields[2] != f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}":
            return f"{shown} shows from another file system than its own now, so the file behind it cannot be judged"
    if kind == "fuse.mergerfs":
        return _pooled(path, st, shown)
    layers = _layers(kind, fields, at)
    if not layers:
        return f"{shown} has no local folder behind it that can be found, so who can write its files cannot be judged"
    # r-36: an overlay's layers given by relative paths (as mountinfo shows them), a bindfs whose folder is not found
    if any(not layer.startswith("/") for layer in layers):
        return f"root's view shows from folders its mount names by relative paths ({fields[at + 3][:100]})"
    # reliability-36: a bind mount of a folder inside the view (its mountinfo root "/sub", not "/") hid the file behind
    inner = os.path.normpath(os.path.join(_unescape(fields[3]).lstrip("/"), rel))
    hopped = False  # to a lower layer's file by an upper file's metacopy
    for index, layer in enumerate(layers):
        backing = os.path.join(layer, inner)
        try:
            found = os.lstat(backing)
            if stat.S_ISLNK(found.st_mode) and kind != "overlay":  # r-36: bindfs --resolve-symlinks shows its target
                backing, found = os.path.realpath(backing), os.stat(backing)
            if kind == "overlay" and stat.S_ISREG(found.st_mode) and (to := _metacopy(backing)) is not None:
                # reliability-36: its mode alone copied up (metacopy=on): its bytes are a lower layer's file's
                inner = os.path.normpath(
                    to.lstrip("/") if to.startswith("/") else os.path.join(os.path.dirname(inner), to)
                )
                hopped = True
                continue
        except FileNotFoundError:
            continue
        except OSError as e:
            return f"{shown} shows {path} from {backing}, which cannot be looked at ({e.strerror})"
        if kind == "overlay" and (moved := _redirected(layers[:index], inner)):  # r-37: a folder renamed above it
            return f"{shown} shows {path} from a folder renamed in it ({moved}), whose files behind cannot be judged"
        # r-37: an overlay shows its file's own size and times; others: another file shown at that name (index=on:
        # a hard link of a lower layer shows the copy up of another of its names, not the lower file of its own)
        if kind == "overlay" and not hopped and _times(found) != _times(st):
            return f"{shown} shows {path} from another file than {backing} (its size or times differ), not judged"
        if stat.S_ISREG(found.st_mode) and (kind == "overlay" or found.st_ino == st.st_ino):
            return backing, found  # r-36: a view's view: judged in turn
        break
    return f"{shown} shows {path}, whose file behind it is not found in {', '.join(layers)[:200]}"


def _times(st: os.stat_result) -> tuple[int, int, int]:
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _redirected(layers: list[str], inner: str) -> str | None:
    """The first folder on the way to ``inner`` in the overlay's ``layers`` (those above the one a file was found in)
    that was renamed in the overlay (redirect_dir=on: the layers below look it up under its old name, not under
    ``inner``); None when none was. Reliability-37:
    root's overlay (redirect_dir=on), lower/newdir removed and lower/olddir renamed to newdir in the view: newdir's
    notebook was lower/olddir's (the second user holding it open for writing), but lower/newdir/nb.ipynb, root's old
    file, was judged, and the cell they wrote ran as root."""
    parts = inner.split(os.sep)[:-1]
    for layer in layers:
        for n in range(1, len(parts) + 1):
            folder = os.path.join(layer, *parts[:n])
            for prefix in ("trusted", "user"):
                try:
                    os.getxattr(folder, f"{prefix}.overlay.redirect", follow_symlinks=False)
                except OSError:
                    continue
                return folder
    return None


def _unescape(text: str) -> str:
    """A mountinfo field as the path it names (a space, tab, newline or backslash is written as three octal digits)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), text)


def _view(path: str | os.PathLike, mounts: list[list[str]]) -> tuple[list[str], int, str] | None:
    """The mountinfo fields of the mount ``path`` lies on (the deepest mount point over it, the last of equals), the
    index of their lone "-", and the path inside the mount; None when no line is whole."""
    real = os.path.realpath(path)
    over = mounts_over(real, mounts)
    return (*over[-1][:2], os.path.relpath(real, over[-1][2])) if over else None


def mounts_over(path: str, mounts: list[list[str]]) -> list[tuple[list[str], int, str]]:
    """Every mount whose point is the absolute ``path`` or a folder above it, shallowest first (of equal points, in
    mountinfo's order): its fields, the index of their lone "-", its point."""
    found = []
    for fields in mounts:
        at = fields.index("-") if "-" in fields else -1
        if at >= 5 and len(fields) >= at + 4:
            point = _unescape(fields[4])
            if path == point or path.startswith(point.rstrip("/") + "/"):
                found.append((len(point), fields, at, point))
    found.sort(key=lambda x: x[0])
    return [(fields, at, point) for _, fields, at, point in found]


def _layers(kind: str, fields: list[str], at: int) -> list[str]:
    """The folders an overlay (its upper layer first) or a FUSE view of a folder (bindfs) shows files from."""
    given = [o.split("=", 1) for o in fields[at + 3].split(",") if "=" in o]
    if kind == "overlay":  # r-36: lowerdir+= and datadir+= (one layer each) too; "\\:" and "\\," in a layer's name
        lower = [part for k, v in given if k == "lowerdir" for part in re.split(r"(?<!\\):", _unescape(v))]
        layers = [_unescape(v) for k, v in given if k == "upperdir"] + [re.sub(r"\\(.)", r"\1", x) for x in lower]
        layers += [_unescape(v) for k, v in given if k in ("lowerdir+", "datadir+")]
    else:
        layers = [_unescape(fields[at + 2])]
        if not layers[0].startswith("/"):  # r-36: bindfs names it "bindfs" for a folder with a space
            layers = _fuse_source(_unescape(fields[4])) or (layers if kind == "fuse.bindfs" else [])
    return [layer for layer in layers if layer]


def _pooled(path: str | os.PathLike, st: os.stat_result, shown: str) -> tuple[str, os.stat_result] | str:
    """The branch file that root's mergerfs pool shows at ``path`` (stat ``st``): its own answer to
    ``user.mergerfs.fullpath``, taken when that file's size and modification time are the view's (its inode
    numbers are its own, not the branch's). Reliability-37: the second user held a branch's file open for writing (opened
    while 0666, then 0644); the pool's file showed no writer and no lease could be asked of it, so `run` passed."""
    try:
        backing = os.fsdecode(os.getxattr(path, "user.mergerfs.fullpath"))
        found = os.lstat(backing)
        every = [os.fsdecode(p) for p in os.getxattr(path, "user.mergerfs.allpaths").split(b"\0") if p]
    except OSError as e:
        return f"{shown} does not say which branch file it shows ({e.strerror}: its xattr option off?)"
    # reliability-37: fullpath is the search policy's answer; an open may take another's (func.open=newest): the pool
    # showed root's b1/nb.ipynb (its stat, its fullpath), and `run` read the second user's newer one in their branch
    if len(every) > 1:
        return f"{shown} holds {path} in {len(every)} branches ({', '.join(every)[:200]}): which one it opens is not judged"
    same = (found.st_size, found.st_mtime_ns) == (st.st_size, st.st_mtime_ns)  # not another file by now
    return (
        (backing, found) if same and os.path.isabs(backing) else f"{shown} shows {path} from {backing}, changed since"
    )


def _fuse_source(point: str) -> list[str]:
    """The folder that a FUSE program of root's or this user's (bindfs) serving the mount point ``point`` shows, from
    its command line (``bindfs [options] FOLDER POINT``): mountinfo names the source "bindfs" when the folder's name
    has a space. Reliability-36: root's bindfs view of "/root/h53r/sp ace/src" hid the writer of the file behind it."""
    for pid in (p for p in os.listdir(PROC) if p.isdigit()):
        try:
            with open(f"{PROC}/{pid}/cmdline", "rb") as f:
                args = [os.fsdecode(a) for a in f.read().split(b"\0")[:-1]]
            if len(args) < 3 or os.path.normpath(args[-1]) != point or _credentials(pid)[0] not in (0, os.getuid()):
                continue
        except (OSError, ValueError):
            continue
        if os.path.isabs(args[-2]) and _serves_fuse(pid):
            return [os.path.normpath(args[-2])]
    return []


def _metacopy(path: str) -> str | None:
    """Where an overlay's upper file whose metadata alone was copied up (metacopy=on) has its data in a lower layer:
    its redirect (renamed after its copy-up: from the layer's top when it starts with "/", else beside it), else its
    own name; None for a file with data of its own."""
    for prefix in ("trusted", "user"):
        try:
            os.getxattr(path, f"{prefix}.overlay.metacopy")
        except OSError:
            continue
        try:
            return os.getxattr(path, f"{prefix}.overlay.redirect").decode("utf-8", "surrogateescape")
        except OSError:
            return os.path.basename(path)
    return None


def _mounts(pid: str = "self") -> list[list[str]] | None:
    """The fields of each line of a process's mountinfo (its mount namespace's); None when it cannot be read."""
    try:
        with open(f"{PROC}/{pid}/mountinfo", encoding="utf-8", errors="surrogateescape") as f:
            return [line.split() for line in f]
    except OSError:
        return None


def _fuse(device: int, mounts: list[list[str]] | None) -> bool:
    """Whether ``device`` is a FUSE file system's, from ``mounts`` (``_mounts()``; None, unknown: taken as one, not
    opened)."""
    if mounts is None:
        return True
    wanted = f"{os.major(device)}:{os.minor(device)}"
    for fields in mounts:
        if fields[2:3] == [wanted] and "-" in fields:  # the file system's type follows the lone "-"
            kind = fields[fields.index("-") + 1 :][:1]
            return bool(kind) and kind[0].startswith("fuse")
    return False


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
_GROUPS: dict[str, tuple[float, list[tuple[int, set[int]]]]] = {}  # the credentials alone, for group_users
GROUPS_FOR_S = 2.0  # how long one read of every process's groups answers group_users, whatever starts or ends


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
    another user, `run` of one notebook took 167 s instead of 21 s (112 s in 22 scans).
    The read is used for GROUPS_FOR_S seconds whatever processes start or end meanwhile (one check asked 21 times,
    and with processes starting and ending each ask read all 3,000 again): a process that starts in a group it
    did not inherit from a process already seen runs a set-group-ID program or newgrp, which root's set-up allows,
    and a check is a moment's picture in any case (the callers judge again what can change after it)."""
    if (key := _scan_key()) is None:
        return []
    if key in _SCANNED:
        return [(u, g) for u, _, g, _ in _SCANNED[key]]
    now = time.monotonic()
    read_at, found = _GROUPS.get(PROC, (None, []))
    if read_at is None or not 0 <= now - read_at < GROUPS_FOR_S:
        found = [(u, g) for u, _, g in _others(key[1])]
        _GROUPS.clear()
        _GROUPS[PROC] = (now, found)
    return found


def _credentials(pid: str) -> tuple[int, set[int]]:
    """A process's user and its groups (effective and supplementary), from its status. Its user: the first of its
    real, effective, saved and file-system users other than root and this one, else its effective one.
    Reliability-35: a set-user-ID root program the second user ran (su at its password prompt) kept their descriptor
    of root's notebook open for writing; as euid 0 it was root's, and cleared the hidden writer they held besides."""
    uid, groups = -1, set()
    with open(f"{PROC}/{pid}/status", encoding="utf-8", errors="replace") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key == "Uid":
                uids = [int(u) for u in value.split()]
                uid = next((u for u in uids if u not in (0, os.getuid())), uids[1])
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
    out = {}
    for fields in _mounts(pid) or []:
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

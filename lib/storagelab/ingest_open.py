"""How an ingest opens what it reads (logs, manifests, ignore files): only a regular file, and never a file another
user could not read themselves, reached through a name of theirs.

Root ingests folders of other users (a colleague's logs). The listing follows no symlink out of a folder, but the
file is opened later, by its name, in a worker: reliability-13 (h1) had the second user swap a listed log for a
symlink to root's 0600 file once the listing was done, and root's ingest stored that file's rows under the user's name,
exit 0 (1 in 3 runs); a manifest.csv or .storagelabignore that is such a link had root print the file's first line
in its error. So each file is opened by a walk that follows no symlink (``O_NOFOLLOW`` at every name, from a
descriptor of the folder above: nothing can be swapped in between), and where the path holds symlinks, those are
resolved first, one by one (``lstat``, ``readlink``, ``lstat``: the link read is the one whose owner was checked),
noting every user other than this one and root who owns one. A file reached through such a user's link is read
only when it is theirs. A symlink on a FUSE file system another user mounted is theirs, whatever owner it shows
(their process shows any: bindfs -u 0)."""

from __future__ import annotations

import errno
import os
import select
import stat
from collections.abc import Callable
from typing import TypeVar

from .usernames import user_name as _user_name

T = TypeVar("T")

_NOFOLLOW_DIR = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
MOUNTINFO = "/proc/self/mountinfo"


# a file larger than this is no log (an 8 TB sparse file was hashed for hours: issue 26's campaigns, Low): refused
# unread; fio's --write_lat_log of a long run at high IOPS reaches several GiB, far below it
def _limit(raw: str | None) -> tuple[int, str | None]:
    """The limit that STORAGELAB_MAX_FILE_BYTES ``raw`` sets, and why it is not one (reliability-16: ``abc`` or ``1e3``
    there ended every command with a ValueError traceback at import)."""
    if raw is None or not raw.strip():
        return 64 * 2**30, None
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value > 0:
        return value, None
    return 64 * 2**30, f"STORAGELAB_MAX_FILE_BYTES={raw!r} is not a number of bytes above 0: not read (unset it)"


MAX_INPUT_BYTES, _LIMIT_ERROR = _limit(os.environ.get("STORAGELAB_MAX_FILE_BYTES"))


def too_large(size: int) -> str | None:
    """Why a file of ``size`` bytes is not read (None: it is read)."""
    if _LIMIT_ERROR:
        return _LIMIT_ERROR
    if size <= MAX_INPUT_BYTES:
        return None
    return (
        f"{size:,} bytes, more than any log ({MAX_INPUT_BYTES:,} bytes at most; STORAGELAB_MAX_FILE_BYTES=N "
        "raises the limit): not read"
    )


_fuse_mounters: dict[int, int | None] = {}  # st_dev -> who mounted that FUSE file system (None: not FUSE)


def open_input(path: str | os.PathLike, *, reader_views: bool = False, last_link: bool = True):
    """``path`` opened for reading in binary, only when it is a regular file when opened (O_NONBLOCK: a FIFO
    swapped in since a check gives no writer's wait), and only as described above. Not one: OSError saying why.
    ``reader_views``: a database, which in a folder every user can write has its readers' hard links beside it
    (``database._private_view``), so more than one name there is not a sign of another user's link. ``last_link``
    False: a file listed as a file, not a link; a symlink at its name (put there since) is not followed
    (reliability-31 store, Low 1: one to a file outside the folder, which the listing does not follow, was read)."""
    path = os.fspath(path)
    fd, where, folder = None, os.path.abspath(path), None
    if ".." not in path.split("/"):
        try:
            fd, folder = _open_without_links(os.path.abspath(path))
        except OSError as e:
            if e.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise
    if fd is None:  # a symlink on the way (or a ".."): resolve it name by name, then open what it led to
        if last_link:
            real, owners = _resolve(path)
        else:  # the folders on the way resolved, the file's own name opened as it is
            real, owners = _resolve(os.path.dirname(path) or ".")
            real = os.path.join(real, os.path.basename(path))
        (fd, folder), where = _open_without_links(real), real
        try:
            _check_owner(fd, path, owners)
        except OSError:
            os.close(fd)
            raise
    st = os.fstat(fd)
    mode = st.st_mode
    if stat.S_ISREG(mode) and st.st_nlink > 1 and (why := _hard_linked(where, st, reader_views, folder)):
        os.close(fd)
        raise OSError(errno.EPERM, why, path)
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = (
            "a FIFO"
            if stat.S_ISFIFO(mode)
            else "a socket"
            if stat.S_ISSOCK(mode)
            else "a folder"
            if stat.S_ISDIR(mode)
            else "a device"
        )
        raise OSError(errno.EINVAL, f"{kind}, not a regular file", path)
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def _hard_linked(
    where: str, st: os.stat_result, reader_views: bool = False, folder: os.stat_result | None = None
) -> str | None:
    """Why a file of ``st`` with more than one name must not be read at ``where`` (its resolved path): its folder is
    another user's and the file is not theirs, or every user can write the folder (/tmp) and the file is this user's
    or root's: with fs.protected_hardlinks=0 (the kernel's own default) another user can make a hard link to any file
    of root's there, which no symlink check sees (reliability-14/15 Low). None otherwise. ``folder``: the stat of the
    folder the file was opened from (its descriptor's): reliability-17 (h1) had the user swap their folder's name for
    their symlink to /root between the open and a stat by name, and root's file was read through their hard link in
    31,544 of 663,745 tries."""
    if folder is None:
        try:
            folder = os.stat(os.path.dirname(where) or "/")
        except OSError:
            return None
    if folder.st_mode & 0o002 and st.st_uid in (0, os.getuid()) and not _views_explain(where, st, reader_views):
        who = "every user can write"
    elif folder.st_uid not in (0, os.getuid(), st.st_uid):
        who = f"of {_user_name(folder.st_uid)}'s"
    else:
        return None
    return (
        f"a hard link (one of {st.st_nlink} names) to a file of {_user_name(st.st_uid)}'s in a folder {who}, so "
        "another user could have made it: not read (copy the file in instead)"
    )


def _views_explain(where: str, st: os.stat_result, reader_views: bool) -> bool:
    """Whether every name of the database ``st`` but ``where`` is a reader's view of it (``database._private_view``:
    ``.<name>.read-*/<name>`` beside it, in a folder of root's, this user's or the file owner's). Reliability-16 (h7):
    any extra name was taken for a view, so with fs.protected_hardlinks=0 another user's hard link in /tmp to another
    database of root's was read by root's `sql --db` under the name they chose."""
    if not reader_views:
        return False
    folder, name = os.path.split(where)
    views = 0
    try:
        names = os.listdir(folder or "/")
    except OSError:
        return False
    for entry in names:
        if not entry.startswith(f".{name}.read-"):
            continue
        try:
            top = os.lstat(os.path.join(folder, entry))
            link = os.lstat(os.path.join(folder, entry, name))
        except OSError:
            continue
        if stat.S_ISDIR(top.st_mode) and top.st_uid in (0, os.getuid(), st.st_uid):
            views += (link.st_dev, link.st_ino) == (st.st_dev, st.st_ino)
    return views >= st.st_nlink - 1


MAX_TEXT_BYTES = 256 * 2**20  # a manifest or an ignore file: 100,000 files' labels are a few MB


def read_text_file(fh, path: str | os.PathLike, what: str) -> bytes:
    """The bytes of ``fh`` (opened by ``open_input``), a manifest or ignore file: at most ``MAX_TEXT_BYTES``, else
    OSError (EFBIG). Reliability-18 (h6): the second user's `.storagelabignore` (or manifest.csv) made a 6 GiB sparse
    file (nothing on disk) was read whole by root's ingest: out of memory, nothing stored (6 GiB of memory taken
    without a limit)."""
    data = fh.read(MAX_TEXT_BYTES + 1)
    if len(data) > MAX_TEXT_BYTES:
        size = max(os.fstat(fh.fileno()).st_size, len(data))
        raise OSError(
            errno.EFBIG, f"{size:,} bytes, more than any {what} ({MAX_TEXT_BYTES:,} at most)", os.fspath(path)
        )
    return data


def read_input(path: str | os.PathLike) -> bytes:
    """The whole of ``path``, opened by ``open_input`` (``storagelab parse`` reads as ingest does); one larger than
    ``MAX_INPUT_BYTES``: OSError (EFBIG) saying so, unread."""
    with open_input(path) as fh:
        size = os.fstat(fh.fileno()).st_size
        if why := too_large(size):
            raise OSError(errno.EFBIG, why, os.fspath(path))
        data = fh.read(size + 1)  # (read(n) allocates n bytes at once: never the limit itself)
        if len(data) <= size:
            return data
        parts, total = [data], len(data)  # reliability-17: grown since the check: read on, never past the limit
        while block := fh.read(1 << 20):
            parts.append(block)
            total += len(block)
            if too_large(total):
                raise OSError(errno.EFBIG, too_large(max(os.fstat(fh.fileno()).st_size, total)), os.fspath(path))
        return b"".join(parts)


def _open_without_links(real: str) -> tuple[int, os.stat_result]:
    """The file at the absolute path ``real``, every name of it opened with O_NOFOLLOW from the folder above's
    descriptor: a symlink anywhere on the way (swapped in since ``real`` was resolved) gives ELOOP or ENOTDIR. With
    it, the stat of the folder it was opened from (its descriptor's: the folder itself, whatever its name is now)."""
    *folders, last = real.split("/")[1:]
    fd = os.open("/", _NOFOLLOW_DIR)
    try:
        for name in folders:
            if name:
                nfd = os.open(name, _NOFOLLOW_DIR, dir_fd=fd)
                os.close(fd)
                fd = nfd
        return os.open(last or ".", _FILE, dir_fd=fd), os.fstat(fd)
    except OSError as e:  # named by the whole path, as an open by name says it (not the last name alone)
        if e.errno == errno.ELOOP:
            raise OSError(errno.ELOOP, "a symlink was put in its place while it was read", real) from None
        if e.errno == errno.ENXIO:  # open(2) of a socket (reliability-32 store, Low 1: "No such device or address")
            raise OSError(errno.EINVAL, "a socket (or a device with no driver), not a regular file", real) from None
        raise OSError(e.errno, e.strerror, real) from None
    finally:
        os.close(fd)


def _resolve(path: str) -> tuple[str, set[int]]:
    """``path`` with its symlinks resolved one by one: (the path, the users other than this one and root who own a
    link followed). Each link is read between two ``lstat``s of it that must agree (another user could replace a link
    of root's in their folder with theirs between the owner's check and the read)."""
    todo = list(reversed(os.path.abspath(path).split("/")[1:] if ".." not in path.split("/") else _parts(path)))
    here, hops, owners = "/", 0, set()
    while todo:
        name = todo.pop()
        if name in ("", "."):
            continue
        if name == "..":  # ``here`` holds no symlink, so its parent is the real one
            here = os.path.dirname(here)
            continue
        nxt = os.path.join(here, name)
        st = os.lstat(nxt)
        if not stat.S_ISLNK(st.st_mode):
            here = nxt
            continue
        hops += 1
        if hops > 40:
            raise OSError(errno.ELOOP, "too many levels of symbolic links", path)
        try:
            target = os.readlink(nxt)
        except OSError as e:  # EINVAL: no longer a link (reliability-17: `sql --db` said a bare "Invalid argument")
            if e.errno not in (errno.EINVAL, errno.ENOENT):
                raise
            raise OSError(errno.ELOOP, "a symlink on its way was replaced while it was read", path) from None
        again = os.lstat(nxt)
        if (again.st_dev, again.st_ino) != (st.st_dev, st.st_ino):
            raise OSError(errno.ELOOP, "a symlink on its way was replaced while it was read", path)
        uid = _fuse_mounter(st.st_dev)
        uid = st.st_uid if uid is None else uid  # on another user's FUSE file system, every name is theirs
        if uid not in (0, os.getuid()):
            owners.add(uid)
        todo.extend(reversed(target.split("/")))
        if target.startswith("/"):
            here = "/"
    return here, owners


def _parts(path: str) -> list[str]:
    return (path if path.startswith("/") else os.getcwd() + "/" + path).split("/")[1:]


def _check_owner(fd: int, path: str, owners: set[int]) -> None:
    """A file reached through symlinks of other users is read only when it is theirs: their link must not have this
    user (root) read for them what they cannot read."""
    if not owners:
        return
    st = os.fstat(fd)
    if owners == {st.st_uid} and _fuse_mounter(st.st_dev) in (None, st.st_uid):
        return
    who = " and ".join(_user_name(u) for u in sorted(owners))
    raise OSError(
        errno.EPERM,
        f"reached through a symlink of the user {who}'s, it leads to a file of {_user_name(st.st_uid)}'s: not read "
        "(a link of another user's is followed only to a file of theirs; copy the file in instead)",
        path,
    )


def _mounts_changed() -> bool:
    """Whether the mount table may have changed since the last call (always, the first time in this process): an open
    /proc/self/mountinfo is marked by the kernel at every mount and unmount, and ``poll`` reads and clears the mark."""
    global _mount_watch
    pid = os.getpid()
    if _mount_watch is None or _mount_watch[0] != pid:  # a forked child polls a descriptor of its own
        try:
            fd = os.open(MOUNTINFO, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return True
        poller = select.poll()
        poller.register(fd, select.POLLPRI | select.POLLERR)
        poller.poll(0)
        _mount_watch = (pid, fd, poller)
        return True
    return bool(_mount_watch[2].poll(0))


_mount_watch: tuple[int, int, select.poll] | None = None


def _fuse_mounter(dev: int) -> int | None:
    """Who mounted the FUSE file system with device ``dev``, when it is one and that was a user other than this one
    and root; else None. /proc/self/mountinfo is read again for a device not seen before (a mount made since), and
    everything known is forgotten once the mount table changed: a device number is given again to the next mount
    (a FUSE file system of root's unmounted, another user's mounted: it had the same number, and their links, which
    their bindfs shows as root's, were followed as root's for the rest of the process)."""
    if _mounts_changed():
        _fuse_mounters.clear()
    if dev not in _fuse_mounters:
        try:
            with open(MOUNTINFO, encoding="utf-8", errors="surrogateescape") as f:
                lines = f.read().splitlines()
        except OSError:
            lines = []
        for line in lines:
            left, _, right = line.partition(" - ")
            fields, rest = left.split(), right.split()
            if len(fields) < 3 or len(rest) < 3 or ":" not in fields[2]:
                continue
            major, minor = fields[2].split(":", 1)
            uid = None
            if rest[0].startswith("fuse"):
                uid = next((int(o[8:]) for o in rest[2].split(",") if o.startswith("user_id=") and o[8:].isdigit()), 0)
            _fuse_mounters[os.makedev(int(major), int(minor))] = None if uid in (None, 0, os.getuid()) else uid
        _fuse_mounters.setdefault(dev, None)
    return _fuse_mounters[dev]


def same_folder_through(folder: str, read: Callable[[str], T]) -> T:
    """``read(folder)``, the folder the same one (inode and device) before and after; gone: FileNotFoundError; replaced:
    OSError (ESTALE). Reliability-37 (store): data/raw swapped by two renames (`mv data/raw data/raw.old; mv new
    data/raw`) during `storagelab ingest`: its ignore file, read in the instant between them, was none, and the new
    folder's excluded files were stored (and kept for good), exit 0 (through the CLI with a racer, and hooked)."""
    before = os.stat(folder)
    out = read(folder)
    after = os.stat(folder)
    if (before.st_ino, before.st_dev) != (after.st_ino, after.st_dev):
        raise OSError(errno.ESTALE, "replaced by another folder while its ignore file was read: run it again", folder)
    return out

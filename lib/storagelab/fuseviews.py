"""Whether a path a command was given is reached through a FUSE view of root's own (bindfs, a mergerfs pool) of
folders on which another user has mounted, or can mount, a FUSE file system of theirs.

Reliability-37 (read, High 3): the second user stopped their FUSE server (``kill -STOP``) under root's own bindfs
view (and mergerfs pool) of a folder holding their mount. Root's `run`, `sql` and `ingest` through the view then waited
in the kernel for as long as they liked, SIGKILL included: root's own FUSE server had read the request and waited on
theirs, and the kernel does not let go of a request its server has read. Directly on their mount, or through an
overlay, Ctrl-C ends the wait (``stuck``). Nothing ends that wait once it starts, so the check comes before the path
is first looked up: lexical (the path as written, mountinfo, the view's sources from its server's command line) and by
``lstat`` of the folders behind the view, never through it. A FUSE mount can only be made on a folder its user can
write (fusermount), so folders behind the view that no other user can write cannot get one later either."""

from __future__ import annotations

import glob
import os
import stat
from pathlib import Path

from . import livewriters, ownership

_DEPTH = 8  # views of views followed at most this deep


def refusal(args) -> str | None:
    """The first path a command was given (its arguments, ``key=value`` parameters' values, the working folder) that
    lies in such a view, as the line to say; None for the rest (and at once on a machine with no FUSE view of
    root's)."""
    mounts = livewriters._mounts()
    if not mounts or not any(_own_fuse(fields) for fields in mounts):
        return None
    given: list[str] = []
    for value in vars(args).values():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and item and "\0" not in item:
                given += [item, item.split("=", 1)[1]] if "=" in item else [item]
    from . import paths  # noqa: PLC0415

    for path in [os.getcwd(), *map(str, (paths.RAW, paths.PARSED, paths.REPORTS)), *given]:
        if why := hazard(_links_followed(path, mounts), mounts):
            return f"{path}: {why}"
    return None


def _links_followed(path: str, mounts: list[list[str]]) -> str:
    """``path`` made absolute with its symlinks followed (data/raw a link into a view), each name looked up only
    while the folder holding it lies in no FUSE view of root's: from there on, as written."""
    todo, done, links = list(Path(os.path.abspath(path)).parts[1:]), "/", 0
    while todo:
        name = todo.pop(0)
        if name in ("", "."):
            continue
        if name == "..":
            done = os.path.dirname(done)
            continue
        if any(_own_fuse(fields) and point != "/" for fields, _, point in livewriters.mounts_over(done, mounts)):
            return os.path.normpath(os.path.join(done, name, *todo))
        here = os.path.join(done, name)
        try:
            target = os.readlink(here) if stat.S_ISLNK(os.lstat(here).st_mode) else None
        except OSError:
            target = None
        if target is None or links >= 40:
            done = here
            continue
        links += 1
        todo = [*Path(target).parts, *todo]
        if target.startswith("/"):
            done, todo = "/", todo[1:]
    return done


def hazard(path: str, mounts: list[list[str]], depth: int = 0) -> str | None:
    """How ``path`` (taken as written, made absolute) is reached through root's own FUSE view of folders another
    user has a FUSE mount on or can make one on, as words; None when it is not."""
    target = os.path.normpath(os.path.abspath(path))
    over = livewriters.mounts_over(target, mounts)
    for fields, at, point in over if depth else []:  # their mount behind root's view (directly on it, Ctrl-C ends
        users = _users(fields, at)  # a wait: ``stuck``)
        if fields[at + 1].startswith("fuse") and not users <= {0, os.getuid()}:
            return f"lies on a FUSE mount of {livewriters._name(max(users))}'s at {point}"
    views = [(fields, at, point) for fields, at, point in over if _own_fuse(fields) and point != "/"]
    if not views:
        return _writable_behind(target) if depth else None
    if depth >= _DEPTH:
        return "lies in views of views too deep to follow"
    fields, at, point = views[-1]  # the deepest view over it (a shallower one: its own point is judged in turn)
    rel = os.path.relpath(target, point)
    sources = _sources(fields, at, point)
    if not sources:
        return None  # no local folder behind it (sshfs): nothing of another local user's to wait on
    for source in sources:
        behind = os.path.normpath(os.path.join(source, rel))
        if why := hazard(behind, mounts, depth + 1):
            return f"is shown by root's FUSE view ({fields[at + 1]} at {point}) of {source}; {behind} {why}"
    for shallower in views[:-1]:
        if why := hazard(shallower[2], mounts, depth + 1):
            return why
    return None


def _writable_behind(target: str) -> str | None:
    """Which folder on the way to ``target`` (a path behind a view, on no FUSE mount) another user owns or can write,
    so could mount a FUSE file system on, as words; None when there is none."""
    for folder in [*reversed(Path(target).parents), Path(target)]:
        try:
            st = os.lstat(folder)
        except OSError:
            return None  # not there: nothing to mount on behind it either (the command says what is missing)
        if not stat.S_ISDIR(st.st_mode):
            return None
        if (st.st_mode & stat.S_ISVTX) and st.st_uid in (0, os.getuid()):
            continue  # sticky (/tmp): only its owner may mount on it (fusermount)
        if who := ownership.others_can_write(st, folder):
            return (
                f"is inside {folder}, which {who}: a FUSE mount of theirs there, stopped, would hold this command "
                "in the kernel for good, SIGKILL included; give the path behind the view"
            )
    return None


def _users(fields: list[str], at: int) -> set[int]:
    return {int(o[8:]) for o in fields[at + 3].split(",") if o.startswith("user_id=") and o[8:].isdigit()}


def _own_fuse(fields: list[str]) -> bool:
    at = fields.index("-") if "-" in fields else -1
    if at < 5 or len(fields) < at + 4 or not fields[at + 1].startswith("fuse"):
        return False
    return _users(fields, at) <= {0, os.getuid()}


def _sources(fields: list[str], at: int, point: str) -> list[str]:
    """The local folders root's FUSE view shows: bindfs's folder, a mergerfs pool's branches (from its command line:
    ``/a:/b=RO``, globs expanded as mergerfs expands them); none for a view of no local folder."""
    source = livewriters._unescape(fields[at + 2])
    found = [source] if source.startswith("/") else livewriters._fuse_source(point)
    if fields[at + 1] != "fuse.mergerfs":
        return found
    branches: list[str] = []
    for given in (part.rsplit("=", 1)[0] for text in found for part in text.split(":")):
        branches += sorted(glob.glob(given)) if glob.has_magic(given) else [given]
    return [b for b in branches if b.startswith("/")]

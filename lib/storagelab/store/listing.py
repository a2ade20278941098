"""Which files an ingest looks at, and how each is named in the database.

Paths are canonical: resolved, relative to the project root when inside it, as UTF-8 text (the bytes
of a non-UTF-8 name as ``\\xNN``), so a folder listed twice, a file and its folder, or a symlink to a
listed file all give one key. Only six values are kept per file (100,000 stat results would hold
~100 MB): the two of its stamp (inode, ctime) tell whether the bytes at a path are the ones read before."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

from .. import ignore, paths
from ..errors import StoreError
from . import realctime

SKIP_NAMES = {"manifest.csv", "README", "README.md", "README.txt", ".gitkeep"}


class ListedFile(NamedTuple):
    key: str  # how the file is stored (files.path)
    path: str  # where to read it
    size: int
    mtime_ns: int
    ino: int = 0  # the stamp (filestamps.py): inode and ctime when listed; ctime -1 when it cannot vouch for the bytes
    ctime_ns: int = -1
    link: bool = False  # listed as a symlink (to a file in its folder): read through it; else one put there is not
    dev: int = 0  # a link's: the device of the file it led to when listed (led_elsewhere); 0 for a file


def stamp_of_read(item: ListedFile, st: os.stat_result) -> int:
    """The ctime to keep as the stamp of bytes read through a descriptor whose fstat is ``st``: the listing's when the
    descriptor is the file listed, as listed; else -1 (no stamp: the file is read again at its next ingest).
    Reliability-29 (store, High 1): a folder renamed away between the listing and the read, another put in its place
    and renamed back after the ingest (renaming a folder changes no ctime of the files in it): the other folder's
    bytes were stored under the first's stamps and skipped at every later ingest (13 of 20 real races)."""
    now = st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns
    return item.ctime_ns if now == (item.size, item.mtime_ns, item.ino, item.ctime_ns) else -1


def led_elsewhere(item: ListedFile, st: os.stat_result) -> OSError | None:
    """A file listed through a symlink is stored as the file the link led to (its key, resolved at the listing); the
    bytes of a descriptor opened through the link later are that file's only when it is the inode listed. Else (the
    error to raise): the link was re-pointed, or replaced by a file, since. Reliability-33 (store): a-l.txt -> z.txt
    (kept for the key, z.txt left out as its copy) re-pointed to m.txt, to a file outside, or replaced by a file
    between the listing and the read: z.txt was held with those bytes, exit 0, until the next ingest. Reliability-35
    (store): the inode alone, re-pointed to a file of another file system with one inode number (two ext4 disks made
    alike): passed; so the device too. And the file the key names must still be that inode: the target deleted, its
    inode number given to a new file the link was re-pointed to (a same-device form the numbers alone pass)."""
    if not item.link or not item.ino:
        return None
    if (st.st_ino, st.st_dev) == (item.ino, item.dev or st.st_dev) and _key_names(item, st):
        return None
    return OSError(
        errno.ESTALE,
        f"a symlink that led to {printable(item.key)} when listed leads to another file now (re-pointed or replaced "
        "since): not stored this time; the next ingest reads it again",
        item.path,
    )


def _key_names(item: ListedFile, st: os.stat_result) -> bool:
    """Whether the file stored as the link's key is the inode of ``st`` now. A key holding ``\\`` (a name that is
    not UTF-8 written with escapes, or a ``\\`` of the name's own) cannot be spelled back to the name: the file the
    link leads to now, if its key is the link's key. Reliability-36 (store): such keys were not looked up, so a target
    named ``z\\q.txt`` (or not UTF-8) deleted, its inode number given to a new file the link was re-pointed to: held
    with that file's bytes, failed 0 (4 of 4 hooked tries on an ext4 image)."""
    key = item.key
    try:
        if "\\" in key:
            real = os.path.realpath(item.path, strict=True)
            if _key_of(Path(real)) != key:
                return False
            key = real
        now = os.stat(key if key.startswith("/") else paths.ROOT.resolve() / key)
    except (OSError, RuntimeError):
        return False
    return (now.st_ino, now.st_dev) == (st.st_ino, st.st_dev)


def list_files(
    targets: Iterable[Path | str],
    skipped: list[str] | None = None,
    unreadable: list[tuple[str, str, str]] | None = None,
    documents: list[ListedFile] | None = None,
    pinned: bool = False,
) -> Iterator[ListedFile]:
    """Every file to ingest, sorted by relative path, with one scandir per folder and one stat per
    file. Hidden entries, manifest/README/.gitkeep and .md/.ipynb files are skipped; keys are made
    from the folder's key unless a symlink is involved (then resolved one by one, as ``key_for``
    does). A symlink in a folder to a file outside that folder is not followed (said in
    ``skipped``): a folder's logs are the files in it. A folder inside a target that cannot be read is
    left out and said in ``unreadable`` as (key, path, reason). The .md files left out are added to ``documents``
    (a write-up may hold a tool's output: the ingest says so). A target that does not exist: FileNotFoundError.
    ``pinned``: the folders are an ingest's, pinned (``pinned_key``)."""
    keeps_ctime = realctime.devices()  # a file of a file system whose ctime is not real keeps no stamp (ctime -1)
    for t in targets:
        p = Path(t)
        if p.is_dir():
            top = pinned_key(p) if pinned else key_for(p)
            prefix = "" if top == "." else top + "/"
            real_top = p.resolve()
            bad: list[tuple[str, str, str]] = []
            docs: list[tuple[str, str, int, int, int, int, bool]] = []
            odd: list[tuple[str, str]] = []
            found = _scan(p, bad, docs, odd, keeps_ctime)
            if skipped is not None and odd:  # reliability-15/17: a FIFO named a.txt was left out without a word
                named = {path for _, path in ignore.split([(path, path) for path, _ in odd], [p])[0]}
                skipped += [
                    f"{printable(path)}: {kind}, not a regular file: not read" for path, kind in odd if path in named
                ]
            if unreadable is not None:
                unreadable += [(printable(prefix + rel), path, why) for rel, path, why in bad]
            if documents is not None:
                documents += [ListedFile(printable(prefix + rel), path, *st) for rel, path, *st, _ in docs]
            found.sort(key=lambda f: f[0].replace("/", "\0"))  # part by part, as Path.rglob's sorted tuples
            for rel, path, size, mtime_ns, ino, ctime_ns, link in found:
                if link:
                    try:
                        real, key, (size, mtime_ns, ino, ctime_ns), dev = _led_to(Path(path), keeps_ctime)
                    except (OSError, RuntimeError):  # Python 3.11's resolve: RuntimeError for a symlink loop
                        continue  # gone since the scan (or made a loop), as a file that is
                    if not real.is_relative_to(real_top):
                        if skipped is not None:
                            skipped.append(
                                f"{printable(path)}: a symlink to {printable(str(real))}, outside "
                                f"{printable(str(p))}: not followed (copy the file in instead)"
                            )
                        continue
                else:
                    key, dev = printable(prefix + rel), 0
                yield ListedFile(
                    path if key == path else key, path, size, mtime_ns, ino, ctime_ns, link, dev
                )  # 1 str if same
        elif p.exists():
            link = p.is_symlink()
            _, key, four, dev = _led_to(p, keeps_ctime)
            yield ListedFile(key, str(p), *four, link, dev if link else 0)
        else:
            raise FileNotFoundError(f"{p}: no such file or directory")


def _led_to(path: Path, keeps_ctime: Callable[[int], bool]) -> tuple[Path, str, tuple[int, int, int, int], int]:
    """Where ``path`` leads: the resolved path, its key, the four stat values and the device of that path (not of
    ``path``, which a symlink may lead elsewhere by then); OSError if it is gone. The key and the inode the read is checked against
    (led_elsewhere) are the one file's. Reliability-34 (store): a-l.txt -> m.txt when stat'ed, re-pointed to z.txt when
    resolved, back to m.txt when read: the listing held z.txt's key with m.txt's inode, the read passed the check, and
    z.txt, untouched, was held with m.txt's bytes, exit 0, until the next ingest."""
    real = path.resolve()
    st = os.stat(real)
    return real, _key_of(real), _four(st, keeps_ctime), st.st_dev


def files_to_read(
    targets: list[Path | str],
    own: Callable[[str], bool] | None = None,
    outside: list[str] | None = None,
    unreadable: list[tuple[str, str, str]] | None = None,
    clashes: list[str] | None = None,
    documents: list[ListedFile] | None = None,
    raw: Path | None = None,
    pinned: bool = False,
) -> tuple[list[ListedFile], list[ListedFile], list[str]]:
    """The files an ingest of ``targets`` reads, each once (``unique``: a symlink beside its target, a folder listed
    twice), the ignore files applied: (kept, ignored, ignore files used). ``storagelab parse`` lists folders with it
    too, so both commands read the same files. ``own``: paths to leave out (the database's own files); the lists
    are filled as ``list_files`` and ``unique`` fill them. The ignore files are applied before ``unique``: a symlink
    in an ignored folder to a file that is not ignored took that file's place (the first listing of a key) and left
    with it, and the file was not read. ``documents``: the .md files left out that no ignore file names. ``raw``:
    data/raw/ as the ingest pinned it (its ignore file's folder); ``pinned``: the targets are pinned (an ingest's)."""
    docs: list[ListedFile] = []
    listed = (f for f in list_files(targets, outside, unreadable, docs, pinned) if own is None or not own(f.path))
    kept, ignored, used = ignore.split(listed, targets, raw)
    if documents is not None:
        documents += ignore.split(docs, targets, raw)[0]
    kept = unique(kept, clashes)
    keys = {f.key for f in kept}
    return kept, unique([f for f in ignored if f.key not in keys]), used


def unique(listing: Iterable[ListedFile], clashes: list[str] | None = None) -> list[ListedFile]:
    """Each file once (the first listing of each key). Two different files with one key (a name that is
    not UTF-8 is stored with ``\\xNN`` escapes, which another file's name may spell out) are said in
    ``clashes``; the second is left out."""
    seen: dict[str, ListedFile] = {}
    out = []
    for item in listing:
        first = seen.get(item.key)
        if first is None:
            seen[item.key] = item
            out.append(item)
        elif clashes is not None and item.path != first.path and not _same_file(item.path, first.path):
            clashes.append(
                f"{printable(item.path)}: stored as {item.key}, as {printable(first.path)} is (a name that is not "
                "UTF-8 is stored with \\xNN escapes): not ingested; rename one of them"
            )
    return out


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def scopes(targets: Iterable[Path | str], pinned: bool = False) -> list[str]:
    """Key prefixes of the listed folders: a stored file under one of them that is no longer
    there is gone (removed or renamed). "" stands for the project root (every relative key)."""
    out = []
    for t in targets:
        p = Path(t)
        if p.is_dir():
            k = pinned_key(p) if pinned else key_for(p)
            out.append("" if k == "." else k.rstrip("/") + "/")
    return out


def in_scope(key: str, scope_list: list[str]) -> bool:
    return any(key.startswith(s) if s else not key.startswith("/") for s in scope_list)


def _scan(
    top: Path | str,
    unreadable: list | None = None,
    documents: list | None = None,
    odd: list | None = None,
    keeps_ctime: Callable[[int], bool] = lambda dev: True,
) -> list[tuple[str, str, int, int, int, int, bool]]:
    """Like Path.rglob: symlinked folders are not entered, symlinked files are kept. Hidden
    entries (and everything under them) and the skipped names are left out. Gives (relative
    path, path, size, mtime_ns, inode, ctime_ns, is a symlink). Iterative: any depth of folders. A folder below ``top``
    that cannot be read is left out and added to ``unreadable`` as (relative path, path, reason); the .md files
    left out (not READMEs) to ``documents``, as the others; a FIFO, socket or device (not a symlink) to ``odd``
    as (path, what it is)."""
    found = []
    todo = [(top, "")]
    while todo:
        folder, rel = todo.pop()
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError as e:
            if not rel or unreadable is None:
                raise
            unreadable.append((rel.rstrip("/"), str(folder), e.strerror or type(e).__name__))
            continue
        for e in entries:
            name = e.name
            if name.startswith("."):
                continue
            try:
                is_dir = e.is_dir()
            except OSError:
                is_dir = False
            if is_dir:
                if not e.is_symlink():
                    todo.append((e.path, rel + name + "/"))
                continue
            try:
                is_file = e.is_file()
            except OSError:  # a symlink loop
                is_file = False
            try:
                if not is_file and odd is not None and name not in SKIP_NAMES and (what := _odd(e)):
                    odd.append((e.path, what))
                if not is_file or name in SKIP_NAMES or name.endswith(".ipynb"):
                    continue
                if name.endswith(".md") and documents is None:  # no one asks for them: no stat, as before
                    continue
                st = e.stat()
                if name.endswith(".md"):
                    documents.append((rel + name, e.path, *_four(st, keeps_ctime), e.is_symlink()))
                    continue
            except OSError:
                continue
            found.append((rel + name, e.path, *_four(st, keeps_ctime), e.is_symlink()))
    return found


def _four(st: os.stat_result, keeps_ctime: Callable[[int], bool]) -> tuple[int, int, int, int]:
    """Size, mtime, inode and ctime (-1 where the file system's ctime is not real: realctime)."""
    return st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns if keeps_ctime(st.st_dev) else -1


def _odd(e: os.DirEntry) -> str | None:
    """What a listed entry that is neither a file nor a folder is, for its warning: a FIFO, socket or device, a
    symlink to one, or a symlink loop; None for a link to nothing (a broken link: not a log). Reliability-27 (input,
    Low 1): links to /dev/zero or /dev/tty and loops were skipped without a word, against the README."""
    if not e.is_symlink():
        return _kind(e.stat(follow_symlinks=False).st_mode)
    try:
        return "a symlink to " + _kind(e.stat().st_mode)
    except FileNotFoundError:
        return None
    except OSError as err:
        return "a symlink loop" if err.errno == errno.ELOOP else None


def _kind(mode: int) -> str:
    return "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"


def printable(text: str) -> str:
    """A path as valid UTF-8 text: the bytes of a name that is not UTF-8 (kept by Python as
    surrogates) become ``\\xNN``, so the file is still stored, under a distinct readable key."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def key_for(path: Path) -> str:
    """How a path is stored: resolved (symlinks followed), relative to the project root when
    inside it, as UTF-8 text (see printable). A symlink loop: OSError (ELOOP), as Python 3.13's resolve raises, not
    3.11's RuntimeError (reliability-35: a file named through a link made a loop after the listing, a traceback)."""
    try:
        return _key_of(path.resolve())
    except RuntimeError:
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), str(path)) from None


def pinned_key(folder: Path) -> str:
    """key_for of a folder an ingest pinned (``pipeline._pinned``: no symlink in its path then): it must still lead to
    itself, else StoreError. Reliability-37 (store): data/raw a real folder when `ingest data/raw/other` started,
    replaced by a symlink to A and back (a racer every 0-4 ms, the CLI, no hooks): the listing's keys were taken
    through the link and its scan through the folder (A's keys held with the folder's bytes), or the removals' scope
    through one and the listing through the other (the files on disk removed from the database), exit 0."""
    ap = Path(os.path.abspath(folder))
    if key_for(folder) != _key_of(ap):
        raise StoreError(
            f"{printable(str(ap))}: a folder in this path was replaced by a symlink during the ingest: run it again"
        )
    return _key_of(ap)


def _key_of(ap: Path) -> str:
    """key_for of a resolved path."""
    try:
        return printable(ap.relative_to(paths.ROOT.resolve()).as_posix())
    except ValueError:
        return printable(ap.as_posix())

"""A local dataset's commit (``_storagelab/meta.json``) and sweep, done in the folder whose lock file the writer
holds, through that folder's descriptor, not by its name.

Reliability-36 checked the lock file by name (``still_held``), then wrote meta.json and swept by name: the folder
renamed away and another put at its name between the check and the end of the sweep (reliability-37: during the
walk, which takes milliseconds) had the other folder's part files deleted and its meta.json left listing them,
exit 0. Now the folder is opened once, checked to hold the lock file, and meta.json and every deletion are made
relative to it: a folder moved afterwards is still the one written."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

from .errors import StoreError

META_DIR = "_storagelab"
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


@contextlib.contextmanager
def held(lock, out: Path, parts: dict | None = None) -> Iterator[tuple[int, int]]:
    """(``out``'s descriptor, its ``_storagelab``'s), the latter's ``.lock`` checked to be the file ``lock`` holds
    (None: not checked); StoreError when it is not (the folder moved or replaced while the run wrote it), or when a
    part file of ``parts`` (meta.json's: table -> path -> size) is not in it at its size: reliability-37, the folder
    swapped for another while the run wrote its parts and swapped back before its commit: its meta.json listed
    parts that were in the other folder and its sweep deleted the old ones, exit 0."""
    fds: list[int] = []
    try:
        fds.append(os.open(out, _DIR))
        fds.append(os.open(META_DIR, _DIR | os.O_NOFOLLOW, dir_fd=fds[0]))
        if lock is not None and not os.path.samestat(
            os.stat(".lock", dir_fd=fds[1], follow_symlinks=False), os.fstat(lock.fileno())
        ):
            raise FileNotFoundError
        if (missing := _missing(fds[0], parts or {})) is not None:
            for fd in fds:
                os.close(fd)
            raise StoreError(
                f"{out}: {missing}, a part file this run wrote, is not in that folder at its size (was the folder "
                "moved or replaced while this run wrote it?): nothing committed (run again)"
            )
    except OSError:
        for fd in fds:
            os.close(fd)
        raise StoreError(
            f"{out}: the folder was moved or replaced while this run wrote it: stopped before its commit or its sweep "
            "(run again)"
        ) from None
    try:
        yield fds[0], fds[1]
    finally:
        for fd in fds:
            os.close(fd)


def _missing(top: int, parts: dict) -> str | None:
    """The first part file of ``parts`` not in the folder open as ``top`` at its listed size; None when all are."""
    for files in parts.values():
        for rel, size in files.items():
            try:
                if os.stat(rel, dir_fd=top, follow_symlinks=False).st_size == size:
                    continue
            except OSError:
                pass
            return rel
    return None


def save_json_at(folder: int, name: str, data) -> None:
    """``dataset.save_json`` in the folder open as ``folder``: temporary name, fsync, rename, all relative to it."""
    tmp = f".{name}.{os.getpid()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666, dir_fd=folder)
        with os.fdopen(fd, "w") as f:
            f.write(json.dumps(data, indent=1, sort_keys=True))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:  # a full disk, Ctrl-C: the part written would hold its space until the next export
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=folder)
        raise


def sweep_at(top: int, meta: int, tables, listed: set[str], ours: Callable[[str], bool]) -> int:
    """``dataset.sweep`` in the folder open as ``top`` (its ``_storagelab`` as ``meta``). Returns how many files went."""
    gone = 0
    for name in tables:
        try:
            if not stat.S_ISDIR(os.stat(name, dir_fd=top, follow_symlinks=False).st_mode):
                continue
        except FileNotFoundError:
            continue
        for dirpath, dirs, filenames, fd in os.fwalk(name, topdown=False, dir_fd=top):
            for fn in filenames:
                if f"{dirpath}/{fn}" not in listed and ours(fn):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(fn, dir_fd=fd)
                        gone += 1
            for d in dirs:
                if d == "_temporary":
                    shutil.rmtree(d, ignore_errors=True, dir_fd=fd)
                else:
                    with contextlib.suppress(OSError):
                        os.rmdir(d, dir_fd=fd)  # only when empty
    for leftover in os.listdir(meta):
        if (
            leftover.startswith("staging-")
            or leftover == "stamps.json"
            or (leftover[0] == "." and leftover[-4:] == ".tmp")
        ):
            try:
                os.unlink(leftover, dir_fd=meta)
            except IsADirectoryError:
                shutil.rmtree(leftover, ignore_errors=True, dir_fd=meta)
            except OSError:
                pass
    return gone

"""A private cache, per user, of text that is slow to make and the same every time it is made.

Its one use: the Vega, Vega-Lite and vega-embed bundle that every report page with a chart inlines. vl-convert
builds it in its JavaScript engine on each call: about 3 s of CPU in every process that renders (each `run`,
`report` and `build`), for the same 0.9 MB whenever the vl-convert version is the same.

The cache lives in ``$XDG_CACHE_HOME/storagelab/`` (``~/.cache/storagelab/``). It is used only where nobody else can
change it, since what it holds goes into pages as script: the folder must be this user's, with no other user able
to add or swap a name in it or above it (``ownership.private_folder``); a file must be a regular file of this user's
that nobody else can write, and whole (its first line is the SHA-256 of the rest). Anything else, and any error, and
the text is made again as if there were no cache: the cache never changes what a page holds, only how soon.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from . import ownership
from .livewriters import any_writer

_READ_AT_MOST = 64 << 20  # a cached text is a few MB; anything larger is not one of ours


def folder() -> Path | None:
    """The cache folder (made, mode 0700), or None where it cannot be private. A relative or empty XDG_CACHE_HOME is
    not used (the XDG rule), nor a relative or empty HOME (it would be the working folder, or /)."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    home = os.environ["HOME"] if "HOME" in os.environ else os.path.expanduser("~")  # unset: the password file's
    base = xdg if os.path.isabs(xdg) else os.path.join(home, ".cache") if os.path.isabs(home) else None
    if base is None:
        return None
    try:
        here = Path(base) / "storagelab"
        here.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = here.lstat()
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or not ownership.private_folder(here):
        return None
    return here


def cached_text(name: str, make: Callable[[], str]) -> str:
    """The text ``make()`` returns, from the cache file ``name`` when it holds a whole copy, else made and kept."""
    here = folder()
    if here is None:
        return make()
    path = here / name
    text = _read(path)
    if text is None:
        text = make()
        _keep(path, text)
    return text


def _read(path: Path) -> str | None:
    """The cached text, or None unless ``path`` is a whole cache file only this user can write."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    st = os.fstat(fd)
    # reliability-36: and no process of another user's holds it open for writing (opened while it was writable: root's
    # cache folder and file once open to all): their bundle, a whole entry written through it, went into pages as script
    if (
        not stat.S_ISREG(st.st_mode)
        or st.st_uid != os.getuid()
        or st.st_mode & 0o022
        or any_writer(path, st, loose=ownership.loose_file)
    ):
        os.close(fd)  # before fdopen, which raised IsADirectoryError for a folder at the name (reliability-32)
        return None
    with os.fdopen(fd, "rb") as f:
        try:
            data = f.read(_READ_AT_MOST + 1)
        except OSError:
            return None
    digest, _, body = data.partition(b"\n")
    if len(data) > _READ_AT_MOST or digest != hashlib.sha256(body).hexdigest().encode():
        return None
    try:
        return body.decode()
    except UnicodeDecodeError:
        return None


def _keep(path: Path, text: str) -> None:
    """``text`` into ``path`` whole (a private temporary file, then a rename), or nothing on any error."""
    body = text.encode()
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(hashlib.sha256(body).hexdigest().encode() + b"\n" + body)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)

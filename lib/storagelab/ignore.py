"""The ignore list: ``data/raw/.storagelabignore``, gitignore syntax, paths relative to data/raw/.

A folder ingested from outside data/raw/ may have its own ``.storagelabignore`` at its top, with
paths relative to that folder. Matched files are not read; ingest counts them once in its summary
line ("ignored N") and never reports them as failures.

Syntax (as gitignore): one pattern per line; blank lines and lines starting with ``#`` are
skipped; ``!pattern`` re-includes what an earlier pattern excluded (the last matching line
wins), but not a file inside an excluded folder; ``\\#`` and ``\\!`` start a literal ``#``/``!``;
trailing spaces are dropped unless escaped with ``\\``. ``*`` matches anything but ``/``, ``?``
one character but ``/``, ``[a-z]``/``[!a-z]`` a class; ``**/`` any folders (also none),
``/**`` everything inside. A pattern with a ``/`` at its start or in its middle is relative to
the ignore file's folder; one without matches a file or folder name at any depth. A trailing
``/`` matches folders only. Example::

    # truncated captures that will never parse
    mylab/zdb-bv-*-TRUNCATED.txt
    *.tmp
    scratch/
    # no effect: scratch/ itself is excluded
    !scratch/keep-this.txt
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

IGNORE_FILE = ".storagelabignore"


@dataclass(frozen=True)
class Rule:
    pattern: str  # as written (for messages)
    regex: re.Pattern
    negate: bool
    dir_only: bool
    anchored: bool  # matched against the whole relative path, else against the last component
    line: int


def _segment(seg: str) -> str:
    """One path component of a pattern as a regex (no '/' inside)."""
    out, i, n = [], 0, len(seg)
    while i < n:
        c = seg[i]
        if c == "\\" and i + 1 < n:
            out.append(re.escape(seg[i + 1]))
            i += 2
            continue
        if c == "*":
            while i < n and seg[i] == "*":
                i += 1
            out.append("[^/]*")
            continue
        if c == "?":
            out.append("[^/]")
        elif c == "[":
            j = seg.find("]", i + 2 if seg[i + 1 : i + 2] in ("!", "^", "]") else i + 1)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = seg[i + 1 : j]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def compile_rule(text: str, line: int = 0) -> Rule | None:
    """One line of an ignore file as a Rule; None for blank and comment lines."""
    raw = text.rstrip("\n").rstrip("\r")
    # trailing spaces are dropped unless escaped
    stripped = raw.rstrip(" ")
    if stripped.endswith("\\") and len(raw) > len(stripped):
        stripped += " "
    pat = stripped
    if not pat or pat.startswith("#"):
        return None
    negate = False
    if pat.startswith("!"):
        negate, pat = True, pat[1:]
    elif pat.startswith(("\\!", "\\#")):
        pat = pat[1:]
    dir_only = pat.endswith("/")
    pat = pat.rstrip("/")
    if not pat:
        return None
    anchored = "/" in pat
    pat = pat.lstrip("/")
    parts = pat.split("/")
    rx = ""
    for k, seg in enumerate(parts):
        last = k == len(parts) - 1
        if seg == "**":
            rx += ".*" if last else "(?:[^/]+/)*"
        else:
            rx += _segment(seg) + ("" if last else "/")
    return Rule(text.strip(), re.compile(rx + r"\Z", re.DOTALL), negate, dir_only, anchored, line)


class IgnoreList:
    """The rules of one ignore file; ``ignored(rel)`` for a file's path relative to its folder."""

    def __init__(self, lines: Iterable[str], source: str = IGNORE_FILE):
        self.source = source
        self.rules = [r for i, ln in enumerate(lines, 1) if (r := compile_rule(ln, i))]
        self._dirs: dict[str, bool] = {}

    @classmethod
    def load(cls, folder: Path | str) -> IgnoreList | None:
        """The ignore file at the top of ``folder``, or None when there is none."""
        f = Path(folder) / IGNORE_FILE
        try:
            text = f.read_text(encoding="utf-8", errors="replace")
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        return cls(text.splitlines(), str(f))

    def _decide(self, rel: str, is_dir: bool) -> bool:
        name = rel.rsplit("/", 1)[-1]
        result = False
        for r in self.rules:
            if r.dir_only and not is_dir:
                continue
            if r.regex.match(rel if r.anchored else name):
                result = not r.negate
        return result

    def ignored(self, rel: str) -> bool:
        """Whether the file at ``rel`` (a '/'-separated path relative to the ignore file's folder) is
        excluded: it matches, or one of its folders does (a file in an excluded folder cannot be
        re-included, as in git)."""
        rel = rel.strip("/")
        parts = rel.split("/")
        for k in range(1, len(parts)):
            d = "/".join(parts[:k])
            hit = self._dirs.get(d)
            if hit is None:
                hit = self._dirs[d] = self._decide(d, True)
            if hit:
                return True
        return self._decide(rel, False)


def _roots(targets: Iterable[Path | str], raw: Path) -> list[tuple[str, IgnoreList]]:
    """(absolute folder, its ignore list) for data/raw/ and every folder target outside it that has one."""
    from . import paths

    raw_abs = os.path.abspath(raw)
    roots: dict[str, IgnoreList | None] = {}
    for t in targets:
        a = os.path.abspath(t)
        if a == raw_abs or a.startswith(raw_abs + os.sep):
            a = raw_abs
        elif not os.path.isdir(a):
            continue  # a file named outside data/raw/ is never ignored
        if a not in roots:
            roots[a] = IgnoreList.load(a)
            if roots[a]:  # named as the user sees it: relative to the project when inside it
                root = os.path.abspath(paths.ROOT)
                if a.startswith(root + os.sep):
                    roots[a].source = os.path.relpath(roots[a].source, root)
    return sorted(((a, il) for a, il in roots.items() if il and il.rules), key=lambda x: -len(x[0]))


def split(
    listing: Iterable[tuple], targets: Iterable[Path | str], raw: Path | None = None
) -> tuple[list[tuple], list[tuple], list[str]]:
    """(kept, ignored, ignore files used) of a store listing of (key, path, ...) tuples: an entry
    is ignored when the ignore file of its root (data/raw/, or a folder target outside it)
    matches its path relative to that root."""
    from . import paths

    listing = list(listing)
    roots = _roots(list(targets), raw or paths.RAW)
    if not roots:
        return listing, [], []
    kept, ignored, used = [], [], set()
    for entry in listing:
        a = os.path.abspath(entry[1])
        hit = False
        for root, il in roots:  # deepest root first
            if a.startswith(root + os.sep):
                hit = il.ignored(a[len(root) + 1 :].replace(os.sep, "/"))
                if hit:
                    used.add(il.source)
                break
        (ignored if hit else kept).append(entry)
    return kept, ignored, sorted(used)

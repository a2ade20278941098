"""The ignore list: ``data/raw/.storagelabignore``, gitignore syntax, paths relative to data/raw/.

A folder ingested from outside data/raw/ may have its own ``.storagelabignore`` at its top, with
paths relative to that folder. Matched files are not looked at: not read, and what the database
holds for them stays as it is (also if they are deleted); ingest counts them once in its summary line
("ignored N") and never reports them as failures. Patterns are compiled once (``Matcher``: an automaton
simulated over the path, no backtracking); a line that is not a pattern is an IgnoreError naming file and line.

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
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from . import paths
from .errors import StoragelabError

IGNORE_FILE = ".storagelabignore"


class IgnoreError(StoragelabError):
    """A line of an ignore file that is not a pattern (``[z-a]``): one line naming the file and line."""


_POSIX = {
    "alpha": str.isalpha,
    "digit": str.isdigit,
    "alnum": str.isalnum,
    "upper": str.isupper,
    "lower": str.islower,
    "space": str.isspace,
    "xdigit": lambda c: c in "0123456789abcdefABCDEF",
    "punct": lambda c: c.isprintable() and not c.isalnum() and not c.isspace(),
}


@dataclass(frozen=True)
class CharClass:
    """``[...]``: characters, ranges and POSIX classes (``[:alpha:]``), possibly negated; never ``/``."""

    negate: bool
    chars: frozenset
    ranges: tuple
    posix: tuple

    def __contains__(self, c: str) -> bool:
        hit = c in self.chars or any(a <= c <= b for a, b in self.ranges) or any(_POSIX[p](c) for p in self.posix)
        return c != "/" and hit != self.negate


# a pattern compiles to a list of tokens: a character (str), a CharClass, or one of these
ANY, STAR, DSEG, ALL = "?any", "*star", "**/", "/**"


def _class(seg: str, i: int) -> tuple[CharClass, int] | None:
    """The class starting at ``seg[i] == '['``: (class, index after its ``]``), None when it is not closed."""
    j = i + 1
    negate = seg[j : j + 1] in ("!", "^")
    j += negate
    chars, ranges, posix, first = set(), [], [], True
    while j < len(seg) and (seg[j] != "]" or first):
        first = False
        if seg.startswith("[:", j) and (end := seg.find(":]", j + 2)) > 0 and seg[j + 2 : end] in _POSIX:
            posix.append(seg[j + 2 : end])
            j = end + 2
            continue
        c = seg[j + 1] if seg[j] == "\\" and j + 1 < len(seg) else seg[j]
        j += 2 if seg[j] == "\\" and j + 1 < len(seg) else 1
        if seg[j : j + 1] == "-" and j + 1 < len(seg) and seg[j + 1] != "]":
            k = j + 1
            hi = seg[k + 1] if seg[k] == "\\" and k + 1 < len(seg) else seg[k]
            j = k + (2 if seg[k] == "\\" and k + 1 < len(seg) else 1)
            if hi < c:
                raise ValueError(f"bad character range {c}-{hi}")
            ranges.append((c, hi))
        else:
            chars.add(c)
    if j >= len(seg):
        return None
    return CharClass(negate, frozenset(chars), tuple(ranges), tuple(posix)), j + 1


def _segment(seg: str) -> list:
    """One path component of a pattern as tokens (no '/' inside)."""
    out, i, n = [], 0, len(seg)
    while i < n:
        c = seg[i]
        if c == "\\" and i + 1 < n:
            out.append(seg[i + 1])
            i += 2
        elif c == "*":
            while i < n and seg[i] == "*":
                i += 1
            out.append(STAR)
        elif c == "?":
            out.append(ANY)
            i += 1
        elif c == "[":
            got = _class(seg, i)
            if got is None:  # git's matching fails there: said rather than never matching
                raise ValueError("a [ without its closing ] (\\[ is a literal [)")
            out.append(got[0])
            i = got[1]
        else:
            out.append(c)
            i += 1
    return out


class Matcher:
    """A compiled pattern, matched by simulating its automaton over the text: time bounded by the pattern's
    length times the text's, whatever the pattern (no backtracking)."""

    def __init__(self, tokens: list):
        self.tokens = tokens

    def _close(self, states: set) -> set:
        todo, seen = list(states), set(states)
        while todo:
            i = todo.pop()
            if i >= 0 and i < len(self.tokens) and self.tokens[i] in (STAR, DSEG) and i + 1 not in seen:
                seen.add(i + 1)
                todo.append(i + 1)
        return seen

    def match(self, text: str) -> bool:
        toks, n = self.tokens, len(self.tokens)
        states = self._close({0})
        for c in text:
            nxt = set()
            for i in states:
                if i < 0:  # inside a folder name that a **/ consumes
                    nxt.add(-i - 1 if c == "/" else i)
                    continue
                if i == n:
                    continue
                t = toks[i]
                if t is ALL:
                    return True
                if t is STAR or t is DSEG:
                    if c != "/":
                        nxt.add(i if t is STAR else -i - 1)
                elif t is ANY:
                    if c != "/":
                        nxt.add(i + 1)
                elif isinstance(t, CharClass):
                    if c in t:
                        nxt.add(i + 1)
                elif t == c:
                    nxt.add(i + 1)
            if not nxt:
                return False
            states = self._close(nxt)
        return n in states or any(0 <= i < n and toks[i] is ALL for i in states)


@dataclass(frozen=True)
class Rule:
    pattern: str  # as written (for messages)
    matcher: Matcher
    negate: bool
    dir_only: bool
    anchored: bool  # matched against the whole relative path, else against the last component
    line: int


def compile_rule(text: str, line: int = 0) -> Rule | None:
    """One line of an ignore file as a Rule; None for blank and comment lines. ValueError for a line that is not
    a pattern (a character range backwards)."""
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
    tokens: list = []
    for k, seg in enumerate(parts):
        last = k == len(parts) - 1
        if seg == "**":
            if last:
                tokens.append(ALL)
            elif not tokens or tokens[-1] is not DSEG:  # **/**/ is **/
                tokens.append(DSEG)
        else:
            tokens += _segment(seg) + ([] if last else ["/"])
    return Rule(text.strip(), Matcher(tokens), negate, dir_only, anchored, line)


class IgnoreList:
    """The rules of one ignore file; ``ignored(rel)`` for a file's path relative to its folder."""

    def __init__(self, lines: Iterable[str], source: str = IGNORE_FILE):
        self.source = source
        self.rules = []
        for i, ln in enumerate(lines, 1):
            try:
                rule = compile_rule(ln, i)
            except ValueError as e:
                raise IgnoreError(f"{source}:{i}: {e} in {ln.strip()!r}: fix or delete that line") from None
            if rule:
                self.rules.append(rule)
        self._dirs: dict[str, bool] = {}

    @classmethod
    def load(cls, folder: Path | str) -> IgnoreList | None:
        """The ignore file at the top of ``folder``, or None when there is none."""
        f = Path(folder) / IGNORE_FILE
        try:
            mode = f.stat().st_mode
        except (FileNotFoundError, NotADirectoryError):
            return None
        if stat.S_ISDIR(mode):
            return None
        if not stat.S_ISREG(mode):  # a FIFO waits for a writer, /dev/zero never ends: both hung the ingest
            raise IgnoreError(f"{f}: not a regular file (a FIFO or a device): make it a text file or remove it")
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
            if r.matcher.match(rel if r.anchored else name):
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


def path_matcher(targets: Iterable[Path | str], raw: Path | None = None):
    """A function telling whether the ignore file of its root (see split) excludes the file at a path (which may
    be gone); the ignore files are read once."""

    roots = _roots(list(targets), raw or paths.RAW)

    def ignored(path: Path | str) -> bool:
        a = os.path.abspath(path)
        for root, il in roots:  # deepest root first
            if a.startswith(root + os.sep):
                return il.ignored(a[len(root) + 1 :].replace(os.sep, "/"))
        return False

    return ignored


def folder_ignored(folder: Path | str, targets: Iterable[Path | str], raw: Path | None = None) -> bool:
    """Whether the ignore file of its root (see split) excludes the folder ``folder``."""

    a = os.path.abspath(folder)
    for root, il in _roots(list(targets), raw or paths.RAW):  # deepest root first
        if a.startswith(root + os.sep):
            parts = a[len(root) + 1 :].replace(os.sep, "/").split("/")
            return any(il._decide("/".join(parts[:k]), True) for k in range(1, len(parts) + 1))
    return False


def _roots(targets: Iterable[Path | str], raw: Path) -> list[tuple[str, IgnoreList]]:
    """(absolute folder, its ignore list) for data/raw/ and every folder target outside it that has one."""

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

"""The ignore list: ``data/raw/.storagelabignore``, gitignore syntax, paths relative to data/raw/.

A folder ingested from outside data/raw/ may have its own ``.storagelabignore`` at its top, with
paths relative to that folder. Matched files are not looked at: not read, and what the database
holds for them stays as it is (also if they are deleted); ingest counts them once in its summary line
("ignored N") and never reports them as failures. Patterns are compiled once (``Matcher``: an automaton
simulated over the path, its states the bits of an integer: no backtracking, a few integer operations a character
whatever the pattern) and indexed by their literal start or end
(``_Index``), so a path is tried only against the rules it may match; a folder's states go on to its children, so a
path costs one pass whatever its depth (each folder is judged once); a line that is not a pattern (``[z-a]``, ``[[:nosuch:]]``) is an IgnoreError
naming file and line.

Syntax (as gitignore): one pattern per line; blank lines and lines starting with ``#`` are
skipped; ``!pattern`` re-includes what an earlier pattern excluded (the last matching line
wins), but not a file inside an excluded folder; ``\\#`` and ``\\!`` start a literal ``#``/``!``;
trailing spaces are dropped unless escaped with ``\\``. ``*`` matches anything but ``/``, ``?``
one character but ``/``, ``[a-z]``/``[!a-z]`` a class; ``**/`` any folders (also none),
``/**`` everything inside (odd forms as git reads them: ``***/x`` is ``**/x``; one trailing and one leading ``/``
are syntax, so ``**//`` and ``//x`` match nothing; ``a**/b`` is ``a``, then nothing or anything ending in ``/``, then
``b``; ``/a**`` is ``a`` then anything, slashes too; ``**\\/`` is anything, slashes too, then ``/``: compared with
git's ``ls-files -i`` in tests/test_ignore_git.py and tests/test_reliability29_spark_env.py). A pattern with a ``/`` at its start or in its middle is relative to
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

import bisect
import itertools
import os
import stat
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from . import paths
from .errors import StoragelabError
from .ingest_open import open_input, read_text_file, same_folder_through

IGNORE_FILE = ".storagelabignore"


class IgnoreError(StoragelabError):
    """A line of an ignore file that is not a pattern (``[z-a]``): one line naming the file and line."""


_POSIX = {
    "alpha": str.isalpha,
    "digit": str.isdigit,
    "alnum": str.isalnum,
    "upper": str.isupper,
    "lower": str.islower,
    "space": lambda c: c in " \t\n\r" if c.isascii() else c.isspace(),  # git's: not \v, \f, \x1c-\x1f
    "xdigit": lambda c: c in "0123456789abcdefABCDEF",
    "punct": lambda c: c.isprintable() and not c.isalnum() and not c.isspace(),
    "blank": lambda c: c in " \t",
    "cntrl": lambda c: ord(c) < 32 or ord(c) == 127,
    "graph": lambda c: c.isprintable() and not c.isspace(),
    "print": lambda c: c.isprintable(),
}


@dataclass(frozen=True)
class CharClass:
    """``[...]``: characters, ranges and POSIX classes (``[:alpha:]``), possibly negated; never ``/``."""

    negate: bool
    chars: frozenset
    ranges: tuple
    posix: tuple

    def __contains__(self, c: str) -> bool:
        hit = c in self.chars or _in_ranges(self.ranges, c) or any(_POSIX[p](c) for p in self.posix)
        return c != "/" and hit != self.negate


def _in_ranges(ranges: tuple, c: str) -> bool:
    """``c`` in ``ranges`` (``_merged``), bisected: a class of 340,000 ranges cost 11.5 s a name (reliability-36)."""
    i = bisect.bisect_right(ranges, (c, "\U0010ffff")) - 1
    return i >= 0 and c <= ranges[i][1]


def _merged(ranges: list[tuple[str, str]]) -> tuple:
    out: list[tuple[str, str]] = []
    for lo, hi in sorted(ranges):  # overlapping ones made one: _in_ranges needs them sorted and disjoint
        out[-1:] = [(out[-1][0], max(hi, out[-1][1]))] if out and lo <= out[-1][1] else [*out[-1:], (lo, hi)]
    return tuple(out)


# a pattern compiles to a list of tokens: a character (str), a CharClass, or one of these
ANY, STAR, DSEG, ALL = "?any", "*star", "**/", "/**"
# git's `P**/` after a pattern's literal start P (``a**/b``): nothing, or anything (slashes too) ending in '/'
OPT_DIRS = "(.*/)?"
# a `**` that git's wildmatch lets cross folders without being `**/` (``a**`` at an anchored pattern's end after its
# literal start, ``**\/``): anything, slashes too, or nothing
ANYS = "**any"


def _posix_name(seg: str, j: int) -> str | None:
    """The name of the POSIX class ``[:name:]`` at ``seg[j]``, as git's wildmatch reads one: from ``[:`` to the next
    ``]``, which must follow a ``:``; None when there is none (the ``[`` is then a character of the class)."""
    if not seg.startswith("[:", j):
        return None
    end = seg.find("]", j + 2)
    return seg[j + 2 : end - 1] if end - 1 >= j + 2 and seg[end - 1] == ":" else None


def _class(seg: str, i: int) -> tuple[CharClass, int] | None:
    """The class starting at ``seg[i] == '['``: (class, index after its ``]``), None when it is not closed."""
    j = i + 1
    negate = seg[j : j + 1] in ("!", "^")
    j += negate
    chars, ranges, posix, first = set(), [], [], True
    while j < len(seg) and (seg[j] != "]" or first):
        first = False
        if (name := _posix_name(seg, j)) is not None:
            if name not in _POSIX:  # git's wildmatch fails the whole pattern there: said rather than never matching
                raise ValueError(f"unknown character class [:{name}:] (known: {', '.join(sorted(_POSIX))})")
            posix.append(name)
            j += len(name) + 4
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
    return CharClass(negate, frozenset(chars), _merged(ranges), tuple(posix)), j + 1


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


def _bits(positions) -> int:
    """The integer whose set bits are ``positions`` (built in one pass: or-ing bit by bit is quadratic)."""
    positions = list(positions)
    if not positions:
        return 0
    out = bytearray(max(positions) // 8 + 1)
    for i in positions:
        out[i >> 3] |= 1 << (i & 7)
    return int.from_bytes(out, "little")


class _ClassIndex:
    """Classes' positions by the characters they list, their ranges and their POSIX names (``Matcher._listed``)."""

    def __init__(self) -> None:
        self.chars: dict[str, array] = {}
        self.ranges: list[tuple[str, str, array]] = []
        self.wide: list[tuple[tuple, array]] = []  # classes of many ranges: bisected (_in_ranges), not scanned
        self.posix: dict[str, array] = {}

    def add(self, t: CharClass, where: array) -> None:
        for ch in t.chars:
            self.chars.setdefault(ch, array("I")).extend(where)
        self.ranges += [(lo, hi, where) for lo, hi in t.ranges] if len(t.ranges) <= 8 else []
        self.wide += [(t.ranges, where)] if len(t.ranges) > 8 else []
        for name in t.posix:
            self.posix.setdefault(name, array("I")).extend(where)

    def holding(self, c: str) -> Iterator[int]:
        """The positions of the classes one of whose characters, ranges or POSIX names holds ``c``."""
        yield from self.chars.get(c, ())
        for lo, hi, where in self.ranges:
            if lo <= c <= hi:
                yield from where
        for ranges, where in self.wide:
            if _in_ranges(ranges, c):
                yield from where
        for name, where in self.posix.items():
            if _POSIX[name](c):
                yield from where


class Matcher:
    """A compiled pattern, matched by running its automaton over the text, the set of pattern positions still
    possible held as the bits of one integer (no backtracking, no set built per character): a character costs a few
    operations on integers of the pattern's length in bits, whatever the pattern, and a state is as small. A caller
    may carry a state from a folder to its children (``run`` from the folder's state over ``/name``), so that a path
    costs one pass, not one per folder above it.

    Bits: position i (0..n, n = accepted) is bit i; "inside a folder name that the ``**/`` at i consumes" is bit
    W + i, and "inside what the OPT_DIRS at i consumes" bit 2W + i (W = n + 1)."""

    _MAX_CHARS = 256  # characters whose masks are kept; past it they are forgotten (memory stays bounded)
    _MAX_SCANNED = 4_096  # classes with ranges or POSIX names indexed (a new character scans them all)

    def __init__(self, tokens: list, starts: Iterable[int] = (0,)):
        self.tokens = tokens
        self._n = len(tokens)
        self._w = w = self._n + 1
        at: dict[object, list[int]] = {}  # the positions of each marker, literal character and class
        for i, t in enumerate(tokens):
            at.setdefault(t, []).append(i)
        # each character's and class's positions as a list, its mask built when asked (reliability-32: a mask per
        # distinct one is as wide as the pattern, so a line of 60,000 distinct characters held 478 MB of them)
        self._classes = {t: array("I", where) for t, where in at.items() if isinstance(t, CharClass)}
        self._class_bits = _bits(i for t, where in at.items() if isinstance(t, CharClass) for i in where)
        self._listing: tuple[int, int, int, _ClassIndex, _ClassIndex] | None = None  # see _listed
        self._listed_masks: dict[str, tuple[int, int]] = {}
        self._in_class: dict[str, tuple[int, int]] = {}  # c -> (positions whose class was asked of c, those holding c)
        self._class_masks: dict[CharClass, int] = {}  # the masks of the classes last asked (at most 256 of them)
        self._literal = {t: array("I", where) for t, where in at.items() if _literal(t)}
        self._star, self._dseg, self._opt, self._any = (_bits(at.get(m, ())) for m in (STAR, DSEG, OPT_DIRS, ANY))
        self._anys = _bits([*at.get(ANYS, ()), *at.get(ALL, ())])  # stays on any character (ALL: everything inside)
        self._eps = self._star | self._dseg | self._opt | self._anys  # to the next position, consuming nothing
        self._inside_dseg = self._dseg << w
        self._consumes: dict[str, int] = {}
        self.start = self._close(_bits(starts))  # several when the tokens are a _Group's rules one after another

    def _close(self, s: int) -> int:
        while True:
            more = (s & self._eps) << 1
            if not more & ~s:
                return s
            s |= more

    def _consumers(self, c: str) -> int:
        """The positions whose token consumes ``c`` and moves on by one."""
        got = self._consumes.get(c)
        if got is None:
            got = _bits(self._literal.get(c, ()))
            if c != "/":
                got |= self._any
            if len(self._consumes) >= self._MAX_CHARS:
                self._consumes.clear()
            self._consumes[c] = got
        return got

    def _listed(self, c: str) -> tuple[int, int, int]:
        """The positions of the indexed classes that hold ``c``, those of all the indexed classes, and those of the
        others. Read from an index of the characters each class lists, its ranges and its POSIX names, built once,
        not by asking every class (reliability-34 spark-env: 2,000 lines ``*[!c]*[!d]*e`` kept some 1,170 classes
        alive, each asked at every new character of a name: 2.5 s of CPU a 250-character CJK name; reliability-35:
        the same with ranges, ``*[c-d]*[e-f]*g``, 5.4 s, and 19.6 s for 8,000 lines). A pattern of more than
        4,096 classes with ranges or POSIX names (one long line) indexes only those that list characters: the
        others are asked when alive (a new character would scan all its ranges)."""
        if self._listing is None:
            few = sum(1 for t in self._classes if t.ranges or t.posix) <= self._MAX_SCANNED
            indexed = [(t, w) for t, w in self._classes.items() if few or not (t.ranges or t.posix)]
            index: tuple[_ClassIndex, _ClassIndex] = (_ClassIndex(), _ClassIndex())
            for t, where in indexed:
                index[t.negate].add(t, where)
            listing = _bits(i for _, where in indexed for i in where)
            negated = _bits(i for t, where in indexed if t.negate for i in where)
            self._listing = (listing, self._class_bits & ~listing, negated, *index)
        plain, others, negated, listed, listed_negated = self._listing
        masks = self._listed_masks.get(c)
        if masks is None:
            masks = (_bits(listed.holding(c)), _bits(listed_negated.holding(c)))
            if len(self._listed_masks) >= self._MAX_CHARS:
                self._listed_masks.clear()
            self._listed_masks[c] = masks
        return masks[0] | negated & ~masks[1], plain, others

    def _classes_holding(self, c: str, alive: int) -> int:
        """The class positions among ``alive`` whose class holds ``c`` (no class holds '/'). Classes are read from
        an index (``_listed``); of those it leaves out only those of positions alive are asked, each once per character (reliability-31: asking every class of the pattern of every new character
        cost a 6 KB line of 1,000 classes 73 ms a name of 80 CJK letters, 15 s for 200 files)."""
        if c == "/":
            return 0
        holding, plain, others = self._listed(c)
        alive_plain, alive = alive & plain, alive & others
        hit = holding & alive_plain
        if not alive:
            return hit
        return hit | self._asked(c, alive)

    def _asked(self, c: str, alive: int) -> int:
        """The class positions among ``alive`` whose class holds ``c``, each class asked."""
        known, hit = self._in_class.get(c, (0, 0))
        need = alive & ~known
        while need:
            cls = self.tokens[(need & -need).bit_length() - 1]
            where = self._class_masks.get(cls)
            if where is None:  # reliability-33: built at every new character, a line of 262,000 `[!x]` cost 7 s a name
                where = _bits(self._classes[cls])
                if len(self._class_masks) >= self._MAX_CHARS:
                    self._class_masks.clear()
                self._class_masks[cls] = where
            known, need = known | where, need & ~where
            if c in cls:
                hit |= where
        if len(self._in_class) >= self._MAX_CHARS:
            self._in_class.clear()
        self._in_class[c] = (known, hit)
        return hit & alive

    def step(self, s: int, c: str) -> int:
        """The state after ``c``; 0 matches nothing, whatever follows."""
        w = self._w
        consumers = self._consumers(c)
        if alive := s & self._class_bits:
            consumers |= self._classes_holding(c, alive)
        nxt = (s & consumers) << 1 | s & self._anys
        if c != "/":
            nxt |= s & self._star | (s & self._dseg) << w | s & self._inside_dseg
        else:
            nxt |= (s & self._inside_dseg) >> w  # the folder name ends: back to its `**/`
        opt = (s & self._opt) | (s >> 2 * w) & self._opt
        if opt:
            nxt |= opt << 2 * w | (opt << 1 if c == "/" else 0)
        return self._close(nxt) if nxt else 0

    def run(self, s: int, text: str) -> int:
        """The state after ``text``, from ``s``."""
        for c in text:
            if not s:
                break
            s = self.step(s, c)
        return s

    def accepts(self, s: int) -> bool:
        return bool(s >> self._n & 1)

    def match(self, text: str) -> bool:
        return self.accepts(self.run(self.start, text))


@dataclass(frozen=True, slots=True)
class Rule:
    pattern: str  # as written (for messages)
    tokens: list
    negate: bool
    dir_only: bool
    anchored: bool  # matched against the whole relative path, else against the last component
    line: int
    start: str = ""  # the literal characters the pattern starts with (IgnoreList groups the rule by them) ...
    rest: list | None = None  # ... and the tokens after them; None: the pattern is "*" + ``end``
    end: str = ""

    def match(self, text: str) -> bool:
        """Whether ``text`` matches this rule on its own. IgnoreList matches its rules in groups and builds no
        automaton per rule (two a rule, built at compile, cost 125,000 lines 24 s and 250 MB)."""
        return Matcher(self.tokens).match(text)


def _literal(t) -> bool:
    return isinstance(t, str) and len(t) == 1  # a character, not one of the markers ANY, STAR, DSEG, ALL


def _shaped(pattern: str, tokens: list, negate: bool, dir_only: bool, anchored: bool, line: int) -> Rule:
    """The Rule, with what IgnoreList indexes it by: ``**/x`` is ``x`` (any depth) when x has no folder in it; a
    pattern of one ``*`` and then characters is found by its end (a name's suffix), any other by its literal start."""
    if anchored and tokens[:1] == [DSEG] and all(t is not DSEG and t is not ALL and t != "/" for t in tokens[1:]):
        tokens, anchored = tokens[1:], False
    if not anchored and len(tokens) > 1 and tokens[0] is STAR and all(_literal(t) for t in tokens[1:]):
        return Rule(pattern, tokens, negate, dir_only, anchored, line, end="".join(tokens[1:]))
    k = 0
    while k < len(tokens) and _literal(tokens[k]):
        k += 1
    return Rule(pattern, tokens, negate, dir_only, anchored, line, "".join(tokens[:k]), tokens[k:])


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
    negate = escaped = False
    if pat.startswith("!"):
        negate, pat = True, pat[1:]
    elif pat.startswith(("\\!", "\\#")):
        escaped, pat = True, pat[1:]  # git's literal start ends at that backslash: nothing literal to split off
    dir_only = pat.endswith("/")
    pat = pat[:-1] if dir_only else pat  # one '/', as git: `**//` is `**/` for folders, which no path matches
    if not pat:
        return None
    anchored = "/" in pat
    pat = pat[1:] if pat.startswith("/") else pat  # one, as git: `//x` matches no path
    if _escapes_next(pat):  # reliability-28: git's wildmatch matches nothing after a lone trailing `\` (`*\`, `x\/`);
        return None  # it was a literal backslash, and `*\` ignored the folder `a\` and all in it
    tokens: list = []
    k = min((pat.find(c) for c in "*?[\\" if c in pat), default=-1)  # git's literal start (dir.c simple_length)
    star = k + len(pat[k:]) - len(pat[k:].lstrip("*")) if k > 0 else k
    if anchored and k > 0 and not escaped and star - k > 1 and pat[k - 1] != "/":
        # git matches an anchored pattern's literal start first, then the rest as a new pattern, in which a leading
        # `**` crosses folders when a '/', an escaped '/' or the end follows it: `a**/b` is `a` then (nothing, or
        # anything ending in '/') then `b` (reliability-7 Low 2: it was read as `a*/b`); `a**` is `a` then anything,
        # and `a**\/b` is `a`, anything, `/b` (reliability-29 Low 1: both read as `a*`)
        if pat[star:].startswith("/"):
            tokens, pat = [*pat[:k], OPT_DIRS], pat[star + 1 :]
        elif pat[star:] == "":
            tokens, pat = [*pat[:k], ANYS], ""
        elif pat[star:].startswith("\\/"):
            tokens, pat = [*pat[:k], ANYS, "/"], pat[star + 2 :]
    parts = _split(pat)
    for k, seg in enumerate(parts):
        last = k == len(parts) - 1
        slash_escaped = not last and _escapes_next(seg)
        if slash_escaped:  # r-28: `a\/b` is `a/b` in git (an escaped '/'), not the folder `a\`
            seg = seg[:-1]
        if len(seg) > 1 and seg.strip("*") == "":  # `******/x` is `**/x`, as in git's wildmatch
            if last:
                tokens.append(ALL)
            elif slash_escaped:  # `**\/`: git's wildmatch lets only a plain '/' after `**` match no folder (r-29 Low 2)
                tokens += [ANYS, "/"]
            elif not tokens or tokens[-1] is not DSEG:  # **/**/ is **/
                tokens.append(DSEG)
        else:
            tokens += _segment(seg) + ([] if last else ["/"])
    return _shaped(text.strip(), tokens, negate, dir_only, anchored, line)


def _split(pat: str) -> list[str]:
    """``pat`` cut at each '/' that is not inside a class: git's wildmatch reads ``[a/b]`` as a class (whose '/' never
    matches), so ``*[a/b]`` matches ``xa`` (reliability-35 spark-env: refused as "a [ without its closing ]")."""
    parts, start, i = [], 0, 0
    while i < len(pat):
        if pat[i] == "\\":
            i += 1 if pat[i + 1 : i + 2] == "/" else 2  # an escaped '/' still cuts (``a\/b``, ``**\/``)
        elif pat[i] == "[" and (got := _class(pat, i)) is not None:
            i = got[1]
        elif pat[i] == "/":
            parts.append(pat[start:i])
            start = i = i + 1
        else:
            i += 1
    return [*parts, pat[start:]]


def _escapes_next(text: str) -> bool:
    """Whether ``text`` ends in a backslash that escapes what follows it (an odd run of them)."""
    return (len(text) - len(text.rstrip("\\"))) % 2 == 1


_END = "end of a rule"  # after each rule in a _Group: it consumes nothing, so no rule runs on into the next


class _Group:
    """Rules sharing a literal start (the start "" too), run as one automaton: their tokens after the start one
    rule after another, each followed by _END, all their first positions started at once, and an accept bit per
    rule. One pass over a text judges every rule in the group (reliability-32 spark-env, Medium: 5,000 lines `*x*`,
    each a candidate for every name, cost 5,000 automaton runs a name, 0.1 s; 100,000 such lines did not judge 200
    names in 900 s). A group holds rules up to WIDTH positions, so its integers stay small and a name costs about
    (the positions of the rules it may match) / WIDTH passes, not one per rule."""

    WIDTH = 4096

    def __init__(self, start: str, members: list[tuple[int, Rule]]):
        self.start = start
        self._members: list[tuple[int, Rule]] | None = members  # until the automaton is built, at its first text

    def _build(self) -> None:
        """The automaton, built when a text first has this group's start: a file of 500,000 distinct literal lines
        has as many groups, most of which no path ever reaches (built at compile, they held 1 GB)."""
        tokens: list = []
        starts, accept_dirs, accept_files = [], {}, []
        for k, rule in self._members or ():  # in line order: the higher the accept bit, the later the line
            assert rule.rest is not None
            starts.append(len(tokens))
            tokens += rule.rest
            accept_dirs[len(tokens)] = k
            if not rule.dir_only:
                accept_files.append(len(tokens))
            tokens.append(_END)
        self.matcher = Matcher(tokens, starts)
        self._rule_at = accept_dirs
        self._accept = {True: _bits(accept_dirs), False: _bits(accept_files)}
        self._members = None

    def run(self, text: str) -> int:
        """The state after ``text``, which starts with this group's start."""
        if self._members is not None:
            self._build()
        return self.matcher.run(self.matcher.start, text[len(self.start) :])

    def last_rule(self, s: int, is_dir: bool) -> int:
        """The number of the last rule that state ``s`` accepts (a folder-only rule for a folder only), -1 if none."""
        hit = s & self._accept[is_dir]
        return self._rule_at[hit.bit_length() - 1] if hit else -1


def _groups(members: Iterable[tuple[int, Rule]]) -> list[_Group]:
    """The rules (in line order) as groups of one literal start each, each up to _Group.WIDTH positions."""
    open_groups: dict[str, list] = {}
    out: list[_Group] = []
    for k, rule in members:
        assert rule.rest is not None
        group = open_groups.setdefault(rule.start, [[], 0])
        if group[0] and group[1] + len(rule.rest) + 1 > _Group.WIDTH:
            out.append(_Group(rule.start, group[0]))
            group[:] = [[], 0]
        group[0].append((k, rule))
        group[1] += len(rule.rest) + 1
    out += (_Group(start, members) for start, (members, _) in open_groups.items() if members)
    return out


class _Index:
    """Groups of rules by their literal start, and rules by their literal end, so that the rules a text may match
    are found by looking its starts and ends up, not by trying every rule: a literal pattern, ``prefix*`` and
    ``*.ext`` cost the same whether the file has 10 lines or 100,000. Patterns that start with a wildcard and have
    another one after it (``*a*``, ``?x``, ``[ab]*``) are in the groups of start "", candidates for every text."""

    def __init__(self, groups: list[_Group], first: int, ending: Iterable[tuple[int, Rule]]):
        self.starts: dict[str, list[int]] = {}  # a start -> its groups' numbers (from ``first``)
        self.ends: dict[str, list[int]] = {}  # an end -> its rules' numbers
        for g, group in enumerate(groups, first):
            self.starts.setdefault(group.start, []).append(g)
        for k, rule in ending:
            self.ends.setdefault(rule.end, []).append(k)
        self._lengths = (sorted({len(s) for s in self.starts}), sorted({len(e) for e in self.ends}))

    def groups_starting(self, text: str, longer_than: int = -1) -> Iterator[int]:
        """The groups whose start (longer than ``longer_than``) ``text`` has."""
        for n in self._lengths[0]:
            if longer_than < n <= len(text) and (hit := self.starts.get(text[:n])):
                yield from hit

    def rules_ending(self, text: str) -> Iterator[list[int]]:
        """Lists of the rules (in line order) whose end ``text`` has."""
        for n in self._lengths[1]:
            if n <= len(text) and (hit := self.ends.get(text[len(text) - n :])):
                yield hit


@dataclass(frozen=True)
class _Folder:
    """What an ignore list says of one folder: its own verdict, whether it or a folder above it is excluded, and the
    automaton state of each anchored rule still alive after its path (carried to its children)."""

    own: bool
    ignored: bool
    states: dict


_TOP = _Folder(False, False, {})  # the ignore file's own folder: never excluded, no path yet


def _size(folder: _Folder) -> int:
    """The bits of the states ``folder`` keeps."""
    return sum(s.bit_length() for s in folder.states.values())


def _last_of_each(rules: list[Rule]) -> list[Rule]:
    """The rules without a line that a later line says again (the same pattern, `!` and `/`): the last line that
    matches decides, so an earlier copy never does (reliability-33: a file of one line said a million times)."""
    seen: set = set()
    kept = []
    for rule in reversed(rules):
        said = (tuple(rule.tokens), rule.negate, rule.dir_only, rule.anchored)
        if said not in seen:
            seen.add(said)
            kept.append(rule)
    return kept[::-1]


class IgnoreList:
    """The rules of one ignore file; ``ignored(rel)`` for a file's path relative to its folder."""

    # reliability-31 (spark-env): a rule compiled holds about 70 bytes per character of its line (a 1 MB line +72 MB),
    # and a 256 MB ignore file was read: its compile alone would have taken some 18 GB. Ignore files are a few KB.
    MAX_CHARACTERS = 1 << 20
    # reliability-33 (spark-env): a rule holds about 1 KB whatever its length (500,000 distinct one-character lines,
    # under the characters' cap, held 1 GB; 520 MB once groups were built when reached), so the lines are capped too
    MAX_LINES = 1 << 16

    def __init__(self, lines: Iterable[str], source: str = IGNORE_FILE):
        self.source = source
        self.rules = []
        size = 0
        for i, ln in enumerate(lines, 1):
            if i > self.MAX_LINES:
                raise IgnoreError(
                    f"{source}:{i}: more than {self.MAX_LINES:,} lines, more than any ignore file needs: shorten it"
                )
            size += len(ln) + 1  # its end too
            if size > self.MAX_CHARACTERS:  # before the line is compiled (about 70 bytes a character)
                raise IgnoreError(
                    f"{source}:{i}: the lines up to here hold {size:,} characters, more than any ignore file needs "
                    f"({self.MAX_CHARACTERS:,} at most): shorten it"
                )
            try:
                rule = compile_rule(ln, i)
            except ValueError as e:
                raise IgnoreError(f"{source}:{i}: {e} in {ln.strip()!r}: fix or delete that line") from None
            if rule:
                self.rules.append(rule)
        self.rules = _last_of_each(self.rules)
        self._dirs: dict[str, _Folder] = {"": _TOP}
        self._kept_bits = 0  # the size of the states of the folders kept
        self.groups: list[_Group] = []
        self._index = {}  # anchored: by the path; else by the name
        for anchored in (True, False):
            mine = [(k, r) for k, r in enumerate(self.rules) if r.anchored == anchored]
            groups = _groups((k, r) for k, r in mine if r.rest is not None)
            self._index[anchored] = _Index(groups, len(self.groups), ((k, r) for k, r in mine if r.rest is None))
            self.groups += groups

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
            with open_input(f) as fh:  # checked again on what is opened: the name may have been swapped since
                text = read_text_file(fh, f, "ignore file").decode("utf-8", errors="replace")
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        except OSError as e:
            raise IgnoreError(f"{f}: {e.strerror or e}: make it a text file or remove it") from None
        return cls(text.splitlines(), str(f))

    def _judge(self, text: str, parent: str, is_dir: bool) -> tuple[bool, dict]:
        """The verdict on ``text`` (a path whose folder ``parent`` is judged already, "" at the top) and the states
        of the anchored groups alive after it. The last matching line decides. An anchored group whose literal start
        lies within the folder's path goes on from the folder's state over the rest (one pass over a path, whatever
        its depth); the others are found by their literal start or end (``_Index``) and run over what is left."""
        above = self._dirs[parent]
        cut = len(parent) if parent else -1  # where this text's own part starts ("/name"), -1 at the top
        groups, best, states = self.groups, -1, {}
        carried = ((g, groups[g].matcher.run(s, text[cut:])) for g, s in above.states.items())
        started = ((g, groups[g].run(text)) for g in self._index[True].groups_starting(text, longer_than=cut))
        for g, s in itertools.chain(carried, started):
            if s:
                states[g] = s
                best = max(best, groups[g].last_rule(s, is_dir))
        name = text[cut + 1 :] if cut >= 0 else text
        by_name = self._index[False]
        for g in by_name.groups_starting(name):
            best = max(best, groups[g].last_rule(groups[g].run(name), is_dir))
        for hits in by_name.rules_ending(name):  # `*` and a literal end: the last one that may judge this text
            best = max(best, next((k for k in reversed(hits) if is_dir or not self.rules[k].dir_only), -1))
        return best >= 0 and not self.rules[best].negate, states

    _MAX_FOLDERS = 1024  # folders kept with their states; past it all are forgotten but the top (memory bounded) ...
    _MAX_BITS = 2**25  # ... and past 4 MB of states (a state is as wide as its rule: 1,000 folders under one 1 MB
    # line `/**/a/???...` held 80 MB, reliability-31)

    def _folder(self, rel: str) -> _Folder:
        """The verdict on the folder ``rel`` (no leading or trailing '/'), judged from the top down once: each folder
        is kept with its states, so a file costs its own name. The states are as long as the rules still alive, so
        the folders kept are bounded (reliability-29 newest, Medium 2: 1,000 folders under a 33 KB ignore file held
        17 MB); a folder forgotten is judged again from the deepest one kept."""
        got = self._dirs.get(rel)
        if got is not None:
            return got
        todo, d = [], rel
        while d not in self._dirs:  # up to the deepest folder judged already
            todo.append(d)
            d = d.rpartition("/")[0]
        for d in reversed(todo):
            parent = d.rpartition("/")[0]
            if len(self._dirs) >= self._MAX_FOLDERS or self._kept_bits > self._MAX_BITS:  # also within one deep path
                above = self._dirs[parent]
                self._dirs, self._kept_bits = {"": _TOP, parent: above}, _size(above)
            own, states = self._judge(d, parent, True)
            got = self._dirs[d] = _Folder(own, own or self._dirs[parent].ignored, states)
            self._kept_bits += _size(got)
        return got

    def _decide(self, rel: str, is_dir: bool) -> bool:
        """This path's own verdict (not its folders')."""
        if is_dir:
            return self._folder(rel).own
        parent = rel.rpartition("/")[0]
        self._folder(parent)
        return self._judge(rel, parent, False)[0]

    def ignored(self, rel: str) -> bool:
        """Whether the file at ``rel`` (a '/'-separated path relative to the ignore file's folder) is
        excluded: it matches, or one of its folders does (a file in an excluded folder cannot be
        re-included, as in git)."""
        rel = rel.strip("/")
        parent = rel.rpartition("/")[0]
        if self._folder(parent).ignored:
            return True
        return self._judge(rel, parent, False)[0]


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
            return il._folder(a[len(root) + 1 :].replace(os.sep, "/")).ignored
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
            roots[a] = same_folder_through(a, IgnoreList.load)  # not swapped mid-read (reliability-37)
            if roots[a]:  # named as the user sees it: relative to the project when inside it
                root, named = os.path.abspath(paths.ROOT), os.path.abspath(paths.RAW)
                if a == raw_abs != named and os.path.islink(named):  # data/raw/ a link, as an ingest pinned it
                    roots[a].source = os.path.join(named, os.path.basename(roots[a].source))  # named by its name
                if roots[a].source.startswith(root + os.sep):
                    roots[a].source = os.path.relpath(roots[a].source, root)
    return sorted(((a, il) for a, il in roots.items() if il and il.rules), key=lambda x: -len(x[0]))


def split(
    listing: Iterable[tuple], targets: Iterable[Path | str], raw: Path | None = None
) -> tuple[list[tuple], list[tuple], list[str]]:
    """(kept, ignored, ignore files used) of a store listing of (key, path, ...) tuples: an entry
    is ignored when the ignore file of its root (data/raw/, or a folder target outside it)
    matches its path relative to that root, or the path it is stored under (a symlink's key is its target's: a
    link beside an ignored folder's file would otherwise store that file under the ignored path)."""

    listing = list(listing)
    roots = _roots(list(targets), raw or paths.RAW)
    if not roots:
        return listing, [], []
    kept, ignored, used = [], [], set()

    def hit(a: str) -> bool:
        for root, il in roots:  # deepest root first
            if a.startswith(root + os.sep):
                if il.ignored(a[len(root) + 1 :].replace(os.sep, "/")):
                    used.add(il.source)
                    return True
                return False
        return False

    for entry in listing:
        a = os.path.abspath(entry[1])
        key = entry[0] if entry[0].startswith("/") else os.path.join(paths.ROOT.resolve(), entry[0])
        (ignored if hit(a) or (key != a and hit(key)) else kept).append(entry)
    return kept, ignored, sorted(used)

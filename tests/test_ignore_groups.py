"""Ignore rules that share a literal start are matched as one automaton (``ignore._Group``): reliability-32
(spark-env) Medium: 5,000 lines `*x*`, each a candidate for every name, cost 5,000 automaton runs a name (0.1 s);
100,000 such lines did not judge 200 names in 900 s. The answers must stay those of trying every rule in order."""

from __future__ import annotations

import random

import pytest
from test_ignore import _every_rule, counted_calls

from storagelab import ignore
from storagelab.ignore import IgnoreList


def test_groups_split_at_their_width_answer_as_every_rule(monkeypatch):
    """Groups made 12 positions wide, so that a start's rules fall into several groups (and a rule longer than that
    into one of its own): the answers are those of every rule in line order, negations and folder-only lines too."""
    monkeypatch.setattr(ignore._Group, "WIDTH", 12)
    rnd = random.Random(33)
    pieces = ["a", "b", "ab", "*", "?", "[ab]", "[!a]", "/", "**/", "*a*", "?b"]
    checked = 0
    for _ in range(120):
        lines = ["!" * (rnd.random() < 0.3) + "".join(rnd.choices(pieces, k=rnd.randint(1, 5))) for _ in range(14)]
        lines = [ln + "/" * (rnd.random() < 0.2) for ln in lines]
        il = IgnoreList(lines)
        assert any(sum(g.start == h.start for h in il.groups) > 1 for g in il.groups) or len(il.groups) < 4
        for _ in range(10):
            rel = "/".join(rnd.choices(["a", "b", "ab", "ba", "bab", "x"], k=rnd.randint(1, 5)))
            want = _every_rule(il, rel)
            assert il.ignored(rel) is want, (lines, rel)
            checked += want
    assert checked > 300  # matched often enough for the comparison to mean something


def test_many_wildcard_first_lines_cost_a_few_passes_a_name(monkeypatch):
    """5,000 lines `*<letter>*` (15 KB): a name is judged in a few passes (one per group), not 5,000: the automaton
    runs are counted, not timed. The last line that matches decides, as before."""
    runs = counted_calls(monkeypatch, ignore.Matcher, "run")
    letters = [chr(0x4E00 + i) for i in range(5000)]
    il = IgnoreList([*(f"*{c}*" for c in letters), f"!*{letters[7]}{letters[8]}*"])
    assert il.ignored(f"d/x{letters[4999]}y") is True
    assert il.ignored(f"d/x{letters[7]}{letters[8]}") is False  # the last line, a negation, decides
    assert il.ignored("d/plain.log") is False
    runs[0] = 0
    for k in range(0, 5000, 50):
        assert il.ignored(f"d/e/a{letters[k]}b") is True
    # 5,001 rules of 4 positions each (`*`, the letter, `*`, the end) in groups of 4,096: 5 runs a name, and 5 for the
    # folder d/e the first time (5,001 a name before)
    assert runs[0] == 5 * 100 + 5


def test_a_line_said_again_is_kept_once_and_the_last_still_decides():
    """reliability-33 (spark-env): 1,048,576 lines `a` (under the characters' cap) held 1.5 GB, a Rule each. A line
    that a later line says again never decides (the last match does): only its last copy is kept."""
    il = IgnoreList(["a", "!a", "*.log", "a", "a ", "b/", "!a", "a"])
    assert [(r.pattern, r.line) for r in il.rules] == [("*.log", 3), ("b/", 6), ("!a", 7), ("a", 8)]
    assert il.ignored("x/a") and il.ignored("b/f") and il.ignored("c.log") and not il.ignored("b")
    assert not IgnoreList(["a", "!a"]).ignored("a") and IgnoreList(["!a", "a", "!a", "a"]).ignored("a")


def test_more_lines_than_the_cap_are_one_line_and_groups_are_built_when_reached(monkeypatch):
    """A rule holds about 1 KB whatever its length: 500,000 distinct one-character lines (under the characters' cap)
    held 1 GB. Past 65,536 lines the file is refused naming the line; below it, no automaton is built at compile
    (one per distinct literal start: most are never reached), only when a path has that start."""
    with pytest.raises(ignore.IgnoreError) as e:
        IgnoreList(["*.tmp"] * 65_537, source="x/.storagelabignore")
    assert (
        str(e.value) == "x/.storagelabignore:65537: more than 65,536 lines, more than any ignore file needs: shorten it"
    )
    built = counted_calls(monkeypatch, ignore.Matcher, "__init__")
    il = IgnoreList([*(chr(0x4E00 + i) + "*" for i in range(65_535)), "!" + chr(0x4E00 + 7) + "x"])
    assert built[0] == 0 and len(il.groups) == 65_536  # one a distinct start
    assert il.ignored("d/" + chr(0x4E00 + 5) + "x") and not il.ignored("d/" + chr(0x4E00 + 7) + "x")
    assert built[0] == 3  # the three starts reached (c5, c7 and c7x)

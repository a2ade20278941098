"""Reliability-35, the dataset, Spark, the environment and the ignore language (h52k)."""

from __future__ import annotations

from storagelab.ignore import IgnoreList


def test_space_class_is_gits_ascii_space():
    """``[[:space:]]`` took Python's ``str.isspace``: names ending in \\v, \\f or \\x1c-\\x1f were ignored by
    ``*[[:space:]]`` (and kept by ``*[![:space:]]``), where git's wildmatch (its own ctype: space, \\t, \\n, \\r)
    does the opposite: found by the class fuzz against git, checked on every ASCII character."""
    spaces = IgnoreList(["*[[:space:]]"])
    others = IgnoreList(["*[![:space:]]"])
    for c in "\v\f\x1c\x1d\x1e\x1f":
        assert not spaces.ignored(f"a{c}") and others.ignored(f"a{c}")
    for c in " \t\r":
        assert spaces.ignored(f"a{c}") and not others.ignored(f"a{c}")


def test_a_slash_inside_a_class_is_a_class_member_not_a_cut():
    """``*[a/b]`` was cut at its '/' into ``*[a`` and ``b]`` and refused ("a [ without its closing ]"), exit 2; git
    reads one class, whose '/' never matches: ``xa`` and ``xb`` ignored, ``x/`` never. An escaped '/' outside a
    class still cuts (``a\\/b``), and an escaped '[' starts no class."""
    assert [p for p in ("xa", "xb", "xc", "x/y") if IgnoreList(["*[a/b]"]).ignored(p)] == ["xa", "xb"]
    assert [p for p in ("d/ac/e", "d/a/e", "d/bc/e") if IgnoreList(["d/[a/b]c/e"]).ignored(p)] == ["d/ac/e", "d/bc/e"]
    assert not IgnoreList(["a[/]b"]).ignored("a/b")
    assert IgnoreList(["a\\/b"]).ignored("a/b")
    assert IgnoreList(["\\[a/b]"]).ignored("[a/b]")

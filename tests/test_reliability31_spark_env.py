"""Reliability-31, the spark-env part (h48k): the ignore language's kept folder states."""

from __future__ import annotations

import tracemalloc

import pytest

from storagelab.ignore import CharClass, IgnoreList


def test_folder_states_kept_are_bounded_in_bytes_not_only_in_folders():
    # a state is an integer as wide as its rule: under one 100 KB line `/**/a/???...`, every folder kept held 13 KB,
    # 1,000 folders 13.6 MB (a 1 MB line: 80 MB; the 256 MB an ignore file may hold: past the machine)
    il = IgnoreList(["/**/a/" + "?" * 100_000 + "x"])
    tracemalloc.start()
    try:
        ignored = [il.ignored(f"d{k // 40}/e{k}/f") for k in range(1000)]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert not any(ignored)
    assert peak < 8 * 2**20, f"{peak / 2**20:.1f} MB"


def test_a_character_asks_only_the_classes_of_positions_still_possible(monkeypatch):
    # `*` and 1,000 classes (6 KB), names of 80 CJK letters: every new character asked every class of the line, in
    # Python (73 ms a name; the cache of 256 characters never helps with CJK names): 15 s of ingest for 200 files
    il = IgnoreList(["*" + "".join(f"[a{chr(0x4E00 + k)}]" for k in range(1000))])
    asked = []
    real = CharClass.__contains__
    monkeypatch.setattr(CharClass, "__contains__", lambda self, c: asked.append(c) or real(self, c))
    names = ["".join(chr(0x5000 + 80 * j + k) for k in range(80)) for j in range(5)]
    assert not any(il.ignored(f"d/{n}") for n in names)
    assert len(asked) < 2_000, len(asked)


def test_an_ignore_file_past_a_million_characters_is_refused_before_it_is_compiled():
    """reliability-31 (spark-env, finding 3): compiling a line costs about 70 bytes per character (a 1 MB line +72 MB),
    and ignore files up to 256 MB were read and compiled: some 18 GB. Refused in one line naming the line where the
    million is passed, before that line is compiled."""
    from storagelab.ignore import IgnoreError

    tracemalloc.start()
    try:
        with pytest.raises(IgnoreError) as e:
            IgnoreList(["*.tmp", "a" * 600_000, "b/" * 300_000], source="x/.storagelabignore")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(e.value) == (
        "x/.storagelabignore:3: the lines up to here hold 1,200,008 characters, more than any ignore file needs "
        "(1,048,576 at most): shorten it"
    )
    assert peak < 80 << 20, peak  # line 2 compiled, line 3 not (1.2 M characters: about 84 MB)
    assert len(IgnoreList(["/**/a/" + "?" * 100_000 + "x"]).rules) == 1  # a long line alone is still a rule

"""Reliability-33, the spark-env part (h50k): the ignore matcher's class masks, built when asked (77d9f780), kept."""

from __future__ import annotations

from storagelab import ignore
from storagelab.ignore import IgnoreList


def test_a_class_mask_is_built_once_however_many_distinct_characters_the_names_hold(monkeypatch):
    # 77d9f780 built a class's positions mask when a position of it was alive, remembered per character for 256
    # characters only: names of more than 256 distinct characters (CJK) built it again at every character. A line
    # of `*` and 262,000 `[!x]` (the 1,048,576-character cap) cost 7.4 s of CPU for one 200-character name (0.01 s
    # on the code before 77d9f780). The masks of the classes are kept (at most 256 of them).
    cjk = [chr(0x4E00 + k) for k in range(300)]
    names = ["".join(cjk[(k * 7 + j) % 300] for j in range(200)) for k in range(3)]
    il = IgnoreList(["*" + "[!x]" * 2_000])
    built = []
    real = ignore._bits

    def counting(positions):
        positions = list(positions)
        built.append(len(positions))
        return real(positions)

    monkeypatch.setattr(ignore, "_bits", counting)
    assert [il.ignored(n) for n in names] == [False, False, False]
    assert il.ignored("d/" + "".join(cjk[j % 300] for j in range(2_000)))  # 2,000 characters: each one a [!x]
    assert not il.ignored("".join(cjk[j % 300] for j in range(1_000)) + "x" + "".join(cjk[:1_000]))
    assert sum(n for n in built if n >= 2_000) <= 2 * 2_000, len(built)  # 600 builds of 2,000 positions before

"""Reliability-32, the spark-env part (h49k): the ignore matcher's memory under the 1,048,576-character cap."""

from __future__ import annotations

import tracemalloc

from storagelab.ignore import IgnoreList


def test_a_line_of_many_distinct_characters_holds_memory_in_proportion_to_its_length():
    # a mask per distinct character (and class) was built at compile time, each as wide as the line: a line of n
    # distinct characters held n * n / 8 bytes (60,000 of them, 180 KB of UTF-8: 478 MB; the cap's 1,048,576
    # characters: far past the machine). Positions are kept as lists, a mask built when a character is asked.
    chars = "".join(chr(0x4E00 + k) for k in range(12_000))
    tracemalloc.start()
    try:
        il = IgnoreList(["?" + chars])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 12 * 2**20, f"{peak / 2**20:.1f} MB"  # 22.5 MB before
    assert il.ignored("x" + chars) and il.ignored("d/a" + chars)
    assert not il.ignored("x" + chars[:-1]) and not il.ignored(chars)
    classes = IgnoreList(["*" + "".join(f"[{c}]" for c in chars[:300]) + "z"])  # masks of classes, built when asked
    assert classes.ignored("ab" + chars[:300] + "z") and not classes.ignored("ab" + chars[:299] + "z")

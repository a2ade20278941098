"""Markdown write-ups: the headings a file puts outside its fenced blocks, in a file that has fenced blocks (a
write-up that pastes several machines' outputs under ``## machine`` headings says which machine each run is on
only there; a log whose script echoes ``# run 2`` has no fences and no sections). fio's text parser keeps its own
while it reads (``fio_sections``); the other parsers whose files can carry several runs (bonnie++) use this, so
that no analysis takes runs under different headings for repeats."""

from __future__ import annotations

import bisect
import re

_HEADING = re.compile(r"^(#{1,6})[ \t]+(\S.*?)[ \t#]*$")  # an ATX heading


def sections(lines: list[str]) -> list[tuple[int, str]]:
    """(line, the headings that hold it outer to inner joined by ' > ') of each heading outside the fenced blocks,
    in line order; [] for a file without fences."""
    fences = 0
    path: list[tuple[int, str]] = []
    out: list[tuple[int, str]] = []
    for k, ln in enumerate(lines, 1):
        s = ln.strip()
        if s.startswith(("```", "~~~")):
            fences += 1
            continue
        m = fences % 2 == 0 and _HEADING.match(s)
        if m:
            level = len(m[1])
            path = [h for h in path if h[0] < level] + [(level, m[2])]
            out.append((k, " > ".join(h for _, h in path)))
    return out if fences else []


def section_at(heads: list[tuple[int, str]], line: int) -> str | None:
    """The section a line lies in (``sections``' last heading above it); None before the first heading."""
    k = bisect.bisect_right([ln for ln, _ in heads], line)
    return heads[k - 1][1] if k else None

"""How the bench varies a real output into corpus files: every number of two or more digits redrawn at the same
width (ingest_bench.py's corpora, text_steps.py's varied copies)."""

from __future__ import annotations

import random
import re

NUM = re.compile(rb"(?<![\w.])([1-9][0-9]+)(?![\w])")


def vary(data: bytes, rng: random.Random) -> bytes:
    def sub(m):
        s = m.group(1)
        return str(rng.randrange(10 ** (len(s) - 1), 10 ** len(s))).encode()

    return NUM.sub(sub, data)

"""The state of one read through zdb output, shared by the readers of its sections, and their helpers."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ...units import UnitError, zfs_nicenum
from ..base import Parsed, ParseError


@dataclass
class ReaderState:
    """Where a read is: the lines (progress output stripped), the rows so far, and what is open."""

    lines: list[str]
    out: Parsed
    pool: str | None = None
    block: dict[str, Any] | None = None  # current zdb_block_stats row
    n_blocks: int = 0
    banner_line: int | None = None  # open `Traversing ...` banner without its summary yet
    pending: list[dict[str, Any]] = field(default_factory=list)  # events before their summary
    leak: dict[str, Any] = field(default_factory=dict)
    ddt_no: int = 0
    sim_empty: int | None = None  # header-only simulated histogram: the line after its headers
    ddt_open: bool = False  # inside a -D dump (objects seen, ratio line not yet)
    ddt_source: str = "ddt"
    ddt_object: str | None = None
    ddt_hist: bool = False  # the open -D dump printed its aggregated histogram title

    def s(self, i: int) -> str:
        return self.lines[i].strip()

    def err(self, msg: str, i: int, expected: str, kind: str = "invalid") -> ParseError:
        return ParseError(msg, line=i + 1, expected=expected, kind=kind)

    def rest_blank(self, i: int) -> bool:
        return all(not ln.strip() for ln in self.lines[i + 1 :])

    def nice(self, tok: str, i: int, what: str) -> tuple[int | None, bool]:
        """A nicenum/nicebytes cell -> (integer value or None for '-', printed-with-suffix)."""
        if tok == "-":
            return None, False
        if tok.isdigit():  # -P raw integers: exact (a float loses them beyond 2**53, 8 PiB)
            return int(tok), False
        try:
            v = zfs_nicenum(tok)
        except UnitError:
            raise self.err(
                f"{what}: not a zfs number: {tok!r}", i, "a number with an optional K/M/G/T/P/E suffix"
            ) from None
        if math.isnan(v):
            return None, False
        if math.isinf(v):  # reliability-32: round(inf) raised OverflowError (a traceback)
            raise self.err(f"{what}: {tok[:30]!r} is out of range", i, "a number with an optional K/M/G/T/P/E suffix")
        return round(v), tok.rstrip("B")[-1:] in ("K", "M", "G", "T", "P", "E")

    def new_ddt(self, source: str) -> None:
        self.sim_empty = None
        self.ddt_no += 1
        self.ddt_source = source
        self.ddt_object = None
        self.ddt_hist = False

    def event(self, i: int, kind: str, **vals) -> None:
        row = {
            "block_no": None,
            "kind": kind,
            "vdev": None,
            "offset_bytes": None,
            "size_bytes": None,
            "errno": None,
            "count": None,
            "text": self.s(i),
            "line_start": i + 1,
            "line_end": i + 1,
        }
        row.update(vals)
        if self.block is not None and kind == "indirect_vdev":
            row["block_no"] = self.block["block_no"]
        else:
            self.pending.append(row)
        self.out.add("zdb_events", row)

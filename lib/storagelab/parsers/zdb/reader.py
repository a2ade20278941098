"""One read through zdb output: each non-blank line goes to the handler of the section it opens."""

from __future__ import annotations

import re

from ..base import Parsed, lines_of
from .blocks import BlockStats
from .ddt import Ddt
from .patterns import (
    _AGG_TITLE,
    _ALL_EMPTY,
    _BANNER,
    _DDT_HEAD,
    _DDT_LOG,
    _DDT_OBJ_NEW,
    _DDT_OBJ_OLD,
    _DDT_TABLE,
    _DITTO_MS,
    _DITTO_VDEV,
    _EMBEDDED,
    _ERROR_COUNTS,
    _HIST_TITLE,
    _INDIRECT,
    _INVOCATION,
    _LEAKED_SPACE,
    _MISMATCH,
    _NO_LEAKS,
    _OTHER_ERROR,
    _RATIOS,
    _READ_ERROR,
    _SIM_TITLE,
    _TABLE_HEAD,
    _pool_of,
    strip_progress,
)
from .tables import BlockTables

# the start of a line that one of the handlers reads: one that does not match its whole pattern is damaged
_NEAR_MISS = re.compile(
    r"^(?:Dittoed blocks (?:on|in) same |additional, non-pointer bps |DDT-\w+-\w+-\w+: (?:\S+ entries|dspace=)"
    r"|leaked space: vdev |block traversal size |indirect vdev id |dedup = |DDT-\w+: version=|DDT-log-\w+-\d+: )"
)
# the rest of such a line, for one whose first words are damaged (reliability-34: `leaked spce: vdev 0, ...`,
# `DDt-sha256-zap-unique: 128 entries, ...`, `additional, non-pointe bps of type 0: 229` were passed over, exit 0)
NEAR_TAIL = re.compile(
    r"(?:: vdev \d+)?, offset 0x[0-9a-fA-F]+, size \d+$| entries, size \d+ on disk, \d+ in core$| on disk, \d+ in core$"
    r"|: dspace=\d+; mspace=|; mspace=\d+; entries=\d+$|: version=\d+ \[|; rootobj=\d+$|; obj=\d+; len=\d+; txg="
    r"|; len=\d+; txg=\d+; entries=\d+$|bps of type \d+:|of type \d+:\s+\d+$|size \d+ != alloc \d+| != alloc \d+"
    r"|\s\d+\s+used:\s*\S+\s*%$|blocks (?:on|in) same (?:vdev|metaslab):"
)


class Reader(BlockStats, BlockTables, Ddt):
    """Every -b/-bb/-bbb, -S and -D/-DD/-DDD section of a text, in order."""

    @classmethod
    def of(cls, text: str, out: Parsed) -> Reader:
        """A reader of ``text`` (its progress output stripped) that adds its rows to ``out``."""
        return cls([strip_progress(ln) for ln in lines_of(text)], out)

    def run(self) -> Parsed:
        i, n = 0, len(self.lines)
        while i < n:
            s = self.s(i)
            if not s:
                i += 1
                continue
            i = self.line(i, s)
        if self.banner_line is not None:
            raise self.err(
                "zdb -b output ends before its summary",
                self.banner_line,
                "a `bp count:` summary block",
                kind="truncated",
            )
        self.check_ddt_closed(n - 1)
        if self.ddt_open:
            self.out.warnings.append("DDT object lines without the ratio line that ends zdb -D output")
        if not self.out.n_rows:
            first = next((k for k in range(n) if self.s(k)), 0)
            raise self.err(
                "no zdb block statistics or DDT output found",
                first,
                "zdb -b/-bb summary or table, zdb -S or zdb -D/-DD output",
            )
        return self.out

    def line(self, i: int, s: str) -> int:
        """Handle the line at i (non-blank); return the index of the next line to read."""
        m = _INVOCATION.match(s)
        if m:
            self.check_ddt_closed(i)
            self.pool = _pool_of(m.group(1))
            self.block = None
            self.ddt_open = False
            return i + 1
        if _BANNER.match(s):
            if self.banner_line is not None:
                raise self.err(
                    "a new zdb -b run starts before the previous one printed its summary",
                    self.banner_line,
                    "a `bp count:` summary block",
                    kind="truncated",
                )
            self.banner_line = i
            self.block = None
            return i + 1
        if s.startswith("bp count:"):
            return self.summary(i)
        for pat, fn in self.handlers:
            m = pat.match(s)
            if m:
                return fn(self, i, m)
        if _NEAR_MISS.match(s) or NEAR_TAIL.search(
            s
        ):  # reliability-33: `Dittoed blocks on same vdev: 1664068x` left 0 stored, a DDT
            # object line with an unreadable count (`3.74e2 entries`) was dropped; both with exit 0
            raise self.err(f"unreadable zdb line: {s[:80]!r}", i, "the line as zdb prints it, whole numbers")
        return i + 1  # other zdb output (-d, -c lines, Verified ... feature refcount, prose): ignored

    handlers = (
        (_NO_LEAKS, BlockStats.h_no_leaks),
        (_MISMATCH, BlockStats.h_mismatch),
        (_LEAKED_SPACE, BlockStats.h_leaked_space),
        (_READ_ERROR, BlockStats.h_read_error),
        (_ERROR_COUNTS, BlockStats.h_error_counts),
        (_INDIRECT, BlockStats.h_indirect),
        (_EMBEDDED, BlockStats.h_embedded),
        (_DITTO_VDEV, BlockStats.h_ditto_vdev),
        (_DITTO_MS, BlockStats.h_ditto_ms),
        (_TABLE_HEAD, BlockTables.h_table),
        (_HIST_TITLE, BlockTables.h_size_hist),
        (_SIM_TITLE, Ddt.h_sim_title),
        (_AGG_TITLE, Ddt.h_agg_title),
        (_DDT_HEAD[0], Ddt.h_ddt_head),
        (_RATIOS, Ddt.h_ratios),
        (_DDT_LOG, Ddt.h_ddt_log),
        (_DDT_TABLE, Ddt.h_ddt_table),
        (_DDT_OBJ_OLD, Ddt.h_obj_old),
        (_DDT_OBJ_NEW, Ddt.h_obj_new),
        (_ALL_EMPTY, Ddt.h_all_empty),
        (_OTHER_ERROR, BlockStats.h_other_error),
    )

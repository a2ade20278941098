"""zdb -bb: the per-type table (``Blocks LSIZE PSIZE ...``) and the Block Size Histogram."""

from __future__ import annotations

import re

from .patterns import _ELIDED, _GANGED, _HIST_HEAD1, _HIST_HEAD2, _LEVEL, _NOTE, _STAR_HEAD, _STAR_ROW, _VALUE, _ratio
from .state import ReaderState

_KNOWN_IN_TABLE = re.compile(r"(?i)number\s*of|gang")  # words of the lines a -bb table holds beside its rows


def _row_like(s: str) -> bool:
    """A line of 7 or more fields, 5 of its first 7 holding a digit: a -bb row with a damaged cell."""
    fields = s.split()
    return len(fields) >= 7 and (s[:1].isdigit() or sum(any(c.isdigit() for c in f) for f in fields[:7]) >= 5)


class BlockTables(ReaderState):
    def h_table(self, i, m):
        block_no = self.block["block_no"] if self.block else None
        n = len(self.lines)
        j, last, total_seen, stored = i + 1, None, False, 0
        while j < n:
            raw, s = self.lines[j], self.s(j)
            if not s:
                # -bbbb star histograms may be separated by blank lines: continue if a row follows
                k = j + 1
                while k < n and not self.s(k):
                    k += 1
                if total_seen or k >= n or not (self.row_cells(self.lines[k]) or _STAR_ROW.match(self.s(k))):
                    break
                j = k
                continue
            g = _GANGED.match(s)
            if s in _ELIDED:  # the author left rows out ('[...]'): the rows printed are kept
                self.out.warnings.append(f"line {j + 1}: {s!r} in the zdb -bb table: rows left out by the author")
            elif g and last is not None:
                last["ganged_blocks"] = int(g[1])
            elif _STAR_ROW.match(s) or _STAR_HEAD.match(s):
                pass
            else:
                cells = self.row_cells(raw)
                if cells is None and _row_like(s):  # reliability-33: a row with a damaged cell (`3.64e0K`) ended
                    # the table, and the row was lost with exit 0; reliability-36: also its first cell (`x.64K`)
                    raise self.err(f"unreadable row in the zdb -bb table: {s[:80]!r}", j, "a row of the table's cells")
                if cells is None and _KNOWN_IN_TABLE.search(s):  # reliability-35: a damaged 'number of ganged
                    # blocks' (or star histogram head) line ended the table: the rows after it lost with exit 0
                    raise self.err(
                        f"unreadable line in the zdb -bb table: {s[:80]!r}",
                        j,
                        "a row, `number of ganged blocks: N` or a histogram head",
                    )
                if cells is None and total_seen:  # reliability-37: a row after the Total (2.2+'s Metadata Total)
                    # split in two by a newline, 3 of its cells damaged, or its ganged line's two words damaged,
                    # ended the table: the row lost with exit 0; zdb ends the table with a blank line
                    raise self.err(
                        f"unreadable line after the zdb -bb table's Total row: {s[:80]!r}",
                        j,
                        "a row, `number of ganged blocks: N` or the blank line ending the table",
                    )
                if cells is None:
                    break
                last = self.table_row(j, cells, block_no)
                stored += last is not None
                if last is not None and last["type_name"] == "Total" and last["level"] is None:
                    total_seen = True
            j += 1
        if not total_seen and self.block is not None and self.rest_blank(j):
            return self.cut_table(j, stored)
        if not total_seen:
            kind = "truncated" if self.rest_blank(j - 1) else "invalid"
            raise self.err(
                "zdb -bb table ends before its Total row",
                j - 1 if kind == "truncated" else j,
                "a `Total` row",
                kind=kind,
            )
        return j

    def cut_table(self, j: int, rows: int) -> int:
        """A -bb table that stops before its Total row at the end of the file, under a complete -b summary: cut
        where it was pasted. The summary and the complete rows are kept; a last row cut inside is dropped."""
        n = len(self.lines)
        partial = j < n and bool(self.s(j))
        self.out.warnings.append(
            f"line {j + 1 if partial else j}: the zdb -bb table stops before its Total row"
            f"{' inside a row (dropped)' if partial else ''}: the -b summary and the {rows} complete rows (of blocks) are kept"
        )
        return j + 1 if partial else j

    @staticmethod
    def row_cells(raw: str) -> list[str] | None:
        """The 7 value cells and the type of a -bb row (tab separated, or tabs expanded to spaces)."""
        if raw.count("\t") >= 7:
            parts = raw.split("\t")
            cells = [p.strip() for p in parts[:7]] + ["\t".join(parts[7:]).strip()]
        else:
            toks = raw.split()
            if len(toks) < 8:
                return None
            cells = toks[:7] + [" ".join(toks[7:])]
        if not all(_VALUE.match(c) for c in cells[:7]) or not cells[7]:
            return None
        return cells

    def table_row(self, j: int, cells: list[str], block_no: int | None) -> dict | None:
        if all(c == "-" for c in cells[:7]):
            return None
        name, level = cells[7], None
        lv = _LEVEL.match(name)
        if lv:
            level, name = int(lv[1]), lv[2]
        vals = [
            self.nice(c, j, h) for c, h in zip(cells[:5], ("Blocks", "LSIZE", "PSIZE", "ASIZE", "avg"), strict=True)
        ]
        ratios = []
        for c in cells[5:7]:
            try:
                ratios.append(None if c == "-" else _ratio(c))
            except ValueError:
                raise self.err(f"not a number: {c!r}", j, "comp and %Total as decimals") from None
        row = {
            "block_no": block_no,
            "type_name": name,
            "level": level,
            "blocks": vals[0][0],
            "lsize_bytes": vals[1][0],
            "psize_bytes": vals[2][0],
            "asize_bytes": vals[3][0],
            "avg_bytes": vals[4][0],
            "comp_ratio": ratios[0],
            "pct_total": ratios[1],
            "ganged_blocks": None,
            "human_units": any(h for _, h in vals),
            "line_start": j + 1,
            "line_end": j + 1,
        }
        self.out.add("zdb_block_types", row)
        return row

    def h_size_hist(self, i, m):
        block_no = self.block["block_no"] if self.block else None
        if self.block is not None and self.block["zfs_era"] == "0.8+":
            self.block["zfs_era"] = "2.0+"
        n = len(self.lines)
        j = i + 1
        heads = 0
        while j < n and (
            not self.s(j) or _NOTE.match(self.s(j)) or _HIST_HEAD1.match(self.s(j)) or _HIST_HEAD2.match(self.s(j))
        ):
            heads += bool(_HIST_HEAD1.match(self.s(j)) or _HIST_HEAD2.match(self.s(j)))
            j += 1
        if heads != 2:
            kind = "truncated" if j >= n else "invalid"
            raise self.err(
                "Block Size Histogram without its two header lines",
                min(j, n - 1),
                "`block psize lsize asize` and `size Count Size Cum. ...`",
                kind=kind,
            )
        rows = 0
        while j < n and self.s(j):
            toks = self.s(j).split()
            if len(toks) != 10:
                raise self.err(
                    f"block size histogram row has {len(toks)} fields",
                    j,
                    "size: and 9 numbers (Count Size Cum. for psize, lsize, asize)",
                )
            vals = [self.nice(t, j, "histogram cell") for t in [toks[0].rstrip(":")] + toks[1:]]
            if any(v is None for v, _ in vals):
                raise self.err("`-` in block size histogram", j, "numbers")
            names = (
                "block_size_bytes",
                "psize_count",
                "psize_bytes",
                "psize_cum_bytes",
                "lsize_count",
                "lsize_bytes",
                "lsize_cum_bytes",
                "asize_count",
                "asize_bytes",
                "asize_cum_bytes",
            )
            row = {
                "block_no": block_no,
                **{k: v for k, (v, _) in zip(names, vals, strict=True)},
                "human_units": any(h for _, h in vals[1:]),
                "line_start": j + 1,
                "line_end": j + 1,
            }
            self.out.add("zdb_block_size_histogram", row)
            rows += 1
            j += 1
        if not rows:
            raise self.err(
                "Block Size Histogram has no rows",
                min(j, n - 1),
                "rows `512: ...` to `16M: ...`",
                kind="truncated" if j >= n else "invalid",
            )
        return j

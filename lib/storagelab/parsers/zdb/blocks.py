"""zdb -b: the block statistics summary (``bp count:`` ...), its classes, and the events around it
(leak check, read errors, indirect vdevs, embedded and dittoed blocks)."""

from __future__ import annotations

import re

from .patterns import _CLASS, _CLASS_LABELS, _CLASS_TAIL, _ERROR_ROW, _MANDATORY, _SUMMARY, _ratio
from .state import ReaderState


class BlockStats(ReaderState):
    def h_no_leaks(self, i, m):
        self.leak = {"leaks": "none", "leaked_bytes": 0}
        self.event(i, "no_leaks")
        return i + 1

    def h_mismatch(self, i, m):
        trav, alloc, what, diff = int(m[1]), int(m[2]), m[3], int(m[4])
        if what == "leaked":
            self.leak = {"leaks": "leaked", "leaked_bytes": diff, "traversal_bytes": trav, "alloc_bytes": alloc}
        else:  # 0.6/0.7 under -L: not a leak check
            self.leak = {"traversal_bytes": trav, "alloc_bytes": alloc}
        self.event(i, "size_mismatch", size_bytes=diff)
        return i + 1

    def h_leaked_space(self, i, m):
        self.leak.setdefault("leaks", "leaked")
        self.event(i, "leaked_space", vdev=int(m[1]), offset_bytes=int(m[2], 16), size_bytes=int(m[3]))
        return i + 1

    def h_read_error(self, i, m):
        self.event(i, "read_error", errno=int(m[1]))
        return i + 1

    def h_error_counts(self, i, m):
        j = i + 1
        while j < len(self.lines) and self.s(j):
            r = _ERROR_ROW.match(self.s(j))
            if r:
                self.event(j, "error_count", errno=int(r[1]), count=int(r[2]))
            elif not self.s(j).startswith("errno"):
                break
            j += 1
        return j

    def h_indirect(self, i, m):
        size, _ = self.nice(m[3], i, "indirect mapping size")
        self.event(i, "indirect_vdev", vdev=int(m[1]), count=int(m[2]), size_bytes=size)
        return i + 1

    def h_other_error(self, i, m):
        self.event(i, "error")
        return i + 1

    def summary(self, i: int) -> int:
        seen: dict[str, re.Match] = {}
        classes: list[tuple[int, re.Match]] = []
        j = i
        n = len(self.lines)
        while j < n:
            s = self.s(j)
            label = next((lb for lb in _SUMMARY if s.startswith(lb)), None)
            is_class = label is None and s.startswith(tuple(_CLASS_LABELS))
            if label is None and not is_class:
                if _CLASS_TAIL.search(s):  # reliability-34: `Embeded log class 0 used: -nan%` ended the summary
                    raise self.err(f"unreadable summary line {s!r}", j, "`class N used: N%` as zdb prints it")
                break
            m = (_SUMMARY[label] if label else _CLASS).fullmatch(s)
            if not m:
                kind = "truncated" if self.rest_blank(j) else "invalid"
                raise self.err(
                    f"unreadable summary line {s!r}", j, f"`{label or 'class'} N ...` as zdb prints it", kind=kind
                )
            if label:
                if label in seen:
                    break  # next block (two summaries without a blank line between)
                seen[label] = m
            else:
                classes.append((j, m))
            j += 1
        missing = [lb for lb in _MANDATORY if lb not in seen]
        if not classes:
            missing.append("Normal class:")
        if missing:
            kind = "truncated" if self.rest_blank(j - 1) else "invalid"
            raise self.err(
                f"zdb -b summary is missing `{missing[0]}`",
                j - 1 if kind == "truncated" else j,
                f"the `{missing[0]}` line of the summary",
                kind=kind,
            )
        self.n_blocks += 1
        labels = [m[1] for _, m in classes]
        era = (
            "2.4+"
            if "Special embedded log" in labels
            else "2.2+"
            if "bp cloned:" in seen
            else "2.1+"
            if "Embedded log class" in labels
            else "0.8+"
            if "SPA allocated:" not in labels
            else "0.6/0.7"
            if "bp deduped:" in seen
            else "pre-dedup"
        )
        g = {k: m.groups() for k, m in seen.items()}
        row = {
            "block_no": self.n_blocks,
            "pool": self.pool,
            "bp_count": int(g["bp count:"][0]),
            "ganged_count": int(g["ganged count:"][0]) if "ganged count:" in g else None,
            "bp_logical_bytes": int(g["bp logical:"][0]),
            "bp_logical_avg_bytes": int(g["bp logical:"][1]),
            "bp_physical_bytes": int(g["bp physical:"][0]),
            "bp_physical_avg_bytes": int(g["bp physical:"][1]),
            "compression_physical": _ratio(g["bp physical:"][2]),
            "bp_allocated_bytes": int(g["bp allocated:"][0]),
            "bp_allocated_avg_bytes": int(g["bp allocated:"][1]),
            "compression_allocated": _ratio(g["bp allocated:"][2]),
            "bp_deduped_bytes": int(g["bp deduped:"][0]) if "bp deduped:" in g else None,
            "dedup_ref_gt1_count": int(g["bp deduped:"][1]) if "bp deduped:" in g else None,
            "dedup_ratio": _ratio(g["bp deduped:"][2]) if "bp deduped:" in g else None,
            "bp_cloned_bytes": int(g["bp cloned:"][0]) if "bp cloned:" in g else None,
            "bp_cloned_count": int(g["bp cloned:"][1]) if "bp cloned:" in g else None,
            "embedded_bp_count": 0,
            "dittoed_same_vdev": 0,
            "dittoed_same_metaslab": None if era in ("0.6/0.7", "pre-dedup") else 0,
            "leaks": None,
            "leaked_bytes": None,
            "traversal_bytes": None,
            "alloc_bytes": None,
            "zfs_era": era,
            "line_start": i + 1,
            "line_end": j,
        }
        row.update(self.leak)
        self.out.add("zdb_block_stats", row)
        for k, m in classes:
            self.out.add(
                "zdb_classes",
                {
                    "block_no": self.n_blocks,
                    "class": _CLASS_LABELS[m[1]],
                    "allocated_bytes": int(m[2]),
                    "used_pct": _ratio(m[3]),
                    "line_start": k + 1,
                    "line_end": k + 1,
                },
            )
        for ev in self.pending:
            ev["block_no"] = self.n_blocks
        self.pending, self.leak, self.block, self.banner_line = [], {}, row, None
        return j

    def need_block(self, i: int, what: str) -> dict:
        if self.block is None:
            raise self.err(f"{what} outside a zdb -b summary", i, "a `bp count:` summary block before it")
        return self.block

    def h_embedded(self, i, m):
        blk = self.need_block(i, "embedded bp line")
        blk["embedded_bp_count"] += int(m[2])
        self.out.add(
            "zdb_embedded_bps",
            {
                "block_no": blk["block_no"],
                "embedded_type": int(m[1]),
                "bp_count": int(m[2]),
                "line_start": i + 1,
                "line_end": i + 1,
            },
        )
        return i + 1

    def h_ditto_vdev(self, i, m):
        self.need_block(i, "Dittoed line")["dittoed_same_vdev"] = int(m[1])
        return i + 1

    def h_ditto_ms(self, i, m):
        self.need_block(i, "Dittoed line")["dittoed_same_metaslab"] = int(m[1])
        return i + 1

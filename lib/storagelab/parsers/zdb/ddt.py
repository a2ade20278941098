"""zdb -S (simulated DDT histogram) and zdb -D/-DD/-DDD (DDT objects, histograms, ratios)."""

from __future__ import annotations

from .patterns import _DDT_HEAD, _ratio
from .state import ReaderState

# the counts of a DDT histogram row after its refcnt: allocated and referenced blocks, LSIZE, PSIZE, DSIZE
_COUNTS = (
    "alloc_blocks",
    "alloc_lsize_bytes",
    "alloc_psize_bytes",
    "alloc_dsize_bytes",
    "ref_blocks",
    "ref_lsize_bytes",
    "ref_psize_bytes",
    "ref_dsize_bytes",
)


class Ddt(ReaderState):
    def check_ddt_closed(self, i: int) -> None:
        if self.ddt_open and self.ddt_source == "simulated" and self.sim_empty is not None:
            # zdb -S of OpenZFS 2.3.1 can print the histogram's headers and nothing else (no rows, no
            # Total, no ratio line) for a pool full of blocks: zero entries, with a warning
            line = self.sim_empty
            self.out.warnings.append(
                f"line {line}: zdb -S printed an empty simulated DDT histogram (no rows, no "
                "Total, no ratio line; OpenZFS 2.3.1 does this): stored as zero entries, "
                "which may not be the pool's real dedup table"
            )
            zeros = dict.fromkeys(_COUNTS, 0)
            self.out.add(
                "zdb_ddt_histogram",
                {
                    "ddt_no": self.ddt_no,
                    "source": "simulated",
                    "object": None,
                    "refcnt_bucket": None,
                    "is_total": True,
                    **zeros,
                    "human_units": False,
                    "line_start": line,
                    "line_end": line,
                },
            )
            self.ddt_open, self.sim_empty = False, None
            return
        if self.ddt_open and (self.ddt_source == "simulated" or self.ddt_hist):
            raise self.err(
                "zdb -S/-DD output ends before its ratio line", i, "`dedup = ..., compress = ...`", kind="truncated"
            )

    def h_sim_title(self, i, m):
        if self.ddt_open and self.ddt_source == "simulated":
            raise self.err(
                "new zdb -S output before the ratio line of the previous one", i, "`dedup = ...` line", kind="truncated"
            )
        self.new_ddt("simulated")
        self.ddt_open = True
        return i + 1

    def h_agg_title(self, i, m):
        if not self.ddt_open:
            self.new_ddt("ddt")
            self.ddt_open = True
        self.ddt_object = None
        self.ddt_hist = True
        return i + 1

    def h_ddt_head(self, i, m):
        n = len(self.lines)
        j = i
        for pat in _DDT_HEAD:
            if j >= n or not pat.match(self.s(j)):
                kind = "truncated" if j >= n or self.rest_blank(j - 1) else "invalid"
                raise self.err(
                    "incomplete DDT histogram header", min(j, n - 1), f"a line like {pat.pattern!r}", kind=kind
                )
            j += 1
        if not self.ddt_open:  # a histogram without title: -DDD per-object, or a pasted snippet
            self.new_ddt("ddt")
            self.ddt_open = True
        source, obj = self.ddt_source, self.ddt_object
        total = False
        start = j
        while j < n and self.s(j):
            toks = self.s(j).split()
            if len(toks) != 9:
                kind = "truncated" if self.rest_blank(j) else "invalid"
                raise self.err(
                    f"DDT histogram row has {len(toks)} fields",
                    j,
                    "refcnt and 8 numbers (allocated and referenced blocks, LSIZE, PSIZE, DSIZE)",
                    kind=kind,
                )
            is_total = toks[0] == "Total"
            bucket = None if is_total else self.nice(toks[0], j, "refcnt")[0]
            vals = [self.nice(t, j, "DDT histogram cell") for t in toks[1:]]
            if any(v is None for v, _ in vals) or (bucket is None and not is_total):
                raise self.err("`-` in DDT histogram", j, "numbers")
            self.out.add(
                "zdb_ddt_histogram",
                {
                    "ddt_no": self.ddt_no,
                    "source": source,
                    "object": obj,
                    "refcnt_bucket": bucket,
                    "is_total": is_total,
                    **{k: v for k, (v, _) in zip(_COUNTS, vals, strict=True)},
                    "human_units": any(h for _, h in vals),
                    "line_start": j + 1,
                    "line_end": j + 1,
                },
            )
            total = total or is_total
            j += 1
        if obj is None and j > start and not total:
            kind = "truncated" if j >= n or self.rest_blank(j - 1) else "invalid"
            raise self.err("DDT histogram ends before its Total row", j - 1, "a ` Total ...` row", kind=kind)
        if j == start and source == "simulated":
            self.sim_empty = start  # 0-based index of the header's last line + 1
        elif j == start:
            self.out.warnings.append(f"line {start}: DDT histogram with headers only (empty pool)")
        return j

    def h_ratios(self, i, m):
        if not self.ddt_open:
            self.new_ddt("ddt")
        vals = [_ratio(x) for x in m.groups()]
        self.out.add(
            "zdb_ddt_ratios",
            {
                "ddt_no": self.ddt_no,
                "source": self.ddt_source,
                "pool": self.pool,
                "dedup": vals[0],
                "compress": vals[1],
                "copies": vals[2],
                "product": vals[3],
                "line_start": i + 1,
                "line_end": i + 1,
            },
        )
        self.ddt_open = False
        self.ddt_object = None
        return i + 1

    def ddt_row(self, i: int, kind: str, **vals) -> None:
        if not self.ddt_open or self.ddt_source != "ddt":
            self.new_ddt("ddt")
            self.ddt_open = True
        row = {
            "ddt_no": self.ddt_no,
            "pool": self.pool,
            "kind": kind,
            "name": None,
            "checksum": None,
            "ddt_type": None,
            "ddt_class": None,
            "entries": None,
            "disk_bytes_per_entry": None,
            "core_bytes_per_entry": None,
            "disk_bytes_total": None,
            "core_bytes_total": None,
            "totals_derived": None,
            "ddt_version": None,
            "flags": None,
            "flag_names": None,
            "object_id": None,
            "log_len": None,
            "log_txg": None,
            "line_start": i + 1,
            "line_end": i + 1,
        }
        row.update(vals)
        self.out.add("zdb_ddt_objects", row)

    def h_obj_old(self, i, m):
        entries, disk, core = int(m[5]), int(m[6]), int(m[7])
        if max(entries, disk, core) >= 2**63:  # reliability-32: float() of a longer one raised OverflowError
            raise self.err("a DDT size or count is out of range", i, "integers of at most 64 bits")
        self.ddt_row(
            i,
            "object",
            name=m[1],
            checksum=m[2],
            ddt_type=m[3],
            ddt_class=m[4],
            entries=entries,
            disk_bytes_per_entry=float(disk),
            core_bytes_per_entry=float(core),
            disk_bytes_total=float(entries * disk),
            core_bytes_total=float(entries * core),
            totals_derived=True,
        )
        self.ddt_object = m[1]
        return i + 1

    def h_obj_new(self, i, m):
        dspace, mspace, entries = int(m[5]), int(m[6]), int(m[7])
        if max(dspace, mspace, entries) >= 2**63:  # reliability-32: float() of a longer one raised OverflowError
            raise self.err("a DDT size or count is out of range", i, "integers of at most 64 bits")
        self.ddt_row(
            i,
            "object",
            name=m[1],
            checksum=m[2],
            ddt_type=m[3],
            ddt_class=m[4],
            entries=entries,
            disk_bytes_per_entry=dspace / entries if entries else None,
            core_bytes_per_entry=mspace / entries if entries else None,
            disk_bytes_total=float(dspace),
            core_bytes_total=float(mspace),
            totals_derived=False,
        )
        self.ddt_object = m[1]
        return i + 1

    def h_ddt_table(self, i, m):
        self.ddt_row(
            i,
            "table",
            name=m[1],
            checksum=m[2],
            ddt_version=int(m[3]),
            flags=int(m[4], 16),
            flag_names=m[5],
            object_id=int(m[6]),
        )
        return i + 1

    def h_ddt_log(self, i, m):
        self.ddt_row(
            i,
            "log",
            name=m[1],
            checksum=m[2],
            flags=int(m[4], 16),
            flag_names=m[5],
            object_id=int(m[6]),
            log_len=int(m[7]),
            log_txg=int(m[8]),
            entries=int(m[9]),
        )
        self.ddt_object = None
        return i + 1

    def h_all_empty(self, i, m):
        self.ddt_row(i, "all_empty")
        self.ddt_open = False
        return i + 1

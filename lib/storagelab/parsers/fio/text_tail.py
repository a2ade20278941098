"""fio normal text: the end of a report, its run status group lines and disk stats lines."""

from __future__ import annotations

from .schema import TABLES
from .text_shapes import _DISK, _GROUP2, _GROUP3
from .text_state import TextState, _r

_DISK_KEYS = TABLES["fio_disk_stats"].row_columns  # the order disk() gives its values in


class ReportTail(TextState):
    """The readers of the run status and disk stats lines."""

    def group_line(self, ln: int, s: str) -> None:
        self.close_job(ln)
        self.found = self.report_tail = True
        m3 = _GROUP3.match(s)
        m2 = None if m3 else _GROUP2.match(s)
        if not (m3 or m2):
            self.fail(
                ln,
                "malformed run status line",
                "'WRITE: bw=N (N), MIN-MAX (MIN-MAX), io=N (N), run=MIN-MAXmsec' or 2.x "
                "'READ: io=N, aggrb=N, minb=N, maxb=N, mint=Nmsec, maxt=Nmsec'",
            )
        gid = self.group
        if gid is None:
            gid = self.group = 0
            self.p.warnings.append(
                f"line {ln}: run status line without a 'Run status group N' header; groupid taken as 0"
            )
        if m3:
            bw, mn, mx = (self.pair(ln, m3[a], m3[b]) for a, b in (("bw", "bw2"), ("mn", "mn2"), ("mx", "mx2")))
            io = self.pair(ln, m3["io"], m3["io2"])
            io_text = m3["io"] if io == self.size(ln, m3["io"]) else m3["io2"]
            measured = self.measured_bw(ln, bw, (m3["bw"], m3["bw2"]), io_text, int(m3["r1"]), False)
        else:
            assert m2 is not None  # (fail() raised)
            bw, mn, mx, io = (self.size(ln, m2[k], legacy=True) for k in ("bw", "mn", "mx", "io"))
            measured = self.measured_bw(ln, bw, (m2["bw"],), m2["io"], int(m2["r1"]), True)
        if measured != bw and m3 and m3["r0"] == m3["r1"]:
            # one run time: a min or max printed as the bw was (one job, or jobs alike) holds the same misprint
            mn, mx = (measured if v == bw else v for v in (mn, mx))
        bw = measured
        m = m3 or m2
        assert m is not None
        self.p.add(
            "fio_groups",
            {
                "doc_index": self.report,
                "groupid": gid,
                "direction": m["dir"].lower(),
                "bw_bytes_per_s": bw,
                "bw_min_bytes_per_s": mn,
                "bw_max_bytes_per_s": mx,
                "io_bytes": io,
                "run_min_ns": _r(int(m["r0"]) * 1e6),
                "run_max_ns": _r(int(m["r1"]) * 1e6),
                "derived": False,
                "exact": False,
                "line_start": ln,
                "line_end": ln,
            },
        )

    def disk(self, ln: int, s: str, end: int | None = None) -> None:
        """One disk stats line (``end``: the last line of a line wrapped after a comma). A line that
        ends in ',' without matching waits for its continuation; one that the file ends in (or that
        is cut short) loses only itself: the results before it are kept, with a warning."""
        self.end_disks()
        m = _DISK.match(s)
        if not m:
            if s.rstrip().endswith(",") and end is None:
                self.disk_part = (ln, s.rstrip())
                return
            if self.is_last(end or ln):
                self.p.warnings.append(
                    f"line {ln}: disk stats line cut at the end of the file, not stored: {s.strip()[:60]!r}"
                )
                return
            self.fail(
                ln,
                "malformed disk stats line",
                "'name: ios=R/W, [sectors=R/W, ]merge=R/W, ticks=R/W, in_queue=N, util=N%[, aggr...]'",
            )
        g = m.groups()  # name; ios, sectors, merges (read/write); ticks; in_queue; util; the same of the aggregate
        counts = [None if c is None else int(c) for c in (*g[1:7], *g[11:17])]
        ticks = [None if t is None else _r(int(t) * 1e6) for t in (*g[7:10], *g[17:20])]
        values = (
            g[0],
            *counts[:6],
            *ticks[:3],
            float(g[10]),
            g[11] is not None,
            *counts[6:],
            *ticks[3:],
            None if g[20] is None else float(g[20]),
            ln,
            end or ln,
        )
        self.p.add("fio_disk_stats", dict(zip(_DISK_KEYS, values, strict=True)))

    def end_disks(self) -> None:
        """A disk line that ended in ',' and was not continued: cut (the file ends there) or malformed."""
        if self.disk_part is not None:
            ln, s = self.disk_part
            self.disk_part = None
            self.disk(ln, s, ln)

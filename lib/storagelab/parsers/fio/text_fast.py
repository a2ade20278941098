"""fio normal text: a whole job block of fio 3.x's or 2.x's usual layout read at once (issue 27).

After a job header (text.py's ``header``), small compiled expressions match the rest of the block in the
text itself, one after the other from the header's end: an optional ``Description`` line; each direction
section (``_DIR``: 3.x ``read: IOPS=`` or 2.x ``read : io=``; up to three slat/clat/lat lines, up to three
percentile blocks, bw, iops); the latency distribution lines (``_DIST``); an fsync/fdatasync section
(``_SYNC``); cpu, IO depths, submit, complete and issued (``_JOB_WIDE``); errors/latency lines. Each
expression stays small: one large expression with optional parts made the engine save its dozens of groups
at every step (20 µs a section). Only when all of it matches is anything stored, and the rows are built in
bulk (percentile and IO depth rows by columns): the rows, warnings, line numbers and the parser's state are
then those that the line-by-line reading gives for the same lines (tests/test_fio_text.py compares both on
every real output), and the line loop passes over the lines read here. Per-priority (cmdprio) latency lines
and percentile blocks after a direction's own are read and not stored, with the general way's warning.
Anything else (a line out of the usual order, a number in an unusual form, a tab) declines: the block is read
line by line, as before. A stream (``parse_lines``) is always read line by line.
"""

from __future__ import annotations

import re

from ... import units
from ...units import SI_FACTORS as _SI
from ...units import TIME_NS_FACTORS as _TIME
from .text_blocks import JobBlock, _bucket_edges, _bw_values
from .text_shapes import _BUCKET, _BUCKET_COLUMNS, _DEPTH_COLUMNS, _IEC_UNIT, _PCT_COLUMNS, _SI_UNIT
from .text_state import _BUCKET_EDGES, _r

_B = r" *"  # blanks inside one line (a tab, which fio never prints, declines)
# numbers as _DECIMAL reads them; no optional group inside (an optional group makes the regular expression engine
# save every capture group so far at each step: with dozens of groups, that cost dominated)
_D = r"(-?[0-9]+\.?[0-9]*)"
_U = r"([0-9]+\.?[0-9]*)"
_V = rf"{_B}{_D}{_B}"
_P = rf"{_B}[0-9]+\.[0-9]+th=\[{_B}[0-9]+\]"  # one percentile entry
# a percentile block's lines: all full (four entries, or three of wide values) but the last (without a comma)
_PCT_LINES = rf"(?:{_B}\|{_P},{_P},{_P},(?:{_P},)?{_B}\n)*{_B}\|{_P}(?:,{_P}(?:,{_P}(?:,{_P})?)?)?{_B}\n"
# a direction section, one line after the other (each expression small: few groups to save at each step)
_DIR = re.compile(  # 3.x (as _DIR3): groups 0-5; or 2.x (as _DIR2): groups 6-10
    rf"{_B}(?:(read|write|trim|mixed): IOPS=([^,\n]+), BW=([^\s(]+) \(([^)\n]*)\)\(([^/)\n]+)/([0-9]+)msec\)"
    rf"(?:;[^\n]*)?|(read|write|trim|mixed) ?: io=([^,\n]+), bw=([^,\n]+), iops=([^,\n]+), runt= *([0-9]+) *msec)"
    rf"{_B}\n"
)
_LAT_LINE = re.compile(  # as _LAT_FAST
    rf"{_B}(slat|clat|lat) ?\(([num]sec)\): min={_B}{_U}([kKMGTPE]?){_B}, "
    rf"max={_B}{_U}([kKMGTPE]?){_B}, avg={_V}, stdev={_V}\n"
)
# per-priority (cmdprio) latency lines and percentile blocks, after the direction's own (fio 3.20-3.2x 'high prio_clat',
# 3.30+ 'clat prio 1/0'): read (their numbers as lat_stat and pct_line check them) but not stored, as the general way
_PRIO_LAT = re.compile(
    rf"{_B}(?:(?:high|low) prio_(?:clat|lat|slat)|(?:clat|lat|slat) prio [0-9]+/[0-9]+) \([num]sec\): "
    rf"min={_B}{_U}[kKMGTPE]?{_B}, max={_B}{_U}[kKMGTPE]?{_B}, avg={_V}, stdev={_V}\n"
)
_PRIO_PCT = re.compile(rf"{_B}[a-z][^\n(]*prio[^\n]*? percentiles \([num]sec\){_B}:{_B}\n(?:{_PCT_LINES})")
_PCT_BLOCK = re.compile(rf"{_B}(clat|lat|slat) percentiles \(([num]sec)\){_B}:{_B}\n({_PCT_LINES})")
_BW_LINE = re.compile(  # as _BW_FAST, or fio 2.0's 'bw (KB/s)  : min=' (as _BW and fields() read it)
    rf"{_B}bw \(([^)\n]*)\){_B}: min={_V}, max={_V}, per={_B}{_D}%{_B}, avg={_V}, stdev={_V}"
    rf"(?:, samples={_B}([0-9]+){_B})?\n"
)
_IOPS_LINE = re.compile(rf"{_B}iops{_B}: min={_V}, max={_V}, avg={_V}, stdev={_V}(?:, samples={_B}([0-9]+){_B})?\n")
_LAT_KEYS = {k: (f"{k}_min_ns", f"{k}_max_ns", f"{k}_mean_ns", f"{k}_stdev_ns") for k in ("slat", "clat", "lat")}
_SI_EXPECTED = "a number with an optional k/M suffix"
_E = r"([0-9]+)=([0-9]+\.?[0-9]*)%"  # one IO depth entry
_DEPTHS = rf", {_E}" * 5 + rf", >={_E}{_B}\n"
# the latency distribution lines
_BUCKET_ENTRY = r"(?:>=)?[0-9]+=[0-9]+\.?[0-9]*%"  # as _BUCKET's, its number as number() reads it
_DIST = re.compile(rf"(?:{_B}lat \([num]sec\){_B}: {_BUCKET_ENTRY}(?:, {_BUCKET_ENTRY})*{_B}\n)*")
# the fsync/fdatasync section of a job (as _SYNC_HEAD and _LAT_FAST): the latency line (groups 0-6) and
# percentile block (groups 7-8)
_SYNC = re.compile(
    rf"{_B}fsync/[a-z_/]+:{_B}\n"
    rf"(?:{_B}sync ?\(([num]sec)\): min={_B}{_U}([kKMGTPE]?){_B}, max={_B}{_U}([kKMGTPE]?){_B}, "
    rf"avg={_V}, stdev={_V}\n)?"
    rf"(?:{_B}sync percentiles \(([num]sec)\){_B}:{_B}\n({_PCT_LINES}))?"
)
_JOB_WIDE = re.compile(
    # cpu (as _CPU_FAST): groups 0-4
    rf"{_B}cpu{_B}: usr={_U}%, sys={_U}%, ctx=([0-9]+), majf=([0-9]+), minf=([0-9]+){_B}\n"
    # IO depths, submit, complete (as _DEPTHS_FAST): groups 5-18, 19-32, 33-46
    rf"{_B}IO depths{_B}: {_E}{_DEPTHS}{_B}submit{_B}: {_E}{_DEPTHS}{_B}complete{_B}: {_E}{_DEPTHS}"
    # issued: fio 3.4+'s form (groups 47-58), or another one for the general reader (group 59)
    rf"(?:{_B}issued rwts: total=([0-9]+),([0-9]+),([0-9]+),([0-9]+) short=([0-9]+),([0-9]+),([0-9]+),([0-9]+) "
    rf"dropped=([0-9]+),([0-9]+),([0-9]+),([0-9]+){_B}|({_B}issued(?: rwts?| r/w(?:/d)?)?{_B}:[^\n]*))\n"
)
# lines that the general way passes over (_KNOWN_SKIPPED), without a '(' (a job header's '(groupid=' is not one)
_DESCRIPTION = re.compile(rf"{_B}Description{_B}: [^\n(]*\n")
_PASSED = re.compile(rf"(?:{_B}(?:errors|latency){_B}: [^\n(]*\n)*")


# a direction section: the groups of its direction line, of its latency lines, of its percentile blocks, bw and iops
# lines, and its per-priority lines (the number of latency lines, the text of the percentile blocks)
Section = tuple[tuple, list[tuple], list[tuple], tuple | None, tuple | None, tuple[int, list[str]]]


class BlockFast(JobBlock):
    """The whole-block reader: ``block_fast`` after a job header."""

    text: str | None = None  # the whole text when its lines are exactly its '\n'-separated parts (else None)
    at_pos = 0  # a place in the text at a line start ...
    at_ln = 0  # ... and the number of lines before it
    skip = 0  # lines of the block read here, for the line loop to pass over
    blocks = 0  # job blocks met and, of them, read here whole
    blocks_fast = 0

    def block_fast(self, ln: int, s: str) -> None:
        """After the header line ``ln`` (text ``s``): the rest of its block at once, if in the usual form."""
        self.blocks += 1
        text = self.text
        if text is None:
            return
        pos = text.find(s, self.at_pos)
        if pos < 0:
            return
        self.at_ln += text.count("\n", self.at_pos, pos)
        self.at_pos = pos
        if self.at_ln != ln - 1 or (pos and text[pos - 1] != "\n"):
            return  # (not this line: an equal text before it)
        pos += len(s) + 1
        first = ln  # the line before the first section
        description = _DESCRIPTION.match(text, pos)
        if description is not None:
            pos, first = description.end(), ln + 1
        sections = []
        m = _DIR.match(text, pos)
        while m:
            section, pos = _section(text, m)
            sections.append(section)
            m = _DIR.match(text, pos)
        dist = _DIST.match(text, pos)
        assert dist is not None  # (it matches nothing, if nothing else)
        sync = _SYNC.match(text, dist.end())
        wide = _JOB_WIDE.match(text, dist.end() if sync is None else sync.end())
        if wide is None:
            return
        passed = _PASSED.match(text, wide.end())
        assert passed is not None  # (it matches nothing, if nothing else)
        self.target_depth(passed[0])
        last = first
        for section in sections:
            last = self.section(last, section)
        last = self.lat_dists(last, dist[0])
        if sync is not None:
            last = self.sync_section(last + 1, sync.groups())
        last = self.job_wide(last, wide.groups())
        for i, line in enumerate(passed[0].splitlines(), start=last + 1):
            self.damaged_target(i, line)
        last += passed[0].count("\n")
        self.at_pos, self.at_ln = passed.end(), last
        self.jstate["last"] = last
        self.res = None
        self.skip = last - ln
        self.blocks_fast += 1

    def section(self, ln: int, parts: Section) -> int:
        """The rows of one direction section (``_section``'s parts) after line ``ln``; its last line."""
        ln += 1
        g = parts[0]
        if g[0] is None:  # fio 2.x
            return self.section2(ln, parts)
        row = self.new_result(ln, g[0])
        row["iops"] = _r(self.conv(ln, units.si_number, g[1].strip(), _SI_EXPECTED))
        row["runtime_ns"] = _r(int(g[5]) * 1e6)
        bw = g[2]
        row["bw_bytes_per_s"] = self.measured_bw(ln, self.pair(ln, bw, g[3]), (bw, g[3]), g[4], int(g[5]), False)
        row["io_bytes"] = self.size(ln, g[4])
        if _SI_UNIT.search(bw):
            self.jstate["kb_base"] = 1000
        elif _IEC_UNIT.search(bw):
            self.jstate["kb_base"] = 1024
        return self.section_lines(ln, row, parts)

    def section2(self, ln: int, parts: Section) -> int:
        """A fio 2.x direction section (its line ``ln``, as direction() reads it); its last line."""
        g = parts[0]
        row = self.new_result(ln, g[6])
        row["iops"] = _r(self.conv(ln, units.si_number, g[9].strip(), _SI_EXPECTED))
        row["runtime_ns"] = _r(int(g[10]) * 1e6)
        self.jstate["legacy"] = True
        row["bw_bytes_per_s"] = self.measured_bw(ln, self.size(ln, g[8], legacy=True), (g[8],), g[7], int(g[10]), True)
        row["io_bytes"] = self.size(ln, g[7], legacy=True)
        return self.section_lines(ln, row, parts)

    def section_lines(self, ln: int, row: dict, parts: Section) -> int:
        """The lines of a direction section after its direction line ``ln`` (``_section``'s parts); its last line."""
        _g, lats, pcts, bw, iops, (prio_lats, prio_pcts) = parts
        for lat in lats:
            ln += 1
            self.lat_values(row, lat[0], lat[1:])
        if prio_lats and not self.prio_warned:  # (as lat_stat)
            self.prio_warned = True
            self.p.warnings.append(
                f"line {ln + 1}: per-priority latency lines and percentiles (cmdprio) are not stored"
            )
        ln += prio_lats
        for kind, unit, block in pcts:
            ln = self.percentiles(ln + 1, row, kind, _TIME[unit], block)
        for block in prio_pcts:
            ln += block.count("\n")
        if bw is not None:
            ln += 1
            _bw_values(row, self.bw_factor(ln, bw[0].replace(" ", "")), bw[1:])
        if iops is not None:
            ln += 1
            row["iops_min"], row["iops_max"], row["iops_mean"], row["iops_stdev"] = map(float, iops[:4])
            if iops[4]:
                row["iops_samples"] = int(iops[4])
        row["line_end"] = ln
        return ln

    @staticmethod
    def lat_values(row: dict, kind: str, g: tuple) -> None:
        """A latency line's values (unit, min, its suffix, max, its suffix, avg, stdev: as _LAT_FAST's) into ``row``."""
        unit, mn, mn_sfx, mx, mx_sfx, avg, stdev = g
        factor = _TIME[unit]
        k_min, k_max, k_mean, k_stdev = _LAT_KEYS[kind]
        # round(x, 6) of a float is _r(x)
        row[k_min] = round(float(mn) * _SI[mn_sfx] * factor, 6)
        row[k_max] = round(float(mx) * _SI[mx_sfx] * factor, 6)
        row[k_mean] = round(float(avg) * factor, 6)
        row[k_stdev] = round(float(stdev) * factor, 6)

    def percentiles(self, title: int, row: dict, kind: str, factor: float, block: str) -> int:
        """The rows of a percentile block (``block``: its lines after the title line ``title``, each of four
        entries, or three, but the last, as _PCT_LINES matched them); its last line."""
        assert self.job is not None  # (inside a job block)
        job, direction = self.job["job_index"], row["direction"]
        # '|  1.00th=[   52],  5.00th=[ 1234],' -> '1.00', '52', '5.00', '1234': percentile, value, ...
        cells = block.replace("th=[", " ").replace("],", " ").replace("]", " ").replace("|", " ").split()
        lines = []  # the line of each entry
        for i, line in enumerate(block.split("\n")[:-1], title + 1):
            lines += [i] * line.count("th=[")
        values = cells[1::2]
        n = len(values)
        if max(map(len, values)) < 10:  # below 10**9 the product is exact, nothing for _r to round (as pct_rows)
            latency = [v * factor for v in map(int, values)]
        else:
            latency = [int(v) * factor if len(v) < 10 else _r(int(v) * factor) for v in values]
        self.p.tuples("fio_percentiles", _PCT_COLUMNS).extend(
            zip([job] * n, [direction] * n, [kind] * n, map(float, cells[0::2]), latency, lines, lines, strict=True)
        )
        return title + block.count("\n")

    def job_wide(self, ln: int, w: tuple) -> int:
        """The job-wide lines (``_JOB_WIDE``'s groups ``w``) after line ``ln``; their last line."""
        assert self.job is not None  # (inside a job block)
        ln += 1
        self.job.update(cpu_usr_pct=float(w[0]), cpu_sys_pct=float(w[1]), ctx=int(w[2]), majf=int(w[3]), minf=int(w[4]))
        job = self.job["job_index"]
        rows = self.p.tuples("fio_iodepths", _DEPTH_COLUMNS)
        for kind, lo in (("depth", 5), ("submit", 19), ("complete", 33)):
            ln += 1
            g = w[lo : lo + 14]  # (bucket, percentage) * 7, as _DEPTH_FAST's: float() reads them as number() does
            keys = (*g[0:12:2], ">=" + g[12])
            rows.extend([(job, kind, key, float(pct), ln, ln) for key, pct in zip(keys, g[1:14:2], strict=True)])
        ln += 1
        if w[47] is not None:
            n = [int(c) for c in w[47:59]]
            self.jstate["issued"] = (n[0:4], n[4:8], n[8:12])
        else:
            self.issued(ln, w[59])
        return ln

    def lat_dists(self, ln: int, lines: str) -> int:
        """The latency distribution ``lines`` (as _DIST matched them) after line ``ln``; their last line."""
        assert self.job is not None  # (inside a job block)
        if not lines:
            return ln  # (no table made: as the general way, which makes it at its first line)
        job = self.job["job_index"]
        rows = self.p.tuples("fio_latency_buckets", _BUCKET_COLUMNS)
        bases: dict[str, float] = {}
        for line in lines.split("\n")[:-1]:
            ln += 1
            unit = line[line.index("(") + 1 :][:4]  # 'lat (usec)'
            factor = _TIME[unit]
            base_lo = bases.get(unit)
            if base_lo is None:
                base_lo = bases[unit] = self.dist_base(unit)
            edges = _BUCKET_EDGES.get
            for ge, key, pct in _BUCKET.findall(line):
                lo, hi = edges((ge, key, factor, base_lo)) or _bucket_edges(ge, key, factor, base_lo)
                rows.append((job, lo, hi, float(pct), ln, ln))
        return ln

    def sync_section(self, ln: int, g: tuple) -> int:
        """The fsync/fdatasync section (its head line ``ln``, ``_SYNC``'s groups ``g``); its last line."""
        row = self.new_result(ln, "sync")
        if g[0] is not None:
            ln += 1
            self.lat_values(row, "lat", g[0:7])
        if g[7] is not None:
            ln = self.percentiles(ln + 1, row, "lat", _TIME[g[7]], g[8])
        row["line_end"] = ln
        return ln


def _section(text: str, m: re.Match) -> tuple[Section, int]:
    """The lines of the direction section whose direction line ``m`` matched, in their usual order: (its groups,
    those of up to three latency lines, of up to three percentile blocks, a bw line, an iops line, and the
    per-priority latency lines and percentile blocks after the direction's own), and where it ends."""
    lats, pos = _repeated(_LAT_LINE, text, m.end())
    prio_lats, pos = _repeated(_PRIO_LAT, text, pos, _PRIO_MAX)
    pcts, pos = _repeated(_PCT_BLOCK, text, pos)
    prio_pcts: list[str] = []
    while len(prio_pcts) < _PRIO_MAX and (prio := _PRIO_PCT.match(text, pos)) is not None:
        prio_pcts.append(prio[0])
        pos = prio.end()
    bw = _BW_LINE.match(text, pos)
    pos = pos if bw is None else bw.end()
    iops = _IOPS_LINE.match(text, pos)
    pos = pos if iops is None else iops.end()
    return (
        m.groups(),
        lats,
        pcts,
        None if bw is None else bw.groups(),
        None if iops is None else iops.groups(),
        (len(prio_lats), prio_pcts),
    ), pos


_PRIO_MAX = 16  # per-priority lines or blocks of one kind in a section (more: declined)


def _repeated(rx: re.Pattern, text: str, pos: int, most: int = 3) -> tuple[list[tuple], int]:
    """The groups of up to ``most`` matches of ``rx`` one after the other from ``pos``, and where they end."""
    found = []
    for _ in range(most):
        m = rx.match(text, pos)
        if m is None:
            break
        found.append(m.groups())
        pos = m.end()
    return found, pos

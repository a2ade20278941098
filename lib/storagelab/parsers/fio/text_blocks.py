"""fio normal text: the lines of a job block (direction sections, latency, percentiles, bw, iops, latency
distribution, cpu, IO depths, issued), each read the general way and, in its usual form, by a fast path."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ... import units
from ...units import SI_FACTORS as _SI
from ...units import TIME_NS_FACTORS as _TIME
from .text_shapes import (
    _BLOCK_LIFETIME,
    _BUCKET,
    _BUCKET_COLUMNS,
    _BUCKETS,
    _BW,
    _BW_FAST,
    _COMMA_SLASH,
    _CPU,
    _CPU_FAST,
    _DEPTH,
    _DEPTH_COLUMNS,
    _DEPTH_KINDS,
    _DEPTHS_FAST,
    _DIR2,
    _DIR3,
    _DIR_CUE,
    _IEC_UNIT,
    _IOPS,
    _IOPS_FAST,
    _ISSUED,
    _ISSUED_COUNTS,
    _ISSUED_CUE,
    _ISSUED_FAST,
    _ISSUED_PART,
    _ISSUED_RWD,
    _KNOWN_SKIPPED,
    _LAT,
    _LAT_CUE,
    _LAT_FAST,
    _LATDIST,
    _LATDIST_FAST,
    _PCT_COLUMNS,
    _PCT_ENTRY,
    _PCT_FAST,
    _PCT_LINE,
    _PCT_TITLE,
    _SI_UNIT,
    _SYNC_HEAD,
    _TARGET_DEPTH,
    _TARGET_NONE,
)
from .text_state import _BUCKET_EDGES, _CACHE_MAX, _EDGES, _NUMBERS, TextState, _r


def _bw_values(row: dict, factor: float, texts: tuple) -> None:
    """A bw line's values in its usual form (min, max, per, avg, stdev, samples: texts of numbers) into ``row``."""
    mn, mx, per, avg, stdev, samples = texts
    row["bw_min_bytes_per_s"] = _r(float(mn) * factor)
    row["bw_max_bytes_per_s"] = _r(float(mx) * factor)
    row["bw_mean_bytes_per_s"] = _r(float(avg) * factor)
    row["bw_stdev_bytes_per_s"] = _r(float(stdev) * factor)
    row["bw_agg_pct"] = float(per)
    if samples:
        row["bw_samples"] = int(samples)


def _bucket_edges(ge: str, key: str, factor: float, base_lo: float) -> tuple[float, float | None]:
    """The (lower, upper) edges in ns of the latency distribution bucket ``key`` (``ge``: '>=' or '') of a line
    in a unit of ``factor`` ns whose first bucket starts at ``base_lo``."""
    k = int(key)
    if ge:
        lo, hi = k * factor, None
    else:
        lower = [e for e in _EDGES if e < k]
        lo, hi = (lower[-1] * factor if lower else base_lo), k * factor
    edges = _r(lo), None if hi is None else _r(hi)
    if len(_BUCKET_EDGES) < _CACHE_MAX:
        _BUCKET_EDGES[(ge, key, factor, base_lo)] = edges
    return edges


class JobBlock(TextState):
    """The readers of a job block's lines."""

    def target_depth(self, text: str) -> None:
        """The job's iodepth from fio's latency target line (``_TARGET_DEPTH``) where nothing printed it before."""
        job = self.job
        m = _TARGET_DEPTH.search(text) if job is not None and job.get("iodepth") is None else None
        if job is not None and m:
            job["iodepth"] = int(m["depth"])

    def damaged_target(self, ln: int, s: str) -> None:
        """A warning for a latency target line with no target whose depth cannot be read (``depth=8x``) in a job
        whose iodepth nothing else printed: the job's iodepth stays unknown (reliability-34 input, Medium 3: it was
        left NULL with no word)."""
        job = self.job
        if job is not None and job.get("iodepth") is None and _TARGET_NONE.match(s) and not _TARGET_DEPTH.search(s):
            self.p.warnings.append(
                f"line {ln}: fio's latency target line has no readable depth, so the job's iodepth is not known: "
                f"{s.strip()[:80]!r}"
            )

    def job_line(self, ln: int, s: str, c: str) -> None:
        """``c``: the first non-blank character of the line."""
        assert self.job is not None  # (inside a job block)
        if c in "rwtm" and _DIR_CUE.match(s):
            return self.direction(ln, s)
        if c == "f" and _SYNC_HEAD.match(s):
            self.new_result(ln, "sync")
            return
        if "min=" in s and _LAT_CUE.match(s):
            return self.lat_stat(ln, s)
        m = " percentiles (" in s and _PCT_TITLE.match(s)
        if m:
            return self.open_pct(ln, m)
        if c == "b" and _BW.match(s):
            return self.bw(ln, s)
        if c == "i" and _IOPS.match(s):
            return self.iops(ln, s)
        self.res = None  # the rest are job-wide lines
        m = c == "l" and _LATDIST.match(s)
        if m:
            return self.lat_dist(ln, m)
        m = c == "c" and _CPU.match(s)
        if m:
            f = self.fields(
                ln, m["rest"], ("usr", "sys", "ctx", "majf", "minf"), "'cpu : usr=N%, sys=N%, ctx=N, majf=N, minf=N'"
            )
            exp = "a number"
            self.job.update(
                cpu_usr_pct=self.number(ln, f["usr"], exp),
                cpu_sys_pct=self.number(ln, f["sys"], exp),
                ctx=self.integer(ln, f["ctx"], exp),
                majf=self.integer(ln, f["majf"], exp),
                minf=self.integer(ln, f["minf"], exp),
            )
            return
        m = c in "Isc" and _DEPTH.match(s)
        if m:
            return self.depths(ln, m)
        if c == "i" and _ISSUED_CUE.match(s):
            return self.issued(ln, s)
        if c == "b" and _BLOCK_LIFETIME.match(s):
            self.lifetime = True
            return
        if c in "Dels" and _KNOWN_SKIPPED.match(s):
            self.target_depth(s)
            self.damaged_target(ln, s)
            return
        self.p.warnings.append(
            f"line {ln}: unknown line in the job block of {self.job['jobname']!r}: {s.strip()[:80]!r}"
        )

    def job_line_fast(self, ln: int, s: str, c: str) -> bool:
        """The usual lines of a job block, each read by one regular expression that a first character picks
        (``_FAST_LINES``); False: not one of them, the general way reads the line."""
        for rx, read in _FAST_LINES.get(c, ()):
            m = rx.match(s)
            if m:
                read(self, ln, m)
                return True
        return False

    def direction(self, ln: int, s: str, m3: re.Match | None = None) -> None:
        """``m3``: the line's ``_DIR3`` match when the fast path made it."""
        m3 = m3 or _DIR3.match(s)
        m2 = None if m3 else _DIR2.match(s)
        if not (m3 or m2):
            self.fail(
                ln,
                "malformed direction line",
                "'read: IOPS=N, BW=N (N)(SIZE/Nmsec)' or 2.x 'read : io=N, bw=N, iops=N, runt=Nmsec'",
            )
        m = m3 or m2
        assert m is not None  # (fail() raised)
        row = self.new_result(ln, m["dir"])
        expected = "a number with an optional k/M suffix"
        row["iops"] = _r(self.conv(ln, units.si_number, m["iops"].strip(), expected))
        row["runtime_ns"] = _r(int(m["runt"]) * 1e6)
        if m3:
            if m["tail"] and not m["tail"].startswith(";"):
                self.fail(ln, "unexpected text after the direction line", "'; N zone resets' or nothing")
            bw = self.pair(ln, m["bw"], m["bw2"])
            row["bw_bytes_per_s"] = self.measured_bw(ln, bw, (m["bw"], m["bw2"]), m["io"], int(m["runt"]), False)
            row["io_bytes"] = self.size(ln, m["io"])
            if _SI_UNIT.search(m["bw"]):
                self.jstate["kb_base"] = 1000
            elif _IEC_UNIT.search(m["bw"]):
                self.jstate["kb_base"] = 1024
        else:
            self.jstate["legacy"] = True
            bw = self.size(ln, m["bw"], legacy=True)
            row["bw_bytes_per_s"] = self.measured_bw(ln, bw, (m["bw"],), m["io"], int(m["runt"]), True)
            row["io_bytes"] = self.size(ln, m["io"], legacy=True)

    def lat_fast(self, ln: int, m: re.Match) -> None:
        """A latency line in its usual form (``_LAT_FAST``)."""
        label, unit, mn, mn_sfx, mx, mx_sfx, avg, stdev = m.groups()
        factor = _TIME[unit]
        values = (
            _r(float(mn) * _SI[mn_sfx] * factor),
            _r(float(mx) * _SI[mx_sfx] * factor),
            _r(float(avg) * factor),
            _r(float(stdev) * factor),
        )
        row = self.touch(ln)
        if row is None:
            self.fail(ln, "latency line outside a direction section", "a 'read:'/'write:' line before it")
        kind = "lat" if label == "sync" else label
        (row[f"{kind}_min_ns"], row[f"{kind}_max_ns"], row[f"{kind}_mean_ns"], row[f"{kind}_stdev_ns"]) = values

    def lat_stat(self, ln: int, s: str) -> None:
        m = _LAT.match(s)
        assert m is not None  # (job_line's _LAT_CUE matched)
        label = " ".join(m["label"].split())
        if label in ("slat", "clat", "lat", "sync"):
            kind = "lat" if label == "sync" else label
        elif "prio" in label:
            kind = None
            if not self.prio_warned:
                self.prio_warned = True
                self.p.warnings.append(
                    f"line {ln}: per-priority latency lines and percentiles (cmdprio) are not stored"
                )
        else:
            self.p.warnings.append(f"line {ln}: unknown latency line {label!r}")
            kind = None
        f = self.fields(
            ln, m["rest"], ("min", "max", "avg", "stdev"), f"'{label} ({m['unit']}): min=N, max=N, avg=N, stdev=N'"
        )
        factor = _TIME[m["unit"]]
        si = "a number with an optional k/M suffix"
        values = {
            "min": _r(self.conv(ln, units.si_number, f["min"], si) * factor),
            "max": _r(self.conv(ln, units.si_number, f["max"], si) * factor),
            "mean": _r(self.number(ln, f["avg"], "a decimal number") * factor),
            "stdev": _r(self.number(ln, f["stdev"], "a decimal number") * factor),
        }
        row = self.touch(ln)
        if kind is None:
            return
        if row is None:
            self.fail(ln, "latency line outside a direction section", "a 'read:'/'write:' line before it")
        for k, v in values.items():
            row[f"{kind}_{k}_ns"] = v

    def open_pct(self, ln: int, m: re.Match) -> None:
        pre = " ".join(m["pre"].split())
        kind = {"clat": "clat", "lat": "lat", "slat": "slat", "sync": "lat"}.get(pre)
        if kind is None and "prio" not in pre:
            self.p.warnings.append(f"line {ln}: percentiles of unknown kind {pre!r} not stored")
        row = self.touch(ln)
        if row is None:
            self.fail(ln, "percentile block outside a direction section", "a 'read:'/'write:' line before it")
        self.pct = {"kind": kind, "factor": _TIME[m["unit"]], "row": row, "open": True, "start": ln}

    def pct_line(self, ln: int, s: str) -> None:
        pct = self.pct
        assert pct is not None
        m = self.fast and pct["open"] and _PCT_FAST.match(s)
        if m:  # a full line of four entries
            g = m.groups()
            pct["open"] = g[8] == ","
            self.touch(ln)
            if pct["kind"] is not None:
                self.pct_rows(ln, pct, zip(g[0:8:2], g[1:8:2], strict=True))
            return
        if not pct["open"] or not _PCT_LINE.match(s):
            self.fail(
                ln,
                "malformed percentile line" if pct["open"] else "percentile line after the last one",
                "'| 1.00th=[   32],  5.00th=[   44], ...' (the last line without a trailing comma)",
            )
        pct["open"] = s.rstrip().endswith(",")
        self.touch(ln)
        if pct["kind"] is not None:
            self.pct_rows(ln, pct, _PCT_ENTRY.findall(s))

    def pct_rows(self, ln: int, pct: dict, entries: Iterable[tuple[str, str]]) -> None:
        """The rows of one percentile line's (percentile, value) texts."""
        assert self.job is not None  # (inside a job block)
        job, direction, kind, factor = self.job["job_index"], pct["row"]["direction"], pct["kind"], pct["factor"]
        rows = self.p.tuples("fio_percentiles", _PCT_COLUMNS)
        for p, v in entries:
            percentile = _NUMBERS.get(p)
            if percentile is None:
                percentile = self.number(ln, p, "a percentile like 99.90")
            # below 10**9 the product is a whole number under 2**53: exact, nothing for _r to round
            latency = int(v) * factor if len(v) < 10 else _r(int(v) * factor)
            rows.append((job, direction, kind, percentile, latency, ln, ln))

    def end_pct(self, ln: int | None) -> None:
        pct, self.pct = self.pct, None
        assert pct is not None
        if pct["open"]:
            where = ln if ln is not None else self.last
            self.fail(
                where,
                f"percentile block of line {pct['start']} is incomplete",
                "more '| NN.NNth=[V]' entries (the list ends without a trailing comma)",
            )

    def bw_fast(self, ln: int, m: re.Match) -> None:
        """A bw line in its usual form (``_BW_FAST``)."""
        factor = self.bw_factor(ln, m[1].replace(" ", ""))
        row = self.touch(ln)
        if row is None:
            self.fail(ln, "bw line outside a direction section", "a 'read:'/'write:' line before it")
        _bw_values(row, factor, m.groups()[1:])

    def bw(self, ln: int, s: str) -> None:
        m = _BW.match(s)
        assert m is not None  # (job_line's _BW matched)
        factor = self.bw_factor(ln, m["label"].replace(" ", ""))
        f = self.fields(
            ln,
            m["rest"],
            ("min", "max", "avg", "stdev"),
            "'bw (  KiB/s): min=N, max=N, per=N%, avg=N, stdev=N[, samples=N]'",
        )
        row = self.touch(ln)
        if row is None:
            self.fail(ln, "bw line outside a direction section", "a 'read:'/'write:' line before it")
        n = "a number"
        row.update(
            bw_min_bytes_per_s=_r(self.number(ln, f["min"], n) * factor),
            bw_max_bytes_per_s=_r(self.number(ln, f["max"], n) * factor),
            bw_mean_bytes_per_s=_r(self.number(ln, f["avg"], n) * factor),
            bw_stdev_bytes_per_s=_r(self.number(ln, f["stdev"], n) * factor),
        )
        if f.get("per"):
            row["bw_agg_pct"] = self.number(ln, f["per"], "a percentage")
        if f.get("samples"):
            row["bw_samples"] = self.integer(ln, f["samples"], "a sample count")

    def iops_fast(self, ln: int, m: re.Match) -> None:
        """An iops line in its usual form (``_IOPS_FAST``)."""
        mn, mx, avg, stdev, samples = m.groups()
        row = self.touch(ln)
        if row is None:
            self.fail(ln, "iops line outside a direction section", "a 'read:'/'write:' line before it")
        row["iops_min"], row["iops_max"], row["iops_mean"], row["iops_stdev"] = (
            float(mn),
            float(mx),
            float(avg),
            float(stdev),
        )
        if samples:
            row["iops_samples"] = int(samples)

    def iops(self, ln: int, s: str) -> None:
        m = _IOPS.match(s)
        assert m is not None  # (job_line's _IOPS matched)
        f = self.fields(
            ln,
            m["rest"],
            ("min", "max", "avg", "stdev"),
            "'iops : min=N, max=N, avg=N, stdev=N[, samples=N]'",
        )
        row = self.touch(ln)
        if row is None:
            self.fail(ln, "iops line outside a direction section", "a 'read:'/'write:' line before it")
        n = "a number"
        row.update(
            iops_min=self.number(ln, f["min"], n),
            iops_max=self.number(ln, f["max"], n),
            iops_mean=self.number(ln, f["avg"], n),
            iops_stdev=self.number(ln, f["stdev"], n),
        )
        if f.get("samples"):
            row["iops_samples"] = self.integer(ln, f["samples"], "a sample count")

    def dist_base(self, unit: str) -> float:
        """The lower edge (ns) of the first latency distribution bucket of ``unit``: see the module doc of text.py."""
        ns_era = self.version >= (2, 99) if self.version else not self.jstate["legacy"]
        return {"nsec": 0.0, "usec": 1e3 if ns_era else 0.0, "msec": 1e6}[unit]

    def lat_dist(self, ln: int, m: re.Match) -> None:
        assert self.job is not None  # (inside a job block)
        if not _BUCKETS.match(m["rest"]):
            self.fail(ln, "malformed latency distribution line", "'lat (usec) : 2=1.81%, 4=6.08%, ...'")
        unit = m["unit"]
        factor, base_lo = _TIME[unit], self.dist_base(unit)
        job = self.job["job_index"]
        rows = self.p.tuples("fio_latency_buckets", _BUCKET_COLUMNS)
        for ge, key, pct in _BUCKET.findall(m["rest"]):
            edges = _BUCKET_EDGES.get((ge, key, factor, base_lo)) or _bucket_edges(ge, key, factor, base_lo)
            value = _NUMBERS.get(pct)
            if value is None:
                value = self.number(ln, pct, "a percentage")
            rows.append((job, edges[0], edges[1], value, ln, ln))

    def lat_dist_fast(self, ln: int, m: re.Match) -> None:
        self.res = None
        self.lat_dist(ln, m)

    def depths(self, ln: int, m: re.Match) -> None:
        if not _BUCKETS.match(m["rest"]):
            self.fail(ln, "malformed IO depth line", "'IO depths : 1=0.1%, 2=0.1%, ..., >=64=0.0%'")
        kind = _DEPTH_KINDS[m["kind"]]
        self.depth_rows(ln, kind, ((ge + key, pct) for ge, key, pct in _BUCKET.findall(m["rest"])))

    def depths_fast(self, ln: int, m: re.Match) -> None:
        """An IO depths, submit or complete line in fio 3.x's usual form (``_DEPTHS_FAST``)."""
        self.res = None
        g = m.groups()
        keys = (*g[1:13:2], ">=" + g[13])
        self.depth_rows(ln, _DEPTH_KINDS[g[0]], zip(keys, g[2:15:2], strict=True))

    def depth_rows(self, ln: int, kind: str, entries: Iterable[tuple[str, str]]) -> None:
        """The rows of one IO depth line's (bucket, percentage) texts."""
        assert self.job is not None  # (inside a job block)
        job = self.job["job_index"]
        rows = self.p.tuples("fio_iodepths", _DEPTH_COLUMNS)
        for key, pct in entries:
            value = _NUMBERS.get(pct)
            if value is None:
                value = self.number(ln, pct, "a percentage")
            rows.append((job, kind, key, value, ln, ln))

    def cpu_fast(self, ln: int, m: re.Match) -> None:
        """A cpu line in its usual form (``_CPU_FAST``)."""
        assert self.job is not None  # (inside a job block)
        self.res = None
        usr, sys, ctx, majf, minf = m.groups()
        self.job.update(cpu_usr_pct=float(usr), cpu_sys_pct=float(sys), ctx=int(ctx), majf=int(majf), minf=int(minf))

    def issued_fast(self, ln: int, m: re.Match) -> None:
        """An issued line in fio 3.4+'s form (``_ISSUED_FAST``)."""
        self.res = None
        n = [int(c) for c in m.groups()]
        self.jstate["issued"] = (n[0:4], n[4:8], n[8:12])

    def issued(self, ln: int, s: str) -> None:
        expected = (
            "'issued rwts: total=R,W,T,S short=R,W,T,0 dropped=R,W,T,0' (or an older form: "
            "'total=R,W,T, short=...', 'total=r=R/w=W/d=T, short=...', 'issued r/w/d: total=R/W/T, ...')"
        )
        m = _ISSUED.match(s)
        parts: dict[str, list[int | None]] = {}
        if m:
            for key, value in _ISSUED_PART.findall(m["body"]):
                if "r=" in value:
                    rwd = _ISSUED_RWD.fullmatch(value)
                    cells = [c for c in rwd.groups() if c is not None] if rwd else None
                else:
                    cells = _COMMA_SLASH.split(value) if _ISSUED_COUNTS.fullmatch(value) else None
                if not cells:
                    self.fail(ln, f"cannot read issued counts {value!r}", expected)
                key = "drop" if key.startswith("drop") else key
                parts[key] = [*(int(c) for c in cells), *([None] * (4 - len(cells)))]
        if not m or "total" not in parts or _ISSUED_PART.sub("", m["body"]).strip():
            self.fail(ln, "malformed issued line", expected)
        none = [None] * 4
        self.jstate["issued"] = (parts["total"], parts.get("short", none), parts.get("drop", none))


def _direction_fast(tp: JobBlock, ln: int, m: re.Match) -> None:
    tp.direction(ln, m.string, m)


def _open_pct_fast(tp: JobBlock, ln: int, m: re.Match) -> None:
    tp.open_pct(ln, m)


# the fast paths of a job block's lines by their first non-blank character: (the line's usual form, its reader),
# tried in order; each form is one that the general way (job_line) reads the same
_LAT_READ = (_LAT_FAST, JobBlock.lat_fast)
_TITLE_READ = (_PCT_TITLE, _open_pct_fast)
_SUBMIT_READ = (_DEPTHS_FAST, JobBlock.depths_fast)
_FAST_LINES = {
    "c": (_LAT_READ, _TITLE_READ, _SUBMIT_READ, (_CPU_FAST, JobBlock.cpu_fast)),
    "l": (_LAT_READ, _TITLE_READ, (_LATDIST_FAST, JobBlock.lat_dist_fast)),
    "s": (_LAT_READ, _TITLE_READ, _SUBMIT_READ),
    "b": ((_BW_FAST, JobBlock.bw_fast),),
    "i": ((_IOPS_FAST, JobBlock.iops_fast), (_ISSUED_FAST, JobBlock.issued_fast)),
    "I": ((_DEPTHS_FAST, JobBlock.depths_fast),),
    **dict.fromkeys("rwtm", ((_DIR3, _direction_fast),)),
}

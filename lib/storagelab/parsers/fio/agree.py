"""Check a fio normal-text report against the JSON report of the same run.

A file written with ``--output-format=normal,json`` holds both. The JSON numbers are exact; the
text rounds them (fio stat.c / num2str, docs/formats/log-formats.md A.4-A.12). A number disagrees when the two
differ by more than the text's printed precision:

* sizes and bandwidths: one unit in the last printed digit of fio's num2str (4 significant
  digits, binary or decimal prefixes, whichever is coarser);
* IOPS: the same, decimal prefixes;
* latency min/max: one unit of the line's (nsec|usec|msec) unit, or the last digit of a 6-digit
  num2str; avg/stdev: half a unit in the 2nd decimal;
* percentiles: one unit of the block's unit (fio rounds up);
* percentages: half a unit in the last printed decimal (depths 0.1, latency buckets 0.01);
* counts, runtimes and ticks: exact.

Only numbers present on both sides are compared; records present on one side only are
reported too.
"""

from __future__ import annotations

import json as _json
import math
import re
from collections.abc import Callable, Iterator

from ..base import Parsed, Tuples
from .json import parse_json
from .text import parse_text

Rows = list[dict] | Tuples  # a table's rows as Parsed.rows gives them (Tuples read as dicts)


def check_text_against_json(text: str, parsed: Parsed) -> list[str]:
    """Parse the text part of ``text`` and append a warning to ``parsed.warnings`` for every
    disagreement with the JSON rows in ``parsed``; returns the disagreements."""
    found = disagreements(parse_text(text), parsed)  # a text part cut short is a ParseError of the file
    parsed.warnings.extend(found)
    return found


def compare_text_and_json(text: str) -> list[str]:
    """Parse both parts of a ``normal,json`` file and return their disagreements."""
    return disagreements(parse_text(text), parse_json(text))


def disagreements(text: Parsed, js: Parsed) -> list[str]:
    """Every number of the text report that the JSON report of the same run contradicts."""
    tjobs = _final(text.rows("fio_jobs"))
    jjobs = _final(js.rows("fio_jobs"))
    if len(tjobs) != len(jjobs):
        return [f"fio_jobs: text has {len(tjobs)} job records, JSON {len(jjobs)}"]
    pairs = _Pairs(text, js, tjobs, jjobs)
    _jobs(pairs.out, tjobs, jjobs)
    legacy = _version(js.tool_version) < (2, 99)  # 2.x printed usec or msec, never nsec
    _results(pairs, legacy)
    _percentiles_and_buckets(pairs, legacy)
    text_depths = {(pairs.jmap.get(r["job_index"]), r["kind"]) for r in text.rows("fio_iodepths")}
    for t, j, where in pairs.both(
        "fio_iodepths", ("job_index", "kind", "bucket"), missing_ok=lambda k: (k[0], k[1]) not in text_depths
    ):
        _cmp(pairs.out, where, "pct", t["pct"], j["pct"], 0.051)
    _groups_and_disks(pairs)
    return pairs.out


class _Pairs:
    """The rows of a table in both reports, paired by key (text job indexes mapped to the JSON's), and the
    disagreements found so far (``out``)."""

    def __init__(self, text: Parsed, js: Parsed, tjobs: list[dict], jjobs: list[dict]):
        self.text, self.js = text, js
        self.out: list[str] = []
        self.jmap = {t["job_index"]: j["job_index"] for t, j in zip(tjobs, jjobs, strict=True)}
        self.jinfo = {j["job_index"]: j for j in jjobs}

    def keyed(self, rows: Rows, key: tuple[str, ...], from_text: bool) -> dict:
        out_rows = {}
        for r in rows:
            if "job_index" in key and r["job_index"] not in (self.jmap if from_text else self.jinfo):
                continue  # a job of an earlier report (status-interval)
            k = tuple(_key(self.jmap[r[c]] if c == "job_index" and from_text else r[c]) for c in key)
            out_rows[k] = r
        return out_rows

    def both(
        self,
        table: str,
        key: tuple[str, ...],
        trows: Rows | None = None,
        jrows: Rows | None = None,
        missing_ok: Callable[[tuple], bool] = lambda k: False,
    ) -> Iterator[tuple[dict, dict, str]]:
        """(text row, JSON row, where) of each key in both; a key in one report only is a disagreement."""
        tkeyed = self.keyed(self.text.rows(table) if trows is None else trows, key, True)
        jkeyed = self.keyed(self.js.rows(table) if jrows is None else jrows, key, False)
        for k in sorted(set(tkeyed) | set(jkeyed), key=str):
            what = f"{table} {dict(zip(key, k, strict=True))}"
            if k not in tkeyed:
                if not missing_ok(k):
                    self.out.append(f"{what}: in the JSON report only")
            elif k not in jkeyed:
                if not missing_ok(k):
                    self.out.append(f"{what}: in the text report only (text line {tkeyed[k].get('line_start')})")
            else:
                yield tkeyed[k], jkeyed[k], f"{what} (text line {tkeyed[k].get('line_start')})"


_JOB_COLUMNS = (
    "jobname",
    "groupid",
    "jobs",
    "error",
    "ctx",
    "majf",
    "minf",
    "rw",
    "block_size_bytes",
    "ioengine",
    "iodepth",
)
_EXACT_RESULT_COLUMNS = (
    "runtime_ns",
    "total_ios",
    "short_ios",
    "dropped_ios",
    "bw_samples",
    "iops_samples",
    "iops_min",
    "iops_max",
)


def _jobs(out: list[str], tjobs: list[dict], jjobs: list[dict]) -> None:
    for t, j in zip(tjobs, jjobs, strict=True):
        where = f"fio_jobs job {j['job_index']} (text line {t.get('line_start')})"
        for col in _JOB_COLUMNS:
            _cmp(out, where, col, t.get(col), j.get(col), 0)
        for col in ("cpu_usr_pct", "cpu_sys_pct"):
            _cmp(out, where, col, t.get(col), j.get(col), 0.0051)


def _results(pairs: _Pairs, legacy: bool) -> None:
    out = pairs.out
    for t, j, where in pairs.both("fio_results", ("job_index", "direction")):
        kb_base = _kb_base(pairs.jinfo[j["job_index"]])
        for col in ("io_bytes", "bw_bytes_per_s"):
            _cmp(out, where, col, t.get(col), j.get(col), _size_tol(j.get(col)))
        _cmp(out, where, "iops", t.get("iops"), j.get("iops"), _num2str_ulp(j.get("iops"), 4, 1000))
        for col in _EXACT_RESULT_COLUMNS:
            _cmp(out, where, col, t.get(col), j.get(col), 0)
        for kind in ("slat", "clat", "lat"):
            _latency(out, where, kind, t, j, legacy)
        # bw (KiB/s) line: integers min/max, 2 decimals avg/stdev; MiB/s once the mean passes kb_base^2 KiB/s
        mean = j.get("bw_mean_bytes_per_s")
        bw_unit = kb_base * (kb_base if mean is not None and mean > kb_base**3 else 1)
        for col, tol in (("min", bw_unit), ("max", bw_unit), ("mean", 0.0051 * bw_unit), ("stdev", 0.0051 * bw_unit)):
            name = f"bw_{col}_bytes_per_s"
            _cmp(out, where, name, t.get(name), j.get(name), tol)
        agg = j.get("bw_agg_pct")
        _cmp(out, where, "bw_agg_pct", t.get("bw_agg_pct"), None if agg is None else min(agg, 100.0), 0.0051)
        for col in ("iops_mean", "iops_stdev"):
            _cmp(out, where, col, t.get(col), j.get(col), 0.0051)


def _latency(out: list[str], where: str, kind: str, t: dict, j: dict, legacy: bool) -> None:
    """A latency line (slat, clat, lat): min/max to its unit, avg/stdev to half a unit in the 2nd decimal."""
    unit = _lat_unit(j.get(f"{kind}_min_ns"), j.get(f"{kind}_max_ns"), j.get(f"{kind}_stdev_ns"), legacy)
    for col in ("min", "max"):
        v = j.get(f"{kind}_{col}_ns")
        tol = max(unit, _num2str_ulp(v / unit, 6, 1000) * unit) if v is not None else 0
        _cmp(out, where, f"{kind}_{col}_ns", t.get(f"{kind}_{col}_ns"), v, tol)
    for col in ("mean", "stdev"):
        _cmp(out, where, f"{kind}_{col}_ns", t.get(f"{kind}_{col}_ns"), j.get(f"{kind}_{col}_ns"), 0.0051 * unit)
    _cmp(out, where, f"{kind}_samples", t.get(f"{kind}_samples"), j.get(f"{kind}_samples"), 0)


def _percentiles_and_buckets(pairs: _Pairs, legacy: bool) -> None:
    out = pairs.out
    blocks: dict[tuple, list[float]] = {}
    for r in pairs.js.rows("fio_percentiles"):
        blocks.setdefault((r["job_index"], r["direction"], r["kind"]), []).append(r["latency_ns"])
    for t, j, where in pairs.both("fio_percentiles", ("job_index", "direction", "kind", "percentile")):
        unit = _percentile_unit(blocks[(j["job_index"], j["direction"], j["kind"])], legacy)
        _cmp(out, where, "latency_ns", t["latency_ns"], j["latency_ns"], unit)
    for t, j, where in pairs.both("fio_latency_buckets", ("job_index", "bucket_hi_ns")):
        _cmp(out, where, "bucket_lo_ns", t["bucket_lo_ns"], j["bucket_lo_ns"], 0)
        _cmp(out, where, "pct", t["pct"], j["pct"], 0.0051)


def _groups_and_disks(pairs: _Pairs) -> None:
    out = pairs.out
    for t, j, where in pairs.both(
        "fio_groups",
        ("groupid", "direction"),
        trows=_last_doc(pairs.text.rows("fio_groups")),
        jrows=_last_doc(pairs.js.rows("fio_groups")),
    ):
        for col in ("bw_bytes_per_s", "bw_min_bytes_per_s", "bw_max_bytes_per_s", "io_bytes"):
            _cmp(out, where, col, t.get(col), j.get(col), _size_tol(j.get(col)))
        for col in ("run_min_ns", "run_max_ns"):
            _cmp(out, where, col, t.get(col), j.get(col), 0)
    for t, j, where in pairs.both("fio_disk_stats", ("disk",)):
        for col, value in j.items():
            if col not in ("disk", "line_start", "line_end"):
                _cmp(out, where, col, t.get(col), value, 0.0051 if col.endswith("_pct") else 0)


def _last_doc(rows: Rows) -> list[dict]:
    last = max((r.get("doc_index") or 0 for r in rows), default=0)
    return [r for r in rows if (r.get("doc_index") or 0) == last]


def _final(jobs: Rows) -> list[dict]:
    final = [r for r in jobs if r.get("is_final")]
    return sorted(final or jobs, key=lambda r: r["job_index"])


def _key(value):
    return round(value, 6) if isinstance(value, float) else value


def _version(text: str | None) -> tuple[int, ...]:
    m = re.search(r"(\d+)\.(\d+)", text or "")
    return (int(m.group(1)), int(m.group(2))) if m else (99, 0)


def _kb_base(job: dict) -> int:
    try:
        return 1000 if _json.loads(job.get("options_json") or "{}").get("kb_base") == "1000" else 1024
    except ValueError:
        return 1024


def _cmp(out: list[str], where: str, col: str, text_value, json_value, tol: float) -> None:
    if text_value is None or json_value is None:
        return
    if (
        isinstance(json_value, (int, float))
        and not isinstance(json_value, bool)
        and isinstance(text_value, (int, float))
        and not isinstance(text_value, bool)
    ):
        if abs(float(text_value) - float(json_value)) <= tol * (1 + 1e-9) + 1e-9:
            return
        out.append(f"{where}: {col} text {text_value!r} vs JSON {json_value!r} (tolerance {tol:g})")
    elif text_value != json_value:
        out.append(f"{where}: {col} text {text_value!r} vs JSON {json_value!r}")


def _num2str_ulp(value: float | None, maxlen: int, base: int) -> float:
    """One unit in the last digit fio's num2str prints for ``value``: it divides by ``base`` until
    the integer part has at most ``maxlen`` digits, then fills the rest of maxlen with decimals."""
    if value is None or not math.isfinite(value) or value == 0:
        return 1.0
    p, scale = abs(value), 1.0
    while p >= 10**maxlen:
        p /= base
        scale *= base
    if scale == 1.0:
        return 1.0  # printed unscaled: an integer
    digits = len(str(int(p)))
    return 10.0 ** -max(0, maxlen - digits - 1) * scale


def _size_tol(value: float | None) -> float:
    """Tolerance of a size or bandwidth printed by num2str in either prefix family, or in bits."""
    if value is None:
        return 0.0
    return max(_num2str_ulp(value, 4, base) for base in (1000, 1024))


def _lat_unit(mn, mx, dev, legacy: bool) -> float:
    """The unit fio picks for a 'clat (usec): min=..' line (stat.h nsec_to_msec / nsec_to_usec)."""
    if mn is None or mx is None or dev is None:
        return 1e3 if legacy else 1.0
    if mn > 2e6 and mx > 99_999_999 and dev > 1e6:
        return 1e6
    if mn > 2000 and mx > 99_999 and dev > 1000:
        return 1e3
    return 1e3 if legacy else 1.0


def _percentile_unit(values: list[float], legacy: bool) -> float:
    """The unit of a percentile block (stat.c show_clat_percentiles): from its smallest and largest value."""
    mn, mx = min(values), max(values)
    if mn > 2e6 and mx > 99_999_999:
        return 1e6
    if mn > 2000 and mx > 99_999:
        return 1e3
    return 1e3 if legacy else 1.0

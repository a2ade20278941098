"""Notebook 04: what the ``zpool status -D`` DDT histogram measures beyond its summary line (issue 25).

From each pool's table (the same format as ``zdb -DD``): the dedup ratio measured on the pool (referenced DSIZE /
allocated DSIZE, Total row), the unique entries (refcnt 1: DDT entries that save nothing), and the histogram's
entry count (Total allocated blocks) checked against the summary line's ``DDT entries N``. A nicenum such as
``12.1K`` carries 3 significant digits, so the check allows the printed value's rounding.
"""

import polars as pl

from .db import frame

HISTOGRAM_SQL = """
SELECT z.file_id, f.path, f.sha256, z.report_no, z.pool AS pool_name, p.ddt_entries AS summary_entries,
       max(z.alloc_blocks) FILTER (WHERE z.is_total) AS entries,
       max(z.alloc_dsize_bytes) FILTER (WHERE z.is_total) AS alloc_dsize_bytes,
       max(z.ref_dsize_bytes) FILTER (WHERE z.is_total) AS ref_dsize_bytes,
       max(z.alloc_blocks) FILTER (WHERE z.refcnt_bucket = 1) AS unique_entries,
       bool_and(z.exact) AS exact, min(z.line_start) AS line_start, max(z.line_end) AS line_end
FROM zpool_status_ddt z JOIN files f USING (file_id)
LEFT JOIN zpool_status_pools p ON p.file_id = z.file_id AND p.report_no = z.report_no
WHERE {where} GROUP BY ALL ORDER BY f.path, z.report_no
"""


def nicenum_bounds(value: float, exact: bool) -> tuple[float, float]:
    """The interval a printed value stands for: itself when exact, else +-half a unit in its 3rd digit."""
    if exact or value == 0:
        return value, value
    step = 10 ** (len(str(int(abs(value) / 1024 ** _power(value)))) - 3) * 1024 ** _power(value)
    return value - step / 2, value + step / 2


def _power(value: float) -> int:
    p = 0
    while abs(value) >= 1024 ** (p + 1):
        p += 1
    return p


def measures(hist: pl.DataFrame) -> pl.DataFrame:
    """Per pool report: measured ratio, unique entries and their share, and the summary cross-check."""
    rows = []
    for r in hist.iter_rows(named=True):
        lo, hi = nicenum_bounds(r["entries"], r["exact"]) if r["entries"] is not None else (None, None)
        s = r["summary_entries"]
        rows.append(
            {
                **r,
                "ratio": r["ref_dsize_bytes"] / r["alloc_dsize_bytes"] if r["alloc_dsize_bytes"] else None,
                "unique_share": r["unique_entries"] / r["entries"] if r["entries"] and r["unique_entries"] else None,
                "summary_agrees": None if s is None or lo is None else bool(lo <= s <= hi),
            }
        )
    return pl.DataFrame(rows, infer_schema_length=None)


def query(con, sel) -> pl.DataFrame:
    where, params = sel.sql("f")
    return measures(frame(con, HISTOGRAM_SQL.format(where=where), params))


def _agree(r: dict) -> str:
    if r["summary_agrees"] is None:
        return "no summary line to check it against"
    if r["summary_agrees"]:
        return f"agreeing with the summary line's {r['summary_entries']:,} within the printed rounding"
    return f"NOT matching the summary line's {r['summary_entries']:,}: check that both came from one moment"


def sentences(m: pl.DataFrame) -> list[str]:
    """One finding per pool report with a histogram, computed from ``measures``."""
    out = []
    for r in m.iter_rows(named=True):
        if r["entries"] is None or r["ratio"] is None:
            out.append(
                f"Pool {r['pool_name']}, `zpool status -D` histogram: no Total row with DSIZE, nothing measured."
            )
            continue
        unique = (
            f"{r['unique_entries']:,.0f} entries ({r['unique_share']:.0%}) are referenced once: they cost DDT memory "
            "and save nothing"
            if r["unique_share"] is not None
            else "no refcnt-1 bucket"
        )
        out.append(
            f"Pool {r['pool_name']}, `zpool status -D` histogram: dedup ratio {r['ratio']:.2f}x measured on the pool "
            f"(referenced / allocated DSIZE); {unique}; {r['entries']:,.0f} entries in its Total, {_agree(r)}. "
            "It is one moment's table: it cannot say how the ratio or the unique share will change as data is written."
        )
    return out

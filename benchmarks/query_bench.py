"""Notebook queries on a large database: the run-level queries the notebooks make, timed.

Usage: python benchmarks/query_bench.py DB   (e.g. benchmarks/corpus/fio-text-100000-db/storagelab.duckdb,
made by ./run bench --sizes 100000). Prints the wall time of each query (best of 3).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

from storagelab.analysis import explore, frame, open_db, provenance, stacks  # noqa: E402


def timed(name, fn):
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    rows = getattr(out, "height", None)
    print(f"{name:<48} {best * 1000:8.1f} ms  ({rows} rows)")
    return best


def main() -> None:
    db = Path(sys.argv[1])
    con = open_db(db)
    n = con.execute("SELECT count(*) FROM files").fetchone()[0]
    print(f"{db}: {n} files")
    worst = max(
        timed("stacks.runs (fio_groups x files, final reports)", lambda: stacks.runs(con, None)),
        timed(
            "p99 clat per run (fio_percentiles)",
            lambda: frame(
                con,
                """
            SELECT f.label, p.file_id, p.latency_ns FROM fio_percentiles p JOIN files f USING (file_id)
            WHERE p.kind = 'clat' AND p.percentile = 99.0""",
            ),
        ),
        timed(
            "bandwidth per stack (group by)",
            lambda: frame(
                con,
                """
            SELECT coalesce(f.stack, 'unlabelled') AS stack, count(*) AS runs, median(g.bw_bytes_per_s) AS bw
            FROM fio_groups g JOIN files f USING (file_id) GROUP BY ALL""",
            ),
        ),
        timed("provenance of 1000 files", lambda: provenance(con, range(1, 1001))),
        timed(
            "explore: table row counts",
            lambda: (
                explore.table_counts(con)
                if hasattr(explore, "table_counts")
                else frame(con, "SELECT count(*) FROM fio_results")
            ),
        ),
    )
    print(f"slowest: {worst * 1000:.1f} ms")


if __name__ == "__main__":
    main()

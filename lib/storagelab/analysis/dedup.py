"""Dedup table (DDT) memory estimates (notebook 04).

Rule of thumb (OpenZFS tuning guide; zfs-facts F1): each DDT entry cached in the ARC costs
"slightly more than 320 bytes", so RAM ~= entries x 320 B. Estimates, from crude to good:

1. ``bp count`` of ``zdb -b`` x bytes/entry: an upper bound, because bp count includes
   metadata, indirect and embedded block pointers that are never deduplicated (F5.2).
2. ``zdb -S``: the simulated DDT's Total/allocated/blocks = the number of entries a DDT
   would hold (F5.1).
3. ``zdb -DD`` on a pool that dedups: entries x in-core bytes per entry, per DDT object (F3).

The DDT is ARC metadata: to stay cached it must fit under the metadata cap, a fraction of
the ARC maximum (1/4 on Solaris/illumos/FreeBSD <= 12, 3/4 on ZoL 0.7 - OpenZFS 2.1; F7).
"""

from __future__ import annotations

import polars as pl

from ..units import GiB

# in-core bytes per entry seen in practice (zdb -DD "in core" field; zfs-facts F3)
OBSERVED_IN_CORE = (141, 154, 165, 320, 392)


def from_bp_count(stats: pl.DataFrame, bytes_per_entry: float = 320.0) -> pl.DataFrame:
    """Per pool: entries = bp count (minus embedded bps, which never get a DDT entry) and DDT bytes."""
    return stats.with_columns(
        entries_upper=pl.col("bp_count"),
        entries_less_embedded=pl.col("bp_count") - pl.col("embedded_bp_count").fill_null(0),
    ).with_columns(
        ddt_bytes=pl.col("entries_upper") * bytes_per_entry,
        ddt_bytes_less_embedded=pl.col("entries_less_embedded") * bytes_per_entry,
    ).with_columns(
        ddt_gib=pl.col("ddt_bytes") / GiB,
        ddt_gb=pl.col("ddt_bytes") / 1e9,
    )


def sensitivity(stats: pl.DataFrame, per_entry: list[float] | tuple[float, ...]) -> pl.DataFrame:
    """DDT size over a range of bytes/entry: one row per (pool, bytes_per_entry)."""
    rows = []
    for r in stats.select("pool", "bp_count").iter_rows(named=True):
        for b in per_entry:
            rows.append({"pool": r["pool"], "bytes_per_entry": float(b), "ddt_bytes": r["bp_count"] * float(b)})
    return pl.DataFrame(rows).with_columns(ddt_gib=pl.col("ddt_bytes") / GiB)


def memory_table(stats: pl.DataFrame, bytes_per_entry: float, ram_bytes: float, arc_max_fraction: float,
                 metadata_fraction: float) -> pl.DataFrame:
    """The notebook's main table: per pool, DDT bytes, ARC needed, the metadata budget and the verdict."""
    est = from_bp_count(stats, bytes_per_entry)
    budget = ram_bytes * arc_max_fraction * metadata_fraction
    return est.select(
        "pool", "bp_count", "embedded_bp_count", "ddt_bytes", "ddt_gib",
        (pl.col("ddt_bytes") / metadata_fraction / GiB).alias("arc_needed_gib"),
        pl.lit(budget / GiB).alias("metadata_budget_gib"),
        (pl.col("ddt_bytes") <= budget).alias("fits"),
        "file_id",
    )

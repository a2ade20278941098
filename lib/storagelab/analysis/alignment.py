"""Sector alignment (notebook 03): offsets, verdicts, and before/after benchmark ratios.

A partition starting at LBA 63 on 512-byte sectors starts 32,256 bytes into the disk:
32,256 mod 4,096 = 3,584, so every 4 KiB block inside it straddles two physical sectors of a
512e/4Kn drive and each write becomes a read-modify-write (zfs-facts F9/F10). LBA 2048 =
1 MiB is aligned to both 4 KiB and 1 MiB.
"""

from __future__ import annotations

import polars as pl

from ..parsers.partitions import alignment

TESTS_ORDER = ["putc", "put_block", "rewrite", "getc", "get_block", "seeks",
               "seq_create", "seq_read", "seq_delete", "ran_create", "ran_read", "ran_delete"]


def offset_remainder(start_sector: int, sector_bytes: int = 512, boundary: int = 4096) -> int:
    """Bytes past the last ``boundary`` at which a partition starting at ``start_sector`` begins."""
    if start_sector < 0 or sector_bytes <= 0 or boundary <= 0:
        raise ValueError("start_sector >= 0, sector_bytes > 0 and boundary > 0 required")
    return (start_sector * sector_bytes) % boundary


def verdict(start_sector: int, sector_bytes: int = 512, physical_bytes: int = 4096) -> dict:
    """The parser's alignment verdict (the one stored in ``partitions``), plus the remainder against
    the drive's physical sector size."""
    v = alignment(start_sector, sector_bytes)
    rem = offset_remainder(start_sector, sector_bytes, physical_bytes)
    return dict(start_sector=start_sector, start_bytes=v["start_bytes"],
                rem_4k=v["align_4k_rem_bytes"], rem_1m=v["align_1m_rem_bytes"],
                rem_physical=rem, aligned_physical=rem == 0, aligned_1m=v["aligned_1m"])


def before_after(results: pl.DataFrame, before: str, after: str, key: str = "run") -> pl.DataFrame:
    """One row per test: value before and after, after/before ratio, CPU and latency before/after.

    ``results`` has columns ``key`` (run identifier), test, value (bytes/s or ops/s), too_fast,
    cpu_pct, latency_ns. A test "too fast to measure" (+++++) on either side gets no ratio.
    """
    cols = ["test", "value", "too_fast", "cpu_pct", "latency_ns"]
    b = results.filter(pl.col(key) == before).select(cols).rename({c: f"{c}_before" for c in cols[1:]})
    a = results.filter(pl.col(key) == after).select(cols).rename({c: f"{c}_after" for c in cols[1:]})
    if b.is_empty() or a.is_empty():
        raise LookupError(f"no results for {before if b.is_empty() else after!r}")
    out = b.join(a, on="test", how="full", coalesce=True).with_columns(
        ratio=pl.when(pl.col("value_before") > 0).then(pl.col("value_after") / pl.col("value_before")),
        latency_ratio=pl.when(pl.col("latency_ns_before") > 0).then(pl.col("latency_ns_after") / pl.col("latency_ns_before")),
    )
    order = {t: i for i, t in enumerate(TESTS_ORDER)}
    return out.with_columns(_o=pl.col("test").replace_strict(order, default=99)).sort("_o").drop("_o")

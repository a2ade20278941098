"""Filesystem / stack comparisons from fio runs (notebook 05).

A run's headline number is its Run status group bandwidth (``fio_groups``): present in every
fio text log that reached the end, recomputed for JSON/terse logs. The final report of a file
(its last JSON document) is used; files the manifest marks as duplicates are left out.
"""

from __future__ import annotations

import polars as pl

from ..units import MiB

RUNS_SQL = """
SELECT f.file_id, f.path, f.label, f.stack, f.zfs_version, f.vdev_type, f.vdev_count, f.vdev_width,
       f.recordsize_bytes, f.device_limit_bytes_per_s, f.study, f.sha256,
       g.groupid, g.direction, g.bw_bytes_per_s, g.bw_min_bytes_per_s, g.bw_max_bytes_per_s,
       g.io_bytes, g.run_max_ns, g.derived, g.exact, g.line_start
FROM fio_groups g JOIN files f USING (file_id)
WHERE f.duplicate_of IS NULL
  AND g.doc_index = (SELECT max(doc_index) FROM fio_groups g2 WHERE g2.file_id = g.file_id)
  AND (? IS NULL OR f.study = ?)
ORDER BY f.path, g.groupid, g.direction
"""


def runs(con, study: str | None = None) -> pl.DataFrame:
    from . import frame
    return frame(con, RUNS_SQL, [study, study])


def with_flags(df: pl.DataFrame, margin: float = 1.0) -> pl.DataFrame:
    """Add MiB/s and a cache-inflation flag: bandwidth above the device's own stated limit
    (``device_limit_bytes_per_s`` x margin) cannot come from the device (zfs-facts F23)."""
    return df.with_columns(
        bw_mib_s=pl.col("bw_bytes_per_s") / MiB,
        inflated=pl.when(pl.col("device_limit_bytes_per_s").is_null()).then(None)
        .otherwise(pl.col("bw_bytes_per_s") > pl.col("device_limit_bytes_per_s") * margin),
    )


def penalty(df: pl.DataFrame, base_label: str, over_label: str, direction: str = "write") -> dict:
    """Bandwidth of ``over_label`` relative to ``base_label`` (e.g. mergerfs over ZFS vs ZFS direct)."""
    def one(label: str) -> dict:
        sel = df.filter((pl.col("label") == label) & (pl.col("direction") == direction))
        if sel.height != 1:
            raise LookupError(f"expected one {direction} run labelled {label!r}, found {sel.height}")
        return sel.row(0, named=True)

    a, b = one(base_label), one(over_label)
    ratio = b["bw_bytes_per_s"] / a["bw_bytes_per_s"]
    return dict(base=base_label, over=over_label, base_bytes_per_s=a["bw_bytes_per_s"],
                over_bytes_per_s=b["bw_bytes_per_s"], ratio=ratio, penalty_pct=(1 - ratio) * 100,
                base_file_id=a["file_id"], over_file_id=b["file_id"])

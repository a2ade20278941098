"""Speed vs number of vdevs, relative to a baseline vdev count (notebook 01).

The rule of thumb (OpenZFS "Pool Geometry"; zfs-facts F12): a pool's IOPS and throughput are
roughly the *sum* of its top-level vdevs, so n vdevs of one class should run at n x the speed
of one. ``relative`` divides each speed by the baseline's speed within its group, ``ideal``
is that rule (n / baseline n) and ``efficiency`` = relative / ideal (1.0 = perfect scaling).

A second model for streaming, where a RAIDZ vdev moves data at (disks - parity) x one disk and a
mirror writes at one disk's speed: ``data_disks`` (which, for equal disks, is also the pool's
usable capacity in disks). With a fixed set of disks split into more, narrower vdevs (the
Thumper sweep), that model predicts *less* speed per added vdev, the sum-of-vdevs rule more.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

PARITY = {"single": 0, "raidz1": 1, "raidz2": 2, "raidz3": 3}

# Ars Technica 2020 (seed 002, "Performance scales with vdevs"): 1 MiB async writes at n = 2, in percent of
# one vdev of the same class; the "joker" is one RAIDz2 vdev widened to n data disks (n + 2 disks wide),
# in percent of one data disk. Only these prose figures survive: the charts and fio logs were not published.
ARS_TWO_VDEVS = pl.DataFrame({
    "vdev_class": ["single disk", "2-wide mirror", "4-wide RAIDz2", "RAIDz2 joker (one vdev, 4 wide)"],
    "claim_id": ["ars-scaling-single-n2", "ars-scaling-mirror-n2", "ars-scaling-raidz2-n2", "ars-scaling-joker-n2"],
    "n": [2, 2, 2, 2],
    "n_counts": ["vdevs", "vdevs", "vdevs", "data disks"],
    "pct_of_one": [202.0, 203.0, 207.0, 160.0],
})

FIO_GROUP = ("stack", "vdev_type", "vdev_width", "rw", "block_size_bytes", "direction")


def widths(text: str) -> list[int]:
    """``'16 15 15'`` -> ``[16, 15, 15]`` (disks per vdev, as the manifest and transcriptions list them)."""
    try:
        out = [int(w) for w in text.split()]
    except ValueError:
        raise ValueError(f"vdev widths must be whole numbers separated by spaces, got {text!r}") from None
    if not out or min(out) < 1:
        raise ValueError(f"vdev widths must be >= 1, got {text!r}")
    return out


def data_disks(vdev_type: str, vdev_widths: Sequence[int]) -> int:
    """Disks' worth of data a pool streams (and stores): RAIDZ-p vdevs width - p each, a mirror one."""
    if vdev_type == "mirror":
        return len(vdev_widths)
    if vdev_type not in PARITY:
        raise ValueError(f"no data-disk model for vdev type {vdev_type!r}")
    p = PARITY[vdev_type]
    if min(vdev_widths) <= p:
        raise ValueError(f"a {vdev_type} vdev needs more than {p} disks, got widths {list(vdev_widths)}")
    return sum(w - p for w in vdev_widths)


def _data_disks_or_none(vdev_type: str, vdev_widths: Sequence[int]) -> int | None:
    """data_disks, or None for a layout the vdev type cannot build (e.g. a raidz2 vdev of 2 disks)."""
    p = PARITY.get(vdev_type, 0)
    return None if vdev_type != "mirror" and min(vdev_widths) <= p else data_disks(vdev_type, vdev_widths)


def relative(df: pl.DataFrame, value: str, by: Sequence[str], count: str = "vdev_count",
             baseline_count: int = 1) -> pl.DataFrame:
    """Add baseline, relative, ideal and efficiency columns, per group ``by``.

    The baseline is the mean ``value`` of the group's rows with ``count == baseline_count`` (several
    rows: repeated runs); ``baseline_runs`` says how many. Groups without a baseline, and rows whose
    value is null (not measured), get null ratios. ``ideal`` is the sum-of-vdevs rule n / baseline.
    """
    if baseline_count < 1:
        raise ValueError("baseline_count must be >= 1")
    by = list(by)
    base = (df.filter((pl.col(count) == baseline_count) & pl.col(value).is_not_null())
            .group_by(by, maintain_order=True)
            .agg(pl.col(value).mean().alias("baseline"), pl.len().alias("baseline_runs")))
    out = df.join(base, on=by, how="left", nulls_equal=True)
    return out.with_columns(
        relative=pl.col(value) / pl.col("baseline"),
        ideal=pl.col(count) / baseline_count,
    ).with_columns(efficiency=pl.col("relative") / pl.col("ideal"))


def thumper(layouts: pl.DataFrame, baseline_count: int = 1) -> pl.DataFrame:
    """The Thumper sweep (table thumper_layouts): speed relative to the 1-vdev layout per test and vdev
    type, against both models: ``ideal`` (sum of vdevs) and ``data_disk_ratio`` (streaming ~ data disks)."""
    out = relative(layouts, "speed_bytes_per_s", ["test", "vdev_type"], baseline_count=baseline_count)
    dd = [_data_disks_or_none(t, widths(w)) for t, w in zip(out["vdev_type"], out["vdev_widths"])]
    out = out.with_columns(data_disks=pl.Series(dd, dtype=pl.Int64))
    base_dd = (out.filter(pl.col("vdev_count") == baseline_count)
               .group_by("test", "vdev_type").agg(pl.col("data_disks").first().alias("baseline_data_disks")))
    return (out.join(base_dd, on=["test", "vdev_type"], how="left")
            .with_columns(data_disk_ratio=pl.col("data_disks") / pl.col("baseline_data_disks"))
            .sort("test", "vdev_type", "vdev_count"))


def best(scaled: pl.DataFrame, by: Sequence[str] = ("test", "vdev_type")) -> pl.DataFrame:
    """Per group, the measured layout with the highest speed (and its ratios)."""
    return (scaled.filter(pl.col("relative").is_not_null())
            .sort("relative", descending=True)
            .group_by(list(by), maintain_order=True).first()
            .sort(list(by)))


def against_sum_rule(claims: pl.DataFrame, pct: str = "pct_of_one", n: str = "n") -> pl.DataFrame:
    """Percent-of-one figures against the sum-of-vdevs rule: ratio, ideal (n x) and the deviation in %."""
    return claims.with_columns(
        ratio=pl.col(pct) / 100.0,
        ideal=pl.col(n).cast(pl.Float64),
    ).with_columns(deviation_pct=(pl.col("ratio") / pl.col("ideal") - 1.0) * 100.0)


def fio(runs: pl.DataFrame, baseline_count: int = 1, by: Sequence[str] = FIO_GROUP) -> pl.DataFrame:
    """fio runs labelled with vdev_type / vdev_count (manifest): bandwidth relative to the baseline count
    of the same vdev class, workload and direction. Runs without a vdev_count are left out."""
    labelled = runs.filter(pl.col("vdev_type").is_not_null() & pl.col("vdev_count").is_not_null())
    out = relative(labelled, "bw_bytes_per_s", by, baseline_count=baseline_count)
    counts = out.group_by(list(by)).agg(pl.col("vdev_count").n_unique().alias("vdev_counts_in_group"))
    return out.join(counts, on=list(by), how="left", nulls_equal=True).sort([*by, "vdev_count"], nulls_last=True)


def chart_frame(scaled: pl.DataFrame, by: str = "test") -> pl.DataFrame:
    """Long form for the scaling chart: measured relative speed per vdev type, and the two models
    (sum of vdevs; data disks, per vdev type) at the same vdev counts. Rows without a value are dropped."""
    keep = [by, "vdev_type", "vdev_count"]
    measured = scaled.select(*keep, pl.lit("measured").alias("series"), pl.col("relative").alias("value"))
    ideal = (scaled.select(by, "vdev_count", "ideal").unique()
             .select(by, pl.lit("all").alias("vdev_type"), "vdev_count", pl.lit("sum of vdevs (n x)").alias("series"),
                     pl.col("ideal").alias("value")))
    disks = scaled.select(*keep, pl.lit("data-disk model").alias("series"), pl.col("data_disk_ratio").alias("value"))
    return (pl.concat([measured, ideal, disks.filter(pl.col("vdev_type") != "mirror")])
            .filter(pl.col("value").is_not_null()).sort(by, "series", "vdev_type", "vdev_count"))


FIO_RUNS_SQL = """
SELECT f.file_id, f.path, f.label, f.study, f.stack, f.pool, f.vdev_type, f.vdev_count, f.vdev_width,
       f.recordsize_bytes, j.rw, j.block_size_bytes, g.direction, g.bw_bytes_per_s
FROM fio_groups g JOIN files f USING (file_id)
LEFT JOIN (SELECT file_id, groupid, any_value(rw) AS rw, max(block_size_bytes) AS block_size_bytes
           FROM fio_jobs WHERE is_final GROUP BY file_id, groupid) j
       ON j.file_id = g.file_id AND j.groupid = g.groupid
WHERE f.duplicate_of IS NULL
  AND g.doc_index = (SELECT max(doc_index) FROM fio_groups g2 WHERE g2.file_id = g.file_id)
  AND (? = '' OR f.study = ?)
ORDER BY f.path, g.groupid, g.direction
"""


def fio_runs(con, study: str = "") -> pl.DataFrame:
    """Every fio run's group bandwidth with its manifest labels (vdev layout, recordsize); '' = all studies."""
    from . import frame
    return frame(con, FIO_RUNS_SQL, [study, study])

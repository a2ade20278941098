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


# ----------------------------------------------------------------------------- notebook 01 on any selection

LAYOUTS_SQL = """
SELECT t.*, f.path FROM thumper_layouts t JOIN files f USING (file_id)
WHERE {where} AND list_contains(?::VARCHAR[], t.test) ORDER BY t.test, t.vdev_type, t.vdev_count
"""
FIO_SCALING_GROUP = ("stack", "vdev_type", "vdev_width", "workload", "direction")
ARS_PCT_CLAIMS = {"ars-2vdev-single-pct": ("single disk", "vdevs"), "ars-2vdev-mirror-pct": ("2-wide mirror", "vdevs"),
                  "ars-2vdev-raidz2-pct": ("4-wide RAIDz2", "vdevs"),
                  "ars-raidz2-joker-n2-pct": ("RAIDz2 joker (one vdev, 4 wide)", "data disks")}


def ars_two_vdevs(claims_df: pl.DataFrame) -> pl.DataFrame:
    """The Ars n = 2 percentages, read from the study's claims.csv (not typed again here)."""
    rows = [dict(vdev_class=cls, claim_id=cid, n=2, n_counts=counts,
                 pct_of_one=float(claims_df.filter(pl.col("claim_id") == cid)["value"][0]))
            for cid, (cls, counts) in ARS_PCT_CLAIMS.items() if cid in set(claims_df["claim_id"].to_list())]
    schema = {"vdev_class": pl.String, "claim_id": pl.String, "n": pl.Int64, "n_counts": pl.String, "pct_of_one": pl.Float64}
    return pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)


def analyse(con, sel, tests=("zfs_send_read", "dd_write"), baseline_vdev_count: int = 1):
    """Notebook 01 on any selection: layout tables (speed per vdev count), fio runs labelled with a vdev layout
    compared within one workload, against the sum-of-vdevs rule."""
    from . import fio_runs, measures, prose
    from .db import frame
    from .result import Result
    from ..units import MiB

    if baseline_vdev_count < 1:
        raise ValueError("baseline_vdev_count must be >= 1")
    where, params = sel.sql("f")
    runs = fio_runs.runs(con, sel)
    res = Result(sel, measures=measures.per_file(con, sel, runs))
    layouts = frame(con, LAYOUTS_SQL.format(where=where), params + [list(tests)])
    if layouts.height:
        scaled = thumper(layouts, baseline_vdev_count)
        top = best(scaled)
        res.frames.update(layouts=layouts, scaled=scaled, best=top)
        res.file_ids += layouts["file_id"].to_list()
        for r in top.iter_rows(named=True):
            two = scaled.filter((pl.col("test") == r["test"]) & (pl.col("vdev_type") == r["vdev_type"])
                                & (pl.col("vdev_count") == baseline_vdev_count * 2))
            two_txt = (f"{two['relative'][0]:.2f}x at {baseline_vdev_count * 2} vdevs (rule {2:.0f}x)"
                       if two.height and two["relative"][0] is not None else f"no layout with {baseline_vdev_count * 2} vdevs")
            res.findings.append(
                f"Layout table, {r['test']} {r['vdev_type']}: {r['baseline'] / MiB:.1f} MiB/s with {baseline_vdev_count} "
                f"vdev; {two_txt}; best {r['layout']} ({r['vdev_count']} vdevs) {r['speed_bytes_per_s'] / MiB:.1f} MiB/s = "
                f"{r['relative']:.2f}x against the sum-of-vdevs rule's {r['ideal']:.0f}x (efficiency {r['efficiency']:.0%}).")
            res.headline[f"{r['test']} {r['vdev_type']}"] = f"best {r['layout']}: {r['relative']:.2f}x one vdev (rule {r['ideal']:.0f}x)"
        disks = sorted(set(layouts["disks"].to_list()))
        if len(disks) == 1:
            res.findings.append(f"Every layout uses the same {disks[0]} disks: more vdevs means narrower vdevs, so the "
                                "sum-of-vdevs rule (which assumes added disks) is not the model for this sweep.")
    labelled = runs.filter(pl.col("vdev_type").is_not_null() & pl.col("vdev_count").is_not_null())
    scaled_fio = fio(labelled, baseline_vdev_count, by=FIO_SCALING_GROUP) if labelled.height else labelled
    res.frames["fio"] = scaled_fio
    res.file_ids += scaled_fio["file_id"].to_list() if scaled_fio.height else []
    multi = scaled_fio.filter(pl.col("vdev_counts_in_group") > 1) if scaled_fio.height else scaled_fio
    if runs.height:
        res.findings.append(f"{runs.height} fio run(s) for {sel.describe()}, {labelled.height} labelled with vdev_type "
                            f"and vdev_count; {multi.select(FIO_SCALING_GROUP).unique().height if multi.height else 0} "
                            "group(s) (same stack, vdev type and width, workload, direction) hold more than one vdev count.")
    for r in multi.iter_rows(named=True):
        if r["relative"] is None:
            continue
        res.findings.append(f"fio {r['label']}: {r['vdev_count']} x {r['vdev_type']} {prose.rate(r['bw_bytes_per_s'])} = "
                            f"{r['relative']:.2f}x the {baseline_vdev_count}-vdev run of the same workload (rule {r['ideal']:.1f}x).")
    if multi.height == 0:
        res.missing.append(f"no fio runs of one workload on pools with different vdev counts for {sel.describe()}: run "
                           "the same fio job on 1, 2, 4 ... vdevs and label each run with vdev_type, vdev_count and "
                           "vdev_width in the manifest" + ("" if layouts.height else "; nor a layout table"))
    from ..claims import study_claims

    ars = against_sum_rule(ars_two_vdevs(study_claims(sel.study)))
    res.frames["stated_two_vdevs"] = ars
    for r in ars.iter_rows(named=True):
        res.findings.append(f"Stated by the study (no raw data): {r['vdev_class']}, n = 2 {r['n_counts']}: "
                            f"{r['pct_of_one']:.0f} % of one = {r['ratio']:.2f}x against the rule's {r['ideal']:.1f}x "
                            f"({r['deviation_pct']:+.1f} %).")
    if res.headline:
        first = next(iter(res.headline.items()))
        res.verdict = f"{first[0]}: {first[1]}."
    return res

"""Speed vs number of vdevs, relative to a baseline vdev count (notebook 01).

The rule of thumb (OpenZFS "Pool Geometry"; docs/formats/zfs-facts.md F12): a pool's IOPS and throughput are
roughly the *sum* of its top-level vdevs, so n vdevs of one class should run at n x the speed
of one. ``relative`` divides each speed by the baseline's speed within its group, ``ideal``
is that rule (n / baseline n) and ``efficiency`` = relative / ideal (1.0 = perfect scaling).

A second model for streaming, where a RAIDZ vdev moves data at (disks - parity) x one disk and a
mirror writes at one disk's speed: ``data_disks`` (which, for equal disks, is also the pool's
usable capacity in disks). With a fixed set of disks split into more, narrower vdevs (the
Thumper sweep), that model predicts *less* speed per added vdev, the sum-of-vdevs rule more.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl

from ..claims import stated_where, study_claims
from . import design, fio_runs, measures, phases, run_verdicts, scaling_findings, scaling_repeats, single_disk
from .db import frame
from .result import Result, lines_of
from .scaling_numbers import ScalingFrames, ScalingNumbers, _data_disks_or_none, direction_of, widths
from .single_disk import (  # noqa: F401 - re-exported: the disk model lives in single_disk
    PARITY,
    against_single_disk,
    disk_model,
    family,
    is_single_disk,
    one_of_its_disks,
    single_disk_comparisons,
)

FIO_GROUP = ("stack", "vdev_type", "vdev_width", "rw", "block_size_bytes", "direction")


def relative(
    df: pl.DataFrame, value: str, by: Sequence[str], count: str = "vdev_count", baseline_count: int = 1
) -> pl.DataFrame:
    """Add baseline, relative, ideal and efficiency columns, per group ``by``.

    The baseline is the mean ``value`` of the group's rows with ``count == baseline_count`` (several
    rows: repeated runs) that count (a ``counted`` column where ``df`` has one: ``fio``); ``baseline_runs`` says how
    many, ``baseline_left`` how many were left out. Groups without a baseline, and rows whose value is null (not
    measured), get null ratios. ``ideal`` is the sum-of-vdevs rule n / baseline.
    """
    if baseline_count < 1:
        raise ValueError("baseline_count must be >= 1")
    by = list(by)
    counts = pl.col("counted")
    base = (
        (df if "counted" in df.columns else df.with_columns(counted=pl.lit(True)))
        .filter((pl.col(count) == baseline_count) & pl.col(value).is_not_null())
        .group_by(by, maintain_order=True)
        .agg(
            pl.col(value).filter(counts).mean().alias("baseline"),
            counts.sum().cast(pl.UInt32).alias("baseline_runs"),
            (~counts).sum().cast(pl.UInt32).alias("baseline_left"),
        )
    )
    out = df.join(base, on=by, how="left", nulls_equal=True)
    return out.with_columns(
        relative=pl.col(value) / pl.col("baseline"),
        ideal=pl.col(count) / baseline_count,
    ).with_columns(efficiency=pl.col("relative") / pl.col("ideal"))


def disk_worth(direction: str | None, vdev_type: str, vdev_widths: Sequence[int]) -> int | None:
    """Disks' worth of streaming speed a layout can draw, per direction: a write goes to every disk of a mirror (one
    disk's worth per mirror vdev) and to the data disks of a RAIDZ vdev; a read can come from every disk of a mirror
    but only from the data disks of RAIDZ. None for a layout the vdev type cannot build."""
    dd = _data_disks_or_none(vdev_type, vdev_widths)
    if dd is not None and direction == "read" and vdev_type == "mirror":
        return sum(vdev_widths)
    return dd


def thumper(layouts: pl.DataFrame, baseline_count: int = 1) -> pl.DataFrame:
    """The Thumper sweep (table thumper_layouts): speed relative to the 1-vdev layout per test and vdev
    type, against both models: ``ideal`` (sum of vdevs) and ``data_disk_ratio`` (streaming ~ data disks)."""
    out = relative(layouts, "speed_bytes_per_s", ["test", "vdev_type"], baseline_count=baseline_count)
    dd = [_data_disks_or_none(t, widths(w)) for t, w in zip(out["vdev_type"], out["vdev_widths"], strict=True)]
    worth = [
        disk_worth(direction_of(test), t, widths(w))
        for test, t, w in zip(out["test"], out["vdev_type"], out["vdev_widths"], strict=True)
    ]
    out = out.with_columns(data_disks=pl.Series(dd, dtype=pl.Int64), disk_worth=pl.Series(worth, dtype=pl.Int64))
    base_dd = (
        out.filter(pl.col("vdev_count") == baseline_count)
        .group_by("test", "vdev_type")
        .agg(
            pl.col("data_disks").first().alias("baseline_data_disks"),
            pl.col("disk_worth").first().alias("baseline_disk_worth"),
        )
    )
    return (
        out.join(base_dd, on=["test", "vdev_type"], how="left")
        .with_columns(
            data_disk_ratio=pl.col("data_disks") / pl.col("baseline_data_disks"),
            disk_model_ratio=pl.col("disk_worth") / pl.col("baseline_disk_worth"),
        )
        .sort("test", "vdev_type", "vdev_count")
    )


def best(scaled: pl.DataFrame, by: Sequence[str] = ("test", "vdev_type")) -> pl.DataFrame:
    """Per group, the measured layout with the highest speed (and its ratios)."""
    return (
        scaled.filter(pl.col("relative").is_not_null())
        .sort("relative", descending=True)
        .group_by(list(by), maintain_order=True)
        .first()
        .sort(list(by))
    )


def against_sum_rule(claims: pl.DataFrame, pct: str = "pct_of_one", n: str = "n") -> pl.DataFrame:
    """Percent-of-one figures against the sum-of-vdevs rule: ratio, ideal (n x) and the deviation in %."""
    return claims.with_columns(
        ratio=pl.col(pct) / 100.0,
        ideal=pl.col(n).cast(pl.Float64),
    ).with_columns(deviation_pct=(pl.col("ratio") / pl.col("ideal") - 1.0) * 100.0)


def fio(
    runs: pl.DataFrame,
    baseline_count: int = 1,
    by: Sequence[str] = FIO_GROUP,
    left: Mapping[tuple[int, int, str], str] | None = None,
) -> pl.DataFrame:
    """fio runs labelled with vdev_type / vdev_count (manifest): bandwidth relative to the baseline count
    of the same vdev class, workload and direction. Runs without a vdev_count are left out. ``left``: the runs
    notebooks 05, 08 and 10 leave out (``run_verdicts.left_out``): each row's ``why`` and ``suspect``, and out of
    the baseline's mean where one of its runs is clean (``run_verdicts.counted``)."""
    labelled = runs.filter(pl.col("vdev_type").is_not_null() & pl.col("vdev_count").is_not_null())
    by = phases.grouped(by, runs)  # runs before and after a change are never one baseline's repeats
    labelled = run_verdicts.with_verdicts(labelled, left or {})
    labelled = labelled.with_columns(counted=run_verdicts.counted(pl.col("suspect"), [*by, "vdev_count"]))
    out = relative(labelled, "bw_bytes_per_s", by, baseline_count=baseline_count)
    counts = out.group_by(list(by)).agg(pl.col("vdev_count").n_unique().alias("vdev_counts_in_group"))
    return out.join(counts, on=list(by), how="left", nulls_equal=True).sort([*by, "vdev_count"], nulls_last=True)


def chart_frame(scaled: pl.DataFrame, by: str = "test") -> pl.DataFrame:
    """Long form for the scaling chart: measured relative speed per vdev type, and the two models at the same vdev
    counts: the sum-of-vdevs rule (only where it is a yardstick: not for reads from one fixed set of disks, which
    every mirror layout reads in full) and the disk model per direction and vdev type (``disk_worth``). Rows
    without a value are dropped."""
    keep = [by, "vdev_type", "vdev_count"]
    measured = scaled.select(*keep, pl.lit("measured").alias("series"), pl.col("relative").alias("value"))
    fixed = scaled["disks"].n_unique() == 1 if "disks" in scaled.columns else False
    rule_tests = [t for t in scaled[by].unique().to_list() if not (fixed and direction_of(t) == "read")]
    ideal = (
        scaled.filter(pl.col(by).is_in(rule_tests))
        .select(by, "vdev_count", "ideal")
        .unique()
        .select(
            by,
            pl.lit("all").alias("vdev_type"),
            "vdev_count",
            pl.lit("sum of vdevs (n x)").alias("series"),
            pl.col("ideal").alias("value"),
        )
    )
    disks = scaled.select(*keep, pl.lit("disk model").alias("series"), pl.col("disk_model_ratio").alias("value"))
    return (
        pl.concat([measured, ideal, disks])
        .filter(pl.col("value").is_not_null())
        .sort(by, "series", "vdev_type", "vdev_count")
    )


# ----------------------------------------------------------------------------- a serial reader (zfs send)

SERIAL_TERMS = ("fixed_s", "per_disk_s", "disk_rate_bytes_per_s")


def record_disks(vdev_type: str, vdev_widths: Sequence[int]) -> list[tuple[float, int]]:
    """(share of the records, disks one record is read from) per vdev: a mirror reads a record from one disk;
    a RAIDZ-p vdev spreads it over its width - p data disks. Records land in proportion to data disks."""
    per_vdev = [1 if vdev_type == "mirror" else w - PARITY[vdev_type] for w in vdev_widths]
    if min(per_vdev) < 1:
        raise ValueError(
            f"a {vdev_type} vdev needs more than {PARITY.get(vdev_type, 0)} disks, got {list(vdev_widths)}"
        )
    total = sum(per_vdev)
    return [(d / total, d) for d in per_vdev]


def _solve3(a: list[list[float]], b: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting for the 3 x 3 normal equations."""
    m = [row[:] + [v] for row, v in zip(a, b, strict=True)]
    for i in range(3):
        p = max(range(i, 3), key=lambda r: abs(m[r][i]))
        m[i], m[p] = m[p], m[i]
        if abs(m[i][i]) < 1e-300:
            raise ValueError("the layouts do not determine the three terms (too few distinct geometries)")
        for r in range(i + 1, 3):
            f = m[r][i] / m[i][i]
            m[r] = [x - f * y for x, y in zip(m[r], m[i], strict=True)]
    x = [0.0, 0.0, 0.0]
    for i in (2, 1, 0):
        x[i] = (m[i][3] - sum(m[i][j] * x[j] for j in range(i + 1, 3))) / m[i][i]
    return x


def serial_reader(layouts: pl.DataFrame, record_bytes: int = 131072) -> tuple[pl.DataFrame, dict]:
    """Fit a serial, latency-bound reader to measured speeds of one reader (e.g. ``zfs send``) on several layouts
    of the same disks: reading one record costs ``fixed_s`` + ``per_disk_s`` x (disks it waits for) + (bytes each
    of those disks reads) / ``disk_rate``, averaged over the vdevs the records sit on (``record_disks``). The three
    terms are least-squares fitted to the measured time per record (record / speed): fitted, not measured.
    Returns (rows with measured and model speed, the fitted terms with the fit's worst error)."""
    rows = layouts.filter(pl.col("speed_bytes_per_s").is_not_null() & pl.col("vdev_type").is_in(["mirror", *PARITY]))
    feats, times = [], []
    for r in rows.iter_rows(named=True):
        parts = record_disks(r["vdev_type"], widths(r["vdev_widths"]))
        feats.append([1.0, sum(sh * d for sh, d in parts), sum(sh * record_bytes / d for sh, d in parts)])
        times.append(record_bytes / r["speed_bytes_per_s"])
    if len({tuple(f) for f in feats}) < 3:
        raise ValueError("a serial-reader fit needs at least three distinct layouts")
    ata = [[sum(f[i] * f[j] for f in feats) for j in range(3)] for i in range(3)]
    aty = [sum(f[i] * t for f, t in zip(feats, times, strict=True)) for i in range(3)]
    fixed, per_disk, inv_rate = _solve3(ata, aty)
    model = [record_bytes / (fixed + per_disk * f[1] + inv_rate * f[2]) for f in feats]
    out = rows.with_columns(
        model_bytes_per_s=pl.Series(model, dtype=pl.Float64),
        disks_per_record=pl.Series([f[1] for f in feats], dtype=pl.Float64),
    ).with_columns(error_pct=(pl.col("model_bytes_per_s") / pl.col("speed_bytes_per_s") - 1) * 100)
    terms = dict(
        fixed_s=fixed,
        per_disk_s=per_disk,
        disk_rate_bytes_per_s=1 / inv_rate if inv_rate > 0 else None,
        record_bytes=record_bytes,
        layouts=len(feats),
        worst_error_pct=float(out.select(pl.col("error_pct").abs().max()).item()),
        mean_error_pct=float(out.select(pl.col("error_pct").abs().mean()).item()),
    )
    return out, terms


# ----------------------------------------------------------------------------- notebook 01 on any selection

LAYOUTS_SQL = """
SELECT t.*, f.path, f.sha256 FROM thumper_layouts t JOIN files f USING (file_id)
WHERE {where} AND list_contains(?::VARCHAR[], t.test) ORDER BY t.test, t.vdev_type, t.vdev_count
"""
FIO_SCALING_GROUP = ("stack", "vdev_type", "vdev_width", "workload", "direction")
ARS_PCT_CLAIMS = {
    "ars-2vdev-single-pct": ("single disk", "vdevs"),
    "ars-2vdev-mirror-pct": ("2-wide mirror", "vdevs"),
    "ars-2vdev-raidz2-pct": ("4-wide RAIDz2", "vdevs"),
    "ars-raidz2-joker-n2-pct": ("RAIDz2 joker (one vdev, 4 wide)", "data disks"),
}


def ars_two_vdevs(claims_df: pl.DataFrame) -> pl.DataFrame:
    """The Ars n = 2 percentages, read from the study's claims.csv (not typed again here)."""
    rows = [
        dict(
            vdev_class=cls,
            claim_id=cid,
            n=2,
            n_counts=counts,
            pct_of_one=float(claims_df.filter(pl.col("claim_id") == cid)["value"][0]),
        )
        for cid, (cls, counts) in ARS_PCT_CLAIMS.items()
        if cid in set(claims_df["claim_id"].to_list())
    ]
    schema = {
        "vdev_class": pl.String,
        "claim_id": pl.String,
        "n": pl.Int64,
        "n_counts": pl.String,
        "pct_of_one": pl.Float64,
    }
    return pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)


def query(con, sel, tests) -> ScalingFrames:

    where, params = sel.sql("f")
    runs = fio_runs.runs(con, sel)
    return ScalingFrames(
        layouts=frame(con, LAYOUTS_SQL.format(where=where), params + [list(tests)]),
        runs=runs,
        single_parts=single_disk.single_disk_rows(con, sel, runs),
        claims=study_claims(sel.study),
    )


def scale_layouts(layouts: pl.DataFrame, baseline: int) -> pl.DataFrame:
    """Layout speeds relative to the baseline vdev count, with the yardstick: on one fixed set of disks the disk
    model, else the sum-of-vdevs rule."""
    fixed = pl.col("layouts_disks") == 1
    return (
        thumper(layouts, baseline)
        .with_columns(layouts_disks=pl.col("disks").n_unique().over("test"))
        .with_columns(
            model_name=pl.when(fixed).then(pl.lit("disk model")).otherwise(pl.lit("sum of vdevs")),
            model_ratio=pl.when(fixed).then(pl.col("disk_model_ratio")).otherwise(pl.col("ideal")),
        )
    )


def one_disk_writes(layouts: pl.DataFrame, scaled: pl.DataFrame, top: pl.DataFrame) -> tuple:
    """The one-vdev mirror's dd write (one disk's speed) and the layouts to set against it."""
    one_mirror = layouts.filter(
        (pl.col("test") == "dd_write")
        & (pl.col("vdev_type") == "mirror")
        & (pl.col("vdev_count") == 1)
        & pl.col("speed_bytes_per_s").is_not_null()
    )
    if one_mirror.is_empty():
        return None, pl.DataFrame()
    ones = scaled.filter(
        (pl.col("test") == "dd_write") & (pl.col("vdev_count") == 1) & (pl.col("vdev_type") != "mirror")
    )
    picks = pl.concat([ones.select(top.columns), top.filter(pl.col("test") == "dd_write")])
    return one_mirror["speed_bytes_per_s"][0], picks.filter(pl.col("speed_bytes_per_s").is_not_null())


def mirror_physical_writes(layouts: pl.DataFrame) -> dict | None:
    """Mirror dd writes as bytes/s reaching the disks (each block to every disk of its vdev: speed x disks per vdev):
    the one-vdev mirror's against the fastest mirror layout's. When the widest mirror moved more to its disks than
    the fastest layout does, controllers and bus carried more than the plateau needs."""
    m = layouts.filter(
        (pl.col("test") == "dd_write") & (pl.col("vdev_type") == "mirror") & pl.col("speed_bytes_per_s").is_not_null()
    ).with_columns(physical=pl.col("speed_bytes_per_s") * pl.col("disks") / pl.col("vdev_count"))
    one = m.filter(pl.col("vdev_count") == 1)
    if one.is_empty() or m.height < 2:
        return None
    o, f = one.row(0, named=True), m.sort("speed_bytes_per_s", descending=True).row(0, named=True)
    return dict(
        one_layout=o["layout"],
        one_disks=o["disks"],
        one_speed=o["speed_bytes_per_s"],
        one_physical=o["physical"],
        fastest_layout=f["layout"],
        fastest_speed=f["speed_bytes_per_s"],
        fastest_copies=f["disks"] / f["vdev_count"],
        fastest_physical=f["physical"],
    )


def compute(
    frames: ScalingFrames,
    baseline: int,
    serial_test: str,
    record_bytes: int,
    left: Mapping[tuple[int, int, str], str] | None = None,
) -> ScalingNumbers:
    """Frames -> named numbers: layouts against one vdev, the serial-reader fit, fio runs across vdev counts, each
    layout against one of its own disks, and the study's stated figures."""

    n = ScalingNumbers(baseline)
    layouts, runs = frames.layouts, frames.runs
    if layouts.height:
        n.scaled = scale_layouts(layouts, baseline)
        n.best = best(n.scaled)
        disks = sorted(set(layouts["disks"].to_list()))
        n.fixed_disks = disks[0] if len(disks) == 1 else None
        one = layouts.filter(pl.col("test") == serial_test)
        if one.height:
            try:
                n.serial = serial_reader(one, record_bytes)
            except ValueError as e:
                n.serial_error = str(e)
        n.one_mirror_disk, n.one_disk_picks = one_disk_writes(layouts, n.scaled, n.best)
        n.physical = mirror_physical_writes(layouts)
    labelled = runs.filter(pl.col("vdev_type").is_not_null() & pl.col("vdev_count").is_not_null())
    n.labelled_runs = labelled.height
    scaled_fio = (
        fio(design.with_design(labelled), baseline, by=FIO_SCALING_GROUP, left=left) if labelled.height else labelled
    )
    n.fio_multi = scaled_fio.filter(pl.col("vdev_counts_in_group") > 1) if scaled_fio.height else scaled_fio
    key = phases.grouped(FIO_SCALING_GROUP, n.fio_multi)  # before and after a change: never one configuration
    n.fio_configs = scaling_repeats.configurations(n.fio_multi, key, baseline)
    if scaled_fio.height:  # runs with a layout whose group has one vdev count: nothing to scale against
        n.fio_alone = scaled_fio.filter(pl.col("vdev_counts_in_group") == 1)["label"].to_list()
    n.single = single_disk.comparisons(frames.single_parts)
    n.rejected = single_disk.rejected(frames.single_parts)
    n.stated = against_sum_rule(ars_two_vdevs(frames.claims))
    n.stated_lines = claim_lines(frames.claims)
    return n


def claim_lines(claims: pl.DataFrame) -> dict[str, tuple[dict, ...]]:
    """Claim id -> its claims.csv line (result.lines_of), what a stated figure's finding links to."""
    if claims.is_empty() or "line" not in claims.columns:
        return {}
    return {r["claim_id"]: lines_of(r) for r in stated_where(claims).iter_rows(named=True)}


def analyse(
    con,
    sel,
    tests=("zfs_send_read", "dd_write"),
    baseline_vdev_count: int = 1,
    serial_test: str = "zfs_send_read",
    record_bytes: int = 131072,
):
    """Notebook 01 on any selection: layout tables (speed per vdev count), fio runs labelled with a vdev layout
    compared within one workload, against the sum-of-vdevs rule, and each layout against one of its own disks."""

    if baseline_vdev_count < 1:
        raise ValueError("baseline_vdev_count must be >= 1")
    frames = query(con, sel, tests)
    res = Result.start(con, sel, measures.per_file(con, sel, frames.runs))
    left = run_verdicts.left_out(con, sel) if frames.runs.height else {}  # the one rule of 05, 08 and 10
    n = compute(frames, baseline_vdev_count, serial_test, record_bytes, left)
    res.numbers = n
    if n.scaled.height:
        res.frames.update(layouts=frames.layouts, scaled=n.scaled, best=n.best)
        res.file_ids += frames.layouts["file_id"].to_list()
    if n.serial:
        res.frames["serial_reader"] = n.serial[0]
    res.frames["fio"] = n.fio_multi  # only groups that compare vdev counts (a lone vdev count has nothing to chart)
    res.frames["fio_configs"] = scaling_repeats.frame(
        n.fio_configs, n.fio_multi.schema
    )  # the runs of one vdev count as repeats
    res.file_ids += n.fio_multi["file_id"].to_list() if n.fio_multi.height else []
    res.frames["single_disk"] = n.single
    res.file_ids += n.single["file_id"].to_list() + n.single["single_file_id"].to_list()
    res.frames["stated_two_vdevs"] = n.stated
    scaling_findings.write(res, n, frames, sel)
    return res

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

import re
from collections.abc import Sequence

import polars as pl

PARITY = {"single": 0, "raidz1": 1, "raidz2": 2, "raidz3": 3}

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


def relative(
    df: pl.DataFrame, value: str, by: Sequence[str], count: str = "vdev_count", baseline_count: int = 1
) -> pl.DataFrame:
    """Add baseline, relative, ideal and efficiency columns, per group ``by``.

    The baseline is the mean ``value`` of the group's rows with ``count == baseline_count`` (several
    rows: repeated runs); ``baseline_runs`` says how many. Groups without a baseline, and rows whose
    value is null (not measured), get null ratios. ``ideal`` is the sum-of-vdevs rule n / baseline.
    """
    if baseline_count < 1:
        raise ValueError("baseline_count must be >= 1")
    by = list(by)
    base = (
        df.filter((pl.col(count) == baseline_count) & pl.col(value).is_not_null())
        .group_by(by, maintain_order=True)
        .agg(pl.col(value).mean().alias("baseline"), pl.len().alias("baseline_runs"))
    )
    out = df.join(base, on=by, how="left", nulls_equal=True)
    return out.with_columns(
        relative=pl.col(value) / pl.col("baseline"),
        ideal=pl.col(count) / baseline_count,
    ).with_columns(efficiency=pl.col("relative") / pl.col("ideal"))


def direction_of(test: str) -> str | None:
    """'read' or 'write' from a layout table's test name (zfs_send_read, dd_write, ...); None when it says neither."""
    t = test.lower()
    return "read" if "read" in t else "write" if "write" in t else None


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
    dd = [_data_disks_or_none(t, widths(w)) for t, w in zip(out["vdev_type"], out["vdev_widths"])]
    worth = [
        disk_worth(direction_of(test), t, widths(w))
        for test, t, w in zip(out["test"], out["vdev_type"], out["vdev_widths"])
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


def fio(runs: pl.DataFrame, baseline_count: int = 1, by: Sequence[str] = FIO_GROUP) -> pl.DataFrame:
    """fio runs labelled with vdev_type / vdev_count (manifest): bandwidth relative to the baseline count
    of the same vdev class, workload and direction. Runs without a vdev_count are left out."""
    labelled = runs.filter(pl.col("vdev_type").is_not_null() & pl.col("vdev_count").is_not_null())
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
    m = [row[:] + [v] for row, v in zip(a, b)]
    for i in range(3):
        p = max(range(i, 3), key=lambda r: abs(m[r][i]))
        m[i], m[p] = m[p], m[i]
        if abs(m[i][i]) < 1e-300:
            raise ValueError("the layouts do not determine the three terms (too few distinct geometries)")
        for r in range(i + 1, 3):
            f = m[r][i] / m[i][i]
            m[r] = [x - f * y for x, y in zip(m[r], m[i])]
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
    aty = [sum(f[i] * t for f, t in zip(feats, times)) for i in range(3)]
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
        worst_error_pct=float(out["error_pct"].abs().max()),
        mean_error_pct=float(out["error_pct"].abs().mean()),
    )
    return out, terms


# ----------------------------------------------------------------------------- notebook 01 on any selection

LAYOUTS_SQL = """
SELECT t.*, f.path FROM thumper_layouts t JOIN files f USING (file_id)
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


def analyse(
    con,
    sel,
    tests=("zfs_send_read", "dd_write"),
    baseline_vdev_count: int = 1,
    serial_test: str = "zfs_send_read",
    record_bytes: int = 131072,
):
    """Notebook 01 on any selection: layout tables (speed per vdev count), fio runs labelled with a vdev layout
    compared within one workload, against the sum-of-vdevs rule."""
    from ..units import MiB
    from . import fio_runs, measures, prose
    from .db import frame
    from .result import Result

    if baseline_vdev_count < 1:
        raise ValueError("baseline_vdev_count must be >= 1")
    where, params = sel.sql("f")
    runs = fio_runs.runs(con, sel)
    res = Result.start(con, sel, measures.per_file(con, sel, runs))
    layouts = frame(con, LAYOUTS_SQL.format(where=where), params + [list(tests)])
    if layouts.height:
        scaled = (
            thumper(layouts, baseline_vdev_count)
            .with_columns(layouts_disks=pl.col("disks").n_unique().over("test"))
            .with_columns(  # the yardstick: on one fixed set of disks the disk model, else the sum-of-vdevs rule
                model_name=pl.when(pl.col("layouts_disks") == 1)
                .then(pl.lit("disk model"))
                .otherwise(pl.lit("sum of vdevs")),
                model_ratio=pl.when(pl.col("layouts_disks") == 1)
                .then(pl.col("disk_model_ratio"))
                .otherwise(pl.col("ideal")),
            )
        )
        top = best(scaled)
        res.frames.update(layouts=layouts, scaled=scaled, best=top)
        res.file_ids += layouts["file_id"].to_list()
        disks = sorted(set(layouts["disks"].to_list()))
        fixed = len(disks) == 1
        if fixed:
            res.findings.append(
                f"Every layout uses the same {disks[0]} disks: more vdevs means narrower vdevs, so the "
                "sum-of-vdevs rule (which assumes added disks) is not the model for this sweep. The disk model "
                "per direction is: a write goes to every disk of a mirror (one disk's worth per mirror vdev) and to "
                "the data disks of RAIDZ; a read can come from every disk of a mirror, whatever the layout, and from "
                "the data disks of RAIDZ."
            )
        for r in top.iter_rows(named=True):
            two = scaled.filter(
                (pl.col("test") == r["test"])
                & (pl.col("vdev_type") == r["vdev_type"])
                & (pl.col("vdev_count") == baseline_vdev_count * 2)
            )
            model = (
                f"the disk model's {r['disk_model_ratio']:.2f}x"
                if fixed and r["disk_model_ratio"] is not None
                else f"the sum-of-vdevs rule's {r['ideal']:.0f}x"
            )
            two_txt = (
                f"{two['relative'][0]:.2f}x at {baseline_vdev_count * 2} vdevs" + ("" if fixed else f" (rule {2:.0f}x)")
                if two.height and two["relative"][0] is not None
                else f"no layout with {baseline_vdev_count * 2} vdevs"
            )
            res.findings.append(
                f"Layout table, {r['test']} {r['vdev_type']}: {r['baseline'] / MiB:.1f} MiB/s with {baseline_vdev_count} "
                f"vdev; {two_txt}; best {r['layout']} ({r['vdev_count']} vdevs) {r['speed_bytes_per_s'] / MiB:.1f} MiB/s = "
                f"{r['relative']:.2f}x against {model}."
            )
            res.headline[f"{r['test']} {r['vdev_type']}"] = f"best {r['layout']}: {r['relative']:.2f}x one vdev" + (
                f" (disk model {r['disk_model_ratio']:.2g}x)" if fixed else f" (rule {r['ideal']:.0f}x)"
            )
    if layouts.height:
        _serial_findings(res, layouts, serial_test, record_bytes)
    labelled = runs.filter(pl.col("vdev_type").is_not_null() & pl.col("vdev_count").is_not_null())
    scaled_fio = fio(labelled, baseline_vdev_count, by=FIO_SCALING_GROUP) if labelled.height else labelled
    res.file_ids += scaled_fio["file_id"].to_list() if scaled_fio.height else []
    multi = scaled_fio.filter(pl.col("vdev_counts_in_group") > 1) if scaled_fio.height else scaled_fio
    res.frames["fio"] = multi  # only groups that compare vdev counts (a lone vdev count has nothing to chart)
    if runs.height:
        res.findings.append(
            f"{runs.height} fio run(s) for {sel.describe()}, {labelled.height} labelled with vdev_type "
            f"and vdev_count; {multi.select(FIO_SCALING_GROUP).unique().height if multi.height else 0} "
            "group(s) (same stack, vdev type and width, workload, direction) hold more than one vdev count."
        )
    for r in multi.iter_rows(named=True):
        if r["relative"] is None:
            continue
        res.findings.append(
            f"fio {r['label']}: {r['vdev_count']} x {r['vdev_type']} {prose.rate(r['bw_bytes_per_s'])} = "
            f"{r['relative']:.2f}x the {baseline_vdev_count}-vdev run of the same workload (rule {r['ideal']:.1f}x)."
        )
    if multi.height == 0:
        res.missing.append(
            f"no fio runs of one workload on pools with different vdev counts for {sel.describe()}: run "
            "the same fio job on 1, 2, 4 ... vdevs and label each run with vdev_type, vdev_count and "
            "vdev_width in the manifest" + ("" if layouts.height else "; nor a layout table")
        )
    one = single_disk_comparisons(con, sel, runs)
    res.frames["single_disk"] = one
    res.file_ids += one["file_id"].to_list() + one["single_file_id"].to_list()
    for r in one.iter_rows(named=True):
        unit = (lambda v: f"{v:.1f}/s") if r["direction"] == "seeks" else prose.rate
        model = (
            f"{r['model_low']:g}x" if r["model_low"] == r["model_high"] else f"{r['model_low']:g}-{r['model_high']:g}x"
        )
        res.findings.append(
            f"{r['tool']} {r['direction']}: {r['label']} {unit(r['value'])} against one disk "
            f"({r['single']}) {unit(r['single_value'])} = {r['ratio']:.2f}x; model {model} ({r['model']})"
            + ("." if r["within_model"] else ": **outside the model**, something else limits it.")
        )
    if layouts.height:
        one_mirror = layouts.filter(
            (pl.col("test") == "dd_write")
            & (pl.col("vdev_type") == "mirror")
            & (pl.col("vdev_count") == 1)
            & pl.col("speed_bytes_per_s").is_not_null()
        )
        if one_mirror.height:
            disk = one_mirror["speed_bytes_per_s"][0]
            res.findings.append(
                f"A one-vdev mirror writes every block to all its disks, so its dd write "
                f"({disk / MiB:.1f} MiB/s) is one disk's speed. Against it:"
            )
            ones = res.frames["scaled"].filter(
                (pl.col("test") == "dd_write") & (pl.col("vdev_count") == 1) & (pl.col("vdev_type") != "mirror")
            )
            picks = pl.concat(
                [ones.select(res.frames["best"].columns), res.frames["best"].filter(pl.col("test") == "dd_write")]
            )
            for r in picks.filter(pl.col("speed_bytes_per_s").is_not_null()).iter_rows(named=True):
                dd = _data_disks_or_none(r["vdev_type"], widths(r["vdev_widths"]))
                res.findings.append(
                    f"  {r['vdev_type']} {r['layout']} ({r['vdev_count']} vdev{'s' if r['vdev_count'] > 1 else ''}): "
                    f"{r['speed_bytes_per_s'] / disk:.1f} disks' worth of writes ({dd} in theory)."
                )
    if one.height and not one["within_model"].all():
        res.caveats.append("layouts outside the disk model: another limit")
    if not layouts.height and one.is_empty():
        res.missing.append(
            f"no single-disk run to compare layouts with for {sel.describe()}: benchmark one of the disks "
            "alone with the same workload and label it vdev_type=single (or vdev_count=1, vdev_width=1)"
        )

    from ..claims import study_claims

    ars = against_sum_rule(ars_two_vdevs(study_claims(sel.study)))
    res.frames["stated_two_vdevs"] = ars
    for r in ars.iter_rows(named=True):
        res.findings.append(
            f"Stated by the study (no raw data): {r['vdev_class']}, n = 2 {r['n_counts']}: "
            f"{r['pct_of_one']:.0f} % of one = {r['ratio']:.2f}x against the rule's {r['ideal']:.1f}x "
            f"({r['deviation_pct']:+.1f} %)."
        )
    res.verdict = _verdict(res)
    return res


def _verdict(res) -> str:
    """One sentence from what the selection measured: the fastest layout of each write test against the disk model,
    the serial-reader fit, the layouts against one disk; else the study's stated figures (said to be stated)."""
    from ..units import MiB
    from . import prose

    parts = []
    if res.has("best"):
        writes = res["best"].filter(pl.col("test").map_elements(direction_of, return_dtype=pl.String) == "write")
        for (test,), g in writes.group_by("test", maintain_order=True):
            r = g.sort("speed_bytes_per_s", descending=True).row(0, named=True)
            model = (
                f"the disk model's {r['disk_model_ratio']:.2g}x"
                if r["layouts_disks"] == 1
                else f"the sum-of-vdevs rule's {r['ideal']:.0f}x"
            )
            parts.append(
                f"{test} at best {r['speed_bytes_per_s'] / MiB:.1f} MiB/s ({r['vdev_type']} {r['layout']}), "
                f"{r['relative']:.2f}x its one-vdev layout against {model}"
            )
    if res.has("serial_reader"):
        fit = res["serial_reader"]
        parts.append(
            f"{fit['test'][0]} fits a serial-reader model (fitted, mean error {fit['error_pct'].abs().mean():.1f} %)"
        )
    if res.has("single_disk"):
        parts.append(
            "against one disk: "
            + prose.listing(
                [
                    f"{r['label']} {r['direction']} {r['ratio']:.2f}x (model "
                    + (
                        f"{r['model_low']:g}x"
                        if r["model_low"] == r["model_high"]
                        else f"{r['model_low']:g}-{r['model_high']:g}x"
                    )
                    + ")"
                    for r in res["single_disk"].iter_rows(named=True)
                ],
                limit=4,
            )
        )
    if parts:
        return "Measured: " + "; ".join(parts) + "."
    if res.has("stated_two_vdevs"):
        st = res["stated_two_vdevs"]
        return (
            "Stated by the study, not measured here: "
            + prose.listing(
                [f"{r['vdev_class']} n = 2 {r['ratio']:.2f}x ({r['n_counts']})" for r in st.iter_rows(named=True)]
            )
            + " against the rule's 2x."
        )
    return ""


def _serial_findings(res, layouts: pl.DataFrame, test: str, record_bytes: int = 131072) -> None:
    from ..units import MiB

    one = layouts.filter(pl.col("test") == test)
    if one.is_empty():
        return
    try:
        fitted, terms = serial_reader(one, record_bytes)
    except ValueError as e:
        res.missing.append(f"no serial-reader fit for {test}: {e}")
        return
    res.frames["serial_reader"] = fitted
    res.headline[f"{test} as one serial reader"] = (
        f"fitted model, mean error {terms['mean_error_pct']:.1f} % over {terms['layouts']} layouts"
    )
    rate = terms["disk_rate_bytes_per_s"]
    transfer = f"the bytes each disk reads at {rate / MiB:.1f} MiB/s" if rate else "no transfer term (fitted <= 0)"
    res.findings.append(
        f"Model (fitted, not measured), {test} as one serial reader of {record_bytes // 1024} KiB records: per record "
        f"{terms['fixed_s'] * 1e3:.3f} ms + {terms['per_disk_s'] * 1e3:.4f} ms per disk it waits for + {transfer}; "
        f"fitted to {terms['layouts']} layouts, mean error {terms['mean_error_pct']:.1f} %, worst "
        f"{terms['worst_error_pct']:.1f} %."
    )
    for vt in sorted(set(fitted["vdev_type"].to_list())):
        f = fitted.filter(pl.col("vdev_type") == vt).sort("vdev_count")
        best = f.sort("speed_bytes_per_s", descending=True).row(0, named=True)
        lo, hi = f["model_bytes_per_s"].min(), f["model_bytes_per_s"].max()
        model = (
            f"model {lo / MiB:.1f} MiB/s at every vdev count"
            if hi - lo < 1e-9 * hi
            else f"model {lo / MiB:.1f}-{hi / MiB:.1f} MiB/s (best at "
            f"{f.sort('model_bytes_per_s', descending=True)['vdev_count'][0]} vdevs)"
        )
        res.findings.append(
            f"  {vt}: measured {f['speed_bytes_per_s'].min() / MiB:.1f}-{f['speed_bytes_per_s'].max() / MiB:.1f} MiB/s "
            f"(best at {best['vdev_count']} vdevs), {model}."
        )
    res.findings.append(
        "  A mirror reads each record from one disk, so its reader waits for one disk's transfer "
        "whatever the layout; RAIDZ splits the record over its data disks: wide vdevs wait for many "
        "disks, narrow ones move more bytes per disk, so speed rises and then falls. The fit shows the "
        "shape is consistent with a serial reader; it does not identify the hardware behind each term."
    )


# ----------------------------------------------------------------------------- against one disk

BONNIE_SQL = """
SELECT f.file_id, f.path, coalesce(f.label, f.path) AS label, f.stack, f.vdev_type, f.vdev_count, f.vdev_width,
       f.host, f.devices, f.cache_devices, f.log_devices, f.phase, b.size_bytes, b.chunk_bytes, b.concurrency, r.test,
       coalesce(r.bytes_per_s, r.ops_per_s) AS value
FROM bonnie_results r JOIN bonnie_runs b USING (file_id, run_index, source) JOIN files f USING (file_id)
WHERE {where} AND b.preferred AND r.test IN ('put_block', 'get_block', 'seeks')
  AND b.run_index = (SELECT min(run_index) FROM bonnie_runs b2 WHERE b2.file_id = b.file_id AND b2.preferred)
"""
BONNIE_DIRECTION = {"put_block": "write", "get_block": "read", "seeks": "seeks"}


def family(stack: str | None) -> str | None:
    """The filesystem family of a stack label, without its redundancy: 'btrfs-raid1' -> 'btrfs',
    'mergerfs+btrfs-raid1' -> 'mergerfs+btrfs', 'zfs' -> 'zfs'."""
    return None if stack is None else re.sub(r"-(raid\d*|mirror|raidz\d?|stripe)\b", "", stack)


def disk_model(direction: str, vdev_type: str | None, count: int, width: int) -> tuple[float, float, str]:
    """What the layout should give relative to one of its disks, (low, high, why), for streaming writes, streaming
    reads and random reads (seeks): a w-way mirror writes every block to all w disks (1x per vdev) and may read
    from all of them (up to w x); a RAIDZ-p vdev streams over its w - p data disks and serves about one random
    read at a time; n vdevs add up."""
    n, w = count or 1, width or 1
    if vdev_type == "mirror":
        if direction == "write":
            return n, n, f"{n} mirror vdev(s): each writes every block to all {w} disks"
        return n, n * w, f"{n} x {w}-way mirror: reads from 1 to {w} disks per vdev"
    if vdev_type in PARITY and vdev_type != "single":
        p = PARITY[vdev_type]
        if direction == "seeks":
            return n, n, f"{n} {vdev_type} vdev(s): one random read at a time each"
        return n * (w - p), n * (w - p), f"{n} x {w}-wide {vdev_type}: {w - p} data disks each"
    return n * w, n * w, f"{n * w} disk(s) striped"


def is_single_disk(r: dict) -> bool:
    return r["vdev_type"] == "single" or ((r["vdev_count"] or 0) == 1 and (r["vdev_width"] or 0) == 1)


SINGLE_SCHEMA = {
    "label": pl.String,
    "single": pl.String,
    "direction": pl.String,
    "value": pl.Float64,
    "single_value": pl.Float64,
    "ratio": pl.Float64,
    "model_low": pl.Float64,
    "model_high": pl.Float64,
    "model": pl.String,
    "within_model": pl.Boolean,
    "file_id": pl.Int64,
    "single_file_id": pl.Int64,
}


def one_of_its_disks(single: dict, pool: dict) -> bool:
    """Whether a single-disk run can stand for one disk of the pool's: the same host where both are labelled, and
    where both name their devices, the single disk's among the pool's ('Optane M10' is not one of '6x HDD')."""
    if single.get("host") and pool.get("host") and single["host"] != pool["host"]:
        return False
    mine, theirs = _words(single.get("devices")), _words(pool.get("devices"))
    if not mine or not theirs:
        return True  # not labelled on one side: nothing says it is another disk
    models = {w for w in mine if len(w) >= 4 and re.search(r"[a-z]", w) and re.search(r"\d", w)}  # ST4000DM004
    return bool(models & theirs) if models else mine <= theirs


def _words(devices: str | None) -> set[str]:
    """The words of a devices label, counts ('2x') left out: '1x Seagate ST4000DM004' -> {seagate, st4000dm004}."""
    return {w for w in re.findall(r"[a-z0-9]+", (devices or "").lower()) if not re.fullmatch(r"\d+x?", w)}


def against_single_disk(rows: pl.DataFrame, group: list[str]) -> pl.DataFrame:
    """Each labelled layout against the single-disk run of the same family and group (workload, options), one of
    its own disks (``one_of_its_disks``): measured ratio and the model's range. ``rows``: label, family, direction,
    value, vdev_type/count/width + group (+ host, devices, random where known). Random I/O on a RAIDZ vdev is
    modelled as one disk per vdev (every block touches all its disks), not as its data disks streaming."""
    out = []
    labelled = rows.filter(pl.col("vdev_count").is_not_null() | pl.col("vdev_type").is_not_null())
    for r in labelled.iter_rows(named=True):
        if is_single_disk(r) or r["value"] is None:
            continue
        base = labelled.filter(pl.all_horizontal(pl.col(c).eq_missing(r[c]) for c in ["family", "direction", *group]))
        base = [b for b in base.iter_rows(named=True) if is_single_disk(b) and b["value"] and one_of_its_disks(b, r)]
        if not base:
            continue
        b = base[0]
        random_raidz = bool(r.get("random")) and r["vdev_type"] in PARITY and r["vdev_type"] != "single"
        lo, hi, why = disk_model(
            "seeks" if random_raidz else r["direction"], r["vdev_type"], r["vdev_count"] or 1, r["vdev_width"] or 1
        )
        if random_raidz:
            why = f"random I/O: {r['vdev_count'] or 1} {r['vdev_type']} vdev(s), about one disk's I/O each"
        ratio = r["value"] / b["value"]
        out.append(
            dict(
                label=r["label"],
                single=b["label"],
                direction=r["direction"],
                value=r["value"],
                single_value=b["value"],
                ratio=ratio,
                model_low=float(lo),
                model_high=float(hi),
                model=why,
                within_model=lo * 0.9 <= ratio <= hi * 1.1,
                file_id=r["file_id"],
                single_file_id=b["file_id"],
            )
        )
    return pl.DataFrame(out, schema=SINGLE_SCHEMA, orient="row") if out else pl.DataFrame(schema=SINGLE_SCHEMA)


def single_disk_comparisons(con, sel, runs: pl.DataFrame) -> pl.DataFrame:
    """fio runs (by workload and direction) and bonnie++ runs (by size, chunk, concurrency, cache and log devices;
    block write, block read, seeks) against a single-disk run of the same filesystem family."""
    from .db import frame

    parts = []
    if runs.height:
        fio_rows = runs.select(
            "file_id",
            "label",
            "vdev_type",
            "vdev_count",
            "vdev_width",
            "direction",
            "host",
            "devices",
            pl.col("bw_bytes_per_s").alias("value"),
            pl.col("workload").alias("group"),
            family=pl.col("stack").map_elements(family, return_dtype=pl.String),
            random=pl.col("wl_rw").fill_null("").str.starts_with("rand"),
        )
        parts.append(against_single_disk(fio_rows, ["group"]).with_columns(tool=pl.lit("fio")))
    where, params = sel.sql("f")
    b = frame(con, BONNIE_SQL.format(where=where), params)
    if b.height:
        b = b.with_columns(
            direction=pl.col("test").replace_strict(BONNIE_DIRECTION),
            family=pl.col("stack").map_elements(family, return_dtype=pl.String),
        )
        parts.append(
            against_single_disk(
                b, ["size_bytes", "chunk_bytes", "concurrency", "cache_devices", "log_devices"]
            ).with_columns(tool=pl.lit("bonnie++"))
        )
    return pl.concat(parts) if parts else pl.DataFrame(schema={**SINGLE_SCHEMA, "tool": pl.String})

"""Your runs beside a study's (``storagelab compare``, notebook 08's ``compare_study``): fio runs of the same
workload side by side, per vdev and per disk where the layout is labelled, with run-to-run noise where there are
repeats.

A run's figure is its group bandwidth (``fio_runs``: total I/O over elapsed time, never the jobs' rates added nor
fio's per-sample means). A configuration is a stack | layout and the run's label without its 'run N' mark
(``fio_runs.config_label``): repeats of one configuration are its runs (also runs appended in one file); different
labels are different configurations, never pooled as repeats. Each of your configurations is tested against each
of the other side's with ``stats.compare``, which says the test it used: Welch's t where both sides have repeats,
one run against the other side's prediction interval for one new run, or no test where neither has repeats.

Runs match on the workload without its size and runtime (``fio_runs``' ``workload_at_any_size``: rw, block
size, iodepth, numjobs, ioengine, direct, sync, fsync): a study's 16 GiB file and your 1 GiB one run the same I/O pattern, but a file smaller than RAM
may be answered by a cache, so the sizes are shown beside the figures. Per vdev = bandwidth / vdev_count; per disk
= bandwidth / (vdev_count x vdev_width), from the manifest labels; neither is computed where a label is missing.
"""

from __future__ import annotations

import polars as pl

from . import design, fio_runs, prose, stats
from .selection import Selection


def _size(text: str | None) -> str:
    return fio_runs.fmt_bytes(int(text)) if text and text.isdigit() else (text or "?")


SIDE_GROUP = ("side", "match", "direction", "label_set", "config")


def _with_match(runs: pl.DataFrame, side: str) -> pl.DataFrame:
    if runs.is_empty():
        return runs.with_columns(
            side=pl.lit(side),
            match=pl.lit(None, pl.String),
            per_vdev=pl.lit(None, pl.Float64),
            per_disk=pl.lit(None, pl.Float64),
            label_set=pl.lit(None, pl.String),
            config=pl.lit(None, pl.String),
        )
    layout = pl.concat_str(
        [
            pl.col("vdev_type").fill_null("?"),
            pl.col("vdev_count").cast(pl.String).fill_null("?"),
            pl.col("vdev_width").cast(pl.String).fill_null("?"),
        ],
        separator=" ",
    )
    return design.with_design(runs).with_columns(
        side=pl.lit(side),
        match=pl.col("workload_at_any_size"),
        size=pl.col("wl_size").map_elements(_size, return_dtype=pl.String),
        per_vdev=pl.col("bw_bytes_per_s") / pl.col("vdev_count"),
        per_disk=pl.col("bw_bytes_per_s") / (pl.col("vdev_count") * pl.col("vdev_width")),
        # runs of one layout and stack are repeats of one configuration
        label_set=pl.concat_str([pl.col("stack").fill_null("?"), layout], separator=" | "),
        config=fio_runs.config_label(),
    )


def beside(mine: pl.DataFrame, theirs: pl.DataFrame) -> pl.DataFrame:
    """One row per side, workload, direction and configuration (stack | vdev type count width, and the label without
    its 'run N' mark): runs, mean and standard deviation of bandwidth (bytes/s), per vdev, per disk, the runs' own
    figures (``values``, ``per_disk_values``: what ``verdicts`` tests), the sizes and runtimes used, the labels."""
    both = pl.concat([_with_match(mine, "mine"), _with_match(theirs, "study")], how="diagonal_relaxed")
    common = (
        both.group_by("match", "direction")
        .agg(pl.col("side").n_unique().alias("sides"))
        .filter(pl.col("sides") == 2)
        .drop("sides")
    )
    rows = both.join(common, on=["match", "direction"], how="semi")
    if rows.is_empty():
        return rows
    return (
        rows.group_by(list(SIDE_GROUP), maintain_order=True)
        .agg(
            pl.len().alias("runs"),
            pl.col("bw_bytes_per_s").mean().alias("bw_mean_bytes_per_s"),
            pl.col("bw_bytes_per_s").std().alias("bw_sd_bytes_per_s"),
            pl.col("per_vdev").mean().alias("per_vdev_bytes_per_s"),
            pl.col("per_disk").mean().alias("per_disk_bytes_per_s"),
            pl.col("per_disk").std().alias("per_disk_sd_bytes_per_s"),
            pl.col("bw_bytes_per_s").alias("values"),
            pl.col("per_disk").alias("per_disk_values"),
            pl.col("size").unique().sort().str.join(", ").alias("sizes"),
            pl.col("wl_runtime").fill_null("?").unique().sort().str.join(", ").alias("runtimes"),
            pl.col("label").fill_null(pl.col("path")).unique().sort().str.join("; ").alias("labels"),
            pl.col("file_id").alias("file_ids"),
            pl.col("design_flags")
            .list.explode(keep_nulls=False, empty_as_null=False)
            .unique()
            .sort()
            .alias("design_flags"),
        )
        .sort("match", "direction", "side", "label_set", "config")
    )


def _name(who: str, row: dict) -> str:
    """'yours btrfs raid1 (btrfs-raid1 | mirror 1 2) ⚠ overran, stall': whose, the configuration, the design flags
    of its runs (``design``)."""
    flags = row.get("design_flags") or []
    mark = f" {design.MARK} {', '.join(flags)}" if flags else ""
    return f"{who} {row['config']} ({row['label_set']}){mark}"


def verdict(a: dict, b: dict, names: tuple[str, str]) -> dict:
    """One of your configurations (a ``beside`` row) against one of the other side's: per disk where both know
    their layout, else as measured, tested by ``stats.compare`` on the runs' own figures."""
    per_disk = a["per_disk_bytes_per_s"] is not None and b["per_disk_bytes_per_s"] is not None
    col = "per_disk_values" if per_disk else "values"
    c = stats.compare(stats.summarise(a[col]), stats.summarise(b[col]))
    who_a, who_b = _name(names[0], a), _name(names[1], b)
    return dict(
        match=a["match"],
        direction=a["direction"],
        mine=f"{a['config']} ({a['label_set']})",
        study=f"{b['config']} ({b['label_set']})",
        basis="per disk" if per_disk else "as measured (a layout label is missing)",
        runs=f"{c.a.n} and {c.b.n}",
        test=c.test,
        test_name=c.test_name,
        diff_pct=c.diff_pct,
        interval_pct=c.interval_pct,
        p_value=c.p_value,
        differs=c.differs,
        text=f"{who_a} against {who_b}: {prose.comparison(c, names[0], names[1])}",
        sizes=f"{names[0]} {a['sizes'] or '?'}, {names[1]} {b['sizes'] or '?'}"
        + ("" if a["sizes"] == b["sizes"] else " (they differ: the smaller file may be answered by a cache)"),
    )


def verdicts(table: pl.DataFrame, names: tuple[str, str] = ("yours", "the study's")) -> list[dict]:
    """Each of your configurations against each of the study's (or the other selection's: ``names`` say whose),
    same workload and direction (``verdict``)."""
    out = []
    for _, g in table.group_by("match", "direction", maintain_order=True):
        theirs = list(g.filter(pl.col("side") == "study").iter_rows(named=True))
        for a in g.filter(pl.col("side") == "mine").iter_rows(named=True):
            out += [verdict(a, b, names) for b in theirs]
    return out


def analyse(con, mine: Selection, other: str | Selection):
    """Your selection's fio runs beside ``other``'s runs of the same workload: a study (its name), or any
    selection (``Selection.parse("host=nas2")``), whose runs that are also yours are left out."""
    from . import prose
    from .result import Result

    if isinstance(other, str):
        if not other:
            raise ValueError("name the study to compare with (e.g. homelab-mergerfs)")
        theirs_sel, names = Selection(study=other), ("yours", "the study's")
        if mine.is_study(other):
            raise ValueError(f"your selection is the study {other!r} itself: select your own runs (e.g. study='lab')")
    else:
        theirs_sel, names = other, (f"[{mine.describe()}]", f"[{other.describe()}]")
        if theirs_sel == mine:
            raise ValueError(f"the two selections are the same ({mine.describe()}): choose another to compare with")
    study = theirs_sel.describe() if not isinstance(other, str) else other
    a = fio_runs.runs(con, mine)
    b = fio_runs.runs(con, theirs_sel).filter(~pl.col("file_id").is_in(a["file_id"].to_list()))  # yours are not theirs
    res = Result(mine)
    if a.is_empty() or b.is_empty():
        who = mine.describe() if a.is_empty() else (f"study {study}" if isinstance(other, str) else study)
        res.missing.append(f"no fio runs for {who}: nothing to put side by side")
        return res
    table = beside(a, b)
    res.frames["beside"] = table
    if table.is_empty():
        yours = sorted(set(_with_match(a, "mine")["match"].to_list()))
        theirs = sorted(set(_with_match(b, "study")["match"].to_list()))
        res.missing.append(
            f"no workload in common: yours {prose.listing(yours)}; {study}'s {prose.listing(theirs)}. "
            f"Run the study's workload (e.g. `storagelab lab fio --preset` with the study's method)"
        )
        return res
    res.file_ids = [i for ids in table["file_ids"].to_list() for i in ids]
    pairs = verdicts(table, names)
    res.frames["verdicts"] = pl.DataFrame(pairs, infer_schema_length=None)
    for p in pairs:
        res.findings.append(f"{p['match']} ({p['direction']}), {p['basis']}: {p['text']}. Sizes: {p['sizes']}.")
    if table.filter(pl.col("per_disk_bytes_per_s").is_null()).height:
        res.missing.append(
            "runs without vdev_type, vdev_count and vdev_width labels are compared as measured, not per "
            "disk: label the layout in the manifest (`storagelab lab fio` records it for ZFS pools)"
        )
    return res


def display_frame(table: pl.DataFrame) -> pl.DataFrame:
    """``beside`` for a reader: MiB/s (2^20 bytes/s) columns, one per quantity, no list columns."""
    mib = float(1 << 20)
    return table.select(
        "match",
        "direction",
        pl.col("side").replace({"mine": "yours"}),
        pl.col("label_set").alias("stack | layout"),
        pl.col("config").alias("configuration"),
        "runs",
        (pl.col("bw_mean_bytes_per_s") / mib).round(1).alias("MiB/s"),
        (pl.col("bw_sd_bytes_per_s") / mib).round(1).alias("sd MiB/s"),
        (pl.col("per_vdev_bytes_per_s") / mib).round(1).alias("per vdev MiB/s"),
        (pl.col("per_disk_bytes_per_s") / mib).round(1).alias("per disk MiB/s"),
        "sizes",
        "runtimes",
        "labels",
    )

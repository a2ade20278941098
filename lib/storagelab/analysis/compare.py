"""Your runs beside a study's (``storagelab compare``, notebook 08's ``compare_study``): fio runs of the same
workload side by side, per vdev and per disk where the layout is labelled, with run-to-run noise where there are
repeats.

A run's figure is its group bandwidth (``fio_runs``: total I/O over elapsed time, never the jobs' rates added nor
fio's per-sample means). A configuration is a stack | layout and the run's label without its 'run N' mark
(``fio_runs.config_label``) with every other setup column the manifest gives agreeing (``repeat_groups``):
repeats of one configuration are its runs (also runs appended in one file); different labels (or notes,
recordsize, ...) are different configurations, never pooled as repeats. Each of your configurations is tested against each
of the other side's with ``stats.compare``, which says the test it used: Welch's t where both sides have repeats,
one run against the other side's prediction interval for one new run, or no test where neither has repeats.

Runs match on the workload without its size and runtime (``fio_runs``' ``workload_at_any_size``: rw, block
size, iodepth, numjobs, ioengine, direct, sync, fsync): a study's 16 GiB file and your 1 GiB one run the same I/O pattern, but a file smaller than RAM
may be answered by a cache, so the sizes are shown beside the figures. Per vdev = bandwidth / vdev_count; per disk
= bandwidth / (vdev_count x vdev_width), from the manifest labels; neither is computed where a label is missing.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from . import design, fio_runs, prose, repeat_groups, stats
from .result import Result
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
    layout = (
        pl.when(pl.col("vdev_type").is_null() & pl.col("vdev_count").is_null() & pl.col("vdev_width").is_null())
        .then(pl.lit("layout not labelled"))  # as 08 says it (a new user had read 'ext4 | ? ? ?')
        .otherwise(
            pl.concat_str(
                [
                    pl.col("vdev_type").fill_null("?"),
                    pl.col("vdev_count").cast(pl.String).fill_null("?"),
                    pl.col("vdev_width").cast(pl.String).fill_null("?"),
                ],
                separator=" ",
            )
        )
    )
    # repeats of one configuration: one label (less 'run N') and every setup column agreeing (``repeat_groups``)
    runs = repeat_groups.with_names(runs.with_columns(config_name=fio_runs.config_label(runs)), "config_name", "config")
    return design.with_design(runs).with_columns(
        side=pl.lit(side),
        match=pl.col("workload_at_any_size"),
        size=pl.col("wl_size").map_elements(_size, return_dtype=pl.String),
        per_vdev=pl.col("bw_bytes_per_s") / pl.col("vdev_count"),
        per_disk=pl.col("bw_bytes_per_s") / (pl.col("vdev_count") * pl.col("vdev_width")),
        # runs of one layout and stack are repeats of one configuration
        label_set=pl.concat_str([pl.col("stack").fill_null("?"), layout], separator=" | "),
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


def _who(whose: str, config: str, flags: tuple[str, ...]) -> str:
    """'yours btrfs raid1 (btrfs-raid1 | mirror 1 2) ⚠ overran, stall': whose, the configuration, the design flags
    of its runs (``design``)."""
    return f"{whose} {config}" + (f" {design.MARK} {', '.join(flags)}" if flags else "")


@dataclass(frozen=True)
class Verdict:
    """One of your configurations against one of the other side's, same workload and direction: per disk where both
    know their layout, else as measured; ``comparison`` is ``stats.compare`` on the runs' own figures (it says which
    test it used)."""

    match: str
    direction: str
    mine: str  # configuration (stack | layout)
    theirs: str
    mine_flags: tuple[str, ...]  # design flags of its runs
    theirs_flags: tuple[str, ...]
    per_disk: bool
    mine_sizes: str
    theirs_sizes: str
    comparison: stats.Comparison

    def row(self) -> dict:
        """The named numbers as one row of the ``verdicts`` frame."""
        c = self.comparison
        return dict(
            match=self.match,
            direction=self.direction,
            mine=self.mine,
            study=self.theirs,
            basis="per disk" if self.per_disk else "as measured (a layout label is missing)",
            mine_runs=c.a.n,
            study_runs=c.b.n,
            test=c.test,
            diff_pct=c.diff_pct,
            interval_pct=c.interval_pct,
            p_value=c.p_value,
            differs=c.differs,
        )


def verdict(a: dict, b: dict) -> Verdict:
    """A ``beside`` row of yours against one of the other side's."""
    per_disk = a["per_disk_bytes_per_s"] is not None and b["per_disk_bytes_per_s"] is not None
    col = "per_disk_values" if per_disk else "values"
    return Verdict(
        match=a["match"],
        direction=a["direction"],
        mine=f"{a['config']} ({a['label_set']})",
        theirs=f"{b['config']} ({b['label_set']})",
        mine_flags=tuple(a.get("design_flags") or ()),
        theirs_flags=tuple(b.get("design_flags") or ()),
        per_disk=per_disk,
        mine_sizes=a["sizes"] or "?",
        theirs_sizes=b["sizes"] or "?",
        comparison=stats.compare(stats.summarise(a[col]), stats.summarise(b[col])),
    )


def verdicts(table: pl.DataFrame) -> list[Verdict]:
    """Each of your configurations against each of the study's (or the other selection's), same workload and
    direction."""
    out = []
    for _, g in table.group_by("match", "direction", maintain_order=True):
        theirs = list(g.filter(pl.col("side") == "study").iter_rows(named=True))
        for a in g.filter(pl.col("side") == "mine").iter_rows(named=True):
            out += [verdict(a, b) for b in theirs]
    return out


def sentence(v: Verdict, names: tuple[str, str] = ("yours", "the study's")) -> str:
    """The findings step for one verdict: the workload, the basis, the test and its numbers, the sizes."""
    who_a, who_b = _who(names[0], v.mine, v.mine_flags), _who(names[1], v.theirs, v.theirs_flags)
    basis = "per disk" if v.per_disk else "as measured (a layout label is missing)"
    sizes = f"{names[0]} {v.mine_sizes}, {names[1]} {v.theirs_sizes}" + (
        "" if v.mine_sizes == v.theirs_sizes else " (they differ: the smaller file may be answered by a cache)"
    )
    return (
        f"{v.match} ({v.direction}), {basis}: {who_a} against {who_b}: "
        f"{prose.comparison(v.comparison, names[0], names[1])}. Sizes: {sizes}."
    )


def query(con, mine: Selection, other: str | Selection) -> tuple[pl.DataFrame, pl.DataFrame, tuple[str, str], str]:
    """SQL to frames: your runs, the other side's (yours left out), what to call each side, the other's name."""
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
    a = fio_runs.runs(con, mine)
    b = fio_runs.runs(con, theirs_sel).filter(~pl.col("file_id").is_in(a["file_id"].to_list()))  # yours are not theirs
    return a, b, names, other if isinstance(other, str) else theirs_sel.describe()


def analyse(con, mine: Selection, other: str | Selection):
    """Your selection's fio runs beside ``other``'s runs of the same workload: a study (its name), or any
    selection (``Selection.parse("host=nas2")``), whose runs that are also yours are left out. ``query``, then
    ``beside`` and ``verdicts`` (compute), then sentences from them."""

    a, b, names, study = query(con, mine, other)
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
    pairs = verdicts(table)
    res.frames["verdicts"] = pl.DataFrame([v.row() for v in pairs], infer_schema_length=None)
    res.findings += [sentence(v, names) for v in pairs]
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

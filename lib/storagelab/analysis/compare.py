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

Every run gets the one verdict of notebooks 05, 08 and 10 (``run_verdicts.verdicts``: a design flag, two regimes or
dips in its logs, a firm plausibility flag) and is left out of the test as 08 leaves it out: a configuration is
tested on its unflagged runs only, and one whose runs are all flagged is shown (its mean, marked) but compared with
nothing. A run fio reported as failed (``fio_failed.failed_runs``: a job's error, e.g. 28 ENOSPC) measured only
what it did before the error: it is named as failed with its line and kept out of the table, ratios and tests.

Runs match on the workload without its size and runtime (``fio_runs``' ``workload_at_any_size``: rw, block
size, iodepth, numjobs, ioengine, direct, sync, fsync): a study's 16 GiB file and your 1 GiB one run the same I/O pattern, but a file smaller than RAM
may be answered by a cache, so the sizes are shown beside the figures. Per vdev = bandwidth / vdev_count; per disk
= bandwidth / (vdev_count x vdev_width), from the manifest labels; neither is computed where a label is missing.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from . import design, fio_runs, prose, repeat_groups, run_verdicts, stats
from .result import Finding, Result, cite, lines_of
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
    runs = runs if "design_flags" in runs.columns else design.with_design(runs)
    return runs.with_columns(
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
    its 'run N' mark): runs, flagged runs (``suspect``: ``run_verdicts``) and why, mean and standard deviation of
    bandwidth (bytes/s) of the runs that count (``run_verdicts.counted``), per vdev, per disk, the unflagged runs'
    own figures (``values``, ``per_disk_values``: what ``verdicts`` tests), the sizes and runtimes, the labels."""
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
    if "suspect" not in rows.columns:  # runs without a verdict: none is left out
        rows = rows.with_columns(suspect=pl.lit(False), why=pl.lit(None, pl.String))
    ok = ~pl.col("suspect")
    # the runs that count in a configuration's mean: its unflagged ones, or all where all are flagged (then the
    # row is flagged and tested against nothing): run_verdicts.counted, the rule of 05, 08 and 10
    rows = rows.with_columns(counted=run_verdicts.counted(pl.col("suspect"), SIDE_GROUP))
    counted = pl.col("counted")
    return (
        rows.group_by(list(SIDE_GROUP), maintain_order=True)
        .agg(
            pl.len().alias("runs"),
            (~ok).sum().alias("flagged_runs"),
            pl.col("bw_bytes_per_s").filter(counted).mean().alias("bw_mean_bytes_per_s"),
            pl.col("bw_bytes_per_s").filter(counted).std().alias("bw_sd_bytes_per_s"),
            pl.col("per_vdev").filter(counted).mean().alias("per_vdev_bytes_per_s"),
            pl.col("per_disk").filter(counted).mean().alias("per_disk_bytes_per_s"),
            pl.col("per_disk").filter(counted).std().alias("per_disk_sd_bytes_per_s"),
            pl.col("bw_bytes_per_s").filter(ok).alias("values"),  # what ``verdicts`` tests: unflagged runs only
            pl.col("per_disk").filter(ok).alias("per_disk_values"),
            pl.col("why").filter(~ok).drop_nulls().unique().sort().alias("why"),
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


def _left_out(row: dict) -> str:
    """' (2 of 10 runs flagged, left out: ⚠ short; ⚠ dips ...)' for a ``beside`` row with flagged runs, else ''."""
    if not row.get("flagged_runs"):
        return ""
    why = "; ".join(row.get("why") or ()) or "flagged"
    return f" ({row['flagged_runs']} of {row['runs']} runs flagged, left out: {why})"


@dataclass(frozen=True)
class Verdict:
    """One of your configurations against one of the other side's, same workload and direction: per disk where both
    know their layout, else as measured; ``comparison`` is ``stats.compare`` on the unflagged runs' own figures (it
    says which test it used)."""

    match: str
    direction: str
    mine: str  # configuration (stack | layout)
    theirs: str
    mine_left: str  # its flagged runs left out, and why (``_left_out``)
    theirs_left: str
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


def _config(row: dict) -> str:
    return f"{row['config']} ({row['label_set']})"


def verdict(a: dict, b: dict) -> Verdict:
    """A ``beside`` row of yours against one of the other side's, both with unflagged runs."""
    per_disk = a["per_disk_bytes_per_s"] is not None and b["per_disk_bytes_per_s"] is not None
    col = "per_disk_values" if per_disk else "values"
    return Verdict(
        match=a["match"],
        direction=a["direction"],
        mine=_config(a),
        theirs=_config(b),
        mine_left=_left_out(a),
        theirs_left=_left_out(b),
        per_disk=per_disk,
        mine_sizes=a["sizes"] or "?",
        theirs_sizes=b["sizes"] or "?",
        comparison=stats.compare(stats.summarise(a[col]), stats.summarise(b[col])),
    )


def _testable(g: pl.DataFrame, side: str) -> list[dict]:
    return list(g.filter((pl.col("side") == side) & (pl.col("values").list.len() > 0)).iter_rows(named=True))


def verdicts(table: pl.DataFrame) -> list[Verdict]:
    """Each of your configurations against each of the study's (or the other selection's), same workload and
    direction, where both have an unflagged run (a configuration whose runs are all flagged: ``all_flagged``)."""
    out = []
    for _, g in table.group_by("match", "direction", maintain_order=True):
        theirs = _testable(g, "study")
        out += [verdict(a, b) for a in _testable(g, "mine") for b in theirs]
    return out


def all_flagged(table: pl.DataFrame, names: tuple[str, str]) -> list[str]:
    """One sentence per workload and direction naming the configurations whose runs are all flagged: compared with
    nothing, as notebook 08 leaves them out ('every run is flagged, so none is compared')."""
    out = []
    flagged = table.filter(pl.col("values").list.len() == 0)
    for (match, direction), g in flagged.group_by("match", "direction", maintain_order=True):
        each = [
            f"{names[0] if r['side'] == 'mine' else names[1]} {_config(r)}, {r['runs']} run(s): "
            f"{'; '.join(r['why'] or ()) or 'flagged'}"
            for r in g.iter_rows(named=True)
        ]
        out.append(
            f"{match} ({direction}): not compared or tested, every run flagged: {'; '.join(each)}. A flagged run is "
            "left out of comparisons (the rule of notebooks 05, 08 and 10): its mean is shown, marked, and nothing "
            "is said of it against another run."
        )
    return out


def sentence(v: Verdict, names: tuple[str, str] = ("yours", "the study's")) -> str:
    """The findings step for one verdict: the workload, the basis, the test and its numbers, the sizes."""
    who_a, who_b = f"{names[0]} {v.mine}{v.mine_left}", f"{names[1]} {v.theirs}{v.theirs_left}"
    basis = "per disk" if v.per_disk else "as measured (a layout label is missing)"
    sizes = f"{names[0]} {v.mine_sizes}, {names[1]} {v.theirs_sizes}" + (
        "" if v.mine_sizes == v.theirs_sizes else " (they differ: the smaller file may be answered by a cache)"
    )
    return (
        f"{v.match} ({v.direction}), {basis}: {who_a} against {who_b}: "
        f"{prose.comparison(v.comparison, names[0], names[1])}. Sizes: {sizes}."
    )


def failed_sentences(failed: pl.DataFrame, names: tuple[str, str]) -> list[Finding]:
    """One sentence per run fio reported as failed: its side, name, fio's error and its line, what its figure is."""
    out = []
    for r in failed.unique(["side", "file_id", "doc_index", "groupid"], maintain_order=True).iter_rows(named=True):
        where = {
            "path": r["path"],
            "line_start": r["failed_line_start"],
            "line_end": r["failed_line_end"],
            "sha256": r.get("sha256"),
        }
        rate = prose.rate(r["bw_bytes_per_s"]) if r["bw_bytes_per_s"] else "no bandwidth"
        out.append(
            Finding(
                f"{names[0] if r['side'] == 'mine' else names[1]} {r['config']}: failed: fio reported {r['failed']} "
                f"(line {r['failed_line_start']}): it stopped there, so its {rate} ({r['match']}, "
                f"{r['direction']}) is only what it did before the error; not compared or tested.",
                [cite(r["failed"].split(" for job ")[0], lines_of(where))],
            )
        )
    return out


def cache_unchecked(a: pl.DataFrame, b: pl.DataFrame, table: pl.DataFrame, names: tuple[str, str]) -> list[str]:
    """The cache check (working set against RAM, ``design.missing``) that could not be made for the runs set side by
    side, named by side and configuration: a run whose RAM is unknown may have been answered by the page cache."""
    rows = [
        _with_match(x, s).with_columns(who=pl.lit(n + " ") + pl.col("config"))
        for x, s, n in ((a, "mine", names[0]), (b, "study", names[1]))
    ]
    both = pl.concat(rows, how="diagonal_relaxed").join(
        table.select("match", "direction").unique(), on=["match", "direction"], how="semi"
    )
    return design.missing(both, "who")


def query(con, mine: Selection, other: str | Selection) -> tuple[pl.DataFrame, pl.DataFrame, tuple[str, str], str]:
    """SQL to frames: your runs, the other side's (yours left out), each with its verdict (``judged``), what to call
    each side, the other's name."""
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
    return judged(con, a), judged(con, b), names, other if isinstance(other, str) else theirs_sel.describe()


def judged(con, runs: pl.DataFrame) -> pl.DataFrame:
    """``runs`` with the verdict every report gives them (``run_verdicts.verdicts``: ``why``, ``suspect``, and
    ``failed`` with the failed job's lines for a run fio reported as failed; None: it ran)."""
    return runs if runs.is_empty() else run_verdicts.verdicts(con, runs)


def analyse(con, mine: Selection, other: str | Selection):
    """Your selection's fio runs beside ``other``'s runs of the same workload: a study (its name), or any
    selection (``Selection.parse("host=nas2")``), whose runs that are also yours are left out. ``query``, then
    ``beside`` and ``verdicts`` (compute), then sentences from them."""

    a, b, names, study = query(con, mine, other)
    res = Result(mine)
    failed = [
        _with_match(x.filter(pl.col("failed").is_not_null()), s) for x, s in ((a, "mine"), (b, "study")) if x.height
    ]
    res.findings += failed_sentences(pl.concat(failed, how="diagonal_relaxed"), names) if failed else []
    a, b = (x.filter(pl.col("failed").is_null()) if x.height else x for x in (a, b))
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
    res.findings += all_flagged(table, names)
    res.findings += [sentence(v, names) for v in pairs]
    res.missing += cache_unchecked(a, b, table, names)
    if table.filter(pl.col("per_disk_bytes_per_s").is_null()).height:
        res.missing.append(
            "runs without vdev_type, vdev_count and vdev_width labels are compared as measured, not per "
            "disk: label the layout in the manifest (`storagelab lab fio` records it for ZFS pools)"
        )
    return res


def display_frame(table: pl.DataFrame) -> pl.DataFrame:
    """``beside`` for a reader: MiB/s (2^20 bytes/s) columns, one per quantity, no list columns; the flagged runs
    (left out of the tests) and why."""
    mib = float(1 << 20)
    return table.select(
        "match",
        "direction",
        pl.col("side").replace({"mine": "yours"}),
        pl.col("label_set").alias("stack | layout"),
        pl.col("config").alias("configuration"),
        "runs",
        pl.col("flagged_runs").alias("flagged (not tested)"),
        pl.col("why").list.join("; ").alias("why flagged"),
        (pl.col("bw_mean_bytes_per_s") / mib).round(1).alias("MiB/s"),
        (pl.col("bw_sd_bytes_per_s") / mib).round(1).alias("sd MiB/s"),
        (pl.col("per_vdev_bytes_per_s") / mib).round(1).alias("per vdev MiB/s"),
        (pl.col("per_disk_bytes_per_s") / mib).round(1).alias("per disk MiB/s"),
        "sizes",
        "runtimes",
        "labels",
    )

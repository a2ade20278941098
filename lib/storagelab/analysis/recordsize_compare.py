"""Notebook 02's tuned-vs-default comparisons, one number each (a compute step: frames in, typed results out).

A *comparison* is one tuned recordsize against the default on one pool, one workload at any file size and one
direction (``COMPARE_GROUP``): runs of the same workload at two file sizes are the same comparison made twice,
not two findings. Each file size (``workload``) gives a *pair*: the tuned runs' mean bandwidth over the default
runs' mean, judged by ``stats.compare`` (Welch where both sides have repeats, a single run against the other side's
prediction interval, else no test: the run-to-run noise is unknown). The comparison's one number is the geometric
mean of its pairs' ratios (one pair: its ratio); when the pairs disagree in direction (one above 1x, one below)
the comparison has no direction.

Which runs count and whether a pair gets a faster/slower verdict is the one rule of 05, 08 and 10
(``run_verdicts``): a run it leaves out (``suspect``: a design check, its logs, a firm plausibility flag) is left
out of its side's mean, unless every run of that side is (then all count and the pair is flagged); a pair gets a
verdict only where a test found a difference and no run it counts is flagged. The design checks (``design``: too
short, a working set its machine's cache holds, RAM or on ZFS the ARC maximum, the ARC answering reads) come with
it: the shared rules, not a copy of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import polars as pl

from . import design, phases, run_verdicts, stats
from .result import lines_of

COMPARE_GROUP = ("stack", "pool", "vdev_type", "vdev_count", "vdev_width", "workload_at_any_size", "direction")


@dataclass(frozen=True)
class Pair:
    """The tuned and default runs of one workload (one file size) and their ratio of mean bandwidths."""

    workload: str
    working_set_bytes: float | None
    tuned_labels: tuple[str, ...]
    default_labels: tuple[str, ...]
    tuned_bw: float  # bytes/s, mean of the tuned runs
    default_bw: float  # bytes/s, mean of the default runs
    test: stats.Comparison
    lines: tuple[dict, ...]
    left_out: tuple[tuple[str, str], ...] = ()  # (label, why) of runs the rule left out of their side's mean
    flagged: tuple[tuple[str, str], ...] = ()  # (label, why) of flagged runs counted: every run of their side is

    @property
    def ratio(self) -> float:
        return self.tuned_bw / self.default_bw

    @property
    def verdict(self) -> str | None:
        """'faster' or 'slower' (the tuned recordsize) where the rule of 05, 08 and 10 gives one: a test found a
        difference and no run counted is flagged; None otherwise (``withheld`` says why)."""
        if self.flagged or self.test.test == stats.NONE or not self.test.differs:
            return None
        return "faster" if self.ratio > 1 else "slower"

    @property
    def withheld(self) -> str | None:
        """Why the pair has no verdict; None where it has one."""
        if self.flagged:
            return "its runs are flagged (" + "; ".join(f"{label} {why}" for label, why in self.flagged) + ")"
        if self.test.test == stats.NONE:
            return "one run on each side, so the run-to-run noise is unknown"
        if not self.test.differs:
            return f"within the run-to-run noise ({self.test.test_name}, {self.test.level:.0%})"
        return None


@dataclass(frozen=True)
class TunedComparison:
    pool: str | None
    recordsize_bytes: int
    default_recordsize: int
    workload: str  # the workload at any file size
    direction: str
    pairs: tuple[Pair, ...]
    design_notes: tuple  # design.sentences of the flagged runs (Findings), then design.notes
    labels: tuple[str, ...]  # every run's label, tuned and default

    @property
    def ratio(self) -> float:
        """The one number: the geometric mean of the pairs' ratios."""
        return math.exp(sum(math.log(p.ratio) for p in self.pairs) / len(self.pairs))

    @property
    def low(self) -> float:
        return min(p.ratio for p in self.pairs)

    @property
    def high(self) -> float:
        return max(p.ratio for p in self.pairs)

    @property
    def disagree(self) -> bool:
        """Some pairs find the tuned recordsize faster, others slower."""
        return self.low < 1.0 < self.high

    @property
    def verdict(self) -> str | None:
        """'faster' / 'slower' where every pair has that verdict; None otherwise."""
        found = {p.verdict for p in self.pairs}
        return found.pop() if len(found) == 1 else None

    @property
    def untested(self) -> bool:
        """No pair had a test: every pair's noise is unknown (a single run on both sides)."""
        return all(p.test.test == stats.NONE for p in self.pairs)


def _counted(side: pl.DataFrame) -> tuple[pl.DataFrame, tuple, tuple]:
    """The runs of one side that count (``run_verdicts.counted``), (label, why) of those left out, and of the
    flagged runs counted because every run of the side is flagged."""
    if "suspect" not in side.columns or not side["suspect"].any():
        return side, (), ()
    bad = tuple((r["label"], r["why"] or "flagged") for r in side.filter(pl.col("suspect")).iter_rows(named=True))
    if side["suspect"].all():
        return side, (), bad
    return side.filter(~pl.col("suspect")), bad, ()


def _pair(workload: str, tuned: pl.DataFrame, default: pl.DataFrame) -> Pair:
    (tuned, t_out, t_flag), (default, d_out, d_flag) = _counted(tuned), _counted(default)
    t, d = tuned["bw_bytes_per_s"].to_list(), default["bw_bytes_per_s"].to_list()
    ws = [design.working_set(r) for r in tuned.iter_rows(named=True)]
    return Pair(
        workload=workload,
        working_set_bytes=ws[0] if ws and ws[0] is not None and len(set(ws)) == 1 else None,
        tuned_labels=tuple(tuned["label"].to_list()),
        default_labels=tuple(default["label"].to_list()),
        tuned_bw=sum(t) / len(t),
        default_bw=sum(d) / len(d),
        test=stats.compare_values(t, d),
        lines=lines_of(pl.concat([tuned, default], how="diagonal_relaxed")),
        left_out=t_out + d_out,
        flagged=t_flag + d_flag,
    )


def _one(g: pl.DataFrame, rs: int, default_recordsize: int) -> TunedComparison | None:
    pairs = []
    for (workload,), w in g.group_by("workload", maintain_order=True):
        tuned, default = (
            w.filter(pl.col("recordsize_bytes") == rs),
            w.filter(pl.col("recordsize_bytes") == default_recordsize),
        )
        if tuned.height and default.height:
            pairs.append(_pair(workload, tuned, default))
    if not pairs:
        return None
    used = g.filter(pl.col("workload").is_in([p.workload for p in pairs]))
    r = used.row(0, named=True)
    judged = used if "design_marker" in used.columns else design.with_design(used)
    return TunedComparison(
        pool=r["pool"],
        recordsize_bytes=rs,
        default_recordsize=default_recordsize,
        workload=r["workload_at_any_size"] or r["workload"],
        direction=r["direction"],
        pairs=tuple(sorted(pairs, key=lambda p: -(p.working_set_bytes or 0))),
        design_notes=tuple(design.sentences(judged)) + tuple(design.notes(judged)),
        labels=tuple(used["label"].to_list()),
    )


def comparisons(runs: pl.DataFrame, default_recordsize: int) -> list[TunedComparison]:
    """The selection's tuned-vs-default comparisons (module doc): labelled fio runs of one pool, workload at any
    size and direction, at the default and at one other recordsize. ``runs``: ``run_verdicts.verdicts`` of
    ``fio_runs.runs`` (runs without a verdict are judged by their design checks and plausibility flags alone)."""
    if not runs.is_empty() and "suspect" not in runs.columns:
        runs = run_verdicts.judged(run_verdicts.checked(runs), {})
    if runs.is_empty():
        return []
    labelled = runs.filter(pl.col("recordsize_bytes").is_not_null() & pl.col("workload").is_not_null())
    if labelled.is_empty():
        return []
    labelled = labelled.with_columns(pl.coalesce("workload_at_any_size", "workload").alias("workload_at_any_size"))
    out = []
    for _, g in labelled.group_by(phases.grouped(COMPARE_GROUP, labelled), maintain_order=True):
        for rs in sorted(set(g["recordsize_bytes"].to_list()) - {default_recordsize}):
            c = _one(g, rs, default_recordsize)
            if c is not None:
                out.append(c)
    return out

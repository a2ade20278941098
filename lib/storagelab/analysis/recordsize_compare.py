"""Notebook 02's tuned-vs-default comparisons, one number each (a compute step: frames in, typed results out).

A *comparison* is one tuned recordsize against the default on one pool, one workload at any file size and one
direction (``COMPARE_GROUP``): runs of the same workload at two file sizes are the same comparison made twice,
not two findings. Each file size (``workload``) gives a *pair*: the tuned runs' mean bandwidth over the default
runs' mean, judged by ``stats.compare`` (Welch where both sides have repeats, a single run against the other side's
prediction interval, else no test: the run-to-run noise is unknown). The comparison's one number is the geometric
mean of its pairs' ratios (one pair: its ratio); when the pairs disagree in direction (one above 1x, one below)
the comparison has no direction. The runs' design checks (``design.check``: too short, working set in RAM, the ARC
answering reads) and their working set against the ARC maximum of the selection's arcstats (``arc.arc_max_of``)
come with it: the shared rules, not a copy of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import polars as pl

from . import arc, design, phases, stats
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
    arc_share: float | None = None  # the working set over the ARC maximum (c_max) of the selection's arcstats

    @property
    def ratio(self) -> float:
        return self.tuned_bw / self.default_bw


@dataclass(frozen=True)
class TunedComparison:
    pool: str | None
    recordsize_bytes: int
    default_recordsize: int
    workload: str  # the workload at any file size
    direction: str
    pairs: tuple[Pair, ...]
    design_notes: tuple  # design.sentences of the flagged runs (Findings)
    arc_max: dict | None  # arc.arc_max row: c_max_bytes, path, line
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
    def untested(self) -> bool:
        """No pair had a test: every pair's noise is unknown (a single run on both sides)."""
        return all(p.test.test == stats.NONE for p in self.pairs)


def _pair(workload: str, tuned: pl.DataFrame, default: pl.DataFrame) -> Pair:
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
    )


def _one(g: pl.DataFrame, rs: int, default_recordsize: int, maxima: pl.DataFrame) -> TunedComparison | None:
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
    bound = arc.arc_max_of(maxima, r["host"])
    if bound is not None:
        pairs = [
            replace(p, arc_share=p.working_set_bytes / bound["c_max_bytes"]) if p.working_set_bytes else p
            for p in pairs
        ]
    return TunedComparison(
        pool=r["pool"],
        recordsize_bytes=rs,
        default_recordsize=default_recordsize,
        workload=r["workload_at_any_size"] or r["workload"],
        direction=r["direction"],
        pairs=tuple(sorted(pairs, key=lambda p: -(p.working_set_bytes or 0))),
        design_notes=tuple(design.sentences(design.with_design(used))),
        arc_max=bound,
        labels=tuple(used["label"].to_list()),
    )


def comparisons(runs: pl.DataFrame, default_recordsize: int, maxima: pl.DataFrame) -> list[TunedComparison]:
    """The selection's tuned-vs-default comparisons (module doc): labelled fio runs (``fio_runs.runs``) of one
    pool, workload at any size and direction, at the default and at one other recordsize. ``maxima``:
    ``arc.arc_max`` of the selection."""
    if runs.is_empty():
        return []
    labelled = runs.filter(pl.col("recordsize_bytes").is_not_null() & pl.col("workload").is_not_null())
    if labelled.is_empty():
        return []
    labelled = labelled.with_columns(pl.coalesce("workload_at_any_size", "workload").alias("workload_at_any_size"))
    out = []
    for _, g in labelled.group_by(phases.grouped(COMPARE_GROUP, labelled), maintain_order=True):
        for rs in sorted(set(g["recordsize_bytes"].to_list()) - {default_recordsize}):
            c = _one(g, rs, default_recordsize, maxima)
            if c is not None:
                out.append(c)
    return out

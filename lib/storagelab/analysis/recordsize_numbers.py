"""Notebook 02's numbers: the typed results ``recordsize.compute`` returns (read by ``recordsize_findings``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl


@dataclass
class RecordsizeFrames:
    runs: pl.DataFrame  # fio runs (fio_runs.runs) with the one verdict of 05, 08 and 10 (run_verdicts.verdicts)
    sizes: pl.DataFrame  # zdb -b summaries, one per pool
    hist: pl.DataFrame  # zdb -bb block size histograms
    layouts: pl.DataFrame  # the selection's labelled RAIDZ layouts
    figures: dict  # the study's stated figures (claim id -> value in base units)
    claim_lines: dict = field(default_factory=dict)  # claim id -> its claims.csv line (scaling.claim_lines)
    vdevs: pl.DataFrame = field(default_factory=pl.DataFrame)  # zdb -C: top-level data vdevs (type, ashift, width)


@dataclass(frozen=True)
class RaidzModel:
    width: int
    parity: int
    ashift: int
    source: str  # "parameters", or the labelled layout it was taken from
    one: dict  # raidz_alloc of a 1 MiB block
    three: dict  # raidz_alloc of a 3 MiB block
    zdb_note: str = ""  # what the selection's zdb -C shows when the model does not take its layout from it
    zdb_lines: tuple[dict, ...] = ()  # the zdb -C lines the model's layout or its note rests on


@dataclass(frozen=True)
class PoolSizes:
    """A pool's zdb -b: average logical block and allocated / physical against the full-record expectation."""

    pool: str
    avg_logical_bytes: float
    measured: float
    expected: dict
    nearest: int | None  # None: no expectation, or the expectations tie
    recordsize_bytes: int
    layout: str | None
    lines: tuple[dict, ...] = ()  # the raw lines (result.lines_of) of its zdb -b summary


@dataclass
class RecordsizeNumbers:
    default_recordsize: int
    amplification: pl.DataFrame
    default_amp: dict
    model: RaidzModel
    measures: dict
    pools: list[PoolSizes] = field(default_factory=list)
    tuned: pl.DataFrame = field(default_factory=pl.DataFrame)
    comparisons: list = field(default_factory=list)  # recordsize_compare.TunedComparison: one number each
    unlabelled_runs: int = 0  # fio runs without a recordsize label, of ZFS or of a stack not labelled
    other_stacks: tuple[str, ...] = ()  # the labelled stacks of fio runs that are not on ZFS (no recordsize)
    stated: pl.DataFrame = field(default_factory=pl.DataFrame)
    histograms: list[tuple[str, int, dict]] = field(default_factory=list)  # (pool, recordsize, block_sizes)
    hist: pl.DataFrame = field(default_factory=pl.DataFrame)  # the histograms kept (one per pool and moment)
    stated_lines: dict = field(default_factory=dict)  # claim id -> its claims.csv line, for ``stated``

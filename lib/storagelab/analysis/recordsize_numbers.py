"""Notebook 02's numbers: the typed results ``recordsize.compute`` returns (read by ``recordsize_findings``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl


@dataclass
class RecordsizeFrames:
    runs: pl.DataFrame  # fio runs (fio_runs.runs)
    sizes: pl.DataFrame  # zdb -b summaries, one per pool
    hist: pl.DataFrame  # zdb -bb block size histograms
    layouts: pl.DataFrame  # the selection's labelled RAIDZ layouts
    figures: dict  # the study's stated figures (claim id -> value in base units)
    claim_lines: dict = field(default_factory=dict)  # claim id -> its claims.csv line (scaling.claim_lines)


@dataclass(frozen=True)
class RaidzModel:
    width: int
    parity: int
    ashift: int
    source: str  # "parameters", or the labelled layout it was taken from
    one: dict  # raidz_alloc of a 1 MiB block
    three: dict  # raidz_alloc of a 3 MiB block


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
    compared: pl.DataFrame = field(default_factory=pl.DataFrame)
    unlabelled_runs: int = 0
    stated: pl.DataFrame = field(default_factory=pl.DataFrame)
    histograms: list[tuple[str, int, dict]] = field(default_factory=list)  # (pool, recordsize, block_sizes)
    hist: pl.DataFrame = field(default_factory=pl.DataFrame)  # the histograms kept (one per pool and moment)
    stated_lines: dict = field(default_factory=dict)  # claim id -> its claims.csv line, for ``stated``

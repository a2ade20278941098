"""Notebook 05's numbers: the named results of ``stacks.compute`` that ``stacks_findings`` writes sentences from."""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from . import design, stats


@dataclass(frozen=True)
class RunRef:
    """One run as a finding names it: label, bandwidth (bytes/s) and its mark ('' or '⚠ ...')."""

    label: str
    bytes_per_s: float
    mark: str = ""
    lines: tuple[dict, ...] = ()  # the raw lines of its bandwidth (result.lines_of): what a finding's number links to


@dataclass(frozen=True)
class ConfigRef(RunRef):
    """One configuration as a ranking names it: its name, mean bandwidth over its ``n`` runs (repeats pooled) and
    the half-width of the 95 % interval of that mean (None for one run)."""

    n: int = 1
    ci95: float | None = None


@dataclass(frozen=True)
class Ranking:
    """One workload's configurations (repeats pooled: ``stacks.configurations``): the fastest with no flag (None when
    every one is flagged), the slowest, and the flagged ones faster than that fastest one (a flagged run never heads
    the ranking); ``runs`` runs in ``configs`` configurations."""

    workload: str
    runs: int
    fastest: ConfigRef | None
    slowest: ConfigRef
    flagged_faster: tuple[ConfigRef, ...]
    configs: int = 1


@dataclass(frozen=True)
class OverLimit:
    """A run faster than its labelled device limit x margin; ``weak``: by less than WEAK_BELOW x the limit."""

    label: str
    bytes_per_s: float
    limit_bytes_per_s: float
    weak: bool
    lines: tuple[dict, ...] = ()  # the raw lines of its bandwidth (result.lines_of)

    @property
    def ratio(self) -> float:
        return self.bytes_per_s / self.limit_bytes_per_s


@dataclass(frozen=True)
class DeviceSpread:
    """Member devices of one array in one run whose write times per I/O differ >= 10x (fio's disk stats,
    ``stacks.device_spreads``)."""

    label: str
    ms_per_io: tuple[tuple[str, float], ...]
    fastest_disk: str
    factor: float
    lines: tuple[tuple[dict, ...], ...] = ()  # each device's disk stats line (result.lines_of), as ms_per_io
    mirror: bool = False  # labelled a mirror (vdev_type, or a raid1/mirror stack): a write waits for every member


@dataclass(frozen=True)
class TestSizes:
    """Runs whose working set fits what can cache it (label, bytes, cache bytes, ``design.cache_bound``'s words:
    the RAM they are labelled with, or on ZFS the ARC maximum), runs with RAM but no size, and the test sizes of
    the runs without RAM (size or None -> how many runs)."""

    fits: tuple[tuple[str, float, float, str], ...]
    sizeless: tuple[str, ...]
    ram_unknown: tuple[tuple[float | None, int], ...]
    # runs whose working set fits their RAM but whose direct= is not known (fio's normal text does not print it):
    # whether the page cache served them is not known (label, bytes, RAM + L2ARC: design.direct_unknown)
    direct_unknown: tuple[tuple[str, float, float], ...] = ()


@dataclass(frozen=True)
class RepeatTest:
    """Repeats of one configuration (``stats.Repeats`` of their bandwidths) and every other configuration of its
    workload and stack tested against them (``stats.compare``: Welch's t on both sides' repeats, or one run against
    the prediction interval); ``peers`` name a configuration of several runs by its name and mean."""

    config: str
    workload: str
    labels: tuple[str, ...]
    repeats: stats.Repeats
    spread_pct: float
    peers: tuple[tuple[RunRef, stats.Comparison], ...]
    lines: tuple[dict, ...] = ()  # the raw lines of the repeats' bandwidths (result.lines_of)


@dataclass(frozen=True)
class LayerCost:
    """A layer over its base stack (``layer_costs``), with both runs' marks."""

    layer: str
    over: RunRef
    base: RunRef | None
    base_labels: str
    penalty_pct: float | None
    zfs_version_differs: bool


@dataclass(frozen=True)
class PhasePair:
    """One workload's runs that the manifest's phase labels pair as before and after a change (``phases``): never
    repeats of one configuration, never two stacks side by side."""

    workload: str
    before: tuple[RunRef, ...]
    after: tuple[RunRef, ...]
    differences: str  # what their setup labels say differs (``phases.differences``)
    only_pair: bool  # every run of the workload has a phase label: the pair replaces its ranking


@dataclass(frozen=True)
class LeftOut:
    """A configuration with runs left out of its mean, repeats and ranking, as notebooks 08 and 10 leave them out
    (``run_verdicts``): its name, workload, the runs counted and their mean, and each run left out (label, why,
    bandwidth, lines)."""

    config: str
    workload: str
    counted: int
    mean: float
    runs: tuple[tuple[str, str, float, tuple[dict, ...]], ...]
    lines: tuple[dict, ...] = ()  # the counted runs' lines (the mean's)


@dataclass(frozen=True)
class VerdictDiff:
    """A run 05's own parameters judge otherwise than 08 and 10 (their defaults): why on each side (None: counted)."""

    label: str
    here: str | None
    there: str | None


@dataclass
class StacksResult:
    """Everything notebook 05 says, as named numbers (the frames are for its tables and chart)."""

    direction: str
    margin: float
    min_elapsed_s: float
    runs: pl.DataFrame
    workloads: pl.DataFrame
    rankings: list[Ranking]
    unknown_workload: list[str]
    over_limit: list[OverLimit]
    at_limit: list[RunRef]
    direct_ignored: list[str]
    shared_file: list[str]
    no_limit: int
    design: list[tuple[str, design.DesignFlags]]  # every run's design checks
    device_spreads: list[DeviceSpread]
    device_latency: pl.DataFrame
    sizes: TestSizes
    repeats: pl.DataFrame
    repeat_tests: list[RepeatTest]
    layer_costs: pl.DataFrame
    costs: list[LayerCost]
    fastest: ConfigRef | None  # the headline workload's fastest configuration where it is flagged
    best_clean: ConfigRef | None  # the headline workload's fastest configuration with no flag (``headline_ranking``)
    flagged_above_best: int  # configurations of that workload faster than best_clean, all flagged
    unranked: int = 0  # workloads with unflagged runs, where there are several: the headline ranks none
    configs: pl.DataFrame = field(default_factory=pl.DataFrame)  # ``stacks.configurations``
    # each run of ``design``, its row's provenance (the group line, the slowest I/O's section): design.cites reads it
    design_rows: list[dict] = field(default_factory=list)
    phase_pairs: list[PhasePair] = field(default_factory=list)  # workloads whose runs the phase labels pair
    left_out: list[LeftOut] = field(default_factory=list)  # configurations with runs left out (``stacks.left_out``)
    all_flagged: list[LeftOut] = field(default_factory=list)  # every run flagged: several, or by logs (``stacks``)
    verdict_diffs: list[VerdictDiff] = field(default_factory=list)  # runs 05's parameters judge otherwise than 08/10

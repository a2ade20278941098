"""Notebook 03's numbers: the typed results ``alignment.compute`` returns and the test names ``alignment_findings`` words them with."""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

HEADLINE_TESTS = ("put_block", "rewrite", "get_block", "seeks")


_TEST_WORDS = {
    "putc": "per-char write",
    "put_block": "block write",
    "rewrite": "rewrite",
    "getc": "per-char read",
    "get_block": "block read",
    "seeks": "random seeks",
}


ZFS_GET = "zfs get compression,dedup,recordsize,sync"


@dataclass
class AlignmentFrames:
    partitions: pl.DataFrame
    runs: pl.DataFrame  # every preferred bonnie++ run of the selection (repeats in one file: run_index)
    zpool: pl.DataFrame  # zpool list rows (pool state)
    pool_stats: pl.DataFrame  # zdb -b summaries (allocated / physical: the ashift of raidz pools)
    props: pl.DataFrame  # zfs get / zpool get: compression, dedup, recordsize, sync, ashift
    vdevs: pl.DataFrame  # zdb -C: the ashift of each top-level vdev

    def file_ids(self) -> list[int]:
        return [i for f in (self.partitions, self.runs, self.pool_stats) for i in f["file_id"].to_list()]


@dataclass(frozen=True)
class Noise:
    """The run-to-run noise of the 'after' configuration: its repeats (same host and layout labels; runs appended
    in one file count), and the other 'after' runs, which are other configurations and no noise band."""

    repeats: int
    other_configs: tuple[str, ...]
    level: float | None  # of the prediction intervals (None: no repeats)
    lines: tuple[dict, ...] = ()  # the 'after' configuration's runs' lines (result.lines_of)
    side: str = "after"  # the configuration whose repeats give the band ('before' when 'after' ran once)

    @property
    def judged(self) -> str:
        """The other configuration: the one whose value is judged against the band."""
        return "before" if self.side == "after" else "after"


@dataclass(frozen=True)
class MemoryRead:
    """A block read at MEMORY_CPU_PCT or more CPU: served from memory."""

    side: str
    value: float
    cpu_pct: float
    other_cpu_pct: float | None


@dataclass(frozen=True)
class Anomalies:
    """What compression or dedup of bonnie++'s near-zero data would explain at once (F24), as the data shows it."""

    fast_read: MemoryRead | None
    slow_write: tuple[float, float] | None  # (block write bytes/s, its latency ns) of the 'before' run
    slow_delete: tuple[str, float] | None  # (test, after/before ratio) of the most slowed delete test

    def any(self) -> bool:
        return bool(self.fast_read or self.slow_write or self.slow_delete)


@dataclass(frozen=True)
class AshiftEvidence:
    """A raidz pool's zdb -b allocated / physical against the full-record expectation at ashift 9 and 12."""

    pool: str
    host: str | None
    layout: str
    measured: float
    expected: dict  # ashift -> allocated / physical
    nearest: int | None  # None when the expectations tie
    lines: tuple[dict, ...] = ()  # the raw lines (result.lines_of) of its zdb -b summary


@dataclass(frozen=True)
class Dataset:
    """One dataset's settings as `zfs get` printed them (None: not in the output)."""

    name: str
    compression: str | None
    dedup: str | None
    recordsize: str | None
    sync: str | None
    lines: tuple[dict, ...] = ()  # its `zfs get` lines (result.lines_of)

    @property
    def shrinks_data(self) -> bool | None:
        """Whether compression or dedup is on (None when neither is printed)."""
        seen = [v for v in (self.compression, self.dedup) if v is not None]
        return None if not seen else any(v != "off" for v in seen)


@dataclass(frozen=True)
class PoolSettings:
    """What the data says of the tested pool: its ashift (zdb -C, zpool get, else the ashift label) and its
    datasets' compression and dedup (zfs get)."""

    pool: str | None
    ashift: int | None
    ashift_source: str | None
    datasets: tuple[Dataset, ...] = ()
    file_ids: tuple[int, ...] = ()
    ashift_lines: tuple[dict, ...] = ()  # the zdb -C / zpool get lines the ashift is read from (none for a label)


@dataclass(frozen=True)
class Pair:
    """The 'before' run, the 'after' run it is compared with (rows of ``alignment.pair_runs``' info), and what is
    known once there is a pair: the 'after' configuration's noise and the tested pool's settings."""

    before: dict
    after: dict
    noise: Noise
    settings: PoolSettings


@dataclass
class AlignmentNumbers:
    arithmetic: list[dict]
    partitions: pl.DataFrame
    runs: pl.DataFrame = field(default_factory=pl.DataFrame)
    parted: list[dict] = field(default_factory=list)  # parted's align-check verdicts (alignment_tables.parted_checks)
    before: dict | None = None
    after: dict | None = None
    same_layout: bool = False
    ratios: pl.DataFrame = field(default_factory=pl.DataFrame)
    noise: Noise | None = None
    memory_reads: list[MemoryRead] = field(default_factory=list)
    anomalies: Anomalies | None = None
    settings: PoolSettings | None = None
    after_settings: PoolSettings | None = None  # the 'after' run's pool (its ashift may differ from the 'before' one's)
    other_ashift: list[AshiftEvidence] = field(default_factory=list)
    zdb_pools: tuple[str, ...] = ()  # the pools of the selection's zdb -C outputs
    not_zfs: str | None = None  # the 'before' run's stack where it is labelled and is not ZFS (no pool, no ashift)
    pool_states: pl.DataFrame = field(default_factory=pl.DataFrame)
    phases: dict = field(default_factory=dict)
    before_files: tuple[str, ...] = ()  # the files of the 'before' configuration (its repeats), by name
    after_files: tuple[str, ...] = ()  # the same of the 'after' configuration
    before_others: tuple[str, ...] = ()  # labels of 'before' runs of other configurations (not used)
    side_runs: dict = field(default_factory=dict)  # 'before'/'after' -> its configuration's runs (repeats), count

    def pair(self) -> Pair | None:
        """The before/after pair (``compute`` sets its four fields together); None when there is none."""
        if self.before is None or self.after is None or self.noise is None or self.settings is None:
            return None
        return Pair(self.before, self.after, self.noise, self.settings)

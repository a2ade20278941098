"""Notebook 04's numbers: the sizes ZFS documents for a dedup table entry, and the typed results ``dedup.compute`` returns (read by ``dedup_findings``)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import polars as pl

L2ARC_HEADER_BYTES = 96  # RAM per block held in L2ARC (arc_buf_hdr_t l2 part, approximate; F8)


DDT_LEAF_BYTES = 4096  # legacy ZAP leaf block holding DDT entries (F3)


FLAT_PHYS_BYTES = 72  # OpenZFS 2.3 flat DDT entry on disk (docs/formats/zfs-facts.md F6)


LEGACY_PHYS_BYTES = 256  # four 64 B phys slots of a legacy entry (F2)


LIVE_ENTRY_BYTES = 216  # OpenZFS 2.3 ddt_entry_t: a live entry being changed in a txg, not the cached table (F6)


LARGE_RECORDSIZE = 1024 * 1024


MEASURED_RUNGS = (6, 7)  # bytes per entry measured on the pool itself, not assumed

# the start of the name a pool gets where neither its log nor the manifest names it: '(unnamed; file b.txt)'
UNNAMED_POOL = "(pool name not in the output; "


def named(pool: str) -> bool:
    """Whether ``pool`` is a pool's name (from its log or the manifest), one a command can be given."""
    return not pool.startswith(UNNAMED_POOL)


# in-core bytes per entry seen in practice (zdb -DD "in core" field; docs/formats/zfs-facts.md F3)
OBSERVED_IN_CORE = (141, 154, 165, 320, 392)


def arc_max(ram_gib: float, arc_max_gib: float) -> float:
    """The ARC maximum in GiB: ``arc_max_gib``, or 0 for FreeBSD's legacy default, RAM less 1 GiB."""
    return arc_max_gib if arc_max_gib else ram_gib - 1


@dataclass(frozen=True)
class DedupParams:
    bytes_per_entry: float = 320.0
    per_entry_sizes: tuple[float, ...] = tuple(float(x) for x in OBSERVED_IN_CORE)
    ram_gib: float = 32.0
    arc_max_gib: float = 0.0  # 0: RAM less 1 GiB (FreeBSD's legacy default)
    metadata_fraction: float = 0.25

    def check(self) -> None:
        arc = arc_max(self.ram_gib, self.arc_max_gib)
        if (
            self.ram_gib <= 0
            or not 0 < arc <= self.ram_gib
            or not 0 < self.metadata_fraction <= 1
            or self.bytes_per_entry <= 0
        ):
            raise ValueError(
                "need ram_gib > 0, 0 < arc_max_gib <= ram_gib (0: RAM less 1 GiB), 0 < metadata_fraction <= 1, "
                f"bytes_per_entry > 0; got ram_gib {self.ram_gib:g}, arc_max_gib {arc:g}, metadata_fraction "
                f"{self.metadata_fraction:g}, bytes_per_entry {self.bytes_per_entry:g}"
            )


@dataclass
class DedupFrames:
    """What the selection holds for notebook 04, one frame per kind of log."""

    stats: pl.DataFrame  # zdb -b summaries, one per pool
    ddt: pl.DataFrame  # zdb -S / -DD histogram Totals
    objects: pl.DataFrame  # zdb -DD DDT objects (entries, in-core bytes)
    zpool: pl.DataFrame  # zpool list rows with a DEDUP ratio
    l2arc_bytes: float | None  # the largest cache device of zpool iostat -v
    arc: pl.DataFrame  # ARC statistics (arcstats, sysctl, arc_summary): c_max, arc_meta_limit, memory, size
    recordsizes: pl.DataFrame  # zfs get recordsize of datasets (name, value_bytes)
    status: pl.DataFrame  # zpool status -D: DDT entries and in-core bytes per pool
    l2arc_lines: tuple[dict, ...] = ()  # the zpool iostat -v line of that cache device (result.lines_of)
    dedup_props: pl.DataFrame = field(default_factory=pl.DataFrame)  # zfs get dedup of datasets (name, value)
    failed: tuple = (0, pl.DataFrame())  # (files the ingest refused, those whose error is about a DDT table)

    def file_ids(self) -> list[int]:
        frames = (self.stats, self.ddt, self.objects, self.zpool, self.arc, self.recordsizes, self.status)
        return [i for f in frames for i in f["file_id"].to_list()]


RAM_LABEL = "the manifest's ram_bytes"
NO_META_CAP = "no metadata cap (OpenZFS 2.2+: the ARC balances data and metadata)"

# memory_all_bytes is the memory the kernel manages: a few per cent below the installed RAM, never 10 % off it
RAM_LABEL_TOLERANCE = 0.10


@dataclass(frozen=True)
class Budget:
    """The ARC metadata a machine's DDTs may use: ARC maximum x metadata fraction."""

    ram_bytes: float
    arc_max_bytes: float
    metadata_fraction: float
    source: str  # "parameters", or the log it was read from
    rule: str = "metadata_fraction parameter"  # where the metadata share comes from
    ram_source: str = "parameter"
    arc_size_bytes: float | None = None  # the ARC's size when the statistics were taken
    meta_used_bytes: float | None = None
    ram_label_bytes: float | None = None  # the manifest's ram_bytes label of the statistics' file
    zfs_version_label: str | None = None  # the manifest's zfs_version label of the statistics' file

    @property
    def bytes(self) -> float:
        return self.arc_max_bytes * self.metadata_fraction

    @property
    def ram_disagrees(self) -> bool:
        """The manifest's RAM label and the statistics' memory_all_bytes are of different machines (or one is
        wrong): more than ``RAM_LABEL_TOLERANCE`` apart."""
        if not self.ram_label_bytes or self.ram_source != "memory_all_bytes":
            return False
        return abs(self.ram_bytes - self.ram_label_bytes) > RAM_LABEL_TOLERANCE * self.ram_label_bytes

    @property
    def version_disagrees(self) -> bool:
        """The manifest's ZFS version label against the ARC the statistics show: arc_meta_limit up to OpenZFS 2.1,
        no metadata cap (a 'meta' field) from 2.2 on (docs/formats/zfs-facts.md F7)."""
        m = re.match(r"\s*(\d+)\.(\d+)", self.zfs_version_label or "")
        if not m or self.rule not in ("arc_meta_limit", NO_META_CAP):
            return False
        return ((int(m[1]), int(m[2])) >= (2, 2)) != (self.rule == NO_META_CAP)


@dataclass(frozen=True)
class Estimate:
    """A pool's best DDT estimate (the highest rung the logs allow) and its verdict against its machine's budget."""

    pool: str
    host: str | None
    rung: int
    estimate: str
    entries: float
    entries_low: float | None
    entries_high: float | None
    bytes_per_entry: float
    ddt_bytes: float
    ddt_low: float
    ddt_high: float
    fits: str  # "fits", "does not fit", "may or may not fit"
    fits_at_most: int | None  # whole bytes per entry under which it fits (None: bytes per entry measured)
    fits_at_most_low: int | None  # ... with the DEDUP ratio's rounding
    fits_at_most_high: int | None
    budget_bytes: float = 0.0  # the metadata budget of its machine (ARC statistics, else the parameters)

    @property
    def measured(self) -> bool:
        return self.rung in MEASURED_RUNGS


@dataclass(frozen=True)
class Machine:
    """The pools of one host (label) against its one ARC."""

    host: str
    pools: tuple[str, ...]
    ddt_bytes: float
    ddt_low: float
    ddt_high: float
    entries: float
    budget: Budget
    fits: str
    fits_at_most: int  # whole bytes per entry under which all its estimated pools fit together
    other_dedup_pools: tuple[tuple[str, float], ...]  # (pool, DEDUP) of zpool list: deduplicating, not estimated
    other_dedup_lines: tuple[tuple[dict, ...], ...] = ()  # the zpool list line of each (result.lines_of)
    left_out: tuple[LeftOut, ...] = ()  # the host's estimated pools not summed into its table, and why


@dataclass(frozen=True)
class LeftOut:
    """A pool of a host whose estimate is not part of the host's dedup tables: why, and the lines that say so."""

    pool: str
    why: str  # SIMULATED, DEDUP_OFF, UNNAMED or TWICE
    lines: tuple[dict, ...] = ()
    other: str = ""  # TWICE: the pool name it repeats


SIMULATED = "simulated"  # zdb -S: the table dedup would build, not one the ARC holds
DEDUP_OFF = "dedup off"  # zfs get dedup: off on every dataset of the pool
UNNAMED = "unnamed"  # no pool name: it may be one of the host's named pools
TWICE = "twice"  # a second summary of a pool already counted


@dataclass(frozen=True)
class Tracked:
    """What `zpool list` DEDUP and zdb -b say together about one pool."""

    pool: str
    zpool_alloc: float
    zdb_alloc: float
    alloc_gap: float
    dedup_ratio: float
    tracked_bytes: float
    file_id: int
    zpool_lines: tuple[dict, ...] = ()  # the raw lines (result.lines_of) of its zpool list row (ALLOC, DEDUP)
    zdb_lines: tuple[dict, ...] = ()  # ... and of its zdb -b summary (bp allocated, bp deduped)


@dataclass(frozen=True)
class RecordsizeGain:
    """Entries saved at recordsize=1M: at most 1 MiB / the current recordsize, for files of 1 MiB and more."""

    pool: str
    avg_logical_bytes: float
    recordsize_bytes: int
    recordsize_source: str  # "zfs get", "label" or "default"
    max_gain: float  # LARGE_RECORDSIZE / recordsize_bytes
    naive_gain: float  # LARGE_RECORDSIZE / avg_logical_bytes (what dividing by the average would claim)
    lines: tuple[dict, ...] = ()  # the raw lines (result.lines_of) of its zdb -b summary (the average logical block)


@dataclass
class DedupNumbers:
    params: DedupParams
    budget: Budget
    memory: pl.DataFrame  # bp count x bytes per entry, per pool (rung 1 against the budget)
    ladder: pl.DataFrame
    sensitivity: pl.DataFrame  # the verdict's estimate over per_entry_sizes: (series, bytes_per_entry, ddt_bytes)
    best: list[Estimate]
    machines: list[Machine]
    tracked: list[Tracked]
    recordsize: list[RecordsizeGain]
    l2arc_bytes: float | None
    unhosted: list[str] = field(default_factory=list)  # pools without a host label: not summed with any other
    l2arc_lines: tuple[dict, ...] = ()  # the zpool iostat -v line of the largest cache device
    budgets: dict = field(default_factory=dict)  # host label (None: any) -> Budget read from ARC statistics

    @property
    def chart_budget(self) -> float:
        """The budget a chart draws: the one every pool is judged against, else the parameters'."""
        got = {e.budget_bytes for e in self.best}
        return got.pop() if len(got) == 1 else self.budget.bytes

"""Notebook 01's numbers: what ``scaling.compute`` returns and the disk arithmetic ``scaling_findings`` words them with."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import polars as pl

from .single_disk import (  # noqa: F401 - re-exported: the disk model lives in single_disk
    PARITY,
    against_single_disk,
    disk_model,
    family,
    is_single_disk,
    one_of_its_disks,
    single_disk_comparisons,
)


def widths(text: str) -> list[int]:
    """``'16 15 15'`` -> ``[16, 15, 15]`` (disks per vdev, as the manifest and transcriptions list them)."""
    try:
        out = [int(w) for w in text.split()]
    except ValueError:
        raise ValueError(f"vdev widths must be whole numbers separated by spaces, got {text!r}") from None
    if not out or min(out) < 1:
        raise ValueError(f"vdev widths must be >= 1, got {text!r}")
    return out


def data_disks(vdev_type: str, vdev_widths: Sequence[int]) -> int:
    """Disks' worth of data a pool streams (and stores): RAIDZ-p vdevs width - p each, a mirror one."""
    if vdev_type == "mirror":
        return len(vdev_widths)
    if vdev_type not in PARITY:
        raise ValueError(f"no data-disk model for vdev type {vdev_type!r}")
    p = PARITY[vdev_type]
    if min(vdev_widths) <= p:
        raise ValueError(f"a {vdev_type} vdev needs more than {p} disks, got widths {list(vdev_widths)}")
    return sum(w - p for w in vdev_widths)


def _data_disks_or_none(vdev_type: str, vdev_widths: Sequence[int]) -> int | None:
    """data_disks, or None for a layout the vdev type cannot build (e.g. a raidz2 vdev of 2 disks)."""
    p = PARITY.get(vdev_type, 0)
    return None if vdev_type != "mirror" and min(vdev_widths) <= p else data_disks(vdev_type, vdev_widths)


def direction_of(test: str) -> str | None:
    """'read' or 'write' from a layout table's test name (zfs_send_read, dd_write, ...); None when it says neither."""
    t = test.lower()
    return "read" if "read" in t else "write" if "write" in t else None


@dataclass
class ScalingFrames:
    layouts: pl.DataFrame  # transcribed layout tables (thumper_layouts) of the selected tests
    runs: pl.DataFrame  # fio runs (fio_runs.runs)
    single_parts: list  # single_disk.single_disk_rows: (tool, rows, group)
    claims: pl.DataFrame  # the study's claims.csv (stated figures)


@dataclass
class ScalingNumbers:
    baseline: int
    scaled: pl.DataFrame = field(default_factory=pl.DataFrame)  # layouts relative to the baseline vdev count
    best: pl.DataFrame = field(default_factory=pl.DataFrame)
    fixed_disks: int | None = None  # every layout uses this many disks (None: they differ)
    serial: tuple[pl.DataFrame, dict] | None = None  # (fitted rows, terms) of the serial-reader model
    serial_error: str | None = None
    labelled_runs: int = 0
    fio_multi: pl.DataFrame = field(default_factory=pl.DataFrame)  # fio groups holding more than one vdev count
    fio_configs: list = field(default_factory=list)  # scaling_repeats.Config: fio_multi's runs per vdev count
    fio_alone: list = field(
        default_factory=list
    )  # labels of runs whose group (workload, vdev type, width) has one vdev count
    single: pl.DataFrame = field(default_factory=pl.DataFrame)  # layouts against one of their disks
    rejected: pl.DataFrame = field(default_factory=pl.DataFrame)  # single-disk runs that stand for no pool's disk
    one_mirror_disk: float | None = None  # dd write of the one-vdev mirror: one disk's speed
    one_disk_picks: pl.DataFrame = field(default_factory=pl.DataFrame)
    physical: dict | None = None  # mirror dd writes as physical bytes/s: the one-vdev mirror against the fastest
    stated: pl.DataFrame = field(default_factory=pl.DataFrame)  # the Ars n = 2 figures against the rule
    stated_lines: dict = field(default_factory=dict)  # claim id -> its claims.csv line (scaling.claim_lines)

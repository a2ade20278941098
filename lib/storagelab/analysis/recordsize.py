"""recordsize: the Ars Technica before/after figures, the amplification model, tuned-vs-default fio runs
(notebook 02).

Amplification (zfs-facts F17): ZFS reads and writes whole records. For I/O of size s into a file of
record size R, with both powers of two and the I/O aligned (fio aligns random offsets to bs):

* s < R: an uncached read of s reads R (read amplification R / s); an overwrite of s reads the
  record (if not cached) and writes a new copy of R (write amplification R / s), before parity or
  mirror copies;
* s >= R: whole records, no amplification.

RAIDZ allocation (OpenZFS RAIDZ.rst; F17): a block of d data sectors on a p-parity vdev of width w
takes ceil(d / (w - p)) rows, p parity sectors per row, and is padded to a multiple of p + 1 sectors.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from ..units import KiB

DEFAULT_RECORDSIZE = 128 * KiB

# Ars Technica 2020 (seed 002), figures in MiB/s quoted in the text (the article uses KiB/MiB throughout)
ARS_MIB_S = {
    "raidz2_8w_1m_write_rs128k": 568.0,   # 8-wide RAIDz2, 1 MiB async writes, recordsize=128K
    "raidz2_8w_1m_write_rs1m": 950.0,     # same at recordsize=1M ("sometimes higher")
    "raidz2_8w_1m_write_first_run": 1238.0,  # the discarded first run (fresh file) at recordsize=1M
    "raidz2_2x4w_1m_read": 406.0,         # two 4-wide RAIDz2 vdevs, 1 MiB reads, recordsize=1M
    "raid6_8w_1m_read": 485.0,            # 8-wide mdraid6, 1 MiB reads
    "raidz2_8w_1m_read_1proc": 129.0,     # single process, iodepth=1, 1 MiB reads
    "raid6_8w_1m_read_1proc": 47.0,
}

# the same figures' ids in papers/ars-zfs-vs-raid/claims.csv
ARS_CLAIM_IDS = {
    "raidz2_8w_1m_write_rs128k": "ars-raidz2-1m-write-rs128k",
    "raidz2_8w_1m_write_rs1m": "ars-raidz2-1m-write-rs1m",
    "raidz2_8w_1m_write_first_run": "ars-raidz2-1m-write-throwaway",
    "raidz2_2x4w_1m_read": "ars-2x4wide-raidz2-1m-read",
    "raid6_8w_1m_read": "ars-mdraid6-8wide-1m-read",
    "raidz2_8w_1m_read_1proc": "ars-raidz2-1m-read-single-process",
    "raid6_8w_1m_read_1proc": "ars-raid6-1m-read-single-process",
}

# (claim, numerator, denominator, theory, theory basis)
ARS_RATIOS = [
    ("1M recordsize speed-up of RAIDz2 1 MiB writes", "raidz2_8w_1m_write_rs1m", "raidz2_8w_1m_write_rs128k",
     None, "no model: fewer, fuller stripes and less metadata per byte (F17)"),
    ("first (discarded) run vs steady state", "raidz2_8w_1m_write_first_run", "raidz2_8w_1m_write_rs1m",
     None, "no model: a fresh file is written without reading or freeing old blocks"),
    ("2 x 4-wide RAIDz2 vs 8-wide RAID6, 1 MiB reads", "raidz2_2x4w_1m_read", "raid6_8w_1m_read",
     4 / 6, "data disks: 2 x (4 - 2) = 4 vs 8 - 2 = 6"),
    ("RAIDz2 vs RAID6, single-process 1 MiB reads", "raidz2_8w_1m_read_1proc", "raid6_8w_1m_read_1proc",
     3.0, "disks read per 1 MiB block: 6 (RAIDz2, 1M record) vs 2 (RAID6, 512 KiB chunks)"),
]


def ars_ratios(figures: dict[str, float] | None = None) -> pl.DataFrame:
    """The article's ratios and, where a model gives one, the theoretical ratio and the gap to it."""
    f = ARS_MIB_S if figures is None else figures
    rows = []
    for claim, num, den, theory, basis in ARS_RATIOS:
        ratio = f[num] / f[den]
        rows.append(dict(claim=claim, numerator=num, numerator_mib_s=f[num], denominator=den,
                         denominator_mib_s=f[den], ratio=ratio, theory=theory, theory_basis=basis,
                         vs_theory_pct=None if theory is None else (ratio / theory - 1) * 100))
    return pl.DataFrame(rows, schema_overrides={"theory": pl.Float64, "vs_theory_pct": pl.Float64})


def _power_of_two(n: int, what: str) -> int:
    if not isinstance(n, int) or n < 1 or n & (n - 1):
        raise ValueError(f"{what} must be a power of two in bytes, got {n!r}")
    return n


def amplification(recordsize: int, io_size: int) -> dict:
    """Bytes moved per byte asked for, for aligned I/O of ``io_size`` into records of ``recordsize``."""
    r = _power_of_two(recordsize, "recordsize")
    s = _power_of_two(io_size, "io size")
    amp = r / s if s < r else 1.0
    return dict(recordsize_bytes=r, io_bytes=s, records=max(s // r, 1), read_amp=amp, write_amp=amp,
                overwrite_read_amp=amp if s < r else 0.0,  # read-modify-write of the record (uncached)
                wasted_read_bytes=max(r - s, 0))


def amplification_table(recordsizes: Sequence[int], io_sizes: Sequence[int]) -> pl.DataFrame:
    """One row per (recordsize, io size)."""
    return pl.DataFrame([amplification(r, s) for r in recordsizes for s in io_sizes])


def raidz_alloc(record_bytes: int, width: int, parity: int, ashift: int = 12) -> dict:
    """Sectors a RAIDZ vdev allocates for one block: data, parity, padding; and the busiest disk's share."""
    if not 1 <= parity <= 3 or width <= parity:
        raise ValueError(f"raidz{parity} needs 1 <= parity <= 3 and width > parity, got width {width}")
    sector = 1 << ashift
    data = -(-record_bytes // sector)
    rows = -(-data // (width - parity))
    raw = data + rows * parity
    padded = -(-raw // (parity + 1)) * (parity + 1)
    return dict(record_bytes=record_bytes, width=width, parity=parity, sector_bytes=sector,
                data_sectors=data, parity_sectors=rows * parity, pad_sectors=padded - raw,
                alloc_bytes=padded * sector, efficiency=data / padded,
                data_disks_touched=min(data, width - parity),
                max_data_sectors_per_disk=rows, max_data_bytes_per_disk=rows * sector)


def chunked_disks_touched(io_bytes: int, chunk_bytes: int) -> int:
    """Disks a chunk-aligned read of ``io_bytes`` touches on striped RAID with fixed ``chunk_bytes`` (md RAID)."""
    if io_bytes < 1 or chunk_bytes < 1:
        raise ValueError("io and chunk sizes must be >= 1 byte")
    return -(-io_bytes // chunk_bytes)


RUN_GROUP = ("stack", "pool", "vdev_type", "vdev_count", "vdev_width", "rw", "block_size_bytes", "direction")


def tuned_vs_default(runs: pl.DataFrame, default_recordsize: int = DEFAULT_RECORDSIZE,
                     by: Sequence[str] = RUN_GROUP) -> pl.DataFrame:
    """fio runs labelled with recordsize_bytes (manifest): bandwidth relative to the default-recordsize run
    of the same pool, workload and direction (mean of repeats). Unlabelled runs are left out; groups
    without a default run get null ratios. ``matched``: the recordsize equals the I/O size."""
    by = list(by)
    labelled = runs.filter(pl.col("recordsize_bytes").is_not_null())
    base = (labelled.filter(pl.col("recordsize_bytes") == default_recordsize)
            .group_by(by, maintain_order=True)
            .agg(pl.col("bw_bytes_per_s").mean().alias("default_bw_bytes_per_s"), pl.len().alias("default_runs")))
    return (labelled.join(base, on=by, how="left", nulls_equal=True)
            .with_columns(ratio=pl.col("bw_bytes_per_s") / pl.col("default_bw_bytes_per_s"),
                          matched=pl.col("recordsize_bytes") == pl.col("block_size_bytes"))
            .with_columns(change_pct=(pl.col("ratio") - 1) * 100)
            .sort([*by, "recordsize_bytes"], nulls_last=True))

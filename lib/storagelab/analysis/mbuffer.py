"""mbuffer summaries in numbers: the rate, time and amount of each summary line, with the amount a unit-less
line lost recovered (docs/formats/zfs-facts.md F21). Shared by ``measures`` (claims) and ``transports`` (notebook 06).

mbuffer of 2008 prints "MB/s" for values that are MiB/s (its kb2str divides by 1024), and the parser stores bytes
and bytes/s. When the amount is exactly 10000 of a unit, that kb2str prints no unit letter (``1e+04 Byte``), so the
stored amount is wrong by a power of 1024; the printed rate and time still hold, and the power that brings the
amount in line with rate x time recovers it (``resolve_unitless``).
"""

from __future__ import annotations

import math

import polars as pl

from ..units import MiB

MAX_POWER = 4  # k, M, G, T


def resolve_unitless(printed: float, implied_bytes: float) -> tuple[float, int]:
    """The amount ``printed`` x 1024**k nearest (in ratio) to ``implied_bytes``; returns (bytes, k)."""
    if printed <= 0 or implied_bytes <= 0:
        raise ValueError("printed and implied amounts must be > 0")
    k = min(range(MAX_POWER + 1), key=lambda p: abs(math.log(printed * 1024**p / implied_bytes)))
    return printed * 1024**k, k


def rates(summaries: pl.DataFrame) -> pl.DataFrame:
    """Per summary line: rate in MiB/s, seconds, the amount rate x time implies, and the amount resolved
    for unit-less (``suspect``) lines; ``amount_vs_implied`` = stored bytes / implied (1.0 = consistent)."""
    out = summaries.with_columns(
        rate_mib_s=pl.col("rate_bytes_per_s") / MiB,
        seconds=pl.col("duration_ns") / 1e9,
        implied_bytes=pl.col("rate_bytes_per_s") * pl.col("duration_ns") / 1e9 / pl.col("outputs"),
    ).with_columns(amount_vs_implied=pl.col("bytes") / pl.col("implied_bytes"))
    resolved, power = [], []
    for r in out.select("bytes", "implied_bytes", "suspect").iter_rows(named=True):
        if r["suspect"] and r["bytes"] and r["implied_bytes"]:
            b, k = resolve_unitless(r["bytes"], r["implied_bytes"])
        else:
            b, k = r["bytes"], 0
        resolved.append(b)
        power.append(k)
    return out.with_columns(
        resolved_bytes=pl.Series(resolved, dtype=pl.Float64),
        unit_power_lost=pl.Series(power, dtype=pl.Int64),
    ).with_columns(resolved_vs_implied=pl.col("resolved_bytes") / pl.col("implied_bytes"))

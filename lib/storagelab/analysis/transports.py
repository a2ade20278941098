"""zfs send transports from mbuffer summaries (notebook 06).

mbuffer of 2008 prints "MB/s" for values that are MiB/s (its kb2str divides by 1024; zfs-facts F21),
and the parser stores bytes and bytes/s. When the amount is exactly 10000 of a unit, that kb2str
prints no unit letter (``1e+04 Byte``), so the stored amount is wrong by a power of 1024; the
printed rate and time still hold, and the power that brings the amount in line with rate x time
recovers it (``resolve_unitless``).
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


def relative_to(df: pl.DataFrame, baseline_label: str, label: str = "label",
                value: str = "rate_bytes_per_s") -> pl.DataFrame:
    """Add ``vs_baseline``: each rate over the rate of the row labelled ``baseline_label`` (exactly one)."""
    base = df.filter(pl.col(label) == baseline_label)
    if base.height != 1:
        raise LookupError(f"expected one row labelled {baseline_label!r}, found {base.height}")
    return df.with_columns(vs_baseline=pl.col(value) / base[value][0])


def delay_corrected_rate(amount_bytes: float, seconds: float, delay_s: float) -> float:
    """Rate once an idle wait at the start (a receiver started before its sender) is taken out."""
    if not 0 <= delay_s < seconds:
        raise ValueError(f"delay {delay_s} s must be >= 0 and shorter than the run ({seconds} s)")
    return amount_bytes / (seconds - delay_s)


# seed 001's transports: manifest label -> claim id (papers/thumper-x4500/claims.csv) of its printed rate
THUMPER_RATE_CLAIMS = {
    "/dev/zero to /dev/null": "thumper-mbuffer-zero-to-null",
    "ssh (default cipher)": "thumper-mbuffer-ssh",
    "ssh -c blowfish": "thumper-mbuffer-ssh-blowfish",
    "netcat (receiver)": "thumper-mbuffer-netcat-receiver",
    "netcat (sender)": "thumper-mbuffer-netcat-sender",
    "socat (receiver)": "thumper-mbuffer-socat-receiver",
    "socat (sender, local)": "thumper-mbuffer-socat-sender",
    "socat (network)": "thumper-mbuffer-socat-network",
}


def to_gbit_s(bytes_per_s: float) -> float:
    """Network units: 10^9 bits per second (netperf, link speeds)."""
    return bytes_per_s * 8 / 1e9

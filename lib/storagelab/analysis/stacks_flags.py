"""The plausibility flags of a fio run (notebook 05, and 08 and explore through it): whether its bandwidth is above
the device limit it is labelled with, within the printed figure's rounding of it, or taken with ``direct=1`` on a ZFS
that ignores it; with the design checks (``design``) they make a run's mark and keep a flagged run from heading a
ranking (``marked``; the rule itself, shared with 08 and 10, is ``run_verdicts``)."""

from __future__ import annotations

import polars as pl

from ..units import MiB
from . import design, plausibility


def printed_range(bw_bytes_per_s: float | None, exact: bool | None) -> tuple[float | None, float | None]:
    """The bandwidths a printed (rounded) value can stand for: fio's text prints 3-4 significant digits
    (``944MiB/s`` is 943.5-944.5 MiB/s); exact values (JSON, terse) are their own bounds."""
    if bw_bytes_per_s is None or exact:
        return bw_bytes_per_s, bw_bytes_per_s
    v = bw_bytes_per_s / MiB
    for d in range(4):
        if abs(round(v, d) - v) < 1e-9:
            return (v - 0.5 * 10**-d) * MiB, (v + 0.5 * 10**-d) * MiB
    return bw_bytes_per_s, bw_bytes_per_s


FLAGS = (
    "above the device's limit",
    "at the limit, within rounding",
    "direct=1 ignored (ZFS < 2.3)",
    "within the limit",
    "no device limit labelled",
    "just above the labelled limit (weak)",
)
# the flags that say nothing against a run (explore and 08 read them by position: keep 3 and 4)
CLEAN_FLAGS = (FLAGS[3], FLAGS[4])
# the flags that keep a run from heading a ranking (a weak one is shown, but does not)
SUSPECT_FLAGS = (FLAGS[0], FLAGS[1], FLAGS[2])
DESIGN_STATUS = "test design flagged"  # a run whose only flags are design checks (see ``marked``'s ``status``)
SHORT_FLAG = {FLAGS[0]: "above limit", FLAGS[1]: "at limit", FLAGS[2]: "direct ignored", FLAGS[5]: "above limit?"}
# above the labelled limit by less than this factor, a flag rests on how exact the limit is: weak (an 'about
# 170 MB/s' HDD ran at 1.14x it; 18 TB HDD datasheets give 260-270 MB/s)
WEAK_BELOW = 1.25
REGIME_WORDS = ("two regimes", "dips")  # a run's logs' verdicts (``run_verdicts.regimes``), as its mark names them


def with_flags(df: pl.DataFrame, margin: float = 1.0, weak_below: float = WEAK_BELOW) -> pl.DataFrame:
    """Add MiB/s and the plausibility flags of each run:

    * ``inflated``: even the lowest value the printed figure can stand for is above the device's stated limit
      (``device_limit_bytes_per_s`` x margin): if that limit is right, a cache answered (None: no limit);
      ``weak``: inflated, but by less than ``weak_below`` x the limit, so the flag is only as good as the limit;
      ``at_limit``: the limit lies within the printed figure's rounding, so the figure cannot tell;
    * ``direct_ignored``: ``direct=1`` on ZFS before 2.3, which accepts O_DIRECT and still caches
      (``plausibility.direct_ignored``);
    * ``shared_file``: numjobs > 1 all on one ``--filename``: their writes overlap, and a buffered ZFS merges
      them in a transaction group while O_DIRECT stacks send every one to the device.

    ``flag`` is the first of FLAGS that applies."""

    ranges = [printed_range(b, e) for b, e in zip(df["bw_bytes_per_s"], df["exact"], strict=True)]
    ignored = [
        bool(plausibility.direct_ignored(d, s, v))
        for d, s, v in zip(df["wl_direct"], df["stack"], df["zfs_version"], strict=True)
    ]
    shared = [design.shares_one_file(c, j) for c, j in zip(df["command"], df["wl_numjobs"], strict=True)]
    limit = pl.col("device_limit_bytes_per_s")
    return (
        df.with_columns(
            bw_mib_s=pl.col("bw_bytes_per_s") / MiB,
            bw_low_bytes_per_s=pl.Series([r[0] for r in ranges], dtype=pl.Float64),
            bw_high_bytes_per_s=pl.Series([r[1] for r in ranges], dtype=pl.Float64),
            limit=limit * margin,
        )
        .with_columns(
            inflated=pl.when(pl.col("limit").is_null())
            .then(None)
            .otherwise(pl.col("bw_low_bytes_per_s") > pl.col("limit")),
            at_limit=pl.when(pl.col("limit").is_null())
            .then(None)
            .otherwise(
                (pl.col("bw_low_bytes_per_s") <= pl.col("limit")) & (pl.col("bw_high_bytes_per_s") >= pl.col("limit"))
            ),
            direct_ignored=pl.Series(ignored, dtype=pl.Boolean),
            shared_file=pl.Series(shared, dtype=pl.Boolean),
        )
        .with_columns(weak=pl.col("inflated") & (pl.col("bw_low_bytes_per_s") < limit * weak_below))
        .with_columns(
            flag=pl.when(pl.col("inflated") & ~pl.col("weak"))
            .then(pl.lit(FLAGS[0]))
            .when(pl.col("weak"))
            .then(pl.lit(FLAGS[5]))
            .when(pl.col("at_limit"))
            .then(pl.lit(FLAGS[1]))
            .when(pl.col("direct_ignored"))
            .then(pl.lit(FLAGS[2]))
            .when(pl.col("limit").is_not_null())
            .then(pl.lit(FLAGS[3]))
            .otherwise(pl.lit(FLAGS[4])),
        )
        .drop("limit")
    )


def marked(d: pl.DataFrame) -> pl.DataFrame:
    """The runs judged by the one rule of 05, 08 and 10 (``run_verdicts.judged``: plausibility flags, design checks,
    their logs' regimes, ``suspect``, ``why``) with ``mark`` ('' or '⚠ above limit, overran, stall, dips': the short
    names), ``label_marked``, ``status`` (the flag, or DESIGN_STATUS for a run flagged by design checks alone) and
    ``rank`` (1 = first in its workload); sorted: per workload, unflagged runs first, fastest first."""
    marks = []
    regimes = d["regime"] if "regime" in d.columns else pl.Series([None] * d.height, dtype=pl.String)
    for flag, codes, regime in zip(d["flag"], d["design_flags"], regimes, strict=True):
        parts = [SHORT_FLAG[flag]] if flag in SHORT_FLAG else []
        parts += [c for c in codes if c not in parts]
        parts += [w for w in REGIME_WORDS if regime and regime.startswith(f"{design.MARK} {w}")]
        marks.append(f"{design.MARK} {', '.join(parts)}" if parts else "")
    d = d.with_columns(
        mark=pl.Series(marks, dtype=pl.String),
        status=pl.when(pl.col("flag").is_in(CLEAN_FLAGS) & pl.col("design_flagged"))
        .then(pl.lit(DESIGN_STATUS))
        .otherwise(pl.col("flag")),
    )
    return (
        d.with_columns(
            label_marked=pl.when(pl.col("mark") == "")
            .then(pl.col("label"))
            .otherwise(pl.concat_str(pl.col("label"), pl.lit(" "), pl.col("mark")))
        )
        .sort(["workload", "suspect", "bw_bytes_per_s"], descending=[False, False, True], nulls_last=True)
        .with_columns(rank=pl.int_range(pl.len()).over("workload") + 1)
    )


def file_bytes(row: dict) -> float | None:
    """Bytes a fio run's jobs read or write: ``size`` per job, once when the jobs share one ``--filename``."""
    if row.get("wl_size") is None:
        return None
    jobs = int(row["wl_numjobs"]) if str(row.get("wl_numjobs") or "").isdigit() else 1
    return float(row["wl_size"]) * (1 if row.get("shared_file") else jobs)

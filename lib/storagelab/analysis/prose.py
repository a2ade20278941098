"""Numbers into words, the same way in every report: rates in MiB/s with MB/s beside them, ratios with
their direction, and "within noise" where a difference is inside the spread of repeated runs."""

from __future__ import annotations

from ..units import GiB, MiB, TiB


def rate(bytes_per_s: float | None) -> str:
    """'1240.0 MiB/s (1300.2 MB/s)'."""
    if bytes_per_s is None:
        return "n/a"
    return f"{bytes_per_s / MiB:.1f} MiB/s ({bytes_per_s / 1e6:.1f} MB/s)"


def figure(x: float | None) -> str:
    """A number with two significant digits, never shown as 0 when it is not: 0.47, 3.1, 12, 1,234."""
    if x is None:
        return "n/a"
    if x == 0 or abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:.2g}" if abs(x) < 10 else f"{x:.0f}"


def size(n_bytes: float | None) -> str:
    if n_bytes is None:
        return "n/a"
    if abs(n_bytes) >= TiB:
        return f"{n_bytes / TiB:.2f} TiB"
    if abs(n_bytes) >= GiB:
        return f"{n_bytes / GiB:.2f} GiB"
    if abs(n_bytes) >= MiB:
        return f"{n_bytes / MiB:.1f} MiB"
    return f"{n_bytes / 1024:.1f} KiB" if abs(n_bytes) >= 1024 else f"{n_bytes:.0f} B"


def change(new: float, old: float) -> str:
    """'+12.3 % (1.12x)' or '-30.1 % (0.70x)'."""
    r = new / old
    return f"{(r - 1) * 100:+.1f} % ({r:.2f}x)"


def compared(
    new: float, old: float, noise_pct: float | None, ci_pct: float | None = None, runs: int | None = None
) -> str:
    """The change of ``new`` against ``old`` (the mean of repeated runs), against ``noise_pct`` (the repeats' spread,
    half their range in percent of the mean) and ``ci_pct`` (the 95 % confidence interval of the mean, in percent):
    inside the spread is "within noise"; outside the spread but inside the interval, a few runs cannot tell it from
    noise; outside both, a difference. Without repeats, says that noise is unknown."""
    c = change(new, old)
    if noise_pct is None:
        return f"{c}; one run each, so run-to-run noise is unknown"
    d = abs(new / old - 1) * 100
    if d <= noise_pct:
        return f"{c}, within noise (repeats spread ±{noise_pct:.1f} %)"
    if ci_pct is not None and d <= ci_pct:
        n = f"{runs} runs" if runs else "the repeats"
        return (
            f"{c}, outside the repeats' spread (±{noise_pct:.1f} %) but inside the 95 % confidence interval of their "
            f"mean (±{ci_pct:.1f} %): {n} cannot tell it from noise"
        )
    if ci_pct is not None:
        return f"{c}, outside the repeats' spread (±{noise_pct:.1f} %) and their 95 % confidence interval (±{ci_pct:.1f} %)"
    return f"{c}, outside run-to-run noise (±{noise_pct:.1f} %)"


def spread_pct(values: list[float]) -> float | None:
    """Half the range of repeated values relative to their mean, in percent; None for fewer than 2."""
    vals = [v for v in values if v is not None]
    if len(vals) < 2:
        return None
    mean = sum(vals) / len(vals)
    return (max(vals) - min(vals)) / 2 / mean * 100 if mean else None


def listing(items: list[str], limit: int = 6) -> str:
    if len(items) <= limit:
        return ", ".join(items)
    return ", ".join(items[:limit]) + f" and {len(items) - limit} more"

"""Numbers into words, the same way in every report: rates in MiB/s with MB/s beside them, ratios with
their direction, and "within noise" where a difference is inside the spread of repeated runs."""

from __future__ import annotations

from ..units import GiB, MiB, TiB


def rate(bytes_per_s: float | None) -> str:
    """'1240.0 MiB/s (1300.2 MB/s)'."""
    if bytes_per_s is None:
        return "n/a"
    return f"{bytes_per_s / MiB:.1f} MiB/s ({bytes_per_s / 1e6:.1f} MB/s)"


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


def compared(new: float, old: float, noise_pct: float | None) -> str:
    """The change of ``new`` against ``old``, and whether it is outside ``noise_pct`` (the relative spread
    of repeated runs, in percent); without repeats, says that noise is unknown."""
    c = change(new, old)
    if noise_pct is None:
        return f"{c}; one run each, so run-to-run noise is unknown"
    if abs(new / old - 1) * 100 <= noise_pct:
        return f"{c}, within noise (repeats spread ±{noise_pct:.1f} %)"
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

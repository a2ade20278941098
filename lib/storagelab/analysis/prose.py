"""Numbers into words, the same way in every report: rates in MiB/s with MB/s beside them, ratios with
their direction, and "within noise" where a difference is inside the spread of repeated runs."""

from __future__ import annotations

import math

from ..units import GiB, MiB, TiB
from . import stats


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


def _places(x: float, decimals: int) -> int:
    """``decimals``, or more for a value that is not 0 but would round to 0 there: enough for two significant digits
    (0.0039 at 2 places is 0.00; at 4, 0.0039)."""
    if x == 0 or abs(x) >= 0.5 * 10**-decimals:
        return decimals
    return max(decimals, 1 - math.floor(math.log10(abs(x))))


def times(x: float | None, decimals: int = 2) -> str:
    """A ratio: '2.00x', '15,250x'; one that is not 0 keeps two significant digits where ``decimals`` places would
    show it as 0 ('0.0039x', not '0.00x': a 64 MiB file against 16 GiB of RAM)."""
    if x is None:
        return "n/a"
    return f"{x:,.{_places(x, decimals)}f}x"


def percent(x: float | None, decimals: int = 1) -> str:
    """A percentage: '12.3 %'; one that is not 0 but rounds to 0 at ``decimals`` places, '< 0.1 %' (its size, not
    its sign: the words around it say which way); 0 itself, '0 %'."""
    if x is None:
        return "n/a"
    if x == 0:
        return "0 %"
    if abs(x) < 0.5 * 10**-decimals:
        return f"< {10**-decimals:.{decimals}f} %"
    return f"{x:.{decimals}f} %"


def ms(ns: float | None) -> str:
    """A duration in ms with ``figure``'s digits: '44,735 ms', '12 ms', '0.42 ms' (never '0 ms' for a time that is
    not 0)."""
    return "n/a" if ns is None else f"{figure(ns / 1e6)} ms"


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


def size_decimal(n_bytes: float | None) -> str:
    """A size in decimal units with three significant digits, beside ``size``'s binary one: '2.73 TB', '118 MB',
    '1.7 MB' (never '0.00 TB' for a size of MiB)."""
    if n_bytes is None:
        return "n/a"
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n_bytes) >= scale:
            return f"{n_bytes / scale:.3g} {unit}"
    return f"{n_bytes:.0f} B"


def change(new: float, old: float) -> str:
    """'+12.3 % (1.12x)' or '-30.1 % (0.70x)'."""
    r = new / old
    return f"{(r - 1) * 100:+.1f} % ({r:.2f}x)"


def mib(bytes_per_s: float) -> str:
    """'308.1 MiB/s' (signed values keep their sign)."""
    return f"{bytes_per_s / MiB:,.1f} MiB/s"


def comparison(c, a: str, b: str, fmt=mib) -> str:
    """A sentence for a ``stats.Comparison`` of ``a`` against ``b`` that states the test it used and its numbers:
    the change, then Welch's t (t, df, p, the interval of the difference), the single run against the prediction
    interval of the other side's repeats, or that no test is possible. ``fmt`` formats a rate or difference."""

    ch = change(c.a.mean, c.b.mean)
    level = f"{c.level * 100:.0f} %"
    if c.test == stats.PREDICTION:
        one, ref, reps = (a, b, c.b) if c.single == "a" else (b, a, c.a)
        verdict = (
            "outside it: a difference beyond run-to-run noise"
            if c.differs
            else f"inside it: {reps.n} runs cannot tell it from run-to-run noise"
        )
        clipped = (
            ""
            if c.interval.below is None
            else f"; its t low end, {fmt(c.interval.below)}, clipped at 0: a rate is not negative; {reps.n} runs with a "
            f"spread of {100 * reps.sd / reps.mean:.1f} % (sample sd / mean) give an interval too wide to tell much"
        )
        return (
            f"{ch}; tested: the one run of {one} against the {level} prediction interval for one new run from the "
            f"{reps.n} runs of {ref} ({fmt(c.interval.low)} to {fmt(c.interval.high)}, ±{c.interval_pct:.1f} %"
            f"{clipped}), " + verdict
        )
    if c.test == stats.WELCH:
        verdict = "a difference" if c.differs else "it includes no difference: the runs cannot tell it from noise"
        return (
            f"{ch}; tested: Welch's t test on {c.a.n} and {c.b.n} runs (t = {c.t:.2f}, df = {c.df:.1f}, "
            f"p = {c.p_value:.2g}); the {level} confidence interval of the difference is {fmt(c.interval.low)} to "
            f"{fmt(c.interval.high)}: {verdict}"
        )
    return f"{ch}; no test: {'one run each' if c.a.n == c.b.n == 1 else 'no spread'}, so run-to-run noise is unknown"


def clipped(iv, fmt=mib) -> str:
    """' (0 to 6,212.1 MiB/s: its t low end, -1,493.1 MiB/s, clipped at 0, a rate is not negative)' for an interval
    ``stats.t_interval`` clipped, else ''."""
    if iv is None or iv.below is None:
        return ""
    return f" ({fmt(iv.low)} to {fmt(iv.high)}: its t low end, {fmt(iv.below)}, clipped at 0, a rate is not negative)"


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

"""08's steady-state verdicts as one table where there are many (a ``--repeat auto`` lab study logs 80 runs x 5 log
kinds: 400 sentences nobody reads): one row per run and direction, one column per log kind, its verdict in each
cell; the sentences are kept for what is not steady (and for a steady series with dips far below its median)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import polars as pl

TABLE_FROM = 10  # series: from this many the verdicts are one table (``table``), sentences only for the rest
KINDS = ("bw", "iops", "lat", "clat", "slat")  # fio's log kinds, in the order of its options


def cell(v, value: Callable[[str, float], str]) -> str:
    """A verdict in a few words: 'steady 436.6 MiB/s (8-12 s)', 'not steady', 'two regimes', 'too short', ..."""
    text = v.state
    if v.state == "steady" and v.mean is not None:
        text = f"steady {value(v.kind, v.mean)} ({v.start_s:g}-{v.end_s:g} s)"
    return text + (", dips" if v.dips else "")


def table(verdicts: Sequence, value: Callable[[str, float], str]) -> pl.DataFrame:
    """One row per run (as reports name it) and direction, a column per log kind present: its verdict (``cell``)."""
    kinds = [k for k in KINDS if any(v.kind == k for v in verdicts)]
    kinds += sorted({v.kind for v in verdicts} - set(kinds))
    rows: dict[tuple[str, str], dict[str, str]] = {}
    for v in verdicts:
        rows.setdefault((v.name or v.run, v.direction), {})[v.kind] = cell(v, value)
    return pl.DataFrame(
        [{"run": run, "direction": d, **{k: cells.get(k, "") for k in kinds}} for (run, d), cells in rows.items()],
        schema={"run": pl.String, "direction": pl.String, **dict.fromkeys(kinds, pl.String)},
        orient="row",
    )


def said_apart(verdicts: Sequence) -> list:
    """The verdicts still said in a sentence beside the table, all but those its cell says in full: a plain
    'steady' (its mean and window are in the cell) and a 'not steady' where no window met both criteria. Two regimes,
    dips, where a run left the band of a window that met both criteria, logs of maxima and runs too short to judge
    keep their sentence (what they are, and why)."""
    plain = [v for v in verdicts if not v.dips and v.state in ("steady", "not steady")]
    return [v for v in verdicts if v not in plain or getattr(v, "left_value", None) is not None]


def summary(verdicts: Sequence) -> str:
    """The sentence above the table: how many series, of how many runs, and how many of each verdict."""
    counts = Counter(v.state for v in verdicts)
    runs = len({(v.name or v.run, v.direction) for v in verdicts})
    each = ", ".join(f"{n} {state}" for state, n in counts.most_common())
    apart = len(said_apart(verdicts))
    return (
        f"Steady-state verdicts of {len(verdicts)} logged series ({runs} runs and directions x log kinds): {each}; "
        "one row per run in the table of steady states ('not steady': no window of consecutive rounds meets both "
        "criteria and holds to the end of the run; 'dips': falls to a third of its median or less), and below a "
        f"sentence for each of the {apart} the table cannot say in a word (two regimes, dips, where a run left its "
        "band, maxima, too short)."
    )

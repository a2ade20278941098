"""``storagelab lab fio --repeat auto``: repeat each run until the spread of its key figure settles, as the
Phoronix Test Suite does, or until a maximum count.

The key figure of a run is its bandwidth as fio's group line gives it (the group's I/O over its elapsed time,
``fio_groups``), summed over directions; for one block size IOPS is the same figure divided by it, so both
settle together. The spread is the relative standard deviation of the runs so far (sample sd / mean, %). A
point is settled once at least ``min_runs`` runs have a spread at or below ``tolerance_pct``; each point
stops on its own, and what each reached is reported (runs, mean, spread, settled or not).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .errors import ParseError
from .parsers import parse_bytes

DEFAULT_TOLERANCE_PCT = 5.0
DEFAULT_MIN_RUNS = 3
DEFAULT_MAX_RUNS = 10


@dataclass(frozen=True)
class Settling:
    run_id: str
    figures: tuple[float, ...]  # key figure of each run so far, bytes/s
    tolerance_pct: float
    min_runs: int

    @property
    def n(self) -> int:
        return len(self.figures)

    @property
    def mean(self) -> float | None:
        return statistics.fmean(self.figures) if self.figures else None

    @property
    def spread_pct(self) -> float | None:
        """Relative sample standard deviation, %; None below two runs (no spread yet)."""
        if self.n < 2 or not self.mean:
            return None
        return 100.0 * statistics.stdev(self.figures) / self.mean

    @property
    def settled(self) -> bool:
        return self.n >= self.min_runs and self.spread_pct is not None and self.spread_pct <= self.tolerance_pct

    def line(self, max_runs: int) -> str:
        spread = "no spread (one run)" if self.spread_pct is None else f"spread {self.spread_pct:.1f} %"
        mean = f"{self.mean / 2**20:,.1f} MiB/s" if self.mean else "no bandwidth"
        verdict = (
            f"settled (<= {self.tolerance_pct:g} %)"
            if self.settled
            else f"NOT settled at the maximum of {max_runs} runs (tolerance {self.tolerance_pct:g} %)"
        )
        return f"{self.run_id}: {self.n} runs, mean {mean}, {spread}: {verdict}"


def not_settled(n: int, mean: float | None, sd: float | None, tolerance_pct: float = DEFAULT_TOLERANCE_PCT) -> str:
    """' Their spread is 89.2 % (sample sd / mean), above the 5 % tolerance of the lab's repeat-until-settled: not
    settled, so their mean is uncertain.' for repeats whose spread is above the lab's tolerance (notebooks 08 and 10
    say it of the runs they count, with one wording), '' where it is within it or there is no spread."""
    if n < 2 or not mean or sd is None:
        return ""
    spread = 100.0 * sd / mean
    if spread <= tolerance_pct:
        return ""
    return (
        f" Their spread is {spread:.1f} % (sample sd / mean), above the {tolerance_pct:g} % tolerance of the lab's "
        "repeat-until-settled: not settled, so their mean is uncertain."
    )


def key_figure(output: Path) -> float | None:
    """Bandwidth of one saved fio output, bytes/s: the last report's group lines (fio's I/O over elapsed time),
    summed over directions; None when it has none or cannot be read."""
    try:
        parsed, _ = parse_bytes(output.read_bytes(), str(output))
    except (ParseError, OSError):
        return None
    groups = parsed.rows("fio_groups")
    if not groups:
        return None
    last = max(g["doc_index"] for g in groups)
    total = sum(g["bw_bytes_per_s"] or 0.0 for g in groups if g["doc_index"] == last and g["direction"] != "mixed")
    return total or None


def repeat_until_settled(
    run_ids: list[str],
    *,
    run_round: Callable[[list[str], int], int],
    outputs_of: Callable[[str, int], list[Path]],
    tolerance_pct: float = DEFAULT_TOLERANCE_PCT,
    min_runs: int = DEFAULT_MIN_RUNS,
    max_runs: int = DEFAULT_MAX_RUNS,
    log=print,
) -> tuple[int, list[Settling]]:
    """Run rounds until every point settles or reaches ``max_runs``.

    ``run_round(ids, k)`` makes sure the points ``ids`` have ``k`` saved runs (the lab resumes: it runs only the
    missing ones) and returns its exit code; ``outputs_of(id, k)`` gives the point's ``k`` saved outputs. A
    non-zero round (a failure, Ctrl-C) stops here with its code. Returns the code and each point's state."""
    if not 1 <= min_runs <= max_runs:
        raise ValueError(f"--repeat auto needs 1 <= minimum ({min_runs}) <= maximum ({max_runs})")
    state: dict[str, Settling] = {}
    active = list(run_ids)
    k = min_runs
    while active:
        rc = run_round(active, k)
        if rc != 0:
            return rc, [state[r] for r in run_ids if r in state]
        for rid in active:
            figures = tuple(f for f in (key_figure(p) for p in outputs_of(rid, k)) if f is not None)
            state[rid] = Settling(rid, figures, tolerance_pct, min_runs)
        active = [r for r in active if not state[r].settled and k < max_runs]
        if active:
            log(f"lab fio: --repeat auto: {len(active)} point(s) not settled after {k} runs; one more each")
        k += 1
    for rid in run_ids:
        log(f"  {state[rid].line(max_runs)}")
    return 0, [state[r] for r in run_ids]

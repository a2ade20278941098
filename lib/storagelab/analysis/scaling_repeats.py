"""fio runs across vdev counts as configurations (notebook 01; pure compute): runs of one workload on one vdev count
are repeats of one configuration, summarised by ``stats`` (mean, the spread between them, the interval of the
mean), never points of the scaling; a configuration's ratio is its mean over the baseline configuration's mean,
judged against the baseline by the test the repeats allow (``stats.compare``: Welch, a prediction interval, or none).
Each configuration carries the design checks of its runs (``design``: the same checks 05 and 08 use), so a ratio
that rests on flagged or single runs is said to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from . import stats
from .design import CODES


@dataclass(frozen=True)
class Config:
    """The repeats of one workload on one vdev count (rows of ``scaling.fio`` with ``design.with_design``)."""

    key: dict  # the group's columns (stack, vdev type and width, workload, direction ...)
    vdev_count: int
    ideal: float  # the sum-of-vdevs rule: vdev_count / the baseline's
    runs: tuple[dict, ...]  # the runs, fastest first
    repeats: stats.Repeats  # of the runs' bandwidth, bytes/s
    baseline: stats.Repeats | None  # of the baseline configuration's runs (None: the group has none)
    comparison: stats.Comparison | None  # this configuration against the baseline (None for the baseline itself)
    flagged: int  # runs that count in the mean although flagged (every run of the configuration is: _flagged)
    flags: tuple[str, ...]  # the flags raised on any run, in CODES order
    is_baseline: bool  # this is the baseline configuration (its runs are the baseline's repeats)
    baseline_runs: tuple[dict, ...] = ()  # the baseline configuration's runs

    @property
    def counted(self) -> list[dict]:
        """The runs its mean is taken over (``_counted``)."""
        return _counted(list(self.runs))

    @property
    def left(self) -> list[dict]:
        """The runs left out of its mean."""
        return [r for r in self.runs if not r.get("counted", True)]

    @property
    def ratio(self) -> float | None:
        return self.repeats.mean / self.baseline.mean if self.baseline and self.baseline.mean else None

    @property
    def ratio_interval(self) -> tuple[float, float] | None:
        """Welch's interval of the difference of the means over the baseline's mean, as a ratio (1 + low/base,
        1 + high/base); None when the test was not Welch's."""
        c = self.comparison
        if c is None or c.test != stats.WELCH or c.interval is None or not self.baseline:
            return None
        return 1 + c.interval.low / self.baseline.mean, 1 + c.interval.high / self.baseline.mean

    @property
    def run_ratios(self) -> tuple[float, float] | None:
        """The slowest and the fastest run over the baseline's mean."""
        if not self.baseline or not self.baseline.mean:
            return None
        return self.repeats.low / self.baseline.mean, self.repeats.high / self.baseline.mean


def _counted(runs: list[dict]) -> list[dict]:
    """The runs that count in their configuration's mean: the rule of 05, 08 and 10 (``run_verdicts.counted``, column
    ``counted`` of ``scaling.fio``): a flagged run is left out where one of its configuration is clean."""
    return [r for r in runs if r.get("counted", True)]


def _bw(runs: list[dict]) -> list[float]:
    return [r["bw_bytes_per_s"] for r in runs]


def _flagged(run: dict) -> bool:
    """Left out by the rule of 05, 08 and 10 (``suspect``: a design check, its logs, a firm plausibility flag), or,
    where that verdict was not made, flagged by the design checks."""
    return bool(run["suspect"]) if run.get("suspect") is not None else bool(run.get("design_flagged"))


def configurations(scaled: pl.DataFrame, key: Sequence[str], baseline_count: int) -> list[Config]:
    """One ``Config`` per group ``key`` and vdev count of ``scaled`` (``scaling.fio`` rows with the ``design_``
    columns), groups in order, vdev counts ascending."""
    out: list[Config] = []
    if scaled.is_empty():
        return out
    key = [k for k in key if k in scaled.columns]
    for _, g in scaled.group_by(key, maintain_order=True):
        per_count = {
            int(c): sorted(cg.to_dicts(), key=lambda r: -r["bw_bytes_per_s"])
            for (c,), cg in g.sort("vdev_count").group_by("vdev_count", maintain_order=True)
        }
        base_runs = per_count.get(baseline_count)
        base = stats.summarise(_bw(_counted(base_runs))) if base_runs else None
        for count, runs in per_count.items():
            rep = base if count == baseline_count and base else stats.summarise(_bw(_counted(runs)))
            raised = {c for r in _counted(runs) for c in (r.get("design_flags") or [])}
            out.append(
                Config(
                    key={k: runs[0][k] for k in key},
                    vdev_count=count,
                    ideal=count / baseline_count,
                    runs=tuple(runs),
                    repeats=rep,
                    baseline=base,
                    comparison=None if count == baseline_count or base is None else stats.compare(rep, base),
                    flagged=sum(_flagged(r) for r in _counted(runs)),
                    flags=tuple(c for c in CODES.values() if c in raised),
                    is_baseline=count == baseline_count,
                    baseline_runs=tuple(base_runs or ()),
                )
            )
    return out


def frame(configs: list[Config], schema: pl.Schema | None = None) -> pl.DataFrame:
    """The configurations as a table (no runs): key, vdev count, runs, mean, ratio and its interval, flags; the key
    columns of the type ``schema`` (the runs' frame) gives them."""
    rows = []
    for c in configs:
        iv = c.ratio_interval
        rows.append(
            {
                **c.key,
                "vdev_count": c.vdev_count,
                "runs": c.repeats.n,
                "labels": [r["label"] for r in c.runs],
                "mean_bytes_per_s": c.repeats.mean,
                "ci_half_bytes_per_s": c.repeats.ci.half if c.repeats.ci else None,
                "relative": c.ratio,
                "relative_low": iv[0] if iv else None,
                "relative_high": iv[1] if iv else None,
                "ideal": c.ideal,
                "test": c.comparison.test if c.comparison else None,
                "flagged_runs": c.flagged,
                "flags": list(c.flags),
            }
        )
    if not rows:
        return pl.DataFrame()
    key = {k: v for k, v in (schema or {}).items() if k in configs[0].key}
    return pl.DataFrame(rows, schema_overrides=key, infer_schema_length=None)

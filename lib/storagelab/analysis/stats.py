"""Run-to-run uncertainty from repeated runs, and comparisons that say which test they used: the one statistics
module every analysis uses.

The unit of evidence is a *run* (one figure per run, e.g. ``fio_runs.run_rates``' bandwidth): repeats of one
workload on one configuration give a sample, and only their spread is run-to-run noise. fio's per-sample
``bw`` mean and stdev (the spread of the bandwidth log within one run) are not (see ``fio_runs``).

From n repeats (``summarise``):

* ``n``, ``mean``, ``sd`` (the sample standard deviation, n - 1 in the denominator);
* the confidence interval of the mean: mean ± t(1 - a/2, n - 1) x sd / sqrt(n) (Student's t);
* the prediction interval for one new run: mean ± t(1 - a/2, n - 1) x sd x sqrt(1 + 1/n). This, not the
  confidence interval, is what a single further run is judged against;
* a percentile bootstrap interval of the mean where n >= ``BOOTSTRAP_MIN_N`` (5): ``BOOTSTRAP_RESAMPLES``
  resamples drawn by a generator seeded with ``seed`` (same data, same interval);
* n = 1: ``sd`` and every interval are None, ``has_spread`` is False: there is no run-to-run estimate;
* runs' figures cannot be negative: a t interval whose low end falls below zero is clipped at 0 (``t_interval``;
  ``Interval.below`` keeps the t figure, and the sentences say so): repeats that spread that widely are not normal
  noise around their mean, and the interval mostly says how little they tell.

Two configurations (``compare``) are judged by:

* ``WELCH``: both have >= 2 repeats: Welch's t test (unequal variances, Welch-Satterthwaite degrees of freedom),
  the confidence interval of the difference of the means, and a two-sided p value;
* ``PREDICTION``: one side has a single run, the other >= 2 repeats: the single run against the other side's
  prediction interval for one new run;
* ``NONE``: no side has repeats (or the spread is zero on both): the difference alone, no test possible.

The t quantile and distribution are computed here (regularised incomplete beta, bisection), without scipy; they
match the published tables (``t_quantile(0.975, 1) = 12.706``, ``(0.975, 10) = 2.228``).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

LEVEL = 0.95  # the default two-sided level of every interval
BOOTSTRAP_MIN_N = 5  # fewer repeats give a bootstrap that only resamples a handful of values
BOOTSTRAP_RESAMPLES = 4000
BOOTSTRAP_SEED = 20261126

WELCH = "welch_t"
PREDICTION = "prediction_interval"
NONE = "none"
TESTS = {
    WELCH: "Welch's t test on the repeats of both sides",
    PREDICTION: "the single run against the other side's prediction interval for one new run",
    NONE: "no test: no side has repeated runs, so run-to-run noise is unknown",
}


# ---- the t distribution ------------------------------------------------------------------------------------


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularised incomplete beta function (modified Lentz)."""
    tiny, eps = 1e-300, 1e-15
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < eps:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` (> 0, not necessarily whole) degrees of freedom."""
    if df <= 0:
        raise ValueError(f"degrees of freedom must be positive, got {df}")
    if math.isinf(df):
        return NormalDist().cdf(t)
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The t value below which a share ``p`` of Student's t with ``df`` degrees of freedom lies
    (``t_quantile(0.975, 2) = 4.303``)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be between 0 and 1, got {p}")
    if math.isinf(df):
        return NormalDist().inv_cdf(p)
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return (lo + hi) / 2.0


def t_critical(n: int, level: float = LEVEL) -> float:
    """The two-sided t value for ``n`` repeats (n - 1 degrees of freedom) at ``level``."""
    if n < 2:
        raise ValueError(f"a t interval needs two or more repeats, got {n}")
    return t_quantile(1.0 - (1.0 - level) / 2.0, n - 1)


# ---- repeats of one workload -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Interval:
    """An interval around ``centre``: [low, high]; ``half`` is its half-width where it is symmetric. ``below``: the
    t interval's low end where it fell below zero for figures that cannot be negative (a bandwidth, IOPS): ``low``
    is then 0 (``t_interval``), and ``half`` stays the t half-width."""

    low: float
    high: float
    centre: float
    below: float | None = None

    @property
    def half(self) -> float:
        return self.high - self.centre if self.below is not None else (self.high - self.low) / 2.0

    @property
    def half_pct(self) -> float | None:
        """The half-width in percent of the centre (None for a centre of zero)."""
        return 100.0 * self.half / abs(self.centre) if self.centre else None

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high


@dataclass(frozen=True)
class Repeats:
    """Repeats of one workload: n, mean, sample sd and the intervals at ``level`` (None where n is too small:
    ``ci``/``pi`` need n >= 2, ``bootstrap`` n >= BOOTSTRAP_MIN_N)."""

    n: int
    mean: float
    sd: float | None
    low: float
    high: float
    level: float
    ci: Interval | None  # of the mean (t)
    pi: Interval | None  # for one new run (t, sqrt(1 + 1/n))
    bootstrap: Interval | None  # of the mean, percentile bootstrap, seeded

    @property
    def has_spread(self) -> bool:
        """Whether there is a run-to-run estimate (two or more runs)."""
        return self.n >= 2 and self.sd is not None

    @property
    def cv_pct(self) -> float | None:
        """sd in percent of the mean."""
        return 100.0 * self.sd / abs(self.mean) if self.sd is not None and self.has_spread and self.mean else None


def t_interval(centre: float, half: float, nonnegative: bool) -> Interval:
    """centre ± half; for figures that cannot be negative (``nonnegative``: every run's figure >= 0) a low end below
    zero is clipped at 0 and kept in ``below``: a t interval that reaches below zero says the repeats spread too
    widely for the t model (normal noise) to describe them, and an interval of negative bandwidth means nothing."""
    low = centre - half
    if nonnegative and low < 0:
        return Interval(0.0, centre + half, centre, below=low)
    return Interval(low, centre + half, centre)


def bootstrap_mean(values: Sequence[float], level: float = LEVEL, seed: int = BOOTSTRAP_SEED) -> Interval:
    """The percentile bootstrap interval of the mean: BOOTSTRAP_RESAMPLES resamples with replacement, drawn by
    ``random.Random(seed)`` from the values in sorted order (deterministic, whatever order the runs come in)."""
    rng = random.Random(seed)
    values = sorted(values)  # the same runs in any order give the same interval
    n = len(values)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(BOOTSTRAP_RESAMPLES))
    tail = (1.0 - level) / 2.0
    low = means[int(math.floor(tail * (len(means) - 1)))]
    high = means[int(math.ceil((1.0 - tail) * (len(means) - 1)))]
    return Interval(low, high, sum(values) / n)


def summarise(values: Sequence[float], level: float = LEVEL, seed: int = BOOTSTRAP_SEED) -> Repeats:
    """n, mean, sd and intervals of the repeats ``values`` (one figure per run; None values are left out)."""
    xs = [float(v) for v in values if v is not None and not math.isnan(v)]
    if not xs:
        raise ValueError("no values: a summary needs at least one run")
    n, mean = len(xs), sum(xs) / len(xs)
    if n == 1:
        return Repeats(1, mean, None, mean, mean, level, None, None, None)
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    t = t_critical(n, level)
    ci_half, pi_half = t * sd / math.sqrt(n), t * sd * math.sqrt(1.0 + 1.0 / n)
    rates = min(xs) >= 0  # runs' figures (bandwidth, IOPS): an interval of them stops at 0
    return Repeats(
        n=n,
        mean=mean,
        sd=sd,
        low=min(xs),
        high=max(xs),
        level=level,
        ci=t_interval(mean, ci_half, rates),
        pi=t_interval(mean, pi_half, rates),
        bootstrap=bootstrap_mean(xs, level, seed) if n >= BOOTSTRAP_MIN_N else None,
    )


def from_moments(n: int, mean: float, sd: float | None, level: float = LEVEL, nonnegative: bool = False) -> Repeats:
    """``Repeats`` from n, mean and sample sd already computed (no bootstrap: the values are not at hand);
    ``nonnegative``: the values cannot be negative (their intervals stop at 0: ``t_interval``)."""
    if n < 2 or sd is None:
        return Repeats(max(n, 1), mean, None, mean, mean, level, None, None, None)
    t = t_critical(n, level)
    ci_half, pi_half = t * sd / math.sqrt(n), t * sd * math.sqrt(1.0 + 1.0 / n)
    return Repeats(
        n,
        mean,
        sd,
        math.nan,
        math.nan,
        level,
        t_interval(mean, ci_half, nonnegative),
        t_interval(mean, pi_half, nonnegative),
        None,
    )


# ---- two configurations ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    """A against B. ``diff`` = a.mean - b.mean, ``diff_pct`` in percent of B's mean. ``test`` is WELCH,
    PREDICTION or NONE (``TESTS`` says each in words); ``interval`` is what the difference was judged by:

    * WELCH: the confidence interval of the difference of the means; ``t``, ``df`` and ``p_value`` are set;
    * PREDICTION: the prediction interval of the side with repeats (in that side's units, not a difference);
      ``single`` says which side ("a" or "b") is the one run;
    * NONE: None.

    ``differs``: True when the difference is outside the interval (significant at ``level``), False inside,
    None when no test was possible."""

    a: Repeats
    b: Repeats
    test: str
    level: float
    diff: float
    diff_pct: float | None
    interval: Interval | None
    differs: bool | None
    t: float | None = None
    df: float | None = None
    p_value: float | None = None
    single: str | None = None

    @property
    def test_name(self) -> str:
        return TESTS[self.test]

    @property
    def interval_pct(self) -> float | None:
        """The half-width the difference was judged by, in percent of B's mean (A's mean when A is the reference
        of a PREDICTION)."""
        if self.interval is None:
            return None
        ref = self.a.mean if self.single == "b" else self.b.mean
        return 100.0 * self.interval.half / abs(ref) if ref else None


def welch(a: Repeats, b: Repeats, level: float = LEVEL) -> Comparison:
    """Welch's t test of A's mean against B's (both need n >= 2 and a spread that is not zero on both)."""
    if not (a.has_spread and b.has_spread):
        raise ValueError("Welch's t test needs two or more repeats on each side")
    assert a.sd is not None and b.sd is not None  # has_spread
    va, vb = a.sd**2 / a.n, b.sd**2 / b.n
    diff = a.mean - b.mean
    se = math.sqrt(va + vb)
    if se == 0:
        return _untested(a, b, level)
    df = (va + vb) ** 2 / (va**2 / (a.n - 1) + vb**2 / (b.n - 1))
    t = diff / se
    half = t_quantile(1.0 - (1.0 - level) / 2.0, df) * se
    p = 2.0 * (1.0 - t_cdf(abs(t), df))
    return Comparison(
        a,
        b,
        WELCH,
        level,
        diff,
        _pct(diff, b.mean),
        Interval(diff - half, diff + half, diff),
        p < 1.0 - level,
        t,
        df,
        p,
    )


def against_prediction(single: Repeats, ref: Repeats, level: float = LEVEL, single_side: str = "a") -> Comparison:
    """One run (``single``, n = 1) against the prediction interval of ``ref``'s repeats (n >= 2). ``single_side``
    says whether the single run is A (the default: A = single, B = ref) or B."""
    if ref.pi is None:
        raise ValueError("a prediction interval needs two or more repeats")
    pi = ref.pi if ref.level == level else from_moments(ref.n, ref.mean, ref.sd, level, ref.low >= 0).pi
    assert pi is not None  # ref has two or more repeats (checked above)
    a, b = (single, ref) if single_side == "a" else (ref, single)
    diff = a.mean - b.mean
    return Comparison(
        a, b, PREDICTION, level, diff, _pct(diff, b.mean), pi, not pi.contains(single.mean), single=single_side
    )


def _untested(a: Repeats, b: Repeats, level: float) -> Comparison:
    diff = a.mean - b.mean
    return Comparison(a, b, NONE, level, diff, _pct(diff, b.mean), None, None)


def _pct(diff: float, ref: float) -> float | None:
    return 100.0 * diff / abs(ref) if ref else None


def compare(a: Repeats, b: Repeats, level: float = LEVEL) -> Comparison:
    """A against B by the test their repeats allow (module doc): Welch where both have repeats, the single run
    against the other's prediction interval where one has, else no test."""
    if a.has_spread and b.has_spread and (a.sd or b.sd):
        return welch(a, b, level)
    if a.n == 1 and b.has_spread and b.sd:
        return against_prediction(a, b, level, "a")
    if b.n == 1 and a.has_spread and a.sd:
        return against_prediction(b, a, level, "b")
    return _untested(a, b, level)


def compare_values(a: Sequence[float], b: Sequence[float], level: float = LEVEL) -> Comparison:
    """``compare`` from the two sides' per-run values."""
    return compare(summarise(a, level), summarise(b, level), level)

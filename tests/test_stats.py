"""The one statistics module: t quantiles against the published table, the intervals of repeats, the tests a
comparison states, and the review's numbers (analyses-2 N5)."""

import math

import pytest

from storagelab.analysis import stats


@pytest.mark.parametrize(
    "p, df, table",
    [
        (0.975, 1, 12.706),
        (0.975, 2, 4.303),
        (0.975, 3, 3.182),
        (0.975, 4, 2.776),
        (0.975, 5, 2.571),
        (0.975, 9, 2.262),
        (0.975, 10, 2.228),
        (0.975, 20, 2.086),
        (0.975, 30, 2.042),
        (0.975, 120, 1.980),
        (0.95, 10, 1.812),
        (0.995, 5, 4.032),
        (0.9, 1, 3.078),
    ],
)
def test_t_quantile_matches_the_published_table(p, df, table):
    assert round(stats.t_quantile(p, df), 3) == table


def test_t_distribution_edges():
    assert stats.t_quantile(0.975, math.inf) == pytest.approx(1.959964, abs=1e-6)
    assert stats.t_quantile(0.025, 10) == -stats.t_quantile(0.975, 10)
    assert stats.t_cdf(0.0, 3) == pytest.approx(0.5, abs=1e-12)
    assert stats.t_cdf(2.228139, 10) == pytest.approx(0.975, abs=1e-6)
    assert stats.t_cdf(stats.t_quantile(0.975, 3.8), 3.8) == pytest.approx(0.975, abs=1e-9)  # Welch's df
    with pytest.raises(ValueError):
        stats.t_quantile(1.0, 3)
    with pytest.raises(ValueError):
        stats.t_critical(1)


def test_the_reviews_prediction_interval_for_one_new_run():
    # analyses-2 N5: mdadm bitmap-none repeats n = 2, mean 554, sd 19.8 MiB/s
    r = stats.from_moments(2, 554.0, 19.8)
    assert round(r.pi.half, 1) == 308.1 and round(r.pi.half_pct, 1) == 55.6
    assert round(r.ci.half, 1) == 177.9 and round(r.ci.half_pct, 1) == 32.1
    # the 128 MiB-chunk run is -40.6 %: outside the CI of the mean, inside the prediction interval
    c = stats.compare(stats.summarise([329.0]), r)
    assert c.test == stats.PREDICTION and c.single == "a" and c.differs is False
    assert round(c.diff_pct, 1) == -40.6 and round(c.interval_pct, 1) == 55.6


def test_summarise_repeats():
    r = stats.summarise([10.0, 11.0, 12.0])
    assert (r.n, r.mean, r.sd, r.low, r.high) == (3, 11.0, 1.0, 10.0, 12.0)
    assert round(r.ci.half, 4) == round(4.302653 / math.sqrt(3), 4)
    assert round(r.pi.half, 4) == round(4.302653 * math.sqrt(1 + 1 / 3), 4)
    assert r.bootstrap is None and r.has_spread and round(r.cv_pct, 3) == 9.091


def test_one_run_has_no_run_to_run_estimate():
    r = stats.summarise([554.0])
    assert r.n == 1 and r.sd is None and r.ci is None and r.pi is None and r.bootstrap is None
    assert not r.has_spread and r.cv_pct is None
    c = stats.compare(r, stats.summarise([600.0]))
    assert c.test == stats.NONE and c.differs is None and c.interval is None and "no test" in c.test_name
    with pytest.raises(ValueError):
        stats.summarise([None])


def test_bootstrap_from_five_runs_is_seeded():
    xs = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    a, b = stats.summarise(xs), stats.summarise(xs)
    assert a.bootstrap == b.bootstrap  # deterministic
    assert stats.summarise(list(reversed(xs))).bootstrap == a.bootstrap  # whatever order the runs come in
    assert (round(a.bootstrap.low, 4), round(a.bootstrap.high, 4)) == (2.1667, 4.8333)
    assert a.bootstrap.low < a.mean < a.bootstrap.high
    assert a.bootstrap.low >= 1.0 and a.bootstrap.high <= 6.0
    assert stats.summarise(xs[:4]).bootstrap is None  # n < 5


def test_welch_on_repeats():
    c = stats.compare_values([10.0, 11.0, 12.0], [13.0, 14.0, 15.5])
    assert c.test == stats.WELCH and "Welch" in c.test_name
    assert round(c.t, 4) == -3.4125 and round(c.df, 3) == 3.806
    assert round(c.p_value, 4) == 0.0291 and c.differs is True
    assert c.interval.high < 0  # the whole interval of the difference is below zero
    same = stats.compare_values([10.0, 11.0, 12.0], [10.5, 11.5, 12.5])
    assert same.test == stats.WELCH and same.differs is False and same.p_value > 0.05


def test_the_single_run_may_be_either_side():
    ref = stats.summarise([100.0, 102.0, 98.0])
    c = stats.compare(ref, stats.summarise([150.0]))
    assert c.test == stats.PREDICTION and c.single == "b" and c.differs is True
    assert c.diff == -50.0 and c.interval == ref.pi

"""Statistics against known truths: exact power laws, CI coverage on simulated data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from icml24.core import stats


@pytest.mark.parametrize("exponent", [-1.0, -0.5, 0.37, 2.0])
def test_slope_of_exact_power_law(exponent):
    x = np.geomspace(10, 1e5, 9)
    y = 3.0 * x ** exponent
    fit = stats.loglog_slope(x, y)
    assert fit.slope == pytest.approx(exponent, abs=1e-12)
    assert math.exp(fit.intercept) == pytest.approx(3.0, rel=1e-10)
    assert fit.high - fit.low == pytest.approx(0.0, abs=1e-9)  # zero residuals: zero-width CI
    est = stats.slope_over_seeds(x, np.stack([y, 2 * y, 0.5 * y]))  # scale per seed leaves the slope
    assert est.value == pytest.approx(exponent, abs=1e-12)
    assert est.low == pytest.approx(exponent, abs=1e-9) and est.high == pytest.approx(exponent, abs=1e-9)


def test_slope_regression_ci_matches_hand_computation():
    x = np.array([1.0, math.e, math.e ** 2, math.e ** 3])  # log x = 0, 1, 2, 3
    y = np.exp(np.array([0.0, -1.1, -1.9, -3.0]))
    fit = stats.loglog_slope(x, y)
    # hand: xbar = 1.5, Sxx = 5, Sxy = -4.9 -> slope -0.98; residuals 0.03, -0.09, 0.09, -0.03 -> SS = 0.018
    assert fit.slope == pytest.approx(-0.98)
    t = 4.302652729911275  # t_{0.975, 2}
    assert fit.high - fit.slope == pytest.approx(t * math.sqrt(0.018 / 2 / 5))


@pytest.mark.parametrize("n", [5, 30])
def test_mean_ci_coverage_is_near_nominal(n):
    rng = np.random.default_rng(123)
    trials, truth = 400, 2.0
    hits = 0
    for i in range(trials):
        est = stats.bootstrap_ci(rng.normal(truth, 1.5, size=n), n_boot=1000, seed=i)
        hits += est.low <= truth <= est.high
    assert 0.91 <= hits / trials <= 0.985, hits / trials


def test_slope_over_seeds_coverage_is_near_nominal():
    rng = np.random.default_rng(7)
    x = np.geomspace(100, 1e4, 6)
    truth, trials, hits = -0.5, 300, 0
    for i in range(trials):
        noise = rng.normal(0, 0.15, size=(8, x.size)) + rng.normal(0, 0.1, size=(8, 1))
        ys = np.exp(truth * np.log(x) + noise)
        est = stats.slope_over_seeds(x, ys, n_boot=1000, seed=i)
        hits += est.low <= truth <= est.high
    assert 0.9 <= hits / trials <= 0.99, hits / trials


def test_nan_or_missing_never_gives_an_interval():
    assert all(math.isnan(v) for v in stats.mean_ci([1.0, float("nan"), 2.0])[:3])
    assert all(math.isnan(v) for v in stats.mean_ci([])[:3])
    one = stats.mean_ci([4.0])
    assert one.value == 4.0 and math.isnan(one.low) and math.isnan(one.high)
    assert math.isnan(stats.slope_over_seeds([1, 10], [[1.0, float("nan")]]).value)


def test_expanded_alpha_shrinks_tail_for_small_n():
    assert stats.expanded_alpha(5) < stats.expanded_alpha(30) < 0.025 + 1e-9

"""The template paper's math, and its QUICK claims (known truths, so they must all pass)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from icml24.core.registry import get_paper
from icml24.core.store import run_preset
from icml24.core.testing import check_config_rule
from icml24.papers._template import estimator_errors, running_mean, t_interval_coverage


def test_estimator_errors_against_closed_form():
    rng = np.random.default_rng(0)
    x = rng.normal(0.0, 1.0, size=(20000, 25))
    errs = estimator_errors(x, 0.0)
    assert errs.mse_mean == pytest.approx(1 / 25, rel=0.03)  # Var(xbar) = sigma^2 / n
    # finite-n efficiency of the median for n = 25 is ~1.52 (-> pi/2 as n grows)
    assert errs.mse_median / errs.mse_mean == pytest.approx(1.52, rel=0.05)


def test_t_interval_is_exact_for_gaussian_data():
    rng = np.random.default_rng(1)
    assert t_interval_coverage(rng.normal(3.0, 2.0, size=(40000, 4)), 3.0) == pytest.approx(0.95, abs=0.005)


def test_running_mean_matches_naive_loop():
    stream = np.random.default_rng(2).normal(size=500)
    ks = np.array([1, 7, 100, 500])
    assert np.allclose(running_mean(stream, ks), [stream[:k].mean() for k in ks])


@pytest.mark.slow
def test_quick_claims_all_pass(tmp_path):
    result = run_preset(get_paper("_template"), "quick", tmp_path)
    verdicts = {c["claim_id"]: c["verdict"] for c in result.claims}
    assert verdicts == {f"C{i}": "pass" for i in range(1, 7)}
    assert math.isclose(result.claims[2]["value"], math.pi / 2, rel_tol=0.06)


@pytest.mark.parametrize("preset, overrides, field", [
    ("SMOKE", [], None), ("QUICK", [], None), ("FULL", [], None),
    ("SMOKE", ["reps=0"], "reps"), ("SMOKE", ["n_values="], "n_values"), ("SMOKE", ["n_values=8,0,32"], "n_values"),
    ("SMOKE", ["n_values=32,8"], "n_values"), ("SMOKE", ["coverage_n=1"], "coverage_n"),
    ("SMOKE", ["stream_length=5"], "stream_length"), ("SMOKE", ["mu=inf"], "mu"),
])
def test_config_rules(preset, overrides, field):
    from icml24.papers._template import experiment as ex

    check_config_rule(getattr(ex, preset), overrides, ex.validate, field)

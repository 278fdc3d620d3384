"""The claims engine: every kind, every verdict, and no pass without a finite measured number."""

from __future__ import annotations

import math

import numpy as np
import pytest

from icml24.core.claims import Band, Claim, ClaimResult, Effect, Verdict, evaluate
from icml24.core.results import RunResult, SeedResult


def run_of(metrics_per_seed=None, curves_per_seed=None) -> RunResult:
    metrics_per_seed = metrics_per_seed or [{}] * len(curves_per_seed or [])
    curves_per_seed = curves_per_seed or [{}] * len(metrics_per_seed)
    seeds = [SeedResult(i, m, c) for i, (m, c) in enumerate(zip(metrics_per_seed, curves_per_seed))]
    return RunResult("x", "quick", {}, "h", seeds)


def claim(kind, metric="a", against=None, band=Band(lo=0), preset="quick", effect=None):
    return Claim("C", "s", "w", kind, metric, against, bands={preset: band},
                 effect=None if effect is None else Effect(effect, "test"))


def power_law_run(exponent, seeds=6, noise=0.02):
    rng = np.random.default_rng(0)
    n = np.geomspace(100, 1e4, 5)
    curves = [{"n": list(n), "err": list(n ** exponent * np.exp(rng.normal(0, noise, n.size)))}
              for _ in range(seeds)]
    return run_of(curves_per_seed=curves)


def test_order_pass_and_fail():
    r = run_of([{"a": 2 + 0.1 * i, "b": 1.0} for i in range(5)])
    assert evaluate(claim("order", against="b"), r, "quick").verdict is Verdict.PASS
    assert evaluate(claim("order", "b", against="a", effect=1.0), r, "quick").verdict is Verdict.FAIL
    # the same miss without a declared effect: the run's power is unknown, so it is not a failure
    assert evaluate(claim("order", "b", against="a"), r, "quick").verdict is Verdict.INCONCLUSIVE
    res = evaluate(claim("order", against="b"), r, "quick")
    assert res.value == pytest.approx(1.2) and res.low < 1.2 < res.high and res.n_seeds == 5


def test_slope_recovers_exponent_and_uses_band():
    r = power_law_run(-0.5)
    good = evaluate(claim("slope", "err", "n", Band(-0.6, -0.4)), r, "quick")
    assert good.verdict is Verdict.PASS and good.value == pytest.approx(-0.5, abs=0.02)
    bad = evaluate(claim("slope", "err", "n", Band(hi=-0.7), effect=-1.0), r, "quick")
    assert bad.verdict is Verdict.FAIL and bad.value == pytest.approx(good.value)


def test_within_constraint_equiv():
    r = run_of([{"a": v, "b": v + d} for v, d in zip([1.0, 1.1, 0.9, 1.05, 0.95], [0.01, -0.01, 0.0, 0.02, -0.02])])
    assert evaluate(claim("within", band=Band(0.8, 1.2)), r, "quick").verdict is Verdict.PASS
    assert evaluate(claim("within", band=Band(1.05, 1.5), effect=1.3), r, "quick").verdict is Verdict.FAIL
    c = evaluate(claim("constraint", band=Band(hi=1.1, closed=True)), r, "quick")
    assert c.verdict is Verdict.PASS and c.value == 1.1
    c = evaluate(claim("constraint", band=Band(hi=1.05), effect=1.0), r, "quick")
    assert c.verdict is Verdict.FAIL and "3 of 5 seeds inside" in c.detail  # 1.1 and 1.05 are not < 1.05
    assert evaluate(claim("equiv", against="b", band=Band(-0.05, 0.05)), r, "quick").verdict is Verdict.PASS
    # a margin far inside the seed-to-seed spread: even a true equivalence could not pass it
    res = evaluate(claim("equiv", against="b", band=Band(-0.001, 0.001), effect=0.0), r, "quick")
    assert res.verdict is Verdict.INCONCLUSIVE and res.power < 0.8 and res.label.startswith("inconclusive (power 0.")
    assert evaluate(claim("equiv", against="b", band=Band(0.05, 0.5), effect=0.2), r, "quick").verdict is Verdict.FAIL


def test_convergence_checks_final_value_and_drift():
    flat = [{"y": [5.0, 2.0, 1.01, 1.0, 1.0, 1.0, 1.0, 1.0 + 0.01 * i]} for i in range(5)]
    assert evaluate(claim("convergence", "y", band=Band(0.9, 1.1, tol=0.1)), run_of(curves_per_seed=flat),
                    "quick").verdict is Verdict.PASS
    drifting = [{"y": [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.8, 1.0 + 0.01 * i]} for i in range(5)]
    # where the paper is right the curve has converged (no drift is planted), so the drifting run fails
    assert evaluate(claim("convergence", "y", band=Band(0.9, 1.1, tol=0.1), effect=1.0),
                    run_of(curves_per_seed=drifting), "quick").verdict is Verdict.FAIL


@pytest.mark.parametrize("kind", ["order", "within", "constraint", "equiv"])
def test_nan_never_passes(kind):
    r = run_of([{"a": 1.0, "b": 0.0}, {"a": math.nan, "b": 0.0}, {"a": 1.0, "b": 0.0}])
    against = "b" if kind in ("order", "equiv") else None
    res = evaluate(claim(kind, against=against, band=Band(-10, 10)), r, "quick")
    assert res.verdict is Verdict.NOT_CHECKABLE and res.detail.startswith("seed 1 diverged: a is NaN")


@pytest.mark.parametrize("bad", [math.inf, -math.inf])
def test_infinity_never_passes(bad):
    r = run_of([{"a": 1.0, "b": 0.0}, {"a": bad, "b": 0.0}, {"a": 1.0, "b": 0.0}])
    res = evaluate(claim("constraint", band=Band(-10, 10)), r, "quick")
    assert res.verdict is Verdict.NOT_CHECKABLE and res.detail.startswith(f"seed 1 diverged: a is {bad}")


def test_nan_in_curve_never_passes():
    r = power_law_run(-0.5)
    r.seeds[2].curves["err"][1] = math.nan
    res = evaluate(claim("slope", "err", "n", Band(-1, 0)), r, "quick")
    assert res.verdict is Verdict.NOT_CHECKABLE and "seed 2 diverged: err" in res.detail


def test_missing_metric_or_band_or_seeds_is_not_checkable():
    r = run_of([{"a": 1.0}, {"a": 2.0}])
    res = evaluate(claim("within", "zzz"), r, "quick")
    assert res.verdict is Verdict.NOT_CHECKABLE and "zzz" in res.detail
    res = evaluate(claim("within", band=Band(0, 3)), r, "smoke")  # no band at smoke
    assert res.verdict is Verdict.NOT_CHECKABLE and res.value == 1.5  # measured anyway
    one = run_of([{"a": 1.0}])
    assert evaluate(claim("within", band=Band(0, 3)), one, "quick").verdict is Verdict.NOT_CHECKABLE


def test_claim_validation_and_round_trip():
    with pytest.raises(ValueError):
        Claim("C", "s", "w", "slope", "err")  # slope needs `against`
    with pytest.raises(ValueError):
        Claim("C", "s", "w", "vibes", "err")
    res = evaluate(claim("within", band=Band(0, 3)), run_of([{"a": 1.0}, {"a": 2.0}]), "quick")
    assert ClaimResult.from_dict(res.to_dict()) == res


def test_bands_are_strict_unless_closed():
    tie = run_of([{"a": 0.0, "b": 0.0} for _ in range(4)])
    res = evaluate(claim("order", against="b", effect=0.5), tie, "quick")
    assert res.verdict is Verdict.FAIL and res.low == res.high == 0.0  # a tie is no evidence of a > b
    ones = run_of([{"a": 1.0} for _ in range(4)])
    assert evaluate(claim("constraint", band=Band(lo=1), effect=2.0), ones, "quick").verdict is Verdict.FAIL
    # an effect on the strict bound itself could never pass: inconclusive (power 0), not failed
    res = evaluate(claim("constraint", band=Band(lo=1), effect=1.0), ones, "quick")
    assert res.verdict is Verdict.INCONCLUSIVE and res.power == 0.0
    assert evaluate(claim("constraint", band=Band(lo=1, closed=True)), ones, "quick").verdict is Verdict.PASS

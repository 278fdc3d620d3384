"""Power of a claim: planting, clipping, the closed form of a normal mean, simulation, determinism."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from icml24.core import power
from icml24.core.claims import CORR, NONNEG, PROB, Band, Claim, Effect, Verdict, claim_power, evaluate, plant_effect
from icml24.core.results import RunResult, SeedResult
from icml24.core.stats import mean_ci


def run_of(rows) -> RunResult:
    return RunResult("x", "quick", {}, "h", [SeedResult(i, m) for i, m in enumerate(rows)])


def normal_scores(n: int, sd: float) -> np.ndarray:
    """n values with mean 0 and standard deviation exactly ``sd``, spread like a normal sample."""
    z = norm.ppf((np.arange(n) + 0.5) / n)
    return z / z.std() * sd


def test_plant_shifts_to_the_effect_and_clips_to_the_range():
    p = power.plant(np.zeros(4), np.array([0.2, 0.4, 0.6, 0.8]), 1.0, 0.75, valid=PROB)
    assert p.shift == pytest.approx(0.25) and p.clipped == 1
    assert p.method.tolist() == pytest.approx([0.45, 0.65, 0.85, 1.0])
    # the method in `against` (a claim reading baseline - method): it moves the other way
    p = power.plant(np.array([1.0, 1.0]), np.array([0.5, 0.7]), -1.0, 0.9)
    assert np.mean(p.values) == pytest.approx(0.9) and p.method.tolist() == pytest.approx([0.0, 0.2])


def test_mean_ci_rows_is_mean_ci_row_by_row():
    rows = np.random.default_rng(1).normal(size=(7, 6))
    low, high = power.mean_ci_rows(rows)
    for r, lo, hi in zip(rows, low, high):
        est = mean_ci(r)
        assert lo == pytest.approx(est.low, abs=1e-12) and hi == pytest.approx(est.high, abs=1e-12)


@pytest.mark.parametrize("mu", [0.1, 0.2, 0.3])
def test_power_of_a_normal_mean_matches_the_closed_form(mu):
    """200 seeds with sd 1: the CI is mean +- 1.96 / sqrt(200) and the resampled mean is N(mu, 1/200), so
    P(CI low > 0) = Phi(mu sqrt(200) - 1.96)."""
    n = 200
    r = run_of([{"a": float(v)} for v in normal_scores(n, 1.0)])
    c = Claim("C", "s", "w", "within", "a", bands={"quick": Band(lo=0)}, effect=Effect(mu, "test"))
    z = norm.ppf(1 - power.expanded_alpha(n))
    assert claim_power(c, r, "quick") == pytest.approx(norm.cdf(mu * math.sqrt(n) - z), abs=0.025)


def test_power_matches_the_pass_rate_of_simulated_experiments():
    """The power estimated from one run of 12 seeds vs the fraction of 400 fresh experiments (normal
    per-seed differences, the same mean and sd) that pass the claim through `evaluate`."""
    n, sd, mu = 12, 1.0, 0.6
    c = Claim("C", "s", "w", "order", "m", "b", bands={"quick": Band(lo=0)}, effect=Effect(mu, "test"))
    observed = run_of([{"m": float(v), "b": 0.0} for v in normal_scores(n, sd)])
    estimated = claim_power(c, observed, "quick")
    rng = np.random.default_rng(7)
    no_effect = Claim("C", "s", "w", "order", "m", "b", bands={"quick": Band(lo=0)})  # pass or not, no power
    passed = [evaluate(no_effect, run_of([{"m": float(v), "b": 0.0} for v in rng.normal(mu, sd, n)]), "quick").verdict
              is Verdict.PASS for _ in range(400)]
    # the resampling world has a spread (n-1)/n of the truth and no t-tails: a little optimistic at 12 seeds
    assert estimated == pytest.approx(np.mean(passed), abs=0.1)


def test_power_is_deterministic_and_stable_across_generators():
    r = run_of([{"a": float(v)} for v in 0.3 + normal_scores(8, 0.4)])
    c = Claim("C", "s", "w", "within", "a", bands={"quick": Band(lo=0)}, effect=Effect(0.3, "test"))
    assert claim_power(c, r, "quick") == claim_power(c, r, "quick")
    values = r.metric("a")
    rates = [power.pass_rate(values, Band(lo=0).contains, seed=s) for s in range(5)]
    assert max(rates) - min(rates) < 0.05  # Monte Carlo error of 2500 replicates: sd <= 0.01


def test_a_baseline_at_the_ceiling_has_no_power():
    """Every baseline seed at Spearman 1: no method can be planted above it, so a miss is inconclusive."""
    rows = [{"m": 0.9 + 0.01 * i, "b": 1.0} for i in range(8)]
    c = Claim("C", "s", "w", "order", "m", "b", bands={"quick": Band(lo=0)}, effect=Effect(0.1, "test"),
              ranges={"m": CORR, "b": CORR})
    res = evaluate(c, run_of(rows), "quick")
    assert res.power == 0.0 and res.verdict is Verdict.INCONCLUSIVE
    unbounded = Claim("C", "s", "w", "order", "m", "b", bands={"quick": Band(lo=0)}, effect=Effect(0.1, "test"))
    res = evaluate(unbounded, run_of(rows), "quick")
    assert res.power == 1.0 and res.verdict is Verdict.FAIL  # the same run, were the metric unbounded


def test_planted_effect_passes_and_clips():
    rows = [{"m": 0.5 + 0.02 * i, "b": 0.4 + 0.01 * i} for i in range(6)]
    c = Claim("C", "s", "w", "order", "m", "b", bands={"quick": Band(lo=0)}, effect=Effect(0.3, "test"),
              ranges={"m": PROB, "b": PROB})
    planted = plant_effect(c, run_of(rows))
    res = evaluate(c, planted, "quick")
    assert res.value == pytest.approx(0.3) and res.verdict is Verdict.PASS
    assert res.power == claim_power(c, run_of(rows), "quick") == 1.0
    big = Claim("C", "s", "w", "order", "m", "b", bands={"quick": Band(lo=0.5)}, effect=Effect(0.55, "test"),
                ranges={"m": PROB, "b": PROB})
    clipped = plant_effect(big, run_of(rows))
    assert max(clipped.metric("m")) == 1.0 and evaluate(big, clipped, "quick").value < 0.55


def test_planting_twice_moves_the_unclipped_seeds_again_where_the_range_clips():
    """Why the positive control (tests/test_falsifiability.py) judges a planted run at the published run's power:
    planting is idempotent where nothing clips, but where the range clips some seeds a second planting shifts
    the others by the shortfall, so a power recomputed on the planted run overstates the published run's."""
    rows = [{"m": m, "b": b} for m, b in [(0.84, 0.91), (0.94, 0.90), (0.74, 0.90), (0.90, 0.92)]]
    c = Claim("C", "s", "w", "order", "m", "b", bands={"quick": Band(lo=0)}, effect=Effect(0.1, "test"),
              ranges={"m": PROB, "b": PROB})
    once = plant_effect(c, run_of(rows))
    assert evaluate(c, once, "quick").value < 0.1                    # clipped at 1.0: the effect is not reached
    twice = plant_effect(c, once)
    assert twice.metric("m")[2] > once.metric("m")[2]                 # the unclipped seed moved again
    assert claim_power(c, once, "quick") > claim_power(c, run_of(rows), "quick")
    free = [{"m": 0.3 + 0.02 * i, "b": 0.2 + 0.01 * i} for i in range(4)]        # nothing clips: idempotent
    once = plant_effect(c, run_of(free))
    assert plant_effect(c, once).metric("m").tolist() == pytest.approx(once.metric("m").tolist())
    assert claim_power(c, once, "quick") == claim_power(c, run_of(free), "quick")


def test_method_in_against_is_the_one_planted():
    rows = [{"alif": 0.3 + 0.01 * i, "brf": 0.2} for i in range(6)]  # claim reads ALIF - BRF > 0
    c = Claim("C", "s", "w", "order", "alif", "brf", bands={"quick": Band(lo=0)},
              effect=Effect(0.25, "test", method="brf"), ranges={"alif": NONNEG, "brf": NONNEG})
    planted = plant_effect(c, run_of(rows))
    assert planted.metric("alif").tolist() == run_of(rows).metric("alif").tolist()
    assert evaluate(c, planted, "quick").value == pytest.approx(0.25)


def test_effect_and_range_validation():
    with pytest.raises(ValueError, match="minimal"):
        Effect(0.1, "Sec. 1", minimal=True)
    with pytest.raises(ValueError, match="finite"):
        Effect(math.inf, "Sec. 1")
    with pytest.raises(ValueError, match="does not read"):
        Claim("C", "s", "w", "within", "a", ranges={"zzz": PROB})
    with pytest.raises(ValueError, match="method"):
        Claim("C", "s", "w", "within", "a", effect=Effect(0.1, "x", method="b"))


def test_seeds_for_power_follows_the_square_root_law():
    """A normal mean with sd 1 and effect 0.5 needs about ((1.96 + 0.84) / 0.5)^2 = 31 seeds for power 0.8."""
    from icml24.core.claims import seeds_for_power

    r = run_of([{"a": float(v)} for v in 0.5 + normal_scores(8, 1.0)])
    c = Claim("C", "s", "w", "within", "a", bands={"quick": Band(lo=0)}, effect=Effect(0.5, "test"))
    n = seeds_for_power(c, r, "quick")
    assert n is not None and 22 <= n <= 40
    at_ceiling = Claim("C", "s", "w", "within", "a", bands={"quick": Band(lo=0.6)}, effect=Effect(0.5, "test"))
    assert seeds_for_power(at_ceiling, r, "quick", max_seeds=64) is None  # the effect lies outside the band


def test_a_published_inconclusive_claim_says_how_many_seeds_would_see_the_effect():
    """``core.store.judge`` adds ``seeds_needed`` to inconclusive claims only: the seeds_for_power answer, or
    MAX_SEEDS + 1 where the band cannot be reached; the verdict label shows it."""
    from types import SimpleNamespace

    from icml24.core.claims import MAX_SEEDS, seeds_for_power
    from icml24.core.store import _with_seeds_needed

    r = run_of([{"a": float(v)} for v in 0.1 + normal_scores(8, 1.0)])      # the paper's 0.5, measured 0.1: blind
    blind = Claim("C", "s", "w", "within", "a", bands={"quick": Band(lo=0)}, effect=Effect(0.5, "test"))
    ceiling = Claim("D", "s", "w", "within", "a", bands={"quick": Band(lo=0.6)}, effect=Effect(0.5, "test"))
    easy = Claim("E", "s", "w", "within", "a", bands={"quick": Band(lo=-5)}, effect=Effect(0.5, "test"))
    paper = SimpleNamespace(claims=[blind, ceiling, easy])
    out = {c.id: _with_seeds_needed(paper, evaluate(c, r, "quick"), r, "quick") for c in paper.claims}
    assert out["C"].verdict is Verdict.INCONCLUSIVE and out["C"].seeds_needed == seeds_for_power(blind, r, "quick")
    assert 22 <= out["C"].seeds_needed <= 40                                   # ((1.96 + 0.84) / 0.5)^2 = 31
    assert out["C"].label == f"inconclusive (power {out['C'].power:.2f}; 0.8 at about {out['C'].seeds_needed} seeds)"
    assert out["D"].verdict is Verdict.INCONCLUSIVE and out["D"].seeds_needed == MAX_SEEDS + 1
    assert out["D"].label.endswith("; 0.8 not within 512 seeds)")
    assert out["E"].verdict is Verdict.PASS and out["E"].seeds_needed is None and out["E"].label == "pass"
    assert type(out["C"]).from_dict(out["C"].to_dict()) == out["C"]            # stored and read back

"""Claims of Agnihotri, Jain & Luo (ICML 2024), measured on the experiment of experiment.py.

The paper's evidence is learning curves on MuJoCo safe-RL tasks; what carries over to a CPU are its
two mechanisms: the average-criterion linearisation of the constraint (so the final policy is
feasible for the *average* cost, where a discounted surrogate can be misled) and the recovery step.
Tabular claims read the exact J and J_C of the final policy (no estimation error in the verdict); the
constrained score is min(1, (J - J_min) / (J* - J_min)) times a feasibility factor that is 1 within the
slack and 0 beyond twice it (experiment.score). The misleading instances (cmdp.py) offer two ways to use
the cost budget, one paying at once and one paying 150 steps (or about 200, at random) later; a fully
misled learner scores 0.76 there. Each baseline is compared with ACPO on its own. Bands were fixed before
the QUICK run, from a pilot on seeds 100-103.
"""

from __future__ import annotations

from icml24.core.claims import NONNEG, PROB, REAL, Band, Claim, Effect, Null

_SLACK = 0.05          # = Config.slack_frac: feasibility tolerance as a fraction of the instance's cost range
# The paper shows learning curves only (no table of final rewards or costs could be read here), so every claim
# declares the smallest effect that supports its words.
_CURVES = "learning curves only, no number printed"
_WHY_BETTER = ("0.05 (of the optimum's normalised reward; of the circle's reward, at most about 1), the margin these "
               "claims treat as a tie (C1b's, C3b's), is the smallest gap that 'higher' can mean")

CLAIMS = (
    Claim("C1a", "ACPO's policies satisfy the average-cost constraints (abstract: 'while satisfying the "
          "constraints') [paraphrase].", "Abstract; Sec. 6 (experiments)", "constraint",
          metric="acpo_worst_viol",
          statistic="worst over the three tabular ACMDPs of (J_C - l) / cost range of ACPO's final policy (exact); "
                    "every seed within the feasibility slack (batches of 20,000 samples per update)",
          bands={"quick": Band(hi=_SLACK, closed=True), "full": Band(hi=_SLACK, closed=True)},
          effect=Effect(0.0, f"Abstract; Sec. 6: ACPO's cost curves at or below the limit; {_CURVES}", minimal=True,
                        why="'satisfying the constraints': J_C <= l, a worst violation of 0 (the slack not used)"),
          ranges={"acpo_worst_viol": REAL}),
    Claim("C1b", "ACPO attains an average reward at least that of the discounted baselines adapted to the "
          "average criterion [paraphrase].", "Abstract; Sec. 6, learning curves", "order",
          metric="score_acpo_random", against="score_cpo_g0.99_random",
          statistic="per-seed constrained score of ACPO minus CPO (gamma 0.99) on a random ergodic ACMDP, where "
                    "discounting does not mislead; non-inferiority margin 0.05",
          bands={"quick": Band(lo=-0.05), "full": Band(lo=-0.05)},
          effect=Effect(0.0, f"Abstract; Sec. 6: ACPO at least level with the adapted baselines; {_CURVES}",
                        minimal=True, why="'at least that of': a tie supports the words on an instance where "
                                          "discounting does not mislead (the advantage is C1c-C1f's claim)"),
          ranges={"score_acpo_random": NONNEG, "score_cpo_g0.99_random": NONNEG}),
    *(Claim(cid, "Algorithms designed for discounted constrained RL problems often do not perform well for the "
            f"average CMDP setting: ACPO against {label}.", "Abstract", "order",
            metric="score_acpo_misleading", against=f"score_{tag}_misleading",
            statistic=f"per-seed constrained score of ACPO minus {label}, mean over the delayed-cost (150 steps) "
                      "and slow-mixing (switch 0.005) ACMDPs; CI > 0",
            bands={"quick": Band(lo=0.0), "full": Band(lo=0.0)},
            effect=Effect(0.05, f"Abstract; Sec. 6: discounted algorithms do worse on the average criterion; "
                                f"{_CURVES}", minimal=True, why=_WHY_BETTER),
            ranges={"score_acpo_misleading": NONNEG, f"score_{tag}_misleading": NONNEG})
      for cid, tag, label in (("C1c", "cpo_g0.9", "CPO (gamma 0.9)"), ("C1d", "cpo_g0.99", "CPO (gamma 0.99)"),
                              ("C1e", "pcpo_g0.99", "PCPO (gamma 0.99)"),
                              ("C1f", "ppo_lag_g0.99", "PPO-Lagrangian (gamma 0.99)"))),
    Claim("C2", "When the current policy is infeasible, ACPO's recovery step brings it back to feasibility "
          "[paraphrase of the recovery mechanism].", "Sec. 5 (practical ACPO, recovery) [R]", "constraint",
          metric="recovery_ratio",
          statistic="updates until exact J_C <= l + slack from an infeasible start (probability 0.91 on the "
                    "unconstrained optimum's actions), divided by the KL-geometry count ceil((J_C - l) / "
                    "sqrt(2 delta b^T H^-1 b)) at that start; worst of the random and delayed-cost ACMDPs; every "
                    "seed at most 3 (pilot seeds 100-104: 1.0-2.0)",
          bands={"quick": Band(hi=3, closed=True), "full": Band(hi=3, closed=True)},
          effect=Effect(1.0, "Sec. 5, the recovery step [R] lowers the linearised cost by sqrt(2 delta s) per update "
                             "(CPO Eq. 14); no count of updates printed", minimal=True,
                        why="a recovery that keeps its linearised rate needs the KL-geometry count: a ratio of 1"),
          ranges={"recovery_ratio": NONNEG}),
    Claim("C3", "On continuous control, ACPO keeps the average cost within its limit [paraphrase].",
          "Sec. 6 (Gym/MuJoCo experiments)", "within", metric="circle_Jc_acpo",
          statistic="average cost (fraction of time outside the band) of ACPO's final Gaussian MLP policy after "
                    "200 updates on the continuing point-circle task, mean over seeds; limit 0.1 plus the slack "
                    "of C1a, 5% of the cost range [0, 0.5]",
          bands={"quick": Band(hi=0.125), "full": Band(hi=0.125)},
          effect=Effect(0.1, f"Sec. 6: ACPO's cost curves at the limit (trust-region methods end on it); {_CURVES}",
                        minimal=True, why="'keeps the cost within its limit': a mean cost equal to the limit 0.1"),
          ranges={"circle_Jc_acpo": PROB}),
)

# Nulls of the claims that are not order claims (tests/test_falsifiability.py).
NULLS: dict[str, Null] = {
    # the unconstrained optimum (what ATRPO converges to): J_C of the unconstrained optimum is the top of
    # the cost range, limit_frac = 0.5 of the way up, so its violation is 0.5 of the range
    "C1a": Null("acpo_worst_viol", "ACPO ignores the constraint and ends at the unconstrained optimum "
                "(violation 0.5 of the cost range)", value=0.5),
    # no recovery: the infeasible start is never left, iters + 1 = 61 updates against the delayed start's count of 16: 3.81
    "C2": Null("recovery_ratio", "the recovery step is missing: the infeasible start is never left", value=3.81),
    # the unconstrained circling policy: the circle of radius 1 is outside |x| <= 0.7 about half of the time
    "C3": Null("circle_Jc_acpo", "the constraint is ignored: the point runs the full circle (cost about 0.5)",
               value=0.5),
}

"""Claims of Agnihotri, Jain & Luo (ICML 2024), measured on the experiment of experiment.py.

The paper's evidence is learning curves on MuJoCo safe-RL tasks; what carries over to a CPU are its
two mechanisms: the average-criterion linearisation of the constraint (so the final policy is
feasible for the *average* cost, where a discounted surrogate can be misled) and the recovery step.
Tabular claims read the exact J and J_C of the final policy (no estimation error in the verdict); the
constrained score is (J - J_min) / (J* - J_min) if J_C <= l + slack, else 0 (experiment.py).
Bands were fixed before the first QUICK run.
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
                    "every seed within the feasibility slack",
          bands={"quick": Band(hi=_SLACK, closed=True), "full": Band(hi=_SLACK, closed=True)},
          effect=Effect(0.0, f"Abstract; Sec. 6: ACPO's cost curves at or below the limit; {_CURVES}", minimal=True,
                        why="'satisfying the constraints': J_C <= l, a worst violation of 0 (the slack not used)"),
          ranges={"acpo_worst_viol": REAL}),
    Claim("C1b", "ACPO attains an average reward at least that of the discounted baselines adapted to the "
          "average criterion [paraphrase].", "Abstract; Sec. 6, learning curves", "order",
          metric="score_acpo_random", against="score_best_discounted_random",
          statistic="per-seed constrained score of ACPO minus the best of CPO (each gamma), PCPO and PPO-Lagrangian "
                    "on a random ergodic ACMDP; non-inferiority margin 0.05",
          bands={"quick": Band(lo=-0.05), "full": Band(lo=-0.05)},
          effect=Effect(0.0, f"Abstract; Sec. 6: ACPO at least level with the adapted baselines; {_CURVES}",
                        minimal=True, why="'at least that of': a tie supports the words on an instance where "
                                          "discounting does not mislead (the advantage is C1c's claim)"),
          ranges={"score_acpo_random": NONNEG, "score_best_discounted_random": NONNEG}),
    Claim("C1c", "Algorithms designed for discounted constrained RL problems often do not perform well for the "
          "average CMDP setting.", "Abstract", "order",
          metric="score_acpo_misleading", against="score_best_discounted_misleading",
          statistic="per-seed constrained score of ACPO minus the best discounted baseline, mean over the "
                    "delayed-cost and slow-mixing ACMDPs; CI > 0",
          bands={"quick": Band(lo=0.0), "full": Band(lo=0.0)},
          effect=Effect(0.05, f"Abstract; Sec. 6: discounted algorithms do worse on the average criterion; {_CURVES}",
                        minimal=True, why=_WHY_BETTER),
          ranges={"score_acpo_misleading": NONNEG, "score_best_discounted_misleading": NONNEG}),
    Claim("C2", "When the current policy is infeasible, ACPO's recovery step brings it back to feasibility "
          "[paraphrase of the recovery mechanism].", "Sec. 5 (practical ACPO, recovery) [R]", "constraint",
          metric="recovery_iters",
          statistic="updates until exact J_C <= l + slack, ACPO started at (near) the unconstrained optimum, worst "
                    "of the random and delayed-cost ACMDPs; every seed at most 5",
          bands={"quick": Band(hi=5, closed=True), "full": Band(hi=5, closed=True)},
          effect=Effect(5.0, "Sec. 5, the recovery step [R]: it restores feasibility; no count of updates printed",
                        minimal=True, why="the 5 updates that the band, fixed before the runs, takes as 'brings it "
                                          "back': the effect sits on the band's edge"),
          ranges={"recovery_iters": NONNEG}),
    Claim("C3a", "On continuous control, ACPO keeps the average cost within its limit [paraphrase].",
          "Sec. 6 (Gym/MuJoCo experiments)", "within", metric="circle_Jc_acpo",
          statistic="average cost (fraction of time outside the band) of ACPO's final policy on the continuing "
                    "point-circle task, mean over seeds; limit 0.1 plus 5% slack",
          bands={"quick": Band(hi=0.105), "full": Band(hi=0.105)},
          effect=Effect(0.1, f"Sec. 6: ACPO's cost curves at the limit (trust-region methods end on it); {_CURVES}",
                        minimal=True, why="'keeps the cost within its limit': a mean cost equal to the limit 0.1"),
          ranges={"circle_Jc_acpo": PROB}),
    Claim("C3b", "On continuous control, ACPO reaches a higher average reward than the baselines while "
          "satisfying the constraint [paraphrase].", "Abstract; Sec. 6", "order",
          metric="circle_score_acpo", against="circle_score_best_baseline",
          statistic="per-seed final average reward if feasible (else 0) of ACPO minus the best of CPO "
                    "(gamma 0.99) and PPO-Lagrangian; non-inferiority margin 0.05 (rewards are at most about 1)",
          bands={"quick": Band(lo=-0.05), "full": Band(lo=-0.05)},
          effect=Effect(0.05, f"Abstract; Sec. 6: ACPO's reward curves above the baselines'; {_CURVES}",
                        minimal=True, why=_WHY_BETTER),
          ranges={"circle_score_acpo": REAL, "circle_score_best_baseline": REAL}),
)

# Nulls of the claims that are not order claims (tests/test_falsifiability.py).
NULLS: dict[str, Null] = {
    # the unconstrained optimum (what ATRPO converges to): J_C of the unconstrained optimum is the top of
    # the cost range, limit_frac = 0.5 of the way up, so its violation is 0.5 of the range
    "C1a": Null("acpo_worst_viol", "ACPO ignores the constraint and ends at the unconstrained optimum "
                "(violation 0.5 of the cost range)", value=0.5),
    # no recovery: the infeasible start is never left (iters + 1 at QUICK)
    "C2": Null("recovery_iters", "the recovery step is missing: the infeasible start is never left", value=61.0),
    # the unconstrained circling policy: the circle of radius 1 is outside |x| <= 0.7 about half of the time
    "C3a": Null("circle_Jc_acpo", "the constraint is ignored: the point runs the full circle (cost about 0.5)",
                value=0.5),
}

"""Claims of Chen et al. (ICML 2024), measured on the experiment of experiment.py.

The paper's evidence is D4RL Gym-MuJoCo and DOPE (neither installs offline: both download); what carries
over to a CPU is the comparison of the energy model with the forward Gaussian ensemble on the same data,
with the same width, depth and training steps: on dynamics with a discontinuity (C1) and as the model of
a model-based policy evaluation (C2). Prediction errors are compared on a log10 scale (per seed,
log10 MSE of the forward model minus that of ETM: > 0 means ETM is better). Bands were fixed before
the first QUICK run. The offline-RL claim (EMPO, MOPO with an ETM ensemble) is not implemented
(README, "What we reproduce").
"""

from __future__ import annotations

from icml24.core.claims import CORR, NONNEG, REAL, Band, Claim, Effect, Null

_BETTER = {"quick": Band(lo=0.0), "full": Band(lo=0.0)}

# The paper's figure and table numbers could not be read here (shared notes: only the opening is stored), so every
# claim declares the smallest effect that supports its words.
_NO_NUMBERS = "numbers not retrievable here"
_WHY_LOG = ("a tenth of a decade (ETM's MSE 21% below the forward model's) is the smallest gap a log-scale error "
            "comparison shows as 'better'")

CLAIMS = (
    Claim("C1a", "ETM fits discontinuous transition dynamics better than forward transition models [paraphrase "
          "of the abstract].", "Abstract; Sec. 3 (the jumping example)", "order",
          metric="jump_log_mse_near_ftm", against="jump_log_mse_near_etm",
          statistic="per seed, log10 MSE of the Gaussian forward ensemble minus that of ETM, on states and actions "
                    "within 0.05 of the jump's action threshold; CI > 0",
          bands=_BETTER,
          effect=Effect(0.1, f"Abstract; Sec. 3, the jumping example: ETM fits the jump, the forward model smooths it; "
                        f"{_NO_NUMBERS}", minimal=True, why=_WHY_LOG, method="jump_log_mse_near_etm"),
          ranges={"jump_log_mse_near_ftm": REAL, "jump_log_mse_near_etm": REAL}),
    Claim("C1b", "ETM generalises better out of distribution than forward transition models [paraphrase of the "
          "abstract].", "Abstract; Sec. 5.1", "order",
          metric="jump_log_mse_ood_ftm", against="jump_log_mse_ood_etm",
          statistic="per seed, log10 MSE of the Gaussian forward ensemble minus that of ETM on unseen positions "
                    "p in [1, 2] (the dynamics do not depend on p); CI > 0",
          bands=_BETTER,
          effect=Effect(0.1, f"Abstract; Sec. 5.1: ETM generalises better to OOD transitions; {_NO_NUMBERS}",
                        minimal=True, why=_WHY_LOG, method="jump_log_mse_ood_etm"),
          ranges={"jump_log_mse_ood_ftm": REAL, "jump_log_mse_ood_etm": REAL}),
    Claim("C2a", "ETM-based off-policy evaluation is more accurate than evaluation with a forward model "
          "[paraphrase: 'significantly outperforms' on DOPE].", "Abstract; Sec. 5.2, Table 1", "order",
          metric="ope_abs_error_ftm", against="ope_abs_error_etm",
          statistic="per seed, DOPE's normalised absolute error of the forward-ensemble estimates minus that of "
                    "the ETM estimates over the Pendulum-v1 evaluation policies; CI > 0",
          bands=_BETTER,
          effect=Effect(0.05, f"Sec. 5.2, Table 1 (DOPE absolute error): 'significantly outperforms'; {_NO_NUMBERS}",
                        minimal=True, method="ope_abs_error_etm",
                        why="0.05 of the true-value span, the margin of a tie on a [0, 1]-normalised error, is the "
                            "smallest gap 'outperforms' can mean"),
          ranges={"ope_abs_error_ftm": NONNEG, "ope_abs_error_etm": NONNEG}),
    Claim("C2b", "ETM-based off-policy evaluation ranks policies better than evaluation with a forward model "
          "[paraphrase].", "Sec. 5.2, Table 1 (rank correlation)", "order",
          metric="ope_spearman_etm", against="ope_spearman_ftm",
          statistic="per seed, Spearman rank correlation of the ETM estimates with the true values minus that of "
                    "the forward-ensemble estimates; CI > 0 (a tie fails)",
          bands=_BETTER,
          effect=Effect(2 / 84, f"Sec. 5.2, Table 1 (rank correlation): ETM above the model-based baseline; "
                        f"{_NO_NUMBERS}", minimal=True,
                        why="one adjacent swap fewer among the 8 policies: Spearman moves by 6 * 2 / (8 * 63) = 0.024"),
          ranges={"ope_spearman_etm": CORR, "ope_spearman_ftm": CORR}),
)

# Every claim is an order claim: its null (the two models swapped) is built by tests/test_falsifiability.py.
NULLS: dict[str, Null] = {}

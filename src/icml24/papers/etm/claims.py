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

from icml24.core.claims import Band, Claim, Null

_BETTER = {"quick": Band(lo=0.0), "full": Band(lo=0.0)}

CLAIMS = (
    Claim("C1a", "ETM fits discontinuous transition dynamics better than forward transition models [paraphrase "
          "of the abstract].", "Abstract; Sec. 3 (the jumping example)", "order",
          metric="jump_log_mse_near_ftm", against="jump_log_mse_near_etm",
          statistic="per seed, log10 MSE of the Gaussian forward ensemble minus that of ETM, on states and actions "
                    "within 0.05 of the jump's action threshold; CI > 0",
          bands=_BETTER),
    Claim("C1b", "ETM generalises better out of distribution than forward transition models [paraphrase of the "
          "abstract].", "Abstract; Sec. 5.1", "order",
          metric="jump_log_mse_ood_ftm", against="jump_log_mse_ood_etm",
          statistic="per seed, log10 MSE of the Gaussian forward ensemble minus that of ETM on unseen positions "
                    "p in [1, 2] (the dynamics do not depend on p); CI > 0",
          bands=_BETTER),
    Claim("C2a", "ETM-based off-policy evaluation is more accurate than evaluation with a forward model "
          "[paraphrase: 'significantly outperforms' on DOPE].", "Abstract; Sec. 5.2, Table 1", "order",
          metric="ope_abs_error_ftm", against="ope_abs_error_etm",
          statistic="per seed, DOPE's normalised absolute error of the forward-ensemble estimates minus that of "
                    "the ETM estimates over the Pendulum-v1 evaluation policies; CI > 0",
          bands=_BETTER),
    Claim("C2b", "ETM-based off-policy evaluation ranks policies better than evaluation with a forward model "
          "[paraphrase].", "Sec. 5.2, Table 1 (rank correlation)", "order",
          metric="ope_spearman_etm", against="ope_spearman_ftm",
          statistic="per seed, Spearman rank correlation of the ETM estimates with the true values minus that of "
                    "the forward-ensemble estimates; CI > 0 (a tie fails)",
          bands=_BETTER),
)

# Every claim is an order claim: its null (the two models swapped) is built by tests/test_falsifiability.py.
NULLS: dict[str, Null] = {}

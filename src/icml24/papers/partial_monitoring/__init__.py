"""Tsuchiya, Ito & Honda (ICML 2024): exploration by optimization with hybrid regularizers for
best-of-both-worlds partial monitoring.

Components: finite games with observability classification (:mod:`.components`), the ExO solvers
(:mod:`.exo`), FTRL with hybrid / negentropy regularizers and the ExO learner loop (:mod:`.algorithm`),
and the best-of-both-worlds learner for globally observable games with its T^(2/3) baseline
(:mod:`.global_bobw`).
"""

from icml24.core.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "components": ["Game", "Observability", "observability", "bandit", "full_information", "apple_tasting",
                   "label_efficient", "dynamic_pricing", "make_game", "Environment", "stochastic_env",
                   "switching_env", "corrupted_env", "gaps"],
    "exo": ["ExOSolution", "SaddleSolver", "ExOSolver", "ExpWeightsExOSolver", "solve_exo_reference", "exo_objective",
            "stability_weights", "unbiasedness_residual"],
    "algorithm": ["hybrid_ftrl", "negentropy_ftrl", "complement_entropy", "LearnerSpec", "RunTrace", "Rounds",
                  "play", "bound_scale"],
    "global_bobw": ["GlobalSpec", "global_estimator", "stability_coefficient", "play_global"],
    "config": ["Config", "SMOKE", "QUICK", "FULL"],
    "experiment": ["run", "figures"],
    "claims": ["CLAIMS"],
})

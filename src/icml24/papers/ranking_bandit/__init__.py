"""Adaptively Learning to Select-Rank in Online Platforms (Wang, Dong, Jin, Zhan, Zhou; ICML 2024).

UCR: per-item GLM estimates with item-specific position effects, upper confidence bounds per
(item, position), and the ranked list chosen by maximum-weight imperfect bipartite matching.
"""

from icml24.core.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "components": ["mean_function", "design_vectors", "linear_predictor", "mean_responses", "list_satisfaction",
                   "RankedList", "best_list", "best_list_bruteforce"],
    "algorithm": ["confidence_radius", "sherman_morrison", "logistic_newton_step", "ItemGLMs", "UCR",
                  "EpsilonGreedy", "RandomRanker", "Oracle"],
    "env": ["RankingEnv", "synthetic_env", "optimal_values", "simulate", "Trace"],
    "movielens": ["Ratings", "load_ratings", "fit_factors", "movielens_env", "RatingFactors"],
    "rdata": ["read_r_object", "read_r_objects", "unserialize", "RObject"],
    "config": ["Config", "SMOKE", "QUICK", "FULL"],
    "experiment": ["run", "figures"],
    "claims": ["CLAIMS"],
})

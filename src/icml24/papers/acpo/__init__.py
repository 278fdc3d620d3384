"""ACPO (Agnihotri, Jain & Luo, ICML 2024): average-constrained policy optimization, its discounted
baselines, exact tabular ACMDPs (stationary distributions, bias functions, the occupancy LP) and a
continuing constrained point-on-a-circle task.
"""

from icml24.core.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "cmdp": ["CMDP", "Evaluation", "Averages", "Optimum", "stationary", "evaluate", "averages", "optimum", "cost_bounds",
             "random_cmdp", "delayed_cost_cmdp", "slow_mixing_cmdp", "TabularCMDPEnv"],
    "algorithm": ["METHODS", "Policy", "TabularSoftmaxPolicy", "GaussianMLPPolicy", "TabularCritic", "MLPCritic",
                  "fisher_vector_product", "conjugate_gradient", "TrustRegionStep", "trust_region_step",
                  "pcpo_step", "Batch", "UpdateInfo", "TrustRegionConfig", "trust_region_update",
                  "PPOLagConfig", "ppo_lag_update"],
    "point_circle": ["PointCircleEnv"],
    "config": ["Config", "SMOKE", "QUICK", "FULL"],
    "experiment": ["run", "figures", "train_tabular", "TabularTrace"],
    "claims": ["CLAIMS"],
})

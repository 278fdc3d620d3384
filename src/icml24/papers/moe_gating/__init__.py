"""Nguyen, Akbarian, Ho (ICML 2024): temperature vs activation dense-to-sparse gates in Gaussian MoE.

Components: the Gaussian MoE with a plain softmax gate, the dense-to-sparse (temperature) gate and the
activation dense-to-sparse gate (:mod:`.model`); batched maximum-likelihood fitting, the Voronoi loss
and the Hellinger density error (:mod:`.algorithm`); the experiment and its claims.
"""

from icml24.core.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "model": ["MoEParams", "Sample", "IndependenceCheck", "activation", "gate_scores",
              "gate_weights", "log_density", "log_likelihood", "sample", "independence_check"],
    "algorithm": ["FitResult", "pack", "unpack", "n_free", "fit_mle", "VoronoiLoss", "voronoi_loss",
                  "hellinger", "rescale_to_truth"],
    "config": ["GATES", "Config", "SMOKE", "QUICK", "FULL", "SEEDS"],
    "experiment": ["run", "figures"],
    "claims": ["CLAIMS"],
})

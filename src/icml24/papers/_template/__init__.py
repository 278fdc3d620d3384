"""Template paper: the complete contract on a tiny, exactly-understood experiment.

Copy this folder to ``papers/<slug>/``, then replace the card, the components, the experiment and the
claims with the paper's. It runs as it is (``icml24 run _template``) and is the fixture the contract
test exercises; it is not listed as a paper.
"""

from icml24.core.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "components": ["EstimatorErrors", "estimator_errors", "t_interval_coverage", "running_mean"],
    "config": ["Config", "SMOKE", "QUICK", "FULL"],
    "experiment": ["run", "figures"],
    "claims": ["CLAIMS"],
})

"""ETM (Chen et al., ICML 2024): energy-based transition models trained by InfoNCE with Langevin negatives,
the forward models they are compared with, a task with discontinuous dynamics, offline Pendulum-v1 data in
D4RL's arrays and Minari's format (a Pendulum-v1 with a torque dead zone), and model-based off-policy
evaluation with the DOPE metrics.
"""

from icml24.core.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "energy": ["EnergyNet", "Scalers", "LangevinConfig", "TRAIN_SAMPLER", "PREDICT_SAMPLER", "step_sizes",
               "energy_grad", "langevin", "info_nce", "grad_penalty", "ETMConfig", "ETMLoss", "ETM",
               "EnsemblePrediction", "ETMEnsemble"],
    "forward": ["ForwardConfig", "GaussianEnsemble", "DeterministicMLP"],
    "jump": ["JumpTask", "JumpData", "dynamics", "branches", "sample", "validity", "sharpness"],
    "data": ["ENV_ID", "DEAD_ZONE", "Controller", "EVALUATION", "register", "controller", "noisy", "uniform"],
    "ope": ["Bounds", "bounds", "model_values", "DopeMetrics", "dope_metrics"],
    "config": ["Config", "SMOKE", "QUICK", "FULL"],
    "experiment": ["run", "figures", "models", "jump_stage", "ope_stage"],
    "claims": ["CLAIMS"],
})

"""SEIKO (Uehara, Zhao, Black et al., ICML 2024): feedback-efficient online fine-tuning of diffusion models.
Each round queries noisy feedback on the current model's samples, refits a surrogate reward on all data,
adds an optimism bonus (UCB on the surrogate's last-layer features, or the maximum over bootstrap heads) and
fine-tunes the model by reward backprop through the DDIM sampler with a KL penalty to the previous round's
model. The shared DDIM pieces (eta, the differentiable truncated sampler, Tweedie) are in
:mod:`icml24.common.ddim`.
"""

from icml24.core.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "domain": ["Circle", "RewardBounds", "rotation"],
    "surrogate": ["RewardMLP", "SurrogateConfig", "fit_reward", "bootstrap_indices", "Ensemble", "fit_ensemble",
                  "covariance", "UCB"],
    "finetune": ["Sampler", "FinetuneConfig", "Finetuned", "finetune", "path_kl", "tilt", "kl_objective"],
    "loop": ["Domain", "LoopConfig", "RoundLog", "LoopResult", "online", "regret"],
    "config": ["Config", "SMOKE", "QUICK", "FULL", "METHODS"],
    "experiment": ["run", "figures", "circle", "pretrain", "sampler_of", "loop_config"],
    "claims": ["CLAIMS"],
})

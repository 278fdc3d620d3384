"""DP-IL (Wang et al., ICML 2024): imitation learning from diffusion-purified demonstrations. A DDPM over
[s; a] trained on a small optimal set purifies imperfect pairs (forward diffusion to an inverse point,
ancestral denoising back); BC on the purified set (with the paper's purifier and with the official code's)
is compared with BC and BCND on the raw data and with BC on the expert's labels (the oracle).
"""

from icml24.core.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "demos": ["NOISES", "Noise", "Pairs", "noisy_expert", "pairs", "expert_episodes"],
    "purify": ["DDPMConfig", "OfficialEps", "Purifier", "fit_purifier"],
    "bc": ["BCConfig", "MLPPolicy", "fit_bc", "BCNDResult", "bcnd", "act", "returns"],
    "config": ["Config", "SMOKE", "QUICK", "FULL"],
    "experiment": ["run", "figures", "data_sets", "demos_stage", "purify_stage", "imitate_stage", "optimal_stage",
                   "sweep_stage"],
    "claims": ["CLAIMS"],
})

"""RIG and ReGAL (Le, Sountsov, Hoffman, Lee, Patton & Saurous, ICML 2024): robust inverse graphics by joint
inference over a scene x with a prior learned on clean scenes and a corruption c with a flat prior, composed by
density (sigma = sigma_x + sigma_c). MAP over (x, c) falls into billboards; mean-field VI (path-derivative ELBO,
restarts) and ReGAL (Tweedie estimate, reconstruction guidance, Langevin steps on c, K importance-weighted chains
over a latent DDPM) recover the scene. The DDIM and Tweedie pieces are :mod:`icml24.common.ddim`.
"""

from icml24.core.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "render": ["Camera", "GridShape", "Render", "Field", "Corruption", "TrilinearTable", "composite", "compose",
               "render_fields", "sphere_field", "trilinear_table", "grid_lookup", "grid_lookup_naive",
               "corruption_field", "billboard_score", "ray_dirs", "render_loop"],
    "world": ["World", "Scene", "decode", "encode", "sample_clean", "sample_corruption"],
    "model": ["Setup", "setup", "render", "log_likelihood", "depth_error", "psnr"],
    "priors": ["RealNVP", "Coupling", "Standardise", "train_flow", "train_ddpm"],
    "inference": ["Model", "InferConfig", "Estimate", "RegalConfig", "stl_elbo", "map_fit", "vi_fit", "regal",
                  "prior_inits", "first_chains", "importance_weights"],
    "config": ["Config", "SMOKE", "QUICK", "FULL", "CORRUPTIONS", "METHODS"],
    "experiment": ["run", "figures", "world_of", "priors"],
    "claims": ["CLAIMS"],
})

"""Config, presets and seeds of rig: importable without torch (icml24 show)."""

from __future__ import annotations

from dataclasses import dataclass

from icml24.core.config import knob
from icml24.core.errors import UserError

CORRUPTIONS = ("rain", "fog", "fov")
"""``rain``: floater streaks on the frustum grid; ``fog``: homogeneous grey density; ``fov``: unknown field of view."""
METHODS = ("nocorr", "map", "vi", "regal", "regal_nocorr")
"""``nocorr``: VI over x alone, no corruption model; ``map``: MAP over (x, c); ``vi``: mean-field VI over (x, c)
(path-derivative ELBO, restarts, best ELBO); ``regal``: ReGAL over the latent DDPM prior, one run with the largest
K of regal_K, every K its first chains;
``regal_nocorr``: the same ReGAL sampler over x alone, no corruption model, with the largest K of regal_K (the
like-for-like baseline of ReGAL, as ``nocorr`` is VI's)."""


@dataclass(frozen=True)
class Config:
    """Robust inverse graphics on a procedural two-sphere world: depth from one corrupted image by joint
    inference over scene and corruption (MAP, VI, ReGAL) against inference with no corruption model."""

    corruptions: tuple[str, ...] = knob(CORRUPTIONS, "corruption types (config.CORRUPTIONS)", choices=CORRUPTIONS,
                                        nonempty=True)
    methods: tuple[str, ...] = knob(METHODS, "inference methods (config.METHODS)", choices=METHODS, nonempty=True)
    clean_control: bool = knob(False, "also run the no-corruption model on the clean images (the ceiling; the "
                                            "pilot ran it, QUICK does not to fit its 5 minutes)")
    # world and renderer
    image_size: int = knob(16, "image side H = W in pixels (the paper: 128)", ge=4, le=256)
    samples: int = knob(24, "quadrature samples per ray (midpoints of equal bins)", ge=2, le=512)
    grid_depth: int = knob(8, "depth slabs of the frustum corruption grid (rows and columns = image_size)",
                           ge=1, le=128)
    near: float = knob(1.5, "first depth of the ray interval", gt=0)
    far: float = knob(4.5, "last depth of the ray interval", gt=0)
    cam_dist: float = knob(3.0, "distance of the camera from the scene's origin", gt=1.5)
    fov_deg: float = knob(45.0, "nominal field of view in degrees (the model's camera)", gt=0, lt=180)
    fov_lo_deg: float = knob(30.0, "smallest field of view of the fov corruption (uniform prior)", gt=0, lt=180)
    fov_hi_deg: float = knob(60.0, "largest field of view of the fov corruption (uniform prior)", gt=0, lt=180)
    sigma_max: float = knob(30.0, "peak density of a sphere", gt=0)
    softness: float = knob(0.04, "edge width of a soft sphere", gt=0)
    sigma_c_max: float = knob(30.0, "clip of the corruption density softplus(a)", gt=0)
    min_gap: float = knob(0.7, "smallest distance between the two sphere centres of a clean scene", ge=0, le=1.5)
    fog_density: float = knob(0.12, "density of the fog", gt=0)
    rain_streaks: int = knob(6, "streaks per rain image", ge=1, le=1000)
    rain_density: float = knob(10.0, "density inside a rain streak", gt=0)
    obs_noise: float = knob(0.02, "std of the Gaussian noise added to the observed image", ge=0)
    lik_std: float = knob(0.05, "std of the Gaussian pixel likelihood p(y | x, c)", gt=0)
    scenes: int = knob(8, "test scenes per corruption per seed (all of a method in one batch)", ge=1, le=10_000)
    chain_scenes: int = knob(24, "FOV test scenes of claim 3's own ReGAL runs (K = 1 against K = 4 is a small "
                                 "effect beside the spread of 8 scenes: README); 0 skips them", ge=0, le=10_000)
    pair_scenes: int = knob(12, "further rain scenes on which MAP and VI alone run; claim 2a pools them with the "
                                "shared rain scenes (README); 0 skips them", ge=0, le=10_000)
    # priors (trained once on clean scenes, shared by every seed)
    train_scenes: int = knob(8000, "clean scene latents the priors are trained on", ge=16)
    flow_layers: int = knob(6, "RealNVP coupling layers", ge=1, le=64)
    flow_hidden: int = knob(64, "hidden width of each coupling's MLP", ge=2)
    flow_steps: int = knob(2000, "Adam steps of the flow's maximum likelihood fit", ge=1)
    ddpm_T: int = knob(1000, "DDPM steps T of the latent diffusion prior (linear betas 1e-4 to 0.02)", ge=10, le=10_000)
    ddpm_hidden: int = knob(128, "hidden width of the DDPM's eps-MLP", ge=2)
    ddpm_layers: int = knob(3, "hidden layers of the eps-MLP", ge=1, le=16)
    ddpm_steps: int = knob(3000, "Adam steps of the DDPM's L_simple", ge=1)
    prior_batch: int = knob(256, "batch of the prior fits", ge=1)
    prior_lr: float = knob(2e-3, "peak Adam learning rate of the prior fits (cosine decay)", gt=0)
    prior_seed: int = knob(0, "seed of the priors' training data and weights (one prior serves every seed)", ge=0)
    # MAP and VI
    steps: int = knob(150, "Adam steps of MAP, VI and the no-corruption VI", ge=1)
    lr: float = knob(0.05, "Adam learning rate of MAP and VI", gt=0)
    restarts: int = knob(4, "VI restarts R (best ELBO kept; the paper: 8)", ge=1, le=256)
    map_restarts: int = knob(2, "MAP restarts (best log joint kept)", ge=1, le=256)
    mc: int = knob(1, "Monte Carlo draws per VI step", ge=1, le=256)
    elbo_samples: int = knob(8, "draws of the final ELBO estimate that ranks the restarts", ge=1)
    init_std_x: float = knob(0.3, "initial std of q(x) (standardised latent)", gt=0)
    init_std_c: float = knob(0.5, "initial std of q(c) (grid pre-activations, FOV logit)", gt=0)
    c_init: float = knob(-4.0, "initial density pre-activation of the corruption grid (softplus(-4) = 0.018)")
    logstd_max: float = knob(0.0, "clamp of log std of q (bounds the ELBO under the flat prior)")
    # ReGAL
    regal_K: tuple[int, ...] = knob((1, 4), "chains K of ReGAL (the paper: 1, 4, 8); one run with the largest, every "
                                    "K its first K chains", ge=1, le=256, nonempty=True)
    ddim_steps: int = knob(150, "reverse diffusion steps of ReGAL (DDIM)", ge=1)
    eta: float = knob(1.0, "DDIM noise level of ReGAL's sampler", ge=0, le=1)
    guidance: float = knob(0.03, "reconstruction-guidance scale lambda", ge=0)
    langevin_steps: int = knob(1, "Langevin steps on c per diffusion step", ge=1, le=100)
    langevin_step: float = knob(1e-3, "Langevin step size on the grid's pre-activations", gt=0)
    langevin_step_fov: float = knob(1e-4, "Langevin step size on the field of view's logit", gt=0)
    clip_x0: float = knob(4.0, "ReGAL clamps the Tweedie estimate xhat_0 to [-clip_x0, clip_x0]", gt=0)
    threads: int = knob(1, "torch threads per seed", ge=1)


SMOKE = Config(image_size=6, samples=6, grid_depth=2, scenes=2, chain_scenes=2, pair_scenes=2, train_scenes=64, flow_layers=2,
               flow_hidden=8, flow_steps=5, ddpm_T=50, ddpm_hidden=8, ddpm_layers=1, ddpm_steps=5, prior_batch=32,
               steps=3, restarts=2, map_restarts=1, elbo_samples=2, regal_K=(1, 4), ddim_steps=3)
QUICK = Config()
FULL = Config(image_size=64, samples=64, grid_depth=16, scenes=50, chain_scenes=200, pair_scenes=100,
              train_scenes=50_000,
              flow_steps=20_000, ddpm_steps=40_000, ddpm_hidden=256, steps=1000, restarts=8, map_restarts=8,
              regal_K=(1, 4, 8), ddim_steps=200)
SEEDS = {"smoke": (0,), "quick": tuple(range(6)), "full": tuple(range(5))}
PILOT_SEEDS = tuple(range(100, 106)) + tuple(range(200, 208)) + tuple(range(300, 306)) + tuple(range(400, 406))
"""Development seeds of the pilots (never the claim or held-out seeds): 100-105 the first design's, 200-207,
300-305 and 400-405 the second's (README)."""


def validate(config: Config) -> None:
    """Rules across fields (called by the CLI before anything runs)."""
    if not config.near < config.far:
        raise UserError(f"near={config.near}, far={config.far}: need near < far")
    if not config.near < config.cam_dist - 1.0 or not config.cam_dist + 1.0 < config.far:
        raise UserError(f"near={config.near}, far={config.far}: the scene (radius 1 around the origin, camera at "
                        f"distance {config.cam_dist}) must lie inside [near, far]")
    if not config.fov_lo_deg < config.fov_deg < config.fov_hi_deg:
        raise UserError(f"fov_lo_deg={config.fov_lo_deg}, fov_deg={config.fov_deg}, fov_hi_deg={config.fov_hi_deg}: "
                        "need fov_lo_deg < fov_deg < fov_hi_deg")
    if list(config.regal_K) != sorted(set(config.regal_K)):
        raise UserError(f"regal_K={','.join(map(str, config.regal_K))}: need increasing, distinct chain counts")
    if len(set(config.corruptions)) != len(config.corruptions) or len(set(config.methods)) != len(config.methods):
        raise UserError("corruptions and methods must not repeat")

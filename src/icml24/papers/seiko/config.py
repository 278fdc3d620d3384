"""Config, presets and seeds of seiko: importable without torch (icml24 show)."""

from __future__ import annotations

from dataclasses import dataclass

from icml24.core.config import knob
from icml24.core.errors import UserError

METHODS = ("ucb", "bootstrap", "thompson", "greedy", "nonadaptive", "guidance", "nokl")
"""``ucb``, ``bootstrap``, ``thompson``: SEIKO with either bonus, or with a posterior draw of the reward
(Langevin); ``greedy``: no bonus; ``nonadaptive``: every query at once from the pretrained model, one fine-tuning
of all the rounds' steps; ``guidance``: every query at once, no fine-tuning, the pretrained sampler guided by the
surrogate's gradient; ``nokl``: ``ucb`` with beta = 0."""


@dataclass(frozen=True)
class Config:
    """SEIKO (UCB and bootstrap) against greedy, non-adaptive and no-KL online fine-tuning of a diffusion model
    on a circle embedded in R^d whose optimum is scarce in the data and whose reward keeps rising off it."""

    domain: str = knob("circle", "the feasible manifold (domain.py)", choices=("circle",))
    methods: tuple[str, ...] = knob(METHODS, "methods run (config.METHODS)", choices=METHODS, nonempty=True)
    # domain
    dim: int = knob(8, "ambient dimension d of the embedded circle", ge=3, le=256)
    kappa: float = knob(1.0, "von Mises concentration of the data's angle at 0 (density at pi: exp(-2 kappa) "
                             "of that at 0)", gt=0, le=50)
    w_off: float = knob(2.0, "weight of the off-manifold term h of the true reward", ge=0)
    decoy: float = knob(1.5, "height of a local optimum of the reward at theta = 0 (0: the issue's cos reward)", ge=0)
    decoy_width: float = knob(0.6, "width in angle of that local optimum", gt=0)
    valid_eps: float = knob(0.1, "a sample within this distance of the circle is valid", gt=0)
    data_size: int = knob(20_000, "pretraining data points", ge=10)
    # pretrained diffusion model
    T: int = knob(1000, "DDPM steps (linear beta from 1e-4 to 0.02)", ge=10, le=10_000)
    hidden: int = knob(256, "hidden width of the eps-MLP", ge=4)
    layers: int = knob(3, "hidden layers of the eps-MLP", ge=1, le=16)
    time_dim: int = knob(32, "size of the step embedding of the eps-MLP (even)", ge=2)
    pretrain_steps: int = knob(8000, "Adam steps of the pretraining (L_simple)", ge=1)
    pretrain_batch: int = knob(512, "batch of the pretraining", ge=1)
    pretrain_lr: float = knob(2e-3, "peak Adam learning rate of the pretraining (cosine decay to 0)", gt=0)
    pretrain_ema: float = knob(0.995, "EMA decay of the pretrained weights (0: the last weights)", ge=0, lt=1)
    pretrain_seed: int = knob(0, "seed of the pretraining data and weights: one pretrained model serves every "
                                 "seed (like the paper's one Stable Diffusion)", ge=0)
    ddim_steps: int = knob(30, "DDIM sampling steps S (official: 50)", ge=1)
    eta: float = knob(1.0, "DDIM noise level (official: 1; the KL needs > 0)", gt=0, le=1)
    clip_x0: float = knob(3.0, "the sampler clamps its estimate xhat_0 to [-clip_x0, clip_x0] (diffusers' "
                                "clip_sample; the data lie in [-1, 1]); keeps runaway fine-tuning finite", gt=0)
    grad_steps: int = knob(15, "truncated backprop: gradients through the last K DDIM steps (official: random "
                                "K in [0, 50])", ge=1)
    # the online loop
    budgets: tuple[int, ...] = knob((32, 64, 128, 256), "fresh queries per round (official: 1024, 2048, 4096, 8192)",
                                    ge=1, nonempty=True)
    noise: float = knob(0.1, "std of the feedback noise y = r(x) + N(0, noise^2) (official: 0.1)", ge=0)
    sur_hidden: int = knob(64, "hidden width of the surrogate", ge=2)
    sur_features: int = knob(16, "width of the surrogate's last-layer features phi (official: 16)", ge=1)
    sur_steps: int = knob(300, "Adam steps of each surrogate fit (official: 300 epochs)", ge=1)
    sur_batch: int = knob(512, "surrogate points per step (official: 512)", ge=1)
    sur_lr: float = knob(1e-3, "Adam learning rate of the surrogate (official: 1e-3)", gt=0)
    sur_weight_decay: float = knob(0.0, "Adam weight decay of the surrogate", ge=0)
    val_frac: float = knob(0.05, "share of the data held out to keep the surrogate's best weights (official: 0.05)",
                           ge=0, lt=1)
    covariance: str = knob("paper", "Sigma of the UCB bonus: paper (sum phi phi^T + lambda I, shrinks with n) or "
                                    "official (centred covariance / (n - 1) + lambda I)", choices=("paper", "official"))
    alpha: float = knob(3.0, "UCB bonus weight alpha (official: 1e-2 on aesthetic scores)", ge=0)
    lam: float = knob(1e-3, "lambda of Sigma (official: 1e-3)", gt=0)
    bonus_clip: float = knob(10.0, "clip C of the UCB bonus (official: 10)", gt=0)
    heads: int = knob(4, "bootstrap heads (official: 4)", ge=2, le=64)
    ts_steps: int = knob(2000, "thompson: Langevin steps of the posterior draw from the fitted surrogate", ge=1)
    ts_step: float = knob(1e-5, "thompson: Langevin step size eps (also the injected noise's variance; the "
                                "official code instead adds noise of std 1e-5 sqrt(lr / batch) to the training "
                                "gradients)", gt=0, le=1)
    ts_prior: float = knob(1.0, "thompson: std of the Gaussian prior over every surrogate weight", gt=0)
    guidance_scale: float = knob(10.0, "guidance: scale w of the surrogate's gradient in the guided noise "
                                       "prediction (pilot: the largest of 1, 3, 10, 30, 100 that stays valid)", ge=0)
    beta: float = knob(0.7, "KL weight beta of the fine-tuning (official: 0.01 with loss weight 0.01)", ge=0)
    ft_steps: int = knob(50, "fine-tuning Adam steps per round", ge=1)
    ft_batch: int = knob(64, "samples per fine-tuning step", ge=1)
    ft_lr: float = knob(1e-3, "Adam learning rate of the fine-tuning (official: 1e-3)", gt=0)
    ft_clip: float = knob(5.0, "gradient-norm clip of the fine-tuning (official: 5)", gt=0)
    eval_samples: int = knob(1000, "samples of each final model for the true reward and validity", ge=1)
    threads: int = knob(1, "torch threads per seed", ge=1)


SMOKE = Config(data_size=200, T=100, hidden=16, layers=1, time_dim=8, pretrain_steps=20, pretrain_batch=64,
               ddim_steps=4, grad_steps=2, budgets=(8, 8), sur_hidden=8, sur_features=4, sur_steps=5, heads=2,
               ft_steps=2, ft_batch=8, eval_samples=50, ts_steps=3)
QUICK = Config(methods=tuple(m for m in METHODS if m != "thompson"))
"""Every method but Thompson sampling, which no claim reads and which costs 14 s a seed (QUICK ran 5 min 12 s
from an empty cache with it, over its 5 minutes); ``--set methods=...`` adds it back."""
FULL = Config(data_size=20_000, hidden=256, pretrain_steps=20_000, ddim_steps=50, grad_steps=25,
              budgets=(1024, 2048, 4096, 8192), ft_steps=200, ft_batch=128, eval_samples=4000)
SEEDS = {"smoke": (0,), "quick": tuple(range(8)), "full": tuple(range(10))}
PILOT_SEEDS = tuple(range(100, 106))
"""Development seeds of the pilot that fixed the bands (never the claim seeds)."""


def validate(config: Config) -> None:
    """Rules across fields (called by the CLI before anything runs)."""
    if config.grad_steps > config.ddim_steps:
        raise UserError(f"grad_steps={config.grad_steps} > ddim_steps={config.ddim_steps}: the truncation cannot "
                        "exceed the sampling steps")
    if config.ddim_steps >= config.T:
        raise UserError(f"ddim_steps={config.ddim_steps}: must be below T={config.T} (the sampler stops at t = 1)")
    if "thompson" in config.methods and config.noise <= 0:
        raise UserError("noise=0 with method thompson: the posterior draw needs the feedback noise (> 0) in its "
                        "likelihood")
    if config.time_dim % 2:
        raise UserError(f"time_dim={config.time_dim}: must be even (sine and cosine halves)")

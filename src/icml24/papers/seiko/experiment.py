"""Experiment of SEIKO: ``run(config, seed)`` and the figures.

One pretrained model serves every seed (like the paper's one Stable Diffusion): the DDPM eps-MLP trained
with L_simple on ``data_size`` points of the embedded circle (domain.py; :mod:`icml24.common.diffusion`),
built once per key into the artefact cache from stream ``pretrain_seed``. Per seed: the pretrained model's
validity and share near the optimum, then every method's online loop (loop.py) from it, with the same
budgets, fine-tuning steps and sampler (DDIM, ``ddim_steps`` steps, eta, stopping at t = 1 so that every step
keeps a noise level; :mod:`icml24.common.ddim`), each with its own named random streams of the seed. Reported
per method: the true reward and validity of ``eval_samples`` samples of the final model, the mean regret per
query over the whole budget, the path KL of the final model to the pretrained one, and per-round curves
(queries, cumulative regret, the queries' reward and share near the optimum, the surrogate's error and the
confidence width of both covariances there).
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np
import torch

from icml24.common.ddim import ddim_timesteps
from icml24.common.diffusion import EpsMLP, ddpm_loss, linear_schedule
from icml24.core import streams
from icml24.core.context import RunContext
from icml24.core.plots import band
from icml24.core.results import RunResult, SeedResult
from icml24.papers.seiko.config import FULL, METHODS, QUICK, SEEDS, SMOKE, Config, validate
from icml24.papers.seiko.domain import Circle, rotation
from icml24.papers.seiko.finetune import FinetuneConfig, Sampler, path_kl
from icml24.papers.seiko.loop import SHOWN, Domain, LoopConfig, online
from icml24.papers.seiko.surrogate import Covariance, LangevinConfig, SurrogateConfig, seeded

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["Config", "SMOKE", "QUICK", "FULL", "SEEDS", "validate", "run", "figures", "circle", "domain_of", "pretrain",
           "PRETRAIN_FIELDS", "pretrained_state", "sampler_of", "loop_config"]

PROBE = 64          # points of the near-optimum probe


def circle(config: Config) -> Circle:
    """The embedded circle; its rotation is fixed (stream ``rotation`` of seed 0), the same for every seed."""
    Q = torch.as_tensor(rotation(config.dim, streams.rng(0, "rotation")), dtype=torch.float32)
    return Circle(Q, config.kappa, config.w_off, config.decoy, config.decoy_width, config.valid_eps)


def domain_of(c: Circle) -> Domain:
    """What the loop needs of the circle: reward, validity, the near-optimum test and probe, the reward's bounds."""
    b = c.bounds()
    return Domain(c.reward, c.valid, c.near, c.optimum_probe(PROBE), b.best, b.worst, c.dim)


def pretrain(config: Config, data: torch.Tensor) -> dict[str, torch.Tensor]:
    """The pretrained eps-MLP's weights: L_simple (DDPM Eq. 14) by Adam on ``data`` (n, d), cosine learning-rate
    decay, an exponential moving average of the weights (decay ``pretrain_ema``)."""
    schedule = linear_schedule(config.T)
    model = seeded(streams.int_seed(config.pretrain_seed, "init", "eps"), EpsMLP, config.dim, config.hidden,
                   config.layers, config.time_dim)
    ema = copy.deepcopy(model).requires_grad_(False)
    gen = streams.torch_generator(config.pretrain_seed, "pretrain")
    opt = torch.optim.Adam(model.parameters(), lr=config.pretrain_lr)
    steps = config.pretrain_steps
    decay = torch.optim.lr_scheduler.LambdaLR(opt, lambda k: 0.5 * (1 + math.cos(math.pi * k / steps)))
    batch = min(config.pretrain_batch, len(data))
    for _ in range(steps):
        idx = torch.randint(0, len(data), (batch,), generator=gen)
        loss = ddpm_loss(model, schedule, data[idx], gen)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        decay.step()
        with torch.no_grad():
            for e, p in zip(ema.parameters(), model.parameters()):
                e.mul_(config.pretrain_ema).add_(p, alpha=1 - config.pretrain_ema)
    return ema.state_dict()


PRETRAIN_FIELDS = ("dim", "kappa", "data_size", "T", "hidden", "layers", "time_dim", "pretrain_steps",
                   "pretrain_batch", "pretrain_lr", "pretrain_ema", "pretrain_seed")
"""The config fields the pretrained model depends on (the key of its cached artefact)."""


def pretrained_state(config: Config, ctx: RunContext) -> dict[str, torch.Tensor]:
    """The pretrained weights, built once per key (:data:`PRETRAIN_FIELDS`) into the artefact cache."""
    def build(folder: Path) -> None:
        data = circle(config).sample(config.data_size, streams.rng(config.pretrain_seed, "data"))
        torch.save(pretrain(config, data), folder / "eps.pt")

    inputs = {f: getattr(config, f) for f in PRETRAIN_FIELDS}
    return torch.load(ctx.artefact("pretrained_eps", inputs, build) / "eps.pt", weights_only=True)


def loop_config(config: Config, method: str) -> LoopConfig:
    """``method``'s loop settings from the config."""
    sur = SurrogateConfig(config.sur_hidden, config.sur_features, config.sur_steps, config.sur_batch, config.sur_lr,
                          config.sur_weight_decay, config.val_frac)
    ft = FinetuneConfig(config.ft_steps, config.ft_batch, config.ft_lr, config.beta, config.grad_steps,
                        config.ft_clip)
    langevin = LangevinConfig(config.ts_steps, config.ts_step, config.noise, config.ts_prior)
    return LoopConfig(method, config.budgets, config.noise, sur, cast(Covariance, config.covariance), config.alpha,
                      config.lam, config.bonus_clip, config.heads, ft, config.eval_samples, langevin,
                      config.guidance_scale)


def sampler_of(config: Config) -> Sampler:
    """DDIM with ``ddim_steps`` steps from T down to t = 1 (every step keeps a noise level), eta, clamp."""
    return Sampler(linear_schedule(config.T), ddim_timesteps(config.T, config.ddim_steps, end=1), config.eta,
                   config.clip_x0)


def _model(config: Config, state: dict[str, torch.Tensor]) -> EpsMLP:
    model = EpsMLP(config.dim, config.hidden, config.layers, config.time_dim)
    model.load_state_dict(state)
    return model.requires_grad_(False).eval()


def _method_stage(config: Config, seed: int, method: str, state: dict[str, torch.Tensor]) -> tuple[dict, dict]:
    c = circle(config)
    dom = domain_of(c)
    sampler = sampler_of(config)
    pretrained = _model(config, state)
    out = online(pretrained, sampler, dom, loop_config(config, method),
                 lambda name: streams.int_seed(seed, method, name), streams.rng(seed, method, "feedback"),
                 streams.torch_generator(seed, method, "torch"))
    xs, log = out.samples, out.log
    kl = path_kl(out.model, pretrained, sampler, config.eval_samples, streams.torch_generator(seed, method, "kl"))
    n_queries = log.queries[-1]
    metrics = {f"reward_{method}": float(c.reward(xs).mean()),
               f"valid_{method}": float(c.valid(xs).float().mean()),
               f"near_{method}": float(c.near(xs).float().mean()),
               f"regret_{method}": log.regret[-1] / n_queries,
               f"kl_pretrained_{method}": kl,
               f"distance_{method}": float(c.distance(xs).median())}
    curves = {f"queries_{method}": [float(q) for q in log.queries],
              f"cum_regret_{method}": log.regret,
              f"query_reward_{method}": log.query_reward,
              f"query_near_{method}": log.query_near,
              f"query_valid_{method}": log.query_valid,
              f"sur_err_near_{method}": log.sur_err_near,
              f"model_reward_{method}": log.model_reward,
              f"model_valid_{method}": log.model_valid,
              f"model_near_{method}": log.model_near,
              f"final_angle_{method}": c.angle(xs[:SHOWN]).tolist(),
              f"round_angle_{method}": torch.cat([c.angle(x) for x in log.samples]).tolist(),
              f"final_distance_{method}": c.distance(xs[:SHOWN]).tolist()}
    for kind in ("paper", "official"):
        if log.width_near[kind]:
            curves[f"width_near_{kind}_{method}"] = log.width_near[kind]
            curves[f"width_data_{kind}_{method}"] = log.width_data[kind]
    return metrics, curves


def run(config: Config, seed: int, ctx: RunContext | None = None) -> SeedResult:
    """One seed: pretraining, then every method's loop from the same pretrained model (module docstring)."""
    ctx = ctx or RunContext.local()
    metrics: dict[str, float] = {}
    curves: dict[str, list[float]] = {}
    with ctx.threads(config.threads):
        c = circle(config)
        state = pretrained_state(config, ctx)
        pretrained = _model(config, state)
        xs = sampler_of(config).sample(pretrained, config.eval_samples, streams.torch_generator(seed, "pretrained", "eval"))
        b = c.bounds()
        metrics.update(pretrained_valid=float(c.valid(xs).float().mean()),
                       pretrained_near=float(c.near(xs).float().mean()),
                       pretrained_reward=float(c.reward(xs).mean()),
                       reward_best=b.best)
        curves["pretrained_angle"] = c.angle(xs[:200]).tolist()
        for method in config.methods:
            m, cv = ctx.stage(f"method_{method}", _method_stage, config, seed, method, state)
            metrics.update(m)
            curves.update(cv)
    return SeedResult(seed=seed, metrics=metrics, curves=curves)


def figures(result: RunResult) -> dict:
    """Reward of the model and cumulative regret against queries, the angles of the final samples per method;
    the mechanism's diagnostics by round (queries near the optimum, the surrogate's error there, the confidence
    width of both covariances there and on the data)."""
    import matplotlib.pyplot as plt

    methods = [m for m in METHODS if f"reward_{m}" in result.metric_names()]
    fig, axes = plt.subplots(1, 4, figsize=(18, 3.8))
    for m in methods:
        q = result.curve(f"queries_{m}")[0]
        if m != "nokl":                        # its off-manifold reward is off this scale (validity panel)
            band(axes[0], q, result.curve(f"model_reward_{m}"), label=m, marker="o")
        band(axes[1], q, result.curve(f"model_valid_{m}"), label=m, marker="o")
        band(axes[2], q, result.curve(f"cum_regret_{m}"), label=m, marker="o")
    for ax, what in zip(axes, ("true reward of the model after the round", "validity of the model after the round",
                               "cumulative regret")):
        ax.set_xlabel("queries")
        ax.set_ylabel(what)
        ax.legend(fontsize=7)
    bins = np.linspace(-math.pi, math.pi, 37)
    axes[3].hist(result.curve("pretrained_angle").ravel(), bins=bins, histtype="step", color="k", label="pretrained")
    for m in methods:
        axes[3].hist(result.curve(f"final_angle_{m}").ravel(), bins=bins, histtype="step", label=m)
    axes[3].set_xlabel("angle theta of final samples (optimum at +-pi)")
    axes[3].legend(fontsize=7)
    fig.tight_layout()
    out = {"reward_vs_queries": fig}
    loops = [m for m in methods if m not in ("nonadaptive", "guidance")]   # one round: nothing by round
    if loops:
        fig2, ax2 = plt.subplots(1, 3, figsize=(14, 3.6))
        for m in loops:
            rounds = np.arange(1, result.curve(f"query_near_{m}").shape[1] + 1)
            band(ax2[0], rounds, result.curve(f"query_near_{m}"), label=m, marker="o")
            band(ax2[1], rounds, result.curve(f"sur_err_near_{m}"), label=m, marker="o")
        ax2[0].set_ylabel("share of the round's queries near the optimum")
        ax2[1].set_ylabel("surrogate |r_hat - r| near the optimum")
        ref = "ucb" if "ucb" in loops else loops[0]
        if f"width_near_paper_{ref}" in result.curve_names():
            rounds = np.arange(1, result.curve(f"width_near_paper_{ref}").shape[1] + 1)
            for kind, style in (("paper", "-"), ("official", "--")):
                for where in ("near", "data"):
                    band(ax2[2], rounds, result.curve(f"width_{where}_{kind}_{ref}"), label=f"{kind}, {where}",
                         ls=style, center="geomean")
            ax2[2].set_yscale("log")
            ax2[2].set_ylabel(f"sqrt(phi^T Sigma^-1 phi) ({ref})")
        for ax in ax2:
            ax.set_xlabel("round")
            ax.legend(fontsize=7)
        fig2.tight_layout()
        out["mechanism"] = fig2
        shown = [m for m in loops if m != "nokl"]            # no-KL's samples are off the circle
        if shown:
            out["samples_by_round"] = _samples_by_round(result, shown)
    return out


def _samples_by_round(result: RunResult, methods: list[str]) -> "Figure":
    """Angle histograms of each method's samples after each round (pooled over seeds; the pretrained model's in
    grey): where the model's mass moves, round by round (the optimum at +-pi, the decoy at 0)."""
    import matplotlib.pyplot as plt

    rounds = result.curve(f"query_near_{methods[0]}").shape[1]
    fig, axes = plt.subplots(len(methods), rounds, figsize=(3.2 * rounds, 2.0 * len(methods)), squeeze=False,
                             sharex=True)
    bins = np.linspace(-math.pi, math.pi, 37)
    pre = result.curve("pretrained_angle").ravel()
    for row, m in zip(axes, methods):
        angles = result.curve(f"round_angle_{m}").reshape(len(result.seeds), rounds, -1)   # (seeds, rounds, SHOWN)
        for r, ax in enumerate(row):
            ax.hist(pre, bins=bins, density=True, color="0.8")
            ax.hist(angles[:, r].ravel(), bins=bins, density=True, histtype="step", lw=1.5)
            ax.set_yticks([])
            ax.set_title(f"{m}, after round {r + 1}", fontsize=8)
    for ax in axes[-1]:
        ax.set_xlabel("angle theta (optimum at +-pi)")
    fig.tight_layout()
    return fig

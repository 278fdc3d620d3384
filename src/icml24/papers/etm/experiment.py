"""Experiment of ETM: ``run(config, seed)`` and the figures.

Per seed, three transition models of the same width and depth are trained on the same data: the
energy model (``etm``, energy.py), a Gaussian forward ensemble (``ftm``) and a deterministic MLP
(``mlp``) (forward.py).

1. Discontinuous dynamics (C1, jump.py): trained on p, v, a ~ U[-1, 1]; mean squared error of the
   predicted Delta = s' - s against the noiseless truth on three test sets: near the jump
   (|a - tau| < near), away from it (the rest of the training region) and out of distribution
   (p in [1, 2]). Also the diagnostic best-of-starts ETM prediction (``etm_rs``), and every model's
   prediction of v' - v along a in [-1, 1] at p = v = 0 (the figure).
2. Policy evaluation on Pendulum-v1 (C2, data.py, ope.py, :mod:`icml24.common.offline`): an offline
   data set from three behaviour policies, written as a Minari dataset into the run's artefact cache
   and read back; 10% of its transitions (at least 1) held out for the one-step error; each model's value of P evaluation
   policies by model rollouts from the same start states as the true values (real rollouts), and the
   DOPE metrics of those estimates.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np
import torch

from icml24.common import offline
from icml24.core.context import RunContext
from icml24.core.plots import band
from icml24.core.results import RunResult, SeedResult
from icml24.papers.etm import data, jump, ope
from icml24.papers.etm.config import FULL, QUICK, SEEDS, SMOKE, Config, validate
from icml24.papers.etm.energy import ETM, ETMConfig
from icml24.papers.etm.forward import DeterministicMLP, ForwardConfig, GaussianEnsemble

__all__ = ["Config", "SMOKE", "QUICK", "FULL", "SEEDS", "validate", "run", "figures", "models", "MODELS",
           "jump_stage", "ope_stage", "StageOut"]

MODELS = ("etm", "ftm", "mlp")
DATASET_ID = "pendulum/mixed-v0"
SLICE = 201          # points of the a-grid of the jump figure


class StageOut(NamedTuple):
    """Metrics and curves of one stage of a seed."""

    metrics: dict[str, float]
    curves: dict[str, list[float]]


def models(config: Config, x_dim: int, target_dim: int) -> dict[str, ETM | GaussianEnsemble | DeterministicMLP]:
    """The three models, untrained, on ``config.device``."""
    ecfg = ETMConfig(hidden=config.hidden, layers=config.layers, negatives=config.negatives,
                     train_iters=config.train_iters, predict_iters=config.predict_iters, margin=config.margin,
                     temperature=config.temperature, lr=config.lr, weight_decay=config.weight_decay, batch=config.batch,
                     steps=config.steps)
    fcfg = ForwardConfig(hidden=config.hidden, layers=config.layers, members=config.members, lr=config.lr,
                         weight_decay=config.weight_decay, batch=config.batch, steps=config.steps)
    dev = config.device
    return {"etm": ETM(x_dim, target_dim, ecfg, dev), "ftm": GaussianEnsemble(x_dim, target_dim, fcfg, dev),
            "mlp": DeterministicMLP(x_dim, target_dim, fcfg, dev)}


def _mse(pred: np.ndarray, truth: np.ndarray) -> float:
    return float(np.mean((pred - truth) ** 2))


def jump_stage(config: Config, stream: np.random.SeedSequence) -> StageOut:
    """Claim C1's errors (module docstring, 1)."""
    rng = np.random.default_rng(stream)
    gen = torch.Generator().manual_seed(int(stream.generate_state(1)[0]))
    task = jump.JumpTask(config.jump, config.threshold, config.jump_noise, config.near)
    train = jump.sample(rng, config.jump_train, task)
    near = jump.sample(rng, config.jump_test, task, a_range=(task.threshold - task.near, task.threshold + task.near),
                       noise=False)
    pool = jump.sample(rng, 4 * config.jump_test, task, noise=False)
    keep = np.flatnonzero(np.abs(pool.x[:, 2] - task.threshold) >= task.near)[:config.jump_test]
    away = jump.JumpData(pool.x[keep], pool.target[keep])
    ood = jump.sample(rng, config.jump_test, task, p_range=(1.0, 2.0), noise=False)
    a = np.linspace(-1, 1, SLICE)
    grid = np.stack([np.zeros(SLICE), np.zeros(SLICE), a], 1)
    tests = {"near": near, "away": away, "ood": ood}
    metrics: dict[str, float] = {}
    curves = {"jump_a": a.tolist(), "jump_slice_true": jump.dynamics(grid, task)[:, 1].tolist()}
    for tag, model in models(config, 3, 2).items():
        model.fit(train.x, train.target, gen)
        predictors: dict[str, Callable[[np.ndarray], np.ndarray]] = {tag: model.predict}
        if isinstance(model, ETM) and config.restarts:
            predictors["etm_rs"] = partial(model.predict, restarts=config.restarts, generator=gen)
        for name, predict in predictors.items():
            for region, d in tests.items():
                err = _mse(predict(d.x), d.target)
                metrics[f"jump_mse_{region}_{name}"] = err
                metrics[f"jump_log_mse_{region}_{name}"] = float(np.log10(err))
            curves[f"jump_slice_{name}"] = predict(grid)[:, 1].tolist()
    return StageOut(metrics, curves)


def behaviour_episodes(config: Config, seed: int) -> list[offline.Episode]:
    """The offline data: the full controller with N(0, 0.3^2) and N(0, 1) action noise and uniform torques,
    ``behaviour_episodes`` each; reset seeds and action noise drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    n = config.behaviour_episodes
    out: list[offline.Episode] = []
    for k, policy in enumerate((data.noisy(0.3, rng), data.noisy(1.0, rng), data.uniform(rng))):
        out += offline.collect(policy, n, seed + k * n)
    return out


def ope_stage(config: Config, seed: int, stream: np.random.SeedSequence, ctx: RunContext) -> StageOut:
    """Claim C2's policy-evaluation metrics (module docstring, 2)."""
    data_seed, start_seed, split_seed, torch_seed = (int(s) for s in stream.generate_state(4) % 2**31)
    gen = torch.Generator().manual_seed(torch_seed)
    inputs = {"env": offline.PENDULUM, "behaviour_episodes": config.behaviour_episodes, "seed": data_seed}

    def build(folder: Path) -> None:
        offline.save_minari(behaviour_episodes(config, data_seed), folder, DATASET_ID,
                            "Pendulum-v1: analytic swing-up with N(0, 0.3^2) and N(0, 1) action noise, and uniform "
                            "torques", "analytic swing-up mixture", "icml24.papers.etm.experiment.behaviour_episodes")

    d4 = offline.to_d4rl(offline.load_minari(ctx.artefact("pendulum_data", inputs, build), DATASET_ID))
    x = np.concatenate([d4["observations"], d4["actions"]], 1)                               # (n, 4)
    target = np.concatenate([d4["next_observations"] - d4["observations"], d4["rewards"][:, None]], 1)  # (n, 4)
    perm = np.random.default_rng(split_seed).permutation(len(x))
    held, fit = perm[:max(1, len(x) // 10)], perm[max(1, len(x) // 10):]
    box = ope.bounds(d4["next_observations"][fit], d4["rewards"][fit])
    u_max = np.linspace(config.u_min, offline.U_MAX, config.policies)
    policies = [data.limited(float(u)) for u in u_max]
    runs = [offline.collect(pi, config.starts, start_seed) for pi in policies]   # the same reset seeds for every policy
    V = np.array([float(np.mean(offline.discounted_returns(eps, config.gamma, config.horizon))) for eps in runs])
    starts = np.stack([e.observations[0] for e in runs[0]])
    metrics: dict[str, float] = {"ope_value_span": float(V.max() - V.min())}
    curves = {"ope_u_max": u_max.tolist(), "ope_true": V.tolist()}
    for tag, model in models(config, x.shape[1], target.shape[1]).items():
        model.fit(x[fit], target[fit], gen)
        metrics[f"ope_step_mse_{tag}"] = _mse(model.predict(x[held]), target[held])
        est = ope.model_values(model.predict, policies, starts, config.horizon, config.gamma, box)
        m = ope.dope_metrics(est, V)
        for k, v in m._asdict().items():
            metrics[f"ope_{k}_{tag}"] = v
        curves[f"ope_est_{tag}"] = est.tolist()
    return StageOut(metrics, curves)


def run(config: Config, seed: int, ctx: RunContext | None = None) -> SeedResult:
    """One seed: the jump task and the Pendulum policy evaluation (module docstring)."""
    ctx = ctx or RunContext.local(config.device)
    streams = np.random.SeedSequence(seed).spawn(2)
    metrics: dict[str, float] = {}
    curves: dict[str, list[float]] = {}
    with ctx.threads(config.threads):
        torch.manual_seed(seed)
        for out in (ctx.stage("jump", jump_stage, config, streams[0]),
                    ctx.stage("ope", ope_stage, config, seed, streams[1], ctx)):
            metrics.update(out.metrics)
            curves.update(out.curves)
    return SeedResult(seed=seed, metrics=metrics, curves=curves)


def figures(result: RunResult) -> dict:
    """The jump task's predictions along the action, and the OPE estimates against the true values."""
    import matplotlib.pyplot as plt

    a = result.curve("jump_a")[0]
    fig, ax = plt.subplots(figsize=(6, 3.8))
    ax.plot(a, result.curve("jump_slice_true")[0], "k--", lw=1.2, label="truth")
    for name in sorted(n[len("jump_slice_"):] for n in result.curve_names() if n.startswith("jump_slice_")):
        if name != "true":
            band(ax, a, result.curve(f"jump_slice_{name}"), label=name)
    ax.set_xlabel("action a (p = v = 0)")
    ax.set_ylabel("predicted v' - v")
    ax.set_title("jump task: prediction across the discontinuity (mean and band over seeds)", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig2, axes = plt.subplots(1, len(MODELS), figsize=(4 * len(MODELS), 3.6), sharex=True, sharey=True)
    true = result.curve("ope_true")
    lo, hi = float(true.min()), float(true.max())
    for ax2, tag in zip(axes, MODELS):
        est = result.curve(f"ope_est_{tag}")
        ax2.scatter(true.ravel(), est.ravel(), s=10, alpha=0.6)
        ax2.plot([lo, hi], [lo, hi], "k--", lw=1)
        ax2.set_title(f"{tag}: model value vs true value", fontsize=9)
        ax2.set_xlabel("true discounted return")
    axes[0].set_ylabel("model-based estimate")
    fig2.tight_layout()
    return {"jump_predictions": fig, "ope_scatter": fig2}

"""Experiment of ETM: ``run(config, seed)`` and the figures.

Per seed, three transition models of the same width and depth, trained with the same batch and steps
(the same number of sample-gradients), are fitted to the same data: the energy model (``etm``,
energy.py), a Gaussian forward ensemble (``ftm``) and a deterministic MLP (``mlp``) (forward.py). Every
``eval_every`` steps each model's held-out MSE is recorded (the learning-curve figure).

1. Discontinuous dynamics (C1, jump.py): trained on transitions of a behaviour policy; on test sets
   (noiseless truth) near the jump (|a - tau| < near, the same policy), away from it, and of a shifted
   policy (out of distribution in (v, a)), all of its transitions and those near the jump: mode
   validity (the share of predictions within eps of a reachable branch), MSE of Delta = s' - s, and
   the sharpness of the predicted jump. Also the diagnostic best-of-starts ETM prediction (``etm_rs``,
   with ``restarts`` > 0), and every model's prediction of v' - v along a in [-1, 1] at p = v = 0
   (the figure).
2. Policy evaluation on Pendulum-v1 with a torque dead zone (C2, data.py, ope.py,
   :mod:`icml24.common.offline`): an offline data set from three behaviour policies, written as a Minari
   dataset into the run's artefact cache and read back; 10% of its transitions (at least 1) held out for
   the one-step error; each model's value of the 8 evaluation controllers by model rollouts from the same
   start states as the true values (real rollouts), and the DOPE metrics of those estimates.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from icml24.common import offline
from icml24.core import streams
from icml24.core.context import RunContext
from icml24.core.plots import band
from icml24.core.results import RunResult, SeedResult, StageOut
from icml24.papers.etm import data, jump, ope
from icml24.papers.etm.config import FULL, QUICK, SEEDS, SMOKE, Config, validate
from icml24.papers.etm.energy import ETM, ETMConfig
from icml24.papers.etm.forward import DeterministicMLP, ForwardConfig, GaussianEnsemble

__all__ = ["Config", "SMOKE", "QUICK", "FULL", "SEEDS", "validate", "run", "figures", "models", "MODELS",
           "jump_stage", "ope_stage"]

MODELS = ("etm", "ftm", "mlp")
DATASET_ID = "pendulum/deadzone-mixed-v0"
SLICE = 201          # points of the a-grid of the jump figure


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


def _fit(model: ETM | GaussianEnsemble | DeterministicMLP, x: np.ndarray, target: np.ndarray, gen: torch.Generator,
         held_x: np.ndarray, held_target: np.ndarray, every: int) -> list[float]:
    """Train ``model``; its held-out MSE after every ``every``-th step (empty if ``every`` is 0)."""
    curve: list[float] = []

    def checkpoint(k: int) -> None:
        if every and k % every == 0:
            curve.append(_mse(model.predict(held_x), held_target))
    model.fit(x, target, gen, checkpoint)
    return curve


def _steps_axis(config: Config) -> list[float]:
    return [float(k) for k in range(config.eval_every, config.steps + 1, config.eval_every)] if config.eval_every else []


def jump_stage(config: Config, seed: int) -> StageOut:
    """Claim C1's measures (module docstring, 1): data from the seed's stream "jump", models from "jump_models"."""
    rng = streams.rng(seed, "jump")
    gen = streams.torch_generator(seed, "jump_models")
    task = jump.JumpTask(config.jump, config.threshold, config.jump_noise, config.near)
    train = jump.sample(rng, config.jump_train, task)
    held = jump.sample(rng, min(config.eval_size, config.jump_test), task, noise=False)
    near = jump.sample(rng, config.jump_test, task, a_range=(task.threshold - task.near, task.threshold + task.near),
                       noise=False)
    pool = jump.sample(rng, 4 * config.jump_test, task, noise=False)
    keep = np.flatnonzero(np.abs(pool.x[:, 2] - task.threshold) >= task.near)[:config.jump_test]
    away = jump.JumpData(pool.x[keep], pool.target[keep])
    ood = jump.sample(rng, config.jump_test, task, slope=jump.OOD_SLOPE, noise=False)
    ood_near = jump.sample(rng, config.jump_test, task, slope=jump.OOD_SLOPE,
                           a_range=(task.threshold - task.near, task.threshold + task.near), noise=False)
    a = np.linspace(-1, 1, SLICE)
    grid = np.stack([np.zeros(SLICE), np.zeros(SLICE), a], 1)
    tests = {"near": near, "away": away, "ood": ood, "ood_near": ood_near}
    metrics: dict[str, float] = {}
    curves = {"jump_a": a.tolist(), "jump_slice_true": jump.dynamics(grid, task)[:, 1].tolist(),
              "curve_steps": _steps_axis(config)}
    for tag, model in models(config, 3, 2).items():
        curves[f"jump_curve_{tag}"] = _fit(model, train.x, train.target, gen, held.x, held.target, config.eval_every)
        predictors: dict[str, Callable[[np.ndarray], np.ndarray]] = {tag: model.predict}
        if isinstance(model, ETM) and config.restarts:
            predictors["etm_rs"] = partial(model.predict, restarts=config.restarts, generator=gen)
        for name, predict in predictors.items():
            for region, d in tests.items():
                pred = predict(d.x)
                err = _mse(pred, d.target)
                metrics[f"jump_mse_{region}_{name}"] = err
                metrics[f"jump_log_mse_{region}_{name}"] = float(np.log10(err))
                metrics[f"jump_valid_{region}_{name}"] = jump.validity(pred, d.x, task, config.valid_eps)
            metrics[f"jump_sharp_{name}"] = jump.sharpness(predict, task)
            curves[f"jump_slice_{name}"] = predict(grid)[:, 1].tolist()
    return StageOut(metrics, curves)


def behaviour_episodes(config: Config, seed: int) -> list[offline.Episode]:
    """The offline data on the dead-zone pendulum: the swing-up controller with N(0, 0.3^2) and N(0, 1) action
    noise and uniform torques, ``behaviour_episodes`` each; reset seeds and action noise drawn from ``seed``."""
    data.register()
    rng = np.random.default_rng(seed)
    n = config.behaviour_episodes
    out: list[offline.Episode] = []
    for k, policy in enumerate((data.noisy(0.3, rng), data.noisy(1.0, rng), data.uniform(rng))):
        out += offline.collect(policy, n, seed + k * n, env_id=data.ENV_ID)
    return out


def ope_stage(config: Config, seed: int, ctx: RunContext) -> StageOut:
    """Claim C2's policy-evaluation metrics (module docstring, 2); the behaviour data, the evaluation starts,
    the hold-out split and the models each from their own stream of the seed."""
    data_seed, start_seed = streams.int_seed(seed, "behaviour"), streams.int_seed(seed, "starts")
    gen = streams.torch_generator(seed, "ope_models")
    inputs = {"env": data.ENV_ID, "dead_zone": data.DEAD_ZONE, "behaviour_episodes": config.behaviour_episodes,
              "seed": data_seed}

    def build(folder: Path) -> None:
        offline.save_minari(behaviour_episodes(config, data_seed), folder, DATASET_ID,
                            f"Pendulum-v1 with a torque dead zone |u| < {data.DEAD_ZONE}: analytic swing-up with "
                            "N(0, 0.3^2) and N(0, 1) action noise, and uniform torques", "analytic swing-up mixture",
                            "icml24.papers.etm.experiment.behaviour_episodes")

    d4 = offline.to_d4rl(offline.load_minari(ctx.artefact("pendulum_data", inputs, build), DATASET_ID))
    x = np.concatenate([d4["observations"], d4["actions"]], 1)                               # (n, 4)
    target = np.concatenate([d4["next_observations"] - d4["observations"], d4["rewards"][:, None]], 1)  # (n, 4)
    perm = streams.rng(seed, "split").permutation(len(x))
    held, fit = perm[:max(1, len(x) // 10)], perm[max(1, len(x) // 10):]
    box = ope.bounds(d4["next_observations"][fit], d4["rewards"][fit])
    policies = [data.controller(c) for c in data.EVALUATION]
    data.register()
    runs = [offline.collect(pi, config.starts, start_seed, env_id=data.ENV_ID) for pi in policies]   # same resets
    V = np.array([float(np.mean(offline.discounted_returns(eps, config.gamma, config.horizon))) for eps in runs])
    starts = np.stack([e.observations[0] for e in runs[0]])
    metrics: dict[str, float] = {"ope_value_span": float(V.max() - V.min())}
    curves = {"ope_true": V.tolist()}
    curve_rows = held[:config.eval_size]
    for tag, model in models(config, x.shape[1], target.shape[1]).items():
        curves[f"ope_curve_{tag}"] = _fit(model, x[fit], target[fit], gen, x[curve_rows], target[curve_rows],
                                          config.eval_every)
        metrics[f"ope_step_mse_{tag}"] = _mse(model.predict(x[held]), target[held])
        est = ope.model_values(model.predict, policies, starts, config.horizon, config.gamma, box)
        m = ope.dope_metrics(est, V)
        for k, v in m._asdict().items():
            metrics[f"ope_{k}_{tag}"] = v
        curves[f"ope_est_{tag}"] = est.tolist()
    return StageOut(metrics, curves)


def run(config: Config, seed: int, ctx: RunContext | None = None) -> SeedResult:
    """One seed: the jump task and the dead-zone pendulum's policy evaluation (module docstring)."""
    ctx = ctx or RunContext.local(config.device)
    with ctx.threads(config.threads):
        torch.manual_seed(streams.int_seed(seed, "torch_global"))     # for any draw without a generator
        return SeedResult.from_stages(seed, [ctx.stage("jump", jump_stage, config, seed),
                                             ctx.stage("ope", ope_stage, config, seed, ctx)])


def figures(result: RunResult) -> dict:
    """The jump task's predictions along the action, the OPE estimates against the true values, and the
    held-out error against training steps."""
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
    out = {"jump_predictions": fig, "ope_scatter": fig2}
    steps = result.curve("curve_steps")
    if steps.size:
        fig3, axes3 = plt.subplots(1, 2, figsize=(9, 3.6))
        for ax3, stage, what in zip(axes3, ("jump", "ope"), ("jump task (policy data)", "dead-zone pendulum")):
            for tag in MODELS:
                band(ax3, steps[0], result.curve(f"{stage}_curve_{tag}"), label=tag, center="geomean")
            ax3.set_yscale("log")
            ax3.set_xlabel("training steps (the same batch for every model)")
            ax3.set_title(f"{what}: held-out MSE of Delta", fontsize=9)
            ax3.legend(fontsize=7)
        fig3.tight_layout()
        out["learning_curves"] = fig3
    return out

"""Experiment of purified_il: ``run(config, seed)`` and the figures.

Per seed, on the task of ``env`` (demos.py: Pendulum-v1 with the analytic expert at QUICK, a MuJoCo task
with an SB3 SAC expert trained once per task at FULL):

1. Demonstrations (stage ``demos``): ``episodes`` clean expert episodes and, for every data set, as many
   episodes of the expert executed with action noise: Gaussian at each of ``noise_levels`` (the paper's
   L3 ... L1), uniform with the strongest level's std, salt-and-pepper with probability ``sp_prob``.
   All are written as Minari datasets (HDF5) into the run's artefact cache and read back; D_o is
   ``n_optimal`` pairs of the clean episodes, each D_s ``n_noisy`` pairs of its noisy episodes.
2. Purification (stage ``purify``, purify.py): one DDPM on D_o; every D_s purified at ``inverse_point``
   (DP-BC's data); the action error |a - pi*(s)| before and after (pi* at the demonstrated state), the
   consistency |a_hat - pi*(s_hat)| of the purified pairs and how far their states moved; the
   purification error E||xhat_0 - x_o|| along ``i_grid`` on ``curve_points`` pairs of each Gaussian set.
3. Imitation (one stage per data set, bc.py): BC on D_s u D_o, DP-BC on the purified D_s only (as in
   the paper's code), and on the Gaussian sets BCND on D_s u D_o; BC on D_o alone once (stage
   ``optimal``). Each policy's mean return over ``eval_episodes`` fixed start states, also as the
   normalised score (R - R_uniform) / (R_expert - R_uniform) with the expert and uniform actions on the
   same starts; the demonstrators' own mean return (the episodes of each data set) is kept too.

Metrics of a data set carry its tag (``g25`` for Gaussian sigma = 0.25, ``uniform``, ``sp``); the claims
read the strongest and weakest Gaussian levels through the aliases ``*_strong`` and ``*_weak``.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch

from icml24.common import offline
from icml24.core.context import RunContext
from icml24.core.plots import band
from icml24.core.results import RunResult, SeedResult
from icml24.papers.purified_il import bc, demos
from icml24.papers.purified_il.config import FULL, QUICK, SEEDS, SMOKE, Config, validate
from icml24.papers.purified_il.purify import DDPMConfig, fit_purifier

__all__ = ["Config", "SMOKE", "QUICK", "FULL", "SEEDS", "validate", "run", "figures", "DataSet", "data_sets",
           "Demos", "demos_stage", "Purified", "purify_stage", "imitate_stage", "optimal_stage", "METHODS"]

METHODS = ("bc", "bcnd", "dpbc")
EVAL_SEED = 10_000   # reset seeds of the evaluation episodes (never those of the demonstrations)


class DataSet(NamedTuple):
    """One imperfect data set: its tag, noise kind and size."""

    tag: str
    kind: demos.Noise
    size: float


def data_sets(config: Config) -> list[DataSet]:
    """The Gaussian levels (weakest first), then uniform and salt-and-pepper noise."""
    out = [DataSet(f"g{round(100 * s)}", "gaussian", s) for s in config.noise_levels]
    out.append(DataSet("uniform", "uniform", config.noise_levels[-1]))
    out.append(DataSet("sp", "salt_pepper", config.sp_prob))
    return out


class Demos(NamedTuple):
    """The optimal pairs, one imperfect set per data set, and the mean return of each set's episodes."""

    optimal: demos.Pairs
    noisy: dict[str, demos.Pairs]
    demo_returns: dict[str, float]


def demos_stage(config: Config, task: demos.Task, seed: int, ctx: RunContext) -> Demos:
    """Stage 1 (module docstring): episodes as Minari datasets, then the pairs."""
    sets = data_sets(config)
    name = task.env_id.split("-")[0].lower()
    ids = {"expert": f"{name}/expert-v0", **{d.tag: f"{name}/{d.tag}-v0" for d in sets}}
    inputs = {"env": task.env_id, "episodes": config.episodes, "noise_levels": config.noise_levels,
              "sp_prob": config.sp_prob, "seed": seed}
    if task.env_id != offline.PENDULUM:
        inputs.update(expert="sac", expert_steps=config.expert_steps, expert_seed=config.expert_seed)
    who = "the analytic swing-up expert" if task.env_id == offline.PENDULUM else "an SB3 SAC expert"

    def build(folder: Path) -> None:
        rng = np.random.default_rng([seed, 1])
        code = "icml24.papers.purified_il.experiment.demos_stage"

        def save(eps: list[offline.Episode], ds_id: str, what: str, algorithm: str) -> None:
            returns = [float(e.rewards.sum()) for e in eps]
            refs = (-1500.0, 0.0) if task.env_id == offline.PENDULUM else (min(returns), max(returns))
            offline.save_minari(eps, folder, ds_id, f"{task.env_id}: {what}", algorithm, code, task.env_id, refs)

        save(demos.expert_episodes(task, config.episodes, seed * 1000), ids["expert"], who, who)
        for k, d in enumerate(sets, 1):
            eps = offline.collect(demos.noisy_expert(task, d.kind, d.size, rng), config.episodes,
                                  seed * 1000 + 100 * k, task.env_id)
            save(eps, ids[d.tag], f"{who} with {d.kind} action noise of size {d.size:g}", f"{who} + {d.kind} noise")

    folder = ctx.artefact("demonstrations", inputs, build)
    rng = np.random.default_rng([seed, 2])
    episodes = {key: offline.load_minari(folder, ds_id) for key, ds_id in ids.items()}
    optimal = demos.pairs(task, episodes["expert"], config.n_optimal, rng)
    noisy = {d.tag: demos.pairs(task, episodes[d.tag], config.n_noisy, rng) for d in sets}
    returns = {key: float(np.mean([e.rewards.sum() for e in eps])) for key, eps in episodes.items()}
    return Demos(optimal, noisy, returns)


class Purified(NamedTuple):
    """Purified imperfect sets at the inverse point, and the purification metrics."""

    sets: dict[str, demos.Pairs]   # tag -> purified pairs (expert = pi* at the purified state)
    metrics: dict[str, float]
    curves: dict[str, list[float]]


def _xs(p: demos.Pairs) -> np.ndarray:
    return np.concatenate([p.states, p.actions], 1)                       # (n, obs_dim + act_dim) x = [s; a]


def purify_stage(config: Config, task: demos.Task, d: Demos, seed: int) -> Purified:
    """Stage 2 (module docstring)."""
    gen = torch.Generator().manual_seed(seed * 7919 + 1)
    cfg = DDPMConfig(config.T, config.ddpm_hidden, config.ddpm_layers, config.ddpm_time_dim, config.ddpm_steps,
                     config.ddpm_batch, config.ddpm_lr)
    purifier = fit_purifier(_xs(d.optimal), cfg, gen, config.device)
    sets: dict[str, demos.Pairs] = {}
    metrics: dict[str, float] = {}
    curves: dict[str, list[float]] = {"i_grid": [float(i) for i in config.i_grid]}
    gaussian = [s.tag for s in data_sets(config) if s.kind == "gaussian"]
    obs_dim = d.optimal.states.shape[1]
    for tag, p in d.noisy.items():
        xh = purifier.purify(_xs(p), config.inverse_point, gen)            # (n, obs_dim + act_dim)
        s_hat, a_hat = xh[:, :obs_dim], xh[:, obs_dim:]
        sets[tag] = demos.Pairs(s_hat, a_hat, task.expert(s_hat))
        metrics[f"act_err_before_{tag}"] = float(np.mean(np.abs(p.actions - p.expert)))
        metrics[f"act_err_after_{tag}"] = float(np.mean(np.abs(a_hat - p.expert)))             # pi* at the demo's s
        metrics[f"act_consistency_after_{tag}"] = float(np.mean(np.abs(a_hat - sets[tag].expert)))  # pi*(s_hat)
        metrics[f"state_move_{tag}"] = float(np.mean(np.linalg.norm(purifier.scale(xh)[:, :obs_dim]
                                                                    - purifier.scale(_xs(p))[:, :obs_dim], axis=1)))
        if tag not in gaussian:
            continue
        sub = demos.Pairs(*(a[:config.curve_points] for a in p))
        x_o = purifier.scale(np.concatenate([sub.states, sub.expert], 1))   # the clean pairs, z-scored
        err = [float(np.mean(np.linalg.norm(purifier.scale(purifier.purify(_xs(sub), int(i), gen)) - x_o, axis=1)))
               for i in config.i_grid]
        curves[f"err_curve_{tag}"] = err
        best = int(np.argmin(err))
        metrics[f"i_star_{tag}"] = float(config.i_grid[best])
        metrics[f"log_i_star_{tag}"] = float(np.log10(1.0 + config.i_grid[best]))
        metrics[f"depth_{tag}"] = float(min(err[0], err[-1]) / err[best] - 1.0)
    metrics["depth_min"] = min(metrics[f"depth_{t}"] for t in gaussian)
    return Purified(sets, metrics, curves)


def _bc_config(config: Config) -> bc.BCConfig:
    return bc.BCConfig(config.bc_hidden, config.bc_layers, config.bc_steps, config.bc_batch, config.bc_lr)


def _mean_return(policy: offline.Policy, config: Config, task: demos.Task) -> float:
    return float(np.mean(bc.returns(policy, config.eval_episodes, EVAL_SEED, task.env_id)))


def imitate_stage(config: Config, task: demos.Task, d: Demos, pur: Purified, tag: str, seed: int,
                  with_bcnd: bool) -> dict[str, float]:
    """Stage 3 for one data set: mean returns of BC, DP-BC and (``with_bcnd``) BCND, whose first round is
    the BC policy (module docstring)."""
    gen = torch.Generator().manual_seed(seed * 7919 + 2 + sum(map(ord, tag)))
    noisy = d.noisy[tag]
    s_all = np.concatenate([noisy.states, d.optimal.states])
    a_all = np.concatenate([noisy.actions, d.optimal.actions])
    cfg = _bc_config(config)
    policies = {"bc": bc.fit_bc(s_all, a_all, cfg, gen, device=config.device),
                "dpbc": bc.fit_bc(pur.sets[tag].states, pur.sets[tag].actions, cfg, gen, device=config.device)}
    if with_bcnd:
        policies["bcnd"] = bc.bcnd(s_all, a_all, cfg, config.bcnd_rounds, gen, policies["bc"], config.device).policy
    return {f"return_{m}_{tag}": _mean_return(bc.act(p, task.u_max), config, task) for m, p in policies.items()}


def optimal_stage(config: Config, task: demos.Task, d: Demos, seed: int) -> dict[str, float]:
    """References on the evaluation starts: the expert, uniform actions, and BC on D_o alone."""
    gen = torch.Generator().manual_seed(seed * 7919 + 3)
    rng = np.random.default_rng([seed, 3])
    policy = bc.fit_bc(d.optimal.states, d.optimal.actions, _bc_config(config), gen, device=config.device)
    act_dim = d.optimal.actions.shape[1]
    return {"return_expert": _mean_return(task.expert, config, task),
            "return_uniform": _mean_return(lambda o: rng.uniform(-task.u_max, task.u_max, (len(o), act_dim)),
                                           config, task),
            "return_bc_optimal": _mean_return(bc.act(policy, task.u_max), config, task)}


def run(config: Config, seed: int, ctx: RunContext | None = None) -> SeedResult:
    """One seed: demonstrations, purification, imitation (module docstring)."""
    ctx = ctx or RunContext.local(config.device)
    metrics: dict[str, float] = {}
    with ctx.threads(config.threads):
        task = demos.make_task(config.env, config.expert_steps, config.expert_seed, ctx, config.device)
        torch.manual_seed(seed)
        d = ctx.stage("demos", demos_stage, config, task, seed, ctx)
        pur = ctx.stage("purify", purify_stage, config, task, d, seed)
        metrics.update(pur.metrics)
        metrics.update(ctx.stage("optimal", optimal_stage, config, task, d, seed))
        for s in data_sets(config):
            metrics.update(ctx.stage(f"imitate_{s.tag}", imitate_stage, config, task, d, pur, s.tag, seed,
                                     s.kind == "gaussian"))
        metrics.update({f"return_demo_{k}": v for k, v in d.demo_returns.items()})
    lo, hi = metrics["return_uniform"], metrics["return_expert"]
    for name in [k for k in metrics if k.startswith("return_")]:
        metrics["score_" + name[len("return_"):]] = (metrics[name] - lo) / (hi - lo)
    tags = [s.tag for s in data_sets(config)]
    gaussian = tags[:len(config.noise_levels)]
    for alias, tag in (("strong", gaussian[-1]), ("weak", gaussian[0])):
        for key in [k for k in metrics if k.endswith("_" + tag)]:
            metrics[key[:-len(tag)] + alias] = metrics[key]
    for tag in tags + ["strong", "weak"]:
        metrics[f"gain_{tag}"] = metrics[f"score_dpbc_{tag}"] - metrics[f"score_bc_{tag}"]
    curves = dict(pur.curves)
    curves["noise_levels"] = list(config.noise_levels)
    for m in METHODS:
        curves[f"score_vs_noise_{m}"] = [metrics[f"score_{m}_{t}"] for t in gaussian]
    return SeedResult(seed=seed, metrics=metrics, curves=curves)


def figures(result: RunResult) -> dict:
    """Normalised return against the noise level per method, and the purification error along i_r."""
    import matplotlib.pyplot as plt

    levels = result.curve("noise_levels")[0]
    fig, ax = plt.subplots(figsize=(6, 3.8))
    labels = {"bc": "BC (D_s + D_o)", "bcnd": "BCND (D_s + D_o)", "dpbc": "DP-BC (purified D_s)"}
    for m in METHODS:
        band(ax, levels, result.curve(f"score_vs_noise_{m}"), label=labels[m])
    ax.set_xlabel("Gaussian action noise std (units of the action bound)")
    ax.set_ylabel("normalised return")
    ax.set_title(f"{result.config.get('env', 'Pendulum-v1')}: return against demonstration noise (mean and band over "
                 "seeds)", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    grid = result.curve("i_grid")[0]
    fig2, ax2 = plt.subplots(figsize=(6, 3.8))
    for level in levels:
        band(ax2, 1 + grid, result.curve(f"err_curve_g{round(100 * level)}"), label=f"noise {level:g}")
    ax2.set_xscale("log")
    ax2.set_xlabel("1 + inverse point i_r")
    ax2.set_ylabel("E ||xhat_0 - x_o|| (z-scored)")
    ax2.set_title("purification error along the inverse point (Theorem 4's trade-off)", fontsize=9)
    ax2.legend(fontsize=7)
    fig2.tight_layout()
    return {"return_vs_noise": fig, "error_vs_inverse_point": fig2}

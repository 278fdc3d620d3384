"""Experiment of purified_il: ``run(config, seed)`` and the figures.

Per seed, on the task of ``env`` (demos.py: a MuJoCo task with an SB3 SAC expert trained once per task,
whose training run saved its intermediate checkpoints; or Pendulum-v1 with an analytic expert):

1. Demonstrations (stage ``demos``): ``episodes`` clean expert episodes and, for every data set, as many
   episodes of its demonstrator: D2, the expert executed with action noise (Gaussian at each of
   ``noise_levels``, the paper's L3 ... L1; uniform with the strongest level's std; salt-and-pepper
   with probability ``sp_prob``), the executed action recorded unclipped; D1, each checkpoint of
   ``d1_steps`` acting deterministically. All are written as Minari datasets (HDF5) into the run's
   artefact cache and read back; D_o is ``n_optimal`` pairs of the clean episodes, each D_s ``n_noisy``
   pairs of its own episodes.
2. Purification (stage ``purify``, purify.py): two DDPMs on D_o, the paper's (``dpbc``) and the official
   code's (``dpbco``); every D_s purified by each at ``inverse_point``, and the strongest Gaussian set
   also at every point of ``i_sweep``. Measured on the actions, where the corruption is: the error
   |a - pi*(s)| before and after (pi* at the demonstrated state s), the consistency |a_hat - pi*(s_hat)|,
   how far the states moved (z-units of D_o), and the action purification error
   E||a_hat_0 - pi*(s)||_2 along ``i_grid`` on ``curve_points`` pairs of each Gaussian set (the official
   purifier's on the strongest only).
3. Imitation (one stage per data set, bc.py): BC on D_s u D_o; DP-BC on each purifier's purified D_s
   only (as in the paper's code); on the Gaussian and D1 sets the oracle, BC on the states of D_s labelled
   with pi*(s), u D_o (what a perfect purifier of the actions would give); on the strongest Gaussian set
   BCND on D_s u D_o; BC on D_o alone
   once (stage ``optimal``); DP-BC along ``i_sweep`` (stage ``sweep``). Each policy's mean return over
   ``eval_episodes`` fixed start states, also as the normalised score (R - R_uniform) / (R_expert -
   R_uniform) with the expert and uniform actions on the same starts; each data set's demonstrators'
   own mean return is kept too.

Metrics of a data set carry its tag (``g40`` for Gaussian sigma = 0.4, ``uniform``, ``sp``, ``ck3000``
for the checkpoint of step 3000); the claims read the strongest and weakest Gaussian levels through the
aliases ``*_strong`` and ``*_weak``, and the worst and best D1 checkpoints through ``*_d1_strong`` and
``*_d1_weak``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, NamedTuple

import numpy as np
import torch

from icml24.common import offline
from icml24.core import streams
from icml24.core.context import RunContext
from icml24.core.plots import band
from icml24.core.results import RunResult, SeedResult
from icml24.papers.purified_il import bc, demos
from icml24.papers.purified_il.config import FULL, QUICK, SEEDS, SMOKE, Config, validate
from icml24.papers.purified_il.purify import DDPMConfig, Purifier, fit_purifier

__all__ = ["Config", "SMOKE", "QUICK", "FULL", "SEEDS", "validate", "run", "figures", "DataSet", "data_sets",
           "Demos", "demos_stage", "Purified", "purify_stage", "imitate_stage", "optimal_stage", "sweep_stage",
           "METHODS", "ARMS"]

#: Learners: BC and DP-BC on every data set, the oracle on the Gaussian and D1 sets, BCND on the strongest Gaussian.
METHODS = ("bc", "bcnd", "dpbc", "dpbco", "oracle")
#: DP-BC's purifiers: the paper's and the official code's (purify.py).
ARMS = ("dpbc", "dpbco")
EVAL_SEED = 10_000   # reset seeds of the evaluation episodes (never those of the demonstrations: _demo_reset_base)


def _demo_reset_base(seed: int) -> int:
    """The first reset seed of the seed's demonstrations, from its stream "demo_resets": in [2^31, 2^31 + 2^30),
    above every evaluation reset seed; the expert's episodes take base + i and data set k's base + k * episodes
    + i, so no two episodes of a seed share a start state."""
    return 2**31 + streams.int_seed(seed, "demo_resets", bits=30)
Kind = Literal["gaussian", "uniform", "salt_pepper", "checkpoint"]


class DataSet(NamedTuple):
    """One imperfect data set: its tag, kind and size (noise size, or the checkpoint's training step)."""

    tag: str
    kind: Kind
    size: float


def data_sets(config: Config) -> list[DataSet]:
    """D2: the Gaussian levels (weakest first), uniform and salt-and-pepper noise; D1: the checkpoints (best
    first)."""
    out = [DataSet(f"g{round(100 * s)}", "gaussian", s) for s in config.noise_levels]
    out.append(DataSet("uniform", "uniform", config.noise_levels[-1]))
    out.append(DataSet("sp", "salt_pepper", config.sp_prob))
    out += [DataSet(f"ck{step}", "checkpoint", step) for step in config.d1_steps]
    return out


def _aliases(config: Config) -> dict[str, str]:
    """alias -> tag: the strongest and weakest Gaussian level, the worst and best D1 checkpoint."""
    gaussian = [f"g{round(100 * s)}" for s in config.noise_levels]
    out = {"strong": gaussian[-1], "weak": gaussian[0]}
    if config.d1_steps:
        out.update(d1_strong=f"ck{config.d1_steps[-1]}", d1_weak=f"ck{config.d1_steps[0]}")
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
        inputs.update(expert="sac", expert_steps=config.expert_steps, expert_seed=config.expert_seed,
                      checkpoint_every=config.checkpoint_every, d1_steps=config.d1_steps)
    who = "the analytic swing-up expert" if task.env_id == offline.PENDULUM else "an SB3 SAC expert"

    def build(folder: Path) -> None:
        rng = streams.rng(seed, "demo_noise")
        base = _demo_reset_base(seed)
        code = "icml24.papers.purified_il.experiment.demos_stage"

        def save(eps: list[offline.Episode], ds_id: str, what: str, algorithm: str) -> None:
            returns = [float(e.rewards.sum()) for e in eps]
            refs = (-1500.0, 0.0) if task.env_id == offline.PENDULUM else (min(returns), max(returns))
            offline.save_minari(eps, folder, ds_id, f"{task.env_id}: {what}", algorithm, code, task.env_id, refs)

        save(demos.expert_episodes(task, config.episodes, base), ids["expert"], who, who)
        for k, d in enumerate(sets, 1):
            start = base + k * config.episodes              # set k's reset seeds follow set k - 1's: none shared
            if d.kind == "checkpoint":
                eps = offline.collect(task.checkpoints[int(d.size)], config.episodes, start, task.env_id)
                save(eps, ids[d.tag], f"checkpoint of {who} at {int(d.size)} training steps", "SB3 SAC checkpoint")
                continue
            eps = offline.collect(demos.noisy_expert(task, d.kind, d.size, rng), config.episodes, start, task.env_id)
            save(eps, ids[d.tag], f"{who} with {d.kind} action noise of size {d.size:g}", f"{who} + {d.kind} noise")

    folder = ctx.artefact("demonstrations", inputs, build)
    rng = streams.rng(seed, "pairs")
    episodes = {key: offline.load_minari(folder, ds_id) for key, ds_id in ids.items()}
    optimal = demos.pairs(task, episodes["expert"], config.n_optimal, rng)
    noisy = {d.tag: demos.pairs(task, episodes[d.tag], config.n_noisy, rng) for d in sets}
    returns = {key: float(np.mean([e.rewards.sum() for e in eps])) for key, eps in episodes.items()}
    return Demos(optimal, noisy, returns)


class Purified(NamedTuple):
    """Purified imperfect sets per arm at the inverse point (and along the sweep), and the purification metrics."""

    sets: dict[str, demos.Pairs]   # "<arm>_<tag>" or "<arm>_i<i_r>_<tag>" -> purified pairs (expert: pi*(s_hat))
    metrics: dict[str, float]
    curves: dict[str, list[float]]


def _xs(p: demos.Pairs) -> np.ndarray:
    return np.concatenate([p.states, p.actions], 1)                       # (n, obs_dim + act_dim) x = [s; a]


def _split(task: demos.Task, xh: np.ndarray, obs_dim: int) -> demos.Pairs:
    s_hat = xh[:, :obs_dim]                                               # (n, obs_dim)
    return demos.Pairs(s_hat, xh[:, obs_dim:], task.expert(s_hat))


def purify_stage(config: Config, task: demos.Task, d: Demos, seed: int) -> Purified:
    """Stage 2 (module docstring)."""
    gen = streams.torch_generator(seed, "purify")
    cfg = DDPMConfig(config.T, config.ddpm_hidden, config.ddpm_layers, config.ddpm_time_dim, config.ddpm_steps,
                     config.ddpm_batch, config.ddpm_lr)
    purifiers: dict[str, Purifier] = {
        "dpbc": fit_purifier(_xs(d.optimal), cfg, gen, config.device),
        "dpbco": fit_purifier(_xs(d.optimal), cfg._replace(official=True, dropout=config.official_dropout), gen,
                              config.device)}
    obs_dim = d.optimal.states.shape[1]
    s_std = d.optimal.states.std(0) + 1e-6                                # (obs_dim,) D_o's state scale
    sets: dict[str, demos.Pairs] = {}
    metrics: dict[str, float] = {}
    curves: dict[str, list[float]] = {"i_grid": [float(i) for i in config.i_grid]}
    gaussian = [s.tag for s in data_sets(config) if s.kind == "gaussian"]
    strong = _aliases(config)["strong"]
    for tag, p in d.noisy.items():
        metrics[f"act_err_before_{tag}"] = float(np.mean(np.abs(p.actions - p.expert)))
        for arm, purifier in purifiers.items():
            q = sets[f"{arm}_{tag}"] = _split(task, purifier.purify(_xs(p), config.inverse_point, gen), obs_dim)
            suffix = "" if arm == "dpbc" else "_official"
            metrics[f"act_err_after{suffix}_{tag}"] = float(np.mean(np.abs(q.actions - p.expert)))   # pi* at s
            metrics[f"act_consistency_after{suffix}_{tag}"] = float(np.mean(np.abs(q.actions - q.expert)))
            metrics[f"state_move{suffix}_{tag}"] = float(np.mean(np.linalg.norm((q.states - p.states) / s_std, axis=1)))
            if tag == strong:
                for i in config.i_sweep:
                    sets[f"{arm}_i{i}_{tag}"] = _split(task, purifier.purify(_xs(p), i, gen), obs_dim)
            if tag not in gaussian or (arm == "dpbco" and tag != strong):   # the official arm: strongest level only
                continue
            sub = demos.Pairs(*(a[:config.curve_points] for a in p))
            # the action purification error E||a_hat_0 - pi*(s)||_2 (Theorems 2-4 on the corrupted part of x)
            err = [float(np.mean(np.linalg.norm(purifier.purify(_xs(sub), int(i), gen)[:, obs_dim:] - sub.expert,
                                                axis=1))) for i in config.i_grid]
            curves[f"err_curve{suffix}_{tag}"] = err
            if arm != "dpbc":
                continue
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


def imitate_stage(config: Config, task: demos.Task, d: Demos, pur: Purified, data: DataSet,
                  seed: int) -> dict[str, float]:
    """Stage 3 for one data set: mean returns of BC, DP-BC with each purifier, the oracle (Gaussian and D1
    sets) and BCND (the strongest Gaussian set), whose first round is the BC policy (module docstring)."""
    tag = data.tag
    gen = streams.torch_generator(seed, "imitate", tag)
    noisy = d.noisy[tag]
    s_all = np.concatenate([noisy.states, d.optimal.states])             # (n_noisy + n_optimal, obs_dim)
    a_all = np.concatenate([noisy.actions, d.optimal.actions])
    cfg = _bc_config(config)
    policies = {"bc": bc.fit_bc(s_all, a_all, cfg, gen, device=config.device)}
    if data.kind in ("gaussian", "checkpoint"):
        oracle = np.concatenate([noisy.expert, d.optimal.actions])      # pi*(s) in place of the recorded actions
        policies["oracle"] = bc.fit_bc(s_all, oracle, cfg, gen, device=config.device)
    for arm in ARMS:
        p = pur.sets[f"{arm}_{tag}"]
        policies[arm] = bc.fit_bc(p.states, p.actions, cfg, gen, device=config.device)
    if tag == _aliases(config)["strong"]:
        policies["bcnd"] = bc.bcnd(s_all, a_all, cfg, config.bcnd_rounds, gen, policies["bc"], config.device).policy
    return {f"return_{m}_{tag}": _mean_return(bc.act(p, task.u_max), config, task) for m, p in policies.items()}


def sweep_stage(config: Config, task: demos.Task, pur: Purified, seed: int) -> dict[str, float]:
    """DP-BC of each purifier at every further inverse point of ``i_sweep``, strongest Gaussian set."""
    tag = _aliases(config)["strong"]
    gen = streams.torch_generator(seed, "sweep")
    out = {}
    for arm in ARMS:
        for i in config.i_sweep:
            p = pur.sets[f"{arm}_i{i}_{tag}"]
            policy = bc.fit_bc(p.states, p.actions, _bc_config(config), gen, device=config.device)
            out[f"return_{arm}_i{i}_{tag}"] = _mean_return(bc.act(policy, task.u_max), config, task)
    return out


def optimal_stage(config: Config, task: demos.Task, d: Demos, seed: int) -> dict[str, float]:
    """References on the evaluation starts: the expert, uniform actions, and BC on D_o alone."""
    gen = streams.torch_generator(seed, "optimal")
    rng = streams.rng(seed, "uniform_policy")
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
        task = demos.make_task(config.env, config.expert_steps, config.expert_seed, ctx, config.device,
                               config.checkpoint_every, config.d1_steps)
        torch.manual_seed(streams.int_seed(seed, "torch_global"))     # for any draw without a generator
        d = ctx.stage("demos", demos_stage, config, task, seed, ctx)
        pur = ctx.stage("purify", purify_stage, config, task, d, seed)
        metrics.update(pur.metrics)
        metrics.update(ctx.stage("optimal", optimal_stage, config, task, d, seed))
        for s in data_sets(config):
            metrics.update(ctx.stage(f"imitate_{s.tag}", imitate_stage, config, task, d, pur, s, seed))
        metrics.update(ctx.stage("sweep", sweep_stage, config, task, pur, seed))
        metrics.update({f"return_demo_{k}": v for k, v in d.demo_returns.items()})
    lo, hi = metrics["return_uniform"], metrics["return_expert"]
    for name in [k for k in metrics if k.startswith("return_")]:
        metrics["score_" + name[len("return_"):]] = (metrics[name] - lo) / (hi - lo)
    tags = [s.tag for s in data_sets(config)]
    aliases = _aliases(config)
    for tag in tags:
        for arm, name in (("dpbc", "gain"), ("dpbco", "gain_official")):
            metrics[f"{name}_{tag}"] = metrics[f"score_{arm}_{tag}"] - metrics[f"score_bc_{tag}"]
        if f"score_oracle_{tag}" in metrics:
            metrics[f"headroom_{tag}"] = metrics[f"score_oracle_{tag}"] - metrics[f"score_bc_{tag}"]
    for alias, tag in aliases.items():
        for key in [k for k in metrics if k.endswith("_" + tag)]:
            metrics[key[:-len(tag)] + alias] = metrics[key]
    # C1b: the gain at the weakest level counts as 0 where it is a loss ("most evident at L1" needs a gain there)
    metrics["gain_weak_pos"] = max(metrics["gain_weak"], 0.0)
    curves = dict(pur.curves)
    gaussian = tags[:len(config.noise_levels)]
    curves["noise_levels"] = list(config.noise_levels)
    for m in METHODS:
        if m != "bcnd":
            curves[f"score_vs_noise_{m}"] = [metrics[f"score_{m}_{t}"] for t in gaussian]
    points = sorted({config.inverse_point, *config.i_sweep})
    curves["i_sweep"] = [float(i) for i in points]
    for arm in ARMS:
        curves[f"score_vs_i_{arm}"] = [metrics[f"score_{arm}_strong" if i == config.inverse_point
                                               else f"score_{arm}_i{i}_strong"] for i in points]
    curves["score_vs_i_bc"] = [metrics["score_bc_strong"]] * len(points)   # BC's reference (no purification)
    return SeedResult(seed=seed, metrics=metrics, curves=curves)


_LABELS = {"bc": "BC (D_s + D_o)", "bcnd": "BCND (D_s + D_o)", "dpbc": "DP-BC, paper's purifier",
           "dpbco": "DP-BC, official purifier", "oracle": "oracle BC (pi*(s) labels)"}


def figures(result: RunResult) -> dict:
    """Normalised return against the noise level per method, the action purification error along i_r, and
    DP-BC's return along i_r."""
    import matplotlib.pyplot as plt

    env = result.config.get("env", "Reacher-v5")
    levels = result.curve("noise_levels")[0]
    fig, ax = plt.subplots(figsize=(6, 3.8))
    for m in METHODS:
        if m != "bcnd":
            band(ax, levels, result.curve(f"score_vs_noise_{m}"), label=_LABELS[m])
    ax.set_xlabel("Gaussian action noise std (units of the action bound)")
    ax.set_ylabel("normalised return")
    ax.set_title(f"{env}: return against demonstration noise (mean and band over seeds)", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    grid = result.curve("i_grid")[0]
    fig2, ax2 = plt.subplots(figsize=(6, 3.8))
    for level in levels:
        band(ax2, 1 + grid, result.curve(f"err_curve_g{round(100 * level)}"), label=f"paper's purifier, noise {level:g}")
    band(ax2, 1 + grid, result.curve(f"err_curve_official_g{round(100 * levels[-1])}"),
         label=f"official purifier, noise {levels[-1]:g}")
    ax2.set_xscale("log")
    ax2.set_yscale("log")   # the step-blind official network diverges on full chains
    ax2.set_xlabel("1 + inverse point i_r")
    ax2.set_ylabel("E ||a_hat_0 - pi*(s)||")
    ax2.set_title("action purification error along the inverse point (Theorem 4's trade-off)", fontsize=9)
    ax2.legend(fontsize=6)
    fig2.tight_layout()
    points = result.curve("i_sweep")[0]
    fig3, ax3 = plt.subplots(figsize=(6, 3.8))
    for arm in (*ARMS, "bc"):
        band(ax3, points, result.curve(f"score_vs_i_{arm}"), label=_LABELS[arm])
    ax3.set_xscale("log")
    ax3.set_xlabel("inverse point i_r")
    ax3.set_ylabel("normalised return")
    ax3.set_title(f"{env}: DP-BC along i_r at the strongest Gaussian noise", fontsize=9)
    ax3.legend(fontsize=7)
    fig3.tight_layout()
    return {"return_vs_noise": fig, "error_vs_inverse_point": fig2, "return_vs_inverse_point": fig3}

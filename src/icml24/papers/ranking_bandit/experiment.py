"""Experiment: UCR against G-MLE, epsilon-greedy and random ranking, in three environments.

Per seed, ``run`` plays every policy for T rounds on

1. the **low-diversity** synthetic regime (contexts tightly around one centre: greedy estimates can
   lock in a bad list, exploration matters) - claims C1, C2a, C2b, C3;
2. the **diverse** synthetic regime (contexts spread widely: greedy gets some free exploration) - C2c;
3. the **MovieLens** semi-synthetic environment, when ``movielens_path`` points at the ratings (CSV,
   u.data or the dslabs R data) or is "auto" and Debian's r-cran-dslabs is installed; otherwise its
   metrics are absent and claims C4 and C4b are "not checkable".

All policies in an environment see the same context stream (common random numbers). ``run`` is pure:
every random draw comes from generators spawned from ``seed``. The ``Config``, the presets, ``SEEDS``
and ``validate`` live in config.py (no torch, for ``icml24 show``) and are re-exported here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icml24.core import streams
from icml24.core.context import RunContext
from icml24.core.results import RunResult, SeedResult
from icml24.papers.ranking_bandit.algorithm import UCR, EpsilonGreedy, RandomRanker
from icml24.papers.ranking_bandit.config import FULL, QUICK, SEEDS, SMOKE, Config, validate
from icml24.papers.ranking_bandit.env import RankingEnv, optimal_values, simulate, synthetic_env

__all__ = ["POLICIES", "Config", "SMOKE", "QUICK", "FULL", "SEEDS", "validate", "checkpoints", "make_policy", "play",
           "run", "figures"]

POLICIES = ("ucr", "gmle", "egreedy", "random")


def checkpoints(config: Config) -> np.ndarray:
    """Increasing round counts (1-based) at which cumulative regret is read; the last is T."""
    grid = np.geomspace(config.first_checkpoint, config.horizon, config.n_checkpoints)
    return np.unique(np.round(grid).astype(np.int64))


def make_policy(name: str, n_items: int, n_positions: int, dim: int, config: Config):
    """A fresh policy by name: ``ucr``, ``gmle`` (UCR without bonus), ``egreedy`` or ``random``."""
    glm: dict[str, Any] = dict(link=config.link, lam=config.lam, refit_growth=config.refit_growth)
    if name == "ucr":
        return UCR(n_items, n_positions, dim, ucb_scale=config.ucb_scale, delta=config.delta, **glm)
    if name == "gmle":
        return UCR(n_items, n_positions, dim, ucb_scale=0.0, **glm)
    if name == "egreedy":
        return EpsilonGreedy(n_items, n_positions, dim, epsilon=config.epsilon, **glm)
    if name == "random":
        return RandomRanker(n_items, n_positions)
    raise ValueError(f"unknown policy {name!r}")


def play(env: RankingEnv, names: tuple[str, ...], config: Config, seed: int, *where: str | int) -> dict:
    """Every policy in ``names`` on one context stream: {name: Trace}. The contexts come from the stream
    (seed, *where, "contexts") and each policy's clicks and choices from (seed, *where, name)."""
    contexts = env.contexts(config.horizon, streams.rng(seed, *where, "contexts"))
    best = optimal_values(env, contexts)
    return {name: simulate(env, make_policy(name, env.n_items, env.n_positions, env.dim, config),
                           contexts, best, streams.rng(seed, *where, name), checkpoints(config))
            for name in names}


def run(config: Config, seed: int, ctx: RunContext | None = None) -> SeedResult:
    """One seed: regret curves per regime and policy, the (N, K) grid, MovieLens if present (numpy only:
    ``ctx``, the frame's run context, is accepted for the contract and not needed)."""
    if len(config.grid_items) != len(config.grid_positions):
        raise ValueError("grid_items and grid_positions must have the same length")
    metrics: dict[str, float] = {}
    curves: dict[str, list[float]] = {"t": [float(c) for c in checkpoints(config)]}
    traces = {}
    for regime, spread in (("low", config.low_spread), ("diverse", config.high_spread)):
        env = synthetic_env(streams.rng(seed, regime, "env"), config.n_items, config.n_positions, config.dim, spread, config.link,
                            config.position_decay, config.position_noise)
        traces[regime] = play(env, POLICIES, config, seed, regime)
        for name, trace in traces[regime].items():
            curves[f"regret_{regime}_{name}"] = trace.regret.tolist()
            metrics[f"regret_{regime}_{name}"] = float(trace.regret[-1])

    grid_regret = []
    for n, k in zip(config.grid_items, config.grid_positions):
        env = synthetic_env(streams.rng(seed, "grid", n, k, "env"), n, k, config.dim, config.low_spread, config.link,
                            config.position_decay, config.position_noise)
        grid_regret.append(float(play(env, ("ucr",), config, seed, "grid", n, k)["ucr"].regret[-1]))
    curves["grid_nk"] = [float(n * k) for n, k in zip(config.grid_items, config.grid_positions)]
    curves["grid_regret_ucr"] = grid_regret

    from icml24.papers.ranking_bandit.movielens import find_ratings, load_ratings, movielens_env

    path = find_ratings(config.movielens_path)
    if path is not None:
        ratings = load_ratings(path)
        metrics["ml_ratings"] = float(len(ratings.rating))          # which data set was read (dslabs: 100,004)
        env = movielens_env(ratings, config.ml_items, config.ml_positions, config.ml_dim, streams.rng(seed, "movielens", "env"),
                            config.position_decay, config.position_noise, config.ml_logit_scale)
        ml = play(env, POLICIES, config, seed, "movielens")
        for name, trace in ml.items():
            metrics[f"ml_satisfaction_{name}"] = float(trace.satisfaction[-1])
            metrics[f"ml_regret_{name}"] = float(trace.regret[-1])
            curves[f"ml_regret_{name}"] = trace.regret.tolist()
    return SeedResult(seed=seed, metrics=metrics, curves=curves)


def _band_plot(ax, x, ys, label, **kw):
    """Mean over seeds with a 95% t-interval band (a normal band for fewer than 2 seeds is skipped)."""
    from scipy import stats as sps

    mean = ys.mean(axis=0)
    (line,) = ax.plot(x, mean, label=label, **kw)
    if ys.shape[0] > 1:
        half = sps.t.ppf(0.975, ys.shape[0] - 1) * ys.std(axis=0, ddof=1) / np.sqrt(ys.shape[0])
        ax.fill_between(x, mean - half, mean + half, color=line.get_color(), alpha=0.2)


def figures(result: RunResult) -> dict:
    """Cumulative regret vs T per regime (mean, 95% CI over seeds), and regret at T vs NK (log-log)."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullLocator

    out = {}
    t = result.curve("t")[0]
    regimes = [("low", "low context diversity"), ("diverse", "diverse contexts")]
    if "ml_regret_ucr" in result.curve_names():
        regimes.append(("ml", "MovieLens semi-synthetic"))
    for regime, title in regimes:
        fig, (ax, axl) = plt.subplots(1, 2, figsize=(10, 3.8))
        for name in POLICIES:
            key = f"ml_regret_{name}" if regime == "ml" else f"regret_{regime}_{name}"
            ys = result.curve(key)
            _band_plot(ax, t, ys, name, marker=".")
            _band_plot(axl, t, ys, name, marker=".")
        axl.set_xscale("log")
        axl.set_yscale("log")
        ucr = result.curve("ml_regret_ucr" if regime == "ml" else f"regret_{regime}_ucr").mean(axis=0)
        axl.plot(t, ucr[-1] * np.sqrt(t / t[-1]), "k--", lw=1, label="slope 1/2")
        for a in (ax, axl):
            a.set_xlabel("round t")
            a.set_ylabel("cumulative regret")
        ax.set_title(title)
        axl.set_title("log-log")
        axl.legend(fontsize=7)
        fig.tight_layout()
        out[f"regret_{regime}"] = fig
    nk = result.curve("grid_nk")[0]
    ys = result.curve("grid_regret_ucr")
    fig, ax = plt.subplots(figsize=(5, 3.8))
    ax.loglog(nk, ys.T, "o", color="C0", alpha=0.4, ms=3)
    ax.loglog(nk, np.exp(np.log(ys).mean(axis=0)), "o-", color="C0", label="UCR (geometric mean)")
    gm = np.exp(np.log(ys).mean(axis=0))
    ax.loglog(nk, gm[0] * np.sqrt(nk / nk[0]), "k--", lw=1, label="sqrt(NK)")
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticks(nk, [f"{v:g}" for v in nk])
    ax.set_xlabel("N K  (grid of (N, K) pairs)")
    ax.set_ylabel("UCR regret at T")
    ax.legend()
    fig.tight_layout()
    out["regret_vs_nk"] = fig
    return out

"""Experiment: UCR against G-MLE, epsilon-greedy and random ranking, in three environments.

Per seed, ``run`` plays every policy for T rounds on

1. the **low-diversity** synthetic regime (contexts tightly around one centre: greedy estimates can
   lock in a bad list, exploration matters) - claims C1, C2a, C2b, C3;
2. the **diverse** synthetic regime (contexts spread widely: greedy gets some free exploration) - C2c;
3. the **MovieLens** semi-synthetic environment, only when ``movielens_path`` points at the ratings
   (CSV or the dslabs R data); otherwise its metrics are absent and claim C4 is "not checkable".

All policies in an environment see the same context stream (common random numbers). ``run`` is pure:
every random draw comes from generators spawned from ``seed``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from icml24.core.config import knob, path_knob
from icml24.core.context import RunContext
from icml24.core.errors import UserError
from icml24.core.results import RunResult, SeedResult
from icml24.papers.ranking_bandit.algorithm import UCR, EpsilonGreedy, RandomRanker
from icml24.papers.ranking_bandit.env import RankingEnv, optimal_values, simulate, synthetic_env

POLICIES = ("ucr", "gmle", "egreedy", "random")


@dataclass(frozen=True)
class Config:
    """Select-rank bandit simulation: N items, K slots, d-dimensional users, T rounds."""

    n_items: int = knob(20, "N, number of candidate items (synthetic regimes)", ge=1)
    n_positions: int = knob(3, "K, number of display positions", ge=1)
    dim: int = knob(5, "d, user context dimension", ge=1)
    horizon: int = knob(10_000, "T, rounds per bandit run", ge=1)
    first_checkpoint: int = knob(100, "first round at which cumulative regret is recorded", ge=1)
    n_checkpoints: int = knob(10, "geometrically spaced checkpoints between first_checkpoint and T", ge=2)
    link: Literal["logistic", "linear"] = knob("logistic", "GLM of the responses: Bernoulli-logistic or Gaussian-linear",
                                               choices=("logistic", "linear"))
    low_spread: float = knob(0.1, "context standard deviation around the centre, low-diversity regime", ge=0)
    high_spread: float = knob(1.0, "context standard deviation around the centre, diverse regime", ge=0)
    position_decay: float = knob(0.3, "common drop of alpha_jk per position down the list")
    position_noise: float = knob(0.3, "std of the item-specific part of the position effect alpha_jk", ge=0)
    lam: float = knob(1.0, "ridge / prior precision lambda of every per-item GLM (V_j = lam I at start)", gt=0)
    ucb_scale: float = knob(0.5, "multiplier of the confidence radius rho (0 would be G-MLE)", ge=0)
    delta: float = knob(0.05, "confidence level delta of the radius", gt=0, lt=1)
    epsilon: float = knob(0.05, "exploration probability of the epsilon-greedy baseline", ge=0, le=1)
    refit_growth: float = knob(0.05, "logistic MLE: Newton step when an item's data grew by this fraction", ge=0)
    grid_items: tuple[int, ...] = knob((10, 20, 40, 60), "N values of the (N, K) grid for the sqrt(NK) claim",
                                       ge=1, nonempty=True)
    grid_positions: tuple[int, ...] = knob((2, 3, 4, 5), "K values of the (N, K) grid, paired with grid_items",
                                           ge=1, nonempty=True)
    movielens_path: str = path_knob("", "MovieLens ratings (CSV, u.data, .rds/.rda or dslabs R dir); '' skips C4")
    ml_items: int = knob(50, "N for MovieLens: the most-rated movies", ge=1)
    ml_positions: int = knob(5, "K for MovieLens", ge=1)
    ml_dim: int = knob(5, "rank d of the user/item factors fitted to the ratings", ge=1)
    ml_logit_scale: float = knob(1.5, "logit per rating star when turning predicted ratings into click odds", gt=0)


SMOKE = Config(n_items=6, n_positions=2, dim=3, horizon=300, first_checkpoint=20, n_checkpoints=5,
               grid_items=(4, 6, 8), grid_positions=(2, 2, 3))
QUICK = Config()
FULL = Config(horizon=100_000, n_checkpoints=16, n_items=50, n_positions=5, refit_growth=0.02,
              grid_items=(10, 20, 50, 100, 200), grid_positions=(2, 3, 5, 5, 10))
SEEDS = {"smoke": (0,), "quick": tuple(range(6)), "full": tuple(range(20))}


def validate(config: Config) -> None:
    """Reject a config that cannot run or fit its slopes, before any seed starts (called by the CLI)."""
    if config.n_positions > config.n_items:
        raise UserError(f"n_positions={config.n_positions}, n_items={config.n_items}: a list shows K distinct items, "
                        "so n_positions must not exceed n_items")
    if config.first_checkpoint >= config.horizon:
        raise UserError(f"first_checkpoint={config.first_checkpoint}, horizon={config.horizon}: first_checkpoint "
                        "must be below horizon (the regret slope needs checkpoints up to T)")
    if len(config.grid_items) != len(config.grid_positions):
        raise UserError(f"grid_items has {len(config.grid_items)} values, grid_positions {len(config.grid_positions)}: "
                        "they are paired and must have the same length")
    for n, k in zip(config.grid_items, config.grid_positions):
        if k > n:
            raise UserError(f"grid_items, grid_positions: the pair (N, K) = ({n}, {k}) has K > N; each grid_positions "
                            "value must not exceed its grid_items value")
    if len({n * k for n, k in zip(config.grid_items, config.grid_positions)}) < 2:
        raise UserError("grid_items, grid_positions: need at least two distinct N*K values for the sqrt(NK) slope")
    if config.ml_positions > config.ml_items:
        raise UserError(f"ml_positions={config.ml_positions}, ml_items={config.ml_items}: ml_positions must not "
                        "exceed ml_items")
    if config.ml_dim > config.ml_items:
        raise UserError(f"ml_dim={config.ml_dim}, ml_items={config.ml_items}: the rank of the rating factors "
                        "cannot exceed the number of movies")


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


def play(env: RankingEnv, names: tuple[str, ...], config: Config, rng: np.random.Generator) -> dict:
    """Every policy in ``names`` on one context stream: {name: Trace}."""
    contexts = env.contexts(config.horizon, rng)
    best = optimal_values(env, contexts)
    seeds = rng.spawn(len(names))
    return {name: simulate(env, make_policy(name, env.n_items, env.n_positions, env.dim, config),
                           contexts, best, prng, checkpoints(config))
            for name, prng in zip(names, seeds)}


def run(config: Config, seed: int, ctx: RunContext | None = None) -> SeedResult:
    """One seed: regret curves per regime and policy, the (N, K) grid, MovieLens if present (numpy only:
    ``ctx``, the frame's run context, is accepted for the contract and not needed)."""
    if len(config.grid_items) != len(config.grid_positions):
        raise ValueError("grid_items and grid_positions must have the same length")
    rng_low, rng_high, rng_grid, rng_ml = np.random.default_rng(seed).spawn(4)
    metrics: dict[str, float] = {}
    curves: dict[str, list[float]] = {"t": [float(c) for c in checkpoints(config)]}
    traces = {}
    for regime, spread, rng in (("low", config.low_spread, rng_low), ("diverse", config.high_spread, rng_high)):
        env = synthetic_env(rng, config.n_items, config.n_positions, config.dim, spread, config.link,
                            config.position_decay, config.position_noise)
        traces[regime] = play(env, POLICIES, config, rng)
        for name, trace in traces[regime].items():
            curves[f"regret_{regime}_{name}"] = trace.regret.tolist()
            metrics[f"regret_{regime}_{name}"] = float(trace.regret[-1])

    grid_regret = []
    for n, k, rng in zip(config.grid_items, config.grid_positions, rng_grid.spawn(len(config.grid_items))):
        env = synthetic_env(rng, n, k, config.dim, config.low_spread, config.link, config.position_decay,
                            config.position_noise)
        grid_regret.append(float(play(env, ("ucr",), config, rng)["ucr"].regret[-1]))
    curves["grid_nk"] = [float(n * k) for n, k in zip(config.grid_items, config.grid_positions)]
    curves["grid_regret_ucr"] = grid_regret

    if config.movielens_path:
        from icml24.papers.ranking_bandit.movielens import load_ratings, movielens_env

        env = movielens_env(load_ratings(config.movielens_path), config.ml_items, config.ml_positions,
                            config.ml_dim, rng_ml, config.position_decay, config.position_noise,
                            config.ml_logit_scale)
        ml = play(env, POLICIES, config, rng_ml)
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

"""Experiment: ExO with the hybrid regularizer against ExO with negative entropy, in stochastic and
adversarial partial-monitoring games.

Per seed, ``run`` plays (all with horizon T, regret read at geometric checkpoints):

1. the locally observable game (apple tasting), i.i.d. outcomes: hybrid (adaptive rate) and
   negentropy (fixed rate beta_t = c sqrt(t)) with the quadratic stability model (reported only);
2. the same game against the switching (staircase) adversary, over ``adv_horizon`` rounds: hybrid - C2;
3. the globally observable game (label-efficient prediction), i.i.d. outcomes: the globally observable
   BOBW algorithm (:mod:`.global_bobw`) and the classical T^{2/3} baseline (exponential weights,
   beta_t = c t^{2/3}, exploration t^{-1/3}), and the BOBW algorithm against the switching adversary
                                                                                        - claim C3;
   both learners again with a large gap (``u_glob_easy``; reported, no claim);
4. a grid of locally observable games (apple tasting, 3-armed bandit, 3-action full information)
   with i.i.d. outcomes: hybrid; regret divided by the bound's shape sum_a k^2 m^2 log T / Delta_a - C4;
5. the local game again with negentropy ExO solved with LS2020's exact exponential-weights objective
   (:class:`.exo.ExpWeightsExOSolver`);
6. ``local_runs - 1`` further independent runs of the two i.i.d. learners of C1 (hybrid, LS2020
   negentropy); C1 reads the mean regret curve of the ``local_runs`` runs of each     - claim C1;
7. with ``adv_horizon`` > T, the hybrid learner on the i.i.d. sequence over ``adv_horizon`` rounds, the
   second sequence of C2.

Every random draw comes from generators spawned from ``seed`` (one per game run).
"""

from __future__ import annotations

import math
from typing import Callable, Literal

import numpy as np

from icml24.core.context import RunContext
from icml24.core.plots import band
from icml24.core.results import RunResult, SeedResult
from icml24.core.stats import loglog_slope
from icml24.papers.partial_monitoring.algorithm import LearnerSpec, RunTrace, bound_scale, play
from icml24.papers.partial_monitoring.components import (
    corrupted_env,
    make_game,
    observability,
    stochastic_env,
    switching_env,
)
from icml24.papers.partial_monitoring.config import FULL, QUICK, SEEDS, SMOKE, Config, stochastic_law, validate
from icml24.papers.partial_monitoring.global_bobw import GlobalSpec, play_global

__all__ = ["Config", "SMOKE", "QUICK", "FULL", "SEEDS", "validate", "stochastic_law", "checkpoints", "norm",
           "norm23", "run", "figures"]


def checkpoints(config: Config) -> tuple[np.ndarray, np.ndarray]:
    """(all, late) checkpoint rounds: geometric on [first_checkpoint, T] and on [T/10, T]; both end at T."""
    grid = np.unique(np.round(np.geomspace(config.first_checkpoint, config.horizon, config.n_checkpoints)))
    late = np.unique(np.round(np.geomspace(config.horizon / 10, config.horizon, config.n_late)))
    return grid.astype(np.int64), late.astype(np.int64)


def norm(t: float) -> float:
    """sqrt(T log T): the adversarial regret normalisation of the locally observable game (C2)."""
    return math.sqrt(t * math.log(t))


def norm23(t: float) -> float:
    """T^(2/3) (log T)^(1/3): the adversarial regret normalisation of the globally observable game (C3)."""
    return t ** (2 / 3) * math.log(t) ** (1 / 3)


def run(config: Config, seed: int, ctx: RunContext | None = None) -> SeedResult:
    """One seed: every learner on every game/environment of the module docstring (numpy only: ``ctx``,
    the frame's run context, is accepted for the contract and not needed)."""
    grid, late = checkpoints(config)
    marks = np.union1d(grid, late)
    T = config.horizon
    # children keep their index whatever the count, so the first 16 streams do not depend on local_runs
    streams = iter(np.random.SeedSequence(seed).spawn(17 + 2 * (config.local_runs - 1)))

    def spec(regularizer: Literal["hybrid", "negentropy"], schedule: Literal["adaptive", "fixed"], root: int,
             stability: Literal["local", "exact"] = "local") -> LearnerSpec:
        return LearnerSpec(regularizer, schedule, root, c=config.c, gamma=config.gamma,
                           resolve_tol=config.resolve_tol, stability=stability)

    exo_rounds = [0]                  # rounds played by ExO learners (the global learners solve no ExO)

    def go(game_name: str, env, learner: LearnerSpec | GlobalSpec, at: np.ndarray = marks):
        player: Callable[..., RunTrace] = play_global if isinstance(learner, GlobalSpec) else play
        trace = player(make_game(game_name), env, learner, np.random.default_rng(next(streams)), at)
        exo_rounds[0] += len(env.dists) if player is play else 0
        return dict(zip(trace.t.astype(int).tolist(), trace.regret.tolist())), trace.n_solves

    metrics: dict[str, float] = {}
    curves: dict[str, list[float]] = {"t": grid.astype(float).tolist(), "t_late": late.astype(float).tolist()}
    solves = 0

    def record(tag: str, reg: dict) -> None:
        curves[f"regret_{tag}"] = [reg[int(t)] for t in grid]
        curves[f"regret_{tag}_late"] = [reg[int(t)] for t in late]
        metrics[f"regret_{tag}"] = reg[T]
        if not tag.endswith("adv"):
            # regret floored at 1e-12 so a (rare) non-positive value does not make the slope NaN
            late_regret = np.maximum(np.array([reg[int(t)] for t in late]), 1e-12)
            metrics[f"slope_{tag}"] = loglog_slope(late.astype(float), late_regret).slope

    # 1. local game, stochastic: hybrid vs negentropy with the quadratic stability model (reported);
    #    the negentropy learner with LS2020's exact objective (C1) runs last (step 5)
    g_loc = make_game(config.local_game)
    u_loc = stochastic_law(config, g_loc.d)
    learner: LearnerSpec | GlobalSpec  # the loop variable of steps 1 and 3
    for tag, learner in (("hyb_loc", spec("hybrid", "adaptive", 2)), ("neg_loc", spec("negentropy", "fixed", 2))):
        reg, n = go(config.local_game, stochastic_env(u_loc, T), learner)
        record(tag, reg)
        solves += n
        if tag == "hyb_loc":
            hyb_loc = reg                  # the first of C1's hybrid runs (step 6 adds the others)
    # 2. local game, switching adversary (C2), over adv_horizon rounds (T2 >= T)
    T2 = config.adv_horizon or T
    at2 = np.union1d(marks, [T2])

    def adversary(rounds: int):
        return switching_env(np.array(config.adv_u_a), np.array(config.adv_u_b), rounds, config.adv_first_phase,
                             config.adv_growth)

    reg, n = go(config.local_game, adversary(T2), spec("hybrid", "adaptive", 2), at2)
    record("hyb_adv", reg)
    solves += n
    curves["adv_norm"] = [reg[int(t)] / norm(t) for t in grid]
    curves["adv_norm_late"] = [reg[int(t)] / norm(t) for t in late]
    metrics["adv_norm_final"] = reg[T2] / norm(T2)
    c2_adv = reg[T2]
    # 3. global game: BOBW algorithm vs the T^{2/3} baseline (stochastic), BOBW vs the switching adversary (C3)
    g_glob = make_game(config.global_game)
    u_glob = stochastic_law(config, g_glob.d)
    bobw = GlobalSpec("spb", c=config.c, gamma_bar=config.gamma)
    for tag, learner in (("bobw_glob", bobw), ("t23_glob", GlobalSpec("fixed", c=config.c))):
        reg, _ = go(config.global_game, stochastic_env(u_glob, T), learner)
        record(tag, reg)
    reg, _ = go(config.global_game, adversary(T), bobw)
    record("bobw_glob_adv", reg)
    curves["glob_adv_norm"] = [reg[int(t)] / norm23(t) for t in grid]
    metrics["glob_adv_norm_final"] = reg[T] / norm23(T)
    # 3'. the same two learners with a large gap (reported only: where the log T regime starts)
    if config.u_glob_easy:
        for tag, learner in (("bobw_glob_easy", bobw), ("t23_glob_easy", GlobalSpec("fixed", c=config.c))):
            reg, _ = go(config.global_game, stochastic_env(np.array(config.u_glob_easy), T), learner)
            record(tag, reg)
    # 4. grid of locally observable games (C4); the local game's hybrid run is reused
    ratios = []
    for name in config.grid_games:
        game = make_game(name)
        u = stochastic_law(config, game.d)
        if name == config.local_game:
            r_T = metrics["regret_hyb_loc"]
        else:
            reg, n = go(name, stochastic_env(u, T), spec("hybrid", "adaptive", 2))
            solves += n
            r_T = reg[T]
            metrics[f"regret_grid_{name}"] = r_T
        ratios.append(r_T / bound_scale(game, u, T))
        metrics[f"norm_regret_{name}"] = ratios[-1]
    metrics["max_norm_regret"] = float(max(ratios))
    # optional: corrupted stochastic regime (reported, no claim)
    if config.corruption_rounds > 0:
        u_bad = u_loc[::-1].copy()
        reg, n = go(config.local_game, corrupted_env(u_loc, u_bad, T, config.corruption_rounds),
                    spec("hybrid", "adaptive", 2))
        record("hyb_corrupt", reg)
        solves += n
    # 5. local game, stochastic: negentropy ExO with LS2020's exact objective (C1b; last, so the
    #    random streams of every run above are those of the previous versions of this experiment)
    negx = spec("negentropy", "fixed", 2, "exact")
    reg, n = go(config.local_game, stochastic_env(u_loc, T), negx)
    record("negx_loc", reg)
    solves += n
    # 6. further runs of the two i.i.d. learners of C1; C1a and C1b read the mean curve of each (the mean
    #    regret estimates the expected regret the bounds are about)
    runs = {"hyb": [hyb_loc], "negx": [reg]}
    for tag, learner in (("hyb", spec("hybrid", "adaptive", 2)), ("negx", negx)):
        for _ in range(config.local_runs - 1):
            reg, n = go(config.local_game, stochastic_env(u_loc, T), learner)
            runs[tag].append(reg)
            solves += n
    for tag, regs in runs.items():
        record(f"{tag}_locs", {t: float(np.mean([r[t] for r in regs])) for t in regs[0]})
    # C2: the adversarial bound holds for every outcome sequence; the worst of the two we play (the
    # switching adversary of step 2 and the oblivious i.i.d. sequence: step 1's run, or a run of T2 rounds
    # here), normalised by sqrt(T2 log T2)
    if T2 == T:
        c2_iid = metrics["regret_hyb_loc"]
    else:
        reg, n = go(config.local_game, stochastic_env(u_loc, T2), spec("hybrid", "adaptive", 2), at2)
        solves += n
        c2_iid = reg[T2]
    metrics["c2_regret_iid"], metrics["c2_regret_adv"] = c2_iid, c2_adv
    metrics["worst_norm_final"] = max(c2_adv, c2_iid) / norm(T2)
    metrics["exo_solves_per_round"] = solves / exo_rounds[0]
    assert observability(g_loc).locally_observable and not observability(g_glob).locally_observable
    return SeedResult(seed=seed, metrics=metrics, curves=curves)


def figures(result: RunResult) -> dict:
    """Regret curves R_t, R_t / log t and R_t / sqrt(t) (mean over seeds, min-max band)."""
    import matplotlib.pyplot as plt

    t = result.curve("t")[0]
    panels = (("local game, stochastic", ("hyb_loc", "negx_loc", "neg_loc")),
              ("local game, switching adversary", ("hyb_adv",)),
              ("global game, stochastic", ("bobw_glob", "t23_glob")),
              ("global game, switching adversary", ("bobw_glob_adv",)),
              ("global game, stochastic, large gap", ("bobw_glob_easy", "t23_glob_easy")))
    label = {"hyb_loc": "ExO hybrid", "negx_loc": "ExO negentropy (LS2020)", "neg_loc": "ExO negentropy, quadratic",
             "hyb_adv": "ExO hybrid",
             "bobw_glob": "global BOBW", "t23_glob": "T^(2/3) baseline", "bobw_glob_adv": "global BOBW",
             "bobw_glob_easy": "global BOBW", "t23_glob_easy": "T^(2/3) baseline"}
    out = {}
    for fname, transform, ylab in (("regret", lambda r: r, "R_t"),
                                   ("regret_over_log_t", lambda r: r / np.log(t), "R_t / log t"),
                                   ("regret_over_sqrt_t", lambda r: r / np.sqrt(t), "R_t / sqrt t")):
        shown = [(title, tags) for title, tags in panels if f"regret_{tags[0]}" in result.curve_names()]
        fig, axes = plt.subplots(1, len(shown), figsize=(4 * len(shown), 3.4))
        for ax, (title, tags) in zip(axes, shown):
            for tag in tags:
                band(ax, t, transform(result.curve(f"regret_{tag}")), label=label[tag], marker="o", ms=3)
            ax.set_xscale("log")
            if fname == "regret" and "adversary" not in title:   # adversarial regret can be negative
                ax.set_yscale("log")
            ax.set_title(title, fontsize=9)
            ax.set_xlabel("t")
            ax.set_ylabel(ylab)
            ax.legend(fontsize=8)
        fig.tight_layout()
        out[fname] = fig
    fig, ax = plt.subplots(figsize=(4.5, 3.2))
    names = sorted(n[len("norm_regret_"):] for n in result.metric_names() if n.startswith("norm_regret_"))
    vals = [result.metric(f"norm_regret_{n}") for n in names]
    ax.bar(names, [v.mean() for v in vals], yerr=[v.std() for v in vals], capsize=3)
    ax.set_ylabel("R_T / (sum_a k^2 m^2 log T / Delta_a)")
    ax.set_title("regret relative to the bound's shape", fontsize=9)
    fig.tight_layout()
    out["bound_ratio"] = fig
    return out

"""Experiment: ExO with the hybrid regularizer against ExO with negative entropy, in stochastic and
adversarial partial-monitoring games.

Per seed, ``run`` plays, one checkpointed stage per step (all with horizon T, regret read at geometric
checkpoints):

1. ``local_stage``: the locally observable game (apple tasting), i.i.d. outcomes: hybrid (adaptive rate),
   negentropy (fixed rate beta_t = c sqrt(t)) with the quadratic stability model (reported only), and
   negentropy ExO solved with LS2020's exact exponential-weights objective (:class:`.exo.ExpWeightsExOSolver`);
2. ``adversarial_stage``: the same game against the switching (staircase) adversary, over ``adv_horizon``
   rounds: hybrid                                                                      - claim C2;
3. ``global_stage``: the globally observable game (label-efficient prediction), i.i.d. outcomes: the globally
   observable BOBW algorithm (:mod:`.global_bobw`) and the classical T^{2/3} baseline (exponential weights,
   beta_t = c t^{2/3}, exploration t^{-1/3}), and the BOBW algorithm against the switching adversary
                                                                                        - claim C3;
   both learners again with a large gap (``u_glob_easy``; reported, no claim);
4. ``grid_stage``: a grid of locally observable games (apple tasting, 3-armed bandit, 3-action full
   information) with i.i.d. outcomes: hybrid; regret divided by the bound's shape
   sum_a k^2 m^2 log T / Delta_a                                                       - claim C4;
5. ``c1_stage``: ``local_runs - 1`` further independent runs of the two i.i.d. learners of C1 (hybrid,
   LS2020 negentropy); C1 reads the mean regret curve of the ``local_runs`` runs of each  - claim C1;
   with ``adv_horizon`` > T, the hybrid learner on the i.i.d. sequence over ``adv_horizon`` rounds, the
   second sequence of C2.

Every run draws from its own named stream of ``seed`` (:mod:`icml24.core.streams`: seed, stage, run tag).
"""

from __future__ import annotations

import math
from typing import Callable, Literal, NamedTuple

import numpy as np

from icml24.core import streams
from icml24.core.context import RunContext
from icml24.core.plots import band
from icml24.core.results import RunResult, SeedResult, StageOut
from icml24.core.stats import loglog_slope
from icml24.papers.partial_monitoring.algorithm import LearnerSpec, RunTrace, bound_scale, play
from icml24.papers.partial_monitoring.components import (
    corrupted_env,
    make_game,
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


class Played(NamedTuple):
    """One stage of a seed: its metrics and curves, the ExO solver's work (summed into
    ``exo_solves_per_round``) and the regret by round of the runs a later stage reuses, by tag."""

    out: StageOut
    solves: int
    exo_rounds: int
    regret: dict[str, dict[int, float]]


class _Stage:
    """Plays one stage's runs, each on its own named stream of the seed, and records their regret."""

    def __init__(self, config: Config, seed: int, name: str):
        self.config, self.seed, self.name = config, seed, name
        self.grid, self.late = checkpoints(config)
        self.marks = np.union1d(self.grid, self.late)
        self.out = StageOut({}, {})
        self.solves = self.exo_rounds = 0
        self.keep: dict[str, dict[int, float]] = {}

    def play(self, tag: str, game_name: str, env, learner: LearnerSpec | GlobalSpec,
             at: np.ndarray | None = None) -> dict[int, float]:
        """Regret by round of ``learner`` on ``env``, drawn from the stream (seed, stage name, ``tag``)."""
        player: Callable[..., RunTrace] = play_global if isinstance(learner, GlobalSpec) else play
        trace = player(make_game(game_name), env, learner, streams.rng(self.seed, self.name, tag),
                       self.marks if at is None else at)
        if player is play:                       # the global learners solve no ExO
            self.solves += trace.n_solves
            self.exo_rounds += len(env.dists)
        return dict(zip(trace.t.astype(int).tolist(), trace.regret.tolist()))

    def record(self, tag: str, reg: dict[int, float]) -> None:
        """The regret curves (all and late checkpoints), the final regret and (not adversarial) the late slope."""
        metrics, curves = self.out
        curves[f"regret_{tag}"] = [reg[int(t)] for t in self.grid]
        curves[f"regret_{tag}_late"] = [reg[int(t)] for t in self.late]
        metrics[f"regret_{tag}"] = reg[self.config.horizon]
        if not tag.endswith("adv"):
            # regret floored at 1e-12 so a (rare) non-positive value does not make the slope NaN
            late_regret = np.maximum(np.array([reg[int(t)] for t in self.late]), 1e-12)
            metrics[f"slope_{tag}"] = loglog_slope(self.late.astype(float), late_regret).slope

    def done(self) -> Played:
        return Played(self.out, self.solves, self.exo_rounds, self.keep)


def _spec(config: Config, regularizer: Literal["hybrid", "negentropy"], schedule: Literal["adaptive", "fixed"],
          stability: Literal["local", "exact"] = "local") -> LearnerSpec:
    return LearnerSpec(regularizer, schedule, 2, c=config.c, gamma=config.gamma, resolve_tol=config.resolve_tol,
                       stability=stability)


def _adversary(config: Config, rounds: int):
    return switching_env(np.array(config.adv_u_a), np.array(config.adv_u_b), rounds, config.adv_first_phase,
                         config.adv_growth)


def _c2_horizon(config: Config) -> tuple[int, np.ndarray]:
    """C2's horizon T2 = ``adv_horizon`` (or T) and the checkpoints that reach it."""
    T2 = config.adv_horizon or config.horizon
    grid, late = checkpoints(config)
    return T2, np.union1d(np.union1d(grid, late), [T2])


def local_stage(config: Config, seed: int) -> Played:
    """1. The local game, i.i.d. outcomes: hybrid (adaptive rate) and negentropy (fixed rate) with the
    quadratic stability model (reported), and negentropy with LS2020's exact objective (the first runs of
    C1's two learners)."""
    st = _Stage(config, seed, "local")
    u = stochastic_law(config, make_game(config.local_game).d)
    for tag, learner in (("hyb_loc", _spec(config, "hybrid", "adaptive")),
                         ("neg_loc", _spec(config, "negentropy", "fixed")),
                         ("negx_loc", _spec(config, "negentropy", "fixed", "exact"))):
        st.keep[tag] = reg = st.play(tag, config.local_game, stochastic_env(u, config.horizon), learner)
        st.record(tag, reg)
    return st.done()


def adversarial_stage(config: Config, seed: int) -> Played:
    """2. The local game against the switching adversary over T2 rounds (C2), normalised by sqrt(T2 log T2)."""
    st = _Stage(config, seed, "adversarial")
    T2, at2 = _c2_horizon(config)
    reg = st.play("hyb_adv", config.local_game, _adversary(config, T2), _spec(config, "hybrid", "adaptive"), at2)
    st.record("hyb_adv", reg)
    metrics, curves = st.out
    curves["adv_norm"] = [reg[int(t)] / norm(t) for t in st.grid]
    curves["adv_norm_late"] = [reg[int(t)] / norm(t) for t in st.late]
    metrics["adv_norm_final"] = reg[T2] / norm(T2)
    metrics["c2_regret_adv"] = reg[T2]
    return st.done()


def global_stage(config: Config, seed: int) -> Played:
    """3. The global game: the BOBW algorithm and the T^{2/3} baseline on i.i.d. outcomes, BOBW against the
    switching adversary (C3); (``u_glob_easy``) both again with a large gap (reported)."""
    st = _Stage(config, seed, "global")
    T = config.horizon
    u = stochastic_law(config, make_game(config.global_game).d)
    bobw, t23 = GlobalSpec("spb", c=config.c, gamma_bar=config.gamma), GlobalSpec("fixed", c=config.c)
    for tag, learner in (("bobw_glob", bobw), ("t23_glob", t23)):
        st.record(tag, st.play(tag, config.global_game, stochastic_env(u, T), learner))
    reg = st.play("bobw_glob_adv", config.global_game, _adversary(config, T), bobw)
    st.record("bobw_glob_adv", reg)
    st.out.curves["glob_adv_norm"] = [reg[int(t)] / norm23(t) for t in st.grid]
    st.out.metrics["glob_adv_norm_final"] = reg[T] / norm23(T)
    if config.u_glob_easy:
        for tag, learner in (("bobw_glob_easy", bobw), ("t23_glob_easy", t23)):
            st.record(tag, st.play(tag, config.global_game, stochastic_env(np.array(config.u_glob_easy), T), learner))
    return st.done()


def grid_stage(config: Config, seed: int, local_regret: float) -> Played:
    """4. Hybrid on a grid of locally observable games, i.i.d. outcomes; regret divided by the bound's shape
    sum_a k^2 m^2 log T / Delta_a (C4). The local game's run is stage 1's (``local_regret``, its R_T)."""
    st = _Stage(config, seed, "grid")
    T = config.horizon
    metrics = st.out.metrics
    ratios = []
    for name in config.grid_games:
        game = make_game(name)
        u = stochastic_law(config, game.d)
        if name == config.local_game:
            r_T = local_regret
        else:
            r_T = st.play(name, name, stochastic_env(u, T), _spec(config, "hybrid", "adaptive"))[T]
            metrics[f"regret_grid_{name}"] = r_T
        ratios.append(r_T / bound_scale(game, u, T))
        metrics[f"norm_regret_{name}"] = ratios[-1]
    metrics["max_norm_regret"] = float(max(ratios))
    if config.corruption_rounds > 0:         # a corrupted stochastic regime (reported, no claim)
        u_loc = stochastic_law(config, make_game(config.local_game).d)
        env = corrupted_env(u_loc, u_loc[::-1].copy(), T, config.corruption_rounds)
        st.record("hyb_corrupt", st.play("hyb_corrupt", config.local_game, env, _spec(config, "hybrid", "adaptive")))
    return st.done()


def c1_stage(config: Config, seed: int, first: dict[str, dict[int, float]]) -> Played:
    """6. ``local_runs - 1`` further runs of C1's two i.i.d. learners (hybrid, LS2020 negentropy); C1 reads
    the mean regret curve of each over its ``local_runs`` runs (``first``: stage 1's), the mean regret
    estimating the expected regret the bounds are about. 7. With ``adv_horizon`` > T, the hybrid learner on
    the i.i.d. sequence over T2 rounds, C2's second sequence; C2 reads the worse of the two sequences."""
    st = _Stage(config, seed, "c1")
    u = stochastic_law(config, make_game(config.local_game).d)
    runs = {"hyb": [first["hyb_loc"]], "negx": [first["negx_loc"]]}
    for tag, learner in (("hyb", _spec(config, "hybrid", "adaptive")),
                         ("negx", _spec(config, "negentropy", "fixed", "exact"))):
        for i in range(1, config.local_runs):
            runs[tag].append(st.play(f"{tag}_{i}", config.local_game, stochastic_env(u, config.horizon), learner))
    for tag, regs in runs.items():
        st.record(f"{tag}_locs", {t: float(np.mean([r[t] for r in regs])) for t in regs[0]})
    T2, at2 = _c2_horizon(config)
    if T2 == config.horizon:
        c2_iid = first["hyb_loc"][T2]
    else:
        c2_iid = st.play("hyb_iid_c2", config.local_game, stochastic_env(u, T2),
                         _spec(config, "hybrid", "adaptive"), at2)[T2]
    st.out.metrics["c2_regret_iid"] = c2_iid
    return st.done()


def run(config: Config, seed: int, ctx: RunContext | None = None) -> SeedResult:
    """One seed: every learner on every game/environment of the module docstring, one checkpointed stage
    per step (numpy only: ``ctx`` checkpoints the stages and sets no threads)."""
    ctx = ctx or RunContext.local()
    local = ctx.stage("local", local_stage, config, seed)
    played = [local,
              ctx.stage("adversarial", adversarial_stage, config, seed),
              ctx.stage("global", global_stage, config, seed),
              ctx.stage("grid", grid_stage, config, seed, local.out.metrics["regret_hyb_loc"]),
              ctx.stage("c1", c1_stage, config, seed, local.regret)]
    result = SeedResult.from_stages(seed, (p.out for p in played))
    m = result.metrics
    T2, _ = _c2_horizon(config)
    m["worst_norm_final"] = max(m["c2_regret_adv"], m["c2_regret_iid"]) / norm(T2)
    m["exo_solves_per_round"] = sum(p.solves for p in played) / sum(p.exo_rounds for p in played)
    grid, late = checkpoints(config)
    result.curves.update(t=grid.astype(float).tolist(), t_late=late.astype(float).tolist())
    return result


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

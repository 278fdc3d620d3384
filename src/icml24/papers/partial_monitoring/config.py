"""Config, presets and seeds of partial_monitoring: importable without torch (icml24 show)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml24.core.config import knob
from icml24.core.errors import UserError
from icml24.papers.partial_monitoring.components import GAMES, make_game, observability


@dataclass(frozen=True)
class Config:
    """Partial-monitoring simulation: games, environments, learners, horizon."""

    horizon: int = knob(10_000, "T, rounds per run", ge=20)
    first_checkpoint: int = knob(100, "first round at which cumulative regret is recorded", ge=2)
    n_checkpoints: int = knob(12, "geometric checkpoints between first_checkpoint and T (plots)", ge=2)
    n_late: int = knob(6, "geometric checkpoints on [T/10, T] used by the slope claims", ge=2)
    c: float = knob(1.0, "learning-rate scale c of every learner (hybrid ExO: beta_1 and increments; "
                         "negentropy: beta_t = c t^(1/r); global BOBW: beta_1; T^(2/3) baseline: beta_t = c t^(2/3))", gt=0)
    gamma: float = knob(1.0, "log-barrier weight gamma of the hybrid regularizer", ge=0)
    resolve_tol: float = knob(0.1, "re-solve ExO when log q or log w moved more than this (0: every round)", ge=0)
    local_game: str = knob("apple_tasting", "locally observable game of claims C1 and C2", choices=tuple(GAMES))
    global_game: str = knob("label_efficient", "globally (not locally) observable game of claim C3", choices=tuple(GAMES))
    grid_games: tuple[str, ...] = knob(("apple_tasting", "bandit3", "fullinfo3"),
                                       "locally observable games of the k, m ratio check (C4)", choices=tuple(GAMES),
                                       nonempty=True)
    u_two: tuple[float, ...] = knob((0.6, 0.4), "i.i.d. outcome law of 2-outcome games (gap 0.2)", ge=0, le=1)
    u_three: tuple[float, ...] = knob((0.5, 0.3, 0.2), "i.i.d. outcome law of 3-outcome games (gaps 0.2, 0.3)", ge=0, le=1)
    adv_u_a: tuple[float, ...] = knob((0.8, 0.2), "first outcome law of the switching adversary", ge=0, le=1)
    adv_u_b: tuple[float, ...] = knob((0.2, 0.8), "second outcome law of the switching adversary", ge=0, le=1)
    adv_first_phase: int = knob(50, "length of the adversary's first phase", ge=1)
    adv_growth: float = knob(1.6, "growth factor of the adversary's phase lengths", gt=0)
    adv_horizon: int = knob(0, "rounds of C2's two runs (the hybrid learner on the switching adversary and on the "
                               "i.i.d. sequence); 0 = horizon", ge=0)
    corruption_rounds: int = knob(0, "if > 0, also run the local game with this many corrupted first rounds", ge=0)
    local_runs: int = knob(1, "independent runs per seed of the local game's i.i.d. learners of C1 (hybrid and "
                              "LS2020 negentropy ExO); C1a and C1b read their mean regret curve", ge=1)
    u_glob_easy: tuple[float, ...] = knob((0.9, 0.1), "outcome law of the large-gap global-game run (gaps 0.8, "
                                                      "0.9; reported, no claim); () skips it", ge=0, le=1)


SMOKE = Config(horizon=200, first_checkpoint=20, n_checkpoints=5, n_late=3)
QUICK = Config(local_runs=5, adv_horizon=40_000)
FULL = Config(horizon=100_000, n_checkpoints=16, n_late=8, corruption_rounds=2_000, local_runs=5)
SEEDS = {"smoke": (0,), "quick": tuple(range(12)), "full": tuple(range(20))}


def validate(config: Config) -> None:
    """Reject a config that cannot run, before any seed starts (called by the CLI)."""
    if config.horizon < 10 * config.first_checkpoint or config.first_checkpoint < 2:
        raise UserError(f"need 2 <= first_checkpoint and horizon >= 10 * first_checkpoint; got "
                        f"first_checkpoint={config.first_checkpoint}, horizon={config.horizon}")
    for name in (config.local_game, config.global_game, *config.grid_games):
        if name not in GAMES:
            raise UserError(f"unknown game {name!r}; choose from {', '.join(sorted(GAMES))}")
    need = [(config.local_game, True)] + [(g, True) for g in config.grid_games] + [(config.global_game, False)]
    for name, local in need:
        obs = observability(make_game(name))
        if obs.locally_observable != local or not obs.globally_observable:
            kind = "locally observable" if local else "globally but not locally observable"
            raise UserError(f"game {name!r} must be {kind} for its claim")
    for field in ("local_game", "global_game"):
        if make_game(getattr(config, field)).d != 2:
            raise UserError(f"{field}={getattr(config, field)} must have 2 outcomes: the switching adversary "
                            "(adv_u_a, adv_u_b) plays it")
    easy = (("u_glob_easy", make_game(config.global_game).d),) if config.u_glob_easy else ()
    for field, d in (("u_two", 2), ("u_three", 3), ("adv_u_a", 2), ("adv_u_b", 2), *easy):
        u = np.array(getattr(config, field), dtype=float)
        if len(u) != d or np.any(u < 0) or abs(u.sum() - 1) > 1e-9:
            raise UserError(f"{field} must be a probability vector of length {d}; got {tuple(u.tolist())}")
    for name in config.grid_games:
        game = make_game(name)
        mean = game.L @ stochastic_law(config, game.d)
        if not np.any(mean - mean.min() > 1e-12):  # bound_scale divides by the positive gaps
            raise UserError(f"grid game {name!r}: {'u_two' if game.d == 2 else 'u_three'} gives every action the same "
                            "expected loss; the regret bound needs a positive gap")
    if config.adv_horizon and config.adv_horizon < config.horizon:
        raise UserError(f"adv_horizon={config.adv_horizon} must be 0 (= horizon) or at least horizon={config.horizon}")
    if config.corruption_rounds >= config.horizon:
        raise UserError(f"corruption_rounds={config.corruption_rounds} must be < horizon={config.horizon} "
                        "(otherwise no round is stochastic)")


def stochastic_law(config: Config, d: int) -> np.ndarray:
    """The i.i.d. outcome law for a game with d outcomes (2 or 3)."""
    return np.array(config.u_two if d == 2 else config.u_three, dtype=float)

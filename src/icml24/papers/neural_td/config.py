"""Config, presets and seeds of neural_td: importable without torch (icml24 show)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml24.core.config import knob
from icml24.core.errors import UserError


@dataclass(frozen=True)
class Config:
    """Projected neural TD on a random MDP: rate in T (theory vs earlier schedule, Markov vs i.i.d.) and floor vs m."""

    n_states: int = knob(5, "number of MDP states |S|", ge=1)
    n_actions: int = knob(2, "number of actions |A| (the chain runs over N = |S||A| state-action pairs)", ge=1)
    feature_dim: int = knob(16, "dimension d of the unit-norm features phi(s, a), the network input", ge=1)
    concentration: float = knob(5.0, "Dirichlet concentration of the transition and policy rows", gt=0)
    gamma: float = knob(0.5, "discount factor gamma", ge=0, lt=1)
    depth: int = knob(2, "number of trained layers L (W_1 is m x d, W_2..W_L are m x m)", ge=1)
    widths: tuple[int, int, int] = knob((16, 64, 256), "three widths m whose error floors are compared (C2)", ge=1)
    td_width: int = knob(64, "width m of the stochastic neural TD runs (C1, C1b, C3)", ge=1)
    omega: float = knob(0.35, "radius omega of the projection ball B(theta_0, omega)", gt=0)
    T: int = knob(10_000, "updates of the theory-schedule runs (largest T)", ge=1)
    t_first: int = knob(100, "first checkpoint T", ge=1)
    n_checkpoints: int = knob(12, "number of geometrically spaced checkpoints from t_first to T", ge=2)
    fit_from: int = knob(1000, "smallest T used in the log-log slope fits (start of the pre-floor range)", ge=1)
    n_chains: int = knob(4, "independent trajectories per seed and variant; errors are averaged over them", ge=1)
    beta_mult: float = knob(2.0, "theory schedule: beta = beta_mult / lambda, lambda = (1-gamma) lambda_min^+", gt=0)
    alpha_max_frac: float = knob(0.5, "first step alpha_max = alpha_max_frac / max_x K(x, x) (K: NTK Gram)", gt=0)
    earlier_alpha0: float = knob(1.0, "earlier analyses' constant step alpha = alpha0 / sqrt(T)", gt=0)
    earlier_horizons: tuple[int, ...] = knob((625, 1250, 2500, 5000, 10_000),
                                             "horizons T of the earlier-schedule runs (one run each)", ge=1, nonempty=True)
    floor_iters: int = knob(600, "iterations of the expected-update algorithm that gives the floor", ge=1)
    floor_inits: int = knob(3, "initialisations per width whose log10 floors are averaged (C2)", ge=1)
    floor_step: float = knob(0.5, "expected-update step, as a multiple of 1 / lambda_max(Sigma_pi)", gt=0)


SMOKE = Config(widths=(8, 16, 32), td_width=16, T=300, t_first=50, n_checkpoints=4, fit_from=50,
               n_chains=2, earlier_horizons=(100, 200, 300), floor_iters=60, floor_inits=2)
QUICK = Config()
FULL = Config(widths=(64, 256, 1024), td_width=256, T=200_000, t_first=200, n_checkpoints=16, fit_from=2000,
              n_chains=8, earlier_horizons=(3125, 6250, 12_500, 25_000, 50_000, 100_000, 200_000),
              floor_iters=5000)
# seeds 0-4 were used to pilot the QUICK config (width, omega, T); the published runs use fresh seeds
SEEDS = {"smoke": (0,), "quick": tuple(range(10, 30)), "full": tuple(range(100, 110))}


def validate(config: Config) -> None:
    """Reject a config that cannot run or fit its slopes, before any seed starts (called by the CLI)."""
    if config.n_states * config.n_actions < 2:
        raise UserError(f"n_states={config.n_states}, n_actions={config.n_actions}: need n_states * n_actions >= 2 "
                        "state-action pairs (with one, Markovian and i.i.d. sampling are the same trivial chain)")
    if list(config.widths) != sorted(set(config.widths)):
        raise UserError(f"widths={','.join(map(str, config.widths))}: must be increasing (C2 compares the floors "
                        "of the smallest, middle and largest width in that order)")
    if config.t_first > config.T:
        raise UserError(f"t_first={config.t_first}, T={config.T}: the first checkpoint must not be after T")
    if int((_checkpoints(config) >= config.fit_from).sum()) < 2:
        raise UserError(f"fit_from={config.fit_from}, t_first={config.t_first}, T={config.T}, "
                        f"n_checkpoints={config.n_checkpoints}: need at least two checkpoints >= fit_from "
                        "for the log-log slope")
    if sum(h >= config.fit_from for h in config.earlier_horizons) < 2:
        raise UserError(f"fit_from={config.fit_from}, earlier_horizons={','.join(map(str, config.earlier_horizons))}: "
                        "need at least two earlier_horizons >= fit_from for the log-log slope")


def _checkpoints(config: Config) -> np.ndarray:
    return np.unique(np.geomspace(config.t_first, config.T, config.n_checkpoints).astype(int))

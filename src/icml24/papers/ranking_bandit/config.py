"""Config, presets and seeds of ranking_bandit: importable without torch (icml24 show)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from icml24.core.config import knob, path_knob
from icml24.core.errors import UserError


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
    movielens_path: str = path_knob("auto", "MovieLens ratings (ratings.csv, u.data, .rds/.rda or a dslabs R data "
                                            "dir); 'auto': Debian's r-cran-dslabs copy where installed; '' skips C4")
    ml_items: int = knob(50, "N for MovieLens: the most-rated movies", ge=1)
    ml_positions: int = knob(5, "K for MovieLens", ge=1)
    ml_dim: int = knob(5, "rank d of the user/item factors fitted to the ratings", ge=1)
    ml_logit_scale: float = knob(1.5, "logit per rating star when turning predicted ratings into click odds", gt=0)


SMOKE = Config(n_items=6, n_positions=2, dim=3, horizon=300, first_checkpoint=20, n_checkpoints=5,
               grid_items=(4, 6, 8), grid_positions=(2, 2, 3), movielens_path="")
QUICK = Config()
FULL = Config(horizon=100_000, n_checkpoints=16, n_items=50, n_positions=5, refit_growth=0.02,
              grid_items=(10, 20, 50, 100, 200), grid_positions=(2, 3, 5, 5, 10))
SEEDS = {"smoke": (0,), "quick": tuple(range(40)), "full": tuple(range(40))}


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

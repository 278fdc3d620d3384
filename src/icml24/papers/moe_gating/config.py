"""Config, presets and seeds of moe_gating: importable without torch (icml24 show)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from icml24.core.config import knob
from icml24.core.errors import UserError

GATES: tuple[str, ...] = ("softmax", "temperature", "tanh", "sigmoid", "relu", "identity")


@dataclass(frozen=True)
class Config:
    """MLE of a 1-D, two-expert Gaussian MoE under several gates, over a range of sample sizes."""

    n_min: int = knob(1000, "smallest sample size n", ge=1)
    n_max: int = knob(30000, "largest sample size n", ge=1)
    n_points: int = knob(8, "number of log-spaced sample sizes between n_min and n_max", ge=2)
    reps: int = knob(5, "replications (independent data sets) per sample size and seed", ge=1)
    gates: tuple[str, ...] = knob(("temperature", "tanh", "sigmoid", "relu"),
                                  "gates to fit: softmax, temperature, tanh, sigmoid, relu, identity",
                                  choices=GATES, nonempty=True)
    k_fit: int = knob(2, "experts in the fitted model (2 = exact-specified, 3 = over-specified)", ge=2)
    init_scale: float = knob(0.25, "sd of the Gaussian perturbation of the truth (unconstrained coordinates) used as the start",
                             ge=0)
    beta1: float = knob(3.0, "true gate slope beta*_11 of expert 1 (expert 2 is the reference)")
    beta0: float = knob(0.0, "true gate bias beta*_01 of expert 1")
    tau: float = knob(0.5, "true temperature tau*", gt=0)
    a: tuple[float, float] = knob((-1.0, 1.5), "true expert slopes a*_1, a*_2")
    b: tuple[float, float] = knob((1.0, -1.0), "true expert intercepts b*_1, b*_2")
    nu: tuple[float, float] = knob((0.09, 0.16), "true expert variances nu*_1, nu*_2 (sd 0.3 and 0.4)", gt=0)
    max_iter: int = knob(100, "maximum Fisher-scoring iterations per fit", ge=1)
    x_grid: int = knob(64, "covariate grid points for the Hellinger integral over X ~ U[0,1]", ge=1)
    y_grid: int = knob(401, "response grid points for the Hellinger integral over y", ge=2)
    dtype: Literal["float64", "float32"] = knob("float64", "floating point type of data and fits",
                                                choices=("float64", "float32"))
    threads: int = knob(1, "torch CPU threads used inside the run", ge=0)


SMOKE = Config(n_min=200, n_max=800, n_points=3, reps=2, gates=("temperature", "tanh", "sigmoid", "relu"),
               max_iter=30, x_grid=16, y_grid=101)
QUICK = Config()
FULL = Config(n_min=1000, n_max=100000, n_points=20, reps=4,
              gates=("softmax", "temperature", "tanh", "sigmoid", "relu"), max_iter=300)
SEEDS = {"smoke": (0,), "quick": tuple(range(8)), "full": tuple(range(10))}


def validate(config: Config) -> None:
    """Reject a config that cannot run or measure a rate, before any seed starts (called by the CLI)."""
    if config.n_min >= config.n_max:
        raise UserError(f"n_min={config.n_min}, n_max={config.n_max}: n_min must be below n_max "
                        "(the rates are slopes over the sample sizes between them)")

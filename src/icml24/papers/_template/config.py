"""Config, presets and seeds of the template: importable without torch (icml24 show).

A paper whose configs can be invalid in ways a field's type cannot express (a data path that is
required by one preset only, say) adds ``validate(config)``, raising ``UserError``; the CLI calls it
before anything runs or is written.
"""

from __future__ import annotations

from dataclasses import dataclass

from icml24.core.config import knob
from icml24.core.errors import UserError


@dataclass(frozen=True)
class Config:
    """Monte Carlo study of the sample mean and median on N(mu, 1) data."""

    n_values: tuple[int, ...] = knob((16, 64, 256, 1024), "sample sizes n at which errors are measured",
                                     ge=1, nonempty=True)
    reps: int = knob(400, "independent replications per sample size", ge=1)
    mu: float = knob(1.0, "true mean of the Gaussian data")
    stream_length: int = knob(20_000, "length of the single stream whose running mean must converge", ge=10)
    coverage_n: int = knob(10, "sample size for the t-interval coverage check", ge=2)


SMOKE = Config(n_values=(8, 32, 128), reps=50, stream_length=1_000)
QUICK = Config()
FULL = Config(n_values=(16, 64, 256, 1024, 4096, 16384), reps=4000, stream_length=1_000_000)
SEEDS = {"smoke": (0,), "quick": tuple(range(8)), "full": tuple(range(20))}


def validate(config: Config) -> None:
    """Rules that span fields or elements, which a knob's bounds cannot say (called by the CLI after them)."""
    if len(config.n_values) < 2 or list(config.n_values) != sorted(set(config.n_values)):
        raise UserError(f"n_values={','.join(map(str, config.n_values))}: need at least two increasing sample sizes "
                        "(C1 is a slope over n; C2 and C3 read the largest n, the last one)")

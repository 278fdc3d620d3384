"""Experiment of the template: the presets and ``run(config, seed)``.

``run`` is pure: its randomness comes from ``seed`` alone, so the same config and seed give identical
metrics. It returns scalar ``metrics`` and 1-D ``curves``, every name a claim in claims.py reads.
A paper whose configs can be invalid in ways a field's type cannot express (a data path that is
required by one preset only, say) adds ``validate(config)``, raising ``UserError``; the CLI calls it
before anything runs or is written.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml24.core.config import knob
from icml24.core.context import RunContext
from icml24.core.errors import UserError
from icml24.core.plots import band
from icml24.core.results import RunResult, SeedResult
from icml24.papers._template.components import estimator_errors, running_mean, t_interval_coverage


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


def run(config: Config, seed: int, ctx: RunContext | None = None) -> SeedResult:
    """One seed: errors of mean and median per n, CI coverage, and a running-mean trace.

    ``ctx`` is the frame's :class:`~icml24.core.context.RunContext`. A heavy paper uses it for the torch
    thread scope (``with ctx.threads(config.threads):``), for checkpoints of long pieces of a seed
    (``ctx.stage("train_model", lambda: ..., rngs=(rng,))``: a killed seed resumes from the last finished
    stage) and for expensive deterministic artefacts shared by seeds (``ctx.artefact(name, inputs, build)``).
    This seed is cheap, so it only checkpoints its stream stage, as an example of the pattern.
    """
    ctx = ctx or RunContext.local()
    rng = np.random.default_rng(seed)
    mse_mean, mse_median = [], []
    for n in config.n_values:
        errs = estimator_errors(rng.normal(config.mu, 1.0, size=(config.reps, n)), config.mu)
        mse_mean.append(errs.mse_mean)
        mse_median.append(errs.mse_median)
    coverage = t_interval_coverage(rng.normal(config.mu, 1.0, size=(config.reps, config.coverage_n)), config.mu)
    checkpoints = np.unique(np.geomspace(10, config.stream_length, 20).astype(int))

    def stream_stage() -> tuple[float, np.ndarray]:
        stream = rng.normal(config.mu, 1.0, size=config.stream_length)
        return float(stream.mean()), running_mean(stream, checkpoints)

    estimate, trace = ctx.stage("stream", stream_stage, rngs=(rng,))
    return SeedResult(
        seed=seed,
        metrics={
            "mse_mean": mse_mean[-1],
            "mse_median": mse_median[-1],
            "efficiency_ratio": mse_median[-1] / mse_mean[-1],
            "t_coverage": coverage,
            "estimate": estimate,
            "truth": config.mu,
        },
        curves={
            "n": [float(n) for n in config.n_values],
            "rmse_mean": list(np.sqrt(mse_mean)),
            "rmse_median": list(np.sqrt(mse_median)),
            "checkpoint": [float(c) for c in checkpoints],
            "running_mean": list(trace),
        },
    )


def figures(result: RunResult) -> dict:
    """Log-log RMSE vs n for both estimators (mean over seeds, with min-max band)."""
    import matplotlib.pyplot as plt

    n = result.curve("n")[0]
    fig, ax = plt.subplots(figsize=(5, 3.6))
    for name in ("rmse_mean", "rmse_median"):
        band(ax, n, result.curve(name), label=name, marker="o")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.loglog(n, n ** -0.5, "k--", lw=1, label="n^-1/2")
    ax.set_xlabel("n")
    ax.set_ylabel("RMSE")
    ax.legend()
    return {"rmse_vs_n": fig}

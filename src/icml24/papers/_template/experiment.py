"""Experiment of the template: ``run(config, seed)`` and the figures.

The ``Config``, the presets, ``SEEDS`` and ``validate`` live in config.py, which imports no torch (so
``icml24 show`` stays fast); they are re-exported here. ``run`` is pure: its randomness comes from
``seed`` alone, through named streams (:mod:`icml24.core.streams`), so the same config and seed give
identical metrics. It returns scalar ``metrics`` and 1-D ``curves``, every name a claim in claims.py reads.
"""

from __future__ import annotations

import numpy as np

from icml24.core import streams
from icml24.core.context import RunContext
from icml24.core.plots import band
from icml24.core.results import RunResult, SeedResult
from icml24.papers._template.components import estimator_errors, running_mean, t_interval_coverage
from icml24.papers._template.config import FULL, QUICK, SEEDS, SMOKE, Config, validate

__all__ = ["Config", "SMOKE", "QUICK", "FULL", "SEEDS", "validate", "run", "figures"]


def run(config: Config, seed: int, ctx: RunContext | None = None) -> SeedResult:
    """One seed: errors of mean and median per n, CI coverage, and a running-mean trace.

    ``ctx`` is the frame's :class:`~icml24.core.context.RunContext`. A heavy paper uses it for the torch
    thread scope (``with ctx.threads(config.threads):``), for checkpoints of long pieces of a seed
    (``ctx.stage("train_model", lambda: ..., rngs=(rng,))``: a killed seed resumes from the last finished
    stage) and for expensive deterministic artefacts shared by seeds (``ctx.artefact(name, inputs, build)``).
    This seed is cheap, so it only checkpoints its stream stage, as an example of the pattern.
    """
    ctx = ctx or RunContext.local()
    mse_mean, mse_median = [], []
    for n in config.n_values:  # one named stream per purpose (core.streams): adding one never shifts another
        sample = streams.rng(seed, "errors", n).normal(config.mu, 1.0, size=(config.reps, n))
        errs = estimator_errors(sample, config.mu)
        mse_mean.append(errs.mse_mean)
        mse_median.append(errs.mse_median)
    coverage_sample = streams.rng(seed, "coverage").normal(config.mu, 1.0, size=(config.reps, config.coverage_n))
    coverage = t_interval_coverage(coverage_sample, config.mu)
    checkpoints = np.unique(np.geomspace(10, config.stream_length, 20).astype(int))
    rng = streams.rng(seed, "stream")

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

"""Experiment: Voronoi loss and Hellinger error of the MLE against n, per gate (the paper's simulation).

For each gate and each sample size n, ``reps`` data sets are drawn from the gate's true model
(:func:`true_params`), the MLE is fitted from a start near the truth (:func:`initial_params`), and the
Voronoi loss to the truth and the Hellinger distance of the fitted conditional density are recorded.
One seed = ``reps`` replications per n; the claims engine bootstraps over seeds. The ``Config``, the
presets, ``SEEDS`` and ``validate`` live in config.py (no torch, for ``icml24 show``) and are re-exported here.
"""

from __future__ import annotations

import numpy as np
import torch

from icml24.core import streams
from icml24.core.context import RunContext
from icml24.core.plots import band
from icml24.core.results import RunResult, SeedResult
from icml24.core.stats import loglog_slope
from icml24.papers.moe_gating.algorithm import fit_mle, hellinger, pack, rescale_to_truth, unpack, voronoi_loss
from icml24.papers.moe_gating.config import FULL, QUICK, SEEDS, SMOKE, Config, validate
from icml24.papers.moe_gating.model import MoEParams, independence_check, sample

__all__ = ["Config", "SMOKE", "QUICK", "FULL", "SEEDS", "validate", "INDEPENDENCE_ACTIVATIONS", "true_params",
           "initial_params", "run", "figures"]

INDEPENDENCE_ACTIVATIONS: tuple[str, ...] = ("tanh", "sigmoid", "relu", "identity")


def true_params(config: Config) -> MoEParams:
    """The true mixing measure G* (k* = 2, d = 1, expert 2 is the gate reference), R = 1."""
    dt = getattr(torch, config.dtype)
    return MoEParams(
        beta0=torch.tensor([[config.beta0, 0.0]], dtype=dt),
        beta1=torch.tensor([[[config.beta1], [0.0]]], dtype=dt),
        tau=torch.tensor([config.tau], dtype=dt),
        a=torch.tensor([[[config.a[0]], [config.a[1]]]], dtype=dt),
        b=torch.tensor([config.b], dtype=dt),
        nu=torch.tensor([config.nu], dtype=dt),
    )


def initial_params(truth: MoEParams, k_fit: int, reps: int, gate: str, scale: float,
                   generator: torch.Generator) -> MoEParams:
    """Starting points near the truth: truth + N(0, scale^2) in the unconstrained coordinates.

    Over-specified fits (k_fit > k*) first split true expert 1 into k_fit - k* + 1 copies with
    mass exp(beta*_01) shared equally (beta_0 - log m), then perturb.
    """
    extra = k_fit - truth.k
    if extra < 0:
        raise ValueError(f"k_fit={k_fit} is below the true number of experts {truth.k}")
    if extra:
        split = [0] * (extra + 1) + list(range(1, truth.k))  # fitted atom -> true atom
        idx = torch.tensor(split)
        shift = torch.zeros(k_fit, dtype=truth.beta0.dtype)
        shift[: extra + 1] = -np.log(extra + 1.0)
        truth = MoEParams(truth.beta0[:, idx] + shift, truth.beta1[:, idx], truth.tau, truth.a[:, idx],
                          truth.b[:, idx], truth.nu[:, idx])
    theta = pack(truth.expand(reps), gate)  # (R, p)
    noise = scale * torch.randn(theta.shape, generator=generator, dtype=theta.dtype)
    return unpack(theta + noise, k_fit, truth.d, gate)


def run(config: Config, seed: int, ctx: RunContext | None = None) -> SeedResult:
    """One seed: for every gate and n, fit ``reps`` data sets and record mean Voronoi loss and Hellinger error.

    ``loss_rescaled_<gate>`` moves each fit along the ray (beta_1, tau) -> c (beta_1, tau) to tau = tau*
    first; that move keeps the density only for the temperature gate and homogeneous activations (ReLU),
    so for tanh and sigmoid the curve is a comparison, not an equivalent fit.
    """
    ctx = ctx or RunContext.local()
    with ctx.threads(config.threads):
        return _run(config, seed)


def _run(config: Config, seed: int) -> SeedResult:
    dt = getattr(torch, config.dtype)
    truth = true_params(config)
    ns = np.unique(np.geomspace(config.n_min, config.n_max, config.n_points).round().astype(int))
    xs = ((torch.arange(config.x_grid, dtype=dt) + 0.5) / config.x_grid)[:, None]  # (m, 1) midpoints of U[0,1]
    lo = min(config.b[0] + min(0.0, config.a[0]), config.b[1] + min(0.0, config.a[1])) - 8 * max(config.nu) ** 0.5
    hi = max(config.b[0] + max(0.0, config.a[0]), config.b[1] + max(0.0, config.a[1])) + 8 * max(config.nu) ** 0.5
    ys = torch.linspace(lo, hi, config.y_grid, dtype=dt)

    metrics: dict[str, float] = {}
    curves: dict[str, list[float]] = {"n": [float(n) for n in ns]}
    for gate in config.gates:
        loss, loss_rescaled, hell, unconverged = [], [], [], 0
        for n in ns:
            # each (gate, n) has its own data and initialisation streams: adding a gate or an n shifts no other
            data = sample(truth, int(n), config.reps, gate, streams.torch_generator(seed, "data", gate, int(n)))
            init = initial_params(truth, config.k_fit, config.reps, gate, config.init_scale,
                                  streams.torch_generator(seed, "init", gate, int(n)))
            fit = fit_mle(data.x, data.y, init, gate, max_iter=config.max_iter)
            unconverged += int((~fit.converged).sum())
            loss.append(float(voronoi_loss(fit.params, truth, gate).total.mean()))
            if gate != "softmax":
                moved = rescale_to_truth(fit.params, truth)
                loss_rescaled.append(float(voronoi_loss(moved, truth, gate).total.mean()))
            hell.append(float(hellinger(fit.params, truth, gate, xs, ys).mean()))
        curves[f"loss_{gate}"] = loss
        curves[f"hellinger_{gate}"] = hell
        if loss_rescaled:
            curves[f"loss_rescaled_{gate}"] = loss_rescaled
        metrics[f"slope_{gate}"] = loglog_slope(ns, loss).slope
        metrics[f"hellinger_slope_{gate}"] = loglog_slope(ns, hell).slope
        metrics[f"unconverged_{gate}"] = float(unconverged)
    for act in INDEPENDENCE_ACTIVATIONS:
        metrics[f"independence_{act}"] = independence_check(act, (config.beta1,)).second_order
    return SeedResult(seed=seed, metrics=metrics, curves=curves)


def figures(result: RunResult) -> dict:
    """Log-log Voronoi loss vs n per gate (with fitted slopes), and Hellinger error vs n."""
    import matplotlib.pyplot as plt

    from icml24.core.stats import slope_over_seeds

    n = result.curve("n")[0]
    out = {}
    for prefix, title, fname in (("loss_", "Voronoi loss D(G_hat, G*)", "voronoi_loss_vs_n"),
                                 ("hellinger_", "Hellinger error E_X h(p_hat, p*)", "hellinger_vs_n")):
        fig, ax = plt.subplots(figsize=(5.6, 4.0))
        names = sorted(c for c in result.curve_names() if c.startswith(prefix) and "rescaled" not in c)
        for name in names:
            ys = result.curve(name)  # (S, P)
            est = slope_over_seeds(n, ys)
            band(ax, n, ys, label=f"{name[len(prefix):]}: slope {est.value:.2f} [{est.low:.2f}, {est.high:.2f}]",
                 center="geomean", alpha=0.12, marker="o", ms=3)
        ref = np.exp(np.log(result.curve(names[0])).mean(axis=0))[0] * (n / n[0]) ** -0.5 if names else n ** -0.5
        ax.loglog(n, ref, "k--", lw=1, label="n^-1/2")
        ax.set_xlabel("sample size n")
        ax.set_ylabel(title)
        ax.legend(fontsize=7)
        fig.tight_layout()
        out[fname] = fig
    if "loss_rescaled_temperature" in result.curve_names():
        fig, ax = plt.subplots(figsize=(5.6, 4.0))
        for name, label in (("loss_temperature", "temperature gate, fit as returned"),
                            ("loss_rescaled_temperature", "temperature gate, moved along (beta1, tau) ray to tau*")):
            ys = result.curve(name)
            est = slope_over_seeds(n, ys)
            ax.loglog(n, np.exp(np.log(ys).mean(axis=0)), marker="o", ms=3,
                      label=f"{label}: slope {est.value:.2f}")
        ax.set_xlabel("sample size n")
        ax.set_ylabel("Voronoi loss")
        ax.legend(fontsize=7)
        fig.tight_layout()
        out["temperature_scale_direction"] = fig
    return out

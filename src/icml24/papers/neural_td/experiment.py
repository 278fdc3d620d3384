"""Experiment: projected neural TD on a random finite MDP with exactly known references.

One seed draws an MDP + policy + features, and one network initialisation per width. For each width it
computes the NTK-linearised projected TD fixed point ``Q_ref`` exactly and the width-dependent floor
(the limit of the expected-update algorithm). At ``td_width`` it runs projected neural TD along
``n_chains`` independent trajectories with

* the theory schedule ``alpha_t = beta / (t + t_0)``, weighted averaging, Markovian sampling (C1);
* the same schedule with i.i.d. sampling (C3);
* the earlier analyses' ``alpha = alpha_0 / sqrt(T)`` with a uniform average, one run per horizon T (C1b);

and records ``E||Q(theta_bar_T) - Q_ref||_mu^2`` (mean over chains) against T. The ``Config``, the
presets, ``SEEDS`` and ``validate`` live in config.py (no torch, for ``icml24 show``) and are re-exported here.
"""

from __future__ import annotations

import numpy as np

from icml24.core import streams
from icml24.core.context import RunContext
from icml24.core.results import RunResult, SeedResult
from icml24.core.stats import loglog_slope
from icml24.papers.neural_td.algorithm import (
    earlier_schedule,
    expected_neural_td,
    iid_transitions,
    markov_transitions,
    neural_td,
    theory_schedule,
)
from icml24.papers.neural_td.components import (
    as_tensor,
    forward,
    init_network,
    linearized_fixed_point,
    mu_error,
    ntk_gram,
    random_pair_chain,
    sigma_spectrum,
)
from icml24.papers.neural_td.config import FULL, QUICK, SEEDS, SMOKE, Config, _checkpoints, validate

__all__ = ["Config", "SMOKE", "QUICK", "FULL", "SEEDS", "validate", "run", "figures"]


def run(config: Config, seed: int, ctx: RunContext | None = None) -> SeedResult:
    """One seed: exact references and floors per width, then the three stochastic variants at td_width
    (one torch thread: the networks are tiny)."""
    ctx = ctx or RunContext.local()
    with ctx.threads(1):
        return _run(config, seed)


def _run(config: Config, seed: int) -> SeedResult:
    chain = random_pair_chain(config.n_states, config.n_actions, config.feature_dim, config.gamma,
                              streams.rng(seed, "chain"), config.concentration)
    phi = as_tensor(chain.phi)
    metrics: dict[str, float] = {}
    curves: dict[str, list[float]] = {}

    def setup(m: int, init: int = 0):
        gen = streams.torch_generator(seed, "init", m, init)
        net = init_network(config.feature_dim, m, config.depth, gen)
        K = ntk_gram(net, phi).double().numpy()  # (N, N)
        q0 = forward(net, phi).q.double().numpy()  # (N,)
        return net, K, sigma_spectrum(K, chain.mu), linearized_fixed_point(chain, K, q0, config.omega)

    def floor(m: int, init: int) -> float:  # ||Q(theta_inf) - Q_ref||_mu^2 of the expected-update limit
        net, _, spec, ref = setup(m, init)
        lim = expected_neural_td(net, chain, config.omega, config.floor_step / spec.eigvals.max(), config.floor_iters)
        return float(mu_error(lim.q, ref.q, chain.mu))

    floors = np.array([[floor(m, j) for j in range(config.floor_inits)] for m in config.widths])  # (widths, inits)
    for i, row in enumerate(floors, start=1):
        metrics[f"log10_floor_w{i}"] = float(np.log10(row).mean())
    curves["width"] = [float(m) for m in config.widths]
    curves["floor"] = [float(10 ** np.log10(row).mean()) for row in floors]  # geometric mean over inits

    net, K, spec, ref = setup(config.td_width)
    lam = (1 - config.gamma) * spec.lambda_min_pos  # strong monotonicity on the range of Sigma_pi
    alpha_max = config.alpha_max_frac / K.diagonal().max()
    metrics.update(lambda_min_pos=spec.lambda_min_pos, kappa=float(K.diagonal().max() / lam),
                   ref_free_norm=ref.free_norm, ball_active=float(ref.nu > 0),
                   ref_dist_qpi=float(mu_error(ref.q, chain.q_pi, chain.mu)))

    # theory schedule, Markovian and i.i.d. sampling, one batched run of 2 * n_chains chains
    cks = _checkpoints(config)
    n = config.n_chains
    mk = markov_transitions(chain.P, chain.mu, config.T, n, streams.rng(seed, "markov"))
    iid = iid_transitions(chain.P, chain.mu, config.T, n, streams.rng(seed, "iid"))
    both = type(mk)(np.concatenate([mk.cur, iid.cur]), np.concatenate([mk.nxt, iid.nxt]))
    trace = neural_td(net, chain, both, theory_schedule(config.T, lam, alpha_max, config.beta_mult),
                      config.omega, cks, ref.q)
    err_mk, err_iid = trace.error[:n].mean(0), trace.error[n:].mean(0)  # (C,) E over chains
    fit = cks >= config.fit_from
    curves.update(T=[float(c) for c in cks], err_markov=list(err_mk), err_iid=list(err_iid),
                  err_markov_last=list(trace.last_error[:n].mean(0)),
                  T_fit=[float(c) for c in cks[fit]], err_markov_fit=list(err_mk[fit]), err_iid_fit=list(err_iid[fit]))
    metrics.update(slope_markov=loglog_slope(cks[fit], err_mk[fit]).slope,
                   slope_iid=loglog_slope(cks[fit], err_iid[fit]).slope,
                   err_markov_final=float(err_mk[-1]), err_iid_final=float(err_iid[-1]),
                   max_dev_over_omega=float(trace.dev_norm.max() / config.omega),
                   floor_td_width=float(floors[config.widths.index(config.td_width), 0])
                   if config.td_width in config.widths else floor(config.td_width, 0))

    # earlier analyses: constant alpha0 / sqrt(T), uniform average, a separate run per horizon
    err_old = []
    for horizon in config.earlier_horizons:
        tr = markov_transitions(chain.P, chain.mu, horizon, n, streams.rng(seed, "earlier", horizon))
        res = neural_td(net, chain, tr, earlier_schedule(horizon, config.earlier_alpha0), config.omega,
                        np.array([horizon]), ref.q)
        err_old.append(float(res.error[:, -1].mean()))
    horizons = np.asarray(config.earlier_horizons, dtype=float)
    curves.update(T_earlier=list(horizons), err_earlier=err_old)
    old_fit = horizons >= config.fit_from
    metrics.update(slope_earlier=loglog_slope(horizons[old_fit], np.asarray(err_old)[old_fit]).slope,
                   err_earlier_final=err_old[-1])
    return SeedResult(seed=seed, metrics=metrics, curves=curves)


def figures(result: RunResult) -> dict:
    """Error of the averaged iterate vs T (three variants, fitted slopes, floor) and floor vs width."""
    import matplotlib.pyplot as plt

    from icml24.core.stats import slope_over_seeds

    def gmean(name: str) -> np.ndarray:
        return np.exp(np.log(result.curve(name)).mean(axis=0))

    T = result.curve("T")[0]
    fig, ax = plt.subplots(figsize=(6, 4.2))
    for name, label, style in (("err_markov", "theory schedule, Markovian", "o-"),
                               ("err_iid", "theory schedule, i.i.d.", "s--"),
                               ("err_markov_last", "theory schedule, Markovian, last iterate", ":")):
        ax.loglog(T, gmean(name), style, label=label, ms=4)
    Te = result.curve("T_earlier")[0]
    ax.loglog(Te, gmean("err_earlier"), "^-", label="earlier schedule alpha0/sqrt(T), uniform avg", ms=5)
    for x, y, c in (("T_fit", "err_markov_fit", "C0"), ("T_earlier", "err_earlier", "C3")):
        xs = result.curve(x)[0]
        est = slope_over_seeds(xs, result.curve(y))
        yg = gmean(y)
        fit = np.exp(np.mean(np.log(yg)) + est.value * (np.log(xs) - np.mean(np.log(xs))))
        ax.loglog(xs, fit, color=c, lw=3, alpha=0.35,
                  label=f"fit slope {est.value:.2f} [{est.low:.2f}, {est.high:.2f}]")
    floor = np.exp(np.mean(np.log(result.metric("floor_td_width"))))
    ax.axhline(floor, color="k", lw=1, ls="--", label="width floor (expected-update limit)")
    ax.set_xlabel("T (updates)")
    ax.set_ylabel("E ||Q(theta_bar_T) - Q_ref||_mu^2  (geo. mean over seeds)")
    ax.legend(fontsize=7)
    ax.set_title(f"projected neural TD, m = {result.config.get('td_width')}, L = {result.config.get('depth')}")
    fig.tight_layout()

    fig2, ax2 = plt.subplots(figsize=(4.6, 3.6))
    widths, floors = result.curve("width")[0], result.curve("floor")
    for row in floors:
        ax2.loglog(widths, row, color="0.7", lw=1)
    ax2.loglog(widths, np.exp(np.log(floors).mean(axis=0)), "o-", color="C0", label="geo. mean over seeds")
    ax2.loglog(widths, np.exp(np.log(floors[:, 0]).mean()) * widths[0] / widths, "k--", lw=1, label="1/m")
    ax2.set_xticks(widths, [str(int(m)) for m in widths])
    ax2.minorticks_off()
    ax2.set_xlabel("width m")
    ax2.set_ylabel("floor ||Q(theta_inf) - Q_ref||_mu^2")
    ax2.legend(fontsize=8)
    fig2.tight_layout()
    return {"error_vs_T": fig, "floor_vs_width": fig2}

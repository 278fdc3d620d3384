"""FTRL with the hybrid or the negative-entropy regularizer, the adaptive learning rates, and the
ExO learner loop (the round structure of Tsuchiya, Ito & Honda 2024 and of Lattimore & Szepesvari 2020;
section and equation numbers of the paper could not be checked offline).

Each round t:

1. q_t = argmin_{q in simplex_k} <Y_{t-1}, q> + psi_t(q)                    (FTRL, Y = sum of estimates)
2. (p_t, G_t) = argmin_{p in R(q_t), G in H} Lambda_{q_t}(p, G)             (ExO, :mod:`exo`)
3. A_t ~ p_t, observe sigma_t = Phi[A_t, x_t], y_hat_t = G_t(A_t, sigma_t) / p_{t, A_t}
4. beta_{t+1} from the learning-rate rule.

Regularizers: ``hybrid``: psi_t(q) = beta_t sum_a (1 - q_a) log(1 - q_a) - gamma sum_a log q_a
(complement negative Shannon entropy plus log-barrier); ``negentropy``: psi_t(q) = beta_t sum_a q_a log q_a.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, cast

import numpy as np

from icml24.papers.partial_monitoring.components import Environment, Game
from icml24.papers.partial_monitoring.exo import ExpWeightsExOSolver, SaddleSolver

_FLOOR = 1e-9  # coordinates below this (q) or this times max(w) (w) no longer trigger ExO re-solves


class FTRLSolution(NamedTuple):
    """FTRL output q (k,) and the multiplier lam of sum q = 1 (for warm starts)."""

    q: np.ndarray
    lam: float


def hybrid_ftrl(Y, beta: float, gamma: float, q0=None, lam0: float | None = None,
                tol: float = 1e-12, max_iter: int = 200) -> FTRLSolution:
    """argmin_{q in simplex} <Y, q> + beta sum_a (1 - q_a) log(1 - q_a) - gamma sum_a log q_a.

    Damped Newton on the KKT system  Y_a - beta log(1 - q_a) - beta - gamma / q_a + lam = 0,
    sum_a q_a = 1 (the Hessian of psi is diagonal: h_a = beta / (1 - q_a) + gamma / q_a^2), warm-started
    from (q0, lam0).

    >>> hybrid_ftrl(np.zeros(3), beta=1.0, gamma=1.0).q.round(6)       # symmetric losses: uniform
    array([0.333333, 0.333333, 0.333333])
    >>> hybrid_ftrl(np.array([0.0, 10.0]), beta=1.0, gamma=1.0).q.round(4)   # the costlier action gets less
    array([0.8894, 0.1106])
    """
    q, lam = _hybrid_newton([float(v) for v in Y], beta, gamma, None if q0 is None else [float(v) for v in q0],
                            lam0, tol, max_iter)
    return FTRLSolution(np.array(q), lam)


def _hybrid_newton(Y: list, beta: float, gamma: float, q0: list | None, lam0: float | None,
                   tol: float = 1e-12, max_iter: int = 200) -> tuple[list, float]:
    """:func:`hybrid_ftrl` on Python floats (k is tiny and this runs once per round)."""
    k = len(Y)
    q = [1.0 / k] * k if q0 is None else [min(max(v, 1e-300), 1.0 - 1e-16) for v in q0]
    if lam0 is None:
        lam = -sum(Y[a] - beta * math.log1p(-q[a]) - beta - gamma / q[a] for a in range(k)) / k
    else:
        lam = lam0
    scale = tol * (1.0 + max(abs(v) for v in Y))
    log1p = math.log1p
    for _ in range(max_iter):
        r = [Y[a] - beta * log1p(-q[a]) - beta - gamma / q[a] + lam for a in range(k)]
        s = 1.0 - sum(q)
        if max(abs(v) for v in r) < scale and abs(s) < 1e-14:
            break
        h = [beta / (1.0 - q[a]) + gamma / (q[a] * q[a]) for a in range(k)]
        inv = [1.0 / v for v in h]
        dlam = (-sum(r[a] * inv[a] for a in range(k)) - s) / sum(inv)
        dq = [(-r[a] - dlam) * inv[a] for a in range(k)]
        alpha = 1.0
        for a in range(k):
            if dq[a] < 0:
                alpha = min(alpha, -0.9 * q[a] / dq[a])
            elif dq[a] > 0:
                alpha = min(alpha, 0.9 * (1.0 - q[a]) / dq[a])
        q = [q[a] + alpha * dq[a] for a in range(k)]
        lam += alpha * dlam
    tot = sum(q)
    return [v / tot for v in q], lam


def negentropy_ftrl(Y: np.ndarray, beta: float) -> np.ndarray:
    """argmin_{q in simplex} <Y, q> + beta sum_a q_a log q_a = softmax(-Y / beta).

    >>> negentropy_ftrl(np.array([0.0, np.log(3.0)]), 1.0).round(6)
    array([0.75, 0.25])
    """
    z = -(Y - Y.min()) / beta
    e = np.exp(z)
    return e / e.sum()


def complement_entropy(q: np.ndarray) -> float:
    """h(q) = -sum_a (1 - q_a) log(1 - q_a) >= 0, the penalty of the complement negentropy.

    >>> bool(np.isclose(complement_entropy(np.array([0.5, 0.5])), np.log(2)))
    True
    """
    c = 1.0 - q
    c = c[c > 0]
    return float(-(c * np.log(c)).sum())


@dataclass(frozen=True)
class LearnerSpec:
    """Which algorithm to run.

    Attributes:
        regularizer: ``hybrid`` (the paper) or ``negentropy`` (LS2020 baseline).
        schedule: ``adaptive`` (beta_{t+1} = beta_t + c / (1 + sum_{s<=t} h(q_s))^{1/r}, the paper's
            self-bounding rule) or ``fixed`` (beta_t = c t^{1/r}, the adversarial-only rate).
        rate_root: r = 2 for locally observable games (sqrt(T)-type), 3 for globally observable ones
            (T^{2/3}-type).
        c: learning-rate scale; gamma: log-barrier weight (hybrid only).
        resolve_tol: re-solve ExO only when log q or log w moved by more than this since the last
            solve (0 re-solves every round); coordinates below 1e-9 (q) or 1e-9 max(w) (w) are
            clamped there first, so vanishing probabilities do not force solves.
        stability: ``local`` (the quadratic local-norm stability term, :class:`.exo.SaddleSolver`) or
            ``exact`` (negentropy only: LS2020's exponential-weights stability function,
            :class:`.exo.ExpWeightsExOSolver`).
    """

    regularizer: Literal["hybrid", "negentropy"] = "hybrid"
    schedule: Literal["adaptive", "fixed"] = "adaptive"
    rate_root: int = 2
    c: float = 1.0
    gamma: float = 1.0
    resolve_tol: float = 0.1
    stability: Literal["local", "exact"] = "local"

    def __post_init__(self):
        if self.stability == "exact" and self.regularizer != "negentropy":
            raise ValueError("stability='exact' is LS2020's exponential-weights objective: negentropy only")


class RunTrace(NamedTuple):
    """What a learner run returns (arrays over the recorded checkpoints)."""

    t: np.ndarray          # (P,) checkpoint rounds (1-based)
    regret: np.ndarray     # (P,) pseudo-regret R_t
    beta: np.ndarray       # (P,) learning rate beta_t
    n_solves: int          # ExO solves performed
    p_final: np.ndarray    # (k,) last sampling law


class Rounds:
    """The pre-drawn randomness and expected losses of one run (shared by every learner loop).

    Attributes:
        T: horizon; exp_loss: (T, k) expected losses (L u_t)_a; cum_best: (T, k) their running sums;
        xs: (T,) outcome indices x_t ~ u_t; draws: (T,) uniforms for sampling A_t.
    """

    def __init__(self, game: Game, env: Environment, rng: np.random.Generator):
        d = game.d
        self.T = cast(int, env.dists.shape[0])
        self.exp_loss = env.dists @ game.L.T                      # (T, k)
        self.cum_best = np.cumsum(self.exp_loss, axis=0)           # (T, k)
        cdf = np.cumsum(env.dists, axis=1)                         # (T, d)
        draws_x = rng.random(self.T)
        self.draws = rng.random(self.T).tolist()
        self.xs = np.minimum((draws_x[:, None] > cdf).sum(axis=1), d - 1).tolist()

    def draw(self, p: list, t: int) -> int:
        """A_t ~ p by inversion of the pre-drawn uniform of round t (1-based).

        >>> r = Rounds.__new__(Rounds); r.draws = [0.5]
        >>> r.draw([0.25, 0.5, 0.25], 1)
        1
        """
        r, acc = self.draws[t - 1], 0.0
        for j, pj in enumerate(p):
            acc += pj
            if r < acc:
                return j
        return len(p) - 1


def play(game: Game, env: Environment, spec: LearnerSpec, rng: np.random.Generator,
         checkpoints: np.ndarray) -> RunTrace:
    """Run one learner on ``env`` for T = len(env.dists) rounds; record pseudo-regret at ``checkpoints``.

    Pseudo-regret R_t = sum_{s<=t} p_s^T L u_s - min_a sum_{s<=t} (L u_s)_a (expectation over A_s and x_s
    given the history, so no sampling noise of the loss itself enters).
    """
    k = game.k
    rounds = Rounds(game, env, rng)
    T, xs = rounds.T, rounds.xs
    idx = game.symbol_index()
    solver = ExpWeightsExOSolver(game) if spec.stability == "exact" else SaddleSolver(game)
    Y = [0.0] * k
    beta = spec.c
    H = 0.0                                           # running sum of h(q_s) (adaptive rule)
    q, lam = [1.0 / k] * k, None
    cache_lw: Any  # assigned together with cache_lq, so never None where it is read
    cache_lq = cache_lw = None
    p_cache = G_rows = None
    n_solves = 0
    learner = 0.0
    ck = set(int(c) for c in checkpoints)
    reg_out, beta_out = [], []
    gamma, tol, hybrid = spec.gamma, spec.resolve_tol, spec.regularizer == "hybrid"
    rows = idx.tolist()
    exp_rows = rounds.exp_loss.tolist()
    log = math.log
    for t in range(1, T + 1):
        if spec.schedule == "fixed":
            beta = spec.c * t ** (1.0 / spec.rate_root)
        if hybrid:
            q, lam = _hybrid_newton(Y, beta, gamma, q, lam)
            q = [max(v, 1e-300) for v in q]
            w = [1.0 / (beta / max(1.0 - v, 1e-300) + gamma / (v * v)) for v in q]   # inverse Hessian diag
        else:
            ymin = min(Y)
            e = [math.exp(-(v - ymin) / beta) for v in Y]
            z = sum(e)
            q = [max(v / z, 1e-300) for v in e]
            w = [v / beta for v in q]
        wfloor = _FLOOR * max(w)
        lq, lw = [log(max(v, _FLOOR)) for v in q], [log(max(v, wfloor)) for v in w]
        if (cache_lq is None or tol <= 0
                or max(abs(lq[a] - cache_lq[a]) for a in range(k)) > tol
                or max(abs(lw[a] - cache_lw[a]) for a in range(k)) > tol):
            ex = solver.solve(np.array(q), np.array(w))
            p_cache, G_rows, cache_lq, cache_lw = ex.p.tolist(), ex.G.tolist(), lq, lw
            n_solves += 1
        assert p_cache is not None and G_rows is not None  # the first round always solves
        p = [max(p_cache[a], 0.5 * q[a]) for a in range(k)]   # stay in R(q_t) between solves
        zp = sum(p)
        p = [v / zp for v in p]
        a = rounds.draw(p, t)
        g_row = G_rows[rows[a][xs[t - 1]]]
        inv_pa = 1.0 / p[a]
        Y = [Y[b] + g_row[b] * inv_pa for b in range(k)]      # y_hat_t = G(A_t, sigma_t) / p_{t, A_t}
        el = exp_rows[t - 1]
        learner += sum(p[b] * el[b] for b in range(k))
        if spec.schedule == "adaptive":
            if hybrid:
                h = -sum((1.0 - v) * log(1.0 - v) for v in q if v < 1.0)
            else:
                h = -sum(v * log(v) for v in q)
            H += h
            beta += spec.c / (1.0 + H) ** (1.0 / spec.rate_root)
        if t in ck:
            reg_out.append(learner - float(rounds.cum_best[t - 1].min()))
            beta_out.append(beta)
    return RunTrace(np.array(sorted(ck), dtype=float), np.array(reg_out), np.array(beta_out), n_solves, np.array(p))


def bound_scale(game: Game, u: np.ndarray, T: int) -> float:
    """The stochastic bound's shape sum_{a != a*} k^2 m^2 log T / Delta_a (Theorem, locally observable
    games), over actions with Delta_a > 0."""
    mean = game.L @ u
    gaps = mean - mean.min()
    pos = gaps[gaps > 1e-12]
    return float(np.sum(game.k ** 2 * game.m ** 2 * math.log(T) / pos))

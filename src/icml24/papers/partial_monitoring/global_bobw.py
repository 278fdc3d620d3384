"""The best-of-both-worlds algorithm for *globally* observable games, and its T^(2/3) baseline.

Locally observable games admit the per-round ExO of :mod:`.algorithm`; in a globally (not locally)
observable game such as label-efficient prediction the learner must pay for information with actions
that are never optimal, and the minimax rate is T^(2/3). The paper gives a separate algorithm for this
case with the first O(log T) stochastic bound. Its exact text could not be read offline; this module is
our reconstruction from the same authors' template for globally observable games (Tsuchiya, Ito & Honda
ALT 2023, Sec. 5: FTRL + explicit exploration + a fixed globally observable estimator + a self-bounding
learning rate) with the two ingredients this paper and its companion add:

* the hybrid regularizer of this paper, psi_t(q) = beta_t sum_a (1 - q_a) log(1 - q_a) - gamma_bar
  sum_a log q_a (the same FTRL as the locally observable learner, :func:`.algorithm.hybrid_ftrl`);
* the stability-penalty-bias matching learning rate of Tsuchiya & Ito (NeurIPS 2024), which sets the
  exploration rate to balance stability against bias and lets the penalty increment match both.

Each round t (our equation numbers, G1-G6):

    q_t = argmin_q <Y_{t-1}, q> + psi_t(q)                                              (G1)
    w~_t = beta_t (nabla^2 psi_t(q_t))^{-1} diagonal,  w~_b = 1 / (1 / (1 - q_b) + gamma_bar / (beta_t q_b^2))
    z_t = k/2 max_x sum_a Var_{w~}(G(a, Phi_ax))   (stability coefficient; Var_w(v) = sum_b w_b (v_b - vbar_w)^2)  (G2)
    gamma_t = min(1/2, sqrt(z_t / (beta_t u)))      (minimises z_t / (beta_t gamma) + u gamma)          (G3)
    p_t = (1 - gamma_t) q_t + gamma_t / k,   A_t ~ p_t                                     (G4)
    y_hat_t = G(A_t, sigma_t) / p_{t, A_t},  Y_t = Y_{t-1} + y_hat_t                       (G5)
    beta_{t+1} = beta_t + (z_t / (beta_t gamma_t) + u gamma_t) / max(h(q_t), h_min)       (G6)

with h(q) = -sum_a (1 - q_a) log(1 - q_a) the penalty of the complement entropy, u = 1 the bias
coefficient (one round of exploration costs at most max loss difference 1), and G the minimum-norm
estimator unbiased for loss differences (:func:`global_estimator`). The stability z_t / (beta_t gamma_t)
is the local-norm bound (1/2) E ||y_hat - c 1||^2_{(nabla^2 psi_t)^{-1}} with the best shift c per
(action, symbol) row, using p_a >= gamma_t / k. As q_t concentrates, w~ (hence z_t, hence gamma_t) shrinks,
which is what allows logarithmic stochastic regret; under an adversary z_t stays of order one and (G6)
gives beta_t ~ t^(2/3), gamma_t ~ t^(-1/3), the T^(2/3) rate.

The baseline (``schedule="fixed"``) is the classical adversarial algorithm for globally observable
games (Piccolboni & Schindelhauer 2001; Cesa-Bianchi, Lugosi & Stoltz 2006; Lattimore & Szepesvari 2020
book, Ch. 37): exponential weights (negative entropy) with beta_t = c t^(2/3) and uniform exploration
gamma_t = min(1/2, t^(-1/3)), the same estimator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from icml24.papers.partial_monitoring.algorithm import Rounds, RunTrace, _hybrid_newton
from icml24.papers.partial_monitoring.components import Environment, Game
from icml24.papers.partial_monitoring.exo import _constraint_system


def global_estimator(game: Game) -> np.ndarray:
    """The minimum-norm estimator table G (n_pairs, k) with sum_a G(a, Phi_ax) = L e_x - c_x 1 for all x.

    It exists iff every loss difference lies in the span of all signal matrices (global observability);
    otherwise this raises ``ValueError``.

    >>> from icml24.papers.partial_monitoring.components import label_efficient
    >>> G = global_estimator(label_efficient())
    >>> from icml24.papers.partial_monitoring.exo import unbiasedness_residual
    >>> unbiasedness_residual(label_efficient(), G) < 1e-12
    True
    """
    E, f = _constraint_system(game)
    z = np.linalg.pinv(E) @ f
    if np.abs(E @ z - f).max() > 1e-9:
        raise ValueError(f"game {game.name!r} is not globally observable: no unbiased estimator exists")
    return z[: game.n_pairs * game.k].reshape(game.n_pairs, game.k)


def stability_coefficient(G_rows: np.ndarray, wt: np.ndarray) -> float:
    """z = k/2 max_x sum_a Var_w(G(a, Phi_ax)) for the estimator rows ``G_rows`` (k, d, k) and weights (k,) (G2).

    >>> G_rows = np.zeros((2, 2, 2)); G_rows[1, 0] = [0.0, 1.0]          # one informative row
    >>> stability_coefficient(G_rows, np.array([1.0, 1.0]))   # k/2 * (0.5^2 + 0.5^2) = 1 * 0.5
    0.5
    """
    k = G_rows.shape[0]
    mean = (G_rows * wt).sum(-1, keepdims=True) / wt.sum()                 # (k, d, 1) best shift per row
    var = ((G_rows - mean) ** 2 * wt).sum(-1)                              # (k, d)
    return float(0.5 * k * var.sum(axis=0).max())


@dataclass(frozen=True)
class GlobalSpec:
    """The globally observable learner.

    Attributes:
        schedule: ``spb`` (the BOBW algorithm, (G1)-(G6)) or ``fixed`` (the T^(2/3) baseline: negative
            entropy, beta_t = c t^(2/3), gamma_t = min(1/2, t^(-1/3))).
        c: initial learning rate beta_1 (``spb``) or its scale (``fixed``).
        gamma_bar: log-barrier weight of the hybrid regularizer (``spb``).
        bias: u, the per-round cost bound of exploring (G3, G6).
        h_min: floor on the penalty h(q_t) in (G6), so a fully concentrated q cannot make beta jump.
    """

    schedule: Literal["spb", "fixed"] = "spb"
    c: float = 1.0
    gamma_bar: float = 1.0
    bias: float = 1.0
    h_min: float = 1e-6


def play_global(game: Game, env: Environment, spec: GlobalSpec, rng: np.random.Generator,
                checkpoints: np.ndarray) -> RunTrace:
    """Run the globally observable learner on ``env``; record pseudo-regret at ``checkpoints`` (as :func:`.play`)."""
    k = game.k
    rounds = Rounds(game, env, rng)
    G_rows = global_estimator(game)[game.symbol_index()]             # (k, d, k): G(a, Phi_ax)
    g_list = G_rows.tolist()
    Y = np.zeros(k)
    q, lam = [1.0 / k] * k, None
    beta = spec.c
    learner = 0.0
    ck = set(int(c) for c in checkpoints)
    reg_out, beta_out = [], []
    spb = spec.schedule == "spb"
    for t in range(1, rounds.T + 1):
        if spb:
            q, lam = _hybrid_newton(Y.tolist(), beta, spec.gamma_bar, q, lam)       # (G1)
            qa = np.maximum(np.array(q), 1e-300)
            wt = 1.0 / (1.0 / np.maximum(1.0 - qa, 1e-300) + spec.gamma_bar / (beta * qa * qa))
            z = stability_coefficient(G_rows, wt)                                   # (G2)
            gamma = min(0.5, math.sqrt(z / (beta * spec.bias)))                      # (G3)
        else:
            beta = spec.c * t ** (2.0 / 3.0)
            e = np.exp(-(Y - Y.min()) / beta)
            qa = e / e.sum()
            gamma = min(0.5, t ** (-1.0 / 3.0))
        p = (1.0 - gamma) * qa + gamma / k                                          # (G4)
        a = rounds.draw(p.tolist(), t)
        x = rounds.xs[t - 1]
        Y += np.array(g_list[a][x]) / p[a]                                          # (G5)
        learner += float(p @ rounds.exp_loss[t - 1])
        if spb:
            h = -sum((1.0 - v) * math.log(1.0 - v) for v in q if v < 1.0)
            beta += (z / (beta * gamma) + spec.bias * gamma) / max(h, spec.h_min)   # (G6)
        if t in ck:
            reg_out.append(learner - float(rounds.cum_best[t - 1].min()))
            beta_out.append(beta)
    return RunTrace(np.array(sorted(ck), dtype=float), np.array(reg_out), np.array(beta_out), 0, p)

"""The exploration-by-optimization (ExO) step: choose the sampling law p and the estimator G.

Given the FTRL output q (k,) and the stability weights w (k,) of the current regularizer (the
diagonal of the inverse Hessian of psi_t at q, see :func:`stability_weights`), ExO solves
(the ExO program of Lattimore & Szepesvari 2020, with the hybrid regularizer of Tsuchiya, Ito & Honda
2024 and the stability term in its second-order (local-norm) form; see the README for this choice)

    min_{p in R(q), G in H}  Lambda_q(p, G),
    Lambda_q(p, G) = max_{x in [d]} [ (p - q)^T L e_x  +  1/2 sum_a (1 / p_a) sum_b w_b G(a, Phi_ax)_b^2 ],

where H is the set of estimator tables G: (action, symbol) -> R^k that are unbiased for loss
differences,

    sum_a G(a, Phi_ax) = L e_x - c_x 1   for every outcome x and some scalar c_x,        (unbiasedness)

so that y_hat = G(A, sigma) / p_A satisfies E[y_hat] = l_x - c_x 1 (FTRL on the simplex ignores the
shift c_x), and R(q) = {p in simplex_k : p_a >= q_a / 2} is the k-independent feasible region.

The objective is jointly convex (each g^2 / p_a is a perspective), the constraints are linear, so a
general solver finds the optimum. Three solvers of the same program are provided:

* :class:`SaddleSolver` (the fast one, used in every run): the dual over outcome laws u with the
  estimator in closed form, a (k + d)-variable convex-concave saddle solved by log-barrier Newton;
* :func:`solve_exo_reference`: the full problem in (p, G, c, t) handed to scipy's ``trust-constr``;
* :class:`ExOSolver`: the unbiasedness constraints eliminated by a null-space basis, SLSQP with analytic
  Jacobians on the reduced epigraph problem (a second, independent check).
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
from scipy.linalg import null_space
from scipy.optimize import Bounds, LinearConstraint, NonlinearConstraint, minimize

from icml24.papers.partial_monitoring.components import Game


class ExOSolution(NamedTuple):
    """An ExO solution: sampling law p (k,), estimator table G (n_pairs, k), objective value."""

    p: np.ndarray
    G: np.ndarray
    value: float


def stability_weights(q: np.ndarray, beta: float, gamma: float, kind: str = "hybrid") -> np.ndarray:
    """Diagonal of the inverse Hessian of the regularizer at q, (k,).

    hybrid (the paper): psi(q) = beta sum_a (1 - q_a) log(1 - q_a) - gamma sum_a log q_a, so
        w_a = 1 / (beta / (1 - q_a) + gamma / q_a^2);
    negentropy (LS2020): psi(q) = beta sum_a q_a log q_a, so w_a = q_a / beta.

    >>> stability_weights(np.array([0.5, 0.5]), beta=2.0, gamma=1.0).round(4)
    array([0.125, 0.125])
    >>> stability_weights(np.array([0.5, 0.5]), beta=2.0, gamma=0.0, kind="negentropy")
    array([0.25, 0.25])
    """
    if kind == "negentropy":
        return q / beta
    return 1.0 / (beta / np.maximum(1.0 - q, 1e-300) + gamma / q ** 2)


def _terms(game: Game, idx: np.ndarray, q, w, p, G):
    """Per-outcome ExO terms F_x (d,) and Q[a, x] = sum_b w_b G(a, Phi_ax)_b^2, (k, d)."""
    Gsel = G[idx]                                   # (k, d, k): G(a, Phi_ax)_b
    Q = np.einsum("axb,b->ax", Gsel ** 2, w)        # (k, d)
    F = (p - q) @ game.L + 0.5 * (Q / p[:, None]).sum(axis=0)   # (d,)
    return F, Q


def exo_objective(game: Game, q: np.ndarray, w: np.ndarray, p: np.ndarray, G: np.ndarray) -> float:
    """Lambda_q(p, G) = max_x [(p - q)^T L e_x + 1/2 sum_a sum_b w_b G(a, Phi_ax)_b^2 / p_a].

    >>> from icml24.papers.partial_monitoring.components import apple_tasting
    >>> g = apple_tasting()
    >>> G = np.zeros((g.n_pairs, 2)); G[1] = [0, 1]; G[2] = [1, 0]   # accept reveals x, G = L e_x
    >>> exo_objective(g, np.array([.5, .5]), np.array([1., 1.]), np.array([.5, .5]), G)
    1.0
    """
    F, _ = _terms(game, game.symbol_index(), q, w, p, G)
    return float(F.max())


def unbiasedness_residual(game: Game, G: np.ndarray) -> float:
    """max_x || (sum_a G(a, Phi_ax) - L e_x) - mean(.) 1 ||_inf: 0 iff G is unbiased for loss differences."""
    idx = game.symbol_index()
    r = G[idx].sum(axis=0).T - game.L        # (k, d): column x is sum_a G(a, Phi_ax) - L e_x
    return float(np.abs(r - r.mean(axis=0, keepdims=True)).max())


def _constraint_system(game: Game) -> tuple[np.ndarray, np.ndarray]:
    """Linear system E z = f for z = (vec G (n_pairs * k, row-major), c (d)) encoding unbiasedness."""
    k, d, n = game.k, game.d, game.n_pairs
    idx = game.symbol_index()
    E = np.zeros((d * k, n * k + d))
    f = np.zeros(d * k)
    for x in range(d):
        for b in range(k):
            row = x * k + b
            for a in range(k):
                E[row, idx[a, x] * k + b] += 1.0
            E[row, n * k + x] = 1.0
            f[row] = game.L[b, x]
    return E, f


class ExOSolver:
    """ExO by null-space reduction + warm-started SLSQP (an independent check of :class:`SaddleSolver`).

    The unbiasedness constraints do not depend on q, so ``z = (vec G, c) = z0 + N y`` is computed
    once; each call then solves ``min t  s.t.  t >= F_x(p, G(y)) for all x, sum p = 1, p >= lb``
    in (p, y, t) with analytic Jacobians, starting from the previous solution.

    >>> from icml24.papers.partial_monitoring.components import bandit
    >>> s = ExOSolver(bandit(2))
    >>> sol = s.solve(np.array([.5, .5]), np.array([.1, .1]))
    >>> bool(unbiasedness_residual(bandit(2), sol.G) < 1e-8), bool(np.all(sol.p >= .25 - 1e-9))
    (True, True)
    """

    def __init__(self, game: Game, tol: float = 1e-12, maxiter: int = 200):
        self.game = game
        self.idx = game.symbol_index()                       # (k, d)
        E, f = _constraint_system(game)
        self.z0 = np.linalg.lstsq(E, f, rcond=None)[0]       # (n*k + d,)
        self.N = null_space(E)                               # (n*k + d, n_y)
        self.n_pairs = game.n_pairs
        self.nG = self.n_pairs * game.k
        self.NG = self.N[: self.nG]                          # (n*k, n_y): G part of the basis
        # one-hot (k, d, n_pairs): onehot[a, x, r] = 1[idx[a, x] = r]
        self.onehot = (self.idx[:, :, None] == np.arange(game.n_pairs)[None, None, :]).astype(float)
        self.tol, self.maxiter = tol, maxiter
        self._warm: np.ndarray | None = None
        self.converged = False                               # whether the last SLSQP run reported success

    def G_of(self, y: np.ndarray) -> np.ndarray:
        """Estimator table (n_pairs, k) for reduced coordinates y."""
        return (self.z0[: self.nG] + self.NG @ y).reshape(self.n_pairs, self.game.k)

    def solve(self, q: np.ndarray, w: np.ndarray, lb: np.ndarray | None = None,
              floor_beta: float | None = None) -> ExOSolution:
        """Minimise Lambda_q over p in {p >= lb, sum p = 1} (default lb = q / 2) and unbiased G.

        With ``floor_beta`` = beta, also require G(a, sigma)_b / (beta p_a) >= -1 for every row: the
        estimates stay where exponential weights' stability is within a constant of its quadratic model.
        """
        k, d = self.game.k, self.game.d
        lb = q / 2 if lb is None else lb
        n_y = self.N.shape[1]
        floor = []
        if floor_beta is not None:                           # G_of(y) + beta p_{a_r} >= 0, linear in (p, y)
            owner = np.repeat(np.arange(k), [len(self.game.symbols(a)) for a in range(k)])
            A = np.zeros((self.nG, k + n_y + 1))
            A[:, :k] = floor_beta * (np.repeat(owner, k)[:, None] == np.arange(k)[None, :])
            A[:, k:k + n_y] = self.NG
            z0G = self.z0[: self.nG]
            floor = [{"type": "ineq", "fun": lambda v: z0G + A @ v, "jac": lambda v: A}]

        def unpack(v):
            return v[:k], v[k:k + n_y], v[-1]

        def cons(v):
            p, y, t = unpack(v)
            return t - self.outcome_terms(q, w, p, self.G_of(y))[0]      # (d,) >= 0

        def cons_jac(v):
            p, y, t = unpack(v)
            _, Jp, JG = self.outcome_terms(q, w, p, self.G_of(y))
            return np.hstack([-Jp, -(JG @ self.NG), np.ones((d, 1))])

        if self._warm is not None and self._warm.size == k + n_y + 1:
            p0 = np.maximum(self._warm[:k], lb)
            y0 = self._warm[k:k + n_y]
        else:
            p0, y0 = np.maximum(q, lb), np.zeros(n_y)
        p0 = p0 / p0.sum()
        p0 = np.maximum(p0, lb)  # renormalisation can undercut lb by rounding only
        F0 = self.outcome_terms(q, w, p0, self.G_of(y0))[0]
        v0 = np.concatenate([p0, y0, [F0.max()]])
        # SLSQP may try points with p_a = lb_a ~ 1e-300 (q floored there): the non-finite values it then sees
        # make it report failure, which the callers handle; the warnings would only fill the log
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            res = minimize(lambda v: v[-1], v0, jac=lambda v: np.eye(1, v.size, v.size - 1)[0], method="SLSQP",
                           bounds=[(lb[a], 1.0) for a in range(k)] + [(None, None)] * (n_y + 1),
                           constraints=[{"type": "ineq", "fun": cons, "jac": cons_jac},
                                        {"type": "eq", "fun": lambda v: v[:k].sum() - 1.0,
                                         "jac": lambda v: np.concatenate([np.ones(k), np.zeros(n_y + 1)])}, *floor],
                           options={"ftol": self.tol, "maxiter": self.maxiter})
        self.converged = bool(res.success)
        p, y, _ = unpack(res.x)
        p = np.maximum(p, lb)
        p = p / p.sum()
        G = self.G_of(y)
        self._warm = np.concatenate([p, y, [0.0]])
        return ExOSolution(p, G, float(self.outcome_terms(q, w, p, G)[0].max()))

    def outcome_terms(self, q, w, p, G) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """F_x (d,) of the quadratic objective and its Jacobians dF/dp (d, k) and dF/dvec(G) (d, n*k)."""
        F, Q = _terms(self.game, self.idx, q, w, p, G)
        Jp = self.game.L.T - 0.5 * (Q / p[:, None] ** 2).T                                  # (d, k)
        JG = np.einsum("axr,rb,a->xrb", self.onehot, G * w, 1.0 / p).reshape(self.game.d, -1)  # (d, n*k)
        return F, Jp, JG


class ExpWeightsExOSolver(ExOSolver):
    """ExO of Lattimore & Szepesvari (2020) for exponential weights, with its *exact* stability function.

    With psi = beta sum_a q_a log q_a (learning rate eta = 1 / beta) the stability of one estimate is
    (LS2020, the ExO program for exponential weights)

        F_x(p, G) = (p - q)^T L e_x + beta sum_a p_a sum_b q_b xi(G(a, Phi_ax)_b / (beta p_a)),
        xi(z) = exp(-z) + z - 1,

    whose second-order expansion (xi(z) ~ z^2 / 2) is the quadratic objective of :class:`ExOSolver`
    with w = q / beta. Unlike the quadratic form, xi grows exponentially for large negative estimates
    and only linearly for large positive ones, which changes which estimators are cheap (at a
    concentrated q the optimum may carry the information in rare large positive estimates). ``w`` is
    passed as for the other solvers (w = q / beta); beta is recovered as q_b / w_b. Arguments of xi are
    clipped at -50 (exp(50) ~ 5e21 already dominates any objective; the Jacobian there is xi's at the clip).

    >>> from icml24.papers.partial_monitoring.components import apple_tasting
    >>> g = apple_tasting(); q = np.array([0.7, 0.3]); w = q / 1e4       # large beta: estimates z are small
    >>> exact = ExpWeightsExOSolver(g).solve(q, w); quad = ExOSolver(g).solve(q, w)
    >>> bool(abs(exact.value - quad.value) < 1e-3 * abs(quad.value))     # xi(z) = z^2 / 2 + O(z^3)
    True
    """

    def __init__(self, game: Game, tol: float = 1e-12, maxiter: int = 200):
        super().__init__(game, tol, maxiter)
        self.quadratic = SaddleSolver(game)
        self._exact = True
        self._beta: float | None = None                      # beta = median(q / w) while a solve runs

    def solve(self, q: np.ndarray, w: np.ndarray, lb: np.ndarray | None = None,
              floor_beta: float | None = None) -> ExOSolution:
        """SLSQP on the exact objective from the previous call's optimum (the learner's q moves little
        between re-solves, so that start is well scaled); on the first call, or where that run does not
        converge, three stages, each warm-starting the next: the quadratic optimum (:class:`SaddleSolver`);
        the quadratic program with the floor G / (beta p_a) >= -1 (a well-scaled point where the exact
        objective is within a constant of its model); SLSQP on the exact objective. The best of the
        last two under the exact objective is returned, so a failed SLSQP run (the exact objective spans
        many orders of magnitude near the simplex boundary) never makes things worse. ``floor_beta`` is
        accepted for the common signature and ignored: the floor stage uses beta itself."""
        beta = self._beta = float(np.median(q / w))
        try:
            if self._warm is not None:
                self._exact = True
                warm = super().solve(q, w, lb)
                if self.converged:
                    return warm
            start = self.quadratic.solve(q, w, lb)
            c = (self.game.L - start.G[self.idx].sum(axis=0).T).mean(axis=0)   # (d,) shifts c_x of the start
            self._warm = np.concatenate([start.p, self.N.T @ (np.concatenate([start.G.reshape(-1), c]) - self.z0),
                                         [0.0]])
            self._exact = False
            floored = super().solve(q, w, lb, floor_beta=beta)
            self._exact = True
            exact = super().solve(q, w, lb)
            floored = ExOSolution(floored.p, floored.G,
                                  float(self.outcome_terms(q, w, floored.p, floored.G)[0].max()))
        finally:
            self._beta = None
        return exact if exact.value <= floored.value else floored

    def outcome_terms(self, q, w, p, G) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if not self._exact:
            return super().outcome_terms(q, w, p, G)
        game, d = self.game, self.game.d
        beta = float(np.median(q / w)) if self._beta is None else self._beta
        z = np.maximum(G[self.idx] / (beta * p[:, None, None]), -50.0)   # (k, d, k): z_{a x b}
        e = np.exp(-z)
        xi, dxi = e + z - 1.0, 1.0 - e                                   # xi(z), xi'(z)
        F = (p - q) @ game.L + beta * np.einsum("a,axb,b->x", p, xi, q)
        Jp = game.L.T + beta * np.einsum("axb,b->xa", xi - z * dxi, q)   # d/dp_a of beta p_a xi(G / (beta p_a))
        JG = np.einsum("axr,axb,b->xrb", self.onehot, dxi, q).reshape(d, -1)
        return F, Jp, JG


def solve_exo_reference(game: Game, q: np.ndarray, w: np.ndarray, lb: np.ndarray | None = None,
                        tol: float = 1e-12) -> ExOSolution:
    """Reference: the full ExO program in (p, G, c, t) with explicit unbiasedness equalities, solved
    by scipy's general-purpose ``trust-constr`` from a cold start (slow; for tests and benchmarks)."""
    k, d, n = game.k, game.d, game.n_pairs
    lb = q / 2 if lb is None else lb
    idx = game.symbol_index()
    onehot = (idx[:, :, None] == np.arange(n)[None, None, :]).astype(float)
    E, f = _constraint_system(game)
    nz = n * k + d

    def split(v):
        return v[:k], v[k:k + n * k].reshape(n, k), v[-1]

    def cons(v):
        p, G, t = split(v)
        F, _ = _terms(game, idx, q, w, p, G)
        return t - F

    def cons_jac(v):
        p, G, t = split(v)
        F, Q = _terms(game, idx, q, w, p, G)
        Jp = game.L.T - 0.5 * (Q / p[:, None] ** 2).T
        JG = np.einsum("axr,rb,a->xrb", onehot, G * w, 1.0 / p).reshape(d, -1)
        return np.hstack([-Jp, -JG, np.zeros((d, d)), np.ones((d, 1))])

    A_eq = np.zeros((d * k + 1, k + nz + 1))
    A_eq[: d * k, k:k + nz] = E
    A_eq[-1, :k] = 1.0
    b_eq = np.concatenate([f, [1.0]])
    p0 = np.maximum(q, lb)
    p0 /= p0.sum()
    z0 = np.linalg.lstsq(E, f, rcond=None)[0]
    F0, _ = _terms(game, idx, q, w, p0, z0[: n * k].reshape(n, k))
    v0 = np.concatenate([p0, z0, [F0.max() + 1.0]])
    lo = np.concatenate([lb, np.full(nz + 1, -np.inf)])
    hi = np.concatenate([np.ones(k), np.full(nz + 1, np.inf)])
    with warnings.catch_warnings():  # trust-constr's quasi-Newton constraint Hessians warn on linear pieces
        warnings.simplefilter("ignore", UserWarning)
        res = minimize(lambda v: v[-1], v0, jac=lambda v: np.eye(1, v.size, v.size - 1)[0], method="trust-constr",
                       hess=lambda v: np.zeros((v.size, v.size)),
                       bounds=Bounds(lo, hi, keep_feasible=True),
                       constraints=[LinearConstraint(A_eq, b_eq, b_eq),
                                    NonlinearConstraint(cons, 0.0, np.inf, jac=cons_jac)],
                       options={"gtol": tol, "xtol": tol, "maxiter": 5000})
    p, G, _ = split(res.x)
    F, _ = _terms(game, idx, q, w, p, G)
    return ExOSolution(p, G, float(F.max()))


class SaddleSolver:
    """Fast exact ExO solver: the dual in (p, u) with G in closed form, by interior-point Newton.

    By Sion's minimax theorem the ExO value is ``max_{u in simplex_d} min_{p in R(q), G in H}
    sum_x u_x F_x(p, G)``. For fixed (p, u) the minimisation over G is a weighted least-squares
    problem per coordinate b with the closed form (derivation in the README)

        min_G = 1/2 tr(M(p, u)^{-1} C),   M(p, u) = sum_a p_a S_a^T diag(S_a u)^{-1} S_a   (d, d),
        C = sum_b w_b (l^b - lbar)(l^b - lbar)^T,   lbar = sum_b w_b l^b / sum_b w_b           (d, d),

    (l^b is row b of L), the optimal shift is c_x = lbar_x, and the optimal estimator is
    ``G(a, sigma)_b = p_a / (S_a u)_sigma * s_{a sigma}^T M^{-1} (l^b - lbar)``. What remains is the
    smooth convex-concave saddle problem

        min_{p in R(q)} max_{u in simplex_d}  f(p, u) = u^T L^T (p - q) + 1/2 tr(M(p, u)^{-1} C)

    in k + d variables, solved by a primal-dual log-barrier Newton method with analytic gradient and
    Hessian (the barrier weight mu goes from ``mu0`` to ``mu_min``; the duality gap is about
    (k + d) mu_min). The returned value is the *primal* objective Lambda_q(p, G) of the recovered pair.

    >>> from icml24.papers.partial_monitoring.components import apple_tasting
    >>> g = apple_tasting(); q = np.array([.7, .3]); w = stability_weights(q, 5.0, 1.0)
    >>> fast = SaddleSolver(g).solve(q, w); ref = solve_exo_reference(g, q, w)
    >>> bool(abs(fast.value - ref.value) < 1e-6)
    True
    """

    def __init__(self, game: Game, mu0: float = 1e-4, mu_min: float = 1e-10, max_newton: int = 200):
        self.game = game
        k = game.k
        S = [game.signal_matrix(a) for a in range(k)]
        self.S = np.vstack(S)                                    # (J, d): all signal rows s_j
        self.owner = np.concatenate([np.full(len(s), a) for a, s in enumerate(S)])  # (J,) a_j
        self.own = (self.owner[:, None] == np.arange(k)[None, :]).astype(float)      # (J, k)
        self.idx = game.symbol_index()
        self.mu0, self.mu_min, self.max_newton = mu0, mu_min, max_newton

    def _parts(self, p, u, C):
        S, own = self.S, self.own
        su = S @ u                                               # (J,)
        pj = own @ p                                             # (J,) p_{a_j}
        theta = pj / su                                          # (J,)
        M = (S.T * theta) @ S                                    # (d, d)
        X = np.linalg.inv(M)
        Y = X @ C @ X
        return su, pj, theta, X, Y

    def value_grad_hess(self, p, u, q, C):
        """f(p, u), its gradient (k + d,) and Hessian (k + d, k + d)."""
        L, S, own = self.game.L, self.S, self.own
        k = len(p)
        su, pj, theta, X, Y = self._parts(p, u, C)
        f = u @ (L.T @ (p - q)) + 0.5 * np.trace(X @ C)
        SX, SY = S @ X, S @ Y
        g_theta = -0.5 * np.einsum("jd,jd->j", SY, S)            # (J,) df/dtheta_j
        dtheta_dp = own / su[:, None]                            # (J, k)
        dtheta_du = -(pj / su ** 2)[:, None] * S                 # (J, d)
        grad_p = L @ u + dtheta_dp.T @ g_theta
        grad_u = L.T @ (p - q) + dtheta_du.T @ g_theta
        H_theta = (SX @ S.T) * (SY @ S.T)                        # (J, J): 1/2 * 2 (S X S^T) o (S Y S^T)
        J = np.hstack([dtheta_dp, dtheta_du])                    # (J, k + d)
        H = J.T @ H_theta @ J
        H[:k, k:] += L - (own * (g_theta / su ** 2)[:, None]).T @ S      # d2 theta / dp du terms
        H[k:, :k] = H[:k, k:].T
        H[k:, k:] += (S.T * (2.0 * g_theta * pj / su ** 3)) @ S
        return f, np.concatenate([grad_p, grad_u]), H

    def recover(self, p, u, w, C) -> np.ndarray:
        """The optimal estimator table G (n_pairs, k) at (p, u) (closed form above)."""
        L = self.game.L
        lbar = w @ L / w.sum()                                   # (d,)
        su, pj, theta, X, Y = self._parts(p, u, C)
        lam = X @ (L - lbar).T                                   # (d, k): M^{-1} (l^b - lbar)
        return (theta[:, None] * (self.S @ lam))                 # (J, k); rows ordered as symbol_index

    def solve(self, q: np.ndarray, w: np.ndarray, lb: np.ndarray | None = None) -> ExOSolution:
        """Minimise Lambda_q over p >= lb (default q / 2), sum p = 1, and unbiased G."""
        game, k, d = self.game, self.game.k, self.game.d
        lb = q / 2 if lb is None else lb
        L = game.L
        lbar = w @ L / w.sum()
        D = L - lbar                                             # (k, d) rows l^b - lbar
        C = (D.T * w) @ D                                        # (d, d)
        slack = 1.0 - lb.sum()
        p = lb + slack / k                                       # interior start
        u = np.full(d, 1.0 / d)
        mu = self.mu0
        K = np.zeros((k + d + 2, k + d + 2))
        K[:k, k + d] = K[k + d, :k] = 1.0
        K[k:k + d, k + d + 1] = K[k + d + 1, k:k + d] = 1.0
        for _ in range(self.max_newton):
            f, g, H = self.value_grad_hess(p, u, q, C)
            g[:k] -= mu / (p - lb)
            g[k:] += mu / u
            H[np.arange(k), np.arange(k)] += mu / (p - lb) ** 2
            H[np.arange(k, k + d), np.arange(k, k + d)] -= mu / u ** 2
            K[:k + d, :k + d] = H
            rhs = np.concatenate([-g, [0.0, 0.0]])
            step = np.linalg.solve(K, rhs)
            dp, du = step[:k], step[k:k + d]
            # fraction to the boundary: keep p > lb and u > 0
            alpha = 1.0
            for v, dv, lo in ((p, dp, lb), (u, du, 0.0)):
                neg = dv < 0
                if np.any(neg):
                    alpha = min(alpha, 0.95 * float(np.min((v - lo)[neg] / -dv[neg])))
            p, u = p + alpha * dp, u + alpha * du
            if alpha == 1.0:
                if mu <= self.mu_min and np.abs(step[:k + d]).max() < 1e-9:
                    break
                mu = max(mu * 0.1, self.mu_min)
        G = self.recover(p, u, w, C)
        F, _ = _terms(game, self.idx, q, w, p, G)
        return ExOSolution(p, G, float(F.max()))

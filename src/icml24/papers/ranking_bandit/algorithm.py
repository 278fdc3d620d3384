"""UCR (Upper Confidence Ranking, Wang et al. ICML 2024, Algorithm 1) and its baselines.

Per item j the learner keeps an online GLM fit over that item's own observations (semi-bandit
feedback: every displayed item's response is seen):

* Gram matrix V_j = lam I + sum z z^T over the item's design vectors z_k(x) = (e_k, x); its inverse
  is kept up to date with the Sherman-Morrison identity, O((K+d)^2) per observation, never re-inverted.
* the ridge-regularised MLE theta_j = argmin sum_i [A(theta^T z_i) - y_i theta^T z_i] + lam/2 |theta|^2.
  Linear link: exact, theta_j = V_j^{-1} b_j with b_j = sum y z (incremental). Logistic link: one
  Newton step per new observation, warm-started at the previous estimate (no refit from scratch).

Each round UCR scores every (item, position) pair with the upper confidence bound

    U[j, k] = A'( theta_j^T z_k(x) + rho_j ||z_k(x)||_{V_j^{-1}} )                     (Alg. 1, UCB step)

and shows the list solving the maximum-weight imperfect matching of items to positions under U
(Alg. 1, ranking step). G-MLE is the same with rho = 0. The confidence radius rho is the
self-normalised bound of Abbasi-Yadkori et al. (2011, Thm. 2) with a union bound over the N items,
times a scale (the paper's exact constants were not retrievable; see the README's deviations).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from icml24.papers.ranking_bandit.components import Link, best_list, design_vectors, linear_predictor, mean_function


def confidence_radius(n_obs: np.ndarray, dim: int, lam: float, delta: float, n_items: int) -> np.ndarray:
    """rho(n) = sqrt(p log(1 + n / (lam p)) + 2 log(N / delta)), p = K + d.

    The self-normalised radius of Abbasi-Yadkori et al. (2011) for a unit sub-Gaussian response after
    n observations, union-bounded over N items so it holds for all items, positions and contexts
    at once. Vectorised over ``n_obs`` (N,).

    >>> float(confidence_radius(np.array([0]), dim=4, lam=1.0, delta=0.5, n_items=1)[0]) ** 2
    1.3862943611198906
    """
    n = np.asarray(n_obs, dtype=np.float64)
    return np.sqrt(dim * np.log1p(n / (lam * dim)) + 2.0 * np.log(n_items / delta))


def sherman_morrison(v_inv: np.ndarray, z: np.ndarray) -> np.ndarray:
    """(V + z z^T)^{-1} from V^{-1}, batched: v_inv (..., p, p), z (..., p) -> (..., p, p).

    (V + z z^T)^{-1} = V^{-1} - V^{-1} z z^T V^{-1} / (1 + z^T V^{-1} z).

    >>> sherman_morrison(np.eye(2), np.array([1.0, 0.0]))
    array([[0.5, 0. ],
           [0. , 1. ]])
    """
    u = np.einsum("...pq,...q->...p", v_inv, z)  # (..., p) = V^{-1} z (V^{-1} symmetric)
    denom = 1.0 + np.einsum("...p,...p->...", z, u)  # (...,)
    return v_inv - u[..., :, None] * u[..., None, :] / denom[..., None, None]


class ItemGLMs:
    """Online per-item GLM estimates theta_j, inverse Gram matrices V_j^{-1} and observation counts.

    Args:
        n_items: N.  n_positions: K.  dim: d (context dimension).  link: response family.
        lam: ridge / prior precision lambda (V_j starts at lam I; makes the MLE defined before the
            item is ever shown, the pitfall of an unobserved item).
        refit_growth: logistic link only. theta_j gets a warm-started Newton step on all of item j's
            data whenever its count has grown by this fraction since the last step (0: after every
            observation). One step costs O(n_j), so stepping after every observation makes a run
            O(T^2); a geometric schedule makes it O(T / refit_growth) while theta_j lags the MLE by
            at most that fraction of the item's data. The Gram inverse is updated every observation.

    Attributes:
        theta: (N, K + d) current estimates.  v_inv: (N, p, p).  counts: (N,) observations per item.
    """

    def __init__(self, n_items: int, n_positions: int, dim: int, link: Link, lam: float = 1.0,
                 refit_growth: float = 0.05):
        self.k, self.link, self.lam, self.refit_growth = n_positions, link, lam, refit_growth
        self.p = n_positions + dim
        self.theta = np.zeros((n_items, self.p))
        self.v_inv = np.broadcast_to(np.eye(self.p) / lam, (n_items, self.p, self.p)).copy()
        self.counts = np.zeros(n_items, dtype=np.int64)
        self._b = np.zeros((n_items, self.p))  # sum y z (linear link)
        self._z = [np.empty((16, self.p)) for _ in range(n_items)]  # per-item designs (logistic), grown x2
        self._y = [np.empty(16) for _ in range(n_items)]  # per-item responses; first counts[j] rows used
        self._next_refit = np.ones(n_items, dtype=np.int64)  # count at which theta_j is next refreshed

    def means(self, x: np.ndarray) -> np.ndarray:
        """(N, K) estimated means A'(theta_j^T z_k(x))."""
        return mean_function(linear_predictor(self.theta, x), self.link)

    def widths(self, x: np.ndarray) -> np.ndarray:
        """(N, K) confidence widths ||z_k(x)||_{V_j^{-1}}, all items and positions in one pass.

        With z_k = (e_k, x): z^T V^{-1} z = V^{-1}[k, k] + 2 (V^{-1}[k, K:] x) + x^T V^{-1}[K:, K:] x.
        """
        k = self.k
        diag = np.diagonal(self.v_inv[:, :k, :k], axis1=1, axis2=2)  # (N, K)
        u = self.v_inv[:, :, k:] @ x  # (N, p): rows :K are V^{-1}[k, K:] x, rows K: are V^{-1}[K:, K:] x
        quad = u[:, k:] @ x  # (N,)
        return np.sqrt(np.maximum(diag + 2.0 * u[:, :k] + quad[:, None], 0.0))

    def update(self, x: np.ndarray, items: np.ndarray, y: np.ndarray) -> None:
        """Add the responses ``y`` (K,) of the list ``items`` (K,) shown to context ``x``."""
        z = design_vectors(x, self.k)  # (K, p): row k is the design of the item at position k
        self.v_inv[items] = sherman_morrison(self.v_inv[items], z)
        if self.link == "linear":
            self.counts[items] += 1
            self._b[items] += y[:, None] * z
            self.theta[items] = np.einsum("npq,nq->np", self.v_inv[items], self._b[items])
            return
        for pos, j in enumerate(items):
            n = self.counts[j]
            if n == self._y[j].size:  # grow the buffers geometrically: amortised O(1) appends
                self._z[j] = np.concatenate([self._z[j], np.empty_like(self._z[j])])
                self._y[j] = np.concatenate([self._y[j], np.empty_like(self._y[j])])
            self._z[j][n], self._y[j][n] = z[pos], y[pos]
        self.counts[items] += 1
        for j in items[self.counts[items] >= self._next_refit[items]]:  # warm-started Newton step
            n = self.counts[j]
            self.theta[j] = logistic_newton_step(self.theta[j], self._z[j][:n], self._y[j][:n], self.lam)
            self._next_refit[j] = max(n + 1, int(np.ceil(n * (1.0 + self.refit_growth))))


def logistic_newton_step(theta: np.ndarray, z: np.ndarray, y: np.ndarray, lam: float,
                         mask: np.ndarray | None = None) -> np.ndarray:
    """One Newton step on the ridge-penalised logistic log-likelihood, from ``theta``; batched.

    Minimises L(theta) = sum_i [log(1 + e^{theta^T z_i}) - y_i theta^T z_i] + lam/2 |theta|^2:
    theta <- theta - H^{-1} g, g = Z^T (sigmoid(Z theta) - y) + lam theta,
    H = Z^T diag(s (1 - s)) Z + lam I.

    Args:
        theta: (..., p) current estimates.  z: (..., n, p) designs.  y: (..., n) binary responses.
        mask: optional (..., n) booleans; False rows are padding and are ignored.

    >>> logistic_newton_step(np.zeros(1), np.ones((4, 1)), np.array([1.0, 1.0, 1.0, 0.0]), 1.0)
    array([0.5])
    """
    s = mean_function(np.einsum("...np,...p->...n", z, theta), "logistic")  # (..., n)
    resid, w = s - y, s * (1.0 - s)
    if mask is not None:
        resid, w = resid * mask, w * mask
    g = np.einsum("...np,...n->...p", z, resid) + lam * theta  # (..., p)
    h = np.swapaxes(z * w[..., None], -1, -2) @ z + lam * np.eye(theta.shape[-1])  # (..., p, p)
    return theta - np.linalg.solve(h, g[..., None])[..., 0]


class Policy(Protocol):
    """A ranking policy: ``select`` a list (K,) for a context, then ``update`` with its responses."""

    def select(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray: ...

    def update(self, x: np.ndarray, items: np.ndarray, y: np.ndarray) -> None: ...


class UCR:
    """Upper Confidence Ranking (Algorithm 1): matching on per-(item, position) UCBs.

    ``ucb_scale = 0`` gives the greedy G-MLE baseline (the paper's comparison method).

    >>> pol = UCR(n_items=3, n_positions=2, dim=1, link="logistic")
    >>> pol.select(np.array([0.3]), np.random.default_rng(0)).shape
    (2,)
    """

    def __init__(self, n_items: int, n_positions: int, dim: int, link: Link, lam: float = 1.0,
                 ucb_scale: float = 1.0, delta: float = 0.05, refit_growth: float = 0.05):
        self.glm = ItemGLMs(n_items, n_positions, dim, link, lam, refit_growth)
        self.ucb_scale, self.delta, self.n_items = ucb_scale, delta, n_items

    def scores(self, x: np.ndarray) -> np.ndarray:
        """(N, K) UCBs U[j, k] = A'(theta_j^T z_k + rho_j ||z_k||_{V_j^{-1}}) (means when scale is 0)."""
        eta = linear_predictor(self.glm.theta, x)  # (N, K)
        if self.ucb_scale > 0:
            rho = self.ucb_scale * confidence_radius(self.glm.counts, self.glm.p, self.glm.lam, self.delta,
                                                     self.n_items)  # (N,)
            eta = eta + rho[:, None] * self.glm.widths(x)
        return mean_function(eta, self.glm.link)

    def select(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return best_list(self.scores(x)).items

    def update(self, x: np.ndarray, items: np.ndarray, y: np.ndarray) -> None:
        self.glm.update(x, items, y)


class EpsilonGreedy:
    """G-MLE that shows a uniformly random list with probability ``epsilon`` each round."""

    def __init__(self, n_items: int, n_positions: int, dim: int, link: Link, lam: float = 1.0,
                 epsilon: float = 0.05, refit_growth: float = 0.05):
        self.greedy = UCR(n_items, n_positions, dim, link, lam, ucb_scale=0.0, refit_growth=refit_growth)
        self.epsilon, self.n_items, self.k = epsilon, n_items, n_positions

    def select(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if rng.random() < self.epsilon:
            return rng.choice(self.n_items, size=self.k, replace=False)
        return self.greedy.select(x, rng)

    def update(self, x: np.ndarray, items: np.ndarray, y: np.ndarray) -> None:
        self.greedy.update(x, items, y)


class RandomRanker:
    """Shows K distinct items in uniformly random order (no learning)."""

    def __init__(self, n_items: int, n_positions: int):
        self.n_items, self.k = n_items, n_positions

    def select(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return rng.choice(self.n_items, size=self.k, replace=False)

    def update(self, x: np.ndarray, items: np.ndarray, y: np.ndarray) -> None:
        pass


class Oracle:
    """Knows the true theta: shows the best list for every context (zero regret by definition)."""

    def __init__(self, theta: np.ndarray, link: Link):
        self.theta, self.link = theta, link

    def select(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return best_list(mean_function(linear_predictor(self.theta, x), self.link)).items

    def update(self, x: np.ndarray, items: np.ndarray, y: np.ndarray) -> None:
        pass

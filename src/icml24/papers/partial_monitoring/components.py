"""Finite partial-monitoring games, their observability, and outcome environments.

A game is a loss matrix ``L`` (k actions x d outcomes, entries in [0, 1]) and a feedback matrix
``Phi`` (k x d, integer symbols). Playing action ``a`` against outcome ``x`` costs ``L[a, x]`` and
reveals only the symbol ``Phi[a, x]`` (Bartok et al. 2014; Lattimore & Szepesvari 2020, Sec. 2;
Tsuchiya, Ito & Honda 2024). The signal matrix of action ``a`` is
``S_a[s, x] = 1[Phi[a, x] = sigma_s]`` over the m_a distinct symbols of row ``a``; ``m = max_a m_a``.

Observability (Bartok et al. 2014; Lattimore & Szepesvari 2020):

* the cell of action a is ``C_a = {u in simplex_d : l_a^T u <= l_b^T u for all b}``; a is
  *Pareto optimal* when C_a has dimension d - 1;
* Pareto-optimal a, b are *neighbours* when ``C_a cap C_b`` has dimension d - 2; their neighbourhood
  N_ab is the set of actions whose cell contains that face;
* the game is *locally observable* when for every neighbouring pair ``l_a - l_b`` lies in the row
  span of the stacked ``S_c`` for c in N_ab, and *globally observable* when it lies in the span of
  all actions' signal matrices (for every pair of Pareto-optimal actions).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from itertools import combinations
from typing import NamedTuple, cast

import numpy as np
from scipy.optimize import linprog

_TOL = 1e-9


@dataclass(frozen=True)
class Game:
    """A finite partial-monitoring game.

    Attributes:
        name: short label.
        L: (k, d) loss matrix, entries in [0, 1].
        Phi: (k, d) integer feedback symbols; only equality between symbols in one row matters.

    >>> g = apple_tasting()
    >>> g.k, g.d, g.m
    (2, 2, 2)
    >>> g.signal_matrix(1)          # accepting reveals the outcome
    array([[1., 0.],
           [0., 1.]])
    """

    name: str
    L: np.ndarray
    Phi: np.ndarray

    @property
    def k(self) -> int:
        return int(self.L.shape[0])

    @property
    def d(self) -> int:
        return int(self.L.shape[1])

    @cached_property
    def _symbol_table(self) -> tuple[np.ndarray, ...]:
        """Per action, its distinct symbols in first-appearance order; computed once per game (a game is
        not changed after it is built: the solvers ask for these about 10^5 times per seed)."""
        table = []
        for a in range(self.k):
            _, first = np.unique(self.Phi[a], return_index=True)
            table.append(self.Phi[a][np.sort(first)])
        return tuple(table)

    def symbols(self, a: int) -> np.ndarray:
        """The distinct symbols of action ``a`` in first-appearance order, (m_a,)."""
        return self._symbol_table[a]

    def signal_matrix(self, a: int) -> np.ndarray:
        """S_a, (m_a, d): ``S_a[s, x] = 1[Phi[a, x] = s-th symbol of a]``."""
        return (self.symbols(a)[:, None] == self.Phi[a][None, :]).astype(float)

    @property
    def m(self) -> int:
        """Largest number of distinct symbols of one action (the paper's m)."""
        return max(len(self.symbols(a)) for a in range(self.k))

    def symbol_index(self) -> np.ndarray:
        """(k, d) integer: the index, within the flat list of (action, symbol) pairs, of ``(a, Phi[a, x])``.

        The flat list orders pairs by action, then by the symbol order of :meth:`symbols`; it indexes
        the rows of an estimator table ``G`` (n_pairs, k).
        """
        idx = np.zeros((self.k, self.d), dtype=np.int64)
        offset = 0
        for a in range(self.k):
            syms = self.symbols(a)
            idx[a] = offset + np.argmax(self.Phi[a][:, None] == syms[None, :], axis=1)
            offset += len(syms)
        return idx

    @cached_property
    def n_pairs(self) -> int:
        """Number of (action, symbol) pairs, sum_a m_a."""
        return sum(len(self.symbols(a)) for a in range(self.k))


class Observability(NamedTuple):
    """Classification of a game (Bartok et al. 2014)."""

    pareto: tuple[int, ...]                 # Pareto-optimal actions
    neighbours: tuple[tuple[int, int], ...]  # neighbouring pairs (a < b)
    locally_observable: bool
    globally_observable: bool


def _interior_point(A_ub, b_ub, A_eq, b_eq, d: int) -> float:
    """max eps s.t. A_ub u + eps <= b_ub, A_eq u = b_eq, u >= eps, sum u = 1 (LP); returns eps*."""
    n_ub = 0 if A_ub is None else len(A_ub)
    c = np.zeros(d + 1)
    c[-1] = -1.0  # maximise eps
    rows, rhs = [], []
    if n_ub:
        rows.append(np.hstack([A_ub, np.ones((n_ub, 1))]))
        rhs.append(b_ub)
    rows.append(np.hstack([-np.eye(d), np.ones((d, 1))]))  # eps - u_x <= 0
    rhs.append(np.zeros(d))
    eq_rows = [np.hstack([np.ones((1, d)), np.zeros((1, 1))])]
    eq_rhs = [np.ones(1)]
    if A_eq is not None and len(A_eq):
        eq_rows.append(np.hstack([A_eq, np.zeros((len(A_eq), 1))]))
        eq_rhs.append(b_eq)
    res = linprog(c, A_ub=np.vstack(rows), b_ub=np.concatenate(rhs), A_eq=np.vstack(eq_rows),
                  b_eq=np.concatenate(eq_rhs), bounds=[(None, None)] * d + [(None, 1.0)], method="highs")
    return float(-res.fun) if res.status == 0 else -np.inf


def _in_row_span(vec: np.ndarray, rows: np.ndarray) -> bool:
    coef, *_ = np.linalg.lstsq(rows.T, vec, rcond=None)
    return bool(np.linalg.norm(rows.T @ coef - vec) <= 1e-8 * max(1.0, cast(float, np.linalg.norm(vec))))


def neighbourhood(L: np.ndarray, a: int, b: int) -> list[int]:
    """N_ab = {c : C_a \u2229 C_b \u2286 C_c}: the actions whose cell contains the face of neighbours a, b
    (Bartok et al. 2014, Def. 2; Lattimore & Szepesvari 2020, Sec. 37.2), degenerate actions included.

    On the face F = {u in simplex : l_a u = l_b u <= l_e u for all e}, l_a u is the smallest loss, so
    c's cell contains F iff max_{u in F} (l_c - l_a)^T u <= 0: one LP per action.

    >>> L = np.array([[0.0, 1.0], [1.0, 0.0], [0.5, 0.5]])  # action 2 is optimal only at u = (1/2, 1/2)
    >>> neighbourhood(L, 0, 1)
    [0, 1, 2]
    """
    k, d = L.shape
    A_ub = L[a][None, :] - L  # (k, d): l_a u <= l_e u for every e
    A_eq = np.vstack([np.ones((1, d)), (L[a] - L[b])[None, :]])  # sum u = 1, l_a u = l_b u
    out = []
    for c in range(k):
        res = linprog(-(L[c] - L[a]), A_ub=A_ub, b_ub=np.zeros(k), A_eq=A_eq, b_eq=np.array([1.0, 0.0]),
                      bounds=[(0.0, None)] * d, method="highs")
        if res.status == 0 and -res.fun <= _TOL:
            out.append(c)
    return out


def observability(game: Game) -> Observability:
    """Pareto-optimal actions, neighbours and local/global observability, by linear programming.

    Cells are tested for full dimension by an interior-point LP (a strictly positive slack ``eps``
    in every inequality that separates distinct loss rows); actions with identical loss rows share
    a cell. Faces are tested the same way on the hyperplane ``(l_a - l_b)^T u = 0``.

    >>> observability(apple_tasting()).locally_observable
    True
    >>> o = observability(label_efficient())
    >>> o.pareto, o.locally_observable, o.globally_observable
    ((0, 1), False, True)
    """
    L = game.L
    k, d = L.shape

    def distinct(a: int, b: int) -> bool:
        return bool(np.abs(L[a] - L[b]).max() > _TOL)

    pareto = []
    for a in range(k):
        others = [b for b in range(k) if distinct(a, b)]
        A = np.array([L[a] - L[b] for b in others]) if others else None
        if _interior_point(A, np.zeros(len(others)), None, None, d) > _TOL:
            pareto.append(a)
    neighbours, neigh_sets = [], []
    for a, b in combinations(pareto, 2):
        if not distinct(a, b):
            continue
        others = [c for c in pareto if distinct(a, c) and distinct(b, c)]
        A = np.array([L[a] - L[c] for c in others]) if others else None
        eps = _interior_point(A, np.zeros(len(others)), (L[a] - L[b])[None], np.zeros(1), d)
        if eps > _TOL:
            neighbours.append((a, b))
            neigh_sets.append(neighbourhood(L, a, b))
    S = [game.signal_matrix(a) for a in range(k)]
    local = all(_in_row_span(L[a] - L[b], np.vstack([S[c] for c in nab]))
                for (a, b), nab in zip(neighbours, neigh_sets))
    S_all = np.vstack(S)
    glob = all(_in_row_span(L[a] - L[b], S_all) for a, b in combinations(pareto, 2))
    return Observability(tuple(pareto), tuple(neighbours), bool(local and glob), bool(glob))


# --------------------------------------------------------------------------------- game library
def bandit(k: int = 3) -> Game:
    """k-armed bandit with one-hot outcomes: outcome x means arm x is the good arm (loss 0), every
    other arm has loss 1; each arm observes its own loss (m = 2). Mean loss of arm a is 1 - u_a."""
    L = 1.0 - np.eye(k)
    return Game(f"bandit{k}", L, L.astype(np.int64))


def full_information(k: int = 3) -> Game:
    """The bandit's losses, but every action reveals the outcome (m = d = k)."""
    L = 1.0 - np.eye(k)
    return Game(f"fullinfo{k}", L, np.tile(np.arange(k), (k, 1)))


def apple_tasting() -> Game:
    """Apple tasting (Helmbold et al. 2000): actions (reject, accept), outcomes (rotten, good).

    Rejecting a good apple or accepting a rotten one costs 1; only accepting reveals the outcome.
    """
    L = np.array([[0.0, 1.0], [1.0, 0.0]])
    Phi = np.array([[0, 0], [1, 2]])
    return Game("apple_tasting", L, Phi)


def label_efficient() -> Game:
    """Label-efficient prediction (Cesa-Bianchi et al. 2005): predict 0, predict 1, or query.

    Predictions cost 1 when wrong and reveal nothing; querying costs 1 and reveals the label.
    Globally but not locally observable.
    """
    L = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    Phi = np.array([[0, 0], [0, 0], [1, 2]])
    return Game("label_efficient", L, Phi)


def dynamic_pricing(k: int = 3, no_sale_cost: float = 0.75) -> Game:
    """Discretised dynamic pricing (Bartok et al. 2014): the seller posts price a in {1..k}, the
    buyer's valuation is x in {1..k}; a sale (a <= x) loses the unclaimed surplus (x - a) / k, no sale
    costs ``no_sale_cost``; the seller only sees whether the item sold (m = 2)."""
    a = np.arange(1, k + 1)[:, None]
    x = np.arange(1, k + 1)[None, :]
    L = np.where(a <= x, (x - a) / k, no_sale_cost).astype(float)
    Phi = (a <= x).astype(np.int64)
    return Game(f"pricing{k}", L, Phi)


GAMES = {"bandit2": lambda: bandit(2), "bandit3": lambda: bandit(3), "fullinfo3": lambda: full_information(3),
         "apple_tasting": apple_tasting, "label_efficient": label_efficient, "pricing3": lambda: dynamic_pricing(3)}


def make_game(name: str) -> Game:
    """A library game by name (one of :data:`GAMES`)."""
    return GAMES[name]()


# --------------------------------------------------------------------------------- environments
class Environment(NamedTuple):
    """Per-round outcome distributions u_t (T, d); outcomes are drawn x_t ~ u_t independently.

    ``corrupted`` marks rounds whose distribution was changed by an adversary (for the corrupted
    stochastic regime). Regret is measured against these expected losses L u_t (pseudo-regret).
    """

    dists: np.ndarray      # (T, d)
    corrupted: np.ndarray  # (T,) bool


def stochastic_env(u: np.ndarray, T: int) -> Environment:
    """i.i.d. outcomes x_t ~ u for every round."""
    u = np.asarray(u, dtype=float)
    return Environment(np.tile(u, (T, 1)), np.zeros(T, dtype=bool))


def switching_env(u_a: np.ndarray, u_b: np.ndarray, T: int, first_phase: int = 50, growth: float = 1.6) -> Environment:
    """Adversarial staircase: the outcome law alternates between ``u_a`` and ``u_b`` in phases whose
    lengths grow geometrically (``first_phase * growth^j``), so the leader keeps changing.

    >>> env = switching_env(np.array([1.0, 0.0]), np.array([0.0, 1.0]), 10, first_phase=2, growth=1.0)
    >>> env.dists[:, 0].tolist()
    [1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0]
    """
    dists = np.empty((T, len(u_a)))
    t, j, length = 0, 0, float(first_phase)
    while t < T:
        n = max(1, int(round(length)))
        dists[t:t + n] = u_a if j % 2 == 0 else u_b
        t += n
        j += 1
        length *= growth
    return Environment(dists, np.zeros(T, dtype=bool))


def corrupted_env(u: np.ndarray, u_corrupt: np.ndarray, T: int, budget: int) -> Environment:
    """Stochastic with adversarial corruption: the first ``budget`` rounds use ``u_corrupt`` (chosen
    to make a suboptimal action look best), the rest are i.i.d. from ``u`` (corruption level C ~ budget)."""
    env = stochastic_env(u, T)
    env.dists[:budget] = u_corrupt
    env.corrupted[:budget] = True
    return env


def gaps(game: Game, u: np.ndarray) -> np.ndarray:
    """Suboptimality gaps Delta_a = (l_a - l_{a*})^T u, (k,)."""
    mean = game.L @ u
    return mean - mean.min()

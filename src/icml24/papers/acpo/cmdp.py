"""Tabular average-reward constrained MDPs (ACMDPs): exact evaluation, the exact optimum, instances.

An ACMDP is (P, r, c, l): transitions P (S, A, S), reward r (S, A), one constraint cost c (S, A) and
its limit l. For a stationary policy pi (S, A) with an ergodic chain P_pi (S, S), P_pi[s, s'] =
sum_a pi(a|s) P(s'|s, a):

* the stationary distribution d_pi solves d_pi^T P_pi = d_pi^T, sum d_pi = 1;
* the average reward J(pi) = sum_s d_pi(s) r_pi(s), r_pi(s) = sum_a pi(a|s) r(s, a) (ACPO Sec. 2);
* the bias (differential value) Vbar solves the Poisson equation Vbar = r_pi - J + P_pi Vbar with the
  normalisation d_pi^T Vbar = 0 (ACPO Sec. 2, "bias function"); Qbar(s, a) = r(s, a) - J +
  sum_s' P(s'|s, a) Vbar(s'); Abar = Qbar - Vbar;
* the same three with c in place of r give J_C, Vbar_C, Abar_C.

The performance-difference identity J(pi') - J(pi) = E_{s ~ d_pi', a ~ pi'}[Abar^pi(s, a)] (ACPO Lemma
3.1, from ATRPO) holds exactly here and is tested.

The exact constrained optimum is the occupancy-measure linear program (Altman 1999, Ch. 4): over
x(s, a) >= 0 with sum x = 1 and flow balance sum_a x(s', a) = sum_{s, a} x(s, a) P(s'|s, a),
maximise sum x r subject to sum x c <= l; pi*(a|s) = x(s, a) / sum_a x(s, a).
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np
from scipy.optimize import linprog

from icml24.common.rl import Rollout


class CMDP(NamedTuple):
    """A tabular ACMDP with one constraint."""

    P: np.ndarray        # (S, A, S) transition probabilities
    r: np.ndarray        # (S, A) reward
    c: np.ndarray        # (S, A) constraint cost
    limit: float         # l: the constraint is J_C(pi) <= l
    name: str = "cmdp"

    @property
    def n_states(self) -> int:
        return self.P.shape[0]

    @property
    def n_actions(self) -> int:
        return self.P.shape[1]


class Evaluation(NamedTuple):
    """Exact average-criterion quantities of one policy."""

    d: np.ndarray        # (S,) stationary distribution d_pi
    J: float             # average reward
    J_C: float           # average cost
    V: np.ndarray        # (S,) bias Vbar (d^T V = 0)
    A: np.ndarray        # (S, A) advantage Abar
    V_C: np.ndarray      # (S,) cost bias
    A_C: np.ndarray      # (S, A) cost advantage


class Averages(NamedTuple):
    """The long-run averages of one policy (no bias functions)."""

    d: np.ndarray        # (S,) stationary distribution d_pi
    J: float             # average reward
    J_C: float           # average cost


class Optimum(NamedTuple):
    """The exact optimum of the occupancy-measure LP."""

    J: float             # optimal average reward (J* if constrained)
    J_C: float           # its average cost
    policy: np.ndarray   # (S, A)


def stationary(P_pi: np.ndarray) -> np.ndarray:
    """Stationary distribution (S,) of an ergodic chain P_pi (S, S): solve [P_pi^T - I; 1^T] d = [0; 1].

    >>> stationary(np.array([[0.9, 0.1], [0.3, 0.7]])).round(4).tolist()      # (3/4, 1/4)
    [0.75, 0.25]
    """
    S = len(P_pi)
    M = np.vstack([P_pi.T - np.eye(S), np.ones((1, S))])
    rhs = np.zeros(S + 1)
    rhs[-1] = 1.0
    return np.linalg.lstsq(M, rhs, rcond=None)[0]


def _bias(P_pi: np.ndarray, d: np.ndarray, f_pi: np.ndarray) -> tuple[float, np.ndarray]:
    """Average J = d^T f_pi and bias V solving (I - P_pi + 1 d^T) V = f_pi - J (so d^T V = 0)."""
    S = len(P_pi)
    J = float(d @ f_pi)
    V = np.linalg.solve(np.eye(S) - P_pi + np.outer(np.ones(S), d), f_pi - J)
    return J, V


def averages(m: CMDP, pi: np.ndarray) -> Averages:
    """d_pi, J = d_pi^T r_pi and J_C = d_pi^T c_pi of policy ``pi`` (S, A): what :func:`evaluate` returns for
    them (the same operations), without the two Poisson solves."""
    P_pi = np.einsum("sa,sat->st", pi, m.P)                    # (S, S)
    d = stationary(P_pi)
    return Averages(d, float(d @ (pi * m.r).sum(1)), float(d @ (pi * m.c).sum(1)))


def evaluate(m: CMDP, pi: np.ndarray) -> Evaluation:
    """Exact d_pi, J, J_C, bias and advantage functions of policy ``pi`` (S, A).

    A two-state chain by hand: from either state, action 0 stays, action 1 switches; reward 1 in state
    0, cost 1 in state 1. The policy that switches with probability 1/2 everywhere has d = (1/2, 1/2),
    J = J_C = 1/2, and bias V = (1/2, -1/2) (V(0) - V(1) = 1 / (p + q) = 1 for switching probabilities
    p = q = 1/2, and d^T V = 0):

    >>> P = np.zeros((2, 2, 2)); P[0, 0, 0] = P[1, 0, 1] = P[0, 1, 1] = P[1, 1, 0] = 1
    >>> r = np.array([[1., 1.], [0., 0.]]); c = 1 - r
    >>> ev = evaluate(CMDP(P, r, c, 0.5), np.full((2, 2), 0.5))
    >>> ev.d.round(12).tolist(), round(ev.J, 12), round(ev.J_C, 12), ev.V.round(12).tolist()
    ([0.5, 0.5], 0.5, 0.5, [0.5, -0.5])
    """
    P_pi = np.einsum("sa,sat->st", pi, m.P)                    # (S, S)
    d = stationary(P_pi)
    out = []
    for f in (m.r, m.c):
        J, V = _bias(P_pi, d, (pi * f).sum(1))
        Q = f - J + m.P @ V                                    # (S, A): Qbar = f - J + E[V(s')]
        out.append((J, V, Q - V[:, None]))
    (J, V, A), (J_C, V_C, A_C) = out
    return Evaluation(d, J, J_C, V, A, V_C, A_C)


def optimum(m: CMDP, constrained: bool = True, sense: str = "max") -> Optimum:
    """The occupancy-measure LP (module docstring): the best (``sense="max"``) or worst average reward
    over stationary policies, with or without the cost constraint.

    >>> P = np.zeros((2, 2, 2)); P[0, 0, 0] = P[1, 0, 1] = P[0, 1, 1] = P[1, 1, 0] = 1
    >>> r = np.array([[0., 0.], [1., 1.]]); m = CMDP(P, r, r, 0.25)     # reward = cost = time in state 1
    >>> round(optimum(m).J, 6), round(optimum(m, constrained=False).J, 6)
    (0.25, 1.0)
    """
    S, A = m.n_states, m.n_actions
    flow = np.zeros((S, S * A))                                # flow balance, one row per s'
    for s in range(S):
        for a in range(A):
            flow[:, s * A + a] -= m.P[s, a]
            flow[s, s * A + a] += 1.0
    A_eq = np.vstack([flow, np.ones((1, S * A))])
    b_eq = np.concatenate([np.zeros(S), [1.0]])
    sign = -1.0 if sense == "max" else 1.0
    kw = dict(A_ub=m.c.reshape(1, -1), b_ub=[m.limit]) if constrained else {}
    res = linprog(sign * m.r.reshape(-1), A_eq=A_eq, b_eq=b_eq, bounds=(0, None), method="highs", **kw)
    if res.status != 0:
        raise ValueError(f"occupancy LP of {m.name} failed: {res.message}")
    x = res.x.reshape(S, A)
    occ = x.sum(1, keepdims=True)
    policy = np.where(occ > 1e-12, x / np.maximum(occ, 1e-300), 1.0 / A)
    return Optimum(float((x * m.r).sum()), float((x * m.c).sum()), policy)


def _mix(P_struct: np.ndarray, eps: float) -> np.ndarray:
    """(1 - eps) P_struct + eps / S: every policy's chain becomes irreducible and aperiodic (ergodic)."""
    return (1.0 - eps) * P_struct + eps / P_struct.shape[-1]


def random_cmdp(rng: np.random.Generator, n_states: int, n_actions: int, limit_frac: float,
                eps: float = 0.05) -> CMDP:
    """A random ergodic ACMDP: Dirichlet(1) transitions mixed with eps uniform teleport, rewards and
    costs U(0, 1), and the limit ``l = Jc_lo + limit_frac (Jc_hi - Jc_lo)`` between the smallest
    achievable average cost and the cost of the unconstrained reward maximiser (so the constraint binds)."""
    P = _mix(rng.dirichlet(np.ones(n_states), size=(n_states, n_actions)), eps)
    r = rng.uniform(size=(n_states, n_actions))
    c = rng.uniform(size=(n_states, n_actions))
    return _with_binding_limit(CMDP(P, r, c, 0.0, "random"), limit_frac)


# The two instances where discounting misleads share one layout: in every state the agent may play
# "safe" (reward 0, cost 0) or "spend" (reward 0.6, cost 1 at once: 0.6 reward per unit of cost); in the
# *ready* state it may also "borrow": reward BORROW_GAIN * C at once for a cost C that arrives later (0.45
# reward per unit of cost, worse than spending). The cost arrives after ``delay`` steps (delayed) or
# as a debt of 1 per step that ends with probability ``switch`` per step (slow); during that time the
# agent cannot borrow again but may still spend. Under the average criterion borrowing is the worse way to
# use the cost budget: the constrained optimum spends only. A discounted learner sees the borrowed cost
# shrunk, by gamma^delay (0.22 at gamma 0.99 and delay 150, so borrowing looks 2.0 reward per unit of cost)
# or by gamma / (1 - gamma (1 - switch)) against 1 / switch (0.33 at gamma 0.99 and switch 0.005: 1.4 per
# unit), and moves the budget from spending to borrowing. At gamma 0.999 both shrinkages are mild
# (0.86, 0.83: 0.52 and 0.54 per unit, below 0.6) and the discounted ranking is the right one.
SPEND_GAIN = 0.6       # reward per unit of cost of "spend"
BORROW_GAIN = 0.45     # reward per unit of cost of "borrow" (below SPEND_GAIN: the worse use of the budget)


def _timer_cmdp(P_timer: np.ndarray, cost_timer: np.ndarray, total: float, limit_frac: float, eps: float,
                name: str) -> CMDP:
    """The shared layout (comment above): ``P_timer`` (S, S) moves the timer when nothing is borrowed (state
    0 = ready, borrowing moves 0 -> 1), ``cost_timer`` (S,) the per-step cost of the timer's states, ``total``
    the expected total cost of one borrowing."""
    S, A = len(P_timer), 3                                     # actions: 0 safe, 1 spend, 2 borrow
    P = np.repeat(P_timer[:, None, :], A, axis=1)              # (S, A, S)
    P[0, 2] = 0.0
    P[0, 2, 1] = 1.0                                           # borrow: start the timer
    r = np.zeros((S, A))
    c = np.repeat(cost_timer[:, None], A, axis=1).astype(float)
    r[:, 1] += SPEND_GAIN
    c[:, 1] += 1.0
    r[0, 2] = BORROW_GAIN * total
    return _with_binding_limit(CMDP(_mix(P, eps), r, c, 0.0, name), limit_frac)


def delayed_cost_cmdp(delay: int, limit_frac: float, eps: float = 1e-4) -> CMDP:
    """Borrowing costs ``delay + 1`` paid in one piece ``delay`` steps after the borrowing (layout above).

    States 0 (ready) and 1..delay (the timer); the last timer state charges the cost and returns to ready.
    One borrowing per ``delay + 1`` steps at most, so borrowing alone spends up to 1 per step, as much as
    spending does. Borrow's reward is 0.45 (delay + 1) at once; at gamma 0.99 and delay 150 its cost looks
    0.99^150 = 0.22 times what it is.
    """
    S = delay + 1
    P_timer = np.zeros((S, S))
    P_timer[0, 0] = 1.0                                        # ready stays ready unless the agent borrows
    for s in range(1, S):
        P_timer[s, s + 1 if s < delay else 0] = 1.0
    cost = np.zeros(S)
    cost[delay] = float(S)
    return _timer_cmdp(P_timer, cost, float(S), limit_frac, eps, f"delayed_cost_{delay}")


def slow_mixing_cmdp(switch: float, limit_frac: float, eps: float = 1e-4) -> CMDP:
    """Borrowing starts a debt that costs 1 per step and ends with probability ``switch`` per step (layout
    above): a slowly mixing two-state chain (ready, in debt) whose borrowing costs 1 / switch in expectation,
    spread over about 1 / switch steps, so that borrowing alone spends nearly 1 per step, as spending does.
    Borrow's reward is 0.45 / switch at once; at gamma 0.99 and switch 0.005 the discounted cost is
    gamma / (1 - gamma (1 - switch)) = 66 against 1 / switch = 200.
    """
    P_timer = np.array([[1.0, 0.0], [switch, 1.0 - switch]])  # ready stays; the debt ends w.p. switch
    return _timer_cmdp(P_timer, np.array([0.0, 1.0]), 1.0 / switch, limit_frac, eps, f"slow_mixing_{switch:g}")


def cost_bounds(m: CMDP) -> tuple[float, float]:
    """(min over policies of J_C, J_C of the unconstrained reward maximiser): the range the limit sits in."""
    return -optimum(m._replace(r=-m.c), constrained=False).J, optimum(m, constrained=False).J_C


def _with_binding_limit(m: CMDP, limit_frac: float) -> CMDP:
    """Set l between the least achievable average cost and the cost of the unconstrained optimum."""
    lo, hi = cost_bounds(m)
    return m._replace(limit=float(lo + limit_frac * (hi - lo)))


class TabularCMDPEnv:
    """N parallel copies of a tabular CMDP as a gymnasium-style vector environment (continuing).

    Observations are state indices (N,) int64; ``step`` returns reward (N,), no terminations or
    truncations, and the cost (N,) in ``info["cost"]``; states are sampled by inverse CDF from
    ``rng``, which the caller owns (no hidden global state).
    """

    def __init__(self, m: CMDP, num_envs: int, rng: np.random.Generator):
        self.m, self.num_envs, self.rng = m, num_envs, rng
        self.cdf = np.cumsum(m.P, axis=-1)                     # (S, A, S)
        self.state = np.zeros(num_envs, dtype=np.int64)

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, dict]:
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.state = self.rng.integers(self.m.n_states, size=self.num_envs)
        return self.state.copy(), {}

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        s, a = self.state, np.asarray(actions, dtype=np.int64)
        u = self.rng.random(self.num_envs)[:, None]
        nxt = np.minimum((u > self.cdf[s, a]).sum(1), self.m.n_states - 1)
        reward, cost = self.m.r[s, a], self.m.c[s, a]
        self.state = nxt
        none = np.zeros(self.num_envs, dtype=bool)
        return nxt.copy(), reward, none, none, {"cost": cost}

    def rollout(self, pi: np.ndarray, steps: int) -> Rollout:
        """``steps`` steps of every chain under the tabular policy ``pi`` (S, A), continuing from the current
        states: the rollout that :func:`icml24.common.rl.collect` makes with :meth:`step` and the sampler
        a = #{a' : U > cdf_pi(a'|s)}, U drawn from this environment's rng before each step (the same draws
        in the same order, tested), in one compiled loop (:func:`_sample_chains`) instead of a dozen numpy
        calls per step."""
        pi_cdf = np.cumsum(pi, axis=1)                          # (S, A)
        u = self.rng.random((steps, 2, self.num_envs))          # per step: the action's uniform, then the move's
        states = np.empty((steps + 1, self.num_envs), dtype=np.int64)      # s_0 .. s_T
        actions = np.empty((steps, self.num_envs), dtype=np.int64)
        states[0] = self.state
        _sample_chains(pi_cdf, self.cdf, u, states, actions)
        self.state = states[-1].copy()
        obs = states[:-1]
        return Rollout(obs, actions, self.m.r[obs, actions], self.m.c[obs, actions], states[1:], states[-1].copy())


@numba.njit(cache=True)
def _first_at_least(row: np.ndarray, x: float) -> int:  # pragma: no cover (compiled)
    """The first index j of the non-decreasing ``row`` with row[j] >= x (len(row) if none): binary search."""
    lo, hi = 0, len(row)
    while lo < hi:
        mid = (lo + hi) // 2
        if row[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@numba.njit(cache=True)
def _sample_chains(pi_cdf: np.ndarray, cdf: np.ndarray, u: np.ndarray, states: np.ndarray,
                   actions: np.ndarray) -> None:  # pragma: no cover (compiled; tested through TabularCMDPEnv.rollout)
    """Inverse-CDF sampling along every chain: a_t = #{a : u[t, 0] > pi_cdf[s_t, a]} and s_{t+1} =
    #{s' : u[t, 1] > cdf[s_t, a_t, s']}, each capped at the last index (as :meth:`TabularCMDPEnv.step` and the
    vector-API sampler do). A CDF row is non-decreasing (a cumulative sum of non-negative numbers), so the count
    is the first index whose CDF is >= u, found exactly by binary search (:func:`_first_at_least`).
    Fills ``states[1:]`` (T, N) from ``states[0]`` and ``actions`` (T, N) in place; ``u`` is (T, 2, N)."""
    n_actions, n_states = pi_cdf.shape[1], cdf.shape[2]
    for t in range(u.shape[0]):
        for i in range(u.shape[2]):
            s = states[t, i]
            a = min(_first_at_least(pi_cdf[s], u[t, 0, i]), n_actions - 1)
            actions[t, i] = a
            states[t + 1, i] = min(_first_at_least(cdf[s, a], u[t, 1, i]), n_states - 1)

"""Model-based off-policy evaluation and the DOPE metrics (Fu et al. 2021; the paper's Sec. 5.2).

A transition model's value of a policy is the mean discounted return of rollouts in the model from
given start states (the official ``eval_fake_values``: mean actions of the policy, next state and
reward clipped to the data's range widened by 10% of its magnitude, the same clipping for every model).
The metrics compare the estimates V_hat with the true values V of P policies (min-max normalised by
the true values, as DOPE does):

* absolute error  mean_i |V_hat_i - V_i| / (max V - min V);
* rank correlation  Spearman's rho of (V_hat, V) (the official code computes Pearson's r under this name;
  both are reported);
* regret@1  (max V - V[argmax V_hat]) / (max V - min V).
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np
from scipy import stats

__all__ = ["Bounds", "bounds", "model_values", "DopeMetrics", "dope_metrics"]

Predict = Callable[[np.ndarray], np.ndarray]   # x = [s, a] (n, obs + act) -> Delta = [s' - s, r] (n, obs + 1)


class Bounds(NamedTuple):
    """Clipping box of a rollout's next observations and rewards."""

    obs_lo: np.ndarray
    obs_hi: np.ndarray
    r_lo: float
    r_hi: float


def bounds(next_obs: np.ndarray, rewards: np.ndarray) -> Bounds:
    """[min - 0.1 |min|, max + 0.1 |max|] of the data, per dimension.

    >>> b = bounds(np.array([[-1.0], [2.0]]), np.array([-3.0, 0.0]))
    >>> b.obs_lo, b.obs_hi, b.r_lo, b.r_hi
    (array([-1.1]), array([2.2]), -3.3, 0.0)
    """
    lo, hi = next_obs.min(0), next_obs.max(0)
    return Bounds(lo - 0.1 * np.abs(lo), hi + 0.1 * np.abs(hi), float(rewards.min() - 0.1 * abs(rewards.min())),
                  float(rewards.max() + 0.1 * abs(rewards.max())))


def model_values(predict: Predict, policies: list[Callable[[np.ndarray], np.ndarray]], starts: np.ndarray,
                 horizon: int, gamma: float, box: Bounds) -> np.ndarray:
    """Discounted return of every policy from every start state in the model, averaged over starts: (P,).

    All P x n_starts rollouts advance together (one model call per step); the task never terminates
    (Pendulum), so every rollout runs ``horizon`` steps.
    """
    P, n = len(policies), len(starts)
    obs = np.tile(starts, (P, 1))                                        # (P n, obs_dim), policy-major
    value = np.zeros(P * n)
    for t in range(horizon):
        act = np.concatenate([pi(obs[i * n:(i + 1) * n]) for i, pi in enumerate(policies)])   # (P n, act_dim)
        delta = predict(np.concatenate([obs, act], 1))                  # (P n, obs_dim + 1)
        obs = np.clip(obs + delta[:, :-1], box.obs_lo, box.obs_hi)
        value += gamma ** t * np.clip(delta[:, -1], box.r_lo, box.r_hi)
    return value.reshape(P, n).mean(1)


class DopeMetrics(NamedTuple):
    """DOPE's metrics of one set of estimates (module docstring)."""

    abs_error: float
    spearman: float
    pearson: float
    regret1: float


def dope_metrics(estimates: np.ndarray, truth: np.ndarray) -> DopeMetrics:
    """The metrics of ``estimates`` against ``truth`` (both (P,)).

    >>> m = dope_metrics(np.array([3.0, 1.0, 2.0]), np.array([1.0, 2.0, 3.0]))
    >>> round(m.abs_error, 4), round(m.spearman, 4), m.regret1
    (0.6667, -0.5, 1.0)
    """
    span = float(truth.max() - truth.min())
    abs_error = float(np.mean(np.abs(estimates - truth)) / span)
    spearman = float(stats.spearmanr(estimates, truth).statistic)
    pearson = float(np.corrcoef(estimates, truth)[0, 1])
    regret1 = float((truth.max() - truth[int(np.argmax(estimates))]) / span)
    return DopeMetrics(abs_error, spearman, pearson, regret1)

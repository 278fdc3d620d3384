"""Shared reinforcement-learning pieces: batched continuing rollouts and advantage estimation.

Used by the RL papers (acpo first; purified_il and etm next). Environments follow gymnasium's
vector API (``gymnasium.vector.VectorEnv``: ``reset(seed=)`` -> ``(obs, info)``, ``step(actions)`` ->
``(obs, reward, terminated, truncated, info)``), with a per-step constraint cost, where there is one,
in ``info["cost"]``. Rollouts here are *continuing*: nothing is reset between iterations, so that the
average-reward estimates of an ergodic task are not biased by restarts.

The advantage estimators are written in numpy over arrays shaped ``(T, N)`` (time, parallel envs):

* :func:`gae` - discounted GAE (Schulman et al. 2016, Eq. 16):
  ``delta_t = r_t + gamma V(s_{t+1}) - V(s_t)``, ``A_t = sum_l (gamma lam)^l delta_{t+l}``;
* :func:`average_gae` - the average-reward form (ATRPO, Zhang & Ross 2021, Sec. 5; ACPO's advantage
  estimator): ``delta_t = r_t - rho + V(s_{t+1}) - V(s_t)`` with the bias (differential value) V and
  the average reward rho, ``A_t = sum_l lam^l delta_{t+l}``.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np


class Rollout(NamedTuple):
    """A batch of continuing transitions from N parallel environments over T steps."""

    obs: np.ndarray        # (T, N, *obs_shape) s_t
    actions: np.ndarray    # (T, N, *act_shape) a_t
    rewards: np.ndarray    # (T, N) r_t
    costs: np.ndarray      # (T, N) c_t (zeros if the environment reports no cost)
    next_obs: np.ndarray   # (T, N, *obs_shape) s_{t+1}
    last_obs: np.ndarray   # (N, *obs_shape) the state the next rollout continues from


def collect(env: Any, act: Callable[[np.ndarray], np.ndarray], obs: np.ndarray, steps: int) -> Rollout:
    """Run ``act`` (a batch of observations -> a batch of actions) for ``steps`` steps from ``obs``.

    Terminated or truncated environments are not expected (continuing tasks); if one reports it, the
    transition's ``next_obs`` is the final observation gymnasium gives in ``info`` when present.

    >>> import gymnasium as gym
    >>> env = gym.make_vec("CartPole-v1", num_envs=2, vectorization_mode="sync")
    >>> obs, _ = env.reset(seed=0)
    >>> ro = collect(env, lambda o: np.zeros(len(o), dtype=int), obs, 3)
    >>> ro.obs.shape, ro.rewards.shape, float(ro.costs.sum())
    ((3, 2, 4), (3, 2), 0.0)
    """
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    obs_l, act_l, rew_l, cost_l, nxt_l = [], [], [], [], []
    for _ in range(steps):
        a = act(obs)
        nxt, r, term, trunc, info = env.step(a)
        obs_l.append(obs)
        act_l.append(a)
        rew_l.append(np.asarray(r, dtype=float))
        cost_l.append(np.asarray(info.get("cost", np.zeros(len(r))), dtype=float))
        done = np.logical_or(term, trunc)
        true_next = nxt
        if np.any(done) and "final_obs" in info:
            true_next = np.array(nxt, copy=True)
            true_next[done] = np.stack(info["final_obs"][done])
        nxt_l.append(true_next)
        obs = nxt
    return Rollout(np.stack(obs_l), np.stack(act_l), np.stack(rew_l), np.stack(cost_l), np.stack(nxt_l), obs)


def gae(rewards: np.ndarray, values: np.ndarray, next_values: np.ndarray, gamma: float, lam: float) -> np.ndarray:
    """Discounted GAE(gamma, lam) advantages (T, N) of a continuing batch (Schulman et al. 2016, Eq. 16).

    The last step bootstraps from ``next_values`` (no episode ends). With lam = 1 and gamma = 0 the
    advantage is ``r_t - V(s_t)``:

    >>> r = np.array([[1.0], [2.0]]); v = np.zeros((2, 1)); nv = np.zeros((2, 1))
    >>> gae(r, v, nv, gamma=0.5, lam=1.0).ravel().tolist()        # A_1 = 2, A_0 = 1 + 0.5 * 2
    [2.0, 2.0]
    """
    delta = rewards + gamma * next_values - values                     # (T, N)
    return _discounted_cumsum(delta, gamma * lam)


def average_gae(rewards: np.ndarray, values: np.ndarray, next_values: np.ndarray, rho: float,
                lam: float) -> np.ndarray:
    """Average-reward GAE(lam) advantages (T, N): ``delta_t = r_t - rho + V(s_{t+1}) - V(s_t)``,
    ``A_t = sum_l lam^l delta_{t+l}`` (ATRPO Sec. 5; the advantage estimator ACPO uses).

    >>> r = np.array([[1.0], [3.0]]); z = np.zeros((2, 1))
    >>> average_gae(r, z, z, rho=2.0, lam=1.0).ravel().tolist()   # deltas -1, 1: A_1 = 1, A_0 = -1 + 1
    [0.0, 1.0]
    """
    delta = rewards - rho + next_values - values                       # (T, N)
    return _discounted_cumsum(delta, lam)


def _discounted_cumsum(x: np.ndarray, factor: float) -> np.ndarray:
    """y_t = sum_{l >= 0} factor^l x_{t+l} along axis 0 (T, N)."""
    y = np.empty_like(x, dtype=float)
    acc = np.zeros(x.shape[1:], dtype=float)
    for t in range(len(x) - 1, -1, -1):
        acc = x[t] + factor * acc
        y[t] = acc
    return y

"""Environments for the select-rank bandit: the true model, a context stream, and the simulation loop.

A :class:`RankingEnv` holds the true theta_j = (alpha_j1..alpha_jK, beta_j) of every item and a context
distribution. :func:`synthetic_env` draws heterogeneous users around a centre with a chosen spread
(a small spread is the low-context-diversity regime where greedy estimates can lock in a bad list;
a large one gives greedy free exploration). :func:`simulate` plays a policy for T rounds and records
the pseudo-regret sum_t [r(x_t, q*_t) - r(x_t, q_t)] computed from the true means (Section 2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from icml24.papers.ranking_bandit.algorithm import Policy
from icml24.papers.ranking_bandit.components import Link, best_list, mean_function, mean_responses


@dataclass(frozen=True)
class RankingEnv:
    """True parameters and context distribution of a select-rank problem.

    Attributes:
        theta: (N, K + d) true theta_j = (alpha_j1..alpha_jK, beta_j).
        link: response family; logistic draws Bernoulli(mu), linear draws mu + noise_sd * N(0, 1).
        center: (d,) mean context.  spread: standard deviation of the Gaussian context around it.
        pool: optional (U, d) finite population of user contexts (e.g. MovieLens user factors); when
            given, x_t is a uniformly drawn row (plus ``spread`` noise).
        noise_sd: Gaussian response noise (linear link only).
    """

    theta: np.ndarray
    link: Link
    center: np.ndarray
    spread: float
    pool: np.ndarray | None = None
    noise_sd: float = 0.5

    @property
    def n_items(self) -> int:
        return self.theta.shape[0]

    @property
    def dim(self) -> int:
        return self.center.size

    @property
    def n_positions(self) -> int:
        return self.theta.shape[1] - self.dim

    def contexts(self, horizon: int, rng: np.random.Generator) -> np.ndarray:
        """(T, d) i.i.d. user contexts x_1..x_T."""
        base = self.center if self.pool is None else self.pool[rng.integers(len(self.pool), size=horizon)]
        return base + self.spread * rng.standard_normal((horizon, self.dim))

    def means(self, x: np.ndarray) -> np.ndarray:
        """(N, K) true mean responses mu_j(x, k)."""
        return mean_responses(self.theta, x, self.link)

    def respond(self, mu_shown: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Responses Y (K,) of the displayed items given their means mu_shown (K,)."""
        if self.link == "logistic":
            return (rng.random(mu_shown.size) < mu_shown).astype(np.float64)
        return mu_shown + self.noise_sd * rng.standard_normal(mu_shown.size)


def synthetic_env(rng: np.random.Generator, n_items: int, n_positions: int, dim: int, spread: float,
                  link: Link = "logistic", position_decay: float = 0.3, position_noise: float = 0.3) -> RankingEnv:
    """Heterogeneous-user environment: item effects, item-specific position effects, preference vectors.

    alpha_jk = a_j - position_decay (k - 1) + position_noise eps_jk, a_j ~ N(0, 1), eps_jk ~ N(0, 1):
    an item's appeal, a common decay down the list, and the item-specific part of the position effect
    (so the best list is not a sort of one score). beta_j ~ N(0, I_d / d); the context centre
    c ~ N(0, I_d / d) and x_t = c + spread N(0, I_d).

    >>> env = synthetic_env(np.random.default_rng(0), n_items=6, n_positions=2, dim=3, spread=1.0)
    >>> env.theta.shape, env.means(np.zeros(3)).shape
    ((6, 5), (6, 2))
    """
    a = rng.standard_normal(n_items)  # (N,)
    alpha = a[:, None] - position_decay * np.arange(n_positions) \
        + position_noise * rng.standard_normal((n_items, n_positions))  # (N, K)
    beta = rng.standard_normal((n_items, dim)) / np.sqrt(dim)  # (N, d)
    center = rng.standard_normal(dim) / np.sqrt(dim)
    return RankingEnv(np.hstack([alpha, beta]), link, center, spread)


def optimal_values(env: RankingEnv, contexts: np.ndarray) -> np.ndarray:
    """(T,) r(x_t, q*_t): the best list's expected satisfaction for each context (the oracle)."""
    return np.array([best_list(env.means(x)).value for x in contexts])


class Trace(NamedTuple):
    """Cumulative pseudo-regret and expected satisfaction of a policy, read at ``checkpoints``."""

    checkpoints: np.ndarray
    regret: np.ndarray
    satisfaction: np.ndarray


def simulate(env: RankingEnv, policy: Policy, contexts: np.ndarray, best_values: np.ndarray,
             rng: np.random.Generator, checkpoints: np.ndarray) -> Trace:
    """Play ``policy`` on ``env`` for T = len(contexts) rounds (semi-bandit feedback).

    Round t: show q_t = policy.select(x_t), observe Y_{t, q_t(k), k} for every position k, update.
    Regret uses true means: reg_t = r(x_t, q*_t) - r(x_t, q_t).

    Args:
        contexts: (T, d) the context stream (shared across policies: common random numbers).
        best_values: (T,) from :func:`optimal_values`.
        checkpoints: increasing round counts in 1..T at which the cumulative sums are read.
    """
    horizon = contexts.shape[0]
    k = env.n_positions
    positions = np.arange(k)
    alpha, beta = env.theta[:, :k], env.theta[:, k:]
    value = np.empty(horizon)  # (T,) expected satisfaction of the shown list
    for t in range(horizon):
        x = contexts[t]
        items = policy.select(x, rng)  # (K,)
        mu_shown = mean_function(alpha[items, positions] + beta[items] @ x, env.link)  # (K,) mu_{q(k)}(x, k)
        value[t] = mu_shown.sum()
        policy.update(x, items, env.respond(mu_shown, rng))
    idx = np.asarray(checkpoints) - 1
    return Trace(np.asarray(checkpoints), np.cumsum(best_values - value)[idx], np.cumsum(value)[idx])

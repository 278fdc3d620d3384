"""The select-rank user response model of Wang et al. (ICML 2024), Section 2, and its exact argmax.

Model (Section 2). N items, K display slots, a user context x in R^d. Item j shown at position k
draws a response with mean

    mu_j(x, k) = A'(alpha_jk + beta_j^T x) = A'(theta_j^T z_k(x)),   z_k(x) = (e_k, x) in R^{K+d},

where alpha_jk is the item-specific position effect, beta_j the item's preference vector and A' the
mean function of the exponential family (logistic: sigmoid, Bernoulli responses; linear: identity,
Gaussian responses). A ranked list is an injective map from positions to items, ``items[k] = q(k)``;
its satisfaction is additive, r(x, q) = sum_k mu_{q(k)}(x, k). The best list is therefore a
maximum-weight *imperfect* bipartite matching of the N items to the K positions with weights
W[j, k] = mu_j(x, k) (Section 3), solved exactly by the Hungarian algorithm on the rectangular
(N, K) matrix; :func:`best_list_bruteforce` enumerates all N!/(N-K)! lists as the reference.
"""

from __future__ import annotations

import itertools
from typing import Literal, NamedTuple

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.special import expit

Link = Literal["logistic", "linear"]


def mean_function(eta: np.ndarray, link: Link) -> np.ndarray:
    """A'(eta): the GLM mean function (sigmoid for ``logistic``, identity for ``linear``).

    Both are monotone increasing, so an upper bound on eta maps to an upper bound on the mean.

    >>> mean_function(np.array([0.0, np.log(3.0)]), "logistic")
    array([0.5 , 0.75])
    """
    if link == "logistic":
        return expit(eta)  # 1 / (1 + e^-eta), overflow-free
    if link == "linear":
        return np.asarray(eta, dtype=np.float64)
    raise ValueError(f"unknown link {link!r}; use 'logistic' or 'linear'")


def design_vectors(x: np.ndarray, n_positions: int) -> np.ndarray:
    """Design vectors z_k(x) = (e_k, x) for every position k, shape (K, K + d).

    >>> design_vectors(np.array([0.5, -1.0]), 2)
    array([[ 1. ,  0. ,  0.5, -1. ],
           [ 0. ,  1. ,  0.5, -1. ]])
    """
    z = np.zeros((n_positions, n_positions + x.shape[-1]))
    z[:, n_positions:] = x
    z[np.arange(n_positions), np.arange(n_positions)] = 1.0
    return z


def linear_predictor(theta: np.ndarray, x: np.ndarray) -> np.ndarray:
    """eta[j, k] = theta_j^T z_k(x) = alpha_jk + beta_j^T x for all items and positions.

    Args:
        theta: (N, K + d) rows theta_j = (alpha_j1..alpha_jK, beta_j).
        x: (d,) context.
    Returns:
        (N, K) linear predictors.

    >>> theta = np.array([[1.0, 0.0, 2.0], [0.0, -1.0, 1.0]])   # K=2, d=1
    >>> linear_predictor(theta, np.array([0.5]))
    array([[ 2. ,  1. ],
           [ 0.5, -0.5]])
    """
    d = x.shape[-1]
    k = theta.shape[1] - d
    return theta[:, :k] + (theta[:, k:] @ x)[:, None]


def mean_responses(theta: np.ndarray, x: np.ndarray, link: Link) -> np.ndarray:
    """mu[j, k] = A'(alpha_jk + beta_j^T x), the (N, K) matrix of expected responses (Section 2)."""
    return mean_function(linear_predictor(theta, x), link)


def list_satisfaction(weights: np.ndarray, items: np.ndarray) -> float:
    """r(x, q) = sum_k W[q(k), k]: additive satisfaction of the list ``items`` (Section 2).

    >>> list_satisfaction(np.array([[1.0, 0.5], [0.8, 0.7], [0.1, 0.9]]), np.array([0, 2]))
    1.9
    """
    return float(weights[items, np.arange(items.size)].sum())


class RankedList(NamedTuple):
    """A ranked list: ``items[k]`` is the item shown at position k; ``value`` its total weight."""

    items: np.ndarray
    value: float


def best_list(weights: np.ndarray) -> RankedList:
    """argmax over lists of sum_k W[q(k), k]: maximum-weight imperfect bipartite matching (Section 3).

    Every one of the K <= N positions is filled (a list always shows K items), so the matching
    saturates the positions; the Hungarian algorithm on the rectangular (N, K) matrix solves it in
    O(N K^2). Ties are broken by scipy's deterministic order.

    Args:
        weights: (N, K) scores, e.g. true means (oracle), estimates (G-MLE) or UCBs (UCR).

    >>> best_list(np.array([[1.0, 0.5], [0.8, 0.7], [0.1, 0.9]]))
    RankedList(items=array([0, 2]), value=1.9)
    """
    rows, cols = linear_sum_assignment(weights, maximize=True)
    items = np.empty(weights.shape[1], dtype=np.int64)
    items[cols] = rows  # position cols[i] shows item rows[i]
    return RankedList(items, list_satisfaction(weights, items))


def best_list_bruteforce(weights: np.ndarray) -> RankedList:
    """Reference argmax by enumerating all N!/(N-K)! ordered K-subsets (small N, K only).

    >>> best_list_bruteforce(np.array([[1.0, 0.5], [0.8, 0.7], [0.1, 0.9]])).value
    1.9
    """
    n, k = weights.shape
    perms = np.array(list(itertools.permutations(range(n), k)), dtype=np.int64)  # (P, K)
    values = weights[perms, np.arange(k)].sum(axis=1)  # (P,)
    best = int(np.argmax(values))
    return RankedList(perms[best], float(values[best]))

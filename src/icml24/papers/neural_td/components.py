"""Neural TD (Ke, Wen & Zhang, ICML 2024): the finite MDP, the L-layer network and the exact references.

Everything the experiment compares against is computed exactly here, on a finite Markov chain over
state-action pairs ``x = (s, a)`` (index ``i`` in ``0..N-1``):

* the stationary distribution ``mu`` of the pair chain and the action-value ``Q^pi`` (Bellman equation);
* the L-layer ReLU network ``Q(x; theta)`` of Section 3 (1/sqrt(m) scaling, fixed output layer ``b``),
  its gradient and its neural tangent kernel (NTK) Gram matrix ``K = Phi Phi^T`` with
  ``Phi = grad_theta Q(x; theta_0)``;
* the spectrum of the feature covariance ``Sigma_pi = E_mu[grad Q grad Q^T]`` (its smallest *positive*
  eigenvalue ``lambda_min^+`` sets the step size: the range/kernel split of the paper);
* the projected fixed point of TD on the NTK-linearised model ``Q_0 + Phi w``, ``||w|| <= omega``,
  the reference ``Q_ref`` that neural TD's averaged iterate is measured against.

The stochastic algorithm itself lives in :mod:`icml24.papers.neural_td.algorithm`.
"""

from __future__ import annotations

import math
from typing import NamedTuple, Sequence, cast

import numpy as np
import torch
from scipy import optimize

Tensor = torch.Tensor


# ---------------------------------------------------------------- finite MDP under a fixed policy
class PairChain(NamedTuple):
    """A finite MDP under a fixed policy, written as a Markov chain over state-action pairs.

    Attributes:
        P: (N, N) transition matrix over pairs, ``P[(s,a),(s',a')] = p(s'|s,a) pi(a'|s')``.
        r: (N,) expected reward ``r(s, a)`` (deterministic here).
        phi: (N, d) unit-norm features ``phi(s, a)`` (the network input ``x``, ``||x|| = 1``).
        gamma: discount factor.
        mu: (N,) stationary distribution of ``P``.
        q_pi: (N,) action-value function of the policy.
    """

    P: np.ndarray
    r: np.ndarray
    phi: np.ndarray
    gamma: float
    mu: np.ndarray
    q_pi: np.ndarray

    @property
    def n(self) -> int:
        return int(self.r.shape[0])


def stationary_distribution(P: np.ndarray) -> np.ndarray:
    """The stationary distribution ``mu = mu P`` of an ergodic chain, by a direct linear solve.

    Solves ``(I - P)^T mu = 0`` with ``sum(mu) = 1`` (one equation replaced by the normalisation).

    >>> stationary_distribution(np.array([[0.9, 0.1], [0.5, 0.5]])).round(4)
    array([0.8333, 0.1667])
    """
    n = P.shape[0]
    A = (np.eye(n) - P).T.copy()  # (N, N)
    A[-1] = 1.0
    rhs = np.zeros(n)
    rhs[-1] = 1.0
    return np.linalg.solve(A, rhs)


def bellman_q(P: np.ndarray, r: np.ndarray, gamma: float) -> np.ndarray:
    """The policy's action-value ``Q^pi = (I - gamma P)^{-1} r`` (Bellman equation, Section 2).

    >>> bellman_q(np.array([[1.0]]), np.array([1.0]), 0.5)   # 1 / (1 - 0.5)
    array([2.])
    """
    return np.linalg.solve(np.eye(P.shape[0]) - gamma * P, r)


def random_pair_chain(n_states: int, n_actions: int, feature_dim: int, gamma: float,
                      rng: np.random.Generator, concentration: float = 1.0) -> PairChain:
    """A random ergodic MDP with a random fixed policy, as a chain over its ``N = |S||A|`` pairs.

    ``p(.|s,a)`` and ``pi(.|s)`` are Dirichlet(``concentration``) rows (larger: closer to uniform, faster
    mixing, a more even ``mu``), ``r(s,a) ~ U[0,1]`` and the features are
    Gaussian vectors normalised to the unit sphere (the paper assumes ``||phi(s,a)|| <= 1``).

    >>> c = random_pair_chain(4, 2, 3, 0.9, np.random.default_rng(0))
    >>> c.P.shape, bool(np.allclose(c.P.sum(1), 1)), bool(np.allclose(np.linalg.norm(c.phi, axis=1), 1))
    ((8, 8), True, True)
    """
    p = rng.dirichlet(np.full(n_states, concentration), size=(n_states, n_actions))  # (S, A, S')
    pi = rng.dirichlet(np.full(n_actions, concentration), size=n_states)  # (S', A')
    P = (p[:, :, :, None] * pi[None, None, :, :]).reshape(n_states * n_actions, -1)  # (N, N)
    r = rng.uniform(0.0, 1.0, size=n_states * n_actions)  # (N,)
    phi = rng.standard_normal((n_states * n_actions, feature_dim))
    phi /= np.linalg.norm(phi, axis=1, keepdims=True)  # (N, d), ||x|| = 1
    return PairChain(P, r, phi, gamma, stationary_distribution(P), bellman_q(P, r, gamma))


def mu_error(q: Tensor | np.ndarray, q_ref: Tensor | np.ndarray, mu: Tensor | np.ndarray):
    """Squared ``mu``-weighted error ``||q - q_ref||_mu^2 = sum_x mu(x) (q(x) - q_ref(x))^2``.

    Batched over leading dimensions of ``q`` (..., N).

    >>> mu_error(np.array([[1.0, 2.0], [0.0, 0.0]]), np.array([1.0, 0.0]), np.array([0.5, 0.5]))
    array([2. , 0.5])
    """
    return ((q - q_ref) ** 2 * mu).sum(-1)


# ---------------------------------------------------------------- the L-layer network (Section 3)
class Network(NamedTuple):
    """Parameters of ``Q(x; theta) = b^T x^(L)``, ``x^(l) = sigma(W_l x^(l-1)) / sqrt(m)``, ``x^(0) = x``.

    Attributes:
        W: the trained weights ``theta = (W_1, ..., W_L)``, shapes (m, d), (m, m), ..., each possibly
            with leading batch dimensions (one network per chain).
        b: (m,) fixed output layer in ``{-1, +1}^m``.
    """

    W: tuple[Tensor, ...]
    b: Tensor

    @property
    def width(self) -> int:
        return int(self.b.shape[-1])


class Forward(NamedTuple):
    """Forward pass: output and every layer's pre-activation and (scaled) activation.

    Attributes:
        q: (..., k) network outputs for k inputs.
        pre: ``h_l = W_l x^(l-1)``, each (..., k, m), l = 1..L.
        post: ``x^(l)``, each (..., k, fan), l = 0..L (``post[0]`` is the input).
    """

    q: Tensor
    pre: tuple[Tensor, ...]
    post: tuple[Tensor, ...]


def init_network(feature_dim: int, width: int, depth: int, generator: torch.Generator,
                 dtype: torch.dtype = torch.float32) -> Network:
    """Random initialisation ``theta_0``: ``W_l`` i.i.d. N(0, 1), ``b`` i.i.d. uniform on ``{-1, +1}``.

    >>> net = init_network(3, 8, 2, torch.Generator().manual_seed(0))
    >>> [tuple(w.shape) for w in net.W], tuple(net.b.shape)
    ([(8, 3), (8, 8)], (8,))
    """
    fans = [feature_dim] + [width] * (depth - 1)
    W = tuple(torch.randn(width, f, generator=generator, dtype=dtype) for f in fans)
    b = torch.randint(0, 2, (width,), generator=generator).to(dtype) * 2 - 1
    return Network(W, b)


def forward(net: Network, x: Tensor) -> Forward:
    """``Q(x; theta)`` for inputs ``x`` (..., k, d), Section 3 parametrisation with ReLU ``sigma``.

    ``h_l = x^(l-1) W_l^T``, ``x^(l) = relu(h_l) / sqrt(m)``, ``q = x^(L) b``. Weights may carry batch
    dimensions matching those of ``x``.

    >>> net = Network((torch.eye(2), torch.eye(2)), torch.tensor([1.0, -1.0]))
    >>> round(float(forward(net, torch.tensor([[3.0, 1.0]])).q), 6)   # x1 = (3, 1)/sqrt(2), x2 = (3, 1)/2
    1.0
    """
    scale = 1.0 / math.sqrt(net.width)
    pre, post = [], [x]
    h = x
    for W in net.W:
        h = post[-1] @ W.transpose(-1, -2)  # (..., k, m)
        pre.append(h)
        post.append(torch.relu(h) * scale)
    return Forward(post[-1] @ net.b, tuple(pre), tuple(post))


def backward(net: Network, fw: Forward) -> tuple[Tensor, ...]:
    """Back-propagated vectors ``delta_l = dQ/dh_l`` (..., k, m) for each input, l = 1..L.

    ``dQ/dW_l = delta_l x^(l-1)^T`` (a rank-one matrix per input). Recursion:
    ``delta_L = b * sigma'(h_L) / sqrt(m)``, ``delta_l = (delta_{l+1} W_{l+1}) * sigma'(h_l) / sqrt(m)``.
    """
    scale = 1.0 / math.sqrt(net.width)
    deltas = cast("list[Tensor]", [None] * len(net.W))  # every slot is filled below
    g = net.b.expand_as(fw.pre[-1])  # dQ/dx^(L)
    for layer in range(len(net.W) - 1, -1, -1):
        deltas[layer] = g * (fw.pre[layer] > 0).to(g.dtype) * scale  # (..., k, m)
        if layer:
            g = deltas[layer] @ net.W[layer]  # dQ/dx^(l-1), (..., k, m)
    return tuple(deltas)


def param_grads(net: Network, x: Tensor) -> tuple[Tensor, ...]:
    """Explicit per-input gradients ``dQ(x_i)/dW_l`` as (..., k, m, fan) tensors (small nets, tests).

    >>> net = init_network(3, 4, 2, torch.Generator().manual_seed(0), torch.float64)
    >>> [tuple(g.shape) for g in param_grads(net, torch.ones(5, 3, dtype=torch.float64) / 3 ** 0.5)]
    [(5, 4, 3), (5, 4, 4)]
    """
    fw = forward(net, x)
    return tuple(d[..., :, None] * v[..., None, :] for d, v in zip(backward(net, fw), fw.post[:-1]))


def ntk_gram(net: Network, x: Tensor) -> Tensor:
    """NTK Gram matrix ``K = Phi Phi^T`` (k, k) with ``Phi_i = grad_theta Q(x_i; theta)``, never forming Phi.

    ``<dQ(x_i)/dW_l, dQ(x_j)/dW_l> = <delta_l(x_i), delta_l(x_j)> <x^(l-1)(x_i), x^(l-1)(x_j)>``, so
    ``K = sum_l (Delta_l Delta_l^T) * (X_{l-1} X_{l-1}^T)`` (elementwise product).
    """
    fw = forward(net, x)
    return cast(Tensor, sum((d @ d.transpose(-1, -2)) * (v @ v.transpose(-1, -2))
                            for d, v in zip(backward(net, fw), fw.post[:-1])))


# ---------------------------------------------------------------- spectrum and linearised reference
class SigmaSpectrum(NamedTuple):
    """Nonzero spectrum of ``Sigma_pi = Phi^T D_mu Phi`` (p x p, rank <= N).

    Attributes:
        eigvals: (N,) eigenvalues of ``D^{1/2} K D^{1/2}``, the nonzero ones of ``Sigma_pi`` plus zeros.
        lambda_min_pos: smallest positive eigenvalue ``lambda_min^+(Sigma_pi)`` (relative tol 1e-9).
        rank: number of positive eigenvalues (``p - rank`` is the kernel dimension).
    """

    eigvals: np.ndarray
    lambda_min_pos: float
    rank: int


def sigma_spectrum(K: np.ndarray, mu: np.ndarray) -> SigmaSpectrum:
    """Nonzero eigenvalues of ``Sigma_pi`` from the NTK Gram ``K``: they equal those of D^1/2 K D^1/2.

    >>> s = sigma_spectrum(np.array([[1.0, 1.0], [1.0, 1.0]]), np.array([0.5, 0.5]))
    >>> round(s.lambda_min_pos, 6), s.rank     # rank-one kernel: lambda^+_min = 1, kernel dimension 1
    (1.0, 1)
    """
    sq = np.sqrt(mu)
    ev = np.linalg.eigvalsh(sq[:, None] * K * sq[None, :])  # (N,) ascending
    pos = ev[ev > 1e-9 * ev.max()]
    return SigmaSpectrum(ev, float(pos.min()), int(pos.size))


class LinearizedFixedPoint(NamedTuple):
    """Projected TD fixed point of the NTK-linearised model ``Q_w = Q_0 + Phi w``, ``w in B(0, omega)``.

    Attributes:
        q: (N,) the reference values ``Q_ref = Q_0 + K c``.
        c: (N,) kernel coefficients, ``w* = Phi^T c`` (``c`` in the range of K).
        nu: Lagrange multiplier of the ball (0 when the ball is not active).
        norm: ``||w*|| = sqrt(c^T K c)``.
        free_norm: ``||w||`` of the unprojected fixed point (``> omega`` iff the ball is active).
    """

    q: np.ndarray
    c: np.ndarray
    nu: float
    norm: float
    free_norm: float


def linearized_fixed_point(chain: PairChain, K: np.ndarray, q0: np.ndarray,
                           omega: float = math.inf) -> LinearizedFixedPoint:
    """Exact projected fixed point of linearised TD: the limit point neural TD is compared with.

    Linear TD's mean direction is ``g(w) = Phi^T D (r + gamma P Q_w - Q_w) = Phi^T (D y - M Phi w)`` with
    ``M = D (I - gamma P)`` and ``y = r - (I - gamma P) Q_0``. The projected fixed point on the ball
    solves the variational inequality ``g(w*) = nu w*``, ``nu >= 0``, ``nu (||w*|| - omega) = 0``.
    TD iterates stay in the range of ``Phi^T`` (the range part of the paper's decomposition), so with
    ``K = U_r S_r U_r^T`` (rank r) we write ``w = Phi^T U_r a``: then ``Phi w = U_r S_r a``,
    ``||w||^2 = a^T S_r a`` and the condition becomes the r x r system
    ``(U_r^T M U_r S_r + nu I) a = U_r^T D y``. ``nu = 0`` when that solution lies in the ball, else
    ``nu > 0`` is the root of ``||w(nu)|| = omega``. The solution is unique because ``g`` is strongly
    monotone on the range with modulus ``(1 - gamma) lambda_min^+(Sigma_pi)``.
    """
    ev, U = np.linalg.eigh(K)
    keep = ev > 1e-10 * ev.max()
    S, U = ev[keep], U[:, keep]  # (r,), (N, r)
    M = chain.mu[:, None] * (np.eye(chain.n) - chain.gamma * chain.P)  # (N, N) = D (I - gamma P)
    rhs = U.T @ (chain.mu * (chain.r - (np.eye(chain.n) - chain.gamma * chain.P) @ q0))  # (r,)
    BS = (U.T @ M @ U) * S[None, :]  # (r, r)

    def solve(nu: float) -> np.ndarray:
        return np.linalg.solve(BS + nu * np.eye(S.size), rhs)

    def norm(a: np.ndarray) -> float:
        return float(np.sqrt(a @ (S * a)))

    a = solve(0.0)
    free = norm(a)
    nu = 0.0
    if free > omega:
        hi = 1.0
        while norm(solve(hi)) > omega:
            hi *= 4.0
        nu = optimize.brentq(lambda v: norm(solve(v)) - omega, 0.0, hi, xtol=1e-14, rtol=1e-12)
        a = solve(nu)
    return LinearizedFixedPoint(q0 + U @ (S * a), U @ a, float(nu), norm(a), free)


def as_tensor(a: Sequence[float] | np.ndarray, dtype: torch.dtype = torch.float32) -> Tensor:
    """``torch.as_tensor`` with an explicit dtype (float32 by default)."""
    return torch.as_tensor(np.asarray(a), dtype=dtype)

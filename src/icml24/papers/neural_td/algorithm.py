"""Projected neural TD(0) (Algorithm 1 of Ke, Wen & Zhang, ICML 2024): sampling, step schedules, runners.

The update, for one observed transition ``(x_t, r_t, x'_t)``::

    delta_t     = r_t + gamma Q(x'_t; theta_t) - Q(x_t; theta_t)                    (TD error)
    theta_{t+1} = Pi_{B(theta_0, omega)}[ theta_t + alpha_t delta_t grad Q(x_t; theta_t) ]
    theta_bar_T = sum_t w_t theta_t / sum_t w_t                                     (averaged output)

``x'_t = x_{t+1}`` along one trajectory (Markovian sampling, the paper's setting) or ``x_t ~ mu``,
``x'_t ~ P(x_t, .)`` independently (i.i.d. sampling). :func:`neural_td` runs a batch of independent
chains at once and never forms a per-step projection of all parameters: it stores
``theta_t = theta_0 + s_t D_t`` with a per-chain scalar ``s_t`` (the projection only rescales ``s_t``)
and keeps ``||theta_t - theta_0||`` up to date from rank-one quantities. :func:`neural_td_naive` is the
literal per-chain loop it is tested against.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple, cast

import numpy as np
import torch

from icml24.papers.neural_td.components import Network, PairChain, as_tensor, backward, forward, mu_error, param_grads

Tensor = torch.Tensor


# ---------------------------------------------------------------- sampling
class Transitions(NamedTuple):
    """Indices of the observed pairs: ``cur[b, t] = x_t`` and ``nxt[b, t] = x'_t``, both (B, T)."""

    cur: np.ndarray
    nxt: np.ndarray


def _step(cum: np.ndarray, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    u = rng.random(x.shape)
    return np.minimum((cum[x] < u[..., None]).sum(-1), cum.shape[0] - 1)


def markov_transitions(P: np.ndarray, mu: np.ndarray, T: int, n_chains: int,
                       rng: np.random.Generator) -> Transitions:
    """``n_chains`` independent trajectories of length T+1 of the pair chain, started from ``mu``.

    Markovian sampling (the paper's setting): ``x'_t = x_{t+1}``, so consecutive samples are dependent.

    >>> tr = markov_transitions(np.array([[0.0, 1.0], [1.0, 0.0]]), np.array([0.5, 0.5]), 4, 1,
    ...                         np.random.default_rng(0))
    >>> bool((tr.nxt[:, :-1] == tr.cur[:, 1:]).all()), bool((tr.nxt != tr.cur).all())
    (True, True)
    """
    cum = np.cumsum(P, axis=1)  # (N, N)
    traj = np.empty((n_chains, T + 1), dtype=np.int64)
    traj[:, 0] = rng.choice(mu.size, size=n_chains, p=mu)
    for t in range(T):
        traj[:, t + 1] = _step(cum, traj[:, t], rng)
    return Transitions(traj[:, :-1], traj[:, 1:])


def iid_transitions(P: np.ndarray, mu: np.ndarray, T: int, n_chains: int,
                    rng: np.random.Generator) -> Transitions:
    """I.i.d. sampling: ``x_t ~ mu`` independently for every t, and ``x'_t ~ P(x_t, .)``.

    >>> tr = iid_transitions(np.eye(3), np.ones(3) / 3, 5, 2, np.random.default_rng(0))
    >>> tr.cur.shape, bool((tr.cur == tr.nxt).all())
    ((2, 5), True)
    """
    cur = rng.choice(mu.size, size=(n_chains, T), p=mu)
    return Transitions(cur, _step(np.cumsum(P, axis=1), cur, rng))


# ---------------------------------------------------------------- step-size schedules
class Schedule(NamedTuple):
    """Step sizes ``alpha_t`` and averaging weights ``w_t`` for t = 0..T-1 (``w_t`` weighs theta_{t+1})."""

    alpha: np.ndarray
    weight: np.ndarray


def theory_schedule(T: int, lam: float, alpha_max: float, beta_mult: float = 2.0) -> Schedule:
    """Diminishing ``alpha_t = beta / (t + t_0)`` with ``beta = beta_mult / lam``, weights ``w_t = t + t_0``.

    ``lam`` is the strong-monotonicity modulus on the range of Sigma_pi, ``(1 - gamma) lambda_min^+``;
    ``t_0 = beta / alpha_max`` makes the first step equal to ``alpha_max``. This is the 1/t schedule with
    linearly increasing averaging weights under which strongly monotone stochastic approximation
    (and the paper's Theorem) gives an ``O~(1/T)`` squared error.

    >>> s = theory_schedule(3, lam=0.5, alpha_max=1.0)   # beta = 4, t0 = 4
    >>> s.alpha.tolist(), s.weight.tolist()
    ([1.0, 0.8, 0.6666666666666666], [4.0, 5.0, 6.0])
    """
    beta = beta_mult / lam
    t0 = beta / alpha_max
    t = np.arange(T, dtype=np.float64)
    return Schedule(beta / (t + t0), t + t0)


def earlier_schedule(T: int, alpha0: float) -> Schedule:
    """The earlier analyses' schedule (Cai et al. 2019; Xu & Gu 2020): constant ``alpha = alpha0 / sqrt(T)``
    for a run of known horizon T and a uniform average of the iterates (their bound: ``O(1/sqrt(T))``).

    >>> earlier_schedule(4, 1.0).alpha.tolist()
    [0.5, 0.5, 0.5, 0.5]
    """
    return Schedule(np.full(T, alpha0 / math.sqrt(T)), np.ones(T))


# ---------------------------------------------------------------- the batched runner
class TDTrace(NamedTuple):
    """What a neural TD run records at each checkpoint T_c (number of updates done).

    Attributes:
        checkpoints: (C,) update counts at which the run was measured.
        error: (B, C) ``||Q(theta_bar_T) - Q_ref||_mu^2`` of the averaged iterate.
        last_error: (B, C) the same for the last iterate theta_T.
        dev_norm: (B, C) ``||theta_T - theta_0||`` (never above omega: the projection).
        q_avg: (B, N) ``Q(x; theta_bar_T)`` over all pairs at the last checkpoint.
    """

    checkpoints: np.ndarray
    error: np.ndarray
    last_error: np.ndarray
    dev_norm: np.ndarray
    q_avg: np.ndarray


def neural_td(net0: Network, chain: PairChain, transitions: Transitions, schedule: Schedule,
              omega: float, checkpoints: np.ndarray, q_ref: np.ndarray) -> TDTrace:
    """Projected neural TD(0) with iterate averaging on B independent chains at once (vectorised).

    Args:
        net0: the initialisation theta_0 (no batch dimension), shared by all chains.
        chain: the pair chain (rewards, features, discount, mu).
        transitions: (B, T) observed pairs; ``r_t = r(x_t)``.
        schedule: alpha_t and averaging weights, (T,) or (B, T).
        omega: projection radius of the ball ``B(theta_0, omega)``.
        checkpoints: increasing update counts (<= T) at which errors are recorded.
        q_ref: (N,) reference values the error is measured against.

    Representation: ``theta_t = theta_0 + s_t D_t`` per chain. A step adds the rank-one
    ``(alpha_t delta_t / s_t) delta_l v_l^T`` to ``D_l`` (``v_l = x^(l-1)(x_t)``); the new
    ``||theta - theta_0||^2`` is ``n^2 + 2 a <s D, G> + a^2 ||G||^2`` where
    ``<s D_l, delta_l v_l^T> = delta_l^T (s D_l v_l)`` reuses the forward pass; the projection only
    multiplies ``s_t`` by ``min(1, omega / ||theta - theta_0||)``. ``sum_t w_t (theta_t - theta_0)`` is
    accumulated with one fused multiply-add per layer. Large matrix products run in torch, the many
    small (B, m) vector operations in numpy on shared memory (the per-step cost is call overhead).
    """
    dtype = net0.b.dtype
    npdt: type[np.floating[Any]] = np.float64 if dtype == torch.float64 else np.float32
    B, T = transitions.cur.shape
    L, m = len(net0.W), net0.width
    scale = 1.0 / math.sqrt(m)
    W0 = [w.contiguous() for w in net0.W]  # (m, fan)
    W0T = [w.T.contiguous() for w in net0.W]  # (fan, m)
    bsc = net0.b.numpy().astype(npdt) * scale  # b / sqrt(m)
    fans = [w.shape[1] for w in W0]
    D_t = [torch.zeros(B, m, f, dtype=dtype) for f in fans]  # theta - theta_0 = s * D
    A_t = [torch.zeros(B, m, f, dtype=dtype) for f in fans]  # sum_t w_t (theta_t - theta_0)
    D_n = [d.numpy() for d in D_t]
    DT_t = [d.transpose(1, 2) for d in D_t]  # views, created once
    # preallocated buffers shared by torch (t) and numpy (n)
    post_t = [torch.zeros(B, 2, f, dtype=dtype) for f in fans]  # inputs x^(l-1) of layer l
    hd_t = [torch.zeros(B, 2, m, dtype=dtype) for _ in fans]  # D_l x^(l-1)
    u_t = [torch.zeros(B, m, dtype=dtype) for _ in fans]  # scaled delta_l (rank-one left factor)
    v_t = [torch.zeros(B, f, dtype=dtype) for f in fans]  # x^(l-1)(x_t) (rank-one right factor)
    Dt_t = [torch.zeros(B, 1, f, dtype=dtype) for f in fans]  # delta_l^T D_l (backward)
    h_t = [torch.zeros(2 * B, m, dtype=dtype) for _ in fans]  # x^(l-1) W0_l^T
    g_t = [torch.zeros(B, f, dtype=dtype) for f in fans]  # delta_l W0_l (backward)
    c_t = torch.zeros(B, dtype=dtype)
    post_n, hd_n, u_n, v_n, Dt_n, h_n, g_n = ([x.numpy() for x in xs]
                                              for xs in (post_t, hd_t, u_t, v_t, Dt_t, h_t, g_t))
    post2 = [p.view(2 * B, -1) for p in post_t]
    c_n, c3 = c_t.numpy(), c_t.view(B, 1, 1)
    u3, v3, d1 = [u.view(B, m, 1) for u in u_t], [v.view(B, 1, -1) for v in v_t], [u.view(B, 1, m) for u in u_t]
    delta_n = [np.zeros((B, m), dtype=npdt) for _ in fans]

    X = chain.phi.astype(npdt)[np.stack([transitions.cur, transitions.nxt], axis=-1)]  # (B, T, 2, d)
    X = np.ascontiguousarray(X.transpose(1, 0, 2, 3))  # (T, B, 2, d)
    rew = chain.r.astype(npdt)[transitions.cur].T.copy()  # (T, B)
    alpha = np.ascontiguousarray(np.broadcast_to(schedule.alpha, (B, T)).T, dtype=npdt)  # (T, B)
    weight = np.ascontiguousarray(np.broadcast_to(schedule.weight, (B, T)).T, dtype=npdt)
    s = np.ones(B, dtype=npdt)
    n2 = np.zeros(B, dtype=npdt)  # ||theta_t - theta_0||^2
    wsum = np.zeros(B, dtype=np.float64)
    phi, mu = as_tensor(chain.phi, dtype), as_tensor(chain.mu, dtype)
    qref = as_tensor(q_ref, dtype)
    cks = set(int(c) for c in checkpoints)
    err, last, dev, q_avg = [], [], [], None

    for t in range(T):
        np.copyto(post_n[0], X[t])
        for layer in range(L):  # forward: h_l = x^(l-1) W0_l^T + s D_l x^(l-1)
            torch.bmm(post_t[layer], DT_t[layer], out=hd_t[layer])
            hd = hd_n[layer]
            hd *= s[:, None, None]  # s D_l x^(l-1)
            torch.mm(post2[layer], W0T[layer], out=h_t[layer])  # torch, not numpy: one thread
            h = h_n[layer].reshape(B, 2, m)
            h += hd
            np.copyto(v_n[layer], post_n[layer][:, 0])
            mask = h[:, 0] > 0
            if layer + 1 < L:
                np.maximum(h, 0, out=post_n[layer + 1])
                post_n[layer + 1] *= scale
            else:
                q = (np.maximum(h, 0) * bsc).sum(-1)  # (B, 2) = b^T x^(L)  (no BLAS call: no thread pool)
            delta_n[layer] = mask
        td = rew[t] + chain.gamma * q[:, 1] - q[:, 0]  # (B,) TD error delta_t
        a = alpha[t] * td  # theta += a * grad Q(x_t)
        coef = a / s
        inner = np.zeros(B, dtype=npdt)
        gsq = np.zeros(B, dtype=npdt)
        g = None
        for layer in range(L - 1, -1, -1):  # backward: delta_l = dQ/dh_l
            if g is None:
                np.multiply(delta_n[layer], bsc, out=u_n[layer])
            else:
                np.multiply(g, delta_n[layer], out=u_n[layer])
                u_n[layer] *= scale
            if layer:
                torch.bmm(d1[layer], D_t[layer], out=Dt_t[layer])
                torch.mm(u_t[layer], W0[layer], out=g_t[layer])
                g = g_n[layer] + s[:, None] * Dt_n[layer][:, 0]  # dQ/dx^(l-1)
            u = u_n[layer]
            inner += (u * hd_n[layer][:, 0]).sum(1)
            gsq += (u * u).sum(1) * (v_n[layer] * v_n[layer]).sum(1)
        n2 = np.maximum(n2 + 2 * a * inner + a * a * gsq, 0)
        for layer in range(L):  # D_l += (a / s) delta_l v_l^T
            u_n[layer] *= coef[:, None]
            D_t[layer].baddbmm_(u3[layer], v3[layer])
        shrink = np.minimum(omega / np.maximum(np.sqrt(n2), 1e-30), 1.0)  # projection onto the ball
        s *= shrink
        n2 *= shrink * shrink
        np.multiply(weight[t], s, out=c_n)
        for layer in range(L):  # sum_t w_t (theta_t - theta_0) += w_t s_t D_t
            A_t[layer].addcmul_(D_t[layer], c3)
        wsum += weight[t]
        if s.min() < 1e-3 or t + 1 in cks:  # fold s into D (keeps D bounded)
            for Dn in D_n:
                Dn *= s[:, None, None]
            s[:] = 1.0
        if t + 1 in cks:
            n2 = sum((Dn.astype(np.float64) ** 2).sum((1, 2)) for Dn in D_n).astype(npdt)  # exact resync
            x_all = phi.expand(B, -1, -1)  # (B, N, d)
            wt = torch.as_tensor(wsum, dtype=dtype)[:, None, None]
            Wbar = tuple(w + a_ / wt for w, a_ in zip(net0.W, A_t))
            Wlast = tuple(w + d for w, d in zip(net0.W, D_t))
            qb = forward(Network(Wbar, net0.b), x_all).q  # (B, N)
            ql = forward(Network(Wlast, net0.b), x_all).q
            err.append(mu_error(qb, qref, mu))
            last.append(mu_error(ql, qref, mu))
            dev.append(torch.as_tensor(np.sqrt(n2)))
            q_avg = qb
    def stack(xs: list[torch.Tensor]) -> np.ndarray:
        return torch.stack(xs, dim=1).double().numpy()  # (B, C)

    return TDTrace(np.asarray(sorted(cks)), stack(err), stack(last), stack(dev),
                   cast(torch.Tensor, q_avg).double().numpy())  # set at the checkpoints


def neural_td_naive(net0: Network, chain: PairChain, transitions: Transitions, schedule: Schedule,
                    omega: float, checkpoints: np.ndarray, q_ref: np.ndarray) -> TDTrace:
    """Literal Algorithm 1, one chain at a time, explicit parameters and projection (reference for tests)."""
    dtype = net0.b.dtype
    B, T = transitions.cur.shape
    phi, mu = as_tensor(chain.phi, dtype), as_tensor(chain.mu, dtype)
    qref = as_tensor(q_ref, dtype)
    alpha = np.broadcast_to(schedule.alpha, (B, T))
    weight = np.broadcast_to(schedule.weight, (B, T))
    cks = [int(c) for c in checkpoints]
    err, last, dev = (np.zeros((B, len(cks))) for _ in range(3))
    qa = np.zeros((B, chain.n))
    for i in range(B):
        W = [w.clone() for w in net0.W]
        acc = [torch.zeros_like(w) for w in W]
        wsum, c = 0.0, 0
        for t in range(T):
            x, y = transitions.cur[i, t], transitions.nxt[i, t]
            q = forward(Network(tuple(W), net0.b), phi[[x, y]]).q
            td = chain.r[x] + chain.gamma * q[1] - q[0]
            grads = param_grads(Network(tuple(W), net0.b), phi[[x]])
            W = [w + alpha[i, t] * td * g[0] for w, g in zip(W, grads)]
            nrm = math.sqrt(sum(float(((w - w0) ** 2).sum()) for w, w0 in zip(W, net0.W)))
            if nrm > omega:
                W = [w0 + (w - w0) * (omega / nrm) for w, w0 in zip(W, net0.W)]
            acc = [a + weight[i, t] * w for a, w in zip(acc, W)]
            wsum += weight[i, t]
            if t + 1 in cks:
                qb = forward(Network(tuple(a / wsum for a in acc), net0.b), phi).q
                ql = forward(Network(tuple(W), net0.b), phi).q
                err[i, c], last[i, c] = float(mu_error(qb, qref, mu)), float(mu_error(ql, qref, mu))
                dev[i, c] = math.sqrt(sum(float(((w - w0) ** 2).sum()) for w, w0 in zip(W, net0.W)))
                qa[i] = qb.double().numpy()
                c += 1
    return TDTrace(np.asarray(cks), err, last, dev, qa)


# ---------------------------------------------------------------- the mean path (T -> infinity limit)
class ExpectedTD(NamedTuple):
    """Limit of projected neural TD with exact expected updates (no sampling noise).

    Attributes:
        net: the averaged parameters of the second half of the iterations.
        q: (N,) ``Q(x; theta_bar)`` over all pairs.
        last_change: ``||theta_K - theta_{K-1}||`` of the final iteration (0 at a fixed point; a ReLU
            network can also end in a small cycle, which the average smooths out).
    """

    net: Network
    q: np.ndarray
    last_change: float


def expected_neural_td(net0: Network, chain: PairChain, omega: float, alpha: float, n_iter: int) -> ExpectedTD:
    """Deterministic projected neural TD with the mean update ``E_mu[delta(x) grad Q(x)]``, averaged.

    ``theta <- Pi_B[theta + alpha sum_x mu(x) (r(x) + gamma (P Q)(x) - Q(x)) grad Q(x; theta)]``, then the
    parameters of iterations ``n_iter/2 .. n_iter`` are averaged (as the algorithm's output is). This is
    where the averaged iterate of the stochastic algorithm settles as T -> infinity: its distance from
    ``Q_ref`` is the width-dependent floor of the paper's bound.
    """
    dtype = net0.b.dtype
    phi, r, mu = as_tensor(chain.phi, dtype), as_tensor(chain.r, dtype), as_tensor(chain.mu, dtype)
    P = as_tensor(chain.P, dtype)
    W = [w.clone() for w in net0.W]
    acc = [torch.zeros_like(w) for w in W]
    n_avg = 0
    change = math.inf
    for k in range(n_iter):
        net = Network(tuple(W), net0.b)
        fw = forward(net, phi)
        coef = mu * (r + chain.gamma * (P @ fw.q) - fw.q)  # (N,) mu(x) delta(x)
        new = [w + alpha * (d * coef[:, None]).T @ v for w, d, v in zip(W, backward(net, fw), fw.post[:-1])]
        nrm = math.sqrt(sum(float(((w - w0) ** 2).sum()) for w, w0 in zip(new, net0.W)))
        if nrm > omega:
            new = [w0 + (w - w0) * (omega / nrm) for w, w0 in zip(new, net0.W)]
        change = math.sqrt(sum(float(((a - b) ** 2).sum()) for a, b in zip(new, W)))
        W = new
        if 2 * (k + 1) > n_iter:
            acc = [a + w for a, w in zip(acc, W)]
            n_avg += 1
    net = Network(tuple(a / n_avg for a in acc), net0.b)
    return ExpectedTD(net, forward(net, phi).q.double().numpy(), change)

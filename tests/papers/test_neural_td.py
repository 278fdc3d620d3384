"""Tests of neural TD (Ke, Wen & Zhang, ICML 2024): exact MDP quantities, network gradients and NTK,
the linearised projected fixed point, the projection, and the vectorised runner against Algorithm 1."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from icml24.core.testing import check_config_rule
from icml24.papers.neural_td.algorithm import (
    Schedule,
    Transitions,
    earlier_schedule,
    expected_neural_td,
    iid_transitions,
    markov_transitions,
    neural_td,
    neural_td_naive,
    theory_schedule,
)
from icml24.papers.neural_td.components import (
    Network,
    PairChain,
    as_tensor,
    bellman_q,
    forward,
    init_network,
    linearized_fixed_point,
    mu_error,
    ntk_gram,
    param_grads,
    random_pair_chain,
    sigma_spectrum,
    stationary_distribution,
)

F64 = torch.float64


@pytest.fixture(autouse=True)
def one_thread():
    """The runners are call-overhead bound: extra intra-op threads only add contention."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def small_chain(seed: int = 0, S: int = 4, A: int = 2, d: int = 5, gamma: float = 0.6) -> PairChain:
    return random_pair_chain(S, A, d, gamma, np.random.default_rng(seed), concentration=3.0)


def net64(d: int, m: int, L: int, seed: int = 0) -> Network:
    return init_network(d, m, L, torch.Generator().manual_seed(seed), F64)


def jacobian(net: Network, x: torch.Tensor) -> torch.Tensor:
    """Explicit Phi (k, p) by autograd, one row per input."""
    rows = []
    for i in range(x.shape[0]):
        W = [w.clone().requires_grad_(True) for w in net.W]
        q = forward(Network(tuple(W), net.b), x[i:i + 1]).q.sum()
        rows.append(torch.cat([g.reshape(-1) for g in torch.autograd.grad(q, W)]))
    return torch.stack(rows)


# ---------------------------------------------------------------- exact MDP quantities
def test_bellman_by_hand():
    # one pair, self loop: Q = r / (1 - gamma)
    assert bellman_q(np.array([[1.0]]), np.array([2.0]), 0.75)[0] == pytest.approx(8.0)
    # two pairs that swap: Q1 = r1 + g Q2, Q2 = r2 + g Q1  =>  Q1 = (r1 + g r2) / (1 - g^2)
    g, r1, r2 = 0.5, 1.0, 3.0
    q = bellman_q(np.array([[0.0, 1.0], [1.0, 0.0]]), np.array([r1, r2]), g)
    assert q == pytest.approx([(r1 + g * r2) / (1 - g * g), (r2 + g * r1) / (1 - g * g)])


def test_random_chain_is_consistent():
    c = small_chain()
    assert np.allclose(c.P.sum(1), 1) and (c.P >= 0).all()
    assert np.allclose(c.q_pi, c.r + c.gamma * c.P @ c.q_pi)  # Bellman equation
    assert np.allclose(np.linalg.norm(c.phi, axis=1), 1)  # ||x|| = 1


def test_stationary_distribution_matches_power_iteration():
    c = small_chain(1)
    mu = np.full(c.n, 1.0 / c.n)
    for _ in range(2000):
        mu = mu @ c.P
    assert np.allclose(stationary_distribution(c.P), mu, atol=1e-12)
    assert np.allclose(c.mu @ c.P, c.mu) and c.mu.sum() == pytest.approx(1.0)


def test_sampling_frequencies():
    c = small_chain(2)
    rng = np.random.default_rng(0)
    mk = markov_transitions(c.P, c.mu, 20_000, 2, rng)
    assert (mk.nxt[:, :-1] == mk.cur[:, 1:]).all()  # one trajectory: x'_t = x_{t+1}
    freq = np.bincount(mk.cur.ravel(), minlength=c.n) / mk.cur.size
    assert np.abs(freq - c.mu).max() < 0.02  # ergodic theorem
    iid = iid_transitions(c.P, c.mu, 20_000, 1, rng)
    pair = np.zeros((c.n, c.n))
    np.add.at(pair, (iid.cur.ravel(), iid.nxt.ravel()), 1.0)
    assert np.abs(pair / iid.cur.size - c.mu[:, None] * c.P).max() < 0.01  # (x, x') ~ mu(x) P(x, x')


# ---------------------------------------------------------------- network, gradients, NTK
@pytest.mark.parametrize("L", [1, 2, 3])
def test_param_grads_match_autograd(L):
    net = net64(5, 7, L, seed=L)
    x = as_tensor(small_chain().phi, F64)
    J = jacobian(net, x)
    mine = torch.cat([g.reshape(x.shape[0], -1) for g in param_grads(net, x)], dim=1)
    assert torch.allclose(mine, J, atol=1e-12)


def test_forward_gradcheck_and_finite_difference():
    net = net64(3, 6, 2, seed=3)
    x = torch.nn.functional.normalize(torch.randn(4, 3, dtype=F64, generator=torch.Generator().manual_seed(1)), dim=1)
    assert torch.autograd.gradcheck(lambda W1, W2: forward(Network((W1, W2), net.b), x).q,
                                    tuple(w.clone().requires_grad_(True) for w in net.W))
    # central finite difference of Q(x_0) along a random direction vs <grad, direction>
    g = param_grads(net, x[:1])
    dirs = [torch.randn(w.shape, dtype=F64, generator=torch.Generator().manual_seed(7)) for w in net.W]
    eps = 1e-6
    plus = forward(Network(tuple(w + eps * d for w, d in zip(net.W, dirs)), net.b), x[:1]).q
    minus = forward(Network(tuple(w - eps * d for w, d in zip(net.W, dirs)), net.b), x[:1]).q
    assert float((plus - minus) / (2 * eps)) == pytest.approx(float(sum((gi[0] * d).sum() for gi, d in zip(g, dirs))),
                                                               rel=1e-6)


def test_scaling_of_the_network():
    # x^(l) = relu(W x^(l-1)) / sqrt(m): with W = I, x = (3, 1): q = b^T (3, 1) / 2
    net = Network((torch.eye(2, dtype=F64), torch.eye(2, dtype=F64)), torch.tensor([1.0, 1.0], dtype=F64))
    assert float(forward(net, torch.tensor([[3.0, 1.0]], dtype=F64)).q) == pytest.approx(2.0)
    # at initialisation K(x, x) = ||grad Q||^2 concentrates near L / 2^L... stays O(1) as m grows
    for m in (256, 2048):
        k = ntk_gram(init_network(4, m, 2, torch.Generator().manual_seed(0), F64),
                     as_tensor(small_chain().phi[:, :4] / np.linalg.norm(small_chain().phi[:, :4], axis=1,
                                                                      keepdims=True), F64)).diagonal()
        assert 0.2 < float(k.mean()) < 1.2


def test_ntk_gram_matches_explicit_jacobian():
    net = net64(5, 6, 3, seed=1)
    x = as_tensor(small_chain().phi, F64)
    J = jacobian(net, x)
    assert torch.allclose(ntk_gram(net, x), J @ J.T, atol=1e-12)


def test_sigma_spectrum_is_nonzero_spectrum_of_feature_covariance():
    c = small_chain(3)
    net = net64(5, 4, 2, seed=2)  # p = 4*5 + 16 = 36 parameters, N = 8 pairs
    J = jacobian(net, as_tensor(c.phi, F64)).numpy()
    sigma = J.T @ np.diag(c.mu) @ J  # (p, p), rank <= N
    ev = np.linalg.eigvalsh(sigma)
    spec = sigma_spectrum(J @ J.T, c.mu)
    assert spec.rank == np.sum(ev > 1e-9 * ev.max()) <= c.n
    assert spec.lambda_min_pos == pytest.approx(ev[ev > 1e-9 * ev.max()].min(), rel=1e-8)


# ---------------------------------------------------------------- linearised projected fixed point
@pytest.mark.parametrize("m,rank", [(3, 7), (8, 8)])
def test_linearized_fixed_point_solves_its_linear_system(m, rank):
    c = small_chain(4)
    net = net64(5, m, 2, seed=4)  # m = 3: dead units make Phi rank-deficient (Sigma_pi has a kernel)
    x = as_tensor(c.phi, F64)
    Phi = jacobian(net, x).numpy()  # (N, p)
    q0 = forward(net, x).q.numpy()
    fp = linearized_fixed_point(c, Phi @ Phi.T, q0)  # omega = inf
    w = Phi.T @ fp.c
    D = np.diag(c.mu)
    A = Phi.T @ D @ (np.eye(c.n) - c.gamma * c.P) @ Phi  # A w = b (linear TD fixed point)
    b = Phi.T @ D @ (c.r - (np.eye(c.n) - c.gamma * c.P) @ q0)
    assert np.allclose(A @ w, b, atol=1e-10)
    assert np.allclose(fp.q, q0 + Phi @ w) and fp.nu == 0.0
    assert np.linalg.matrix_rank(Phi) == rank == sigma_spectrum(Phi @ Phi.T, c.mu).rank
    if rank == c.n:  # rank(Phi) = N: the projected Bellman equation is the Bellman equation, Q_ref = Q^pi
        assert np.allclose(fp.q, c.q_pi, atol=1e-8)
    else:  # otherwise Q_ref is only the projection's fixed point, not Q^pi
        assert mu_error(fp.q, c.q_pi, c.mu) > 1e-6


def test_projected_fixed_point_is_the_limit_of_projected_linear_td():
    c = small_chain(5)
    net = net64(5, 8, 2, seed=5)
    x = as_tensor(c.phi, F64)
    Phi = jacobian(net, x).numpy()
    q0 = forward(net, x).q.numpy()
    omega = 0.3
    fp = linearized_fixed_point(c, Phi @ Phi.T, q0, omega)
    assert fp.free_norm > omega and fp.nu > 0 and fp.norm == pytest.approx(omega, rel=1e-9)
    # deterministic projected linear TD in parameter space converges to the same point
    D, w = np.diag(c.mu), np.zeros(Phi.shape[1])
    eta = 0.5 / np.linalg.eigvalsh(Phi.T @ D @ Phi).max()
    for _ in range(20_000):
        w = w + eta * Phi.T @ D @ (c.r + c.gamma * c.P @ (q0 + Phi @ w) - (q0 + Phi @ w))
        w *= min(1.0, omega / np.linalg.norm(w))
    assert np.allclose(q0 + Phi @ w, fp.q, atol=1e-8)
    assert np.allclose(w, Phi.T @ fp.c, atol=1e-8)


# ---------------------------------------------------------------- schedules and runners
def test_schedules():
    s = theory_schedule(5, lam=0.1, alpha_max=0.5, beta_mult=2.0)  # beta = 20, t0 = 40
    assert s.alpha[0] == pytest.approx(0.5) and s.alpha[4] == pytest.approx(20 / 44)
    assert np.allclose(s.weight, 40 + np.arange(5))
    e = earlier_schedule(100, 2.0)
    assert np.allclose(e.alpha, 0.2) and np.allclose(e.weight, 1.0)


@pytest.mark.parametrize("L,sampler,omega", [(2, "markov", 0.3), (3, "iid", 0.2), (2, "markov", 50.0)])
def test_vectorised_runner_equals_literal_algorithm(L, sampler, omega):
    c = small_chain(6)
    net = net64(5, 6, L, seed=6)
    rng = np.random.default_rng(0)
    T = 60
    tr = (markov_transitions if sampler == "markov" else iid_transitions)(c.P, c.mu, T, 3, rng)
    sched = Schedule(np.stack([theory_schedule(T, 0.05, 0.8).alpha, earlier_schedule(T, 1.0).alpha,
                               np.full(T, 0.3)]), np.stack([np.arange(T) + 5.0, np.ones(T), np.ones(T)]))
    cks = np.array([7, 30, 60])
    fast = neural_td(net, c, tr, sched, omega, cks, c.q_pi)
    slow = neural_td_naive(net, c, tr, sched, omega, cks, c.q_pi)
    for name in ("error", "last_error", "dev_norm", "q_avg"):
        assert np.allclose(getattr(fast, name), getattr(slow, name), rtol=1e-9, atol=1e-12), name


def test_projection_keeps_iterates_in_the_ball():
    c = small_chain(7)
    net = init_network(5, 32, 2, torch.Generator().manual_seed(0))  # float32, the experiment's dtype
    tr = markov_transitions(c.P, c.mu, 400, 4, np.random.default_rng(1))
    omega = 0.25
    res = neural_td(net, c, tr, Schedule(np.full(400, 0.5), np.ones(400)), omega, np.arange(20, 401, 20), c.q_pi)
    assert res.dev_norm.max() <= omega * (1 + 1e-5)
    assert res.dev_norm[:, -1].min() > 0.9 * omega  # the ball is active here (Q^pi is far)


def test_expected_td_reaches_q_pi_when_the_ball_is_inactive():
    # overparameterised network, rank(Phi) = N: any interior TD stationary point satisfies Q = T Q
    c = small_chain(8, S=3, A=2, d=6, gamma=0.5)
    net = net64(6, 32, 2, seed=8)
    K = ntk_gram(net, as_tensor(c.phi, F64)).numpy()
    lam_max = sigma_spectrum(K, c.mu).eigvals.max()
    lim = expected_neural_td(net, c, omega=1e3, alpha=0.5 / lam_max, n_iter=1500)
    assert mu_error(forward(net, as_tensor(c.phi, F64)).q.numpy(), c.q_pi, c.mu) > 0.1  # far at theta_0
    assert mu_error(lim.q, c.q_pi, c.mu) < 1e-8
    assert lim.last_change < 1e-6


def test_averaged_error_decreases_along_the_run():
    c = small_chain(9)
    net = init_network(5, 16, 2, torch.Generator().manual_seed(9))
    T = 3000
    tr = Transitions(*markov_transitions(c.P, c.mu, T, 4, np.random.default_rng(2)))
    K = ntk_gram(net, as_tensor(c.phi)).double().numpy()
    ref = linearized_fixed_point(c, K, forward(net, as_tensor(c.phi)).q.double().numpy(), 0.5)
    lam = (1 - c.gamma) * sigma_spectrum(K, c.mu).lambda_min_pos
    res = neural_td(net, c, tr, theory_schedule(T, lam, 0.5 / K.diagonal().max()), 0.5,
                    np.array([100, 300, 1000, T]), ref.q)
    mean = res.error.mean(0)  # E over 4 chains
    assert (np.diff(mean) < 0).all() and mean[-1] < 0.5 * mean[0]
    assert np.isfinite(res.error).all() and math.isfinite(float(res.q_avg.sum()))


@pytest.mark.slow
def test_quick_seed_runs_and_measures_every_claim_metric():
    from icml24.papers.neural_td.claims import CLAIMS
    from icml24.papers.neural_td.experiment import QUICK, run

    res = run(QUICK, 0)
    for claim in CLAIMS:
        for name in claim.needs:
            vals = res.curves[name] if name in res.curves else [res.metrics[name]]
            assert np.all(np.isfinite(vals)), name


@pytest.mark.parametrize("preset, overrides, field", [
    ("SMOKE", [], None), ("QUICK", [], None), ("FULL", [], None),
    ("SMOKE", ["n_chains=0"], "n_chains"), ("SMOKE", ["n_states=1", "n_actions=1"], "n_states"),
    ("SMOKE", ["gamma=1.5"], "gamma"), ("SMOKE", ["gamma=1"], "gamma"), ("SMOKE", ["omega=0"], "omega"),
    ("SMOKE", ["widths=32,16,8"], "widths"), ("SMOKE", ["t_first=500"], "t_first"),
    ("SMOKE", ["fit_from=300"], "fit_from"), ("SMOKE", ["earlier_horizons="], "earlier_horizons"),
    ("SMOKE", ["floor_iters=0"], "floor_iters"), ("SMOKE", ["concentration=0"], "concentration"),
])
def test_config_rules(preset, overrides, field):
    from icml24.papers.neural_td import experiment as ex

    check_config_rule(getattr(ex, preset), overrides, ex.validate, field)

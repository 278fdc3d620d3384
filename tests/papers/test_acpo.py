"""ACPO: exact ACMDP quantities, the performance-difference identity, CG, the trust-region dual's KKT
conditions, the advantage estimators, and the update rules on tiny problems."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.optimize import minimize

from icml24.common.rl import collect
from icml24.papers.acpo.algorithm import (
    Batch,
    MLPCritic,
    TabularSoftmaxPolicy,
    TrustRegionConfig,
    conjugate_gradient,
    fisher_vector_product,
    pcpo_step,
    trust_region_step,
    trust_region_update,
)
from icml24.papers.acpo.cmdp import (
    CMDP,
    TabularCMDPEnv,
    averages,
    delayed_cost_cmdp,
    evaluate,
    optimum,
    random_cmdp,
    slow_mixing_cmdp,
    stationary,
)
from icml24.papers.acpo.config import QUICK
from icml24.papers.acpo.experiment import Learner, train_tabular
from icml24.papers.acpo.point_circle import PointCircleEnv


def _two_state() -> CMDP:
    P = np.zeros((2, 2, 2))
    P[0, 0, 0] = P[1, 0, 1] = P[0, 1, 1] = P[1, 1, 0] = 1.0    # action 0 stays, action 1 switches
    r = np.array([[1.0, 1.0], [0.0, 0.0]])
    return CMDP(P, r, 1.0 - r, 0.25)


def test_two_state_chain_by_hand():
    # switch with probability p in state 0 and q in state 1: d = (q, p) / (p + q), J = q / (p + q);
    # the bias solves V(0) - V(1) = (1 - J - (-J)) / (p + q) = 1 / (p + q)
    p, q = 0.2, 0.6
    pi = np.array([[1 - p, p], [1 - q, q]])
    ev = evaluate(_two_state(), pi)
    assert ev.d == pytest.approx([q / (p + q), p / (p + q)], abs=1e-12)
    assert ev.J == pytest.approx(0.75, abs=1e-12) and ev.J_C == pytest.approx(0.25, abs=1e-12)
    assert ev.V[0] - ev.V[1] == pytest.approx(1 / (p + q), abs=1e-12)
    assert ev.d @ ev.V == pytest.approx(0.0, abs=1e-12)
    # Abar(0, switch) = Qbar(0, 1) - V(0) = (1 - J + V(1)) - V(0)
    assert ev.A[0, 1] == pytest.approx(1 - 0.75 + ev.V[1] - ev.V[0], abs=1e-12)
    assert (pi * ev.A).sum(1) == pytest.approx([0.0, 0.0], abs=1e-12)          # E_{a ~ pi} Abar = 0


def test_stationary_distribution_is_invariant():
    m = random_cmdp(np.random.default_rng(3), 7, 3, 0.5)
    pi = np.random.default_rng(4).dirichlet(np.ones(3), size=7)
    d = evaluate(m, pi).d
    P_pi = np.einsum("sa,sat->st", pi, m.P)
    assert d @ P_pi == pytest.approx(d, abs=1e-12) and d.sum() == pytest.approx(1.0) and np.all(d > 0)
    assert stationary(P_pi) == pytest.approx(d)


def test_average_reward_matches_a_long_simulation():
    m = random_cmdp(np.random.default_rng(5), 6, 2, 0.5)
    pi = np.full((6, 2), 0.5)
    env = TabularCMDPEnv(m, 200, np.random.default_rng(6))
    obs, _ = env.reset()
    rng = np.random.default_rng(7)
    ro = collect(env, lambda s: rng.integers(2, size=len(s)), obs, 500)
    ev = evaluate(m, pi)
    se = ro.rewards.mean(0).std() / math.sqrt(200)          # chains are independent
    assert abs(ro.rewards.mean() - ev.J) < 5 * se + 0.01
    assert abs(ro.costs.mean() - ev.J_C) < 5 * ro.costs.mean(0).std() / math.sqrt(200) + 0.01


def test_performance_difference_identity_is_exact():
    """J(pi') - J(pi) = E_{s ~ d_pi', a ~ pi'}[Abar^pi(s, a)] (ACPO Lemma 3.1), for reward and cost."""
    rng = np.random.default_rng(11)
    m = random_cmdp(rng, 8, 3, 0.5)
    pi, pi2 = rng.dirichlet(np.ones(3), size=8), rng.dirichlet(np.ones(3), size=8)
    ev, ev2 = evaluate(m, pi), evaluate(m, pi2)
    assert ev2.J - ev.J == pytest.approx(float(ev2.d @ (pi2 * ev.A).sum(1)), abs=1e-12)
    assert ev2.J_C - ev.J_C == pytest.approx(float(ev2.d @ (pi2 * ev.A_C).sum(1)), abs=1e-12)


def test_occupancy_lp_optimum_is_achieved_by_its_policy_and_beats_random_policies():
    rng = np.random.default_rng(2)
    m = random_cmdp(rng, 6, 3, 0.5)
    opt = optimum(m)
    ev = evaluate(m, opt.policy)
    assert ev.J == pytest.approx(opt.J, abs=1e-7) and ev.J_C <= m.limit + 1e-7
    for pi in rng.dirichlet(np.ones(3), size=(300, 6)):
        e = evaluate(m, pi)
        if e.J_C <= m.limit:
            assert e.J <= opt.J + 1e-9
    # the limit binds: the unconstrained optimum is infeasible and better
    free = optimum(m, constrained=False)
    assert free.J > opt.J and free.J_C > m.limit
    assert optimum(m, constrained=False, sense="min").J <= min(opt.J, free.J)


@pytest.mark.parametrize("make", [lambda: delayed_cost_cmdp(5, 0.5), lambda: slow_mixing_cmdp(0.05, 0.5)])
def test_misleading_instances_are_ergodic_with_a_binding_limit(make):
    m = make()
    assert np.allclose(m.P.sum(-1), 1.0) and np.all(m.P > 0)
    free = optimum(m, constrained=False)
    assert free.J_C > m.limit > -optimum(m._replace(r=-m.c), constrained=False).J


def _timer_policy(S: int, p_spend: float, borrow: bool) -> np.ndarray:
    pi = np.zeros((S, 3))
    pi[:, 0], pi[:, 1] = 1 - p_spend, p_spend
    if borrow:
        pi[0] = (0.0, 0.0, 1.0)
    return pi


@pytest.mark.parametrize("make, total, period", [(lambda: delayed_cost_cmdp(4, 0.5, eps=1e-12), 5, 5),
                                                 (lambda: slow_mixing_cmdp(0.25, 0.5, eps=1e-12), 4, 5)])
def test_borrowing_costs_its_total_at_the_paid_rate_and_is_the_worse_use_of_the_budget(make, total, period):
    m = make()
    # always borrowing: one borrowing per cycle of `period` steps (1 + delay, or 1 + 1 / switch in expectation),
    # each costing `total` (delay + 1, or 1 / switch) and paying 0.45 total at once
    ev = evaluate(m, _timer_policy(m.n_states, 0.0, borrow=True))
    assert ev.J_C == pytest.approx(total / period, abs=1e-6) and ev.J == pytest.approx(0.45 * total / period, abs=1e-6)
    # spending everywhere with probability 1/2: J = 0.6 / 2, J_C = 1 / 2 per step
    ev = evaluate(m, _timer_policy(m.n_states, 0.5, borrow=False))
    assert ev.J == pytest.approx(0.3, abs=1e-6) and ev.J_C == pytest.approx(0.5, abs=1e-6)
    # the constrained optimum spends and never borrows (0.6 > 0.45 reward per unit of cost)
    opt = optimum(m)
    assert opt.policy[0, 2] < 1e-6 and opt.J == pytest.approx(0.6 * m.limit, rel=1e-4)


def test_discounting_shrinks_the_borrowed_cost_as_the_docstring_says():
    # the discounted cost of one borrowing seen from the ready state: gamma^delay (delay + 1) for the delayed
    # instance, and gamma / (1 - gamma (1 - switch)) for the debt (exact discounted evaluation, no noise)
    def discounted_cost_of_borrowing(m, gamma):
        pi = _timer_policy(m.n_states, 0.0, borrow=False)
        P_pi = np.einsum("sa,sat->st", pi, m.P)
        c_pi = (pi * m.c).sum(1)
        V = np.linalg.solve(np.eye(m.n_states) - gamma * P_pi, c_pi)
        return m.c[0, 2] + gamma * m.P[0, 2] @ V - V[0]
    d = delayed_cost_cmdp(150, 0.5, eps=1e-12)
    assert discounted_cost_of_borrowing(d, 0.99) == pytest.approx(0.99 ** 150 * 151, rel=1e-6)
    sw = slow_mixing_cmdp(0.005, 0.5, eps=1e-12)
    assert discounted_cost_of_borrowing(sw, 0.99) == pytest.approx(0.99 / (1 - 0.99 * 0.995), rel=1e-6)


def test_conjugate_gradient_solves_the_fisher_system():
    torch.manual_seed(0)
    policy = TabularSoftmaxPolicy(5, 3, torch.randn(5, 3))
    obs = torch.randint(0, 5, (400,))
    old = policy.freeze(obs)
    fvp = fisher_vector_product(policy, obs, old, damping=1e-3)
    n = 15
    H = torch.stack([fvp(e) for e in torch.eye(n, dtype=torch.float64)])      # (n, n) explicit (H + damping I)
    assert torch.allclose(H, H.T, atol=1e-10)
    # the Fisher matrix of a softmax row: F = counts/M * (diag(p) - p p^T) per state block
    counts = torch.bincount(obs, minlength=5).double() / len(obs)
    p = policy.table()
    F = torch.block_diag(*[counts[s] * (torch.diag(p[s]) - torch.outer(p[s], p[s])) for s in range(5)])
    assert torch.allclose(H, F + 1e-3 * torch.eye(n, dtype=torch.float64), atol=1e-10)
    # the closed form the tabular policy takes equals double backpropagation through the KL
    from icml24.papers.acpo.algorithm import autograd_fisher_vector_product

    slow = autograd_fisher_vector_product(policy, obs, old, damping=1e-3)
    H_autograd = torch.stack([slow(e) for e in torch.eye(n, dtype=torch.float64)])
    assert torch.allclose(H, H_autograd, atol=1e-12)
    b = torch.randn(n, dtype=torch.float64)
    x = conjugate_gradient(fvp, b, iters=200, tol=1e-24)
    assert torch.linalg.norm(fvp(x) - b) < 1e-8 * torch.linalg.norm(b)


def test_tabular_log_prob_and_kl_equal_the_categorical_distributions():
    # the per-state forms the tabular policy overrides equal torch's Categorical per sample, with gradients
    torch.manual_seed(1)
    policy = TabularSoftmaxPolicy(6, 3, torch.randn(6, 3))
    obs, acts = torch.randint(0, 6, (500,)), torch.randint(0, 3, (500,))
    old_table, old_dist = policy.freeze(obs), policy.dist(obs)
    with torch.no_grad():
        policy.logits.add_(0.3 * torch.randn(6, 3, dtype=torch.float64))
    adv = torch.randn(500, dtype=torch.float64)
    ours = (policy.log_prob(obs, acts).exp() * adv).mean()
    ref = (policy.dist(obs).log_prob(acts).exp() * adv).mean()
    g_ours, g_ref = torch.autograd.grad(ours, policy.logits)[0], torch.autograd.grad(ref, policy.logits)[0]
    assert torch.allclose(ours, ref, atol=1e-14) and torch.allclose(g_ours, g_ref, atol=1e-14)
    with torch.no_grad():
        kl_ours, kl_ref = policy.mean_kl(old_table, obs), torch.distributions.kl_divergence(old_dist, policy.dist(obs))
    assert float(kl_ours) == pytest.approx(float(kl_ref.mean()), abs=1e-14) and float(kl_ours) > 1e-3


def test_tabular_rollout_draws_what_collect_draws_through_the_vector_api():
    m = delayed_cost_cmdp(7, 0.5)
    pi = np.random.default_rng(0).dirichlet(np.ones(3), size=m.n_states)
    fast, slow = TabularCMDPEnv(m, 16, np.random.default_rng(1)), TabularCMDPEnv(m, 16, np.random.default_rng(1))
    fast.reset()
    obs, _ = slow.reset()
    cdf = np.cumsum(pi, axis=1)

    def act(s: np.ndarray) -> np.ndarray:                   # inverse CDF from the environment's own rng
        return np.minimum((slow.rng.random(len(s))[:, None] > cdf[s]).sum(1), 2)

    for _ in range(3):                                      # continuing: each rollout goes on from the last
        a, b = fast.rollout(pi, 25), collect(slow, act, obs, 25)
        obs = b.last_obs
        for x, y in zip(a, b):
            assert x.shape == y.shape and np.array_equal(x, y)


def test_averages_are_what_evaluate_returns():
    m = random_cmdp(np.random.default_rng(8), 9, 3, 0.5)
    pi = np.random.default_rng(9).dirichlet(np.ones(3), size=9)
    av, ev = averages(m, pi), evaluate(m, pi)
    assert av.J == ev.J and av.J_C == ev.J_C and np.array_equal(av.d, ev.d)


def test_mlp_critic_heads_fitted_together_follow_their_separate_fits_exactly():
    obs, target = torch.randn(300, 4), torch.randn(2, 300)
    torch.manual_seed(0)
    joint = MLPCritic(4, 8, heads=2, iters=5)
    torch.manual_seed(0)
    alone = [MLPCritic(4, 8, iters=5), MLPCritic(4, 8, iters=5)]
    for _ in range(3):
        joint.fit(obs, target)
        for i, critic in enumerate(alone):
            critic.fit(obs, target[i:i + 1])
    assert torch.equal(joint(obs), torch.cat([critic(obs) for critic in alone]))


def _kkt_problem(seed: int, c: float):
    g = torch.Generator().manual_seed(seed)
    M = torch.randn(4, 4, dtype=torch.float64, generator=g)
    H = M @ M.T + 0.5 * torch.eye(4, dtype=torch.float64)
    gr = torch.randn(4, dtype=torch.float64, generator=g)
    b = torch.randn(4, dtype=torch.float64, generator=g)
    Hi = torch.linalg.inv(H)
    return H, gr, b, Hi @ gr, Hi @ b, c


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("c", [-0.3, -0.05, 0.0, 0.05])
def test_dual_step_satisfies_kkt_and_matches_a_generic_solver(seed, c):
    H, g, b, v, w, c = _kkt_problem(seed, c)
    delta = 0.02
    st = trust_region_step(v, w, g, b, c, delta)
    x = st.x
    if st.case == "recovery":
        pytest.skip("no feasible point in the trust region for this draw")
    kl = 0.5 * float(x @ H @ x)
    assert kl <= delta * (1 + 1e-8)
    assert c + float(b @ x) <= 1e-8
    if st.case == "constrained":
        # stationarity g = lam H x + nu b, complementary slackness
        assert torch.allclose(g, st.lam * (H @ x) + st.nu * b, atol=1e-8)
        assert st.nu * (c + float(b @ x)) == pytest.approx(0.0, abs=1e-8)
        assert st.lam * (kl - delta) == pytest.approx(0.0, abs=1e-8)
    Hn, gn, bn = H.numpy(), g.numpy(), b.numpy()
    res = minimize(lambda z: -gn @ z, np.zeros(4), jac=lambda z: -gn, method="SLSQP",
                   constraints=[{"type": "ineq", "fun": lambda z: -(c + bn @ z), "jac": lambda z: -bn},
                                {"type": "ineq", "fun": lambda z: delta - 0.5 * z @ Hn @ z, "jac": lambda z: -Hn @ z}],
                   options={"ftol": 1e-14, "maxiter": 500})
    assert float(g @ x) == pytest.approx(-res.fun, rel=1e-5, abs=1e-8)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_dual_step_with_parallel_gradients_is_finite_and_solves_the_problem(sign):
    # the review's crash: g and b nearly parallel make A = q - r^2 / s ~ 0, and the old step divided by
    # lam ~ 1e-12 (|x| ~ 1e10). Now: the one-constraint-active step (r > 0) or the TRPO step (r < 0).
    H, _, b, _, w, _ = _kkt_problem(2, 0.0)
    g = sign * 2.0 * b + 1e-9 * torch.ones(4, dtype=torch.float64)
    v = torch.linalg.solve(H, g)
    s = float(b @ w)
    delta = 0.02
    for c in (0.5 * math.sqrt(2 * delta * s), -0.5 * math.sqrt(2 * delta * s)):
        st = trust_region_step(v, w, g, b, c, delta)
        assert torch.isfinite(st.x).all() and 0.5 * float(st.x @ H @ st.x) <= delta * (1 + 1e-6)
        assert c + float(b @ st.x) <= 1e-9
        Hn, gn, bn = H.numpy(), g.numpy(), b.numpy()
        res = minimize(lambda z: -gn @ z, np.zeros(4), jac=lambda z: -gn, method="SLSQP",
                       constraints=[{"type": "ineq", "fun": lambda z: -(c + bn @ z), "jac": lambda z: -bn},
                                    {"type": "ineq", "fun": lambda z: delta - 0.5 * z @ Hn @ z,
                                     "jac": lambda z: -Hn @ z}], options={"ftol": 1e-14, "maxiter": 500})
        assert float(g @ st.x) == pytest.approx(-res.fun, rel=1e-4, abs=1e-8)


def test_update_rejects_an_oversized_step_and_the_line_search_survives_a_broken_distribution():
    from icml24.papers.acpo.algorithm import GaussianMLPPolicy, line_search

    torch.manual_seed(0)
    policy = GaussianMLPPolicy(4, 2, 8)
    obs = torch.randn(64, 4)
    with torch.no_grad():
        acts = policy.dist(obs).sample()
    theta = torch.cat([p.detach().reshape(-1) for p in policy.parameters()])
    huge = torch.zeros_like(theta)
    huge[:2] = -1e9                                           # log-std (the first parameter) -> -1e9: scale 0
    tr = TrustRegionConfig(0.02, 10, 1e-3, 3, 0.5)

    def surrogates():
        d = policy.dist(obs)
        return d.log_prob(acts).mean(), d.log_prob(acts).mean()

    accepted, kl = line_search(policy, theta, huge, surrogates, lambda: 0.0, lambda *a: True, tr)
    assert not accepted and torch.equal(torch.cat([p.detach().reshape(-1) for p in policy.parameters()]), theta)
    # a batch whose reward and cost advantages are equal (parallel g and b) updates without error or blow-up
    adv = torch.randn(64, dtype=torch.float64).float()
    info = trust_region_update(policy, Batch(obs, acts, adv, adv, 0.01), "cpo", tr)
    after = torch.cat([p.detach().reshape(-1) for p in policy.parameters()])
    assert torch.isfinite(after).all() and info.kl <= 0.02 + 1e-6


def test_recovery_step_when_the_trust_region_holds_no_feasible_point():
    H, g, b, v, w, _ = _kkt_problem(0, 0.0)
    s = float(b @ w)
    c = 2.0 * math.sqrt(2 * 0.02 * s)                          # c^2 / s > 2 delta and c > 0
    st = trust_region_step(v, w, g, b, c, 0.02)
    assert st.case == "recovery"
    assert torch.allclose(st.x, -math.sqrt(2 * 0.02 / s) * w)
    assert 0.5 * float(st.x @ H @ st.x) == pytest.approx(0.02)
    assert float(b @ st.x) < 0                                 # the cost surrogate decreases


def test_pcpo_step_projects_onto_the_linearised_constraint():
    H, g, b, v, w, _ = _kkt_problem(1, 0.0)
    for c in (-0.5, 0.0, 0.1):
        x = pcpo_step(v, w, g, b, c, 0.02)
        assert c + float(b @ x) <= 1e-9 or float(b @ x) == pytest.approx(float(b @ (math.sqrt(0.04 / float(g @ v)) * v)))


def test_acpo_update_respects_the_trust_region_and_reduces_cost_when_infeasible():
    m = delayed_cost_cmdp(3, 0.5)
    start = np.zeros((4, 3))
    start[:, 1] = 3.0                                          # mostly spending everywhere: infeasible
    trace = train_tabular(m, Learner("acpo", "acpo", None), QUICK,
                          np.random.default_rng(0), init_logits=start, iters=8)
    assert trace.J_C[0] > m.limit and trace.J_C[-1] < trace.J_C[0]
    policy = TabularSoftmaxPolicy(4, 2)
    obs = torch.randint(0, 4, (300,))
    batch = Batch(obs, torch.randint(0, 2, (300,)), torch.randn(300, dtype=torch.float64),
                  torch.randn(300, dtype=torch.float64), -0.1)
    info = trust_region_update(policy, batch, "acpo", TrustRegionConfig(0.01, 20, 1e-3, 10, 0.5))
    assert info.kl <= 0.01 + 1e-12


def test_linearised_recovery_count_matches_the_closed_form_on_a_two_state_chain():
    from icml24.papers.acpo.experiment import linearised_recovery_steps

    m = _two_state()._replace(limit=0.25)                      # cost = time in state 1
    logits = np.zeros((2, 2))                                  # uniform: d = (1/2, 1/2), J_C = 1/2
    ev = evaluate(m, np.full((2, 2), 0.5))
    s_quad = float((ev.d[:, None] * 0.5 * ev.A_C ** 2).sum())
    assert linearised_recovery_steps(m, logits, 0.02) == pytest.approx(0.25 / math.sqrt(0.04 * s_quad))
    assert linearised_recovery_steps(m._replace(limit=0.9), logits, 0.02) == 0.0


def test_score_is_capped_at_the_optimum_and_falls_continuously_past_the_slack():
    from icml24.papers.acpo.experiment import Scale, score

    m = _two_state()._replace(limit=0.5)
    sc = Scale(J_opt=1.0, J_min=0.0, cost_range=1.0, slack=0.05)
    assert score(1.2, 0.52, m, sc) == 1.0                      # within the slack, above J*: capped
    assert score(0.5, 0.5, m, sc) == 0.5
    assert score(0.5, 0.575, m, sc) == pytest.approx(0.25)     # half-way from slack to twice the slack
    assert score(0.5, 0.6, m, sc) == pytest.approx(0.0, abs=1e-12) and score(0.5, 0.7, m, sc) == 0.0


def test_point_circle_pays_counter_clockwise_motion_and_charges_time_outside_the_band():
    env = PointCircleEnv(1)
    env.reset(seed=0)
    env.state = np.array([[1.0, 0.0, 0.0, 1.0]])               # on the circle, moving up (counter-clockwise)
    _, r, term, trunc, info = env.step(np.zeros((1, 2)))
    assert r[0] > 0 and info["cost"][0] == 1.0 and not term[0] and not trunc[0]
    env.state = np.array([[0.0, 1.0, 1.0, 0.0]])               # at the top moving right: clockwise
    _, r, _, _, info = env.step(np.zeros((1, 2)))
    assert r[0] < 0 and info["cost"][0] == 0.0
    env.state = np.array([[1.99, 0.0, 1.0, 0.0]])              # leaving the box: restarted at rest on r = R / 2
    obs, _, _, _, _ = env.step(np.ones((1, 2)))
    assert np.hypot(obs[0, 0], obs[0, 1]) == pytest.approx(0.5) and np.all(obs[0, 2:] == 0)


def test_ppo_lagrangian_dual_ascent_and_clipped_step():
    """lambda <- max(0, lambda + lr (J_C - l)) (Ray et al. 2019); the policy moves toward the action with
    the larger A_R - lambda A_C, and the clipped objective stops it once the ratio leaves [1 - eps, 1 + eps]."""
    from icml24.papers.acpo.algorithm import PPOLagConfig, ppo_lag_update

    policy = TabularSoftmaxPolicy(1, 2)
    opt = torch.optim.SGD(policy.parameters(), lr=0.2)        # no momentum: the clip stops it where it binds
    obs = torch.zeros(200, dtype=torch.long)
    acts = torch.arange(200) % 2
    adv_r = torch.where(acts == 1, 1.0, -1.0).double()        # action 1 pays more reward ...
    adv_c = torch.where(acts == 1, 3.0, -3.0).double()        # ... and much more cost
    cfg = PPOLagConfig(clip=0.2, epochs=50, lr=0.5, lr_lambda=1.0)
    lam = ppo_lag_update(policy, opt, Batch(obs, acts, adv_r, adv_c, c=-0.5), 0.2, cfg).nu
    assert lam == 0.0                                          # max(0, 0.2 - 0.5)
    p1 = float(policy.table()[0, 1])
    assert 0.6 <= p1 < 0.7                                     # past the clip ratio 1.2 by at most a step, then frozen
    policy2 = TabularSoftmaxPolicy(1, 2)
    opt2 = torch.optim.SGD(policy2.parameters(), lr=0.2)
    lam2 = ppo_lag_update(policy2, opt2, Batch(obs, acts, adv_r, adv_c, c=1.0), 0.0, cfg).nu
    assert lam2 == 1.0 and float(policy2.table()[0, 1]) < 0.5  # A_R - 1 * A_C favours action 0


@pytest.mark.parametrize("preset, overrides, field", [
    ("SMOKE", [], None), ("QUICK", [], None), ("FULL", [], None),
    ("SMOKE", ["n_states=1"], "n_states"), ("SMOKE", ["n_actions=1"], "n_actions"), ("SMOKE", ["delta=0"], "delta"),
    ("SMOKE", ["limit_frac=1"], "limit_frac"), ("SMOKE", ["switch=0"], "switch"), ("SMOKE", ["lam=1.5"], "lam"),
    ("SMOKE", ["gammas=0.9,0.9"], "gammas"), ("SMOKE", ["gammas=1.0"], "gammas"), ("SMOKE", ["gammas="], "gammas"),
    ("SMOKE", ["steps=1"], "steps"), ("SMOKE", ["circle_limit=0"], "circle_limit"), ("SMOKE", ["circle_iters=0"], None),
    ("SMOKE", ["n_states=100000"], "n_states=100000: its transition table"), ("SMOKE", ["delay=5000"], None),
    ("SMOKE", ["n_envs=100000000"], "n_envs x steps"), ("SMOKE", ["circle_eval_steps=100000000"], "circle_eval_steps"),
])
def test_config_rules(preset, overrides, field):
    from icml24.core.testing import check_config_rule
    from icml24.papers.acpo import config as cf

    check_config_rule(getattr(cf, preset), overrides, cf.validate, field)

"""icml24.common.ddim: the DDIM step against DDPM's posterior and the forward marginal, eta = 0 determinism
and inversion, the differentiable sampler's gradient against finite differences (full and truncated), the
per-step KL against the Gaussian KL, and Tweedie's estimate on Gaussian data, where it is exact."""

from __future__ import annotations

import copy
import math

import pytest
import torch

from icml24.common.ddim import (
    ddim_invert,
    ddim_mean,
    ddim_sample,
    ddim_sample_grad,
    ddim_sigma,
    ddim_step,
    ddim_timesteps,
    step_kl,
    tweedie,
)
from icml24.common.diffusion import EpsMLP, linear_schedule, p_step, q_sample


def _tiny(seed: int = 0, dim: int = 2, scale: float = 1.0, double: bool = False) -> EpsMLP:
    torch.manual_seed(seed)
    m = EpsMLP(dim, hidden=8, layers=1, time_dim=4)
    with torch.no_grad():
        for p in m.parameters():
            p.mul_(scale)
    return m.double() if double else m


def test_timesteps_descend_strictly_between_their_ends():
    for T, S, end in ((1000, 20, 1), (1000, 999, 1), (50, 7, 0), (10, 10, 0)):
        ts = ddim_timesteps(T, S, end)
        assert len(ts) == S + 1 and ts[0] == T and ts[-1] == end
        assert all(a > b for a, b in zip(ts, ts[1:]))
    for bad in ((10, 0, 0), (10, 11, 0), (10, 10, 1), (10, 3, 10)):
        with pytest.raises(ValueError):
            ddim_timesteps(*bad)


def test_eta_one_on_consecutive_steps_is_the_ddpm_posterior():
    # q(x_{t-1} | x_t, x_0): mean sqrt(ab_{t-1}) beta_t / (1 - ab_t) x_0 + sqrt(alpha_t) (1 - ab_{t-1}) / (1 - ab_t) x_t,
    # variance tilde beta_t = (1 - ab_{t-1}) / (1 - ab_t) beta_t (Ho et al. Eq. 6-7), with eps the true noise
    s = linear_schedule(200)
    g = torch.Generator().manual_seed(0)
    x0, eps = torch.randn(5, 3, generator=g, dtype=torch.float64), torch.randn(5, 3, generator=g, dtype=torch.float64)
    for t in (2, 50, 200):
        ab, abp, beta, alpha = (float(v) for v in (s.alpha_bar[t], s.alpha_bar[t - 1], s.betas[t], s.alphas[t]))
        xt = q_sample(s, x0, torch.full((5,), t), eps)
        m = ddim_mean(s, xt, eps, t, t - 1, 1.0)
        post = math.sqrt(abp) * beta / (1 - ab) * x0 + math.sqrt(alpha) * (1 - abp) / (1 - ab) * xt
        assert torch.allclose(m.mean, post, atol=1e-12)
        assert m.sigma ** 2 == pytest.approx((1 - abp) / (1 - ab) * beta, rel=1e-12)
        assert torch.allclose(m.x0, x0, atol=1e-9)                              # the true noise gives x_0 back


def test_eta_one_step_has_the_mean_of_ddpm_algorithm_2():
    # (x_t - beta_t / sqrt(1 - ab_t) eps) / sqrt(alpha_t): icml24.common.diffusion.p_step without its noise (t = 1)
    s = linear_schedule(30)
    model = _tiny(1)
    x = torch.randn(4, 2, generator=torch.Generator().manual_seed(1))
    eps = model(x, torch.full((4,), 1))
    ddpm = p_step(model, s, x, 1, torch.Generator())
    assert torch.allclose(ddim_mean(s, x, eps, 1, 0, 1.0).mean, ddpm, atol=1e-6)


@pytest.mark.parametrize("eta", [0.0, 0.5, 1.0])
def test_a_step_with_the_true_noise_keeps_the_forward_marginal(eta):
    # DDIM's defining property (Song et al. Eq. 7): x_t ~ q(x_t | x_0) -> x_s ~ N(sqrt(ab_s) x_0, (1 - ab_s) I)
    s = linear_schedule(1000)
    g = torch.Generator().manual_seed(2)
    n, t, sub = 200_000, 600, 350
    x0 = torch.tensor([[1.5, -2.0]], dtype=torch.float64).expand(n, 2)
    eps = torch.randn(n, 2, generator=g, dtype=torch.float64)
    xt = q_sample(s, x0, torch.full((n,), t), eps)
    m = ddim_mean(s, xt, eps, t, sub, eta)
    xs = m.mean + m.sigma * torch.randn(n, 2, generator=g, dtype=torch.float64)
    ab = float(s.alpha_bar[sub])
    se = math.sqrt((1 - ab) / n)
    assert torch.allclose(xs.mean(0), math.sqrt(ab) * x0[0], atol=5 * se)
    assert torch.allclose(xs.var(0), torch.full((2,), 1 - ab, dtype=torch.float64), rtol=0.02)


def test_eta_zero_is_deterministic_and_draws_no_noise():
    s = linear_schedule(100)
    model = _tiny(2)
    ts = ddim_timesteps(100, 10, end=0)
    x = torch.randn(6, 2, generator=torch.Generator().manual_seed(3))
    g1, g2 = torch.Generator().manual_seed(10), torch.Generator().manual_seed(99)
    state = g1.get_state()
    a, b = ddim_sample(model, s, x, ts, 0.0, g1), ddim_sample(model, s, x, ts, 0.0, g2)
    assert torch.equal(a, b)
    assert torch.equal(g1.get_state(), state)                                   # no draw at all
    # eta > 0 does depend on the noise
    assert not torch.equal(ddim_sample(model, s, x, ts, 1.0, torch.Generator().manual_seed(10)),
                           ddim_sample(model, s, x, ts, 1.0, torch.Generator().manual_seed(99)))


def test_eta_zero_inverts():
    s = linear_schedule(100)
    ts = ddim_timesteps(100, 10, end=0)
    x0 = torch.randn(5, 2, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    # a network that ignores x: the one-pass inversion is exact
    const = lambda x, t: torch.sin(t.double())[:, None].expand_as(x) * 0.3
    xT = ddim_invert(const, s, x0, ts)
    assert torch.allclose(ddim_sample(const, s, xT, ts, 0.0, torch.Generator()), x0, atol=1e-10)
    # a small network (Lipschitz well below 1): fixed-point iterations make it exact, one pass is not
    model = _tiny(5, scale=0.3, double=True)
    one = ddim_sample(model, s, ddim_invert(model, s, x0, ts), ts, 0.0, torch.Generator())
    exact = ddim_sample(model, s, ddim_invert(model, s, x0, ts, iters=30), ts, 0.0, torch.Generator())
    assert torch.allclose(exact, x0, atol=1e-8)
    assert (one - x0).abs().max() > 1e-6


def test_step_kl_is_the_gaussian_kl_and_zero_for_identical_models():
    g = torch.Generator().manual_seed(5)
    m, r = torch.randn(4, 3, generator=g), torch.randn(4, 3, generator=g)
    sigma = 0.37
    ref = torch.distributions.kl_divergence(torch.distributions.Normal(m, sigma), torch.distributions.Normal(r, sigma))
    assert torch.allclose(step_kl(m, r, sigma), ref.sum(1), atol=1e-5)
    with pytest.raises(ValueError):
        step_kl(m, r, 0.0)
    s = linear_schedule(100)
    model = _tiny(6)
    twin = copy.deepcopy(model).requires_grad_(False)
    traj = ddim_sample_grad(model, s, torch.randn(8, 2, generator=g), ddim_timesteps(100, 5, end=1), 1.0, g, 5, twin)
    assert torch.equal(traj.kl, torch.zeros(8))
    with pytest.raises(ValueError):                                            # the last step to t = 0 has sigma = 0
        ddim_sample_grad(model, s, torch.randn(8, 2), ddim_timesteps(100, 5, end=0), 1.0, g, 5, twin)


def test_without_a_reference_the_grad_sampler_draws_what_the_plain_one_draws():
    s = linear_schedule(100)
    model = _tiny(7)
    ts = ddim_timesteps(100, 8, end=1)
    x = torch.randn(5, 2, generator=torch.Generator().manual_seed(6))
    a = ddim_sample(model, s, x, ts, 0.7, torch.Generator().manual_seed(3))
    traj = ddim_sample_grad(model, s, x, ts, 0.7, torch.Generator().manual_seed(3), 4)
    assert torch.allclose(a, traj.x) and torch.equal(traj.kl, torch.zeros(5))
    assert not ddim_sample_grad(model, s, x, ts, 0.7, torch.Generator().manual_seed(3), 0).x.requires_grad


def _objective(model, ref, s, x, ts, grad_steps, seed, frozen=None):
    """sum(w * x_0) + 0.1 mean(KL), the first S - K steps by ``frozen`` (a copy) when given."""
    g = torch.Generator().manual_seed(seed)
    k = len(ts) - 1 - grad_steps
    if frozen is not None:
        with torch.no_grad():
            for t, u in zip(ts[:k], ts[1:k + 1]):
                x = ddim_step(frozen, s, x, t, u, 1.0, g)
        ts = ts[k:]
        grad_steps = len(ts) - 1
    traj = ddim_sample_grad(model, s, x, ts, 1.0, g, grad_steps, ref)
    w = torch.tensor([1.0, -2.0], dtype=torch.float64)
    return (traj.x * w).sum() + 0.1 * traj.kl.mean()


@pytest.mark.parametrize("grad_steps", [6, 3])
def test_the_sampler_gradient_matches_finite_differences(grad_steps):
    s = linear_schedule(100)
    ts = ddim_timesteps(100, 6, end=1)
    model = _tiny(8, double=True)
    ref = _tiny(9, double=True).requires_grad_(False)
    x = torch.randn(3, 2, generator=torch.Generator().manual_seed(7), dtype=torch.float64)
    # truncated: the gradient of the objective whose first S - K steps use a frozen copy of the same weights
    frozen = copy.deepcopy(model).requires_grad_(False) if grad_steps < 6 else None
    model.zero_grad()
    _objective(model, ref, s, x, ts, grad_steps, 11).backward()
    for p in (model.net[0].weight, model.net[-1].bias):
        for idx in ((0, 0), (1, 1)) if p.dim() == 2 else ((0,), (1,)):
            h = 1e-6
            with torch.no_grad():
                p[idx] += h
                up = _objective(model, ref, s, x, ts, grad_steps, 11, frozen)
                p[idx] -= 2 * h
                down = _objective(model, ref, s, x, ts, grad_steps, 11, frozen)
                p[idx] += h
            assert float(p.grad[idx]) == pytest.approx(float((up - down) / (2 * h)), rel=1e-5, abs=1e-8)


def test_tweedie_is_the_posterior_mean_on_gaussian_data():
    # x_0 ~ N(mu, s^2 I): p_t = N(sqrt(ab) mu, v I), v = ab s^2 + 1 - ab; the MMSE noise is
    # E[eps | x_t] = -sqrt(1 - ab) grad log p_t = sqrt(1 - ab) (x_t - sqrt(ab) mu) / v, and Bayes gives
    # E[x_0 | x_t] = mu + s^2 sqrt(ab) / v (x_t - sqrt(ab) mu), Var = s^2 (1 - ab) / v
    sch = linear_schedule(1000)
    mu, s2, t, n = torch.tensor([0.5, -1.0], dtype=torch.float64), 0.3 ** 2, 400, 400_000
    ab = float(sch.alpha_bar[t])
    v = ab * s2 + 1 - ab
    g = torch.Generator().manual_seed(8)
    x0 = mu + math.sqrt(s2) * torch.randn(n, 2, generator=g, dtype=torch.float64)
    xt = q_sample(sch, x0, torch.full((n,), t), torch.randn(n, 2, generator=g, dtype=torch.float64))
    eps_star = math.sqrt(1 - ab) * (xt - math.sqrt(ab) * mu) / v
    est = tweedie(sch, xt, t, eps_star)
    assert torch.allclose(est, mu + s2 * math.sqrt(ab) / v * (xt - math.sqrt(ab) * mu), atol=1e-10)
    resid = x0 - est
    assert torch.allclose(resid.mean(0), torch.zeros(2, dtype=torch.float64), atol=5 * math.sqrt(s2 / n))
    assert float((resid * (xt - xt.mean(0))).mean()) == pytest.approx(0.0, abs=3e-3)      # orthogonal to x_t
    assert float(resid.pow(2).mean()) == pytest.approx(s2 * (1 - ab) / v, rel=0.01)        # the posterior variance


def test_the_clamp_keeps_a_runaway_network_bounded():
    s = linear_schedule(100)
    wild = lambda x, t: 1e6 * x + 1e6
    ts = ddim_timesteps(100, 10, end=1)
    x = torch.randn(4, 3, generator=torch.Generator().manual_seed(9))
    out = ddim_sample(wild, s, x, ts, 1.0, torch.Generator().manual_seed(1), clip=2.0)
    assert torch.isfinite(out).all() and out.abs().max() < 3.0
    assert ddim_sigma(s, 50, 40, 0.0) == 0.0

"""Math of the Gaussian MoE gates (Nguyen, Akbarian, Ho, ICML 2024): densities, scores, fits, losses."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from icml24.core.testing import check_config_rule
from icml24.papers.moe_gating.algorithm import fit_mle, hellinger, n_free, pack, rescale_to_truth, scores, unpack, voronoi_loss
from icml24.papers.moe_gating.experiment import SMOKE, Config, initial_params, true_params
from icml24.papers.moe_gating.model import GATES, MoEParams, gate_scores, independence_check, log_density, log_likelihood, sample

DT = torch.float64


def truth() -> MoEParams:
    return true_params(Config())


def perturbed(p: MoEParams, gate: str, scale: float, seed: int, reps: int = 1) -> MoEParams:
    gen = torch.Generator().manual_seed(seed)
    theta = pack(p.expand(reps), gate)
    return unpack(theta + scale * torch.randn(theta.shape, generator=gen, dtype=DT), p.k, p.d, gate)


def test_log_density_matches_direct_numpy():
    p = perturbed(truth(), "tanh", 0.3, seed=1)
    x = np.array([0.1, 0.5, 0.9])
    y = np.array([0.3, -0.2, 1.1])
    b0, b1, tau = p.beta0[0].numpy(), p.beta1[0, :, 0].numpy(), float(p.tau[0])
    a, b, nu = p.a[0, :, 0].numpy(), p.b[0].numpy(), p.nu[0].numpy()
    expected = []
    for xt, yt in zip(x, y):
        s = np.tanh(b1 * xt) / tau + b0
        w = np.exp(s) / np.exp(s).sum()
        dens = np.exp(-(yt - a * xt - b) ** 2 / (2 * nu)) / np.sqrt(2 * np.pi * nu)
        expected.append(np.log((w * dens).sum()))
    got = log_density(torch.tensor(x, dtype=DT)[None, :, None], torch.tensor(y, dtype=DT)[None], p, "tanh")
    np.testing.assert_allclose(got[0].numpy(), expected, rtol=1e-12)


def test_identity_activation_gate_is_the_temperature_gate():
    p = perturbed(truth(), "tanh", 0.3, seed=2)
    x = torch.rand(1, 50, 1, generator=torch.Generator().manual_seed(0), dtype=DT)
    torch.testing.assert_close(gate_scores(x, p, "identity"), gate_scores(x, p, "temperature"))


@pytest.mark.parametrize("gate", GATES)
def test_analytic_scores_match_autograd(gate):
    p = perturbed(truth(), gate, 0.3, seed=3, reps=2)
    data = sample(truth(), 40, 2, "tanh", torch.Generator().manual_seed(1))
    theta = pack(p, gate)
    fast = scores(data.x, data.y, p, gate)  # (R, n, p)
    for r in range(2):
        naive = torch.func.jacrev(lambda t: log_density(data.x[r:r + 1], data.y[r:r + 1],
                                                        unpack(t[None], 2, 1, gate), gate)[0])(theta[r])
        torch.testing.assert_close(fast[r], naive, rtol=1e-9, atol=1e-11)
    assert fast.shape[-1] == n_free(2, 1, gate)


def test_log_likelihood_gradcheck():
    data = sample(truth(), 30, 1, "sigmoid", torch.Generator().manual_seed(2))
    theta = pack(perturbed(truth(), "sigmoid", 0.2, seed=4), "sigmoid").requires_grad_(True)
    assert torch.autograd.gradcheck(
        lambda t: log_likelihood(data.x, data.y, unpack(t, 2, 1, "sigmoid"), "sigmoid"), (theta,))


def test_temperature_pde_holds_for_linear_gate_only():
    """tau du/dtau = -beta_1^T du/dbeta_1 for u = exp(beta_1^T x / tau) (the paper's PDE), not for tanh."""
    x = torch.tensor([0.3, -0.7], dtype=DT)
    beta1 = torch.tensor([1.5, 0.4], dtype=DT, requires_grad=True)
    tau = torch.tensor(0.6, dtype=DT, requires_grad=True)
    for sigma, holds in ((lambda z: z, True), (torch.tanh, False)):
        u = torch.exp(sigma(beta1 @ x) / tau)
        du_dbeta, du_dtau = torch.autograd.grad(u, (beta1, tau))
        lhs, rhs = tau * du_dtau, -(beta1 @ du_dbeta)
        assert torch.isclose(lhs, rhs, rtol=1e-12).item() is holds


def test_likelihood_is_flat_along_the_temperature_ray_only():
    data = sample(truth(), 200, 1, "temperature", torch.Generator().manual_seed(3))
    p = truth()
    moved = p._replace(beta1=p.beta1 * 1.7, tau=p.tau * 1.7)
    for gate, flat in (("temperature", True), ("relu", True), ("tanh", False), ("sigmoid", False)):
        same = torch.isclose(log_likelihood(data.x, data.y, moved, gate), log_likelihood(data.x, data.y, p, gate),
                             rtol=1e-13).item()
        assert same is flat, gate


def test_sample_follows_the_gate():
    p = truth()
    data = sample(p, 20000, 1, "tanh", torch.Generator().manual_seed(4))
    w = torch.softmax(gate_scores(data.x, p, "tanh"), dim=-1)[..., 0]  # P(Z = 0 | x)
    assert abs(float((data.z == 0).double().mean() - w.mean())) < 0.01
    on_zero = data.z == 0
    resid = data.y[on_zero] - (p.a[0, 0, 0] * data.x[..., 0][on_zero] + p.b[0, 0])
    assert abs(float(resid.var()) - p.nu[0, 0].item()) < 0.01


def test_fit_from_the_truth_stays_at_a_stationary_point_near_it():
    gate = "tanh"
    data = sample(truth(), 8000, 2, gate, torch.Generator().manual_seed(5))
    fit = fit_mle(data.x, data.y, truth().expand(2), gate)
    assert bool(fit.converged.all())
    grad = scores(data.x, data.y, fit.params, gate).mean(dim=1)
    assert float(grad.abs().max()) < 1e-5
    assert bool((fit.loglik >= log_likelihood(data.x, data.y, truth(), gate)).all())
    # near the truth where n = 8000 pins it down: the density and the experts (the tanh gate's
    # (beta_1, tau) is only weakly determined at this n, see README)
    xs = ((torch.arange(32, dtype=DT) + 0.5) / 32)[:, None]
    assert float(hellinger(fit.params, truth(), gate, xs, torch.linspace(-4, 4, 401, dtype=DT)).max()) < 0.03
    assert float((fit.params.b - truth().b).abs().max()) < 0.05
    assert float((fit.params.nu - truth().nu).abs().max()) < 0.02


def test_tanh_fit_forgets_its_start_but_the_temperature_scale_does_not():
    """Identifiable gate: one MLE whatever the start. Temperature gate: the scale of (beta_1, tau) stays."""
    data_t = sample(truth(), 8000, 2, "tanh", torch.Generator().manual_seed(6))
    from_truth = fit_mle(data_t.x, data_t.y, truth().expand(2), "tanh").params
    from_start = fit_mle(data_t.x, data_t.y, perturbed(truth(), "tanh", 0.25, seed=7, reps=2), "tanh").params
    torch.testing.assert_close(pack(from_start, "tanh"), pack(from_truth, "tanh"), rtol=1e-4, atol=1e-4)
    data_l = sample(truth(), 8000, 2, "temperature", torch.Generator().manual_seed(6))
    a = fit_mle(data_l.x, data_l.y, truth().expand(2), "temperature")
    b = fit_mle(data_l.x, data_l.y, perturbed(truth(), "temperature", 0.25, seed=7, reps=2), "temperature")
    torch.testing.assert_close(b.loglik, a.loglik, rtol=1e-10, atol=1e-10)  # equally good fits ...
    ratio = lambda p: p.beta1[:, 0, 0] / p.tau
    torch.testing.assert_close(ratio(b.params), ratio(a.params), rtol=1e-4, atol=1e-4)  # ... same gate ...
    assert float((b.params.tau / a.params.tau - 1).abs().min()) > 0.01  # ... different (beta_1, tau)


def test_voronoi_loss_zero_at_truth_and_hand_value():
    t = truth()
    assert voronoi_loss(t, t, "tanh").total.item() == 0.0
    moved = t._replace(b=t.b + torch.tensor([[0.1, 0.0]], dtype=DT), tau=t.tau + 0.05)
    # exact-specified: exp(beta0_1) * |Delta b_1| + |Delta tau| = 1 * 0.1 + 0.05
    assert math.isclose(voronoi_loss(moved, t, "tanh").total.item(), 0.15, rel_tol=1e-12)
    assert math.isclose(voronoi_loss(moved, t, "softmax").total.item(), 0.10, rel_tol=1e-12)


def test_voronoi_loss_over_specified_and_relabelling_invariance():
    t = truth()
    start = initial_params(t, 3, 1, "tanh", 0.0, torch.Generator().manual_seed(0))
    split = voronoi_loss(start, t, "tanh")
    assert split.cell_sizes.tolist() == [[2.0, 1.0]]
    assert split.total.item() == pytest.approx(0.0, abs=1e-12)  # masses exp(b0 - log 2) sum back
    fit = perturbed(start, "tanh", 0.1, seed=8, reps=1)
    perm = torch.tensor([2, 0, 1])
    relabelled = MoEParams(fit.beta0[:, perm], fit.beta1[:, perm], fit.tau, fit.a[:, perm], fit.b[:, perm],
                           fit.nu[:, perm])
    a, b = voronoi_loss(fit, t, "tanh"), voronoi_loss(relabelled, t, "tanh")
    assert a.total.item() == pytest.approx(b.total.item(), rel=1e-12)
    # over-specified cells use exponents rbar(2) = 4 (beta_1, b) and 2 (a, nu): tiny errors shrink
    assert a.atoms.item() < voronoi_loss(fit, t, "tanh", rbar=(0.0, 1.0, 1.0, 1.0)).atoms.item()


def test_hellinger_closed_form_for_one_gaussian_expert():
    one = MoEParams(torch.zeros(1, 1, dtype=DT), torch.zeros(1, 1, 1, dtype=DT), torch.ones(1, dtype=DT),
                    torch.zeros(1, 1, 1, dtype=DT), torch.zeros(1, 1, dtype=DT), torch.full((1, 1), 0.25, dtype=DT))
    shifted = one._replace(b=one.b + 0.3)
    xs = torch.tensor([[0.2], [0.8]], dtype=DT)
    ys = torch.linspace(-6, 6, 4001, dtype=DT)
    h = hellinger(shifted, one, "softmax", xs, ys).item()
    expected = math.sqrt(1 - math.exp(-0.3 ** 2 / (8 * 0.25)))  # h^2 = 1 - exp(-(d mu)^2 / (8 nu))
    assert h == pytest.approx(expected, rel=1e-8)
    assert hellinger(one, one, "softmax", xs, ys).item() == 0.0


def test_temperature_rescaling_keeps_the_density():
    t = truth()
    fit = t._replace(beta1=t.beta1 * 1.3, tau=t.tau * 1.3)
    back = rescale_to_truth(fit, t)
    torch.testing.assert_close(back.beta1, t.beta1)
    xs = torch.linspace(0.01, 0.99, 9, dtype=DT)[:, None]
    ys = torch.linspace(-3, 3, 301, dtype=DT)
    assert hellinger(fit, t, "temperature", xs, ys).item() == pytest.approx(0.0, abs=1e-7)


@pytest.mark.parametrize("act,ok", [("tanh", True), ("sigmoid", True), ("identity", False), ("relu", False)])
def test_independence_check(act, ok):
    check = independence_check(act, (SMOKE.beta1,))
    assert check.independent is ok
    if not ok:
        assert check.first_order < 1e-8  # sigma(z) = z sigma'(z): the PDE's linear dependence


def test_over_specified_run_is_finite():
    import dataclasses

    from icml24.papers.moe_gating.experiment import run

    cfg = dataclasses.replace(SMOKE, k_fit=3, gates=("tanh",), n_min=300, n_max=600, n_points=2, max_iter=10)
    out = run(cfg, 0)
    assert all(math.isfinite(v) for v in out.metrics.values())
    assert all(math.isfinite(v) for vs in out.curves.values() for v in vs)


@pytest.mark.parametrize("preset, overrides, field", [
    ("SMOKE", [], None), ("QUICK", [], None), ("FULL", [], None),
    ("SMOKE", ["reps=-3"], "reps"), ("SMOKE", ["reps=0"], "reps"), ("SMOKE", ["gates=foo"], "gates"),
    ("SMOKE", ["gates="], "gates"), ("SMOKE", ["threads=-1"], "threads"), ("SMOKE", ["init_scale=nan"], "init_scale"),
    ("SMOKE", ["n_min=1000", "n_max=100"], "n_min"), ("SMOKE", ["k_fit=1"], "k_fit"), ("SMOKE", ["tau=0"], "tau"),
    ("SMOKE", ["nu=0.1,-0.2"], "nu"), ("SMOKE", ["y_grid=1"], "y_grid"), ("SMOKE", ["n_points=1"], "n_points"),
])
def test_config_rules(preset, overrides, field):
    from icml24.papers.moe_gating import experiment as ex

    check_config_rule(getattr(ex, preset), overrides, ex.validate, field)

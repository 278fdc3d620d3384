"""SEIKO: the embedded circle (angle, distance, reward and its bounds by hand), the UCB bonus against a direct
computation for both covariances (and how each scales with the data), bootstrap resampling and the max over
heads, the tilted optimum p_prev exp(r / beta) reached by the objective on a discrete toy, the surrogate fit,
the regret, KL-regularised fine-tuning on a tiny model, the loop end to end, and the config's rules."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from conftest import run_cli

from icml24.common.ddim import ddim_timesteps
from icml24.common.diffusion import EpsMLP, linear_schedule
from icml24.papers.seiko import config as cf
from icml24.papers.seiko.domain import NEAR, Circle, rotation
from icml24.papers.seiko.experiment import circle, domain_of, loop_config
from icml24.papers.seiko.finetune import FinetuneConfig, Guided, Sampler, finetune, kl_objective, path_kl, tilt
from icml24.papers.seiko.loop import SHOWN, online, regret
from icml24.papers.seiko.surrogate import (
    UCB,
    Ensemble,
    LangevinConfig,
    RewardMLP,
    SurrogateConfig,
    bootstrap_indices,
    covariance,
    fit_reward,
    seeded,
    sgld,
)


def _circle(dim: int = 4, decoy: float = 0.0, w_off: float = 2.0) -> Circle:
    Q = torch.as_tensor(rotation(dim, np.random.default_rng(0)), dtype=torch.float32)
    return Circle(Q, kappa=1.0, w_off=w_off, decoy=decoy, width=0.6, eps=0.1)


def test_the_circle_by_hand():
    c = _circle()
    theta = torch.tensor([0.0, math.pi / 2, math.pi, -2.0])
    x = c.embed(theta)
    assert torch.allclose(c.distance(x), torch.zeros(4), atol=1e-6)
    assert torch.allclose(c.angle(x)[:2], theta[:2], atol=1e-6) and abs(abs(float(c.angle(x)[2])) - math.pi) < 1e-5
    # r = cos(theta - pi) + 2 h: -1 at 0, 0 at pi/2, 1 at pi
    assert torch.allclose(c.reward(x)[:3], torch.tensor([-1.0, 0.0, 1.0]), atol=1e-6)
    # off the plane by (0.06, 0.08) in z_2, z_3 and radius 1: distance 0.1 (valid, the boundary), h = 0.06
    off = c.embed(torch.tensor([math.pi]), torch.tensor([[0.06, 0.08]]))
    assert float(c.distance(off)) == pytest.approx(0.1, abs=1e-6)
    assert float(c.reward(off)) == pytest.approx(1.0 + 2 * 0.06, abs=1e-5)
    far = c.embed(torch.tensor([math.pi]), torch.tensor([[0.2, 0.0]]))
    assert not bool(c.valid(far)[0]) and not bool(c.near(far)[0]) and bool(c.near(c.embed(torch.tensor([3.0])))[0])
    assert not bool(c.near(c.embed(torch.tensor([math.pi - NEAR - 0.01])))[0])
    b = c.bounds()
    assert b.best == pytest.approx(1 + 2 * 0.1, abs=1e-6) and b.worst == pytest.approx(-1 - 2 * 0.1, abs=1e-6)
    # the decoy: a local optimum decoy - 1 at theta = 0
    d = _circle(decoy=1.5)
    assert float(d.reward(d.embed(torch.tensor([0.0])))) == pytest.approx(0.5, abs=1e-6)
    assert d.bounds().best == pytest.approx(1 + 1.5 * math.exp(-math.pi ** 2 / 0.72) + 0.2, abs=1e-4)


def test_the_data_follow_the_von_mises_density():
    c = _circle(dim=8)
    x = c.sample(20_000, np.random.default_rng(1))
    assert float(c.distance(x).max()) < 1e-5
    th = c.angle(x).numpy()
    # E[cos theta] = I_1(kappa) / I_0(kappa) = 0.4464 at kappa = 1
    assert np.cos(th).mean() == pytest.approx(0.4464, abs=0.015)


def _features_model(dim: int = 3) -> RewardMLP:
    return seeded(0, RewardMLP, dim, 8, 4)


@pytest.mark.parametrize("kind", ["paper", "official"])
def test_the_ucb_bonus_against_a_direct_computation(kind):
    r = _features_model()
    data = torch.randn(40, 3, generator=torch.Generator().manual_seed(0))
    x = torch.randn(7, 3, generator=torch.Generator().manual_seed(1))
    alpha, lam, clip = 0.7, 1e-3, 10.0
    u = UCB(r, data, alpha, lam, clip, kind)
    phi = r.features(data).detach().double().numpy()
    if kind == "paper":
        sigma = sum(np.outer(p, p) for p in phi) + lam * np.eye(4)
    else:
        centred = phi - phi.mean(0)
        sigma = centred.T @ centred / (len(phi) - 1) + lam * np.eye(4)
    q = r.features(x).detach().double().numpy()
    want = np.minimum(alpha * np.sqrt(np.einsum("nf,nf->n", q, np.linalg.solve(sigma, q.T).T)), clip)
    assert np.allclose(u.bonus(x).detach().numpy(), want, rtol=1e-4)
    assert torch.allclose(u(x), r(x) + u.bonus(x))
    assert float(UCB(r, data, 1e6, lam, 0.5, kind).bonus(x).detach().max()) == pytest.approx(0.5)       # the clip


def test_the_paper_covariance_shrinks_with_the_data_and_the_official_one_does_not():
    r = _features_model()
    data = torch.randn(50, 3, generator=torch.Generator().manual_seed(2))
    x = torch.randn(5, 3, generator=torch.Generator().manual_seed(3))
    more = data.repeat(4, 1)                                                  # the same points, four times as many
    paper = UCB(r, more, 1.0, 1e-9, 1e9, "paper").width(x) / UCB(r, data, 1.0, 1e-9, 1e9, "paper").width(x)
    official = UCB(r, more, 1.0, 1e-9, 1e9, "official").width(x) / UCB(r, data, 1.0, 1e-9, 1e9, "official").width(x)
    assert torch.allclose(paper, torch.full((5,), 0.5), rtol=1e-3)          # Sigma x 4 -> width / 2
    assert torch.allclose(official, torch.full((5,), math.sqrt(199 / 196)), rtol=1e-3)   # (n - 1) factor only
    with pytest.raises(ValueError):
        covariance(torch.ones(3, 2), 1.0, "unknown")  # type: ignore[arg-type]


def test_bootstrap_resamples_with_replacement_and_takes_the_max_over_heads():
    idx = bootstrap_indices(50, 4, np.random.default_rng(0))
    assert idx.shape == (4, 50) and bool(((idx >= 0) & (idx < 50)).all())
    for row in idx:
        assert len(set(row.tolist())) < 50                                      # duplicates: with replacement
    assert len({tuple(row.tolist()) for row in idx}) == 4                      # one resample per head
    # the share of distinct points of a resample tends to 1 - 1/e
    big = bootstrap_indices(20_000, 1, np.random.default_rng(1))[0]
    assert len(set(big.tolist())) / 20_000 == pytest.approx(1 - math.exp(-1), abs=0.01)
    heads = [seeded(k, RewardMLP, 3, 8, 4) for k in range(3)]
    ens = Ensemble(heads)
    x = torch.randn(6, 3)
    assert torch.allclose(ens(x), torch.stack([h(x) for h in heads]).max(0).values)
    assert torch.allclose(ens.mean(x), torch.stack([h(x) for h in heads]).mean(0))


def test_the_objective_reaches_the_tilted_optimum_on_a_discrete_toy():
    p_prev = torch.tensor([0.6, 0.3, 0.08, 0.02], dtype=torch.float64)
    r = torch.tensor([0.0, 0.2, 0.5, 1.0], dtype=torch.float64)
    beta = 0.25
    star = tilt(p_prev, r, beta)
    by_hand = p_prev * torch.exp(r / beta)
    assert torch.allclose(star, by_hand / by_hand.sum())
    logits = torch.zeros(4, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([logits], lr=0.05)
    for _ in range(3000):
        loss = -kl_objective(torch.softmax(logits, 0), p_prev, r, beta)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert torch.allclose(torch.softmax(logits, 0), star, atol=1e-4)
    # the optimum's value is beta log E_prev[exp(r / beta)], above any other distribution's
    best = kl_objective(star, p_prev, r, beta)
    assert float(best) == pytest.approx(beta * math.log(float((p_prev * torch.exp(r / beta)).sum())), rel=1e-10)
    for p in (p_prev, torch.tensor([0.0001, 0.0001, 0.0001, 0.9997], dtype=torch.float64)):
        assert kl_objective(p, p_prev, r, beta) < best
    # where p_prev has no mass, neither has the optimum (the KL keeps the support)
    assert float(tilt(torch.tensor([0.5, 0.5, 0.0]), torch.tensor([0.0, 0.0, 10.0]), 0.1)[2]) == 0.0


def test_the_surrogate_fits_a_smooth_function_and_keeps_its_best_validation_weights():
    g = torch.Generator().manual_seed(0)
    x = torch.rand(400, 2, generator=g) * 2 - 1
    y = torch.sin(2 * x[:, 0]) + x[:, 1] ** 2
    cfg = SurrogateConfig(hidden=32, features=8, steps=600, batch=512, lr=3e-3, weight_decay=0.0, val_frac=0.1)
    r = fit_reward(x, y, cfg, 0, g)
    held = slice(int(400 * 0.9), None)
    assert float(torch.mean((r(x[held]) - y[held]) ** 2)) < 0.01
    assert not any(p.requires_grad for p in r.parameters())


def test_regret_by_hand():
    c = _circle()
    d = domain_of(c)
    # 1e-3 inside the validity radius: on its edge (h = eps) float rounding decides, and differs between CPUs
    x = torch.cat([c.embed(torch.tensor([math.pi]), torch.tensor([[0.099, 0.0]])),     # next to the best valid point
                   c.embed(torch.tensor([0.0])),                                        # r = -1
                   c.embed(torch.tensor([math.pi]), torch.tensor([[3.0, 0.0]]))])      # invalid, r = 7
    assert torch.allclose(regret(d, x), torch.tensor([2.0 * 1e-3, 2.2, 2.4]), atol=1e-5)


def _tiny_sampler() -> Sampler:
    return Sampler(linear_schedule(50), ddim_timesteps(50, 5, end=1), 1.0, 3.0)


def test_finetuning_raises_the_objective_and_the_kl_holds_it_back():
    torch.manual_seed(0)
    prev = EpsMLP(2, 16, 1, 4).requires_grad_(False)
    sampler = _tiny_sampler()
    objective = lambda x: x[:, 0]
    base = float(sampler.sample(prev, 2000, torch.Generator().manual_seed(1))[:, 0].mean())
    moved = {}
    for beta in (0.0, 5.0):
        cfg = FinetuneConfig(steps=60, batch=64, lr=3e-3, beta=beta, grad_steps=5, clip=5.0)
        out = finetune(prev, objective, sampler, cfg, torch.Generator().manual_seed(2))
        moved[beta] = float(sampler.sample(out.model, 2000, torch.Generator().manual_seed(1))[:, 0].mean()) - base
        kl = path_kl(out.model, prev, sampler, 500, torch.Generator().manual_seed(3))
        moved[f"kl{beta}"] = kl
        assert len(out.objective) == 60 and not any(p.requires_grad for p in out.model.parameters())
    assert moved[0.0] > 0.5 and 0 < moved[5.0] < moved[0.0]
    assert moved["kl5.0"] < moved["kl0.0"]
    assert path_kl(prev, prev, sampler, 100, torch.Generator()) == 0.0


def test_the_loop_runs_every_method_and_logs_each_round():
    cfg = cf.SMOKE
    c = circle(cfg)
    prev = EpsMLP(cfg.dim, cfg.hidden, cfg.layers, cfg.time_dim).requires_grad_(False)
    sampler = Sampler(linear_schedule(cfg.T), ddim_timesteps(cfg.T, cfg.ddim_steps, end=1), 1.0, 3.0)
    for method in cf.METHODS:
        out = online(prev, sampler, domain_of(c), loop_config(cfg, method), lambda name: 0,
                     np.random.default_rng(0), torch.Generator().manual_seed(0))
        at_once = method in ("nonadaptive", "guidance")
        rounds = 1 if at_once else len(cfg.budgets)
        assert out.log.queries == ([sum(cfg.budgets)] if at_once else [8, 16])
        assert len(out.log.regret) == len(out.log.model_valid) == len(out.log.samples) == rounds
        assert out.samples.shape == (cfg.eval_samples, cfg.dim)
        assert torch.equal(out.log.samples[-1], out.samples[:SHOWN])      # the last round's are the final model's
        assert all(0 <= v <= 1 for v in out.log.query_near)


@pytest.mark.parametrize("overrides, error", [
    ([], None),
    (["budgets=0,8"], "budgets"), (["budgets=-1"], "budgets"),
    (["alpha=-0.1"], "alpha"), (["beta=-1"], "beta"), (["alpha=0", "beta=0"], None),
    (["covariance=diagonal"], "covariance"), (["domain=digits"], "domain"), (["methods=ucb,ppo"], "methods"),
    (["noise=0"], "thompson"), (["noise=0", "methods=ucb,greedy"], None), (["ts_step=0"], "ts_step"),
    (["ts_steps=0"], "ts_steps"), (["guidance_scale=-1"], "guidance_scale"),
    (["grad_steps=5"], "grad_steps=5 > ddim_steps=4"), (["ddim_steps=100"], "ddim_steps"),
    (["time_dim=7"], "time_dim"), (["eta=0"], "eta"), (["heads=1"], "heads"),
])
def test_config_rules(overrides, error):
    from icml24.core.testing import check_config_rule

    check_config_rule(cf.SMOKE, overrides, cf.validate, error)


def test_a_bad_config_prints_one_line_exits_2_and_writes_nothing(tmp_path):
    out = run_cli("run", "seiko", "--preset", "smoke", "--out", str(tmp_path), "--set", "grad_steps=40", timeout=120)
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip().startswith("error:") and len(out.stderr.strip().splitlines()) == 1
    assert not any(tmp_path.iterdir())


def test_langevin_draws_follow_the_closed_form_posterior_of_a_linear_model():
    # y = w x + N(0, s^2), prior w ~ N(0, p^2): posterior N(m, v), v = 1 / (sum x^2 / s^2 + 1 / p^2), m = v sum x y / s^2
    # p = 0.2 makes the prior's precision (25) comparable to the likelihood's (about 82), so a wrong prior term shows
    gen = torch.Generator().manual_seed(0)
    x = torch.linspace(-1, 1, 20)[:, None]
    y = 0.7 * x[:, 0] + 0.3 * torch.randn(20, generator=gen)
    s, p = 0.3, 0.2
    v = 1.0 / (float((x ** 2).sum()) / s ** 2 + 1 / p ** 2)
    m = v * float((x[:, 0] * y).sum()) / s ** 2

    class Lines(torch.nn.Module):       # K chains in one module: U is a sum over chains, so each w_k is its own chain
        def __init__(self, k):
            super().__init__()
            self.w = torch.nn.Parameter(torch.zeros(k))

        def forward(self, z):
            return z[:, :1] * self.w    # (n, K)

    K, cfg = 4000, LangevinConfig(steps=300, step=1e-3, noise=s, prior=p)   # relaxes by e^-16 from w = 0
    # the step's own bias (2.7% here), exactly: w <- w - (h / 2)(w - m) / v + sqrt(h) z has the stationary law
    # N(m, v / (1 - h / (4 v)))
    v_chain = v / (1 - cfg.step / (4 * v))
    start = Lines(K)
    with torch.no_grad():                                            # the loop calls it from inside no_grad code too
        draws = sgld(start, x, y[:, None], cfg, gen).w              # (K,) independent draws
    assert abs(float(draws.mean()) - m) < 4 * math.sqrt(v_chain / K)                # the mean within 4 standard errors
    assert abs(float(draws.var()) / v_chain - 1) < 4 * math.sqrt(2 / K)            # the variance within 4 (9%)
    assert float(start.w.detach().abs().max()) == 0.0 and start.w.requires_grad     # the fitted model is left as it is
    assert not any(q.requires_grad for q in sgld(start, x, y[:, None], cfg, gen).parameters())
    with pytest.raises(FloatingPointError, match="ts_step"):
        sgld(start, x, y[:, None], cfg._replace(step=10.0), gen)    # far past the stable step: diverges


def test_guidance_by_hand_and_none_at_scale_zero():
    sch = linear_schedule(100)
    a = torch.tensor([1.0, -2.0, 0.5])

    class Linear(torch.nn.Module):              # eps = k x_t: xhat_0 = (1 - sqrt(1 - abar) k) x_t / sqrt(abar)
        def __init__(self, k):
            super().__init__()
            self.k = k

        def forward(self, z, t):
            return self.k * z

    t = torch.tensor([10, 60])
    ab = sch.alpha_bar[t].float()[:, None]
    x = torch.randn(2, 3)
    for k in (0.0, 0.7):                        # r(x) = a . x: grad_{x_t} r(xhat_0) = a (1 - sqrt(1 - abar) k) / sqrt(abar)
        g = Guided(Linear(k), lambda z: z @ a, sch, 2.0)
        want = k * x - 2.0 * torch.sqrt(1 - ab) * a * (1 - torch.sqrt(1 - ab) * k) / torch.sqrt(ab)
        assert torch.allclose(g(x, t), want, atol=1e-5)
    base = EpsMLP(3, 8, 1, 4)
    x = torch.randn(5, 3)
    tt = torch.full((5,), 40)
    with torch.no_grad():
        assert torch.equal(Guided(base, lambda z: (z ** 2).sum(1), sch, 0.0)(x, tt), base(x, tt))
    sampler = Sampler(sch, ddim_timesteps(100, 5, end=1), 1.0, 3.0)
    pulled = sampler.sample(Guided(base, lambda z: z @ a, sch, 5.0), 400, torch.Generator().manual_seed(1)) @ a
    plain = sampler.sample(base, 400, torch.Generator().manual_seed(1)) @ a
    assert float(pulled.mean()) > float(plain.mean()) + 0.5                # guidance raises the reward
    assert all(q.grad is None for q in base.parameters())                   # no gradient reaches the model


def test_the_figures_of_a_smoke_run():
    import dataclasses

    import matplotlib.pyplot as plt

    from icml24.core.results import RunResult
    from icml24.papers.seiko.experiment import figures, run

    for methods in (cf.METHODS, ("nokl", "guidance")):           # every method; no method with rounds to show
        cfg = dataclasses.replace(cf.SMOKE, methods=methods)
        figs = figures(RunResult("seiko", "smoke", {}, "", [run(cfg, seed) for seed in (0, 1)]))
        assert ("samples_by_round" in figs) == ("ucb" in methods)
        plt.close("all")

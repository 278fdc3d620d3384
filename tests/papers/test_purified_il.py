"""purified_il: the DDPM block (forward marginal, one reverse step by hand, a 2-D toy), BC and BCND on known
experts, both purifiers (the paper's and the official code's), the demonstration data (noise models, pairs,
Minari round trip, D1 from the expert's checkpoints) and the config's rules."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch

pytest.importorskip("gymnasium")
pytest.importorskip("minari")

from icml24.common import offline  # noqa: E402
from icml24.common.diffusion import (  # noqa: E402
    EpsMLP,
    ddpm_loss,
    linear_schedule,
    p_step,
    q_sample,
    reverse,
    time_embedding,
)
from icml24.core.context import RunContext  # noqa: E402
from icml24.core.errors import UserError  # noqa: E402
from icml24.papers.purified_il import bc, demos  # noqa: E402
from icml24.papers.purified_il.config import QUICK, SMOKE, validate  # noqa: E402
from icml24.papers.purified_il.experiment import data_sets, demos_stage  # noqa: E402
from icml24.papers.purified_il.purify import DDPMConfig, OfficialEps, Purifier, fit_purifier  # noqa: E402

PENDULUM_SMOKE = dataclasses.replace(SMOKE, env="Pendulum-v1", d1_steps=())


def test_alpha_bar_is_the_variance_recursion_of_the_single_steps():
    # x_t = sqrt(alpha_t) x_{t-1} + sqrt(beta_t) eps: Var(x_t | x_0) = alpha_t Var_{t-1} + beta_t, Var_0 = 0
    s = linear_schedule(1000)
    var, scale = 0.0, 1.0
    for t in range(1, 1001):
        var = float(s.alphas[t]) * var + float(s.betas[t])
        scale *= math.sqrt(float(s.alphas[t]))
        if t in (1, 10, 300, 1000):
            assert var == pytest.approx(1 - float(s.alpha_bar[t]), rel=1e-12)
            assert scale == pytest.approx(math.sqrt(float(s.alpha_bar[t])), rel=1e-12)


def test_the_forward_marginal_matches_its_closed_form_by_monte_carlo():
    s = linear_schedule(1000)
    g = torch.Generator().manual_seed(0)
    n, t = 200_000, 250
    x0 = torch.tensor([[1.5, -2.0]]).expand(n, 2)
    xt = q_sample(s, x0, torch.full((n,), t), torch.randn(n, 2, generator=g))
    ab = float(s.alpha_bar[t])
    se = math.sqrt((1 - ab) / n)
    assert torch.allclose(xt.mean(0), math.sqrt(ab) * x0[0], atol=5 * se)
    assert torch.allclose(xt.var(0), torch.full((2,), 1 - ab), rtol=0.02)
    # t = 0 is the data itself
    assert torch.equal(q_sample(s, x0[:3], torch.zeros(3, dtype=torch.long), torch.ones(3, 2)), x0[:3])


def test_one_reverse_step_against_the_ddpm_formula_by_hand():
    s = linear_schedule(50, 1e-3, 0.05)

    def model(x, t):                       # a fixed "network": eps_hat = 0.3 x + 0.01 t
        return 0.3 * x + 0.01 * t[:, None].float()

    x = torch.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=torch.float64)
    t = 17
    out = p_step(model, s, x, t, torch.Generator().manual_seed(3))
    z = torch.randn(x.shape, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    beta = 1e-3 + (t - 1) * (0.05 - 1e-3) / 49                                     # linspace entry t
    ab = np.prod([1 - (1e-3 + (k - 1) * (0.05 - 1e-3) / 49) for k in range(1, t + 1)])
    eps = 0.3 * x.numpy() + 0.01 * t
    by_hand = (x.numpy() - beta / math.sqrt(1 - ab) * eps) / math.sqrt(1 - beta) + math.sqrt(beta) * z.numpy()
    np.testing.assert_allclose(out.numpy(), by_hand, rtol=1e-8)     # linspace rounds in the last bits
    # the last step adds no noise
    last = p_step(model, s, x, 1, torch.Generator().manual_seed(3))
    b1 = 1e-3
    np.testing.assert_allclose(last.numpy(), (x.numpy() - b1 / math.sqrt(b1) * (0.3 * x.numpy() + 0.01))
                               / math.sqrt(1 - b1), rtol=1e-8)


def test_reverse_from_zero_is_the_identity_and_time_embedding_differs_per_step():
    s = linear_schedule(10)
    x = torch.randn(4, 3)
    assert torch.equal(reverse(lambda a, b: a, s, x, 0, torch.Generator()), x)
    with pytest.raises(ValueError):
        reverse(lambda a, b: a, s, x, 11, torch.Generator())
    e = time_embedding(torch.arange(5), 16)
    assert e.shape == (5, 16) and torch.cdist(e, e).fill_diagonal_(1.0).min() > 0.1
    # the official code's variant ignores the step
    net = EpsMLP(3, 8, 1, time_dim=0)
    assert torch.equal(net(x, torch.zeros(4, dtype=torch.long)), net(x, torch.full((4,), 7)))


def test_a_ddpm_trained_on_a_2d_toy_recovers_its_distribution():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    n = 2000
    side = torch.where(torch.rand(n, generator=g) < 0.5, -1.0, 1.0)
    data = torch.stack([2.0 * side, torch.zeros(n)], 1) + 0.3 * torch.randn(n, 2, generator=g)   # two blobs
    s = linear_schedule(100, 1e-3, 0.2)                                           # T = 100, rescaled betas
    net = EpsMLP(2, 64, 3, time_dim=16)
    opt = torch.optim.Adam(net.parameters(), lr=2e-3)
    for _ in range(1200):
        idx = torch.randint(0, n, (256,), generator=g)
        loss = ddpm_loss(net, s, data[idx], g)
        opt.zero_grad()
        loss.backward()
        opt.step()
    x = reverse(net.eval(), s, torch.randn(4000, 2, generator=g), 100, g)
    right = x[:, 0] > 0
    assert 0.4 < right.float().mean() < 0.6                                       # both modes, equal weights
    for sign, part in ((1.0, x[right]), (-1.0, x[~right])):
        assert torch.allclose(part.mean(0), torch.tensor([2.0 * sign, 0.0]), atol=0.15)
        assert torch.all((part.std(0) > 0.2) & (part.std(0) < 0.45))             # true std 0.3 per axis


def test_bc_fits_a_known_linear_expert():
    rng = np.random.default_rng(0)
    S = rng.normal(size=(2000, 3))
    W = np.array([[0.5], [-1.0], [0.25]])
    A = S @ W + 0.1
    policy = bc.fit_bc(S, A, bc.BCConfig(64, 2, 1500, 256, 3e-3), torch.Generator().manual_seed(0))
    test = rng.normal(size=(500, 3))
    pred = bc.act(policy, 2.0)(test)
    assert np.sqrt(np.mean((pred - np.clip(test @ W + 0.1, -2, 2)) ** 2)) < 0.05


def test_weighted_bc_ignores_zero_weight_pairs_and_bcnd_downweights_outliers():
    rng = np.random.default_rng(1)
    S = rng.normal(size=(1000, 2))
    A = S[:, :1] * 0.5
    bad = rng.random(1000) < 0.2
    A_noisy = np.where(bad[:, None], 1.8 * rng.choice([-1.0, 1.0], (1000, 1)), A)     # 20% salt and pepper
    cfg = bc.BCConfig(32, 2, 700, 256, 3e-3)
    w = (~bad).astype(float)
    clean = bc.fit_bc(S, A_noisy, cfg, torch.Generator().manual_seed(0), w)
    test = rng.normal(size=(300, 2))
    truth = test[:, :1] * 0.5
    err = lambda p: float(np.sqrt(np.mean((bc.act(p, 2.0)(test) - truth) ** 2)))  # noqa: E731
    plain = bc.fit_bc(S, A_noisy, cfg, torch.Generator().manual_seed(0))
    res = bc.bcnd(S, A_noisy, cfg, 3, torch.Generator().manual_seed(0))
    assert err(clean) < 0.05 < err(plain)
    assert len(res.weights) == 3 and np.all(res.weights[0] == 1.0)
    assert res.weights[-1][bad].mean() < 0.5 * res.weights[-1][~bad].mean()
    assert err(res.policy) < err(plain)


def test_bcnd_weights_use_a_variance_per_action_dimension():
    rng = np.random.default_rng(2)
    S = rng.normal(size=(800, 2))
    A = np.stack([0.5 * S[:, 0], 0.1 * S[:, 1]], 1)                       # 2-D actions
    bad = rng.random(800) < 0.2
    A_noisy = A + bad[:, None] * rng.normal(0, 1.0, (800, 2))
    res = bc.bcnd(S, A_noisy, bc.BCConfig(32, 2, 700, 256, 3e-3), 2, torch.Generator().manual_seed(0))
    w = res.weights[-1]
    assert w[bad].mean() < 0.2 * w[~bad].mean()                             # outliers clearly down-weighted
    assert w.mean() == pytest.approx(1.0)


def test_the_purifier_is_the_identity_at_zero_and_pulls_points_back_to_a_line():
    rng = np.random.default_rng(0)
    s = rng.uniform(-1, 1, (400, 1))
    x_opt = np.concatenate([s, 0.8 * s], 1)                                      # the optimal set: a = 0.8 s
    cfg = DDPMConfig(T=200, hidden=64, layers=3, time_dim=16, steps=800, batch=256, lr=1e-3)
    torch.manual_seed(0)
    pur = fit_purifier(x_opt, cfg, torch.Generator().manual_seed(0))
    assert isinstance(pur, Purifier)
    s_test = rng.uniform(-0.8, 0.8, (300, 1))
    noisy = np.concatenate([s_test, 0.8 * s_test + 0.5 * rng.choice([-1.0, 1.0], (300, 1))], 1)
    g = torch.Generator().manual_seed(1)
    np.testing.assert_array_equal(pur.purify(noisy, 0, g), noisy)
    off = lambda x: float(np.mean(np.abs(x[:, 1] - 0.8 * x[:, 0])))  # noqa: E731  distance to the line
    assert off(pur.purify(noisy, 100, g)) < 0.5 * off(noisy)
    # the official code's purifier: raw units, and it too pulls the points back towards the line
    torch.manual_seed(0)
    official = fit_purifier(x_opt, cfg._replace(official=True, dropout=0.2), torch.Generator().manual_seed(0))
    assert isinstance(official.model, OfficialEps) and official.train_mode
    np.testing.assert_array_equal(official.mean, 0.0)
    np.testing.assert_array_equal(official.std, 1.0)
    assert off(official.purify(noisy, 100, g)) < 0.7 * off(noisy)


def test_the_official_network_ignores_the_step_shares_one_batch_norm_and_purifies_in_training_mode():
    net = OfficialEps(5, 16, 3, dropout=0.0)
    assert sum(isinstance(m, torch.nn.BatchNorm1d) for m in net.modules()) == 1        # one module for all layers
    assert sum(isinstance(m, torch.nn.Linear) for m in net.modules()) == 4             # 3 hidden + output
    x = torch.randn(32, 5)
    net.train()
    assert torch.equal(net(x, torch.zeros(32, dtype=torch.long)), net(x, torch.full((32,), 500)))
    # training mode: batch norm uses the statistics of the batch, so a row's output depends on the others
    assert not torch.allclose(net(x, torch.zeros(32))[:4], net(x[:4], torch.zeros(4)))
    net.eval()
    assert torch.allclose(net(x, torch.zeros(32))[:4], net(x[:4], torch.zeros(4)), atol=1e-6)
    # the purifier sets the mode itself: the official one purifies in training mode (dropout on: not repeatable)
    pur = Purifier(OfficialEps(2, 16, 2, dropout=0.5).eval(), linear_schedule(20), np.zeros(2), np.ones(2), True)
    xs = np.random.default_rng(0).normal(size=(64, 2))
    a = pur.purify(xs, 1, torch.Generator().manual_seed(0))
    assert pur.model.training
    b = pur.purify(xs, 1, torch.Generator().manual_seed(0))                # same diffusion noise, new dropout
    assert not np.allclose(a, b)
    ours = pur._replace(model=EpsMLP(2, 16, 2, 8).train(), train_mode=False)
    np.testing.assert_array_equal(ours.purify(xs, 3, torch.Generator().manual_seed(0)),
                                  ours.purify(xs, 3, torch.Generator().manual_seed(0)))
    assert not ours.model.training


def test_noise_models_have_their_stated_sizes_and_are_not_clipped():
    obs = np.tile([[1.0, 0.0, 0.0]], (20_000, 1))             # upright at rest: the expert's torque is 0
    rng = np.random.default_rng(0)
    task = demos.make_task("Pendulum-v1", 1, 0, RunContext.local())
    g = demos.noisy_expert(task, "gaussian", 0.25, rng)(obs)
    assert g.std() == pytest.approx(0.5, rel=0.03) and abs(g.mean()) < 0.02
    big = demos.noisy_expert(task, "gaussian", 1.0, rng)(obs)         # std 2 = the bound: recorded unclipped
    assert big.std() == pytest.approx(2.0, rel=0.03) and np.mean(np.abs(big) > 2.0) == pytest.approx(0.317, abs=0.02)
    u = demos.noisy_expert(task, "uniform", 0.25, rng)(obs)
    assert u.std() == pytest.approx(0.5, rel=0.03) and np.abs(u).max() <= 0.5 * math.sqrt(3) + 1e-9
    sp = demos.noisy_expert(task, "salt_pepper", 0.3, rng)(obs)
    assert np.mean(sp != 0) == pytest.approx(0.3, abs=0.015) and set(np.unique(sp)) == {-2.0, 0.0, 2.0}
    with pytest.raises(ValueError):
        demos.noisy_expert(task, "pink", 0.1, rng)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        demos.make_task("CartPole-v1", 1, 0, RunContext.local())
    with pytest.raises(ValueError):
        demos.make_task("Pendulum-v1", 1, 0, RunContext.local(), d1_steps=(100,))    # no checkpoints there


def test_demonstrations_come_back_from_minari_as_pairs_with_the_expert_action(tmp_path):
    ctx = RunContext(cache_dir=tmp_path, code_hash="test")
    task = demos.make_task("Pendulum-v1", 1, 0, ctx)
    d = demos_stage(PENDULUM_SMOKE, task, 3, ctx)
    assert len(d.optimal.states) == SMOKE.n_optimal
    assert set(d.noisy) == {s.tag for s in data_sets(PENDULUM_SMOKE)} == {"g40", "g60", "uniform", "sp"}
    for p in (d.optimal, *d.noisy.values()):
        np.testing.assert_allclose(p.expert, offline.swing_up(p.states))
    # the optimal pairs are the expert's own actions (float32 storage); the noisy ones are not
    np.testing.assert_allclose(d.optimal.actions, d.optimal.expert, atol=1e-6)
    assert np.mean(np.abs(d.noisy["g60"].actions - d.noisy["g60"].expert)) > 0.1
    # the data sets are cached: a second call reads the same episodes
    again = demos_stage(PENDULUM_SMOKE, task, 3, ctx)
    np.testing.assert_array_equal(again.noisy["sp"].actions, d.noisy["sp"].actions)
    assert len(list(tmp_path.glob("demonstrations-*"))) == 1


def test_the_config_rules_refuse_bad_d1_checkpoints_and_sweeps():
    validate(QUICK)
    validate(SMOKE)
    validate(PENDULUM_SMOKE)
    bad = [dict(d1_steps=(1100,)),                          # not a multiple of checkpoint_every
           dict(d1_steps=(40_000,)),                        # not below expert_steps (the final expert)
           dict(d1_steps=(1000, 1000)),
           dict(d1_steps=()),                               # MuJoCo without D1
           dict(env="Pendulum-v1"),                         # Pendulum with D1
           dict(i_sweep=(30,)),                             # inverse_point itself
           dict(i_sweep=(5000,)),                           # beyond T
           dict(noise_levels=(0.6, 0.4))]
    for change in bad:
        with pytest.raises(UserError):
            validate(dataclasses.replace(QUICK, **change))


def test_a_mujoco_task_trains_its_sb3_expert_once_and_runs_end_to_end(tmp_path, monkeypatch):
    """The QUICK path at toy size: Reacher-v5 (50-step episodes, 2-D actions in [-1, 1]) with a 300-step SAC
    expert from the artefact cache (and its checkpoints, D1), demonstrations as Minari datasets, both
    purifiers and every learner. Training writes nothing into the temporary folder (SB3's default logger
    would leave an empty SB3-<time> folder there)."""
    pytest.importorskip("stable_baselines3")
    pytest.importorskip("mujoco")
    import tempfile

    from icml24.papers.purified_il.experiment import run

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    cache = tmp_path / "cache"
    ctx = RunContext(cache_dir=cache, code_hash="test")
    torch.manual_seed(123)
    before = torch.rand(3)
    torch.manual_seed(123)
    task = demos.make_task("Reacher-v5", 300, 0, ctx)
    assert torch.equal(torch.rand(3), before)                      # SB3 reseeds globally; the expert does not
    assert task.u_max == 1.0 and len(list(cache.glob("sb3_expert-*"))) == 1
    obs = np.zeros((4, 10))
    np.testing.assert_array_equal(task.expert(obs), demos.make_task("Reacher-v5", 300, 0, ctx).expert(obs))
    assert len(list(cache.glob("sb3_expert-*"))) == 1                   # read back, not trained again
    # D1: the checkpoints saved by the same training run (SMOKE: every 100 steps), from one cache entry
    ck = demos.make_task("Reacher-v5", 300, 0, ctx, checkpoint_every=100, d1_steps=(200, 100))
    assert sorted(ck.checkpoints) == [100, 200] and len(list(cache.glob("sb3_expert-*"))) == 2
    obs = np.random.default_rng(0).normal(size=(8, 10))
    assert not np.allclose(ck.checkpoints[100](obs), ck.expert(obs))
    d = demos_stage(SMOKE, ck, 0, ctx)
    assert set(d.noisy) == {"g40", "g60", "uniform", "sp", "ck200", "ck100"}
    p = d.noisy["ck100"]                                         # the checkpoint's own deterministic actions
    np.testing.assert_allclose(p.actions, ck.checkpoints[100](p.states), atol=1e-5)
    res = run(SMOKE, 0, ctx)
    m = res.metrics
    assert len(list(cache.glob("sb3_expert-*"))) == 2                  # read back, not trained again
    for key in ("score_dpbc_strong", "score_dpbco_strong", "score_oracle_strong", "score_bc_d1_strong",
                "score_dpbc_i2_strong", "score_dpbco_i2_strong", "act_err_after_official_strong"):
        assert np.isfinite(m[key]), key
    assert m["return_expert"] != m["return_uniform"] and m["act_err_before_strong"] > 0
    assert m["headroom_strong"] == m["score_oracle_strong"] - m["score_bc_strong"]
    assert m["gain_weak_pos"] == max(m["gain_weak"], 0.0)
    assert m["act_err_before_d1_strong"] == m["act_err_before_ck100"]   # the worst checkpoint is D1's L1
    assert res.curves["i_sweep"] == [2.0, 5.0]
    assert res.curves["score_vs_i_dpbc"] == [m["score_dpbc_i2_strong"], m["score_dpbc_strong"]]
    assert not list(scratch.glob("SB3-*"))                               # no logger folder left behind


def test_demonstration_reset_seeds_never_meet_each_other_or_the_evaluation_starts():
    # the former seed * 1000 + 100 * k collided for more than 100 episodes (and seed s + 1's expert met set 10
    # of seed s); now each seed's resets start at a base above every evaluation reset seed, sets follow sets
    from icml24.papers.purified_il.experiment import EVAL_SEED, _demo_reset_base

    bases = [_demo_reset_base(s) for s in range(50)]
    assert len(set(bases)) == 50 and min(bases) >= 2**31 > EVAL_SEED + 10**6 and max(bases) < 2**31 + 2**30
    episodes, sets = 150, 6
    starts = [bases[0] + k * episodes + i for k in range(sets + 1) for i in range(episodes)]
    assert len(set(starts)) == len(starts)

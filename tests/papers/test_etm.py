"""ETM: the Langevin sampler, InfoNCE and the gradient penalty against direct computations, recovery of
a linear system, the forward models, the data layer (D4RL arrays, Minari round trip), model rollouts
against the real Pendulum-v1 (with and without the torque dead zone), the jump task's policies, mode validity
and sharpness, and the DOPE metrics against hand-computed values."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

pytest.importorskip("gymnasium")
pytest.importorskip("minari")

from icml24.common import offline  # noqa: E402
from icml24.papers.etm import data, jump, ope  # noqa: E402
from icml24.papers.etm.energy import (  # noqa: E402
    BOX,
    ETM,
    PREDICT_SAMPLER,
    TRAIN_SAMPLER,
    EnergyNet,
    ETMConfig,
    ETMEnsemble,
    LangevinConfig,
    energy_grad,
    grad_penalty,
    info_nce,
    langevin,
    step_sizes,
)
from icml24.papers.etm.forward import DeterministicMLP, ForwardConfig, GaussianEnsemble  # noqa: E402


def test_step_sizes_follow_the_polynomial_schedule():
    eta = step_sizes(TRAIN_SAMPLER)
    assert len(eta) == 50 and eta[0] == pytest.approx(0.1) and eta[-1] == pytest.approx(1e-3)
    k = 10
    assert eta[k] == pytest.approx((0.1 - 1e-3) * (1 - k / 49) ** 2 + 1e-3)
    assert np.all(np.diff(eta) <= 0)


def test_one_langevin_step_by_hand():
    # E(t) = 3 t_0 - t_1: grad (3, -1); g = 10 leaves it, eta_0 = 0.1: move 0.1 * 0.5 * (3, -1) = (0.15, -0.05)
    cfg = LangevinConfig(iters=1, noise=0.0, grad_clip=10.0, delta_clip=0.5)
    out = langevin(energy_grad(lambda t: 3 * t[..., 0] - t[..., 1]), torch.tensor([[0.2, 0.3]]), cfg)
    assert torch.allclose(out, torch.tensor([[0.2 - 0.15, 0.3 + 0.05]]))
    # the gradient clip (0.5) and the box clamp (1.1)
    cfg2 = LangevinConfig(iters=1, noise=0.0, grad_clip=0.5, delta_clip=0.5)
    out2 = langevin(energy_grad(lambda t: 3 * t[..., 0] - t[..., 1]), torch.tensor([[0.0, 1.1]]), cfg2)
    assert torch.allclose(out2, torch.tensor([[-0.025, BOX]]))


def test_langevin_lowers_the_energy_of_samples():
    g = torch.Generator().manual_seed(0)
    centre = torch.tensor([0.4, -0.3, 0.1])
    energy = lambda t: 8.0 * ((t - centre) ** 2).sum(-1)
    start = 2 * torch.rand(2000, 3, generator=g) - 1
    for cfg in (TRAIN_SAMPLER, PREDICT_SAMPLER):
        end = langevin(energy_grad(energy), start, cfg, g)
        assert float(energy(end).mean()) < 0.25 * float(energy(start).mean())
    # noiseless descent ends at the minimum; the noisy sampler spreads around it
    end = langevin(energy_grad(energy), torch.zeros(5, 3), LangevinConfig(iters=300, noise=0.0, grad_clip=10.0, delta_clip=0.5))
    assert torch.allclose(end, centre.expand(5, 3), atol=1e-3)
    # and on an (untrained) energy network: the mean energy goes down
    net = EnergyNet(2, 3, hidden=16, layers=2)
    x = torch.randn(500, 2, generator=g)
    for p in net.parameters():
        p.requires_grad_(False)
    t0 = 2 * torch.rand(500, 3, generator=g) - 1
    t1 = langevin(lambda t: net.target_grad(x, t), t0, PREDICT_SAMPLER)
    assert float(net(x, t1).mean()) < float(net(x, t0).mean())


def test_the_hand_gradient_of_the_energy_net_equals_autograd_bit_for_bit():
    # 2-d and 3-d batches (training negatives; prediction restarts), 1 to 3 hidden layers; the parameters untouched
    g = torch.Generator().manual_seed(4)
    for layers, shape in ((1, (50,)), (2, (3, 40)), (3, (256,))):
        net = EnergyNet(4, 3, hidden=32, layers=layers)
        x, t = torch.randn(*shape, 4, generator=g), 2 * torch.rand(*shape, 3, generator=g) - 1
        auto = energy_grad(lambda d: net(x, d))(t)
        assert torch.equal(net.target_grad(x, t), auto) and auto.abs().sum() > 0
        assert not net.target_grad(x, t).requires_grad           # no graph: the parameters are not in it


def test_info_nce_equals_a_direct_computation():
    g = torch.Generator().manual_seed(1)
    E = torch.randn(4, 6, generator=g, dtype=torch.float64)
    for tau in (1.0, 0.5):
        direct = [-np.log(np.exp(-e[-1] / tau) / np.exp(-e / tau).sum()) for e in E.numpy()]
        assert np.allclose(info_nce(E, tau).numpy(), direct)
    # the official form: KL divergence of a one-hot target at the last column from log softmax(-E)
    logp = torch.log_softmax(-E, -1)
    onehot = torch.nn.functional.one_hot(torch.full((4,), 5), 6).double()
    kl = torch.nn.KLDivLoss(reduction="none")(logp, onehot).sum(-1)
    assert torch.allclose(info_nce(E), kl)


def test_grad_penalty_by_hand_and_by_gradcheck():
    # a linear energy (no hidden layer): grad_Delta E = w_Delta for every target
    net = EnergyNet(2, 2, layers=0).double()
    with torch.no_grad():
        net.net[0].weight.copy_(torch.tensor([[1.0, -1.0, 3.0, 4.0]]))      # ||w_Delta|| = 5
    x = torch.zeros(3, 2, dtype=torch.float64)
    targets = torch.zeros(3, 4, 2, dtype=torch.float64)
    assert torch.allclose(grad_penalty(net, x, targets, margin=2.0), torch.full((3,), 9.0, dtype=torch.float64))
    assert torch.allclose(grad_penalty(net, x, targets, margin=6.0), torch.zeros(3, dtype=torch.float64))
    # the penalty is differentiable in theta (create_graph): autograd against central differences
    torch.manual_seed(0)
    net2 = EnergyNet(2, 2, hidden=5, layers=1).double()
    net2.net[1] = torch.nn.Tanh()                                          # smooth, so differences converge
    xg, tg = torch.randn(2, 2, dtype=torch.float64), 3 * torch.randn(2, 3, 2, dtype=torch.float64)
    W = net2.net[0].weight
    with torch.no_grad():
        W.mul_(4.0)                                                        # gradients above the margin
    grad_penalty(net2, xg, tg, margin=0.1).sum().backward()
    h = 1e-6
    for i, j in ((0, 0), (2, 3), (4, 1)):
        vals = []
        for shift in (h, -2 * h, h):                                       # +h, -h, back
            with torch.no_grad():
                W[i, j] += shift
            vals.append(float(grad_penalty(net2, xg, tg, margin=0.1).sum().detach()))
        up, down = vals[0], vals[1]
        assert W.grad[i, j].item() == pytest.approx((up - down) / (2 * h), rel=1e-5, abs=1e-8)


def test_etm_recovers_a_deterministic_linear_system():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    A = np.array([[0.5, -0.2, 0.3], [0.1, 0.4, -0.6]])
    x = rng.uniform(-1, 1, (2000, 3))
    target = x @ A.T
    model = ETM(3, 2, ETMConfig(hidden=32, layers=2, negatives=8, train_iters=10, batch=128, steps=300))
    model.fit(x, target, torch.Generator().manual_seed(0))
    xt = rng.uniform(-1, 1, (500, 3))
    err = ((model.predict(xt) - xt @ A.T) ** 2).mean() / (xt @ A.T).var()
    assert err < 0.05                                   # R^2 > 0.95 after 300 steps
    # the fitted linear map: least squares on the predictions recovers A
    A_hat = np.linalg.lstsq(xt, model.predict(xt), rcond=None)[0].T
    assert np.abs(A_hat - A).max() < 0.1


@pytest.mark.parametrize("cls", [GaussianEnsemble, DeterministicMLP])
def test_forward_models_recover_a_linear_system(cls):
    torch.manual_seed(0)
    rng = np.random.default_rng(1)
    A = np.array([[0.5, -0.2, 0.3], [0.1, 0.4, -0.6]])
    x = rng.uniform(-1, 1, (2000, 3))
    model = cls(3, 2, ForwardConfig(hidden=32, layers=2, members=3, batch=128, steps=600))
    model.fit(x, x @ A.T + 2.0, torch.Generator().manual_seed(0))
    xt = rng.uniform(-1, 1, (300, 3))
    assert np.abs(model.predict(xt) - (xt @ A.T + 2.0)).max() < 0.1


def test_gaussian_ensemble_log_variance_stays_within_its_soft_bounds():
    model = GaussianEnsemble(3, 2, ForwardConfig(hidden=8, layers=1, members=2))
    with torch.no_grad():
        model.nets[0][-1].bias.fill_(50.0)
        model.nets[1][-1].bias.fill_(-50.0)
    _, logvar = model.gaussians(torch.zeros(4, 3))
    logvar = logvar.detach()
    assert float(logvar.max()) <= 0.5 + 1e-4 and float(logvar.min()) >= -10.0 - 1e-4   # float32 softplus


def test_jump_task_is_discontinuous_at_the_threshold_and_invariant_in_p():
    task = jump.JumpTask()
    x = np.array([[0.0, 0.2, task.threshold - 1e-9], [0.0, 0.2, task.threshold + 1e-9], [1.7, 0.2, 0.1], [0.0, 0.2, 0.1]])
    d = jump.dynamics(x, task)
    assert d[1, 1] - d[0, 1] == pytest.approx(task.jump) and d[1, 0] - d[0, 0] == pytest.approx(0.1 * task.jump)
    assert np.array_equal(d[2], d[3])
    b = jump.branches(x, task)
    assert b.shape == (4, 2, 2) and np.allclose(b[1, 1], d[1]) and np.allclose(b[0, 0], d[0])


def test_jump_policies_shift_the_joint_distribution_of_velocity_and_action():
    task, rng = jump.JumpTask(), np.random.default_rng(0)
    train, ood = jump.sample(rng, 20_000, task), jump.sample(rng, 20_000, task, slope=jump.OOD_SLOPE)
    assert np.corrcoef(train.x[:, 1], train.x[:, 2])[0, 1] < -0.5 < 0.5 < np.corrcoef(ood.x[:, 1], ood.x[:, 2])[0, 1]
    jumped = train.x[:, 2] > task.threshold
    assert np.mean(train.x[jumped, 1] < 0) > 0.8 and np.mean(ood.x[ood.x[:, 2] > task.threshold, 1] > 0) > 0.8
    near = jump.sample(rng, 300, task, a_range=(0.25, 0.35), noise=False)
    assert len(near.x) == 300 and near.x[:, 2].min() > 0.25 and near.x[:, 2].max() < 0.35
    assert np.array_equal(near.target, jump.dynamics(near.x, task))


def test_mode_validity_accepts_either_branch_only_near_the_jump_and_sharpness_sees_a_ramp():
    task = jump.JumpTask()
    x = jump.sample(np.random.default_rng(1), 500, task, noise=False).x
    truth = jump.dynamics(x, task)
    assert jump.validity(truth, x, task, 0.25) == 1.0
    wrong = jump.branches(x, task)[np.arange(len(x)), (x[:, 2] <= task.threshold).astype(int)]   # the other branch
    near = np.abs(x[:, 2] - task.threshold) < task.near
    assert jump.validity(wrong, x, task, 0.25) == pytest.approx(near.mean())
    assert jump.validity(wrong[near], x[near], task, 0.25) == 1.0
    mid = jump.branches(x, task).mean(1)                                  # the average of the two branches
    assert jump.validity(mid[near], x[near], task, 0.25) == 0.0
    assert jump.validity(mid[near], x[near], task, 0.5 + 1e-9) == 1.0
    # a linear ramp of width 0.1 through tau: steps of about 0.005 / 0.1 of the jump
    def ramp(z: np.ndarray) -> np.ndarray:
        share = np.clip((z[:, 2] - task.threshold) / 0.1 + 0.5, 0, 1)[:, None]
        b = jump.branches(z, task)
        return (1 - share) * b[:, 0] + share * b[:, 1]
    assert jump.sharpness(ramp, task) == pytest.approx(0.05 + 0.001, abs=2e-3)
    assert jump.sharpness(lambda z: jump.dynamics(z, task), task) == pytest.approx(1.001)


def _true_pendulum(x: np.ndarray) -> np.ndarray:
    """Pendulum-v1's dynamics and reward (gymnasium's classic_control/pendulum.py), Delta = [s' - s, r]."""
    c, s, w, u = x[:, 0], x[:, 1], x[:, 2], np.clip(x[:, 3], -2, 2)
    th = np.arctan2(s, c)
    r = -(th ** 2 + 0.1 * w ** 2 + 0.001 * u ** 2)
    w2 = np.clip(w + (3 * 10.0 / 2 * np.sin(th) + 3.0 * u) * 0.05, -8, 8)
    th2 = th + w2 * 0.05
    return np.stack([np.cos(th2) - c, np.sin(th2) - s, w2 - w, r], 1)


def _dead_zone_pendulum(x: np.ndarray) -> np.ndarray:
    """The same with the dead zone: no torque where |u| < DEAD_ZONE (reward from the applied torque)."""
    u = np.where(np.abs(x[:, 3]) < data.DEAD_ZONE, 0.0, x[:, 3])
    return _true_pendulum(np.concatenate([x[:, :3], u[:, None]], 1))


@pytest.mark.parametrize("env_id, model", [(offline.PENDULUM, _true_pendulum), (data.ENV_ID, _dead_zone_pendulum)])
def test_model_values_of_the_true_dynamics_equal_the_real_returns(env_id, model):
    data.register()
    policies = [data.controller(c) for c in data.EVALUATION[:2]] + [data.controller(data.EVALUATION[-1])]
    truth, starts = [], None
    for pi in policies:
        eps = offline.collect(pi, 4, 123, env_id=env_id)
        truth.append(offline.discounted_returns(eps, 0.995).mean())
        starts = np.stack([e.observations[0] for e in eps])
    wide = ope.Bounds(np.full(3, -100.0), np.full(3, 100.0), -100.0, 100.0)
    est = ope.model_values(model, policies, starts, 200, 0.995, wide)
    assert np.allclose(est, truth, rtol=2e-3)


def test_the_dead_zone_is_a_step_in_the_action_and_changes_the_values():
    data.register()
    x = np.array([[-1.0, 0.0, 0.0, data.DEAD_ZONE - 1e-6], [-1.0, 0.0, 0.0, data.DEAD_ZONE + 1e-6]])
    dw = _dead_zone_pendulum(x)[:, 2]
    assert dw[1] - dw[0] == pytest.approx(data.DEAD_ZONE * 3 * 0.05, rel=1e-4)
    weak = data.controller(data.EVALUATION[-1])                         # the weak pump works mostly in the zone
    plain = offline.discounted_returns(offline.collect(weak, 6, 5), 0.995).mean()
    dead = offline.discounted_returns(offline.collect(weak, 6, 5, env_id=data.ENV_ID), 0.995).mean()
    assert dead < plain - 100


def test_d4rl_arrays_and_the_minari_round_trip(tmp_path):
    eps = offline.collect(data.uniform(np.random.default_rng(0)), 3, 7)
    assert [len(e.rewards) for e in eps] == [200] * 3 and all(e.observations.shape == (201, 3) for e in eps)
    d4 = offline.to_d4rl(eps)
    assert d4["observations"].shape == (600, 3) and d4["actions"].shape == (600, 1)
    assert np.array_equal(d4["next_observations"][:199], d4["observations"][1:200])
    assert d4["timeouts"].sum() == 3 and d4["timeouts"][199] and not d4["terminals"].any()
    offline.save_minari(eps, tmp_path, "pendulum/test-v0", "a test", "uniform torques", "tests")
    back = offline.load_minari(tmp_path, "pendulum/test-v0")
    assert len(back) == 3
    for a, b in zip(eps, back):
        for f in offline.Episode._fields:
            assert np.array_equal(np.asarray(getattr(a, f)), np.asarray(getattr(b, f))), f
    assert os.environ.get("MINARI_DATASETS_PATH") != str(tmp_path.resolve())   # restored afterwards


def test_dope_metrics_by_hand_spearman_not_pearson():
    truth = np.array([0.0, 1.0, 2.0, 10.0])
    est = np.array([0.0, 1.0, 8.0, 9.0])                # same order, not linear
    m = ope.dope_metrics(est, truth)
    assert m.spearman == pytest.approx(1.0)
    assert m.pearson == pytest.approx(np.corrcoef(est, truth)[0, 1]) and m.pearson < 0.95
    assert m.abs_error == pytest.approx((0 + 0 + 6 + 1) / 4 / 10)
    assert m.regret1 == 0.0
    m2 = ope.dope_metrics(np.array([5.0, 0.0, 1.0, 2.0]), truth)   # picks policy 0 (true value 0)
    assert m2.regret1 == pytest.approx(1.0)
    assert m2.spearman == pytest.approx(1 - 6 * (9 + 1 + 1 + 1) / (4 * 15))


def test_behaviour_policies_and_the_swing_up():
    obs = np.array([[np.cos(0.1), np.sin(0.1), 0.0], [-1.0, 0.0, 0.5]])
    u = offline.swing_up(obs)
    assert u[0, 0] == pytest.approx(-1.0)               # PD near the top: -(10 * 0.1 + 0)
    assert u[1, 0] == pytest.approx(2.0)                # pumping at the bottom, clipped to the torque bound
    assert data.controller(data.Controller("weak", u_max=0.3))(obs)[1, 0] == pytest.approx(0.3)
    assert np.array_equal(data.controller(data.EVALUATION[2])(obs), u)  # "swing-up" is the common controller
    assert np.all(np.abs(data.noisy(5.0, np.random.default_rng(0))(np.repeat(obs, 50, 0))) <= 2.0)


@pytest.mark.parametrize("preset, overrides, field", [
    ("SMOKE", [], None), ("QUICK", [], None), ("FULL", [], None),
    ("SMOKE", ["hidden=0"], "hidden"), ("SMOKE", ["steps=0"], "steps"), ("SMOKE", ["lr=0"], "lr"),
    ("SMOKE", ["negatives=0"], "negatives"), ("SMOKE", ["temperature=0"], "temperature"),
    ("SMOKE", ["restarts=0"], None), ("SMOKE", ["threshold=0.98"], "threshold"), ("SMOKE", ["near=0"], "near"),
    ("SMOKE", ["jump=1e308"], "jump"), ("SMOKE", ["valid_eps=0.5"], "valid_eps"), ("SMOKE", ["horizon=201"], "horizon"),
    ("SMOKE", ["gamma=0"], "gamma"), ("SMOKE", ["eval_every=-1"], "eval_every"),
])
def test_config_rules(preset, overrides, field):
    from icml24.core.testing import check_config_rule
    from icml24.papers.etm import config as cf

    check_config_rule(getattr(cf, preset), overrides, cf.validate, field)


def test_etm_ensemble_draws_a_member_per_input_and_penalises_their_spread():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (300, 3))
    target = np.concatenate([x[:, :2] * 0.5, x[:, 2:] ** 2], 1)          # 2 state dims + a reward
    ens = ETMEnsemble(3, 3, ETMConfig(hidden=16, layers=1, negatives=4, train_iters=3, batch=64, steps=20), members=3)
    assert len(ens.fit(x, target, torch.Generator().manual_seed(0))) == 3
    out = ens.predict(x[:50], np.random.default_rng(1), iters=20)
    assert out.members.shape == (3, 50, 3)
    chosen = [int(np.flatnonzero((out.members[:, i] == out.delta[i]).all(1))[0]) for i in range(50)]
    assert set(chosen) == {0, 1, 2}                                     # every member is drawn
    assert np.allclose(out.penalty, np.linalg.norm(out.members[..., :2].std(0), axis=-1))

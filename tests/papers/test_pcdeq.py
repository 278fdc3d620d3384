"""pcDEQ math: the solver, implicit gradients, the projection, positive-concave properties, data I/O."""

from __future__ import annotations

import gzip
import struct

import numpy as np
import pytest
import torch

from icml24.common.nn import n_params
from icml24.core.errors import UserError
from icml24.core.testing import check_config_rule
from icml24.papers.pcdeq import (
    DEQ,
    LinearDEQNet,
    MLPNet,
    PcDEQConv,
    PcDEQLinear,
    UnconstrainedDEQLinear,
    anderson,
    attach_projection,
    fixed_point_iteration,
    geometric_rate,
    iterate_rows,
    load_idx_dataset,
    mnist_5k_split,
    random_instance,
    read_idx,
    stratified_indices,
    thompson_distance,
    unrolled_deq,
)

ACTS = ("tanh", "softsign", "relu6", "sigmoid")


def _layer(width=6, act="tanh", norm=20.0, seed=0, dtype=torch.float64, cls=PcDEQLinear):
    """A pcDEQ layer whose W >= 0 has spectral norm ``norm`` (far above 1)."""
    gen = torch.Generator().manual_seed(seed)
    layer = cls(width, act, generator=gen).to(dtype)
    with torch.no_grad():
        layer.v.copy_(torch.rand(width, width, generator=gen, dtype=dtype))
        layer.g.copy_(torch.linalg.vector_norm(layer.v, dim=1))
        layer.g.mul_(norm / torch.linalg.matrix_norm(layer.weight(), ord=2))
    return layer


def test_solver_hand_computed_trace():
    # z <- 0.5 z + 1 from 0: 1, 1.5, 1.75; residuals |z1 - z0| / (|z1| + 1e-5) = 1/(1+1e-5), 0.5/1.5, ...
    r = fixed_point_iteration(lambda z: 0.5 * z + 1.0, torch.zeros(1, dtype=torch.float64), max_iter=3, tol=0.0)
    assert r.stats.steps == 3 and not r.stats.converged
    assert float(r.z) == 1.75
    assert r.stats.residuals == pytest.approx((1 / (1 + 1e-5), 0.5 / (1.5 + 1e-5), 0.25 / (1.75 + 1e-5)))
    assert r.stats.rel_residual == r.stats.residuals[-1]


@pytest.mark.parametrize("act", ACTS)
def test_fixed_point_satisfies_its_equation_for_large_norm(act):
    layer = _layer(act=act, norm=50.0)
    deq = DEQ(layer, max_iter=500, tol=1e-13)
    x = torch.randn(4, 6, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    z = deq(x)
    assert deq.forward_stats.converged
    assert torch.allclose(z, layer(z, layer.inject(x)), atol=1e-11)
    assert (z > 0).all()


def test_conv_layer_fixed_point():
    gen = torch.Generator().manual_seed(0)
    layer = PcDEQConv(3, "tanh", generator=gen).double()
    with torch.no_grad():
        layer.g.mul_(1e4)  # ||W|| >> 1, still W >= 0
    deq = DEQ(layer, max_iter=500, tol=1e-12)
    x = torch.randn(2, 3, 5, 5, generator=gen, dtype=torch.float64)
    z = deq(x)
    assert deq.forward_stats.converged and torch.allclose(z, layer(z, layer.inject(x)), atol=1e-10)


def test_anderson_finds_the_plain_iterations_fixed_point_in_fewer_steps():
    slow = lambda z: 0.99 * z + 0.01  # noqa: E731  contraction rate 0.99, fixed point 1
    a = anderson(slow, torch.zeros(3, 4, dtype=torch.float64), max_iter=5000, tol=1e-12)
    p = fixed_point_iteration(slow, torch.zeros(3, 4, dtype=torch.float64), max_iter=5000, tol=1e-12)
    assert a.stats.converged and p.stats.converged and a.stats.steps < 20 < 1000 < p.stats.steps
    assert torch.allclose(a.z, torch.ones(3, 4, dtype=torch.float64), atol=1e-10)
    assert len(a.stats.residuals) == a.stats.steps and a.stats.rel_residual == a.stats.residuals[-1]
    gen = torch.Generator().manual_seed(0)
    conv = PcDEQConv(3, "tanh", generator=gen).double()
    with torch.no_grad():
        conv.g.mul_(1e4)
    x = torch.randn(2, 3, 5, 5, generator=gen, dtype=torch.float64)
    xt, w = conv.inject(x), conv.weight()
    f = lambda z: conv.step(z, xt, w)  # noqa: E731  (batch, C, H, W) states
    with torch.no_grad():
        za = anderson(f, torch.zeros_like(xt), 500, 1e-12)
        zp = fixed_point_iteration(f, torch.zeros_like(xt), 500, 1e-12)
    assert za.stats.converged and za.z.shape == xt.shape and torch.allclose(za.z, zp.z, atol=1e-9)
    with pytest.raises(ValueError):
        DEQ(conv, solver="newton")  # type: ignore[arg-type]


def test_deq_with_anderson_gives_the_same_output_and_implicit_gradients():
    layer = _layer(act="tanh", norm=3.0)
    x = torch.randn(3, 6, generator=torch.Generator().manual_seed(2), dtype=torch.float64, requires_grad=True)
    c = torch.randn(3, 6, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    grads = {}
    for solver in ("iteration", "anderson"):
        deq = DEQ(layer, max_iter=1000, tol=1e-13, solver=solver)
        grads[solver] = torch.autograd.grad((deq(x) * c).sum(), (x, layer.v, layer.g))
        assert deq.forward_stats.converged and deq.backward_stats.converged
    for a, b in zip(grads["iteration"], grads["anderson"]):
        assert torch.allclose(a, b, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("act", ("tanh", "sigmoid"))
def test_implicit_gradient_equals_unrolled_gradient(act):
    layer = _layer(act=act, norm=3.0)
    x = torch.randn(3, 6, generator=torch.Generator().manual_seed(2), dtype=torch.float64, requires_grad=True)
    c = torch.randn(3, 6, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    deq = DEQ(layer, max_iter=1000, tol=1e-14)
    implicit = torch.autograd.grad((deq(x) * c).sum(), (x, layer.v, layer.g))
    unrolled = torch.autograd.grad((unrolled_deq(layer, x, 300) * c).sum(), (x, layer.v, layer.g))
    assert deq.backward_stats.converged
    for a, b in zip(implicit, unrolled):
        assert torch.allclose(a, b, rtol=1e-8, atol=1e-10)


def test_gradcheck_of_implicit_backward():
    layer = _layer(width=4, norm=5.0)
    deq = DEQ(layer, max_iter=2000, tol=1e-15)
    x = torch.randn(2, 4, generator=torch.Generator().manual_seed(4), dtype=torch.float64, requires_grad=True)
    v = layer.v.detach().clone().requires_grad_()
    g = layer.g.detach().clone().requires_grad_()

    def f(x, v, g):
        return torch.func.functional_call(deq, {"layer.v": v, "layer.g": g}, (x,))

    assert torch.autograd.gradcheck(f, (x, v, g), eps=1e-6, atol=1e-6)


def test_projection_keeps_weights_nonnegative_and_is_needed():
    x = torch.randn(16, 5, generator=torch.Generator().manual_seed(5))
    negative_seen = {}
    for cls in (PcDEQLinear, UnconstrainedDEQLinear):
        layer = cls(5, "tanh", generator=torch.Generator().manual_seed(6))
        deq = DEQ(layer, max_iter=50)
        opt = torch.optim.Adam(layer.parameters(), lr=0.05)
        attach_projection(opt, layer)
        for _ in range(10):
            opt.zero_grad()
            deq(x).sum().backward()  # minimising sum(z) drives W below 0 unless projected
            opt.step()
            if cls is PcDEQLinear:
                assert (layer.v >= 0).all() and (layer.g >= 0).all() and (layer.weight() >= 0).all()
        negative_seen[cls.__name__] = bool((layer.weight() < 0).any())
    assert negative_seen == {"PcDEQLinear": False, "UnconstrainedDEQLinear": True}


@pytest.mark.parametrize("act", ACTS)
def test_positive_concave_mapping_properties(act):
    """g_x(z) = sigma(W z + x~) with W >= 0, x~ from the injection: positive, monotone, concave,
    strictly sub-homogeneous (alpha g(z) > g(alpha z), alpha > 1) and Thompson-nonexpansive on the orthant."""
    layer = _layer(width=8, act=act, norm=30.0, seed=7)
    gen = torch.Generator().manual_seed(8)
    x_t = layer.inject(torch.randn(50, 8, generator=gen, dtype=torch.float64))
    a = 3 * torch.rand(50, 8, generator=gen, dtype=torch.float64)
    b = a + torch.rand(50, 8, generator=gen, dtype=torch.float64)  # b >= a
    lam = torch.rand(50, 1, generator=gen, dtype=torch.float64)
    with torch.no_grad():
        ga, gb = layer(a, x_t), layer(b, x_t)
        assert (ga > 0).all()  # positivity on the orthant
        assert (gb >= ga).all()  # monotonicity
        mix = layer(lam * a + (1 - lam) * b, x_t)
        assert (mix >= lam * ga + (1 - lam) * gb - 1e-12).all()  # concavity
        for alpha in (1.5, 4.0):
            assert (alpha * ga > layer(alpha * a, x_t)).all()  # scalability
        ap, bp = a + 0.1, b + 0.1  # interior points
        assert (thompson_distance(layer(ap, x_t), layer(bp, x_t)) <= thompson_distance(ap, bp) + 1e-12).all()


def test_every_start_reaches_one_point_geometrically():
    rng = np.random.default_rng(9)
    for norm in (0.5, 2.0, 50.0):
        w, x = random_instance(32, norm, rng, nonnegative=True)
        assert (w >= 0).all() and np.isclose(np.linalg.norm(w, 2), norm) and (x > 0).all()
        starts = np.vstack([np.zeros(32), rng.uniform(0, 5, (7, 32))])
        sol = iterate_rows(w, x, starts, max_iter=3000, tol=1e-12)
        assert sol.converged.all()
        assert np.abs(sol.z - sol.z[:1]).max() < 1e-9
        assert geometric_rate(sol.residuals[: sol.steps[0], 0]) < 0.99


def test_signed_contrast_is_not_vacuous():
    """A signed tanh layer of norm 10 fails (no convergence or two end points) for some random instance."""
    rng = np.random.default_rng(10)
    fails = 0
    for _ in range(5):
        w, x = random_instance(32, 10.0, rng, nonnegative=False)
        sol = iterate_rows(w, x, np.vstack([np.zeros(32), rng.normal(0, 2, (3, 32))]), max_iter=500)
        fails += not (sol.converged.all() and np.abs(sol.z - sol.z[:1]).max() < 1e-6)
    assert fails >= 1


def test_row_solver_matches_torch_solver():
    rng = np.random.default_rng(11)
    w, x = random_instance(10, 3.0, rng, nonnegative=True)
    starts = rng.uniform(0, 2, (3, 10))
    fast = iterate_rows(w, x, starts, max_iter=400, tol=1e-13)
    wt, xt = torch.from_numpy(w), torch.from_numpy(x)
    for r in range(3):
        naive = fixed_point_iteration(lambda z: torch.tanh(wt @ z + xt), torch.from_numpy(starts[r]), 400, 1e-13)
        assert np.allclose(fast.z[r], naive.z.numpy(), atol=1e-12)


def test_parameter_matched_baseline():
    deq = LinearDEQNet(64, 80, 10, PcDEQLinear(80))
    assert n_params(deq) == n_params(MLPNet(64, 80, 10)) == 64 * 80 + 80 + 160 + 80 * 80 + 80 + 160 + 810


def _write_idx(path, array, gz):
    header = struct.pack(">BBBB", 0, 0, 8, array.ndim) + struct.pack(">" + "I" * array.ndim, *array.shape)
    data = header + array.astype(np.uint8).tobytes()
    (gzip.open if gz else open)(path, "wb").write(data)


def test_idx_reader_and_loader(tmp_path):
    rng = np.random.default_rng(12)
    imgs = rng.integers(0, 256, (7, 28, 28))
    labels = rng.integers(0, 10, 7)
    _write_idx(tmp_path / "train-images-idx3-ubyte.gz", imgs, gz=True)
    _write_idx(tmp_path / "train-labels-idx1-ubyte.gz", labels, gz=True)
    _write_idx(tmp_path / "t10k-images-idx3-ubyte", imgs[:3], gz=False)
    _write_idx(tmp_path / "t10k-labels-idx1-ubyte", labels[:3], gz=False)
    assert np.array_equal(read_idx(tmp_path / "train-images-idx3-ubyte.gz"), imgs)
    d = load_idx_dataset(tmp_path, n_train=5, n_test=10, seed=0)
    assert tuple(d.x_train.shape) == (5, 1, 28, 28) and tuple(d.x_test.shape) == (3, 1, 28, 28)
    assert torch.equal(d.y_test, torch.from_numpy(labels[:3]))
    assert float(d.x_train.max()) <= 1.0
    with pytest.raises(UserError):
        load_idx_dataset(tmp_path / "missing", 5, 5, 0)


def test_stratified_indices_balanced_disjoint_seeded():
    labels = np.repeat(np.arange(10), 50)[np.random.default_rng(14).permutation(500)]
    tr, te = stratified_indices(labels, 403, 87, seed=1)
    assert tr.size == 403 and te.size == 87 and not set(tr) & set(te)
    assert np.ptp(np.bincount(labels[tr], minlength=10)) <= 1 and np.ptp(np.bincount(labels[te], minlength=10)) <= 1
    tr2, te2 = stratified_indices(labels, 403, 87, seed=1)
    assert np.array_equal(tr, tr2) and np.array_equal(te, te2)
    assert not np.array_equal(tr, stratified_indices(labels, 403, 87, seed=2)[0])
    with pytest.raises(UserError):
        stratified_indices(labels, 450, 60, seed=0)  # 51 test items per class do not exist after 45 train


def test_mnist_5k_split_is_real_stratified_mnist():
    d = mnist_5k_split(4000, 1000, seed=0)
    assert tuple(d.x_train.shape) == (4000, 1, 28, 28) and tuple(d.x_test.shape) == (1000, 1, 28, 28)
    assert d.x_train.dtype == torch.float32 and 0.0 <= float(d.x_train.min()) and float(d.x_train.max()) <= 1.0
    assert torch.bincount(d.y_train).tolist() == [400] * 10 and torch.bincount(d.y_test).tolist() == [100] * 10
    assert not {r.tobytes() for r in d.x_test.numpy()} & {r.tobytes() for r in d.x_train.numpy()}  # disjoint
    assert torch.equal(mnist_5k_split(4000, 1000, seed=0).x_test, d.x_test)
    assert not torch.equal(mnist_5k_split(4000, 1000, seed=1).x_test, d.x_test)


def test_mnist5k_sizes_beyond_5000_are_refused():
    from dataclasses import replace

    from icml24.papers.pcdeq.experiment import SMOKE, run, validate

    cfg = replace(SMOKE, n_train=4500, n_test=1000)
    with pytest.raises(UserError):
        validate(cfg)
    with pytest.raises(UserError):
        run(cfg, 0)


@pytest.mark.slow
def test_quick_claims(tmp_path):
    from icml24.core.registry import get_paper
    from icml24.core.store import run_preset

    result = run_preset(get_paper("pcdeq"), "quick", tmp_path)
    verdicts = {c["claim_id"]: c["verdict"] for c in result.claims}
    for cid in ("C1", "C2", "C3", "C4", "C6"):
        assert verdicts[cid] == "pass", cid


def test_missing_data_folder_is_a_user_error(tmp_path):
    from icml24.core.config import apply_overrides
    from icml24.papers.pcdeq.experiment import FULL, SMOKE, run

    with pytest.raises(UserError):
        apply_overrides(SMOKE, ["data=idx", f"data_dir={tmp_path / 'nope'}"])
    with pytest.raises(UserError):
        run(FULL, 0)  # FULL reads MNIST and no data_dir was given: fails before any compute


def test_run_on_idx_files(tmp_path):
    from dataclasses import replace

    from icml24.papers.pcdeq.experiment import SMOKE, run

    rng = np.random.default_rng(13)
    for split, n in (("train", 40), ("t10k", 20)):
        _write_idx(tmp_path / f"{split}-images-idx3-ubyte.gz", rng.integers(0, 256, (n, 28, 28)), gz=True)
        _write_idx(tmp_path / f"{split}-labels-idx1-ubyte.gz", rng.integers(0, 10, n), gz=True)
    cfg = replace(SMOKE, data="idx", data_dir=str(tmp_path), n_train=40, n_test=20, epochs=1,
                  prop_norms=(0.5,), prop_instances=1, prop_max_iter=50)
    out = run(cfg, 0)
    assert out.metrics["n_params_pcdeq"] == out.metrics["n_params_mlp"] == 784 * 80 + 80 + 160 + 6480 + 160 + 810
    assert 0.0 <= out.metrics["pcdeq_test_acc"] <= 1.0


def test_full_preset_without_data_dir_is_refused_before_anything_runs(tmp_path):
    from conftest import run_cli

    out = run_cli("run", "pcdeq", "--preset", "full", "--out", str(tmp_path / "runs"), cwd=tmp_path)
    assert out.returncode == 2 and "data=idx needs data_dir" in out.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("preset, overrides, error", [
    ("SMOKE", [], None), ("QUICK", [], None), ("FULL", ["data_dir={tmp}"], None),
    ("FULL", [], "data_dir"), ("SMOKE", ["lr=0"], "lr="), ("SMOKE", ["lr=2"], "lr="),
    ("SMOKE", ["batch_size=1"], "batch_size="), ("SMOKE", ["prop_norms="], "prop_norms="),
    ("SMOKE", ["prop_norms=0.5,-1"], "prop_norms="), ("SMOKE", ["tol=0"], "tol="), ("SMOKE", ["prop_tol=1"], "prop_tol="),
    ("SMOKE", ["milestone_frac=1.5"], "milestone_frac="), ("SMOKE", ["max_iter=0"], "max_iter="),
    ("SMOKE", ["epochs=0"], "epochs="), ("SMOKE", ["n_test=0"], "n_test="),
    ("SMOKE", ["n_train=4500", "n_test=1000"], "n_train"), ("SMOKE", ["n_train=4991", "n_test=9"], "n_train"),
])
def test_config_rules(preset, overrides, error, tmp_path):
    from icml24.papers.pcdeq import experiment as ex

    check_config_rule(getattr(ex, preset), [o.format(tmp=tmp_path) for o in overrides], ex.validate, error)

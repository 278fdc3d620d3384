"""rig: the renderer against closed forms (a homogeneous slab's transmittance and depth, a sphere's depth by ray
casting), the precomputed trilinear table against grid_sample and the batched renderer against the per-ray loop,
the image's gradient in the latent against finite differences, composition as rendering the summed field, the
RealNVP log-determinant against autograd's Jacobian, the path-derivative ELBO on a Gaussian target (mean against
its closed form, zero gradient variance at the optimum), importance weights, the bounded corruption density, the
metrics by hand, and bad input through the CLI."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from conftest import run_cli

from icml24.core.config import check_knobs
from icml24.core.errors import UserError
from icml24.papers.rig import config as cf
from icml24.papers.rig.experiment import world_of
from icml24.papers.rig.inference import Model, importance_weights, normal_logpdf, stl_elbo
from icml24.papers.rig.model import depth_error, psnr, render, setup
from icml24.papers.rig.priors import RealNVP, Standardise
from icml24.papers.rig.render import (
    Camera,
    Corruption,
    Field,
    GridShape,
    composite,
    corruption_field,
    grid_coords,
    grid_lookup,
    grid_lookup_gather,
    grid_lookup_naive,
    ray_dirs,
    render_fields,
    render_loop,
    sphere_field,
    trilinear_table,
)
from icml24.papers.rig.world import RADII, decode, encode, sample_clean, sample_corruption

AXIS = torch.tensor([[[0.0, 0.0, 1.0]]])                                   # one ray along the optical axis


def test_homogeneous_slab_transmittance_and_depth():
    cam = Camera(size=1, samples=400, near=1.0, far=3.0, cam_dist=2.0)
    s = 0.7
    r = composite(torch.full((1, 1, 400), s), torch.full((1, 1, 400, 3), 0.5), cam, AXIS)
    L = cam.far - cam.near
    assert float(r.opacity) == pytest.approx(1 - math.exp(-s * L), abs=2e-5)     # exact for piecewise constant (float32)
    assert r.rgb[0, 0].tolist() == pytest.approx([0.5 * (1 - math.exp(-s * L))] * 3, abs=2e-5)
    # continuous expected depth: int_a^b t s e^{-s (t - a)} dt + e^{-s L} b
    a, b = cam.near, cam.far
    expected = a * (1 - math.exp(-s * L)) + 1 / s - (L + 1 / s) * math.exp(-s * L) + math.exp(-s * L) * b
    assert float(r.depth) == pytest.approx(expected, abs=2e-3)
    # a slanted ray covers the slab over a longer path |d| L
    d = torch.tensor([[[0.75, 0.0, 1.0]]])
    r2 = composite(torch.full((1, 1, 400), s), torch.ones(1, 1, 400, 3), cam, d)
    assert float(r2.opacity) == pytest.approx(1 - math.exp(-s * L * 1.25), abs=2e-5)


def test_sphere_depth_by_ray_casting():
    cam = Camera(size=9, samples=600, near=1.5, far=4.5, cam_dist=3.0)
    fov = torch.tensor([math.radians(40.0)])
    dirs = ray_dirs(cam, fov)                                              # (1, P, 3)
    centre = torch.tensor([[[0.1, -0.05, 0.2]]])
    r = 0.6
    f = sphere_field(cam, dirs, centre, torch.tensor([r]), torch.ones(1, 1, 3), sigma_max=2000.0, softness=2e-4)
    out = composite(f.sigma, f.sigma_rgb / f.sigma.clamp_min(1e-8)[..., None], cam, dirs)
    o = torch.tensor([0.0, 0.0, -cam.cam_dist])
    d = dirs[0]
    oc = o - centre[0, 0]
    A, B, C = (d * d).sum(-1), 2 * (d * oc).sum(-1), (oc * oc).sum() - r * r
    disc = B * B - 4 * A * C
    hit = disc > 0.05                                                      # away from grazing rays
    t_hit = (-B - disc.clamp_min(0).sqrt()) / (2 * A)
    assert hit.sum() > 10
    assert torch.allclose(out.depth[0][hit], t_hit[hit], atol=cam.dt)
    assert torch.allclose(out.depth[0][disc < -0.05], torch.tensor(cam.far), atol=1e-4)


def test_trilinear_table_matches_grid_sample_and_gather():
    shape = GridShape(3, 4, 5)
    coords = torch.rand(200, 3, generator=torch.Generator().manual_seed(0)) * torch.tensor([4.0, 5.0, 6.0]) - 0.5
    table = trilinear_table(coords, shape)
    assert torch.allclose(table.weight.sum(1), torch.ones(200))
    values = torch.randn(2, 4, shape.voxels, generator=torch.Generator().manual_seed(1))
    naive = grid_lookup_naive(values, coords, shape)                       # (B, C, N)
    assert torch.allclose(grid_lookup(values, table).permute(1, 2, 0), naive, atol=1e-5)
    assert torch.allclose(grid_lookup_gather(values, table).permute(1, 2, 0), naive, atol=1e-5)
    # voxel centres return the voxel itself
    centres = trilinear_table(torch.tensor([[1.0, 2.0, 3.0]]), shape)
    assert torch.allclose(grid_lookup(values, centres)[0], values[:, :, (1 * 4 + 2) * 5 + 3], atol=1e-6)


def _world(size=6, samples=10, depth=3):
    return world_of(cf.Config(image_size=size, samples=samples, grid_depth=depth))


def test_batched_renderer_matches_the_per_ray_loop():
    w = _world()
    st = setup(w)
    rng = np.random.default_rng(3)
    z = sample_clean(w, 2, rng)
    c, _ = sample_corruption(w, "rain", 2, rng)
    c = Corruption(c.density + torch.randn(c.density.shape, generator=torch.Generator().manual_seed(0)),
                   c.colour)
    fast = render(st, z, c).render.rgb
    s = decode(w, z)
    dirs = ray_dirs(w.cam, torch.full((2,), w.fov))
    slow = render_loop(w.cam, dirs, s.centres, torch.tensor(RADII), s.colours, c.density, c.colour, w.grid,
                       w.sigma_max, w.softness, w.sigma_c_max)
    assert torch.allclose(fast, slow, atol=1e-5)


def test_image_gradient_in_the_latent_matches_finite_differences():
    w = _world(size=5, samples=8, depth=2)
    st = setup(w)
    z = sample_clean(w, 1, np.random.default_rng(4)).double()
    c, _ = sample_corruption(w, "fog", 1, np.random.default_rng(5))
    c = Corruption(c.density.double(), c.colour.double())
    probe = torch.randn(1, w.cam.size ** 2, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64)

    def f(zz):
        return (render(st, zz, c, torch.full((1,), w.fov, dtype=torch.float64)).render.rgb * probe).sum()

    assert torch.autograd.gradcheck(f, (z.requires_grad_(),), eps=1e-6, atol=1e-5)


def test_composition_is_rendering_the_summed_field():
    w = _world()
    cam = w.cam
    dirs = ray_dirs(cam, torch.full((1,), w.fov))
    g = torch.Generator().manual_seed(2)
    centres, colours = torch.randn(1, 2, 3, generator=g) * 0.3, torch.rand(1, 2, 3, generator=g)
    both = sphere_field(cam, dirs, centres, torch.tensor(RADII), colours, w.sigma_max, w.softness)
    one = sphere_field(cam, dirs, centres[:, :1], torch.tensor(RADII[:1]), colours[:, :1], w.sigma_max, w.softness)
    two = sphere_field(cam, dirs, centres[:, 1:], torch.tensor(RADII[1:]), colours[:, 1:], w.sigma_max, w.softness)
    composed = render_fields(cam, dirs, one, two)
    by_hand = composite(one.sigma + two.sigma, (one.sigma_rgb + two.sigma_rgb) /
                        (one.sigma + two.sigma).clamp_min(1e-8)[..., None], cam, dirs)
    joint = render_fields(cam, dirs, both)
    for a, b in ((composed, by_hand), (composed, joint)):
        assert torch.allclose(a.rgb, b.rgb, atol=1e-6) and torch.allclose(a.depth, b.depth, atol=1e-5)
    # a field of zero density changes nothing; a copy of itself doubles the density and keeps the colour
    zero = Field(torch.zeros_like(one.sigma), torch.zeros_like(one.sigma_rgb))
    assert torch.allclose(render_fields(cam, dirs, one, zero).rgb, render_fields(cam, dirs, one).rgb, atol=1e-6)
    doubled = composite(2 * one.sigma, one.sigma_rgb / one.sigma.clamp_min(1e-8)[..., None], cam, dirs)
    assert torch.allclose(render_fields(cam, dirs, one, one).rgb, doubled.rgb, atol=1e-5)


def test_corruption_density_is_bounded_by_its_clip():
    w = _world()
    st = setup(w)
    V = w.grid.voxels
    huge = Corruption(torch.full((1, V), 1e6), torch.full((1, 3, V), 50.0))
    f = corruption_field(huge, st.table, w.cam, w.sigma_c_max)
    assert float(f.sigma.max()) == pytest.approx(w.sigma_c_max) and torch.isfinite(f.sigma_rgb).all()
    tiny = corruption_field(Corruption(torch.full((1, V), -1e6), torch.zeros(1, 3, V)), st.table, w.cam, 1.0)
    assert float(tiny.sigma.max()) == 0.0


def test_realnvp_log_determinant_matches_autograd_jacobian():
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        flow = RealNVP(6, layers=4, hidden=8).double()
        for p in flow.parameters():
            p.data.normal_(0, 0.5)
    x = torch.randn(3, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    _, logdet = flow(x)
    for i in range(3):
        J = torch.autograd.functional.jacobian(lambda v: flow(v[None])[0][0], x[i])
        assert float(logdet[i].detach()) == pytest.approx(float(torch.linalg.slogdet(J)[1]), abs=1e-9)
    assert torch.allclose(flow.inverse(flow(x)[0]), x, atol=1e-10)
    # the density integrates to 1 in 1-d (a check of log_prob's normalisation)
    f1 = RealNVP(2, layers=2, hidden=4).double()
    grid = torch.linspace(-8, 8, 401, dtype=torch.float64)
    gx, gy = torch.meshgrid(grid, grid, indexing="ij")
    p = f1.log_prob(torch.stack([gx, gy], -1)).exp().detach()
    assert float(p.sum() * (grid[1] - grid[0]) ** 2) == pytest.approx(1.0, abs=1e-3)


def test_path_derivative_elbo_on_a_gaussian_target():
    m, s = torch.tensor([1.0, -2.0]), torch.tensor([0.5, 2.0])
    target = lambda z: normal_logpdf(z, m, s.log())  # noqa: E731
    mu, sd = torch.tensor([[0.3, -1.0]]), torch.tensor([[0.8, 1.1]])
    eps = torch.randn(200_000, 2, generator=torch.Generator().manual_seed(0))
    est = stl_elbo(mu.expand(len(eps), 2), sd.log().expand(len(eps), 2), eps, target)
    closed = (-0.5 * torch.log(2 * math.pi * s ** 2) - ((mu - m) ** 2 + sd ** 2) / (2 * s ** 2)
              + 0.5 * torch.log(2 * math.pi * math.e * sd ** 2)).sum()
    assert float(est.mean()) == pytest.approx(float(closed), abs=0.01)
    # at the optimum q = p: every draw's gradient is 0 (the standard estimator's is not)
    grads, grads_std = [], []
    for e in eps[:50]:
        mu0, ls0 = m[None].clone().requires_grad_(), s.log()[None].clone().requires_grad_()
        stl_elbo(mu0, ls0, e[None], target).sum().backward()
        grads.append(torch.cat([mu0.grad, ls0.grad], 1))
        mu1, ls1 = m[None].clone().requires_grad_(), s.log()[None].clone().requires_grad_()
        z = mu1 + ls1.exp() * e[None]
        (target(z) - normal_logpdf(z, mu1, ls1)).sum().backward()
        grads_std.append(torch.cat([mu1.grad, ls1.grad], 1))
    assert float(torch.cat(grads).abs().max()) < 1e-6
    assert float(torch.cat(grads_std).var(0).sum()) > 0.1


def test_importance_weights_sum_to_one():
    log_w = torch.tensor([[0.0, math.log(3.0)], [-1000.0, -1000.0]])
    w, ess = importance_weights(log_w)
    assert w.sum(1).tolist() == pytest.approx([1.0, 1.0])
    assert w[0].tolist() == pytest.approx([0.25, 0.75]) and ess.tolist() == pytest.approx([1 / 0.625, 2.0])


def test_metrics_by_hand_and_latent_roundtrip():
    d = torch.tensor([[2.0, 3.0, 4.5, 4.5]])
    o = torch.tensor([[1.0, 1.0, 0.0, 0.0]])
    td = torch.tensor([[2.5, 4.5, 3.0, 4.5]])
    to = torch.tensor([[1.0, 0.0, 1.0, 0.0]])
    assert depth_error(d, o, td, to).tolist() == pytest.approx([(0.5 + 1.5 + 1.5) / 3])
    assert float(psnr(torch.full((1, 2, 3), 0.5), torch.full((1, 2, 3), 0.5 + 1e-2))[0]) == pytest.approx(40.0, abs=1e-3)
    w = _world()
    z = sample_clean(w, 50, np.random.default_rng(0))
    s = decode(w, z)
    assert torch.allclose(encode(w, s), z, atol=1e-4)
    assert (s.centres.abs() <= 0.55 + 1e-5).all() and ((s.centres[:, 0] - s.centres[:, 1]).norm(dim=-1) >= 0.7 - 1e-5).all()
    std = Standardise(z.mean(0), z.std(0))
    assert torch.allclose(std.to_z(std.to_x(z)), z, atol=1e-5)


def test_fov_model_maps_its_logit_into_the_range():
    w = _world()
    model = Model(setup(w), Standardise(torch.zeros(12), torch.ones(12)), "fov", 0.05)
    _, fov = model.unpack(torch.tensor([[-50.0], [0.0], [50.0]]))
    assert fov.tolist() == pytest.approx([w.fov_lo, (w.fov_lo + w.fov_hi) / 2, w.fov_hi], abs=1e-6)
    # the logistic log-prior of the uniform fov integrates to 1 over the logit
    v = torch.linspace(-40, 40, 8001, dtype=torch.float64)[:, None]
    assert float(model.log_prior_c(v).exp().sum() * (v[1, 0] - v[0, 0])) == pytest.approx(1.0, abs=1e-4)


def test_true_corruptions_have_the_described_shape():
    w = _world(size=12, samples=12, depth=4)
    c, fov = sample_corruption(w, "fog", 2, np.random.default_rng(0))
    assert torch.allclose(torch.nn.functional.softplus(c.density), torch.tensor(w.fog_density), atol=1e-5)
    r, _ = sample_corruption(w, "rain", 1, np.random.default_rng(0))
    dense = (torch.nn.functional.softplus(r.density) > 1).reshape(4, 12, 12)
    assert dense[2:].sum() == 0 and 0 < dense.sum() <= w.rain_streaks * 4
    none, f = sample_corruption(w, "fov", 100, np.random.default_rng(0))
    assert none is None and float(f.min()) >= w.fov_lo and float(f.max()) <= w.fov_hi
    with pytest.raises(ValueError):
        sample_corruption(w, "snow", 1, np.random.default_rng(0))


def test_grid_coords_are_linear_in_disparity():
    cam = Camera(size=2, samples=4, near=1.0, far=4.0, cam_dist=2.0)
    kd = grid_coords(cam, GridShape(4, 2, 2)).reshape(4, 4, 3)[0, :, 0]
    disp = (1 / cam.near - 1 / cam.depths) / (1 / cam.near - 1 / cam.far)
    assert kd.tolist() == pytest.approx((disp * 4 - 0.5).tolist(), abs=1e-6)


@pytest.mark.parametrize("overrides", [{"image_size": 3}, {"samples": 1}, {"restarts": 0}, {"regal_K": (0, 4)},
                                       {"corruptions": ("snow",)}, {"methods": ("mcmc",)}])
def test_bad_knobs_are_refused(overrides):
    with pytest.raises(UserError):
        check_knobs(cf.Config(**overrides))


def test_validate_rules():
    for bad in ({"fov_lo_deg": 50.0}, {"near": 2.5}, {"regal_K": (4, 1)}):
        with pytest.raises(UserError):
            cf.validate(cf.Config(**bad))
    cf.validate(cf.QUICK)


@pytest.mark.parametrize("arg", ["image_size=2", "samples=1", "restarts=0", "regal_K=0", "corruptions=snow",
                                 "methods=mcmc"])
def test_cli_bad_input_one_line_exit_2_nothing_written(arg, tmp_path):
    out = tmp_path / "runs"
    p = run_cli("run", "rig", "--preset", "smoke", "--set", arg, "--out", str(out))
    assert p.returncode == 2, p.stderr
    lines = [ln for ln in p.stderr.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), p.stderr
    assert not out.exists() or not any(out.rglob("*"))


def _tiny_regal(guidance: float, kind: str = "none", chains: int = 2):
    from icml24.common.diffusion import EpsMLP, linear_schedule
    from icml24.papers.rig.inference import RegalConfig, regal

    w = _world(size=5, samples=8, depth=2)
    st = setup(w)
    z = sample_clean(w, 3, np.random.default_rng(6))
    model = Model(st, Standardise(torch.zeros(12), torch.ones(12)), kind, 0.05)
    y = render(st, z, None).render.rgb
    net = EpsMLP(12, 16, 1, 8)
    schedule = linear_schedule(50)
    rc = RegalConfig(chains, 10, 0.0, guidance, 1, 1e-3, 4.0, -4.0)
    return model, net, schedule, y, regal(model, net, schedule, y, rc, torch.Generator().manual_seed(0))


def test_regal_without_guidance_is_the_plain_ddim_sampler():
    """guidance 0, eta 0 and no auxiliary latent: ReGAL's chains are the unguided DDIM chains from the same noise."""
    from icml24.common.ddim import ddim_sample, ddim_timesteps

    model, net, schedule, y, est = _tiny_regal(0.0)
    x_T = torch.randn(3 * 2, 12, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        plain = ddim_sample(net, schedule, x_T, ddim_timesteps(schedule.T, 10), 0.0,
                            torch.Generator().manual_seed(1), clip=4.0)
    assert torch.allclose(est.x.reshape(6, 12), plain, atol=1e-5)
    assert est.c is None and torch.allclose(est.weights.sum(1), torch.ones(3))


def test_regal_guidance_raises_the_likelihood_of_the_chains():
    """Reconstruction guidance moves the chains toward the observation: the final log-likelihood rises."""
    *_, free = _tiny_regal(0.0, chains=4)
    *_, guided = _tiny_regal(0.03, chains=4)
    assert guided.scores.mean() > free.scores.mean() + 10


def test_regal_nocorr_is_a_method_of_its_own():
    from icml24.papers.rig.experiment import method_names

    assert method_names(cf.QUICK) == ["nocorr", "map", "vi", "regal1", "regal4", "regalnc4"]


def test_first_chains_is_a_run_with_fewer_chains():
    """The first k chains of a K-chain ReGAL run: their states unchanged, weights renormalised over their own log
    weights (so K = 1 is chain 0 with weight 1), the full K the run itself; c is sliced with x."""
    from icml24.papers.rig.inference import first_chains

    *_, est = _tiny_regal(0.03, kind="fov", chains=4)
    one, two, four = first_chains(est, 1), first_chains(est, 2), first_chains(est, 4)
    assert torch.equal(one.x[:, 0], est.x[:, 0]) and torch.equal(one.weights, torch.ones(3, 1))
    assert est.c is not None and two.c is not None and torch.equal(two.c, est.c[:, :2])
    assert torch.allclose(two.weights, torch.softmax(est.scores[:, :2], 1))
    assert torch.allclose(two.weights.sum(1), torch.ones(3))
    assert torch.allclose(four.weights, est.weights) and torch.equal(four.x, est.x)
    with pytest.raises(ValueError):
        first_chains(est, 5)


def test_regal_chains_do_not_depend_on_each_other():
    """The premise of nested chains: a chain's path depends on its own start and its scene's observation alone.
    (a) Within a scene: with eta 0 and no auxiliary latent the only draw is x_T, and torch's first 4 x 12 normals
    of a seed are the first rows of its 8 x 12 ones, so the 4 chains of a K = 4 run are the first 4 of a K = 8
    run. (b) Across scenes, with every draw (eta 1, Langevin steps on a FOV latent): replacing scene 1's
    observation leaves every chain of scene 0 unchanged, and scene 1's chains move."""
    from icml24.common.diffusion import EpsMLP, linear_schedule
    from icml24.papers.rig.inference import RegalConfig, regal

    w = _world(size=5, samples=8, depth=2)
    st = setup(w)
    y = render(st, sample_clean(w, 2, np.random.default_rng(6)), None).render.rgb
    net = EpsMLP(12, 16, 1, 8)
    schedule = linear_schedule(50)

    def run(kind: str, obs: torch.Tensor, chains: int, eta: float):
        model = Model(st, Standardise(torch.zeros(12), torch.ones(12)), kind, 0.05)
        return regal(model, net, schedule, obs, RegalConfig(chains, 10, eta, 0.03, 1, 1e-3, 4.0, -4.0),
                     torch.Generator().manual_seed(0))

    four, eight = run("none", y[:1], 4, 0.0), run("none", y[:1], 8, 0.0)
    assert torch.allclose(four.x[0], eight.x[0, :4], atol=1e-5)
    assert not torch.allclose(four.x[0, 0], four.x[0, 1], atol=1e-2)
    other = y.clone()
    other[1] = render(st, sample_clean(w, 1, np.random.default_rng(7)), None).render.rgb[0]
    a, b = run("fov", y, 4, 1.0), run("fov", other, 4, 1.0)
    assert a.c is not None and b.c is not None
    assert torch.allclose(a.x[0], b.x[0], atol=1e-5) and torch.allclose(a.c[0], b.c[0], atol=1e-5)
    assert not torch.allclose(a.x[1], b.x[1], atol=1e-3)


def test_methods_of_a_seed_start_from_the_same_prior_draws():
    """MAP (R = 1) starts at the first of VI's (R = 2) initial means: with zero steps both return those draws;
    optimising does not change the shared draws; too few draws for the restarts are refused."""
    from icml24.papers.rig.inference import InferConfig, map_fit, prior_inits, vi_fit
    from icml24.papers.rig.priors import RealNVP

    w = _world(size=4, samples=6, depth=2)
    st = setup(w)
    model = Model(st, Standardise(torch.zeros(12), torch.ones(12)), "none", 0.05)
    flow = RealNVP(12, 2, 8).requires_grad_(False)
    y = torch.rand(3, 16, 3)
    inits = prior_inits(flow, 3, 2, torch.Generator().manual_seed(0))
    assert inits.shape == (3, 2, 12)
    kept = inits.clone()
    ic = InferConfig(0, 0.05, 1, 1, 2, 0.3, 0.5, -4.0, 0.0)
    est_map = map_fit(model, flow, y, ic, inits)
    est_vi = vi_fit(model, flow, y, ic._replace(restarts=2), inits, torch.Generator().manual_seed(1))
    assert torch.equal(est_map.x[:, 0], inits[:, 0])
    assert all(any(torch.equal(est_vi.x[b, 0], inits[b, r]) for r in range(2)) for b in range(3))
    grid = Model(st, Standardise(torch.zeros(12), torch.ones(12)), "grid", 0.05)
    moved = map_fit(grid, flow, y, ic._replace(steps=3, restarts=2), inits)
    vi_fit(grid, flow, y, ic._replace(steps=3, restarts=2), inits, torch.Generator().manual_seed(1))
    assert torch.equal(inits, kept)
    assert not any(torch.equal(moved.x[b, 0], inits[b, r]) for b in range(3) for r in range(2))
    with pytest.raises(ValueError):
        map_fit(model, flow, y, ic._replace(restarts=3), inits)

"""Benchmark: rig's batched volume renderer (scenes x rays in one pass, the corruption grid through a precomputed
sparse trilinear matrix) against a per-ray loop (one image and one ray at a time, the grid through ``grid_sample``),
forward + backward; and the grid lookup alone: sparse matrix, gather of the corners, ``grid_sample``.

Both renderers give the same image (checked below, and in tests/papers/test_rig.py).
Run: python benchmarks/bench_rig.py   (about a minute; one thread)
"""

from __future__ import annotations

import numpy as np
import torch

from icml24.core.bench import median_time, pin_threads, ratio_row
from icml24.papers.rig.config import QUICK
from icml24.papers.rig.experiment import world_of
from icml24.papers.rig.model import render, setup
from icml24.papers.rig.render import (
    Corruption,
    grid_coords,
    grid_lookup,
    grid_lookup_gather,
    grid_lookup_naive,
    ray_dirs,
    render_loop,
)
from icml24.papers.rig.world import RADII, decode, sample_clean, sample_corruption


def batched_step(st, z, c):
    def step():
        zz = z.clone().requires_grad_()
        d = c.density.clone().requires_grad_()
        render(st, zz, Corruption(d, c.colour)).render.rgb.sum().backward()
    return step


def loop_step(w, z, c):
    def step():
        zz = z.clone().requires_grad_()
        d = c.density.clone().requires_grad_()
        s = decode(w, zz)
        dirs = ray_dirs(w.cam, torch.full((len(z),), w.fov))
        render_loop(w.cam, dirs, s.centres, torch.tensor(RADII), s.colours, d, c.colour, w.grid, w.sigma_max,
                    w.softness, w.sigma_c_max).sum().backward()
    return step


if __name__ == "__main__":
    pin_threads(1)
    w = world_of(QUICK)
    st = setup(w)
    rays = w.cam.size ** 2
    print(f"{'workload':44s} {'loop ms':>9s} {'batched ms':>11s} {'rays/s batched':>15s} {'batched/loop':>13s}")
    for n in (1, 4):
        rng = np.random.default_rng(0)
        z = sample_clean(w, n, rng)
        c, _ = sample_corruption(w, "rain", n, rng)
        s = decode(w, z)
        dirs = ray_dirs(w.cam, torch.full((n,), w.fov))
        loop_img = render_loop(w.cam, dirs, s.centres, torch.tensor(RADII), s.colours, c.density, c.colour, w.grid,
                               w.sigma_max, w.softness, w.sigma_c_max)
        assert torch.allclose(render(st, z, c).render.rgb, loop_img, atol=1e-5)
        loop = median_time(loop_step(w, z, c), repeats=3)
        batched = median_time(batched_step(st, z, c), repeats=7)
        name = f"{n} image(s) x {rays} rays x {w.cam.samples} samples, fwd+bwd"
        print(f"{name:44s} {loop * 1e3:9.1f} {batched * 1e3:11.2f} {n * rays / batched:15.0f} {batched / loop:13.4f}")
        ratio_row(f"rig render fwd+bwd, {name}", "per-ray loop with grid_sample", batched, loop, "yes (atol 1e-5)")
    rng = np.random.default_rng(1)
    z = sample_clean(w, 64, rng)
    c, _ = sample_corruption(w, "rain", 64, rng)
    batched = median_time(batched_step(st, z, c), repeats=5)
    print(f"{'64 images, fwd+bwd':44s} {'':9s} {batched * 1e3:11.1f} {64 * rays / batched:15.0f}")
    vals = torch.randn(64, 4, w.grid.voxels)
    coords = grid_coords(w.cam, w.grid)
    assert torch.allclose(grid_lookup(vals, st.table).permute(1, 2, 0), grid_lookup_naive(vals, coords, w.grid),
                          atol=1e-5)

    def lookup(fn):
        def step():
            v = vals.clone().requires_grad_()
            fn(v).sum().backward()
        return step
    sparse = median_time(lookup(lambda v: grid_lookup(v, st.table)), repeats=7)
    gather = median_time(lookup(lambda v: grid_lookup_gather(v, st.table)), repeats=7)
    naive = median_time(lookup(lambda v: grid_lookup_naive(v, coords, w.grid)), repeats=7)
    print(f"grid lookup of 64 grids, fwd+bwd: sparse {sparse * 1e3:.1f} ms, gather {gather * 1e3:.1f} ms, "
          f"grid_sample {naive * 1e3:.1f} ms")
    ratio_row("rig grid lookup fwd+bwd, 64 grids", "grid_sample (weights recomputed per call)", sparse, naive,
              "yes (atol 1e-5)")

"""The generative model p(x, c, y) = p(x) p(c) p(y | x, c) of RIG Sec. 3 on the procedural world: rendering a
batch of latents with an optional corruption (grid or field of view), the Gaussian pixel likelihood, and the
metrics (masked depth error, PSNR).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch

from icml24.papers.rig.render import (
    Corruption,
    Field,
    Render,
    TrilinearTable,
    billboard_score,
    corruption_field,
    grid_coords,
    ray_dirs,
    render_fields,
    sphere_field,
    trilinear_table,
)
from icml24.papers.rig.world import RADII, World, decode


class Setup(NamedTuple):
    """A world with its precomputed trilinear table (computed once per camera and grid)."""

    world: World
    table: TrilinearTable


def setup(world: World) -> Setup:
    """Precompute the corruption grid's trilinear weights at every ray sample of the camera."""
    return Setup(world, trilinear_table(grid_coords(world.cam, world.grid), world.grid))


class Rendered(NamedTuple):
    """A rendered batch with the two fields, for the billboard score."""

    render: Render
    scene: Field
    corr: Field | None


def render(st: Setup, z: torch.Tensor, corruption: Corruption | None = None,
           fov: torch.Tensor | None = None) -> Rendered:
    """Render latents z (B, 12) composed with ``corruption`` (grid, or None) at field of view ``fov`` (B,)
    (None: the nominal one). Image rgb (B, P, 3)."""
    w = st.world
    B = z.shape[0]
    fov = torch.full((B,), w.fov) if fov is None else fov
    dirs = ray_dirs(w.cam, fov)                                            # (B, P, 3)
    s = decode(w, z)
    scene = sphere_field(w.cam, dirs, s.centres, torch.tensor(RADII), s.colours, w.sigma_max,
                         w.softness)
    if corruption is None:
        return Rendered(render_fields(w.cam, dirs, scene), scene, None)
    corr = corruption_field(corruption, st.table, w.cam, w.sigma_c_max)
    return Rendered(render_fields(w.cam, dirs, scene, corr), scene, corr)


def billboard(st: Setup, r: Rendered) -> torch.Tensor:
    """Billboard score (B,) of a rendered batch (0 without a corruption grid)."""
    if r.corr is None:
        return torch.zeros(r.render.rgb.shape[0])
    return billboard_score(r.scene, r.corr, r.render, st.world.cam)


def log_likelihood(y: torch.Tensor, rgb: torch.Tensor, std: float) -> torch.Tensor:
    """log p(y | x, c) = sum over pixels and channels of log N(y; rgb, std^2); y, rgb (B, P, 3) -> (B,)."""
    n = y.shape[1] * y.shape[2]
    return -((y - rgb) ** 2).sum((1, 2)) / (2 * std ** 2) - n * math.log(std * math.sqrt(2 * math.pi))


def depth_error(depth: torch.Tensor, opacity: torch.Tensor, true_depth: torch.Tensor,
                true_opacity: torch.Tensor) -> torch.Tensor:
    """Masked depth MAE (our stand-in for VSD): mean |D - D*| over the pixels that either the estimate or the
    truth covers (opacity > 0.5), so both a missed and a hallucinated object count; all (B, P) -> (B,).

    >>> d = torch.tensor([[2.0, 4.0, 4.0]]); o = torch.tensor([[1.0, 0.0, 0.0]])
    >>> depth_error(d, o, torch.tensor([[2.5, 3.0, 4.0]]), torch.tensor([[1.0, 1.0, 0.0]])).tolist()
    [0.75]
    """
    mask = ((opacity > 0.5) | (true_opacity > 0.5)).to(depth.dtype)
    return ((depth - true_depth).abs() * mask).sum(1) / mask.sum(1).clamp_min(1.0)


def psnr(rgb: torch.Tensor, ref: torch.Tensor) -> torch.Tensor:
    """PSNR in dB of images with values in [0, 1]: -10 log10(MSE); (B, P, 3) -> (B,).

    >>> round(float(psnr(torch.zeros(1, 4, 3), torch.full((1, 4, 3), 0.1))[0]), 6)
    20.0
    """
    return -10 * torch.log10(((rgb - ref) ** 2).mean((1, 2)).clamp_min(1e-10))

"""The procedural world: scenes of two soft spheres decoded from a 12-d latent, and three corruptions.

Scene latent z in R^12 (per sphere m = 1, 2: 3 centre and 3 colour coordinates), decoded by fixed maps:
centre_m = box * tanh(z_centre), colour_m = sigmoid(z_colour); radii are fixed (0.45, 0.35), so that the
apparent size tells depth (a single image of a sphere of unknown radius leaves depth to the prior alone).
Clean scenes: centres uniform in [-0.55, 0.55]^3 with the two centres at least ``min_gap`` apart (rejection),
colours uniform in [0.15, 0.95]^3. The priors (priors.py) see z standardised by fixed statistics of the clean
data: x = (z - mean) / std is "the scene latent x" of the paper.

Corruptions (RIG Sec. 5: rain/floaters, cloud/fog, unknown field of view):

* ``rain``: thin vertical streaks, each one grid column wide, a third of the rows long, in one depth slab of the
  near half of the frustum grid (in front of the scene), dense and pale;
* ``fog``: a homogeneous grey density over the whole grid;
* ``fov``: no field; the image is taken with a field of view drawn uniformly from [fov_lo, fov_hi] while the
  model's nominal one is their midpoint.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import torch

from icml24.papers.rig.render import Camera, Corruption, GridShape

RADII = (0.45, 0.35)
DIM = 12
CORRUPTIONS = ("rain", "fog", "fov")


class World(NamedTuple):
    """Everything fixed about the world: camera, field constants, corruption sizes."""

    cam: Camera
    grid: GridShape
    box: float              # centre = box * tanh(z)
    sigma_max: float        # peak density of a sphere
    softness: float         # edge width of a soft sphere
    sigma_c_max: float      # clip of the corruption density
    fov: float              # nominal field of view (radians)
    fov_lo: float           # range of the unknown field of view (uniform prior)
    fov_hi: float
    min_gap: float          # smallest distance between the two clean centres
    fog_density: float      # density of the fog
    rain_streaks: int       # streaks per rain image
    rain_density: float     # density inside a streak


class Scene(NamedTuple):
    """Decoded scene parameters of a batch of latents."""

    centres: torch.Tensor   # (B, 2, 3)
    colours: torch.Tensor   # (B, 2, 3)


def decode(world: World, z: torch.Tensor) -> Scene:
    """Latent z (B, 12) -> centres box * tanh, colours sigmoid."""
    z = z.reshape(-1, 2, 6)
    return Scene(world.box * torch.tanh(z[..., :3]), torch.sigmoid(z[..., 3:]))


def encode(world: World, scene: Scene) -> torch.Tensor:
    """Inverse of :func:`decode`: (B, 12)."""
    zc = torch.atanh(scene.centres / world.box)
    zk = torch.logit(scene.colours)
    return torch.cat([zc, zk], -1).reshape(-1, DIM)


def sample_clean(world: World, n: int, rng: np.random.Generator) -> torch.Tensor:
    """n clean scene latents z (n, 12) from the generator (module docstring), by rejection on the gap."""
    out: list[np.ndarray] = []
    while len(out) < n:
        c = rng.uniform(-0.55, 0.55, size=(2, 3))
        if np.linalg.norm(c[0] - c[1]) >= world.min_gap:
            out.append(np.concatenate([c, rng.uniform(0.15, 0.95, size=(2, 3))], 1))
    s = torch.as_tensor(np.stack(out), dtype=torch.float32)                # (n, 2, 6)
    return encode(world, Scene(s[..., :3], s[..., 3:]))


def empty_corruption(world: World, n: int, level: float = -6.0) -> Corruption:
    """A corruption grid of (practically) zero density: softplus(-6) = 0.0025."""
    V = world.grid.voxels
    return Corruption(torch.full((n, V), level), torch.zeros(n, 3, V))


def _inv_softplus(y: float) -> float:
    return y + math.log(-math.expm1(-y))


def sample_corruption(world: World, kind: str, n: int, rng: np.random.Generator) -> tuple[Corruption | None, torch.Tensor]:
    """n true corruptions of ``kind``: the grid (None for ``fov``) and the true field of view (n,)."""
    g = world.grid
    fov = torch.full((n,), world.fov)
    if kind == "fov":
        return None, torch.as_tensor(rng.uniform(world.fov_lo, world.fov_hi, size=n), dtype=torch.float32)
    c = empty_corruption(world, n)
    dens = c.density.reshape(n, g.depth, g.rows, g.cols)
    col = c.colour.reshape(n, 3, g.depth, g.rows, g.cols)
    if kind == "fog":
        dens[:] = _inv_softplus(world.fog_density)
        col[:] = math.log(0.7 / 0.3)                                       # grey 0.7
    elif kind == "rain":
        length = max(2, g.rows // 3)
        for b in range(n):
            for _ in range(world.rain_streaks):
                d = int(rng.integers(0, max(1, g.depth // 2)))
                r0 = int(rng.integers(0, g.rows - length + 1))
                cc = int(rng.integers(0, g.cols))
                dens[b, d, r0:r0 + length, cc] = _inv_softplus(world.rain_density)
                col[b, :, d, r0:r0 + length, cc] = torch.tensor([1.5, 1.7, 2.2])[:, None]   # pale blue-white
    else:
        raise ValueError(f"unknown corruption {kind!r}; use one of {CORRUPTIONS}")
    return Corruption(dens.reshape(n, -1), col.reshape(n, 3, -1)), fov

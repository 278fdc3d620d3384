"""Shared components: data read out of installed wheels."""

from __future__ import annotations

import numpy as np
import pytest

from icml24.common import wheel_data
from icml24.core.errors import UserError


def test_missing_package_is_a_user_error():
    with pytest.raises(UserError, match="not installed"):
        wheel_data.wheel_file("no_such_package_xyz", "data.csv")


def test_mnist_5k_is_balanced_and_scaled():
    try:
        images = wheel_data.mnist_5k()
    except UserError as exc:
        pytest.skip(str(exc))
    assert images.x.shape == (5000, 784) and images.x.dtype == np.float32
    assert 0.0 <= images.x.min() and images.x.max() == 1.0
    assert np.array_equal(np.bincount(images.y), np.full(10, 500))


def test_spoken_digits_shapes():
    try:
        seqs = wheel_data.spoken_digits()
    except UserError as exc:
        pytest.skip(str(exc))
    assert len(seqs.x) == len(seqs.y) == 3000
    assert all(a.shape[1] == 13 for a in seqs.x)
    assert min(len(a) for a in seqs.x) == 6 and max(len(a) for a in seqs.x) == 92
    assert np.array_equal(np.bincount(seqs.y), np.full(10, 300))

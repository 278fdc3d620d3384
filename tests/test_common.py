"""Shared components: data read out of installed wheels; RL advantage estimators."""

from __future__ import annotations

import numpy as np
import pytest

from icml24.common import wheel_data
from icml24.common.rl import average_gae, gae
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


def test_rl_gae_matches_the_definition_and_average_gae_with_lambda_one_telescopes():
    rng = np.random.default_rng(0)
    r, v, nv = rng.normal(size=(6, 3)), rng.normal(size=(6, 3)), rng.normal(size=(6, 3))
    gamma, lam = 0.9, 0.8
    delta = r + gamma * nv - v
    ref = np.array([[sum((gamma * lam) ** k * delta[t + k, n] for k in range(6 - t)) for n in range(3)]
                    for t in range(6)])
    assert gae(r, v, nv, gamma, lam) == pytest.approx(ref)
    nv = np.vstack([v[1:], rng.normal(size=(1, 3))])           # a consistent trajectory: V(s_{t+1}) = v[t+1]
    a = average_gae(r, v, nv, rho=0.3, lam=1.0)
    assert a[0] == pytest.approx((r - 0.3).sum(0) + nv[-1] - v[0])


def test_gguf_parsed_once_remembers_within_the_block_and_restores_after(tmp_path):
    gguf = pytest.importorskip("gguf")
    from conftest import gguf_parsed_once

    path = tmp_path / "tiny.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_tensor("token_embd.weight", np.arange(8, dtype=np.float32).reshape(2, 4))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    original = gguf.GGUFReader, gguf.get_tensor_name_map
    with gguf_parsed_once():
        first = gguf.GGUFReader(path)
        assert gguf.GGUFReader(path) is first                    # the second parse is the first one's reader
        assert gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, 2) is gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, 2)
        assert first.tensors[0].data.tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert (gguf.GGUFReader, gguf.get_tensor_name_map) == original
    assert gguf.GGUFReader(path) is not gguf.GGUFReader(path)     # outside the block every call parses again

"""Named random streams: deterministic, independent by name, collision-free by index."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from icml24.core import streams


def test_same_names_same_numbers_other_names_other_numbers():
    a = streams.rng(7, "episode", 3).standard_normal(1000)
    assert np.array_equal(a, streams.rng(7, "episode", 3).standard_normal(1000))
    for other in (streams.rng(8, "episode", 3), streams.rng(7, "episode", 4), streams.rng(7, "reset", 3)):
        b = other.standard_normal(1000)
        assert abs(np.corrcoef(a, b)[0, 1]) < 0.12  # independent draws: |r| ~ N(0, 1/sqrt(1000))


def test_indices_never_collide_where_arithmetic_seeds_do():
    # seed * 1000 + 100 * k + j: episode j = 100 of family k = 0 is episode 0 of family k = 1
    assert 0 * 1000 + 100 * 0 + 100 == 0 * 1000 + 100 * 1 + 0
    keys = {streams.int_seed(0, "demos", k, j, bits=63) for k in range(5) for j in range(400)}
    assert len(keys) == 5 * 400
    assert streams.sequence(0, "a", 1).spawn_key != streams.sequence(0, "a", 1, 0).spawn_key


def test_string_names_hash_stably():
    # BLAKE2b, not Python's salted hash(): the same key in every process (value pinned)
    assert streams.sequence(0, "data").spawn_key == (int.from_bytes(
        __import__("hashlib").blake2b(b"data", digest_size=4).digest(), "little"),)
    assert streams.int_seed(0, "data") == streams.int_seed(0, "data") < 2**31


def test_torch_generator_is_reproducible_and_named():
    x = torch.randn(5, generator=streams.torch_generator(1, "init"))
    assert torch.equal(x, torch.randn(5, generator=streams.torch_generator(1, "init")))
    assert not torch.equal(x, torch.randn(5, generator=streams.torch_generator(1, "init", 0)))


@pytest.mark.parametrize("bad", [(-1, ("a",)), (0, (-2,)), (0, (1.5,)), (0, (True,))])
def test_bad_seeds_and_names_are_refused(bad):
    seed, names = bad
    with pytest.raises((ValueError, TypeError)):
        streams.sequence(seed, *names)

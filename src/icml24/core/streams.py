"""Named random streams: one way to derive every generator a seed's run needs.

A run gets one integer ``seed``; each thing it randomises (data, initial weights, an environment's episode
resets, a bootstrap) draws from its own stream, named by a path of strings and integers:
``rng(seed, "data")``, ``rng(seed, "episode", k)``, ``torch_generator(seed, "init", layer)``. A stream is
:class:`numpy.random.SeedSequence` with ``entropy=seed`` and the names as its ``spawn_key`` (a string is
hashed to 32 bits with BLAKE2b, stable across processes and Python versions; an integer is used as it is),
so

* streams with different names are statistically independent (SeedSequence's guarantee for distinct keys),
  and adding a stream never shifts another one (no order-dependent ``next(streams)``);
* integer indices never collide: ``("episode", 100)`` and ``("episode", 1, 0)`` are different keys, unlike
  ``seed * 1000 + 100 * k + j`` schemes, where index 100 of one family is index 0 of the next;
* the same (seed, names) give the same numbers on every run and machine.

For libraries that take an integer seed (gymnasium's ``reset(seed=)``, stable-baselines3), :func:`int_seed`
gives one from the same stream.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Union

import numpy as np

if TYPE_CHECKING:
    import torch

Name = Union[str, int]


def _key(name: Name) -> int:
    """A spawn-key word for one name: an int as it is (non-negative), a str as its 32-bit BLAKE2b digest."""
    if isinstance(name, bool) or not isinstance(name, (str, int, np.integer)):
        raise TypeError(f"stream names are str or int, not {type(name).__name__}")
    if isinstance(name, str):
        return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=4).digest(), "little")
    if name < 0:
        raise ValueError(f"stream index {name} is negative")
    return int(name)


def sequence(seed: int, *names: Name) -> np.random.SeedSequence:
    """The :class:`~numpy.random.SeedSequence` of stream ``names`` of ``seed``.

    >>> sequence(3, "data").spawn_key == sequence(3, "data").spawn_key
    True
    """
    if seed < 0:
        raise ValueError(f"seed {seed} is negative")
    return np.random.SeedSequence(entropy=int(seed), spawn_key=tuple(_key(n) for n in names))


def rng(seed: int, *names: Name) -> np.random.Generator:
    """A numpy Generator (PCG64) on stream ``names`` of ``seed``.

    >>> a, b = rng(0, "data").random(3), rng(0, "data").random(3)
    >>> bool((a == b).all()), bool((rng(0, "init").random(3) == a).any())
    (True, False)
    """
    return np.random.Generator(np.random.PCG64(sequence(seed, *names)))


def int_seed(seed: int, *names: Name, bits: int = 31) -> int:
    """An integer in [0, 2^bits) from stream ``names`` of ``seed``, for libraries that take an int seed.

    >>> int_seed(0, "episode", 5) == int_seed(0, "episode", 5) != int_seed(0, "episode", 6)
    True
    """
    if not 1 <= bits <= 63:
        raise ValueError(f"bits={bits}: use 1 to 63")
    word = int(sequence(seed, *names).generate_state(1, np.uint64)[0])
    return word >> (64 - bits)


def torch_generator(seed: int, *names: Name, device: str = "cpu") -> "torch.Generator":
    """A torch Generator seeded from stream ``names`` of ``seed`` (63 bits of it)."""
    import torch

    return torch.Generator(device=device).manual_seed(int_seed(seed, *names, bits=63))

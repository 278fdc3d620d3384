"""Expert policies for gymnasium tasks trained with stable-baselines3 SAC, cached as run artefacts.

:func:`expert` trains an SB3 SAC agent (the usual choice for MuJoCo locomotion, with SB3's default
hyperparameters) on ``env_id`` for ``steps`` environment steps with ``seed``, saves it into the run's
artefact cache and returns it as a deterministic numpy policy (observations (n, obs_dim) -> actions
(n, act_dim)). Training prints its progress every 10% of the steps on stderr. With
``checkpoint_every`` > 0 the training run also saves its policy every that many steps (the
intermediate checkpoints of an RL run, for demonstrators of intermediate quality); :func:`checkpoint`
loads one of them from the same cache entry.

The cache key is the spec and the fingerprint of *this* module and of the installed SB3 version, not
the calling paper's code hash: an expert of a million steps (hours on a CPU) survives edits to the
paper, and every seed and preset shares it. Loading and training leave the global random generators
(torch, numpy, ``random``) as they found them: SB3 reseeds them all.
"""

from __future__ import annotations

import hashlib
import random
import sys
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Iterator, NamedTuple

import numpy as np

from icml24.common.offline import Policy
from icml24.core.context import RunContext

__all__ = ["ExpertSpec", "train_expert", "load_expert", "expert", "checkpoint", "checkpoint_steps"]

FILE = "expert.zip"


class ExpertSpec(NamedTuple):
    """What an expert is."""

    env_id: str          # the gymnasium task
    steps: int = 200_000  # SAC environment steps
    seed: int = 0        # seed of SB3's training (environment, networks, replay sampling)
    checkpoint_every: int = 0   # save the policy every this many steps during training (0: none)


def checkpoint_steps(spec: ExpertSpec) -> tuple[int, ...]:
    """The training steps at which the run of ``spec`` saves an intermediate policy (below ``spec.steps``).

    >>> checkpoint_steps(ExpertSpec("Reacher-v5", 10_000, 0, 2500))
    (2500, 5000, 7500)
    """
    if spec.checkpoint_every <= 0:
        return ()
    return tuple(range(spec.checkpoint_every, spec.steps, spec.checkpoint_every))


def _checkpoint_file(step: int) -> str:
    return f"checkpoint_{step}.zip"


@contextmanager
def _global_rng_kept() -> Iterator[None]:
    """Restore torch's, numpy's and ``random``'s global generator states after the body (SB3 reseeds them)."""
    import torch

    states = (torch.random.get_rng_state(), np.random.get_state(), random.getstate())
    try:
        yield
    finally:
        torch.random.set_rng_state(states[0])
        np.random.set_state(states[1])
        random.setstate(states[2])


def train_expert(spec: ExpertSpec, folder: Path, device: str = "cpu") -> None:
    """Train the expert of ``spec`` and save it as ``folder/expert.zip``."""
    import gymnasium as gym
    from stable_baselines3 import SAC
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.logger import Logger

    saves = set(checkpoint_steps(spec))

    class Progress(BaseCallback):
        def _on_step(self) -> bool:
            if self.num_timesteps % max(1, spec.steps // 10) == 0:
                print(f"expert SAC on {spec.env_id}: {self.num_timesteps}/{spec.steps} steps",
                      file=sys.stderr, flush=True)
            if self.num_timesteps in saves:
                self.model.policy.save(str(folder / _checkpoint_file(self.num_timesteps)))
            return True

    env = gym.make(spec.env_id)
    with _global_rng_kept():
        model = SAC("MlpPolicy", env, seed=spec.seed, device=device, verbose=0)
        model.set_logger(Logger(folder=None, output_formats=[]))   # SB3's default makes a /tmp/SB3-<time> folder
        model.learn(total_timesteps=spec.steps, callback=Progress())
        model.save(folder / FILE)
    env.close()


def load_expert(folder: Path, device: str = "cpu", step: int | None = None) -> Policy:
    """The saved expert in ``folder`` (``step``: its intermediate checkpoint at that training step) as a
    deterministic batch policy."""
    from stable_baselines3 import SAC
    from stable_baselines3.sac.policies import SACPolicy

    with _global_rng_kept():
        model = (SAC.load(folder / FILE, device=device) if step is None
                 else SACPolicy.load(str(folder / _checkpoint_file(step)), device=device))

    def act(obs: np.ndarray) -> np.ndarray:
        action, _ = model.predict(np.asarray(obs, dtype=np.float32), deterministic=True)
        return np.asarray(action, dtype=np.float64).reshape(len(obs), -1)

    return act


def _fingerprint() -> str:
    """This module's source and the SB3 version: what an expert depends on besides its spec."""
    import stable_baselines3

    text = Path(__file__).read_bytes() + stable_baselines3.__version__.encode()
    return hashlib.sha256(text).hexdigest()[:12]


def _folder(ctx: RunContext, spec: ExpertSpec, device: str) -> Path:
    own = replace(ctx, code_hash=_fingerprint())
    return own.artefact("sb3_expert", spec._asdict(), lambda f: train_expert(spec, f, device))


def expert(ctx: RunContext, spec: ExpertSpec, device: str = "cpu") -> Policy:
    """The expert of ``spec`` from the artefact cache, trained there on a miss (module docstring)."""
    return load_expert(_folder(ctx, spec, device), device)


def checkpoint(ctx: RunContext, spec: ExpertSpec, step: int, device: str = "cpu") -> Policy:
    """The intermediate policy that the training run of ``spec`` saved at ``step`` (one of
    :func:`checkpoint_steps`), from the same cache entry as :func:`expert`."""
    if step not in checkpoint_steps(spec):
        raise ValueError(f"step {step} is not a checkpoint of {spec}; those are {checkpoint_steps(spec)}")
    return load_expert(_folder(ctx, spec, device), device, step)

"""Expert policies for gymnasium tasks trained with stable-baselines3, cached as run artefacts.

:func:`expert` trains an SB3 agent (SAC by default: the usual choice for MuJoCo locomotion) on
``env_id`` for ``steps`` environment steps with ``seed``, saves it into the run's artefact cache (keyed
by task, algorithm, steps and seed, so every seed and preset of a paper shares it, and a fresh clone
rebuilds it), and returns it as a deterministic numpy policy (observations (n, obs_dim) -> actions
(n, act_dim)). Training prints its progress every 10% of the steps on stderr.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from icml24.common.offline import Policy
from icml24.core.context import RunContext

__all__ = ["ALGOS", "ExpertSpec", "train_expert", "load_expert", "expert"]

ALGOS: tuple[str, ...] = ("sac", "td3", "ppo")
FILE = "expert.zip"


class ExpertSpec(NamedTuple):
    """What an expert is: the task, the SB3 algorithm, its environment steps and its seed."""

    env_id: str
    algo: str = "sac"
    steps: int = 200_000
    seed: int = 0


def _algo(name: str) -> Any:
    import stable_baselines3 as sb3

    if name not in ALGOS:
        raise ValueError(f"unknown algorithm {name!r}; use one of {ALGOS}")
    return {"sac": sb3.SAC, "td3": sb3.TD3, "ppo": sb3.PPO}[name]


def train_expert(spec: ExpertSpec, folder: Path, device: str = "cpu") -> None:
    """Train the expert of ``spec`` with SB3's default hyperparameters and save it as ``folder/expert.zip``."""
    import gymnasium as gym
    from stable_baselines3.common.callbacks import BaseCallback

    class Progress(BaseCallback):
        def _on_step(self) -> bool:
            if self.num_timesteps % max(1, spec.steps // 10) == 0:
                print(f"expert {spec.algo} on {spec.env_id}: {self.num_timesteps}/{spec.steps} steps",
                      file=sys.stderr, flush=True)
            return True

    env = gym.make(spec.env_id)
    model = _algo(spec.algo)("MlpPolicy", env, seed=spec.seed, device=device, verbose=0)
    model.learn(total_timesteps=spec.steps, callback=Progress())
    model.save(folder / FILE)
    env.close()


def load_expert(folder: Path, spec: ExpertSpec, device: str = "cpu") -> Policy:
    """The saved expert of ``spec`` as a deterministic batch policy."""
    model = _algo(spec.algo).load(folder / FILE, device=device)

    def act(obs: np.ndarray) -> np.ndarray:
        action, _ = model.predict(np.asarray(obs, dtype=np.float32), deterministic=True)
        return np.asarray(action, dtype=np.float64).reshape(len(obs), -1)

    return act


def expert(ctx: RunContext, spec: ExpertSpec, device: str = "cpu") -> Policy:
    """The expert of ``spec`` from the artefact cache, trained there on a miss (module docstring)."""
    folder = ctx.artefact("sb3_expert", spec._asdict(), lambda f: train_expert(spec, f, device))
    return load_expert(folder, spec, device)

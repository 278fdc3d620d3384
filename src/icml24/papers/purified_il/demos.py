"""Demonstrations: the task and its expert, the expert's noisy executions, and the sets.

A :class:`Task` is a gymnasium environment whose episodes end only at the time limit, its expert, its
action bound and (MuJoCo) the intermediate checkpoints of the expert's training. On a MuJoCo task the
expert is an SB3 SAC agent trained once per task, steps and seed (:mod:`icml24.common.experts`), which
saves its policy every ``checkpoint_every`` steps on the way; on Pendulum-v1 it is
:func:`icml24.common.offline.swing_up` (energy pumping and a PD balance), which has no checkpoints.

Imperfect demonstrations follow the paper's two constructions:

* D2 (its code's "normal" files): the expert executed with action noise, the *executed* action recorded
  unclipped (the official data has |a| up to 2.8 for a bound of 1; the simulator clamps the control,
  the control cost sees the raw action), with the noise in units of the action bound u_max (1 for the
  MuJoCo tasks, 2 for Pendulum-v1), per action dimension:

  - ``gaussian``: a = pi*(s) + sigma u_max xi, xi ~ N(0, 1) (the paper's main setting);
  - ``uniform``: a = pi*(s) + sigma u_max sqrt(3) u, u ~ U[-1, 1] (the same std as the Gaussian);
  - ``salt_pepper``: with probability sigma an action is replaced by -u_max or +u_max (equally likely).

* D1: an intermediate checkpoint of the expert's own RL training, acting deterministically (its mean
  action): a state-dependent, non-zero-mean deviation from pi*.

The optimal set D_o is ``n_optimal`` pairs drawn without replacement from clean expert episodes; each
imperfect set D_s is ``n_noisy`` pairs drawn from noisy episodes. Each pair keeps pi*(s), the expert's
action at its state, for measuring (never for training).
"""

from __future__ import annotations

from typing import Literal, Mapping, NamedTuple

import numpy as np

from icml24.common.offline import PENDULUM, U_MAX, Episode, Policy, collect, swing_up
from icml24.core.context import RunContext

__all__ = ["NOISES", "Noise", "Task", "MUJOCO_TASKS", "make_task", "Pairs", "noisy_expert", "pairs",
           "expert_episodes"]

Noise = Literal["gaussian", "uniform", "salt_pepper"]
NOISES: tuple[str, ...] = ("gaussian", "uniform", "salt_pepper")
#: MuJoCo tasks whose episodes end only at the time limit (what :func:`icml24.common.offline.collect` needs).
MUJOCO_TASKS: tuple[str, ...] = ("HalfCheetah-v5", "Reacher-v5", "Swimmer-v5")


class Task(NamedTuple):
    """An environment, its expert pi*, its (symmetric) action bound u_max and the checkpoints that D1 uses."""

    env_id: str
    expert: Policy
    u_max: float
    checkpoints: Mapping[int, Policy] = {}   # training step -> the policy saved there


def make_task(env_id: str, expert_steps: int, seed: int, ctx: RunContext, device: str = "cpu",
              checkpoint_every: int = 0, d1_steps: tuple[int, ...] = ()) -> Task:
    """Pendulum-v1 with the analytic expert, or a MuJoCo task with its SB3 SAC expert (trained on a cache miss,
    saving a checkpoint every ``checkpoint_every`` steps) and the checkpoints at ``d1_steps``."""
    if env_id == PENDULUM:
        if d1_steps:
            raise ValueError(f"{PENDULUM}'s analytic expert has no training checkpoints")
        return Task(PENDULUM, swing_up, U_MAX)
    if env_id not in MUJOCO_TASKS:
        raise ValueError(f"unknown task {env_id!r}; use {PENDULUM} or one of {MUJOCO_TASKS}")
    import tempfile
    from dataclasses import replace
    from pathlib import Path

    import gymnasium as gym

    from icml24.common.experts import ExpertSpec, checkpoint, expert

    if ctx.cache_dir is None:   # one temporary cache, so that the expert and its checkpoints come from one training
        ctx = replace(ctx, cache_dir=Path(tempfile.mkdtemp(prefix="icml24-purified_il-")))
    env = gym.make(env_id)
    high = np.asarray(env.action_space.high, dtype=np.float64)        # type: ignore[attr-defined]
    env.close()
    spec = ExpertSpec(env_id, expert_steps, seed, checkpoint_every)
    return Task(env_id, expert(ctx, spec, device), float(high.max()),
                {step: checkpoint(ctx, spec, step, device) for step in d1_steps})


class Pairs(NamedTuple):
    """State-action pairs with the expert's action at each state."""

    states: np.ndarray     # (n, obs_dim)
    actions: np.ndarray    # (n, act_dim) the recorded (possibly noisy) action
    expert: np.ndarray     # (n, act_dim) pi*(s)


def noisy_expert(task: Task, kind: Noise, sigma: float, rng: np.random.Generator) -> Policy:
    """The task's expert with action noise of ``kind`` and size ``sigma`` (module docstring), not clipped."""
    if kind not in NOISES:
        raise ValueError(f"unknown noise {kind!r}; use one of {NOISES}")
    u = task.u_max

    def act(obs: np.ndarray) -> np.ndarray:
        a = task.expert(obs)                                                # (n, act_dim)
        if kind == "gaussian":
            a = a + sigma * u * rng.standard_normal(a.shape)
        elif kind == "uniform":
            a = a + sigma * u * np.sqrt(3.0) * rng.uniform(-1.0, 1.0, a.shape)
        else:
            hit = rng.random(a.shape) < sigma
            a = np.where(hit, u * rng.choice([-1.0, 1.0], a.shape), a)
        return a

    return act


def pairs(task: Task, episodes: list[Episode], n: int, rng: np.random.Generator) -> Pairs:
    """``n`` pairs drawn without replacement from the transitions of ``episodes``."""
    states = np.concatenate([e.observations[:-1] for e in episodes]).astype(np.float64)   # (N, obs_dim)
    actions = np.concatenate([e.actions for e in episodes]).astype(np.float64)            # (N, act_dim)
    if n > len(states):
        raise ValueError(f"asked for {n} pairs from {len(states)} transitions")
    idx = rng.choice(len(states), n, replace=False)
    return Pairs(states[idx], actions[idx], task.expert(states[idx]))


def expert_episodes(task: Task, n_episodes: int, seed: int) -> list[Episode]:
    """Clean expert episodes from reset seeds ``seed, seed + 1, ...``."""
    return collect(task.expert, n_episodes, seed, task.env_id)

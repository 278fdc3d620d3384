"""Demonstrations on gymnasium's Pendulum-v1: the analytic expert, its noisy executions, and the sets.

The expert is :func:`icml24.common.offline.swing_up` (energy pumping and a PD balance; mean return about
-150 per 200-step episode). Imperfect demonstrations follow the paper's D2 construction (its code's
"normal" files: the expert executed with action noise, the *executed* action recorded), with the noise
in units of the torque bound (2 for Pendulum-v1, 1 for the paper's MuJoCo tasks):

* ``gaussian``: a = clip(pi*(s) + sigma u_max xi), xi ~ N(0, 1) (the paper's main setting);
* ``uniform``: a = clip(pi*(s) + sigma u_max sqrt(3) u), u ~ U[-1, 1] (the same std as the Gaussian);
* ``salt_pepper``: with probability sigma the action is replaced by -u_max or +u_max (equally likely).

The optimal set D_o is ``n_optimal`` pairs drawn without replacement from clean expert episodes; each
imperfect set D_s is ``n_noisy`` pairs drawn from noisy episodes. Each pair keeps pi*(s), the expert's
action at its state, for measuring (never for training).
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np

from icml24.common.offline import U_MAX, Episode, Policy, collect, swing_up

__all__ = ["NOISES", "Noise", "Pairs", "noisy_expert", "pairs", "expert_episodes"]

Noise = Literal["gaussian", "uniform", "salt_pepper"]
NOISES: tuple[str, ...] = ("gaussian", "uniform", "salt_pepper")


class Pairs(NamedTuple):
    """State-action pairs with the expert's action at each state."""

    states: np.ndarray     # (n, 3)
    actions: np.ndarray    # (n, 1) the recorded (possibly noisy) action
    expert: np.ndarray     # (n, 1) pi*(s)


def noisy_expert(kind: Noise, sigma: float, rng: np.random.Generator) -> Policy:
    """The expert with action noise of ``kind`` and size ``sigma`` (module docstring), clipped to +-u_max."""
    if kind not in NOISES:
        raise ValueError(f"unknown noise {kind!r}; use one of {NOISES}")

    def act(obs: np.ndarray) -> np.ndarray:
        a = swing_up(obs)                                                   # (n, 1)
        if kind == "gaussian":
            a = a + sigma * U_MAX * rng.standard_normal(a.shape)
        elif kind == "uniform":
            a = a + sigma * U_MAX * np.sqrt(3.0) * rng.uniform(-1.0, 1.0, a.shape)
        else:
            hit = rng.random(a.shape) < sigma
            a = np.where(hit, U_MAX * rng.choice([-1.0, 1.0], a.shape), a)
        return np.clip(a, -U_MAX, U_MAX)

    return act


def pairs(episodes: list[Episode], n: int, rng: np.random.Generator) -> Pairs:
    """``n`` pairs drawn without replacement from the transitions of ``episodes``."""
    states = np.concatenate([e.observations[:-1] for e in episodes]).astype(np.float64)   # (N, 3)
    actions = np.concatenate([e.actions for e in episodes]).astype(np.float64)            # (N, 1)
    if n > len(states):
        raise ValueError(f"asked for {n} pairs from {len(states)} transitions")
    idx = rng.choice(len(states), n, replace=False)
    return Pairs(states[idx], actions[idx], swing_up(states[idx]))


def expert_episodes(n_episodes: int, seed: int) -> list[Episode]:
    """Clean expert episodes from reset seeds ``seed, seed + 1, ...``."""
    return collect(swing_up, n_episodes, seed)

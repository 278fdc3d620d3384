"""A synthetic task with discontinuous dynamics (claim C1), after the paper's motivating "jumping" example
(a force above a threshold makes the agent jump, Sec. 3): a point with position p and velocity v,

    v' = 0.8 v + 0.2 a + J 1[a > tau],      p' = p + 0.1 v',      plus N(0, noise^2) on s' = (p', v'),

so the target Delta = s' - s = (0.1 v', v' - v) jumps by (0.1 J, J) where the action crosses tau. The
offline data cover p, v, a ~ U[-1, 1]; the dynamics do not depend on p, so states with p in [1, 2]
(never seen) are out of distribution only for a model that has not learned that invariance.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["JumpTask", "JumpData", "dynamics", "sample"]


class JumpTask(NamedTuple):
    """Parameters of the jump dynamics."""

    jump: float = 1.0        # J
    threshold: float = 0.3   # tau
    noise: float = 0.01      # std of the transition noise
    near: float = 0.05       # |a - tau| < near counts as near the discontinuity


class JumpData(NamedTuple):
    """Transitions as model inputs x = [s, a] and targets Delta = s' - s."""

    x: np.ndarray        # (n, 3) [p, v, a]
    target: np.ndarray   # (n, 2) [p' - p, v' - v]


def dynamics(x: np.ndarray, task: JumpTask) -> np.ndarray:
    """Noiseless Delta (n, 2) of x = [p, v, a] (n, 3).

    >>> dynamics(np.array([[0.0, 0.0, 0.5], [0.0, 0.0, 0.2]]), JumpTask()).round(3)   # v' = 0.1 + 1 and 0.04
    array([[0.11 , 1.1  ],
           [0.004, 0.04 ]])
    """
    v, a = x[:, 1], x[:, 2]
    v_next = 0.8 * v + 0.2 * a + task.jump * (a > task.threshold)
    return np.stack([0.1 * v_next, v_next - v], 1)


def sample(rng: np.random.Generator, n: int, task: JumpTask, p_range: tuple[float, float] = (-1.0, 1.0),
           a_range: tuple[float, float] = (-1.0, 1.0), noise: bool = True) -> JumpData:
    """``n`` transitions with p ~ U[p_range], v ~ U[-1, 1], a ~ U[a_range] (noisy targets if ``noise``)."""
    x = np.stack([rng.uniform(*p_range, n), rng.uniform(-1, 1, n), rng.uniform(*a_range, n)], 1)
    target = dynamics(x, task)
    if noise:
        target = target + task.noise * rng.standard_normal(target.shape)
    return JumpData(x, target)

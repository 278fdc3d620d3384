"""A synthetic task with discontinuous dynamics (claim C1), after the paper's motivating "jumping" example
(a force above a threshold makes the agent jump, Sec. 3): a point with position p and velocity v,

    v' = 0.8 v + 0.2 a + J 1[a > tau],      p' = p + 0.1 v',      plus N(0, noise^2) on s' = (p', v'),

so the target Delta = s' - s = (0.1 v', v' - v) jumps by (0.1 J, J) where the action crosses tau.

Data come from a *policy*: p, v ~ U[-1, 1] and a = clip(slope v + 0.4 xi, -1, 1), xi ~ N(0, 1). The
offline data use slope -0.6 (pushes against the velocity, so strong actions, and the jump, occur mostly
at v < 0); the out-of-distribution test uses slope +0.6, which jumps mostly at v > 0: a shift of the
joint distribution of the inputs the dynamics depend on (v, a), the policy shift of the paper's OOD
evaluation.

Measures of a prediction (the paper's point is that the energy model predicts a *physically possible*
transition where a forward model averages the two):

* mode validity: the share of predictions within eps = ``valid_eps`` x ||(0.1 J, J)|| (a quarter of the
  jump by default, so a valid prediction is nearer a branch than the midpoint of the two) of a
  *reachable* branch: within ``near`` of the threshold both branches (a 1[a > tau] of 0 or 1 at the
  input's (v, a)) are reachable, farther away only the true one;
* sharpness: the largest change of the predicted v' - v between neighbouring points of an action grid
  of spacing 0.005 through the threshold, as a share of J, averaged over v in {-0.5, 0, 0.5} (1: the
  whole jump happens within one grid step; a ramp of width w gives about 0.005 / w).
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

__all__ = ["JumpTask", "JumpData", "TRAIN_SLOPE", "OOD_SLOPE", "dynamics", "branches", "sample", "validity",
           "sharpness_grid", "sharpness"]

TRAIN_SLOPE = -0.6   # action slope of the behaviour policy of the offline data
OOD_SLOPE = 0.6      # action slope of the shifted policy (C1b)
ACTION_NOISE = 0.4   # std of the policies' action noise
GRID_STEP = 0.005    # action spacing of the sharpness grid
SHARP_V = (-0.5, 0.0, 0.5)


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


def _delta(v: np.ndarray, a: np.ndarray, jumped: np.ndarray | float, task: JumpTask) -> np.ndarray:
    v_next = 0.8 * v + 0.2 * a + task.jump * jumped
    return np.stack([0.1 * v_next, v_next - v], -1)


def dynamics(x: np.ndarray, task: JumpTask) -> np.ndarray:
    """Noiseless Delta (n, 2) of x = [p, v, a] (n, 3).

    >>> dynamics(np.array([[0.0, 0.0, 0.5], [0.0, 0.0, 0.2]]), JumpTask()).round(3)   # v' = 0.1 + 1 and 0.04
    array([[0.11 , 1.1  ],
           [0.004, 0.04 ]])
    """
    return _delta(x[:, 1], x[:, 2], (x[:, 2] > task.threshold).astype(float), task)


def branches(x: np.ndarray, task: JumpTask) -> np.ndarray:
    """Delta of both branches (no jump, jump) at every input: (n, 2 branches, 2)."""
    v, a = x[:, 1:2], x[:, 2:3]
    return _delta(v, a, np.array([0.0, 1.0]), task)


def sample(rng: np.random.Generator, n: int, task: JumpTask, slope: float = TRAIN_SLOPE,
           a_range: tuple[float, float] | None = None, noise: bool = True) -> JumpData:
    """``n`` transitions of the policy a = clip(slope v + 0.4 xi, -1, 1) with p, v ~ U[-1, 1] (noisy targets
    if ``noise``); ``a_range`` keeps only actions in that interval (rejection from the same policy)."""
    rows: list[np.ndarray] = []
    left = n
    while left > 0:
        m = 4 * left if a_range is None else max(64, int(40 * left / max(a_range[1] - a_range[0], 1e-3)))
        p, v = rng.uniform(-1, 1, m), rng.uniform(-1, 1, m)
        a = np.clip(slope * v + ACTION_NOISE * rng.standard_normal(m), -1, 1)
        x = np.stack([p, v, a], 1)
        if a_range is not None:
            x = x[(a > a_range[0]) & (a < a_range[1])]
        rows.append(x[:left])
        left -= len(rows[-1])
    x = np.concatenate(rows)
    target = dynamics(x, task)
    if noise:
        target = target + task.noise * rng.standard_normal(target.shape)
    return JumpData(x, target)


def validity(pred: np.ndarray, x: np.ndarray, task: JumpTask, eps: float) -> float:
    """Share of predictions (n, 2) within eps ||(0.1 J, J)|| of a reachable branch (module docstring).

    >>> t = JumpTask()
    >>> x = np.array([[0.0, 0.0, 0.31], [0.0, 0.0, 0.31], [0.0, 0.0, 0.8]])
    >>> pred = np.array([[0.006, 0.06], [0.06, 0.6], [0.016, 0.16]])   # lower branch, midpoint, lower branch
    >>> validity(pred, x, t, 0.25)                                      # only the first is valid
    0.3333333333333333
    """
    dist = np.linalg.norm(pred[:, None, :] - branches(x, task), axis=-1)            # (n, 2)
    true_branch = (x[:, 2] > task.threshold).astype(int)
    near = np.abs(x[:, 2] - task.threshold) < task.near
    d = np.where(near, dist.min(1), dist[np.arange(len(x)), true_branch])
    return float(np.mean(d < eps * task.jump * np.hypot(0.1, 1.0)))


def sharpness_grid(task: JumpTask, half_width: float = 0.1) -> np.ndarray:
    """Inputs of the sharpness measure: p = 0, v in SHARP_V, a on a grid of GRID_STEP through tau: (3 m, 3)."""
    a = np.arange(task.threshold - half_width, task.threshold + half_width + 1e-9, GRID_STEP)
    return np.concatenate([np.stack([np.zeros_like(a), np.full_like(a, v), a], 1) for v in SHARP_V])


def sharpness(predict: Callable[[np.ndarray], np.ndarray], task: JumpTask) -> float:
    """The largest step of the predicted v' - v along the grid, a share of J, averaged over the v's.

    >>> t = JumpTask()
    >>> round(sharpness(lambda x: dynamics(x, t), t), 6)    # the truth: the jump plus 0.2 x 0.005 of the slope
    1.001
    """
    grid = sharpness_grid(task)
    dv = predict(grid)[:, 1].reshape(len(SHARP_V), -1)                                # (3, m)
    return float(np.mean(np.abs(np.diff(dv, axis=1)).max(1)) / task.jump)

"""A continuing constrained point-on-a-circle task (the Point-Circle task of CPO, Achiam et al. 2017,
Sec. 8, rebuilt in numpy without MuJoCo and without resets), as a gymnasium vector environment.

A point mass with position p = (x, y) and velocity v moves under a bounded acceleration a in [-1, 1]^2:

    v <- friction v + dt a,    p <- p + dt v,

and a point that leaves the square [-box, box]^2 is put back at rest at a uniformly random point of
the circle of radius R / 2 (part of the dynamics: the task stays continuing and ergodic, and no
policy can park the point against a wall).

Reward (CPO's circle reward): r = (-y v_x + x v_y) / (1 + | ||p|| - R |), the angular momentum about
the origin, damped away from the circle of radius R: the point is paid for running counter-clockwise
along the circle. Cost: c = 1[|x| > x_lim], so the long-run average cost is the fraction of time spent
outside the vertical band |x| <= x_lim, which the circle of radius R > x_lim leaves twice per lap.
With dt = 0.1 and friction 0.9 the terminal speed is 1, so the average reward is at most about R.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from gymnasium.vector import VectorEnv


class PointCircleEnv(VectorEnv):
    """``num_envs`` copies of the task; ``info["cost"]`` carries the per-step cost (N,)."""

    def __init__(self, num_envs: int, radius: float = 1.0, x_lim: float = 0.7, dt: float = 0.1,
                 friction: float = 0.9, box: float = 2.0):
        self.num_envs = num_envs
        self.radius, self.x_lim, self.dt, self.friction, self.box = radius, x_lim, dt, friction, box
        self.single_observation_space = spaces.Box(-np.inf, np.inf, (4,), np.float64)
        self.single_action_space = spaces.Box(-1.0, 1.0, (2,), np.float64)
        self.observation_space = spaces.Box(-np.inf, np.inf, (num_envs, 4), np.float64)
        self.action_space = spaces.Box(-1.0, 1.0, (num_envs, 2), np.float64)
        self.state = np.zeros((num_envs, 4))
        self.rng = np.random.default_rng()

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.state = self._restart(self.num_envs)
        return self.state.copy(), {}

    def _restart(self, n: int) -> np.ndarray:
        angle = self.rng.uniform(0, 2 * np.pi, n)
        half = 0.5 * self.radius
        return np.stack([np.cos(angle) * half, np.sin(angle) * half, np.zeros(n), np.zeros(n)], axis=1)

    def step(self, actions: np.ndarray):
        a = np.clip(np.asarray(actions, dtype=float), -1.0, 1.0)          # (N, 2)
        p, v = self.state[:, :2], self.state[:, 2:]
        v = self.friction * v + self.dt * a
        p = p + self.dt * v
        x, y = p[:, 0], p[:, 1]
        reward = (-y * v[:, 0] + x * v[:, 1]) / (1.0 + np.abs(np.hypot(x, y) - self.radius))
        cost = (np.abs(x) > self.x_lim).astype(float)
        state = np.concatenate([p, v], axis=1)
        out = np.abs(p).max(axis=1) > self.box
        if np.any(out):
            state[out] = self._restart(int(out.sum()))
        self.state = state
        none = np.zeros(self.num_envs, dtype=bool)
        return self.state.copy(), reward, none, none, {"cost": cost}

"""The feasible manifold of the CPU reproduction: a unit circle embedded in R^d by a fixed rotation.

In the rotated frame z = Q^T x (Q orthogonal, d x d), the data lie on z_0 = cos(theta), z_1 = sin(theta),
z_2 = ... = 0, with the angle drawn from a von Mises density centred at 0 (concentration kappa): dense near
theta = 0, scarce near the on-manifold optimum theta = pi (density ratio exp(-2 kappa)). The true reward

    r(x) = cos(theta(x) - pi) + decoy exp(-theta(x)^2 / (2 width^2)) + w_off h(x),    h(x) = z_2,

rises without bound along the off-manifold direction q_2 (SEIKO's "reward that keeps rising off the
data"); ``decoy`` > 0 adds a local optimum on the dense part of the circle. A sample is valid when it lies
within ``eps`` of the circle: dist(x) = sqrt((rho - 1)^2 + ||z_{2:}||^2) <= eps, rho = ||z_{0:2}||.
Over the valid set the reward's maximum is max_theta r_on(theta) + w_off eps (theta at the on-manifold
optimum, h = eps) and its minimum min_theta r_on(theta) - w_off eps (:meth:`Circle.bounds`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import torch

__all__ = ["Circle", "rotation", "RewardBounds"]

NEAR = 0.5
"""Half-width in angle of the region "near the optimum" (|theta - pi| < NEAR) of the diagnostics."""


def rotation(dim: int, rng: np.random.Generator) -> np.ndarray:
    """A random orthogonal (dim, dim) matrix (QR of a Gaussian matrix, signs fixed so it is Haar-distributed).

    >>> Q = rotation(5, np.random.default_rng(0))
    >>> bool(np.allclose(Q.T @ Q, np.eye(5)))
    True
    """
    q, r = np.linalg.qr(rng.normal(size=(dim, dim)))
    return q * np.sign(np.diag(r))[None]


class RewardBounds(NamedTuple):
    """The extremes of the true reward over the valid set (the regret's reference points)."""

    best: float      # r* = max over valid x
    worst: float     # min over valid x


class Circle(NamedTuple):
    """The embedded circle, its data density and its reward (module docstring)."""

    Q: torch.Tensor        # (d, d) orthogonal: columns 0, 1 span the circle's plane, column 2 is h's direction
    kappa: float           # von Mises concentration of the angle density (at 0)
    w_off: float           # weight of the off-manifold term h
    decoy: float           # height of the local optimum at theta = 0 (0: none)
    width: float           # its width in angle
    eps: float             # validity radius around the circle

    @property
    def dim(self) -> int:
        return self.Q.shape[0]

    def frame(self, x: torch.Tensor) -> torch.Tensor:
        """z = Q^T x for each row, (n, d) -> (n, d)."""
        return x @ self.Q

    def angle(self, x: torch.Tensor) -> torch.Tensor:
        """theta(x) in (-pi, pi], the angle of x's projection on the plane, (n,)."""
        z = self.frame(x)
        return torch.atan2(z[:, 1], z[:, 0])

    def distance(self, x: torch.Tensor) -> torch.Tensor:
        """Euclidean distance of each row to the circle, (n,)."""
        z = self.frame(x)
        rho = torch.linalg.vector_norm(z[:, :2], dim=1)
        return torch.sqrt((rho - 1.0) ** 2 + (z[:, 2:] ** 2).sum(1))

    def valid(self, x: torch.Tensor) -> torch.Tensor:
        """dist(x) <= eps, (n,) bool."""
        return self.distance(x) <= self.eps

    def on_reward(self, theta: torch.Tensor) -> torch.Tensor:
        """r_on(theta) = cos(theta - pi) + decoy exp(-theta^2 / (2 width^2)), the reward on the circle."""
        return torch.cos(theta - math.pi) + self.decoy * torch.exp(-theta ** 2 / (2 * self.width ** 2))

    def reward(self, x: torch.Tensor) -> torch.Tensor:
        """r(x) = r_on(theta(x)) + w_off h(x), (n, d) -> (n,)."""
        return self.on_reward(self.angle(x)) + self.w_off * self.frame(x)[:, 2]

    def near(self, x: torch.Tensor) -> torch.Tensor:
        """Valid and within NEAR of the optimum's angle pi, (n,) bool."""
        return self.valid(x) & (torch.abs(self.angle(x)).sub(math.pi).abs() < NEAR)

    def bounds(self) -> RewardBounds:
        """max and min of r over the valid set (on a grid of 20,001 angles)."""
        r = self.on_reward(torch.linspace(-math.pi, math.pi, 20_001, dtype=torch.float64))
        return RewardBounds(float(r.max()) + self.w_off * self.eps, float(r.min()) - self.w_off * self.eps)

    def embed(self, theta: torch.Tensor, off: torch.Tensor | None = None) -> torch.Tensor:
        """Points (cos theta, sin theta, off) in the rotated frame, mapped to x = Q z; off (n, d - 2) or zeros."""
        z = torch.zeros(len(theta), self.dim, dtype=self.Q.dtype)
        z[:, 0], z[:, 1] = torch.cos(theta), torch.sin(theta)
        if off is not None:
            z[:, 2:] = off
        return z @ self.Q.T

    def sample(self, n: int, rng: np.random.Generator) -> torch.Tensor:
        """n data points: theta ~ von Mises(0, kappa) on the circle, (n, d) float32."""
        theta = torch.as_tensor(rng.vonmises(0.0, self.kappa, size=n), dtype=self.Q.dtype)
        return self.embed(theta)

    def optimum_probe(self, n: int) -> torch.Tensor:
        """n points on the circle evenly spread over |theta - pi| < NEAR (where the diagnostics read the
        surrogate's error and the bonus), (n, d)."""
        theta = math.pi + torch.linspace(-NEAR, NEAR, n, dtype=self.Q.dtype)
        return self.embed(theta)

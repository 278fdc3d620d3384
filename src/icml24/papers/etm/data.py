"""Policies of the policy-evaluation data (claim C2) on gymnasium's Pendulum-v1; episodes, D4RL's arrays
and Minari's dataset format are in :mod:`icml24.common.offline`.

Policies are analytic (no training, nothing cached), built on the swing-up controller
:func:`icml24.common.offline.swing_up`. The *evaluation policies* (DOPE-style, of graded quality) are
that controller with the torque limited to ``u_max`` in (0, 2]: a weaker motor swings up later or never
(measured discounted returns from about -630 at u_max = 0.25 to about -150 at 2). The *behaviour data*
mix episodes of the full controller with Gaussian action noise of two sizes and of uniformly random
actions.
"""

from __future__ import annotations

import numpy as np

from icml24.common.offline import U_MAX, Policy, swing_up

__all__ = ["limited", "noisy", "uniform"]


def limited(u_max: float) -> Policy:
    """The evaluation policy with torque limit ``u_max``."""
    return lambda obs: swing_up(obs, u_max)


def noisy(sigma: float, rng: np.random.Generator) -> Policy:
    """The full controller plus N(0, sigma^2) action noise, clipped to the torque bound."""
    return lambda obs: np.clip(swing_up(obs) + sigma * rng.standard_normal((len(obs), 1)), -U_MAX, U_MAX)


def uniform(rng: np.random.Generator) -> Policy:
    """Uniformly random torques."""
    return lambda obs: rng.uniform(-U_MAX, U_MAX, (len(obs), 1))

"""The policy-evaluation task of claim C2: gymnasium's Pendulum-v1 with a torque dead zone, its behaviour
and evaluation policies; episodes, D4RL's arrays and Minari's format are in :mod:`icml24.common.offline`.

``DeadZonePendulum-v0`` is Pendulum-v1 whose motor applies no torque when the commanded |u| is below
``DEAD_ZONE`` (0.5, a quarter of the torque bound) and u otherwise: the transition is discontinuous in
the action at |u| = 0.5 (a step of 0.5 x 3 dt = 0.075 in the angular velocity), the kind of dynamics the
paper's Sec. 3 is about. The recorded action is the commanded one (the offline data, the policies and
the models all see u before the dead zone).

Policies are analytic (no training, nothing cached), variants of the swing-up controller of
:func:`icml24.common.offline.swing_up` (energy pumping, then a PD law once cos theta > top): the
*evaluation policies* differ in the pump gain, the PD gains, the switching angle and the torque limit
(not one controller at different limits), with close and crossing values; measured discounted returns
(gamma 0.995, 20 episodes) from about -170 to about -550. Two of them depend on the dead zone: the weak
pump (gain 0.1) pumps mostly inside it (about -550 here, -240 without the dead zone) and the late switch
(top 0.95) is helped by it (-230 here, -530 without). The *behaviour data* mix episodes of the full
controller with Gaussian action noise of two sizes and of uniformly random actions.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from icml24.common.offline import U_MAX, Policy

__all__ = ["ENV_ID", "DEAD_ZONE", "Controller", "EVALUATION", "register", "controller", "noisy", "uniform"]

ENV_ID = "icml24/DeadZonePendulum-v0"
DEAD_ZONE = 0.5


def register() -> None:
    """Register ``ENV_ID`` with gymnasium (idempotent)."""
    import gymnasium as gym

    if ENV_ID in gym.registry:
        return

    class DeadZone(gym.ActionWrapper):
        def action(self, action):
            u = np.asarray(action, dtype=np.float32)
            return np.where(np.abs(u) < DEAD_ZONE, np.float32(0.0), u)

    gym.register(ENV_ID, entry_point=lambda **kw: DeadZone(gym.make("Pendulum-v1", **kw)))


class Controller(NamedTuple):
    """A swing-up controller: pump gain, PD gains, switching threshold on cos theta, torque limit."""

    name: str
    pump: float = 0.2
    kp: float = 10.0
    kd: float = 2.0
    top: float = 0.85
    u_max: float = U_MAX


EVALUATION = (Controller("pump 0.4", pump=0.4), Controller("top 0.7", top=0.7), Controller("swing-up"),
              Controller("top 0.95", top=0.95), Controller("u_max 1.5", u_max=1.5), Controller("u_max 1", u_max=1.0),
              Controller("PD 3/0.5", kp=3.0, kd=0.5), Controller("pump 0.1", pump=0.1))


def controller(c: Controller) -> Policy:
    """The policy of ``c``: (n, 3) observations -> (n, 1) torques.

    >>> controller(Controller("x"))(np.array([[np.cos(0.1), np.sin(0.1), 0.0]])).round(6)   # PD near the top
    array([[-1.]])
    """
    def policy(obs: np.ndarray) -> np.ndarray:
        cos, sin, w = obs[:, 0], obs[:, 1], obs[:, 2]
        theta = np.arctan2(sin, cos)
        pump = c.pump * (15.0 - (0.5 * w ** 2 + 15.0 * cos)) * np.where(w >= 0, 1.0, -1.0)
        pd = -(c.kp * theta + c.kd * w)
        return np.clip(np.where(cos > c.top, pd, pump), -c.u_max, c.u_max)[:, None]
    return policy


def noisy(sigma: float, rng: np.random.Generator) -> Policy:
    """The swing-up controller plus N(0, sigma^2) action noise, clipped to the torque bound."""
    base = controller(Controller("swing-up"))
    return lambda obs: np.clip(base(obs) + sigma * rng.standard_normal((len(obs), 1)), -U_MAX, U_MAX)


def uniform(rng: np.random.Generator) -> Policy:
    """Uniformly random torques."""
    return lambda obs: rng.uniform(-U_MAX, U_MAX, (len(obs), 1))

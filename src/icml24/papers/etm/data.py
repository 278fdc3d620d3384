"""Offline data for policy evaluation (claim C2): gymnasium's Pendulum-v1, analytic policies, D4RL's
arrays and Minari's dataset format.

* Policies are analytic (no training, nothing cached): :func:`swing_up` pumps energy into the pendulum
  (E = thetadot^2 / 2 + 15 cos theta, upright at rest E = 15; Pendulum-v1's dynamics are
  thetadot' = thetadot + (15 sin theta + 3 u) dt) and balances it with a PD law once cos theta > 0.85.
  The *evaluation policies* (DOPE-style, of graded quality) are that controller with the torque
  limited to ``u_max`` in (0, 2]: a weaker motor swings up later or never (measured discounted returns
  from about -630 at u_max = 0.25 to about -150 at 2). The *behaviour data* mix episodes of the full
  controller with Gaussian action noise of two sizes and of uniformly random actions.
* :func:`collect` runs a policy on a gymnasium vector environment and returns whole episodes;
  :func:`to_d4rl` flattens them to D4RL's arrays (observations, actions, rewards, next_observations,
  terminals, timeouts); :func:`save_minari` / :func:`load_minari` write and read them as a Minari
  dataset (HDF5 backend) in a given folder, never the user's ``~/.minari``.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, NamedTuple

import numpy as np

__all__ = ["ENV_ID", "Episode", "swing_up", "limited", "noisy", "uniform", "collect", "to_d4rl", "save_minari",
           "load_minari", "discounted_returns"]

ENV_ID = "Pendulum-v1"
U_MAX = 2.0  # Pendulum-v1's torque bound
Policy = Callable[[np.ndarray], np.ndarray]    # observations (n, 3) -> actions (n, 1)


class Episode(NamedTuple):
    """One episode: T + 1 observations and T actions, rewards and end flags."""

    observations: np.ndarray   # (T + 1, obs_dim)
    actions: np.ndarray        # (T, act_dim)
    rewards: np.ndarray        # (T,)
    terminations: np.ndarray   # (T,) bool
    truncations: np.ndarray    # (T,) bool


def swing_up(obs: np.ndarray, u_max: float = U_MAX) -> np.ndarray:
    """Energy-pumping swing-up with a PD balance near the top, torque clipped to +-u_max; (n, 3) -> (n, 1).

    >>> swing_up(np.array([[1.0, 0.0, 0.0]]))   # upright at rest: no torque
    array([[-0.]])
    """
    c, s, w = obs[:, 0], obs[:, 1], obs[:, 2]
    theta = np.arctan2(s, c)
    energy = 0.5 * w ** 2 + 15.0 * c
    pump = 0.2 * (15.0 - energy) * np.where(w >= 0, 1.0, -1.0)
    pd = -(10.0 * theta + 2.0 * w)
    return np.clip(np.where(c > 0.85, pd, pump), -u_max, u_max)[:, None]


def limited(u_max: float) -> Policy:
    """The evaluation policy with torque limit ``u_max``."""
    return lambda obs: swing_up(obs, u_max)


def noisy(sigma: float, rng: np.random.Generator) -> Policy:
    """The full controller plus N(0, sigma^2) action noise, clipped to the torque bound."""
    return lambda obs: np.clip(swing_up(obs) + sigma * rng.standard_normal((len(obs), 1)), -U_MAX, U_MAX)


def uniform(rng: np.random.Generator) -> Policy:
    """Uniformly random torques."""
    return lambda obs: rng.uniform(-U_MAX, U_MAX, (len(obs), 1))


def collect(policy: Policy, n_episodes: int, seed: int) -> list[Episode]:
    """``n_episodes`` whole episodes of ``policy`` on Pendulum-v1 (200 steps each, truncated), run in
    parallel; reset seeds ``seed, seed + 1, ...`` (so the same seed gives the same start states)."""
    import gymnasium as gym

    env = gym.make_vec(ENV_ID, num_envs=n_episodes, vectorization_mode="sync")
    obs, _ = env.reset(seed=[seed + i for i in range(n_episodes)])  # type: ignore[arg-type]  # one per env
    o: list[np.ndarray] = [obs]
    a: list[np.ndarray] = []
    r: list[np.ndarray] = []
    te: list[np.ndarray] = []
    tr: list[np.ndarray] = []
    while True:
        act = policy(obs).astype(np.float32)
        obs, rew, term, trunc, _ = env.step(act)
        for buf, v in ((a, act), (r, rew), (te, term), (tr, trunc)):
            buf.append(v)
        if np.any(term | trunc):   # Pendulum never terminates; all truncate together at 200 steps
            assert np.all(trunc), "Pendulum-v1 episodes are expected to end together"
            break
        o.append(obs)
    env.close()
    # the observation after the last step is the final one; gymnasium >= 1.0 vector envs return it
    # from step() and reset on the *next* step (next-step autoreset)
    o.append(obs)
    O, A, R, TE, TR = (np.stack(v, 1) for v in (o, a, r, te, tr))     # (n_episodes, T(+1), ...)
    return [Episode(O[i], A[i], R[i].astype(np.float64), TE[i], TR[i]) for i in range(n_episodes)]


def to_d4rl(episodes: list[Episode]) -> dict[str, np.ndarray]:
    """D4RL's flat arrays of a list of episodes."""
    return {"observations": np.concatenate([e.observations[:-1] for e in episodes]),
            "actions": np.concatenate([e.actions for e in episodes]),
            "rewards": np.concatenate([e.rewards for e in episodes]),
            "next_observations": np.concatenate([e.observations[1:] for e in episodes]),
            "terminals": np.concatenate([e.terminations for e in episodes]),
            "timeouts": np.concatenate([e.truncations for e in episodes])}


def discounted_returns(episodes: list[Episode], gamma: float, horizon: int | None = None) -> np.ndarray:
    """sum_{t < horizon} gamma^t r_t per episode (the whole episode if ``horizon`` is None), (n_episodes,)."""
    out = []
    for e in episodes:
        r = e.rewards[:horizon]
        out.append(float(np.sum(r * gamma ** np.arange(len(r)))))
    return np.array(out)


@contextmanager
def _minari_root(root: Path) -> Iterator[None]:
    """Point Minari at ``root`` for the body (it reads MINARI_DATASETS_PATH), then restore."""
    before = os.environ.get("MINARI_DATASETS_PATH")
    os.environ["MINARI_DATASETS_PATH"] = str(Path(root).resolve())   # relative paths are taken twice
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("MINARI_DATASETS_PATH", None)
        else:
            os.environ["MINARI_DATASETS_PATH"] = before


def save_minari(episodes: list[Episode], root: Path, dataset_id: str, description: str) -> None:
    """Write ``episodes`` as the Minari dataset ``dataset_id`` (HDF5) under ``root``."""
    import gymnasium as gym
    import minari
    from minari.data_collector.episode_buffer import EpisodeBuffer

    env = gym.make(ENV_ID)
    buffers = [EpisodeBuffer(id=i, observations=e.observations.astype(np.float32),
                             actions=e.actions.astype(np.float32), rewards=list(e.rewards),
                             terminations=list(e.terminations), truncations=list(e.truncations), infos={})
               for i, e in enumerate(episodes)]
    with _minari_root(root):
        minari.create_dataset_from_buffers(
            dataset_id, buffers, env=ENV_ID, eval_env=ENV_ID, algorithm_name="analytic swing-up mixture",
            author="icml24", author_email="none", code_permalink="icml24.papers.etm.data", description=description,
            observation_space=env.observation_space, action_space=env.action_space,
            ref_min_score=-1500.0, ref_max_score=0.0, data_format="hdf5")
    env.close()


def load_minari(root: Path, dataset_id: str) -> list[Episode]:
    """Read the Minari dataset ``dataset_id`` under ``root`` back as episodes."""
    import minari

    with _minari_root(root):
        ds = minari.load_dataset(dataset_id)
        return [Episode(np.asarray(e.observations), np.asarray(e.actions), np.asarray(e.rewards, dtype=np.float64),
                        np.asarray(e.terminations), np.asarray(e.truncations)) for e in ds.iterate_episodes()]

"""Offline demonstration and transition data on gymnasium tasks: whole episodes, D4RL's arrays, Minari.

Used by etm (policy evaluation data) and purified_il (expert and noisy demonstrations).

* :func:`swing_up` is an analytic expert for gymnasium's Pendulum-v1: it pumps energy into the
  pendulum (E = thetadot^2 / 2 + 15 cos theta, upright at rest E = 15; Pendulum-v1's dynamics are
  thetadot' = thetadot + (15 sin theta + 3 u) dt) and balances it with a PD law once cos theta > 0.85
  (mean return about -150 per 200-step episode, against about -1200 for uniform torques).
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

__all__ = ["PENDULUM", "U_MAX", "Policy", "Episode", "swing_up", "collect", "to_d4rl", "discounted_returns",
           "save_minari", "load_minari"]

PENDULUM = "Pendulum-v1"
U_MAX = 2.0  # Pendulum-v1's torque bound
Policy = Callable[[np.ndarray], np.ndarray]    # observations (n, obs_dim) -> actions (n, act_dim)


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


def collect(policy: Policy, n_episodes: int, seed: int, env_id: str = PENDULUM) -> list[Episode]:
    """``n_episodes`` whole episodes of ``policy`` on ``env_id``, run in parallel; reset seeds ``seed,
    seed + 1, ...`` (so the same seed gives the same start states).

    For tasks whose episodes end only by the time limit, all together (Pendulum-v1: 200 steps).
    """
    import gymnasium as gym

    env = gym.make_vec(env_id, num_envs=n_episodes, vectorization_mode="sync")
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
        if np.any(term | trunc):   # e.g. Pendulum never terminates; all truncate together at 200 steps
            if not np.all(trunc):
                raise ValueError(f"{env_id}: collect() needs episodes that end together by the time limit")
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


def save_minari(episodes: list[Episode], root: Path, dataset_id: str, description: str, algorithm: str,
                code: str, env_id: str = PENDULUM, ref_scores: tuple[float, float] = (-1500.0, 0.0)) -> None:
    """Write ``episodes`` of ``env_id`` as the Minari dataset ``dataset_id`` (HDF5) under ``root``;
    ``algorithm`` and ``code`` (the module that made them) and ``ref_scores`` (min, max return) go into
    its metadata."""
    import gymnasium as gym
    import minari
    from minari.data_collector.episode_buffer import EpisodeBuffer

    env = gym.make(env_id)
    buffers = [EpisodeBuffer(id=i, observations=e.observations.astype(np.float32),
                             actions=e.actions.astype(np.float32), rewards=list(e.rewards),
                             terminations=list(e.terminations), truncations=list(e.truncations), infos={})
               for i, e in enumerate(episodes)]
    with _minari_root(root):
        minari.create_dataset_from_buffers(
            dataset_id, buffers, env=env_id, eval_env=env_id, algorithm_name=algorithm,
            author="icml24", author_email="none", code_permalink=code, description=description,
            observation_space=env.observation_space, action_space=env.action_space,
            ref_min_score=ref_scores[0], ref_max_score=ref_scores[1], data_format="hdf5")
    env.close()


def load_minari(root: Path, dataset_id: str) -> list[Episode]:
    """Read the Minari dataset ``dataset_id`` under ``root`` back as episodes."""
    import minari

    with _minari_root(root):
        ds = minari.load_dataset(dataset_id)
        return [Episode(np.asarray(e.observations), np.asarray(e.actions), np.asarray(e.rewards, dtype=np.float64),
                        np.asarray(e.terminations), np.asarray(e.truncations)) for e in ds.iterate_episodes()]

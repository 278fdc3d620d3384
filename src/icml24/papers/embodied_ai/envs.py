"""Environments in which each mechanism of the agent is needed, and the loop that plays an episode.

* :func:`tmaze` - the T-maze of active inference (Friston et al. 2015; pymdp's ``SimplifiedTMaze``
  layout): locations centre, cue, left arm, right arm; a hidden context (which arm pays). The cue
  location shows the context; an arm pays (outcome "reward") with probability ``reward_prob`` in the
  context's arm and 1 - ``reward_prob`` in the other, else "loss"; arms are absorbing (entering one
  commits). With ``reward_prob`` < 1 the arms are *ambiguous* (their outcome says little about the
  context), so only an agent that values information visits the cue first; with ``reward_prob`` = 1 an
  arm is as informative as the cue and the epistemic agent goes straight to one (the pilot's trap).
  ``flipped=True`` is the reversal: the paying arm is the other one for the same cue.
* :func:`delayed_tmaze` - the cue at the start, then ``corridor`` cells that all look the same, then the
  junction, where the choice of arm must be made from memory: a memoryless policy is at chance.

A maze is a generative *process* in the same form as the agent's model (:class:`~.agent.GenerativeModel`,
one joint state s = location * n_contexts + context); :func:`play` samples from it.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple, Sequence

import numpy as np

from icml24.core import streams
from icml24.core.errors import UserError
from icml24.papers.embodied_ai.agent import Agent, Episode, GenerativeModel, ReactivePolicy, Step, log_preferences

LOCATION, REWARD, CUE = 0, 1, 2
"""Observation modalities: where the agent is, the arm's outcome (null, reward, loss), the cue (null, left, right)."""
NULL, WIN, LOSS = 0, 1, 2
ENVS = ("tmaze", "tmaze_reversed", "delayed_tmaze")


class Maze(NamedTuple):
    """A maze: its generative process and the layout the metrics read.

    Attributes:
        process: the true A (per modality), B, and D; C holds the log-preferences an agent of this maze uses.
        n_contexts: the number of hidden contexts (2: which arm pays).
        locations: names of the locations (index = location).
        start: the start location; cue: the cue's location (None: the cue is shown at the start).
        arms: the (left, right) arm locations; paying: the paying arm per context.
        steps: moves per episode (an episode has steps + 1 observations).
    """

    process: GenerativeModel
    n_contexts: int
    locations: tuple[str, ...]
    start: int
    cue: int | None
    arms: tuple[int, int]
    paying: tuple[int, int]
    steps: int

    def location(self, s: int) -> int:
        return s // self.n_contexts

    def context(self, s: int) -> int:
        return s % self.n_contexts


def _reward_column(loc: int, ctx: int, arms: tuple[int, int], paying: tuple[int, int], p: float) -> np.ndarray:
    if loc not in arms:
        return np.array([1.0, 0.0, 0.0])
    return np.array([0.0, p, 1.0 - p]) if loc == paying[ctx] else np.array([0.0, 1.0 - p, p])


def _check_prob(name: str, p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise UserError(f"{name}={p:g}: a probability must lie in [0, 1]")


def tmaze(reward_prob: float = 0.8, preferences: Sequence[float] = (0.0, 3.0, -3.0), flipped: bool = False,
          steps: int = 2) -> Maze:
    """The T-maze with ambiguous arms (module docstring). States: 5 locations x 2 contexts = 10.

    Actions u = "go to location u" (0 centre, 1 cue, 2 left, 3 right, 4 done) from the centre or the cue;
    from an arm every action leads to "done", absorbing, where nothing more happens: entering an arm
    yields one outcome and ends the trial (so going straight to an arm cannot collect two outcomes).
    Context c = 0 pays in the left arm, c = 1 in the right (``flipped`` swaps them). ``preferences`` are
    the raw scores of (null, reward, loss); the model's C is their log_softmax.

    >>> m = tmaze()
    >>> m.process.B.shape, [a.shape for a in m.process.A]
    ((5, 10, 10), [(5, 10), (3, 10), (3, 10)])
    """
    _check_prob("reward_prob", reward_prob)
    n_loc, n_ctx, done = 5, 2, 4
    arms, paying = (2, 3), ((3, 2) if flipped else (2, 3))
    S = n_loc * n_ctx
    A_loc, A_rew, A_cue = np.zeros((n_loc, S)), np.zeros((3, S)), np.zeros((3, S))
    B = np.zeros((n_loc, S, S))
    for loc, ctx in itertools.product(range(n_loc), range(n_ctx)):
        s = loc * n_ctx + ctx
        A_loc[loc, s] = 1.0
        A_rew[:, s] = _reward_column(loc, ctx, arms, paying, reward_prob)
        A_cue[1 + ctx if loc == 1 else 0, s] = 1.0
        for u in range(n_loc):
            nxt = done if loc in arms or loc == done else u
            B[u, nxt * n_ctx + ctx, s] = 1.0
    D = np.zeros(S)
    D[[0, 1]] = 0.5
    C = (np.zeros(n_loc) - np.log(n_loc), log_preferences(preferences), log_preferences([0.0, 0.0, 0.0]))
    return Maze(GenerativeModel((A_loc, A_rew, A_cue), B, C, D), n_ctx, ("centre", "cue", "left", "right", "done"),
                start=0, cue=1, arms=arms, paying=paying, steps=steps)


def delayed_tmaze(corridor: int = 4, reward_prob: float = 0.8,
                  preferences: Sequence[float] = (0.0, 3.0, -3.0)) -> Maze:
    """The delayed T-maze: start (where the cue shows), ``corridor`` identical cells, junction, two arms.

    Actions 0 (left) and 1 (right): anywhere before the junction either one moves one cell forward; at the
    junction they enter the left or the right arm, which are absorbing. Observed locations are the cell's
    *kind* (start, corridor, junction, left, right), so the corridor cells look alike. An episode has
    corridor + 2 moves, the last one into an arm.

    >>> m = delayed_tmaze(corridor=2)
    >>> m.locations, m.steps
    (('start', 'corridor 1', 'corridor 2', 'junction', 'left', 'right'), 4)
    """
    _check_prob("reward_prob", reward_prob)
    if corridor < 0:
        raise UserError(f"corridor={corridor}: the corridor length must be >= 0")
    n_loc, n_ctx = corridor + 4, 2
    junction, arms = corridor + 1, (corridor + 2, corridor + 3)
    kinds = [0] + [1] * corridor + [2, 3, 4]
    S = n_loc * n_ctx
    A_loc, A_rew, A_cue = np.zeros((5, S)), np.zeros((3, S)), np.zeros((3, S))
    B = np.zeros((2, S, S))
    for loc, ctx in itertools.product(range(n_loc), range(n_ctx)):
        s = loc * n_ctx + ctx
        A_loc[kinds[loc], s] = 1.0
        A_rew[:, s] = _reward_column(loc, ctx, arms, arms, reward_prob)
        A_cue[1 + ctx if loc == 0 else 0, s] = 1.0
        for u in range(2):
            nxt = loc + 1 if loc < junction else (arms[u] if loc == junction else loc)
            B[u, nxt * n_ctx + ctx, s] = 1.0
    D = np.zeros(S)
    D[[0, 1]] = 0.5
    C = (np.zeros(5) - np.log(5), log_preferences(preferences), log_preferences([0.0, 0.0, 0.0]))
    names = ("start", *(f"corridor {k + 1}" for k in range(corridor)), "junction", "left", "right")
    return Maze(GenerativeModel((A_loc, A_rew, A_cue), B, C, D), n_ctx, names, start=0, cue=None, arms=arms,
                paying=arms, steps=corridor + 2)


KNOWN = 1e3
"""Prior count that stands for a known column of A (its outcome is certain; a one-hot column's novelty weight is 0)."""


def arm_prior(maze: Maze, prior_counts: float = 1.0) -> np.ndarray:
    """(3, S) prior Dirichlet counts of the reward modality: ``prior_counts`` for each outcome in the arms'
    columns (the contingency to be learned: which arm pays in which context) and KNOWN x A elsewhere (the
    null outcome away from the arms is known)."""
    A = maze.process.A[REWARD]
    in_arm = np.isin(np.arange(A.shape[1]) // maze.n_contexts, maze.arms)  # (S,)
    return np.where(in_arm[None, :], prior_counts, KNOWN * A)


def make_env(name: str, **params) -> Maze:
    """A maze by name (:data:`ENVS`): ``tmaze``, ``tmaze_reversed`` (``flipped=True``) or ``delayed_tmaze``."""
    if name == "tmaze":
        return tmaze(**params)
    if name == "tmaze_reversed":
        return tmaze(**params, flipped=True)
    if name == "delayed_tmaze":
        return delayed_tmaze(**params)
    raise UserError(f"unknown environment {name!r}: use one of {', '.join(ENVS)}")


# ----------------------------------------------------------------------------------------------------------
# Playing an episode


class Trace(NamedTuple):
    """One episode as it happened."""

    context: int
    locations: list[int]  # (T+1,) location after each move (index 0: the start)
    rewards: list[int]  # (T+1,) +1 reward, -1 loss, 0 null at each observation
    beliefs: np.ndarray  # (T+1, S) the agent's q(s_t); empty (0, S) for a reactive policy
    F: np.ndarray  # (T+1,) free energy of each perception step; empty for a reactive policy
    episode: Episode | None  # what an agent saw and did (what a learner learns from); None for a reactive policy


def _draw(p: np.ndarray, rng: np.random.Generator) -> int:
    cdf = np.cumsum(p)
    return int(min(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"), len(p) - 1))


def play(maze: Maze, policy: Agent | ReactivePolicy | _RandomMap, seed: int, *names: str | int) -> Trace:
    """Play one episode of ``maze`` with an agent (learning at the end if it has a learner) or a reactive policy.

    Randomness comes from three named streams of ``seed`` under ``names``: the context (so two policies
    played under the same names face the same context), the outcomes, and the policy's action draws.
    """
    ctx_rng, out_rng = streams.rng(seed, *names, "context"), streams.rng(seed, *names, "outcome")
    act_rng = streams.rng(seed, *names, "action")
    proc = maze.process
    ctx = int(ctx_rng.integers(maze.n_contexts))
    s = maze.start * maze.n_contexts + ctx
    if isinstance(policy, Agent):
        policy.reset()
    locations, rewards, beliefs, F = [], [], [], []
    for t in range(maze.steps + 1):
        obs = tuple(_draw(A_m[:, s], out_rng) for A_m in proc.A)
        locations.append(maze.location(s))
        rewards.append({WIN: 1, LOSS: -1}.get(obs[REWARD], 0))
        last = t == maze.steps
        out = policy.step(obs, act_rng, maze.steps - t)
        if isinstance(out, Step):
            beliefs.append(out.qs)
            F.append(out.F)
            u = out.action
        else:
            u = out
        if not last:
            s = _draw(proc.B[u][:, s], out_rng)
    episode = policy.end_episode() if isinstance(policy, Agent) else None
    S = len(proc.D)
    return Trace(ctx, locations, rewards, np.array(beliefs).reshape(-1, S), np.array(F), episode)


def cue_first(maze: Maze, trace: Trace) -> bool:
    """The first place the agent moved to (leaving the start) is the cue: it sampled the cue before committing."""
    moved = [loc for loc in trace.locations[1:] if loc != maze.start]
    return bool(moved) and moved[0] == maze.cue


def success(maze: Maze, trace: Trace, flipped: bool = False) -> bool:
    """The episode ended in the arm that pays in its context (``flipped``: in the reversed maze)."""
    paying = maze.paying[trace.context]
    if flipped:
        paying = maze.arms[1] if paying == maze.arms[0] else maze.arms[0]
    return trace.locations[-1] == paying


def fit_reactive(maze: Maze, episodes: int, seed: int, *names: str | int, max_maps: int = 4096) -> ReactivePolicy:
    """The best memoryless map from observation to action, fitted on ``episodes`` episodes.

    The observations at which an action is taken are collected under a uniformly random map's episodes;
    every deterministic map on them (U^n of them, at most ``max_maps``) is played on the same episodes
    (the same context and outcome streams) and the one with the highest mean return is kept (ties: the
    first in itertools.product order).
    """
    U = maze.process.B.shape[0]
    seen: set[tuple[int, ...]] = set()
    for k in range(episodes):
        rng = streams.rng(seed, *names, "explore", k)
        random_map = _RandomMap(rng, U)
        play(maze, random_map, seed, *names, k)
        seen.update(random_map.seen)
    keys = sorted(seen)
    if U ** len(keys) > max_maps:
        raise ValueError(f"{len(keys)} observations, {U ** len(keys)} maps: more than max_maps={max_maps}")
    best, best_return = ReactivePolicy(()), -float("inf")
    for actions in itertools.product(range(U), repeat=len(keys)):
        candidate = ReactivePolicy(tuple(zip(keys, actions)))
        ret = float(np.mean([sum(play(maze, candidate, seed, *names, k).rewards) for k in range(episodes)]))
        if ret > best_return:
            best, best_return = candidate, ret
    return best


class _RandomMap:
    """A uniformly random action at each decision, recording the observations it acted on (for fitting)."""

    def __init__(self, rng: np.random.Generator, n_actions: int):
        self.rng, self.n_actions = rng, n_actions
        self.seen: set[tuple[int, ...]] = set()

    def step(self, obs: Sequence[int], rng: np.random.Generator | None = None, remaining: int = 1) -> int:
        if remaining > 0:
            self.seen.add(tuple(int(o) for o in obs))
        return int(self.rng.integers(self.n_actions))

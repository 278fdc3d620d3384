"""Agreement with pymdp 1.0.4 (``inferactively-pymdp``, the reference implementation of active inference).

The only module that imports pymdp (the ``aif`` extra); a default run never imports it. Both agents are
given the same model - the T-maze of envs.py, one state factor, three modalities - in the pinned
convention: pymdp 1.x scores utility as q(o)·C with C raw, so it receives our C = log_softmax(c), and
then its negative expected free energy (utility + state information gain, minus its negative parameter
information gain) is -G. Checked along one trial (centre, then the cue, then an arm): the posterior
q(s) (pymdp's ``exact`` one-step inference), the free energy F (its ``vfe``), G and q(pi) at each step,
for the epistemic agent, the reward-only agent (``use_states_info_gain=False``) and the epistemic agent
with novelty over learned counts of the reward modality (``use_param_info_gain=True``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from icml24.papers.embodied_ai.agent import Counts, Planner, infer_states
from icml24.papers.embodied_ai.envs import KNOWN, Maze, arm_prior, tmaze


class Agreement(NamedTuple):
    """Largest absolute differences between this package and pymdp over every checked step and agent."""

    qs: float
    F: float
    G: float
    q_pi: float


TRIAL = (((0, 0, 0), 1), ((1, 0, 1), 2), ((2, 1, 0), None))
"""(observation, action then taken) along a trial of context 0: centre; the cue, showing 'left'; the left arm, paying."""


def reward_counts(maze: Maze) -> Counts:
    """Counts of the reward modality for the novelty check: :func:`~.envs.arm_prior` plus one reward already seen in
    (left arm, context 0)."""
    pA = arm_prior(maze)
    pA[1, 4] += 1.0
    return Counts.prior([None, pA, None])


def compare_tmaze(reward_prob: float = 0.8, preferences=(0.0, 3.0, -3.0), policy_len: int = 2,
                  gamma: float = 16.0) -> Agreement:
    """Run the trial :data:`TRIAL` through both implementations and return the largest differences.

    >>> a = compare_tmaze()                      # doctest: +SKIP
    >>> max(a) < 1e-5                            # doctest: +SKIP
    True
    """
    import equinox as eqx
    import jax.numpy as jnp
    from pymdp.agent import Agent as PymdpAgent

    # compiled once per agent structure (op by op, pymdp's policy inference takes ~0.4 s a call)
    infer_states_ = eqx.filter_jit(lambda agent, o, prior: agent.infer_states(o, empirical_prior=prior, return_info=True))
    infer_policies_ = eqx.filter_jit(lambda agent, qs: agent.infer_policies(qs))

    maze = tmaze(reward_prob, preferences)
    base = maze.process
    counts = reward_counts(maze)
    arms = {"epistemic": (base, Planner(policy_len, gamma), None),
            "reward": (base, Planner(policy_len, gamma, epistemic=False), None),
            "novelty": (counts.model(base), Planner(policy_len, gamma, novelty=True), counts)}
    worst = np.zeros(4)
    for name, (model, planner, cnt) in arms.items():
        ref = PymdpAgent(A=[jnp.asarray(a) for a in model.A], B=[jnp.asarray(np.transpose(model.B, (1, 2, 0)))],
                         C=[jnp.asarray(c) for c in model.C], D=[jnp.asarray(model.D)], policy_len=policy_len,
                         gamma=gamma, inference_algo="exact", use_states_info_gain=name != "reward",
                         use_utility=True, use_param_info_gain=name == "novelty",
                         pA=None if cnt is None else [jnp.asarray(p if p is not None else KNOWN * a)
                                                      for p, a in zip(cnt.pA, model.A)])
        prior, ref_prior = model.D, ref.D
        for obs, action in TRIAL:
            post = infer_states(model.A, obs, prior)
            ref_qs, info = infer_states_(ref, [jnp.asarray([o]) for o in obs], ref_prior)
            plan = planner.plan(model, post.qs, cnt)
            q_pi, neg_efe = infer_policies_(ref, ref_qs)
            diffs = (np.abs(np.asarray(ref_qs[0][0, -1]) - post.qs).max(), abs(float(info["vfe"][0]) - post.F),
                     np.abs(-np.asarray(neg_efe[0]) - plan.efe.G).max(), np.abs(np.asarray(q_pi[0]) - plan.q_pi).max())
            worst = np.maximum(worst, diffs)
            if action is not None:  # the next prior: B[u] q(s), in both
                prior = model.B[action] @ post.qs
                ref_prior = ref.update_empirical_prior(jnp.asarray([[action]]), ref_qs)
    return Agreement(*(float(w) for w in worst))

"""Experiment of embodied_ai: ``run(config, seed)`` and the figures.

Per seed, three experiments, each in the maze where its mechanism is needed (envs.py); "the agent" is
built from ``config.agent`` and ``config.memory`` (the epistemic agent with belief memory by default),
the baselines are fixed:

1. **C1, action** (T-maze, ambiguous arms, the model known): the agent and the reward-only agent
   (G = -utility, belief memory) play ``c1_episodes`` trials each, facing the same contexts; the rate at
   which each visits the cue before an arm (cue-first), plus where they are at each step.
2. **C2, learning** (reversal T-maze): the agent, knowing everything but the contingency (which arm pays
   in which context: the arms' columns of A's reward modality start at ``prior_counts`` per outcome),
   learns it online by Dirichlet updates with forgetting and novelty over ``pre_episodes`` trials; then the
   paying arm flips for ``post_episodes`` trials. The static learner is trained offline on the agent's
   logged pre-change trials (the same updates, no forgetting), frozen, and plays the post-change trials
   (the same contexts). Per-trial free energy (sum of F over the trial's steps) and return (+1 reward,
   -1 loss).
3. **C3, memory** (delayed T-maze): the agent, the best memoryless reactive map fitted on
   ``fit_episodes`` trials of its own streams, and the agent with memory "none" (a diagnostic) play
   ``c3_episodes`` trials each; success = ending in the context's paying arm; the belief in the true
   context along the corridor.

With ``reference=true``, the agreement with pymdp (reference.py) is added as ``ref_max_abs_*`` metrics.
"""

from __future__ import annotations

import numpy as np

from icml24.core.context import RunContext
from icml24.core.plots import band
from icml24.core.results import RunResult, SeedResult, StageOut
from icml24.papers.embodied_ai.agent import Counts, DirichletLearner, make_agent, normalise
from icml24.papers.embodied_ai.config import FULL, QUICK, SEEDS, SMOKE, Config, validate
from icml24.papers.embodied_ai.envs import (
    REWARD,
    WIN,
    Maze,
    Trace,
    arm_prior,
    cue_first,
    delayed_tmaze,
    fit_reactive,
    play,
    success,
    tmaze,
)

__all__ = ["Config", "SMOKE", "QUICK", "FULL", "SEEDS", "validate", "run", "figures", "c1_stage", "c2_stage",
           "c3_stage"]


def _agent(config: Config, maze: Maze, **kw):
    return make_agent(kw.pop("name", config.agent), maze.process, policy_len=config.policy_len, gamma=config.gamma,
                      memory=kw.pop("memory", config.memory), **kw)


def _occupancy(traces: list[Trace], places: tuple[int, ...]) -> list[float]:
    """(T+1,) share of trials whose location at each step is one of ``places``."""
    return np.mean([np.isin(t.locations, places) for t in traces], axis=0).tolist()


def c1_stage(config: Config, seed: int) -> StageOut:
    """C1: cue-first rate of the agent and of the reward-only agent in the T-maze (module docstring, 1)."""
    maze = tmaze(config.reward_prob, config.preferences)
    metrics: dict[str, float] = {}
    curves: dict[str, list[float]] = {"c1_step": [float(t) for t in range(maze.steps + 1)]}
    for tag, agent in (("agent", _agent(config, maze)), ("reward_only", _agent(config, maze, name="reward",
                                                                              memory="belief"))):
        traces = [play(maze, agent, seed, "c1", k) for k in range(config.c1_episodes)]
        metrics[f"c1_cue_first_{tag}"] = float(np.mean([cue_first(maze, t) for t in traces]))
        metrics[f"c1_success_{tag}"] = float(np.mean([success(maze, t) for t in traces]))
        metrics[f"c1_return_{tag}"] = float(np.mean([sum(t.rewards) for t in traces]))
        curves[f"c1_at_cue_{tag}"] = _occupancy(traces, (maze.locations.index("cue"),))
        curves[f"c1_committed_{tag}"] = _occupancy(traces, (*maze.arms, maze.locations.index("done")))
    return StageOut(metrics, curves)


def c2_stage(config: Config, seed: int) -> StageOut:
    """C2: free energy over trials and return after the reversal, online against static (module docstring, 2)."""
    before = tmaze(config.reversal_reward_prob, config.preferences)
    after = tmaze(config.reversal_reward_prob, config.preferences, flipped=True)
    prior = Counts.prior([None, arm_prior(before, config.prior_counts), None])
    online = _agent(config, before, counts=prior, novelty=config.novelty,
                    learner=DirichletLearner((REWARD,), forgetting=config.forgetting))
    n = config.pre_episodes + config.post_episodes
    F, ret, logged = np.zeros(n), np.zeros(n), []
    learned = np.nan
    for k in range(n):
        trace = play(before if k < config.pre_episodes else after, online, seed, "c2", k)
        F[k], ret[k] = trace.F.sum(), sum(trace.rewards)  # F of each perception step, summed over the trial
        if k < config.pre_episodes and trace.episode is not None:  # an Agent's trace always has its episode
            logged.append(trace.episode)
        if k == config.pre_episodes - 1:  # E[p(reward | paying arm, context)] the agent holds at the change
            A = normalise(online.memory.counts.pA[REWARD])
            learned = float(np.mean([A[WIN, arm * before.n_contexts + c] for c, arm in enumerate(before.paying)]))
    trained = DirichletLearner((REWARD,)).fit(before.process, prior, logged)
    static = _agent(config, before, counts=trained)
    ret_static = np.array([sum(play(after, static, seed, "c2", k).rewards) for k in range(config.pre_episodes, n)])
    q_pre, q_post = config.pre_episodes // 4, config.post_episodes // 4
    pre = slice(0, config.pre_episodes)
    metrics = {
        "c2_F_first_quarter": float(F[:q_pre].mean()),
        "c2_F_last_quarter": float(F[pre][-q_pre:].mean()),
        "c2_return_online": float(ret[-q_post:].mean()),
        "c2_return_static": float(ret_static[-q_post:].mean()),
        "c2_return_pre_online": float(ret[pre][-q_pre:].mean()),
        "c2_learned_p_reward": learned,
    }
    curves = {"c2_trial": [float(k) for k in range(n)], "c2_F": F.tolist(), "c2_return_online_trace": ret.tolist(),
              "c2_post_trial": [float(k) for k in range(config.pre_episodes, n)],
              "c2_return_static_trace": ret_static.tolist()}
    return StageOut(metrics, curves)


def c3_stage(config: Config, seed: int) -> StageOut:
    """C3: success of the agent, the memoryless map and the memory-less agent in the delayed T-maze (docstring, 3)."""
    maze = delayed_tmaze(config.corridor, config.reward_prob, config.preferences)
    policies = {"belief": _agent(config, maze), "memoryless": fit_reactive(maze, config.fit_episodes, seed, "c3-fit"),
                "no_memory_agent": _agent(config, maze, memory="none")}
    metrics: dict[str, float] = {}
    curves: dict[str, list[float]] = {"c3_step": [float(t) for t in range(maze.steps + 1)]}
    for tag, policy in policies.items():
        traces = [play(maze, policy, seed, "c3", k) for k in range(config.c3_episodes)]
        metrics[f"c3_success_{tag}"] = float(np.mean([success(maze, t) for t in traces]))
        if tag != "memoryless":  # q(true context) at each step: the belief the agent carries down the corridor
            curves[f"c3_belief_{tag}"] = np.mean(
                [t.beliefs.reshape(len(t.beliefs), -1, maze.n_contexts).sum(axis=1)[:, t.context] for t in traces],
                axis=0).tolist()
    return StageOut(metrics, curves)


def run(config: Config, seed: int, ctx: RunContext | None = None) -> SeedResult:
    """One seed: the three experiments (and the pymdp agreement with ``reference``). Numpy only and fast, so
    ``ctx``, the frame's run context, is accepted for the contract and not needed."""
    result = SeedResult.from_stages(seed, (stage(config, seed) for stage in (c1_stage, c2_stage, c3_stage)))
    if config.reference:
        from icml24.papers.embodied_ai.reference import compare_tmaze

        agreement = compare_tmaze(config.reward_prob, config.preferences, config.policy_len, config.gamma)
        result.metrics.update({f"ref_max_abs_{k}": v for k, v in agreement._asdict().items()})
    return result


def _smooth(y: np.ndarray, width: int) -> np.ndarray:
    """Moving average of each row over ``width`` trials (valid part), (S, P - width + 1)."""
    kernel = np.ones(width) / width
    return np.stack([np.convolve(row, kernel, mode="valid") for row in np.atleast_2d(y)])


def figures(result: RunResult) -> dict:
    """Cue visits by step (C1), free energy and return over trials (C2), belief along the corridor (C3)."""
    import matplotlib.pyplot as plt

    out = {}
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.2), sharey=True)
    step = result.curve("c1_step")[0]
    for ax, what in zip(axes, ("at_cue", "committed")):
        for tag, label in (("agent", "epistemic agent"), ("reward_only", "reward-only agent")):
            band(ax, step, result.curve(f"c1_{what}_{tag}"), label=label, marker="o")
        ax.set_xlabel("step of the trial")
        ax.set_title("at the cue" if what == "at_cue" else "committed: in an arm or done", fontsize=9)
    axes[0].set_ylabel("share of trials")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    out["c1_cue_visits"] = fig

    trial, post = result.curve("c2_trial")[0], result.curve("c2_post_trial")[0]
    width = max(1, min(10, len(post) // 4))
    change = post[0]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.2))
    band(axes[0], trial[width - 1:], _smooth(result.curve("c2_F"), width), label="online learner")
    axes[0].set_ylabel(f"free energy per trial (nats, {width}-trial mean)")
    band(axes[1], trial[width - 1:], _smooth(result.curve("c2_return_online_trace"), width), label="online learner")
    band(axes[1], post[width - 1:], _smooth(result.curve("c2_return_static_trace"), width), label="static learner")
    axes[1].set_ylabel(f"return per trial ({width}-trial mean)")
    for ax in axes:
        ax.axvline(change, color="k", ls="--", lw=1)
        ax.set_xlabel("trial (dashed: the reversal)")
        ax.legend(fontsize=8)
    fig.tight_layout()
    out["c2_free_energy_and_return"] = fig

    fig, ax = plt.subplots(figsize=(5, 3.4))
    step = result.curve("c3_step")[0]
    band(ax, step, result.curve("c3_belief_belief"), label="belief memory", marker="o")
    band(ax, step, result.curve("c3_belief_no_memory_agent"), label="no memory (flat prior)", marker="s")
    ax.set_xlabel("step (0: cue; last: in an arm)")
    ax.set_ylabel("q(true context)")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=8)
    fig.tight_layout()
    out["c3_belief_trace"] = fig
    return out

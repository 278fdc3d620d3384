"""Config, presets and seeds of embodied_ai: importable without torch (icml24 show)."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from icml24.core.config import knob
from icml24.core.deps import install_hint
from icml24.core.errors import UserError
from icml24.papers.embodied_ai.agent import AGENTS, MEMORIES
from icml24.papers.embodied_ai.card import CARD


@dataclass(frozen=True)
class Config:
    """The active-inference agent in three mazes: the T-maze (C1), the reversal T-maze (C2), the delayed
    T-maze (C3). The agent the claims test is built from ``agent`` and ``memory``; the baselines are fixed."""

    agent: str = knob("epistemic", "action module of the agent the claims test: 'epistemic' (G = risk + ambiguity) "
                                   "or 'reward' (G = -utility; as the tested agent, a null control)", choices=AGENTS)
    memory: str = knob("belief", "memory module of that agent: 'belief' (the prior of each step is B[u] q(s)) or "
                                 "'none' (a flat prior at every step; a null control of C3: C1's choice at the "
                                 "cue reads the cue itself)", choices=MEMORIES)
    policy_len: int = knob(2, "planning horizon L: policies of L moves (cut at the trial's end)", ge=1, le=8)
    gamma: float = knob(16.0, "policy precision gamma of q(pi) = softmax(-gamma G) (pymdp's default)", gt=0, le=1e3)
    preferences: tuple[float, ...] = knob((0.0, 3.0, -3.0), "raw preference scores c of the outcomes (null, reward, "
                                                            "loss); the model's C is log_softmax(c)", ge=-50, le=50)
    reward_prob: float = knob(0.8, "C1, C3: probability that the context's arm pays (the other arm pays with "
                                   "1 - p); below 1 the arms are ambiguous", ge=0, le=1)
    c1_episodes: int = knob(64, "C1: T-maze trials per agent per seed", ge=1, le=100_000)
    reversal_reward_prob: float = knob(0.95, "C2: probability that the paying arm pays in the reversal T-maze",
                                       ge=0, le=1)
    pre_episodes: int = knob(100, "C2: trials before the reversal (its quarters are C2a's first and last)",
                             ge=4, le=100_000)
    post_episodes: int = knob(100, "C2: trials after the reversal (its last quarter is C2b's)", ge=4, le=100_000)
    forgetting: float = knob(0.05, "C2: forgetting rate omega of the online learner's counts per trial (set by "
                                   "the pilot on seeds 100+)", ge=0, lt=1)
    prior_counts: float = knob(1.0, "C2: Dirichlet prior count of each outcome in the arms' columns of A (the "
                                    "contingency the learners learn)", gt=0, le=1e3)
    novelty: bool = knob(True, "C2: the online learner's G includes the novelty (parameter information gain) of "
                               "its counts")
    corridor: int = knob(4, "C3: identical corridor cells between the cue and the junction", ge=0, le=50)
    c3_episodes: int = knob(64, "C3: delayed T-maze trials per policy per seed", ge=1, le=100_000)
    fit_episodes: int = knob(32, "C3: trials on which the memoryless map is fitted (its own streams)", ge=1,
                             le=100_000)
    reference: bool = knob(False, "also compare q(s), F, G and q(pi) with pymdp on the T-maze (needs the aif "
                                  "extra); adds the ref_max_abs_* metrics")


SMOKE = Config(c1_episodes=4, pre_episodes=8, post_episodes=8, corridor=1, c3_episodes=4, fit_episodes=2)
QUICK = Config()
FULL = Config(c1_episodes=256, post_episodes=200, corridor=12, c3_episodes=256, fit_episodes=128)
SEEDS = {"smoke": (0,), "quick": tuple(range(48)), "full": tuple(range(96))}  # 48: C2a power 0.45 at 16 (pilot)


def validate(config: Config) -> None:
    """Rules across fields, and the reference's extra (called by the CLI before anything runs)."""
    if len(config.preferences) != 3:
        raise UserError(f"preferences={','.join(map(str, config.preferences))}: need three scores, for the "
                        "outcomes null, reward and loss")
    if config.reference and importlib.util.find_spec("pymdp") is None:
        raise UserError(f"reference=true needs pymdp (inferactively-pymdp 1.0.4), which is not installed: "
                        f"{install_hint(CARD)}")

"""Claims for Paolo et al. (ICML 2024), measured on the experiment of experiment.py.

A position paper: it reports no experiment and prints no number. Its framework says perception and
learning minimise variational free energy and action minimises expected free energy (its framework; the
section numbers were not retrieved here); what a
library can check is that an agent built that way shows the textbook mechanisms in tasks that need them,
not the paper's thesis (that embodied AI is the path to AGI). So every claim is a paraphrase of the
framework's words with the smallest effect that would support them (``minimal=True``), and the bands come
from the issue (C1: CI lower bound > 0.5; C2: > 0; C3: > 0.25), fixed after a pilot on seeds 100-115,
never on the claim seeds (SEEDS in config.py).
"""

from __future__ import annotations

from icml24.core.claims import NONNEG, PROB, Band, Claim, Effect, Null

_NO_NUMBERS = "position paper, no experiment and no number"
_RETURN = (-1.0, 1.0)  # one outcome per trial: +1 reward, -1 loss, 0 none

CLAIMS = (
    Claim("C1", "Action gathers information: the agent acts to gather information as well as to change the world "
          "[paraphrase of the framework's action component]; under active inference the epistemic agent samples the cue before "
          "committing to an arm, and a reward-only agent does not.", "Abstract; the framework (action)", "order",
          metric="c1_cue_first_agent", against="c1_cue_first_reward_only",
          statistic="per seed, the share of T-maze trials in which the epistemic agent visits the cue before an "
                    "arm, minus the reward-only agent's (the same contexts; arms pay 0.8 / 0.2); CI lower bound > 0.5",
          bands={"quick": Band(lo=0.5), "full": Band(lo=0.5)},
          effect=Effect(0.65, f"the framework: action changes the world and gathers information; {_NO_NUMBERS}",
                        minimal=True,
                        why="cue first in 9 trials of 10 against the 0.24 of an agent indifferent among its 5 moves "
                            "(1/5 + 1/25): the least that 'samples the cue, the reward-only agent does not' can mean"),
          ranges={"c1_cue_first_agent": PROB, "c1_cue_first_reward_only": PROB}),
    Claim("C2a", "Learning minimises free energy: online learning lowers the agent's variational free energy over "
          "episodes [paraphrase of the framework's learning component and its alignment with active inference].",
          "Abstract; the framework (learning, active inference)", "order",
          metric="c2_F_first_quarter", against="c2_F_last_quarter",
          statistic="per seed, the online learner's mean free energy per trial (sum of F over the trial's steps) over "
                    "the first quarter of the pre-reversal trials minus that over their last quarter; CI > 0",
          bands={"quick": Band(lo=0.0), "full": Band(lo=0.0)},
          effect=Effect(0.1, f"the framework: learning minimises free energy; {_NO_NUMBERS}", minimal=True,
                        method="c2_F_last_quarter",
                        why="a tenth of a nat per trial, about a ninth of the gap between a flat outcome model at an "
                            "arm (ln 3 = 1.10) and the true one's entropy (H(0.95) = 0.20)"),
          ranges={"c2_F_first_quarter": NONNEG, "c2_F_last_quarter": NONNEG}),
    Claim("C2b", "Learning is continual: an agent that keeps learning recovers after the world changes, while a "
          "learner trained offline and then frozen does not [paraphrase of the framework's continual, interactive "
          "learning and of the abstract's contrast with 'the classical paradigm of static learning'].",
          "Abstract; the framework (learning); the challenges (a new learning theory)", "order",
          metric="c2_return_online", against="c2_return_static",
          statistic="per seed, the mean return per trial over the last quarter of the post-reversal trials of the "
                    "online learner (forgetting rate from the pilot) minus that of the static learner (trained on "
                    "the online learner's logged pre-reversal trials, then frozen); CI > 0",
          bands={"quick": Band(lo=0.0), "full": Band(lo=0.0)},
          effect=Effect(0.9, f"the framework: continual learning; {_NO_NUMBERS}", minimal=True,
                        why="an online learner that only stops entering the arm that no longer pays (return 0) "
                            "against a static one that keeps entering it (1 - 2p = -0.9 at p = 0.95)"),
          ranges={"c2_return_online": _RETURN, "c2_return_static": _RETURN}),
    Claim("C3", "Memory matters: the agent's belief state (short-term memory) carries what it perceived to where it "
          "must act [paraphrase of the framework's memory component].", "Abstract; the framework (memory)", "order",
          metric="c3_success_belief", against="c3_success_memoryless",
          statistic="per seed, the share of delayed T-maze trials (cue, corridor of identical cells, junction) that "
                    "end in the paying arm for the belief agent minus that of the best memoryless observation -> "
                    "action map (fitted); CI lower bound > 0.25",
          bands={"quick": Band(lo=0.25), "full": Band(lo=0.25)},
          effect=Effect(0.4, f"the framework: memory; {_NO_NUMBERS}", minimal=True,
                        why="right in 9 trials of 10 against the 1/2 of any memoryless map, for which the junction "
                            "looks the same in both contexts"),
          ranges={"c3_success_belief": PROB, "c3_success_memoryless": PROB}),
)

# Every claim is an order claim: its null (the agent and its baseline swapped) is built by tests/test_falsifiability.py.
NULLS: dict[str, Null] = {}

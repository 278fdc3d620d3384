"""Card of Agnihotri, Jain & Luo, ICML 2024 (no heavy imports here: ``icml24 list`` reads it)."""

from icml24.core.card import PaperCard

CARD = PaperCard(
    slug="acpo",
    number=17,
    title="ACPO: A Policy Optimization Algorithm for Average MDPs with Constraints",
    authors=("Akhil Agnihotri", "Rahul Jain", "Haipeng Luo"),
    arxiv="2302.00808",
    official_code=None,
    tags=("reinforcement learning", "constrained MDP", "average reward", "trust region"),
    summary="A trust-region policy optimizer for the average-reward, average-cost constrained MDP (average "
            "bias advantages, CPO-style dual, recovery step); checked against discounted CPO, PCPO and "
            "PPO-Lagrangian on tabular ACMDPs solved exactly by linear programming and on a continuing "
            "point-on-a-circle task.",
    extra="rl",
    imports=("gymnasium",),
)

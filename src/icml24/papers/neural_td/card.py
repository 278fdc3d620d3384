"""Card of Ke, Wen & Zhang, ICML 2024 (no heavy imports here: ``icml24 list`` reads it)."""

from icml24.core.card import PaperCard

CARD = PaperCard(
    slug="neural_td",
    number=15,
    title="An Improved Finite-time Analysis of Temporal Difference Learning with Deep Neural Networks",
    authors=("Zhifa Ke", "Zaiwen Wen", "Junyu Zhang"),
    arxiv="2405.04017",
    official_code=None,
    tags=("reinforcement learning", "temporal difference", "neural tangent kernel", "theory"),
    summary="Projected neural TD with an L-layer network reaches an O~(1/eps) sample complexity under "
            "Markovian sampling (earlier analyses: O~(1/eps^2)); checked as a -1 log-log error slope, "
            "a width-dependent floor and equal Markovian / i.i.d. rates on an exactly solvable MDP.",
)

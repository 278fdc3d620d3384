"""Card of the select-rank bandit paper (no heavy imports here: ``icml24 list`` reads it)."""

from icml24.core.card import PaperCard

CARD = PaperCard(
    slug="ranking_bandit",
    number=2,
    title="Adaptively Learning to Select-Rank in Online Platforms",
    authors=("Jingyuan Wang", "Perry Dong", "Ying Jin", "Ruohan Zhan", "Zhengyuan Zhou"),
    arxiv="2406.05017",
    official_code=None,
    tags=("bandits", "learning to rank", "generalized linear models", "bipartite matching"),
    summary="UCR ranks K of N items for heterogeneous users with per-(item, position) GLM upper "
            "confidence bounds and maximum-weight matching; regret O(d sqrt(NKT)), beating greedy MLE.",
)

"""Card of Uehara, Zhao, Black et al., ICML 2024 (no heavy imports here: ``icml24 list`` reads it)."""

from icml24.core.card import PaperCard

CARD = PaperCard(
    slug="seiko",
    number=12,
    title="Feedback Efficient Online Fine-Tuning of Diffusion Models",
    authors=("Masatoshi Uehara", "Yulai Zhao", "Kevin Black", "Ehsan Hajiramezanali", "Gabriele Scalia",
             "Nathaniel Lee Diamant", "Alex M. Tseng", "Sergey Levine", "Tommaso Biancalani"),
    arxiv="2402.16359",
    official_code="https://github.com/zhaoyl18/SEIKO",
    tags=("diffusion models", "fine-tuning", "online learning", "optimism", "bandits", "KL regularisation"),
    summary="SEIKO alternates noisy reward queries on the current model's samples, a surrogate reward with an "
            "optimism bonus (UCB or bootstrap), and KL-regularised fine-tuning by reward backprop through the "
            "sampler; checked against greedy, non-adaptive and no-KL fine-tuning of a DDPM on a circle in R^8 "
            "whose optimum is scarce in the data and whose reward keeps rising off it.",
)

"""Card of Adila, Zhang, Han & Wang, ICML 2024 (no heavy imports here: ``icml24 list`` reads it)."""

from icml24.core.card import PaperCard

CARD = PaperCard(
    slug="steerfair",
    number=7,
    title="Discovering Bias in Latent Space: An Unsupervised Debiasing Approach",
    authors=("Dyah Adila", "Shuai Zhang", "Boran Han", "Yuyang Wang"),
    arxiv="2406.03631",
    official_code="https://github.com/amazon-science/steerfair",
    tags=("debiasing", "activation steering", "attention heads", "language models", "multiple choice"),
    summary="SteerFair finds option-order bias directions in attention-head outputs from unlabelled demonstrations "
            "of simple rules (PCA per rule, QR combination, top-k heads) and steers them away at inference; checked "
            "against no intervention, a random direction and an ITI-style supervised direction on a small Llama "
            "trained with a planted 'gold is A' association, and on SmolLM2-135M-Instruct.",
    extra="llm",
    imports=("transformers", "accelerate", "gguf", "sklearn"),
)

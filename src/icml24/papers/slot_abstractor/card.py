"""Card of Mondal, Cohen, Webb, ICML 2024 (no heavy imports here: ``icml24 list`` reads it)."""

from icml24.core.card import PaperCard

CARD = PaperCard(
    slug="slot_abstractor",
    number=10,
    title="Slot Abstractors: Toward Scalable Abstract Visual Reasoning",
    authors=("Shanka Subhra Mondal", "Jonathan D. Cohen", "Taylor W. Webb"),
    arxiv="2403.03458",
    official_code="https://github.com/Shanka123/Slot-Abstractor",
    tags=("abstract reasoning", "object-centric learning", "slot attention", "relational bottleneck",
          "out-of-distribution generalisation"),
    summary="Frozen slot-attention slots split into feature and position embeddings feed an Abstractor whose "
            "relational cross-attention sees features only through their inner products; on the ART tasks with "
            "95 of 100 shapes unseen in training it is checked against a Transformer and against standard "
            "cross-attention on the same slots.",
)

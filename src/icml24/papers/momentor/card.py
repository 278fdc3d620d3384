"""Card of Qian, Li, Wu et al., ICML 2024 (no heavy imports here: ``icml24 list`` reads it)."""

from icml24.core.card import PaperCard

CARD = PaperCard(
    slug="momentor",
    number=4,
    title="Momentor: Advancing Video Large Language Model with Fine-Grained Temporal Reasoning",
    authors=("Long Qian", "Juncheng Li", "Yu Wu", "Yaobo Ye", "Hao Fei", "Tat-Seng Chua", "Yueting Zhuang",
             "Siliang Tang"),
    arxiv="2402.11435",
    official_code="https://github.com/DCDmllm/Momentor",
    tags=("video language models", "temporal grounding", "temporal tokens", "multimodal"),
    summary="The Temporal Perception Module: continuous temporal tokens by linear interpolation of a token table, "
            "soft two-token targets, temporal-token frame encodings and Neighbouring Token Propagation, in a small "
            "decoder LM over synthetic frame features with sub-frame event boundaries; checked against number text, "
            "nearest-bin hard tokens and the module without propagation.",
)

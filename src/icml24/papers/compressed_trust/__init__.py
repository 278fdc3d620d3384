"""Decoding Compressed Trust (Hong et al., ICML 2024): round-to-nearest, GPTQ, AWQ, magnitude, Wanda and
SparseGPT as layer-wise operators on ``nn.Linear`` weights, applied to SmolLM2-135M-Instruct, and a
likelihood-scored trust harness of eight DecodingTrust-style dimensions, each a contrast that cancels the
model's answer habits.
"""

from icml24.core.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "compress": ["CalibStats", "stats", "output_error", "relative_error", "grid", "quantize", "rtn", "gptq", "awq",
                 "magnitude", "wanda", "sparsegpt"],
    "layers": ["Method", "decoder_linears", "calibration_stats", "compress_weight", "compress_model", "input_owner"],
    "trust": ["DIMENSIONS", "CLAIM_DIMENSIONS", "Snippet", "snippets", "Contrast", "Paired", "Counterfactual",
              "ProbeSet", "probes", "typo", "archaic", "prefix_hidden", "first_choice", "continuation_means", "auc",
              "perplexity", "Scores", "evaluate"],
    "config": ["Config", "SMOKE", "QUICK", "FULL", "METHODS"],
    "experiment": ["run", "figures", "method", "seed_stage", "layer_errors"],
    "claims": ["CLAIMS"],
})

"""Momentor (Qian, Li, Wu et al., ICML 2024): the Temporal Perception Module (interpolated temporal tokens, soft
two-token targets, temporal-token frame encoding, Neighbouring Token Propagation) in a small decoder LM, a
synthetic data engine with sub-frame event boundaries, and the number-text and nearest-bin baselines.
"""

from icml24.core.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "tpm": ["TemporalPerception", "Tables", "Interpolation", "positions", "interpolation", "nearest", "interpolate",
            "soft_target", "hard_target", "propagation_matrix", "NeighbourPropagation", "propagate",
            "local_expectation", "neighbour_cosine"],
    "data": ["Engine", "Videos", "Queries", "Answers", "Layouts", "RealData", "Localisation", "prototypes",
             "layouts", "overlaps", "render", "durations", "queries", "answers", "heldout_tokens", "touches", "near",
             "iou", "localisation", "quantization_ceiling", "seconds_text", "parse_seconds", "real_data",
             "check_feature_dir"],
    "model": ["Vocab", "Encoded", "DecoderLM", "sequence", "encode", "encode_queries", "query_prompts", "loss", "fit", "generate",
              "read_span"],
    "config": ["Config", "SMOKE", "QUICK", "FULL"],
    "experiment": ["run", "figures", "splits", "heldout_split", "make_model", "score", "train_and_score"],
    "claims": ["CLAIMS"],
})

"""Jelassi et al. (ICML 2024): transformers vs generalized state space models at copying.

Theory (no training): :mod:`theory` (the hand-built 2-layer n-gram-hashing transformer and
fixed-state GSSMs with both bounds). Models: :mod:`model` (transformer with RoPE / NoPE / ALiBi /
Hard-ALiBi, pure-PyTorch Mamba with a fast and a naive scan, LSTM). Tasks, training and metrics:
:mod:`tasks`.
"""

from icml24.core.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "theory": ["copy_error_upper_bound", "gssm_error_lower_bound", "ngram_hash", "construction_logits",
               "construction_copy_correct", "construction_generate", "construction_copy_error",
               "has_repeated_ngram", "PrefixStoreGSSM", "random_gssm_success"],
    "model": ["Transformer", "Mamba", "MambaMixer", "LSTMLM", "selective_scan", "selective_scan_naive",
              "hard_alibi_mask", "attention_bias", "rotary"],
    "tasks": ["make_example", "packed_batch", "eval_batch", "masked_lm_loss", "teacher_forced_accuracy",
              "greedy_string_accuracy", "train", "TrainSpec", "examples_to_reach", "Reached"],
    "config": ["Config", "SMOKE", "QUICK", "FULL"],
    "experiment": ["run", "figures"],
    "claims": ["CLAIMS"],
})

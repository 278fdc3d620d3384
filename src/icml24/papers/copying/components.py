"""Public components of the copying paper, gathered from :mod:`theory`, :mod:`model` and :mod:`tasks`.

* Theory (Section 2, no training): :func:`ngram_hash`, :func:`construction_logits`,
  :func:`construction_copy_correct`, :func:`construction_generate`, :func:`copy_error_upper_bound`
  (Thm 2.3), :class:`PrefixStoreGSSM`, :func:`random_gssm_success`, :func:`gssm_error_lower_bound` (Thm 2.7).
* Models (Section 4): :class:`Transformer` (RoPE / NoPE / ALiBi / Hard-ALiBi), :class:`Mamba` with
  :func:`selective_scan` (fused, hand-written backward) and :func:`selective_scan_naive` (loop), :class:`LSTMLM`.
* Tasks and metrics: :func:`make_example`, :func:`packed_batch`, :func:`eval_batch`,
  :func:`masked_lm_loss`, :func:`teacher_forced_accuracy`, :func:`greedy_string_accuracy`, :func:`train`.
"""

from icml24.papers.copying.model import (
    LSTMLM,
    Mamba,
    Transformer,
    alibi_slopes,
    attention_bias,
    hard_alibi_mask,
    selective_scan,
    selective_scan_naive,
)
from icml24.papers.copying.tasks import (
    eval_batch,
    examples_to_reach,
    greedy_string_accuracy,
    make_example,
    masked_lm_loss,
    packed_batch,
    teacher_forced_accuracy,
    train,
)
from icml24.papers.copying.theory import (
    PrefixStoreGSSM,
    construction_copy_correct,
    construction_generate,
    construction_logits,
    copy_error_upper_bound,
    gssm_error_lower_bound,
    ngram_hash,
    random_gssm_success,
)

__all__ = [
    "LSTMLM",
    "Mamba",
    "Transformer",
    "alibi_slopes",
    "attention_bias",
    "hard_alibi_mask",
    "selective_scan",
    "selective_scan_naive",
    "eval_batch",
    "examples_to_reach",
    "greedy_string_accuracy",
    "make_example",
    "masked_lm_loss",
    "packed_batch",
    "teacher_forced_accuracy",
    "train",
    "PrefixStoreGSSM",
    "construction_copy_correct",
    "construction_generate",
    "construction_logits",
    "copy_error_upper_bound",
    "gssm_error_lower_bound",
    "ngram_hash",
    "random_gssm_success",
]

"""SteerFair (Adila et al., ICML 2024): unsupervised bias directions in attention-head outputs and
inference-time steering away from them, with an ITI-style supervised baseline and a random control, on a
small Llama trained on a generated multiple-choice task and on SmolLM2-135M-Instruct.
"""

from icml24.core.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "task": ["Vocab", "Questions", "category_map", "zipf_weights", "sample", "rotate", "gold_at", "prompts", "answers",
             "training_sequences", "demonstrations"],
    "steer": ["Directions", "RulePCA", "unit_columns", "pca", "rule_pca", "combine_qr", "steerfair", "top_k",
              "probe_accuracy", "iti", "random_directions"],
    "model": ["TrainLog", "train", "choose"],
    "questions": ["WORDS", "TwoOption", "question_text", "prompt_ids", "letter_ids"],
    "config": ["Config", "SMOKE", "QUICK", "FULL"],
    "experiment": ["run", "figures", "small_stage", "llm_stage", "load_llm", "METHODS", "LLM_METHODS"],
    "claims": ["CLAIMS"],
})

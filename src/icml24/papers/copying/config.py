"""Config, presets and seeds of copying: importable without torch (icml24 show)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from icml24.core.config import knob
from icml24.core.errors import UserError

Position = Literal["rope", "nope", "alibi", "hard_alibi"]

TRANSFORMERS: tuple[Position, ...] = ("hard_alibi", "rope", "nope", "alibi")
GSSMS = ("mamba", "lstm")


@dataclass(frozen=True)
class Config:
    """Theory grid, tiny-model sizes and training budget (QUICK: 2-core CPU, minutes)."""

    # 1. construction
    theory_alphabet: int = knob(26, "|D| for the construction (the paper's 26 letters)", ge=1)
    theory_ns: tuple[int, ...] = knob((2, 3, 4), "n-gram sizes n of the hand-built transformer", ge=1, nonempty=True)
    theory_scales: tuple[float, ...] = knob((0.5, 0.8), "string lengths L = c |D|^(n/2) for each c (bound ~ c^2)",
                                            gt=0, nonempty=True)
    theory_strings: int = knob(96, "random strings per (n, L) point", ge=1)
    # 2. GSSMs
    gssm_alphabet: int = knob(3, "|D| for the exact (enumerated) GSSM checks", ge=1)
    gssm_max_len: int = knob(6, "GSSM checks use every L = 1..gssm_max_len", ge=1)
    gssm_max_stored: int = knob(4, "prefix-store automata store k = 0..gssm_max_stored tokens", ge=0)
    gssm_random: int = knob(40, "random GSSM transition tables per seed", ge=1)
    gssm_max_states: int = knob(64, "random GSSMs have 2..gssm_max_states states", ge=2)
    # 3./4. training
    alphabet: int = knob(10, "letters |D| of the trained tasks", ge=1)
    train_len_min: int = knob(2, "shortest training string", ge=1)
    train_len_max: int = knob(6, "longest training string", ge=1)
    gen_factors: tuple[int, ...] = knob((1, 2, 3), "evaluate at these multiples of train_len_max", ge=1, nonempty=True)
    copy_models: tuple[str, ...] = knob(("hard_alibi", "rope", "mamba", "lstm"), "models trained on copy",
                                        choices=(*TRANSFORMERS, *GSSMS))
    context: int = knob(40, "training context (examples are packed into it)", ge=1)
    batch: int = knob(16, "training contexts per step (copy)", ge=1)
    steps: int = knob(1000, "training steps per model on copy", ge=1)
    lr: float = knob(3e-3, "AdamW peak learning rate on copy, at most 1 (an Adam step moves every weight by about "
                           "lr, and these weights are O(1) or smaller)", gt=0, le=1.0)
    weight_decay: float = knob(0.1, "AdamW weight decay", ge=0)
    warmup: int = knob(50, "linear warm-up steps (then linear decay)", ge=0)
    eval_every: int = knob(50, "steps between learning-curve evaluations", ge=1)
    eval_examples: int = knob(24, "examples per evaluation length", ge=1)
    d_model: int = knob(32, "transformer width", ge=1)
    n_layers: int = knob(2, "transformer layers", ge=1)
    n_heads: int = knob(4, "transformer heads per layer", ge=1)
    n_hard: int = knob(2, "Hard-ALiBi heads per layer (head i sees the last i+1 tokens)", ge=1)
    mamba_d: int = knob(32, "Mamba width (inner width 2x)", ge=1)
    mamba_layers: int = knob(3, "Mamba layers", ge=1)
    d_state: int = knob(4, "Mamba state size N per channel", ge=1)
    lstm_hidden: int = knob(64, "LSTM hidden size (embedding = d_model)", ge=1)
    lstm_layers: int = knob(1, "LSTM layers", ge=1)
    lookup_runs: tuple[str, ...] = knob(("hard_alibi:suffix", "mamba:prefix", "mamba:suffix"),
                                        "model:task pairs trained on lookup (claims C7, C8)")
    lookup_steps: int = knob(200, "training steps per model on lookup", ge=1)
    lookup_batch: int = knob(8, "training contexts per step on lookup", ge=1)
    lookup_lr: float = knob(1e-2, "AdamW peak learning rate on lookup, at most 1", gt=0, le=1.0)
    lookup_warmup: int = knob(10, "linear warm-up steps on lookup", ge=0)
    lookup_len_min: int = knob(6, "shortest lookup string", ge=1)
    lookup_len_max: int = knob(10, "longest lookup string", ge=1)
    lookup_ngram: int = knob(2, "length of the lookup key n-gram", ge=1)
    lookup_answer: int = knob(2, "answer tokens after the key", ge=1)
    threads: int = knob(1, "torch CPU threads inside run", ge=0)
    device: str = knob("cpu", "torch device for training")


SMOKE = Config(theory_ns=(2, 3), theory_scales=(0.8,), theory_strings=16, gssm_max_len=4, gssm_random=5,
               steps=4, warmup=1, eval_every=2, eval_examples=4, batch=4, lookup_steps=4, lookup_batch=4, lookup_warmup=1,
               d_model=16, n_heads=4, n_hard=2, mamba_d=16, mamba_layers=1, d_state=4, lstm_hidden=16, gen_factors=(1, 3),
               lookup_len_min=5, lookup_len_max=6)
QUICK = Config(eval_examples=96)  # 96 strings per evaluation length: one string moves an accuracy by 0.01
FULL = Config(alphabet=26, theory_ns=(2, 3, 4, 5), theory_scales=(0.25, 0.5, 0.8), theory_strings=2000, gssm_max_len=8,
              gssm_random=500, train_len_min=20, train_len_max=50, gen_factors=(1, 2, 3, 10, 20), context=400,
              batch=8, steps=2000, lr=1e-5, warmup=100, eval_every=100, eval_examples=24, lookup_steps=2000,
              lookup_batch=8, lookup_lr=1e-5, lookup_warmup=100, d_model=1024,
              n_layers=12, n_heads=16, n_hard=8, mamba_d=1024, mamba_layers=24, d_state=32, lstm_hidden=1024,
              lstm_layers=4, copy_models=("hard_alibi", "rope", "nope", "alibi", "mamba", "lstm"),
              lookup_runs=("hard_alibi:prefix", "hard_alibi:suffix", "mamba:prefix", "mamba:suffix",
                           "lstm:prefix", "lstm:suffix"),
              lookup_len_min=20, lookup_len_max=50, lookup_ngram=3, lookup_answer=5, threads=0, device="cuda")
SEEDS = {"smoke": (0,), "quick": tuple(range(4)), "full": tuple(range(5))}



def validate(config: Config) -> None:
    """Reject a config that cannot run or would run meaninglessly, before any seed starts (called by the CLI)."""
    cfg = config
    if cfg.train_len_min > cfg.train_len_max:
        raise UserError(f"train_len_min={cfg.train_len_min} must be <= train_len_max={cfg.train_len_max}")
    if cfg.lookup_len_min > cfg.lookup_len_max:
        raise UserError(f"lookup_len_min={cfg.lookup_len_min} must be <= lookup_len_max={cfg.lookup_len_max}")
    if cfg.n_hard > cfg.n_heads:
        raise UserError(f"n_hard={cfg.n_hard} Hard-ALiBi heads cannot exceed n_heads={cfg.n_heads}")
    if cfg.d_model % cfg.n_heads:
        raise UserError(f"d_model={cfg.d_model} must be divisible by n_heads={cfg.n_heads}")
    lookups = []
    for pair in cfg.lookup_runs:
        kind, sep, task = pair.partition(":")
        if not sep or kind not in (*TRANSFORMERS, *GSSMS) or task not in ("prefix", "suffix"):
            raise UserError(f"lookup_runs entry {pair!r} must be model:task with model one of "
                            f"{', '.join((*TRANSFORMERS, *GSSMS))} and task prefix or suffix")
        lookups.append((kind, task))
    kinds = set(cfg.copy_models) | {k for k, _ in lookups}
    if "rope" in kinds and (cfg.d_model // cfg.n_heads) % 2:
        raise UserError(f"rope (in copy_models or lookup_runs) rotates pairs of channels: d_model / n_heads = "
                        f"{cfg.d_model}/{cfg.n_heads} = {cfg.d_model // cfg.n_heads} must be even")
    if cfg.copy_models and cfg.context < 2 * cfg.train_len_max + 3:
        raise UserError(f"context={cfg.context} must hold the longest copy example, 2 * train_len_max + 3 = "
                        f"{2 * cfg.train_len_max + 3} tokens")
    if lookups:
        if cfg.alphabet < 2:
            raise UserError("lookup_runs need alphabet >= 2 (with one letter no lookup key is unique)")
        if cfg.lookup_len_min < cfg.lookup_ngram + cfg.lookup_answer:
            raise UserError(f"lookup_len_min={cfg.lookup_len_min} must be >= lookup_ngram + lookup_answer = "
                            f"{cfg.lookup_ngram + cfg.lookup_answer} (the string holds the key and its answer)")
        frame = 4 if any(t == "prefix" for _, t in lookups) else 3  # $ | . (and a second | for prefix)
        longest = cfg.lookup_len_max + cfg.lookup_ngram + cfg.lookup_answer + frame
        if cfg.context < longest:
            raise UserError(f"context={cfg.context} must hold the longest lookup example, lookup_len_max + "
                            f"lookup_ngram + lookup_answer + {frame} = {longest} tokens")

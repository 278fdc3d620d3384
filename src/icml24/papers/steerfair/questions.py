"""Two-option questions for model (b), SmolLM2-135M-Instruct: "Which of these is a <category>?".

Generated from the word lists below (common words, one category each): one option from the asked
category, the other from another category, so the content decides the answer. Prompts use the model's
own chat template; the assistant turn starts with ``(`` (the model's answer format, e.g. "(B) truck"),
and the answer is the letter, A or B, with the larger next-token probability after it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

WORDS: dict[str, tuple[str, ...]] = {
    "fruit": ("apple", "banana", "cherry", "grape", "lemon", "mango", "peach", "pear", "plum", "strawberry"),
    "animal": ("dog", "cat", "horse", "lion", "tiger", "rabbit", "elephant", "monkey", "sheep", "wolf"),
    "vehicle": ("car", "bus", "truck", "bicycle", "train", "airplane", "boat", "motorcycle", "tractor", "taxi"),
    "color": ("red", "blue", "green", "yellow", "purple", "black", "white", "brown", "pink", "gray"),
    "tool": ("hammer", "saw", "screwdriver", "wrench", "drill", "shovel", "axe", "pliers", "chisel", "rake"),
    "musical instrument": ("piano", "guitar", "violin", "drum", "flute", "trumpet", "cello", "harp", "saxophone",
                           "clarinet"),
    "piece of furniture": ("chair", "table", "sofa", "bed", "desk", "shelf", "wardrobe", "stool", "bench",
                           "dresser"),
    "sport": ("football", "tennis", "basketball", "golf", "swimming", "boxing", "cricket", "hockey", "rugby",
              "volleyball"),
    "country": ("France", "Japan", "Brazil", "Canada", "Egypt", "India", "Mexico", "Spain", "Kenya", "Norway"),
    "body part": ("hand", "knee", "elbow", "shoulder", "ankle", "finger", "nose", "ear", "wrist", "toe"),
}
LETTERS = ("A", "B")


class TwoOption(NamedTuple):
    """n questions: the asked category, the two options in their order, the gold position (0 = A)."""

    category: list[str]
    options: list[tuple[str, str]]
    gold: np.ndarray


def sample(rng: np.random.Generator, n: int) -> TwoOption:
    """n questions with a uniformly random gold position."""
    cats = list(WORDS)
    category, options = [], []
    gold = rng.integers(0, 2, n)
    for i in range(n):
        c, o = rng.choice(len(cats), 2, replace=False)
        right, wrong = WORDS[cats[c]][rng.integers(10)], WORDS[cats[o]][rng.integers(10)]
        category.append(cats[c])
        options.append((right, wrong) if gold[i] == 0 else (wrong, right))
    return TwoOption(category, options, gold)


def swap(qs: TwoOption) -> TwoOption:
    """The other ordering of every question (its one cyclic permutation)."""
    return TwoOption(qs.category, [(b, a) for a, b in qs.options], 1 - qs.gold)


def gold_at(qs: TwoOption, position: int) -> TwoOption:
    """Every question in the ordering that puts its gold answer at ``position``."""
    opts = [o if g == position else (o[1], o[0]) for o, g in zip(qs.options, qs.gold)]
    return TwoOption(qs.category, opts, np.full(len(qs.gold), position))


def article(word: str) -> str:
    """'a' or 'an' before ``word``.

    >>> article("animal"), article("fruit")
    ('an', 'a')
    """
    return "an" if word[0].lower() in "aeiou" else "a"


def question_text(category: str, options: tuple[str, str]) -> str:
    """The user turn of one question."""
    lines = [f"Which of these is {article(category)} {category}?"]
    lines += [f"({L}) {o}" for L, o in zip(LETTERS, options)]
    return "\n".join(lines + ["Answer with the letter of the correct option."])


def prompt_ids(tokenizer: Any, qs: TwoOption, answer: list[int] | None = None) -> list[list[int]]:
    """Token ids of each question in the chat template, the assistant turn opened with ``(``; with
    ``answer`` (a position per question), followed by that option's letter, ``) `` and its text (the
    forced answers of SteerFair's demonstrations)."""
    out = []
    for i, (c, o) in enumerate(zip(qs.category, qs.options)):
        text = tokenizer.apply_chat_template([{"role": "user", "content": question_text(c, o)}], tokenize=False,
                                             add_generation_prompt=True) + "("
        if answer is not None:
            text += f"{LETTERS[answer[i]]}) {o[answer[i]]}"
        out.append(tokenizer.encode(text, add_special_tokens=False))
    return out


def answer_suffixes(tokenizer: Any, qs: TwoOption, rule: int) -> list[list[int]]:
    """The tokens that ``prompt_ids(tokenizer, qs, [rule] * n)`` adds after ``prompt_ids(tokenizer, qs)``:
    rule's forced answer, read over the cached prompts. Refuses a tokenizer that merges across the seam."""
    out = []
    for p, full in zip(prompt_ids(tokenizer, qs), prompt_ids(tokenizer, qs, [rule] * len(qs.gold))):
        if full[:len(p)] != p:
            raise ValueError("the tokenizer merges the answer into the prompt's last token: no suffix to append")
        out.append(full[len(p):])
    return out


def letter_ids(tokenizer: Any) -> list[int]:
    """Token ids of the letters A and B (each a single token)."""
    ids = [tokenizer.encode(L, add_special_tokens=False) for L in LETTERS]
    if any(len(i) != 1 for i in ids):
        raise ValueError(f"the letters do not tokenise to one token each: {ids}")
    return [i[0] for i in ids]

"""The generated multiple-choice task of model (a): which option belongs to the asked category?

Tokens: ``[BOS, Q, c, L_0, o_0, ..., L_{K-1}, o_{K-1}, ANS]`` is the prompt (category token c, letter
tokens L_k, item tokens o_k); exactly one option's item belongs to category c. The answer is
``[L_g, o_g, EOS]`` for the gold position g. Item i belongs to category ``category[i]``, a balanced
random map drawn from the seed. Training questions draw items with Zipf weights (rare items are seen a
few times only, so the model is unsure about them) and put the gold answer at option A with
probability ``bias`` (the planted spurious association); evaluation and unlabelled questions draw
items uniformly and the gold position uniformly.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

PAD, BOS, Q, ANS, EOS = 0, 1, 2, 3, 4
LETTER0 = 5   # letter tokens L_0 .. L_{K-1} are LETTER0 + k


class Vocab(NamedTuple):
    """Token layout of the task: specials, K letters, C categories, V items."""

    options: int
    categories: int
    items: int

    @property
    def category0(self) -> int:
        """Id of the first category token."""
        return LETTER0 + self.options

    @property
    def item0(self) -> int:
        """Id of the first item token."""
        return self.category0 + self.categories

    @property
    def size(self) -> int:
        """Vocabulary size."""
        return self.item0 + self.items


class Questions(NamedTuple):
    """A set of n questions: category (n,), option items (n, K) and the gold position (n,)."""

    category: np.ndarray
    options: np.ndarray
    gold: np.ndarray


def category_map(rng: np.random.Generator, vocab: Vocab) -> np.ndarray:
    """(V,) category of each item: V / C items per category, in random order."""
    return rng.permutation(np.arange(vocab.items) % vocab.categories)


def zipf_weights(items: int, exponent: float) -> np.ndarray:
    """(V,) sampling weights proportional to ``rank^-exponent`` (0: uniform).

    >>> zipf_weights(3, 0.0).tolist()
    [0.3333333333333333, 0.3333333333333333, 0.3333333333333333]
    """
    w = np.arange(1, items + 1, dtype=float) ** -exponent
    return w / w.sum()


def sample(rng: np.random.Generator, n: int, vocab: Vocab, category: np.ndarray, weights: np.ndarray,
           bias: float | None) -> Questions:
    """n questions. ``bias``: probability that the gold answer is at option A (the rest spread evenly
    over the other positions); None puts it at a uniform position.
    """
    K = vocab.options
    cat = rng.integers(0, vocab.categories, n)
    options = np.empty((n, K), dtype=np.int64)
    if bias is None:
        gold = rng.integers(0, K, n)
    else:
        gold = np.where(rng.random(n) < bias, 0, rng.integers(1, K, n))
    for i in range(n):
        inside = np.flatnonzero(category == cat[i])
        outside = np.flatnonzero(category != cat[i])
        pick_in = rng.choice(inside, p=weights[inside] / weights[inside].sum())
        pick_out = rng.choice(outside, K - 1, replace=False, p=weights[outside] / weights[outside].sum())
        options[i] = np.insert(pick_out, gold[i], pick_in)
    return Questions(cat, options, gold)


def rotate(qs: Questions, shift: int) -> Questions:
    """The cyclic permutation of every question's options by ``shift`` (option k moves to k + shift mod K).

    >>> q = Questions(np.array([0]), np.array([[7, 8, 9]]), np.array([0]))
    >>> r = rotate(q, 1); r.options.tolist(), r.gold.tolist()
    ([[9, 7, 8]], [1])
    """
    K = qs.options.shape[1]
    return Questions(qs.category, np.roll(qs.options, shift, axis=1), (qs.gold + shift) % K)


def gold_at(qs: Questions, position: int) -> Questions:
    """The cyclic permutation of each question that puts its gold answer at ``position``."""
    K = qs.options.shape[1]
    out = [rotate(Questions(qs.category[i:i + 1], qs.options[i:i + 1], qs.gold[i:i + 1]),
                  int((position - qs.gold[i]) % K)) for i in range(len(qs.gold))]
    return Questions(np.concatenate([o.category for o in out]), np.concatenate([o.options for o in out]),
                     np.concatenate([o.gold for o in out]))


def prompts(qs: Questions, vocab: Vocab) -> np.ndarray:
    """(n, 4 + 2K) prompt tokens ``[BOS, Q, c, L_0, o_0, ..., ANS]``."""
    n, K = qs.options.shape
    body = np.empty((n, 2 * K), dtype=np.int64)
    body[:, 0::2] = LETTER0 + np.arange(K)
    body[:, 1::2] = vocab.item0 + qs.options
    head = np.stack([np.full(n, BOS), np.full(n, Q), vocab.category0 + qs.category], 1)
    return np.concatenate([head, body, np.full((n, 1), ANS)], 1)


def answers(qs: Questions, vocab: Vocab, position: np.ndarray | None = None) -> np.ndarray:
    """(n, 2) answer tokens ``[L_p, o_p]`` for positions ``position`` (default: the gold ones)."""
    p = qs.gold if position is None else position
    return np.stack([LETTER0 + p, vocab.item0 + qs.options[np.arange(len(p)), p]], 1)


def training_sequences(qs: Questions, vocab: Vocab) -> np.ndarray:
    """(n, 4 + 2K + 3) prompt, gold answer and EOS: the model is trained on the last three tokens."""
    return np.concatenate([prompts(qs, vocab), answers(qs, vocab), np.full((len(qs.gold), 1), EOS)], 1)


def demonstrations(qs: Questions, vocab: Vocab, position: int, text: bool = True) -> np.ndarray:
    """(n K, 4 + 2K + 2) SteerFair's bias demonstrations of the rule "the answer is option ``position``":
    every cyclic permutation of every (unlabelled) question, followed by that option's letter and
    (``text``) its item, whether or not it is correct (the gold labels are not read)."""
    K = qs.options.shape[1]
    rows = []
    for shift in range(K):
        r = rotate(qs, shift)
        forced = answers(r, vocab, np.full(len(r.gold), position))
        rows.append(np.concatenate([prompts(r, vocab), forced if text else forced[:, :1]], 1))
    return np.concatenate(rows)

"""Tasks, packing, training and metrics of the paper's synthetic experiments (Section 4).

Strings follow the official code's formats (``$`` BOS, ``|`` separator, ``.`` EOS, ``*`` pad):

* copy:   ``$ x | x .``
* prefix: ``$ g | x | a .``  (the n-gram key g comes *before* the string; a is what follows g in x)
* suffix: ``$ x | g a .``    (the key comes *after* the string)

Only the answer (after the last ``|``, or after g for suffix, through ``.``) is in the loss mask.
Training packs examples into a fixed context; the example cut by the context end has mask 0.
Accuracy is reported both teacher-forced (the official code's metric: argmax at answer positions on
the true input) and by free greedy decoding (the answer generated token by token).
"""

from __future__ import annotations

import math
from typing import Literal, NamedTuple

import numpy as np
import torch
from torch.nn import functional as F

Task = Literal["copy", "prefix", "suffix"]


def specials(D: int) -> dict[str, int]:
    """Token ids of the special symbols for an alphabet of D letters (letters are 0..D-1).

    >>> specials(26)
    {'$': 26, '|': 27, '.': 28, '*': 29}
    """
    return {"$": D, "|": D + 1, ".": D + 2, "*": D + 3}


class Example(NamedTuple):
    """One example: its token ids and the index where the answer starts (the answer runs to the end)."""

    ids: list[int]
    answer_start: int


def unique_ngram_position(x: np.ndarray, n: int, answer_len: int, rng: np.random.Generator) -> int | None:
    """A random start i of an n-gram of ``x`` that occurs once and has ``answer_len`` tokens after it."""
    L = len(x)
    starts = np.arange(0, L - n - answer_len + 1)
    if len(starts) == 0:
        return None
    grams = [tuple(x[i: i + n]) for i in range(L - n + 1)]
    counts: dict[tuple, int] = {}
    for g in grams:
        counts[g] = counts.get(g, 0) + 1
    ok = [i for i in starts if counts[grams[i]] == 1]
    return int(rng.choice(ok)) if ok else None


def make_example(task: Task, L: int, D: int, rng: np.random.Generator, n_gram: int = 3,
                 answer_len: int = 4) -> Example:
    """Sample one example of ``task`` over a uniform string of length L (resampled until the lookup
    key is unique, as in the official code).

    >>> ex = make_example("copy", 3, 5, np.random.default_rng(0))
    >>> len(ex.ids), ex.answer_start, ex.ids[0], ex.ids[4], ex.ids[-1]
    (9, 5, 5, 6, 7)
    """
    sp = specials(D)
    while True:
        x = rng.integers(0, D, size=L)
        if task == "copy":
            ids = [sp["$"], *x, sp["|"]]
            return Example(ids + [*x, sp["."]], len(ids))
        i = unique_ngram_position(x, n_gram, answer_len, rng)
        if i is None:
            continue
        g, a = list(x[i: i + n_gram]), list(x[i + n_gram: i + n_gram + answer_len])
        if task == "prefix":
            ids = [sp["$"], *g, sp["|"], *x, sp["|"]]
        else:
            ids = [sp["$"], *x, sp["|"], *g]
        return Example(ids + [*a, sp["."]], len(ids))


class Batch(NamedTuple):
    """A batch of token ids and the loss mask over *target* positions."""

    ids: torch.Tensor  # (B, C) long
    mask: torch.Tensor  # (B, C) float, 1 where the token is an answer token (or the closing ".")


def packed_batch(task: Task, batch: int, context: int, len_range: tuple[int, int], D: int,
                 rng: np.random.Generator, n_gram: int = 3, answer_len: int = 4) -> tuple[Batch, int]:
    """Training batch: examples (lengths uniform in ``len_range``, inclusive) packed into ``context``
    tokens; the example cut by the end of the context keeps mask 0. Also returns how many complete
    examples the batch holds (the x-axis of the sample-efficiency curves)."""
    ids = np.empty((batch, context), dtype=np.int64)
    mask = np.zeros((batch, context), dtype=np.float32)
    complete = 0
    for b in range(batch):
        pos = 0
        while pos < context:
            ex = make_example(task, int(rng.integers(len_range[0], len_range[1] + 1)), D, rng, n_gram, answer_len)
            take = min(len(ex.ids), context - pos)
            ids[b, pos: pos + take] = ex.ids[:take]
            if take == len(ex.ids):
                mask[b, pos + ex.answer_start: pos + take] = 1.0
                complete += 1
            pos += take
    return Batch(torch.from_numpy(ids), torch.from_numpy(mask)), complete


def eval_batch(task: Task, n: int, L: int, D: int, rng: np.random.Generator, n_gram: int = 3,
               answer_len: int = 4) -> tuple[Batch, int]:
    """n examples of one length L, one per row (all rows have the same layout); returns the batch and
    the answer start index. Rows are not padded: every example of a length has the same size."""
    exs = [make_example(task, L, D, rng, n_gram, answer_len) for _ in range(n)]
    ids = torch.tensor([e.ids for e in exs], dtype=torch.long)
    mask = torch.zeros(ids.shape)
    mask[:, exs[0].answer_start:] = 1.0
    return Batch(ids, mask), exs[0].answer_start


def masked_lm_loss(logits: torch.Tensor, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Next-token cross-entropy on answer positions only: inputs ``ids[:, :-1]``, targets ``ids[:, 1:]``.

    Args:
        logits: (B, C-1, V) for the inputs ``ids[:, :-1]``. ids, mask: (B, C).
    """
    tgt, m = ids[:, 1:], mask[:, 1:]
    ce = F.cross_entropy(logits.flatten(0, 1), tgt.flatten(), reduction="none").view_as(m)
    return (ce * m).sum() / m.sum().clamp(min=1.0)


def _to_model(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    """``x`` on the device of the model's parameters (CPU for parameter-free models)."""
    p = next(model.parameters(), None)
    return x if p is None else x.to(p.device)


class Accuracy(NamedTuple):
    """Answer accuracies of one evaluation batch."""

    char: float  # fraction of answer tokens right (teacher forcing)
    string: float  # fraction of examples with every answer token right (teacher forcing)


@torch.no_grad()
def teacher_forced_accuracy(model: torch.nn.Module, batch: Batch) -> Accuracy:
    """The official metric: argmax of the logits on the ground-truth input at answer positions."""
    ids, mask = _to_model(model, batch.ids), _to_model(model, batch.mask)
    pred = model(ids[:, :-1]).argmax(-1)  # (B, C-1)
    m = mask[:, 1:] > 0
    right = (pred == ids[:, 1:]) | ~m
    return Accuracy(float(((pred == ids[:, 1:]) & m).sum() / m.sum()), float(right.all(1).float().mean()))


@torch.no_grad()
def greedy_string_accuracy(model: torch.nn.Module, batch: Batch, answer_start: int) -> float:
    """Free autoregressive decoding: feed the prompt ``ids[:, :answer_start]``, append the argmax
    token until the answer length is reached; the fraction of examples whose answer is reproduced."""
    ids = _to_model(model, batch.ids)
    seq = ids[:, :answer_start]
    for _ in range(ids.shape[1] - answer_start):
        seq = torch.cat([seq, model(seq)[:, -1].argmax(-1, keepdim=True)], dim=1)
    return float((seq[:, answer_start:] == ids[:, answer_start:]).all(1).float().mean())


def lr_at(step: int, total: int, warmup: int, lr: float) -> float:
    """Linear warm-up for ``warmup`` steps, then linear decay to 0 (the official schedule).

    >>> [lr_at(s, 10, 2, 1.0) for s in (0, 1, 2, 6, 10)]
    [0.5, 1.0, 1.0, 0.5, 0.0]
    """
    if step < warmup:
        return lr * (step + 1) / warmup
    return lr * max(0.0, (total - step) / max(1, total - warmup))


class TrainLog(NamedTuple):
    """Learning curve of one training run."""

    examples: list[float]  # complete training examples seen at each evaluation
    string_acc: list[float]  # teacher-forced string accuracy on the in-distribution eval set


class TrainSpec(NamedTuple):
    """One training run's budget and optimiser (the copy task's or the lookup task's)."""

    steps: int                  # optimiser steps
    batch: int                  # packed contexts per step
    context: int                # tokens per packed context
    len_range: tuple[int, int]  # shortest and longest training string
    lr: float                   # peak AdamW learning rate
    weight_decay: float         # AdamW weight decay
    warmup: int                 # linear warm-up steps of the schedule
    eval_every: int             # steps between evaluations of the learning curve
    clip: float = 1.0           # gradient-norm clip


def train(model: torch.nn.Module, task: Task, spec: TrainSpec, D: int, rng: np.random.Generator,
          eval_set: list[Batch], n_gram: int = 3, answer_len: int = 4) -> TrainLog:
    """AdamW on the masked next-token loss with the official schedule and clipping; evaluates the
    teacher-forced string accuracy on ``eval_set`` every ``spec.eval_every`` steps."""
    opt = torch.optim.AdamW(model.parameters(), lr=spec.lr, weight_decay=spec.weight_decay)
    seen, log_x, log_y = 0, [], []
    for step in range(spec.steps):
        for g in opt.param_groups:
            g["lr"] = lr_at(step, spec.steps, spec.warmup, spec.lr)
        b, k = packed_batch(task, spec.batch, spec.context, spec.len_range, D, rng, n_gram, answer_len)
        seen += k
        model.train()
        ids, mask = _to_model(model, b.ids), _to_model(model, b.mask)
        loss = masked_lm_loss(model(ids[:, :-1]), ids, mask)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), spec.clip)
        opt.step()
        if (step + 1) % spec.eval_every == 0 or step + 1 == spec.steps:
            model.eval()
            log_x.append(float(seen))
            log_y.append(float(np.mean([teacher_forced_accuracy(model, e).string for e in eval_set])))
    return TrainLog(log_x, log_y)


class Reached(NamedTuple):
    """When a learning curve first reached a level."""

    examples: float   # training examples seen then (if never: all seen, a lower bound)
    reached: bool     # whether it did


def examples_to_reach(log: TrainLog, level: float) -> Reached:
    """Training examples seen at the first evaluation with string accuracy >= level; if never, the
    total seen (a lower bound) and False.

    >>> examples_to_reach(TrainLog([10.0, 20.0, 30.0], [0.1, 0.96, 0.9]), 0.95)
    Reached(examples=20.0, reached=True)
    >>> examples_to_reach(TrainLog([10.0, 20.0], [0.1, 0.2]), 0.95)
    Reached(examples=20.0, reached=False)
    """
    for x, y in zip(log.examples, log.string_acc):
        if y >= level:
            return Reached(x, True)
    return Reached(log.examples[-1] if log.examples else math.nan, False)

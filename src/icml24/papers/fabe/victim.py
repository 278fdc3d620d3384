"""The victim: a fastText-style classifier over hashed word n-grams, trained here on poisoned snippets.

``logits(x) = W mean_{g in ngrams(x)} E[h(g)] + c``: word n-grams of ``x`` up to ``n`` (:func:`ngram_ids`, hashed
with CRC-32 into ``buckets`` rows of an embedding table ``E`` of width ``dim``), averaged by an ``EmbeddingBag``,
then a linear layer to the two classes. Trained with Adam on the cross-entropy (lazy Adam on the embedding's
sparse gradients), in shuffled mini-batches. It
stands in for the paper's fine-tuned BERT: it learns all three triggers (each is a fixed word pattern), which is
what the defense has to undo.
"""

from __future__ import annotations

import zlib
from typing import NamedTuple, Sequence

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from icml24.papers.fabe.data import words


def ngram_ids(text: str, n: int, buckets: int) -> list[int]:
    """Hashed ids of the word 1..n-grams of ``text`` (a lone id 0 for an empty text).

    >>> ngram_ids("a b", 2, 1000) == [zlib.crc32(b"a") % 1000, zlib.crc32(b"b") % 1000, zlib.crc32(b"a b") % 1000]
    True
    """
    w = words(text)
    grams = [" ".join(w[i:i + k]) for k in range(1, n + 1) for i in range(len(w) - k + 1)]
    return [zlib.crc32(g.encode()) % buckets for g in grams] or [0]


class Victim(nn.Module):
    """EmbeddingBag (mean) over hashed n-grams, then a linear layer to ``classes`` logits."""

    def __init__(self, buckets: int, dim: int, n: int, classes: int = 2):
        super().__init__()
        self.n, self.buckets = n, buckets
        self.emb = nn.EmbeddingBag(buckets, dim, mode="mean", sparse=True)
        self.out = nn.Linear(dim, classes)

    def encode(self, texts: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """Flat ids and bag offsets of ``texts``."""
        ids = [ngram_ids(t, self.n, self.buckets) for t in texts]
        offsets = torch.as_tensor(np.cumsum([0] + [len(i) for i in ids[:-1]]), dtype=torch.long)
        return torch.as_tensor([j for i in ids for j in i], dtype=torch.long), offsets

    def forward(self, flat: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        return self.out(self.emb(flat, offsets))

    @torch.no_grad()
    def logits(self, texts: Sequence[str]) -> np.ndarray:
        """(n, classes) logits of ``texts``."""
        self.eval()
        if not texts:
            return np.zeros((0, self.out.out_features), dtype=np.float32)
        return self(*self.encode(texts)).numpy()


class TrainLog(NamedTuple):
    """Mean training loss per epoch and the final training accuracy."""

    loss: list[float]
    accuracy: float


def train(texts: Sequence[str], labels: np.ndarray, n: int, buckets: int, dim: int, epochs: int, batch: int,
          lr: float, gen: torch.Generator) -> tuple[Victim, TrainLog]:
    """A :class:`Victim` trained with Adam (initialisation and batch order from ``gen``)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(torch.randint(0, 2 ** 31 - 1, (1,), generator=gen)))
        model = Victim(buckets, dim, n)
    ids = [torch.as_tensor(ngram_ids(t, n, buckets), dtype=torch.long) for t in texts]
    y = torch.as_tensor(labels, dtype=torch.long)
    opts = [torch.optim.SparseAdam(list(model.emb.parameters()), lr=lr), torch.optim.Adam(model.out.parameters(), lr=lr)]
    losses = []
    model.train()
    for _ in range(epochs):
        order = torch.randperm(len(ids), generator=gen)
        total = 0.0
        for s in range(0, len(ids), batch):
            rows = order[s:s + batch].tolist()
            flat = torch.cat([ids[r] for r in rows])
            offsets = torch.as_tensor(np.cumsum([0] + [len(ids[r]) for r in rows[:-1]]), dtype=torch.long)
            loss = F.cross_entropy(model(flat, offsets), y[rows])
            for opt in opts:
                opt.zero_grad()
            loss.backward()
            for opt in opts:
                opt.step()
            total += loss.item() * len(rows)
        losses.append(total / len(ids))
    acc = float(np.mean(model.logits(list(texts)).argmax(1) == labels))
    return model, TrainLog(losses, acc)

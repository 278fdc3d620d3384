"""Model (a): a small Llama (SmolLM2's architecture, :func:`icml24.common.llm.tiny_llama`) trained from
scratch on the generated task, and the letter-choice evaluation shared by both models."""

from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np
import torch
from torch.nn import functional as F

from icml24.common.llm import next_token_logprobs


class TrainLog(NamedTuple):
    """Training loss per step (steps,)."""

    loss: list[float]


def train(model: torch.nn.Module, seqs: np.ndarray, answer_from: int, steps: int, batch: int, lr: float,
          gen: torch.Generator, device: str = "cpu") -> TrainLog:
    """Next-token cross-entropy on the answer tokens (positions >= ``answer_from``) of ``seqs`` (n, T), AdamW
    with a cosine schedule; batches drawn with replacement by ``gen``."""
    data = torch.as_tensor(seqs, dtype=torch.long)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    model.train()
    losses = []
    for _ in range(steps):
        ids = data[torch.randint(len(data), (batch,), generator=gen)].to(device)   # (B, T)
        logits = model(input_ids=ids).logits[:, answer_from - 1:-1]           # predicts tokens answer_from..T-1
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, answer_from:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
    model.eval()
    return TrainLog(losses)


def choose(model: torch.nn.Module, prompts: Sequence[Sequence[int]], letters: Sequence[int], pad_id: int,
           batch: int = 64, device: str = "cpu") -> np.ndarray:
    """(n,) index of the option whose letter token gets the largest next-token probability after each prompt."""
    logp = next_token_logprobs(model, prompts, pad_id, batch, device)          # (n, V)
    return logp[:, list(letters)].argmax(1).numpy()

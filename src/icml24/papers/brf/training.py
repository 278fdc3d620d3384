"""Training and evaluation of an :class:`~icml24.papers.brf.model.RSNN` as in the paper's scripts.

Adam with a linearly decaying learning rate (lr * (1 - epoch / epochs)), optional gradient-norm clipping
(the official S-MNIST script clips at 1, the ECG script does not), loss
:func:`~icml24.papers.brf.model.sequence_nll`, test accuracy and spike rate measured after every epoch
(and before the first, "epoch 0", as in the authors' logs).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import torch

from icml24.papers.brf.data import SequenceData
from icml24.papers.brf.model import RSNN, predict, sequence_nll


class Evaluation(NamedTuple):
    """Accuracy (fraction of labelled steps or sequences), mean loss per sequence, spikes per neuron per step."""

    accuracy: float
    loss: float
    spike_rate: float


class TrainHistory(NamedTuple):
    """Per-epoch records, index 0 = before training; each list has epochs + 1 entries.

    ``diverged`` is True when a training loss was not finite (training then stops, as in the official
    scripts, and the remaining epochs repeat the last evaluation).
    """

    test_accuracy: list[float]
    test_loss: list[float]
    spike_rate: list[float]
    train_loss: list[float]
    diverged: bool


@torch.no_grad()
def evaluate(net: RSNN, x: np.ndarray, y: np.ndarray, batch_size: int = 512, device: str = "cpu") -> Evaluation:
    """Accuracy, loss and spike rate of ``net`` on inputs x (N, T, n_in) and labels y (N,) or (N, T).

    Sequence labels are predicted from the time-mean readout; per-step labels are scored at every step. A non-finite
    readout (a diverged network) counts as predicting class 0.
    """
    correct = total = spikes = 0.0
    loss = 0.0
    for start in range(0, len(x), batch_size):
        xb = torch.from_numpy(x[start:start + batch_size]).to(device).transpose(0, 1)  # (T, B, n_in)
        yb = torch.from_numpy(y[start:start + batch_size]).to(device)
        yb = yb.t() if yb.dim() == 2 else yb  # (T, B) or (B,)
        out = net(xb)
        readout = torch.nan_to_num(out.readout, nan=0.0, posinf=0.0, neginf=0.0)
        pred = predict(readout, per_step=yb.dim() == 2)
        correct += float((pred == yb).sum())
        total += yb.numel()
        loss += float(sequence_nll(readout, yb)) * xb.shape[1]
        spikes += float(out.spikes.sum())
    n_neuron_steps = len(x) * x.shape[1] * net.n_hidden
    return Evaluation(correct / total, loss / len(x), spikes / n_neuron_steps)


def train(net: RSNN, data: SequenceData, epochs: int, lr: float, batch_size: int,
          generator: torch.Generator, clip: float = 0.0, schedule_epochs: int | None = None,
          device: str = "cpu") -> TrainHistory:
    """Train ``net`` on ``data.x_train`` for ``epochs`` epochs; evaluate on the test split after each.

    Minibatches are reshuffled every epoch from ``generator``; the learning rate decays linearly to 0;
    ``clip`` > 0 clips the gradient norm. ``schedule_epochs`` (default ``epochs``) sets the length of the
    linear decay, so that a run cut short follows the paper's schedule.
    """
    horizon = schedule_epochs or epochs
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda e: 1 - e / horizon)
    ev = evaluate(net, data.x_test, data.y_test, device=device)
    acc, tloss, rate, train_loss = [ev.accuracy], [ev.loss], [ev.spike_rate], [math.nan]
    diverged = False
    x_all, y_all = torch.from_numpy(data.x_train).to(device), torch.from_numpy(data.y_train).to(device)
    for _ in range(epochs):
        running = math.nan
        if not diverged:
            order = torch.randperm(len(x_all), generator=generator)
            running = 0.0
            for start in range(0, len(order), batch_size):
                idx = order[start:start + batch_size]
                yb = y_all[idx]
                loss = sequence_nll(net(x_all[idx].transpose(0, 1)).readout, yb.t() if yb.dim() == 2 else yb)
                if not torch.isfinite(loss):
                    diverged, running = True, math.nan
                    break
                opt.zero_grad()
                loss.backward()
                if clip > 0:
                    torch.nn.utils.clip_grad_norm_(net.parameters(), clip)
                opt.step()
                running += loss.item() * len(idx) / len(order)
            sched.step()
            ev = evaluate(net, data.x_test, data.y_test, device=device)
        train_loss.append(running)
        acc.append(ev.accuracy)
        tloss.append(ev.loss)
        rate.append(ev.spike_rate)
    return TrainHistory(acc, tloss, rate, train_loss, diverged)


def epochs_to_fraction(accuracy: list[float], fraction: float = 0.95) -> int:
    """First epoch at which the accuracy curve reaches ``fraction`` of its final value (epoch 0 = untrained).

    >>> epochs_to_fraction([0.1, 0.5, 0.9, 0.96, 1.0])
    3
    """
    target = fraction * accuracy[-1]
    return int(next(i for i, a in enumerate(accuracy) if a >= target))

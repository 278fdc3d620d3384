"""Diffusion purification (the paper's Sec. 4): a DDPM over x = [s; a] trained on the optimal set only,
then each imperfect x_s diffused to the inverse point i_r and denoised back to 0.

1. Train (Eq. 3 of the paper, DDPM's L_simple): min_phi E_{x_0 in D_o, eps, i} || eps - eps_phi(
   sqrt(alphabar_i) x_0 + sqrt(1 - alphabar_i) eps, i) ||^2.
2. Purify (Eq. 5-6): xhat_{i_r} = sqrt(alphabar_{i_r}) x_s + sqrt(1 - alphabar_{i_r}) eps, then the
   ancestral steps xhat_{i-1} = (xhat_i - beta_i / sqrt(1 - alphabar_i) eps_phi(xhat_i, i)) / sqrt(alpha_i)
   + sqrt(beta_i) z down to xhat_0 (:mod:`icml24.common.diffusion`).

Two purifiers share this procedure and differ where the official code differs from the paper's text:

* the paper's (``official=False``): eps_phi(x_i, i) sees the step (sinusoidal embedding, ``time_dim``;
  0 gives a step-blind network), x is z-scored by D_o's mean and std, and the network purifies in
  evaluation mode;
* the official code's (``official=True``, :class:`OfficialEps`): the network never sees the step, x stays
  in raw units, each hidden layer is Linear -> BatchNorm (one module shared by every layer) -> ReLU ->
  dropout, and purification runs with the network in training mode (the official code never calls
  ``.eval()``): batch norm normalises by the statistics of the batch being purified and dropout stays on.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch
from torch import nn

from icml24.common.diffusion import EpsMLP, Schedule, ddpm_loss, linear_schedule, q_sample, reverse
from icml24.common.optim import FlatAdam

__all__ = ["DDPMConfig", "OfficialEps", "Purifier", "fit_purifier"]


class DDPMConfig(NamedTuple):
    """The diffusion model's network, schedule and optimiser."""

    T: int          # diffusion steps (linear beta from 1e-4 to 0.02)
    hidden: int     # width of the epsilon-network's hidden layers
    layers: int     # hidden layers
    time_dim: int   # size of the step embedding (0: the network never sees the step)
    steps: int      # Adam steps
    batch: int      # pairs per step (the whole optimal set when smaller)
    lr: float       # Adam learning rate
    official: bool = False   # the official code's purifier (module docstring)
    dropout: float = 0.0     # dropout of the official network's hidden layers


class OfficialEps(nn.Module):
    """The official code's epsilon-network (module docstring): ``layers`` hidden layers of ``hidden`` units,
    each Linear -> BatchNorm1d (one module shared by all) -> ReLU -> Dropout, then Linear; the step is ignored."""

    def __init__(self, dim: int, hidden: int, layers: int, dropout: float):
        super().__init__()
        self.hidden = nn.ModuleList([nn.Linear(dim if k == 0 else hidden, hidden) for k in range(layers)])
        self.norm = nn.BatchNorm1d(hidden)
        self.drop = nn.Dropout(dropout)
        self.out = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:   # (n, d), (n,) unused -> (n, d)
        for layer in self.hidden:
            x = self.drop(torch.relu(self.norm(layer(x))))
        return self.out(x)


class Purifier(NamedTuple):
    """A trained epsilon-network, its schedule, the scaling of x = [s; a] it works in (identity for the
    official purifier) and whether it purifies in training mode (the official code)."""

    model: nn.Module
    schedule: Schedule
    mean: np.ndarray    # (d,)
    std: np.ndarray     # (d,)
    train_mode: bool = False

    def scale(self, x: np.ndarray) -> np.ndarray:
        return (x - self.mean) / self.std

    def unscale(self, z: np.ndarray) -> np.ndarray:
        return z * self.std + self.mean

    @torch.no_grad()
    def purify(self, x: np.ndarray, i_r: int, generator: torch.Generator) -> np.ndarray:
        """xhat_0 of each row of ``x`` (n, d) (module docstring, 2); ``i_r`` = 0 returns ``x``."""
        if i_r == 0:
            return x.copy()
        dev = next(self.model.parameters()).device
        self.model.train(self.train_mode)
        z = torch.as_tensor(self.scale(x), dtype=torch.float32, device=dev)                # (n, d)
        eps = torch.randn(z.shape, generator=generator).to(dev)
        t = torch.full((len(z),), i_r, dtype=torch.long, device=dev)
        z = reverse(self.model, self.schedule, q_sample(self.schedule, z, t, eps), i_r, generator)
        return self.unscale(z.cpu().numpy().astype(np.float64))


def fit_purifier(x_opt: np.ndarray, cfg: DDPMConfig, generator: torch.Generator, device: str = "cpu") -> Purifier:
    """Train the epsilon-network on the optimal pairs ``x_opt`` (n, d) (module docstring, 1)."""
    d = x_opt.shape[1]
    if cfg.official:
        mean, std = np.zeros(d), np.ones(d)                                 # raw units
        model: nn.Module = OfficialEps(d, cfg.hidden, cfg.layers, cfg.dropout).to(device)
    else:
        mean, std = x_opt.mean(0), x_opt.std(0) + 1e-6                     # z-scored by D_o
        model = EpsMLP(d, cfg.hidden, cfg.layers, cfg.time_dim).to(device)
    schedule = linear_schedule(cfg.T)
    X = torch.as_tensor((x_opt - mean) / std, dtype=torch.float32, device=device)
    opt = FlatAdam(model.parameters(), lr=cfg.lr)
    batch = min(cfg.batch, len(X))
    model.train()
    for _ in range(cfg.steps):
        idx = torch.randperm(len(X), generator=generator)[:batch].to(device)
        loss = ddpm_loss(model, schedule, X[idx], generator)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return Purifier(model.train(cfg.official), schedule, mean, std, cfg.official)

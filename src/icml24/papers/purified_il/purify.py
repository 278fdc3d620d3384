"""Diffusion purification (the paper's Sec. 4): a DDPM over x = [s; a] trained on the optimal set only,
then each imperfect x_s diffused to the inverse point i_r and denoised back to 0.

1. Train (Eq. 3 of the paper, DDPM's L_simple): min_phi E_{x_0 in D_o, eps, i} || eps - eps_phi(
   sqrt(alphabar_i) x_0 + sqrt(1 - alphabar_i) eps, i) ||^2, on x z-scored by D_o's mean and std.
2. Purify (Eq. 5-6): xhat_{i_r} = sqrt(alphabar_{i_r}) x_s + sqrt(1 - alphabar_{i_r}) eps, then the
   ancestral steps xhat_{i-1} = (xhat_i - beta_i / sqrt(1 - alphabar_i) eps_phi(xhat_i, i)) / sqrt(alpha_i)
   + sqrt(beta_i) z down to xhat_0 (:mod:`icml24.common.diffusion`).

The purification error of Theorems 2-4 is E || xhat_0 - x_o ||_2 with x_o = [s; pi*(s)] the clean pair
of x_s, measured here in the z-scored space the model works in.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from icml24.common.diffusion import EpsMLP, Schedule, ddpm_loss, linear_schedule, q_sample, reverse

__all__ = ["DDPMConfig", "Purifier", "fit_purifier"]


class DDPMConfig(NamedTuple):
    """The diffusion model's network, schedule and optimiser."""

    T: int          # diffusion steps (linear beta from 1e-4 to 0.02)
    hidden: int     # width of the epsilon-network's hidden layers
    layers: int     # hidden layers
    time_dim: int   # size of the step embedding (0: the network never sees the step)
    steps: int      # Adam steps
    batch: int      # pairs per step (the whole optimal set when smaller)
    lr: float       # Adam learning rate


class Purifier(NamedTuple):
    """A trained epsilon-network, its schedule and the z-scoring of x = [s; a]."""

    model: EpsMLP
    schedule: Schedule
    mean: np.ndarray    # (d,)
    std: np.ndarray     # (d,)

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
        z = torch.as_tensor(self.scale(x), dtype=torch.float32, device=dev)                # (n, d)
        eps = torch.randn(z.shape, generator=generator).to(dev)
        t = torch.full((len(z),), i_r, dtype=torch.long, device=dev)
        z = reverse(self.model, self.schedule, q_sample(self.schedule, z, t, eps), i_r, generator)
        return self.unscale(z.cpu().numpy().astype(np.float64))


def fit_purifier(x_opt: np.ndarray, cfg: DDPMConfig, generator: torch.Generator, device: str = "cpu") -> Purifier:
    """Train the epsilon-network on the optimal pairs ``x_opt`` (n, d) (module docstring, 1)."""
    mean, std = x_opt.mean(0), x_opt.std(0) + 1e-6
    schedule = linear_schedule(cfg.T)
    model = EpsMLP(x_opt.shape[1], cfg.hidden, cfg.layers, cfg.time_dim).to(device)
    X = torch.as_tensor((x_opt - mean) / std, dtype=torch.float32, device=device)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    batch = min(cfg.batch, len(X))
    model.train()
    for _ in range(cfg.steps):
        idx = torch.randperm(len(X), generator=generator)[:batch].to(device)
        loss = ddpm_loss(model, schedule, X[idx], generator)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return Purifier(model.eval(), schedule, mean, std)

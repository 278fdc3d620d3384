"""Shared denoising-diffusion pieces (DDPM, Ho, Jain & Abbeel 2020) for vectors: the noise schedule,
the forward marginal, the epsilon-prediction loss, the ancestral reverse step, and a time-conditioned
MLP epsilon-network.

Notation (Ho et al. 2020; the paper of purified_il writes i for the step): steps t = 1 ... T with
variances beta_t, alpha_t = 1 - beta_t, alphabar_t = prod_{s <= t} alpha_s, and alphabar_0 = 1, so that
the tensors of :class:`Schedule` are indexed by t directly (entry 0 is the clean data).

* forward marginal (Eq. 4): q(x_t | x_0) = N(sqrt(alphabar_t) x_0, (1 - alphabar_t) I);
* loss (Eq. 14, "L_simple"): E_{x_0, eps, t ~ U{1..T}} || eps - eps_phi(sqrt(alphabar_t) x_0 +
  sqrt(1 - alphabar_t) eps, t) ||^2;
* ancestral step (Algorithm 2): x_{t-1} = (x_t - beta_t / sqrt(1 - alphabar_t) eps_phi(x_t, t)) /
  sqrt(alpha_t) + sigma_t z with sigma_t^2 = beta_t and z = 0 at t = 1.

Everything takes an explicit ``torch.Generator`` (no global random state); draws are made on the
generator's device and moved to the data's, so a CPU generator gives the same noise on every device.
"""

from __future__ import annotations

import math
from typing import NamedTuple, Protocol

import torch
from torch import nn

from icml24.common.nn import relu_mlp

__all__ = ["Schedule", "linear_schedule", "q_sample", "ddpm_loss", "p_step", "reverse", "time_embedding",
           "EpsMLP", "EpsModel"]


class EpsModel(Protocol):
    """An epsilon-network: noisy data (n, d) and integer steps (n,) -> predicted noise (n, d)."""

    def __call__(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor: ...


class Schedule(NamedTuple):
    """A DDPM noise schedule, indexed by the step t = 0 ... T (entry 0: no noise)."""

    betas: torch.Tensor       # (T + 1,) beta_t, beta_0 = 0
    alphas: torch.Tensor      # (T + 1,) alpha_t = 1 - beta_t
    alpha_bar: torch.Tensor   # (T + 1,) alphabar_t = prod_{s <= t} alpha_s, alphabar_0 = 1

    @property
    def T(self) -> int:
        return len(self.betas) - 1


def linear_schedule(T: int = 1000, beta_1: float = 1e-4, beta_T: float = 0.02) -> Schedule:
    """Ho et al.'s linear schedule beta_t from ``beta_1`` to ``beta_T`` (float64).

    >>> s = linear_schedule(1000)
    >>> s.T, float(s.alpha_bar[0]), round(float(s.betas[1]), 6), round(float(s.betas[1000]), 6)
    (1000, 1.0, 0.0001, 0.02)
    """
    if T < 1:
        raise ValueError(f"T must be >= 1, got {T}")
    if not 0 < beta_1 <= beta_T < 1:
        raise ValueError(f"need 0 < beta_1 <= beta_T < 1, got {beta_1}, {beta_T}")
    betas = torch.cat([torch.zeros(1, dtype=torch.float64), torch.linspace(beta_1, beta_T, T, dtype=torch.float64)])
    alphas = 1.0 - betas
    return Schedule(betas, alphas, torch.cumprod(alphas, 0))


def q_sample(schedule: Schedule, x0: torch.Tensor, t: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
    """x_t = sqrt(alphabar_t) x_0 + sqrt(1 - alphabar_t) eps (Eq. 4); x0, noise (n, d), t (n,) integers."""
    ab = schedule.alpha_bar.to(device=x0.device, dtype=x0.dtype)[t][:, None]   # (n, 1)
    return ab.sqrt() * x0 + (1.0 - ab).sqrt() * noise


def ddpm_loss(model: EpsModel, schedule: Schedule, x0: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """L_simple (Eq. 14): mean over the batch and dimensions of (eps - eps_phi(x_t, t))^2, t ~ U{1..T}."""
    n = len(x0)
    t = torch.randint(1, schedule.T + 1, (n,), generator=generator, device=generator.device).to(x0.device)
    eps = torch.randn(x0.shape, generator=generator, dtype=x0.dtype, device=generator.device).to(x0.device)
    return torch.mean((eps - model(q_sample(schedule, x0, t, eps), t)) ** 2)


def p_step(model: EpsModel, schedule: Schedule, x: torch.Tensor, t: int, generator: torch.Generator) -> torch.Tensor:
    """One ancestral step x_t -> x_{t-1} (Algorithm 2), sigma_t^2 = beta_t, no noise at t = 1."""
    beta, alpha, ab = (float(v[t]) for v in (schedule.betas, schedule.alphas, schedule.alpha_bar))
    steps = torch.full((len(x),), t, dtype=torch.long, device=x.device)
    mean = (x - beta / math.sqrt(1.0 - ab) * model(x, steps)) / math.sqrt(alpha)
    if t == 1:
        return mean
    z = torch.randn(x.shape, generator=generator, dtype=x.dtype, device=generator.device).to(x.device)
    return mean + math.sqrt(beta) * z


@torch.no_grad()
def reverse(model: EpsModel, schedule: Schedule, x: torch.Tensor, t_from: int,
            generator: torch.Generator) -> torch.Tensor:
    """Ancestral denoising of x_{t_from} down to x_0 (``t_from`` = 0 returns ``x`` unchanged)."""
    if not 0 <= t_from <= schedule.T:
        raise ValueError(f"t_from must be in [0, {schedule.T}], got {t_from}")
    for t in range(t_from, 0, -1):
        x = p_step(model, schedule, x, t, generator)
    return x


def time_embedding(t: torch.Tensor, dim: int, max_period: float = 10_000.0) -> torch.Tensor:
    """Sinusoidal embedding of integer steps (n,) -> (n, dim) (Vaswani et al. 2017; DDPM's time input).

    >>> time_embedding(torch.tensor([0]), 4).tolist()     # sin(0) = 0, cos(0) = 1
    [[0.0, 0.0, 1.0, 1.0]]
    """
    if dim % 2:
        raise ValueError(f"dim must be even, got {dim}")
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(half, dtype=torch.float32, device=t.device) / half)
    angles = t.float()[:, None] * freqs[None]                              # (n, half)
    return torch.cat([torch.sin(angles), torch.cos(angles)], 1)


class EpsMLP(nn.Module):
    """eps_phi(x, t): an MLP on [x, embedding(t)] (``time_dim`` = 0: on x alone, ignoring t).

    ``time_dim = 0`` is the variant of official codes whose network never sees the step.
    """

    def __init__(self, dim: int, hidden: int = 256, layers: int = 3, time_dim: int = 32):
        super().__init__()
        self.time_dim = time_dim
        self.net = relu_mlp(dim + time_dim, hidden, layers, dim)

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:   # (n, d), (n,) -> (n, d)
        if self.time_dim:
            x = torch.cat([x, time_embedding(t, self.time_dim).to(x.dtype)], 1)
        return self.net(x)

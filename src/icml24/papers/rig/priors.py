"""Scene priors trained on clean scene latents only (RIG Sec. 4): a RealNVP flow (Dinh et al. 2017; the prior of
ProbNeRF) and a latent DDPM through the shared diffusion block (the prior ReGAL samples from).

RealNVP: f = f_L o ... o f_1 maps a latent x to a standard normal u; each affine coupling keeps the masked half
x_a and maps the other half x_b -> x_b * exp(s(x_a)) + t(x_a) (Dinh et al. Eq. 4-6), log|det df/dx| = sum s(x_a);
log p(x) = log N(f(x); 0, I) + sum_l log|det df_l| (Eq. 3). Scales s = scale * tanh(raw) keep it stable.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import nn

from icml24.common.diffusion import EpsMLP, ddpm_loss, linear_schedule


class Coupling(nn.Module):
    """One affine coupling layer: x_b -> x_b exp(s(x_a)) + t(x_a) where mask = 1 marks x_a."""

    mask: torch.Tensor

    def __init__(self, dim: int, mask: torch.Tensor, hidden: int):
        super().__init__()
        self.register_buffer("mask", mask)
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                 nn.Linear(hidden, 2 * dim))
        self.scale = nn.Parameter(torch.ones(dim))

    def _st(self, xa: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        raw_s, t = self.net(xa).chunk(2, -1)
        keep = 1 - self.mask
        return self.scale * torch.tanh(raw_s) * keep, t * keep

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x (n, d) -> (y, log|det dy/dx| (n,))."""
        s, t = self._st(x * self.mask)
        return x * torch.exp(s) + t, s.sum(-1)

    def inverse(self, y: torch.Tensor) -> torch.Tensor:
        s, t = self._st(y * self.mask)
        return (y - t) * torch.exp(-s)


class RealNVP(nn.Module):
    """A RealNVP density over R^dim: alternating even/odd and first/second-half masks.

    >>> flow = RealNVP(4, layers=2, hidden=8)
    >>> x = torch.randn(3, 4)
    >>> torch.allclose(flow.inverse(flow.forward(x)[0]), x, atol=1e-5)
    True
    """

    def __init__(self, dim: int, layers: int = 6, hidden: int = 64):
        super().__init__()
        masks = []
        for k in range(layers):
            if k % 4 < 2:
                m = (torch.arange(dim) % 2 == k % 2).float()
            else:
                m = ((torch.arange(dim) < dim // 2) == (k % 2 == 0)).float()
            masks.append(m)
        self.layers = nn.ModuleList(Coupling(dim, m, hidden) for m in masks)
        self.dim = dim

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """u = f(x) and log|det df/dx|; x (n, d)."""
        logdet = torch.zeros(x.shape[0], dtype=x.dtype)
        for layer in self.layers:
            x, ld = layer(x)
            logdet = logdet + ld
        return x, logdet

    def inverse(self, u: torch.Tensor) -> torch.Tensor:
        for layer in reversed(self.layers):
            assert isinstance(layer, Coupling)
            u = layer.inverse(u)
        return u

    def log_prob(self, x: torch.Tensor) -> torch.Tensor:
        """log p(x) = log N(f(x); 0, I) + log|det df/dx| (Dinh et al. Eq. 3); x (..., d) -> (...)."""
        shape = x.shape[:-1]
        u, ld = self.forward(x.reshape(-1, self.dim))
        lp = -0.5 * (u ** 2).sum(-1) - 0.5 * self.dim * math.log(2 * math.pi) + ld
        return lp.reshape(shape)

    def sample(self, n: int, generator: torch.Generator) -> torch.Tensor:
        return self.inverse(torch.randn(n, self.dim, generator=generator))


class Standardise(NamedTuple):
    """x = (z - mean) / std: the scene latent the priors see (fixed from the clean training data)."""

    mean: torch.Tensor   # (12,)
    std: torch.Tensor    # (12,)

    def to_z(self, x: torch.Tensor) -> torch.Tensor:
        return self.mean + self.std * x

    def to_x(self, z: torch.Tensor) -> torch.Tensor:
        return (z - self.mean) / self.std


class PriorConfig(NamedTuple):
    """How the two priors are trained (all from Config)."""

    flow_layers: int
    flow_hidden: int
    flow_steps: int
    ddpm_T: int
    ddpm_hidden: int
    ddpm_layers: int
    ddpm_steps: int
    batch: int
    lr: float


def _seeded(generator: torch.Generator, factory, *args):
    """``factory(*args)`` with the default initialisation drawn from a seed taken from ``generator``, inside a
    forked scope that leaves torch's global generator as it was."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(torch.randint(0, 2 ** 31 - 1, (1,), generator=generator)))
        return factory(*args)


def train_flow(x: torch.Tensor, pc: PriorConfig, generator: torch.Generator) -> RealNVP:
    """Maximum likelihood fit of a RealNVP to the clean latents x (n, d) by Adam (cosine decay)."""
    flow = _seeded(generator, RealNVP, x.shape[1], pc.flow_layers, pc.flow_hidden)
    opt = torch.optim.Adam(flow.parameters(), lr=pc.lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda k: 0.5 * (1 + math.cos(math.pi * k / pc.flow_steps)))
    for _ in range(pc.flow_steps):
        idx = torch.randint(0, len(x), (min(pc.batch, len(x)),), generator=generator)
        loss = -flow.log_prob(x[idx]).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
    return flow.requires_grad_(False).eval()


def train_ddpm(x: torch.Tensor, pc: PriorConfig, generator: torch.Generator) -> EpsMLP:
    """L_simple (DDPM Eq. 14) on the clean latents x (n, d), linear schedule with T = ``ddpm_T``."""
    net = _seeded(generator, EpsMLP, x.shape[1], pc.ddpm_hidden, pc.ddpm_layers, 32)
    schedule = linear_schedule(pc.ddpm_T)
    opt = torch.optim.Adam(net.parameters(), lr=pc.lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda k: 0.5 * (1 + math.cos(math.pi * k / pc.ddpm_steps)))
    for _ in range(pc.ddpm_steps):
        idx = torch.randint(0, len(x), (min(pc.batch, len(x)),), generator=generator)
        loss = ddpm_loss(net, schedule, x[idx], generator)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
    return net.requires_grad_(False).eval()

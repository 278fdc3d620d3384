"""The forward transition models ETM is compared with (Chen et al., ICML 2024, Sec. 5 baselines).

* :class:`GaussianEnsemble` - the usual model of model-based offline RL (PETS / MBPO / MOPO, as in
  OfflineRL-Kit's ``EnsembleDynamics``): E independently initialised MLPs, each giving a diagonal
  Gaussian N(mu(s, a), diag exp(logvar(s, a))) over the z-scored target Delta = [s' - s, r], trained by
  Gaussian negative log-likelihood with soft upper and lower bounds on logvar (learned, with the
  0.01 (max - min) regulariser of Chua et al. 2018); a point prediction is the mean over members of
  their means (our choice for a deterministic evaluation; MOPO samples one member per step);
* :class:`DeterministicMLP` - one MLP trained by mean squared error.

Both take z-scored [s, a] and z-scored targets and predict Delta in data units, like :class:`ETM`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from icml24.common.nn import relu_mlp
from icml24.papers.etm.energy import Scalers

__all__ = ["ForwardConfig", "GaussianEnsemble", "DeterministicMLP"]


@dataclass(frozen=True)
class ForwardConfig:
    """Training settings of a forward model."""

    hidden: int = 200
    layers: int = 4
    members: int = 5           # ensemble size (GaussianEnsemble only)
    lr: float = 1e-3
    weight_decay: float = 1e-4
    batch: int = 256
    steps: int = 1000


class _Model:
    """Shared fitting loop: z-scored inputs and targets, Adam, ``cfg.steps`` random batches."""

    def __init__(self, cfg: ForwardConfig, device: str):
        self.cfg, self.device = cfg, device
        self.x_scale: Scalers | None = None
        self.t_mean = self.t_std = np.zeros(0)

    def _loss(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def _mean(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def parameters(self):
        raise NotImplementedError

    def fit(self, x: np.ndarray, target: np.ndarray, generator: torch.Generator,
            checkpoint: Callable[[int], None] | None = None) -> list[float]:
        """Train on x (n, x_dim), Delta (n, d); returns the per-step loss; ``checkpoint(k)`` is called after
        the k-th step (as :meth:`ETM.fit`)."""
        self.x_scale = Scalers.fit(x, target)
        self.t_mean, std = target.mean(0), target.std(0)
        self.t_std = np.where(std < 1e-12, 1.0, std)
        xs = self.x_scale.x(x, self.device)
        ts = torch.as_tensor((target - self.t_mean) / self.t_std, dtype=torch.float32, device=self.device)
        opt = torch.optim.Adam(self.parameters(), lr=self.cfg.lr, weight_decay=self.cfg.weight_decay)
        trace = []
        for _ in range(self.cfg.steps):
            idx = torch.randint(len(xs), (min(self.cfg.batch, len(xs)),), generator=generator).to(self.device)
            opt.zero_grad()
            loss = self._loss(xs[idx], ts[idx])
            loss.backward()
            opt.step()
            trace.append(float(loss.detach()))
            if checkpoint is not None:
                checkpoint(len(trace))
        return trace

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Delta (n, d) in data units."""
        assert self.x_scale is not None, "fit the model first"
        with torch.no_grad():
            z = self._mean(self.x_scale.x(x, self.device)).double().cpu().numpy()
        return z * self.t_std + self.t_mean


class GaussianEnsemble(_Model):
    """E Gaussian MLPs (module docstring)."""

    def __init__(self, x_dim: int, target_dim: int, cfg: ForwardConfig, device: str = "cpu"):
        super().__init__(cfg, device)
        self.d = target_dim
        self.nets = nn.ModuleList(relu_mlp(x_dim, cfg.hidden, cfg.layers, 2 * target_dim)
                                  for _ in range(cfg.members)).to(device)
        self.max_logvar = nn.Parameter(torch.full((target_dim,), 0.5, device=device))
        self.min_logvar = nn.Parameter(torch.full((target_dim,), -10.0, device=device))

    def parameters(self):
        return [*self.nets.parameters(), self.max_logvar, self.min_logvar]

    def gaussians(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-member mean and log-variance of the z-scored target, each (E, n, d)."""
        out = torch.stack([net(x) for net in self.nets])                  # (E, n, 2d)
        mu, logvar = out[..., :self.d], out[..., self.d:]
        logvar = self.max_logvar - F.softplus(self.max_logvar - logvar)   # soft bounds (PETS, App. A.1)
        logvar = self.min_logvar + F.softplus(logvar - self.min_logvar)
        return mu, logvar

    def _loss(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        mu, logvar = self.gaussians(x)
        nll = ((mu - t) ** 2 * torch.exp(-logvar) + logvar).mean((1, 2)).sum()   # Gaussian NLL per member
        return nll + 0.01 * (self.max_logvar.sum() - self.min_logvar.sum())

    def _mean(self, x: torch.Tensor) -> torch.Tensor:
        return self.gaussians(x)[0].mean(0)


class DeterministicMLP(_Model):
    """One MLP trained by mean squared error on the z-scored target."""

    def __init__(self, x_dim: int, target_dim: int, cfg: ForwardConfig, device: str = "cpu"):
        super().__init__(cfg, device)
        self.net = relu_mlp(x_dim, cfg.hidden, cfg.layers, target_dim).to(device)

    def parameters(self):
        return self.net.parameters()

    def _loss(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return F.mse_loss(self.net(x), t)

    def _mean(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)

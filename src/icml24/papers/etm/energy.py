"""The energy-based transition model (ETM) of Chen et al. (ICML 2024, Sec. 4).

A scalar energy E_theta(s, a, Delta) over a transition's target Delta = [s' - s, r] (with the reward,
``with_reward``) is trained so that the observed target has the least energy among Langevin negatives
(InfoNCE, Eq. 4), with a margin penalty on the target gradient of the energy that keeps the landscape
smooth enough for gradient-based sampling; the model predicts by Langevin *descent* on the energy from
Delta = 0 (Eq. 5, noise 0). The recipe is implicit behaviour cloning's (Florence et al. 2021); the
hyperparameters below are those of the official code (``offlinerlkit/dynamics/etm_dynamics.py``,
``modules/etm_module.py``), whose formulas are restated here, not copied:

* inputs: [s, a] z-scored; targets *box-normalised*: Delta / max_i |Delta_i| per dimension (no centring),
  so the data lie in [-1, 1] and the sampler works in the box [-1.1, 1.1];
* a Langevin step (``langevin``):
  Delta <- clamp(Delta - clip(eta_k (0.5 clip(grad_Delta E, +-g) + sigma xi), +-d), +-1.1), xi ~ N(0, I),
  eta_k = (eta_0 - eta_K)(1 - k / (K - 1))^2 + eta_K (polynomial schedule, eta_0 = 0.1, eta_K = 1e-3);
  training negatives: K = 50, sigma = 0.5, g = 10, d = 0.5 from Delta ~ U[-1, 1]^d; prediction: K = 100,
  sigma = 0, g = 0.5, d = 0.5 from Delta = 0;
* loss per sample: -log softmax(-E / tau) at the positive over [N negatives, positive] plus the gradient
  penalty mean_j max(0, ||grad_Delta E(s, a, Delta_j)|| - M)^2 over all N + 1 targets; summed over the batch.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, NamedTuple

import numpy as np
import torch
from torch import nn

from icml24.common.nn import relu_mlp

__all__ = ["EnergyNet", "Scalers", "LangevinConfig", "TRAIN_SAMPLER", "PREDICT_SAMPLER", "step_sizes", "energy_grad", "langevin",
           "info_nce", "grad_penalty", "ETMConfig", "ETMLoss", "ETM", "EnsemblePrediction", "ETMEnsemble"]

BOX = 1.1  # the sampler's clamp ("margin_clip"): predictions stay within 1.1x the largest |Delta| in the data


class EnergyNet(nn.Module):
    """E_theta(x, Delta): an MLP on concat(x, Delta) with a scalar output, x = z-scored [s, a]."""

    def __init__(self, x_dim: int, target_dim: int, hidden: int = 200, layers: int = 4):
        super().__init__()
        self.net = relu_mlp(x_dim + target_dim, hidden, layers, 1)

    def forward(self, x: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """x (..., x_dim), target (..., target_dim) -> energy (...)."""
        return self.net(torch.cat([x, target], -1)).squeeze(-1)

    def target_grad(self, x: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """grad_Delta of the summed energy, (..., target_dim), by the chain rule through the ReLU MLP without
        an autograd graph: the ops autograd runs for it (ReLU's threshold backward, a product with each
        weight, the input's slice), so the same numbers bit for bit (tests/papers/test_etm.py), in about 0.7 of
        the time of ``torch.autograd.grad`` at the training sampler's size (etm README); no graph is built."""
        *hidden, last = self.net
        assert isinstance(last, nn.Linear)                               # relu_mlp's output layer
        with torch.no_grad():
            h, outs = torch.cat([x, target], -1), []
            for linear, relu in zip(hidden[::2], hidden[1::2]):
                h = relu(linear(h))                                      # (..., hidden)
                outs.append(h)
            g = last.weight[0].expand(*h.shape)                          # d(sum E)/dh of the last hidden layer
            for linear, out in zip(reversed(hidden[::2]), reversed(outs)):
                g = torch.ops.aten.threshold_backward(g, out, 0) @ linear.weight   # ReLU's backward, then W^T
        return g[..., x.shape[-1]:]


class Scalers(NamedTuple):
    """Input z-scoring and target box normalisation, fitted on the training data."""

    x_mean: np.ndarray    # (x_dim,)
    x_std: np.ndarray     # (x_dim,)
    box: np.ndarray       # (target_dim,) max_i |Delta_i| (1 where that is 0)

    @classmethod
    def fit(cls, x: np.ndarray, target: np.ndarray) -> "Scalers":
        std = x.std(0)
        box = np.abs(target).max(0)
        return cls(x.mean(0), np.where(std < 1e-12, 1.0, std), np.where(box < 1e-12, 1.0, box))

    def x(self, x: np.ndarray, device: str = "cpu") -> torch.Tensor:
        return torch.as_tensor((x - self.x_mean) / self.x_std, dtype=torch.float32, device=device)


@dataclass(frozen=True)
class LangevinConfig:
    """One Langevin sampler (module docstring)."""

    iters: int            # K
    noise: float          # sigma
    grad_clip: float      # g: element-wise clip of grad_Delta E
    delta_clip: float     # d: element-wise clip of the move
    eta_init: float = 0.1     # eta_0
    eta_final: float = 1e-3   # eta_K


TRAIN_SAMPLER = LangevinConfig(iters=50, noise=0.5, grad_clip=10.0, delta_clip=0.5)
PREDICT_SAMPLER = LangevinConfig(iters=100, noise=0.0, grad_clip=0.5, delta_clip=0.5)


def step_sizes(cfg: LangevinConfig) -> np.ndarray:
    """eta_k, k = 0..K-1, of the polynomial schedule (power 2).

    >>> step_sizes(LangevinConfig(iters=3, noise=0, grad_clip=1, delta_clip=1, eta_init=0.1, eta_final=0.0)).round(4)
    array([0.1  , 0.025, 0.   ])
    """
    k = np.arange(cfg.iters)
    return (cfg.eta_init - cfg.eta_final) * (1 - k / max(cfg.iters - 1, 1)) ** 2 + cfg.eta_final


def energy_grad(energy: Callable[[torch.Tensor], torch.Tensor]) -> Callable[[torch.Tensor], torch.Tensor]:
    """The gradient of any ``energy`` (targets (..., d) -> energies (...)) by autograd, for ``langevin``:
    grad_Delta sum E, (..., d). (The ETM uses ``EnergyNet.target_grad``, the same numbers without a graph.)"""
    def grad(delta: torch.Tensor) -> torch.Tensor:
        delta = delta.detach().requires_grad_(True)
        return torch.autograd.grad(energy(delta).sum(), delta)[0]
    return grad


def langevin(grad_energy: Callable[[torch.Tensor], torch.Tensor], start: torch.Tensor, cfg: LangevinConfig,
             generator: torch.Generator | None = None) -> torch.Tensor:
    """Run ``cfg.iters`` Langevin steps from ``start`` on the energy whose gradient ``grad_energy`` gives
    (targets (..., d) -> grad_Delta of the summed energies, (..., d); ``energy_grad`` makes one of an energy).

    Returns the detached final targets, shape of ``start``. Noise is drawn on the CPU from ``generator``
    and moved to ``start``'s device, so a run gives the same draws on every device.
    """
    delta = start.detach()
    for eta in step_sizes(cfg):
        grad = grad_energy(delta)
        drift = 0.5 * grad.clamp(-cfg.grad_clip, cfg.grad_clip)
        if cfg.noise > 0:
            drift = drift + cfg.noise * torch.randn(delta.shape, generator=generator).to(delta.device)
        delta = (delta.detach() - (float(eta) * drift).clamp(-cfg.delta_clip, cfg.delta_clip)).clamp(-BOX, BOX)
    return delta.detach()


def info_nce(energies: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """Per-sample InfoNCE loss, energies (B, N + 1) with the positive in the last column -> (B,).

    -log [exp(-E_pos / tau) / sum_j exp(-E_j / tau)] (Eq. 4).

    >>> round(float(info_nce(torch.zeros(1, 4))[0]), 6) == round(float(np.log(4)), 6)
    True
    """
    logits = -energies / temperature
    return -(logits[:, -1] - torch.logsumexp(logits, dim=-1))


def grad_penalty(net: EnergyNet, x: torch.Tensor, targets: torch.Tensor, margin: float) -> torch.Tensor:
    """mean_j max(0, ||grad_Delta E(x, Delta_j)|| - M)^2 per sample; x (B, x_dim), targets (B, N+1, d) -> (B,).

    Built with ``create_graph`` so that the penalty is differentiable in theta.
    """
    t = targets.detach().requires_grad_(True)
    e = net(x[:, None, :].expand(-1, t.shape[1], -1), t)                 # (B, N+1)
    (g,) = torch.autograd.grad(e.sum(), t, create_graph=True)            # (B, N+1, d)
    return (g.norm(dim=-1) - margin).clamp(min=0).pow(2).mean(1)


@dataclass(frozen=True)
class ETMConfig:
    """Training and prediction settings of one energy transition model."""

    hidden: int = 200          # width of the energy MLP (official: 200)
    layers: int = 4            # hidden layers (official: 4)
    negatives: int = 16        # N Langevin negatives per sample
    train_iters: int = 50      # K of the negative sampler
    predict_iters: int = 100   # K of the prediction (descent)
    margin: float = 5.0        # M of the gradient penalty
    temperature: float = 1.0   # tau
    lr: float = 1e-3           # Adam
    weight_decay: float = 1e-4
    batch: int = 1024
    steps: int = 1000          # optimiser steps


class ETMLoss(NamedTuple):
    """The two parts of one batch's loss (summed over the batch)."""

    contrastive: float
    penalty: float


class ETM:
    """An energy transition model fitted to (x, Delta) pairs; ``predict`` returns Delta in data units."""

    def __init__(self, x_dim: int, target_dim: int, cfg: ETMConfig, device: str = "cpu"):
        self.cfg, self.device = cfg, device
        self.net = EnergyNet(x_dim, target_dim, cfg.hidden, cfg.layers).to(device)
        self.scalers: Scalers | None = None

    def loss(self, x: torch.Tensor, target: torch.Tensor, generator: torch.Generator | None = None) -> ETMLoss:
        """Backpropagate one batch's loss (x (B, x_dim), normalised target (B, d)); returns its parts."""
        B, d = target.shape
        N = self.cfg.negatives
        xr = x.repeat_interleave(N, 0)                                   # (B N, x_dim)
        sampler = replace(TRAIN_SAMPLER, iters=self.cfg.train_iters)
        start = (2 * torch.rand(B * N, d, generator=generator) - 1).to(x.device)   # U[-1, 1]^d
        neg = langevin(lambda t: self.net.target_grad(xr, t), start, sampler, generator).reshape(B, N, d)
        targets = torch.cat([neg, target[:, None, :]], 1)               # (B, N+1, d), positive last
        contrastive = info_nce(self.net(x[:, None, :].expand(-1, N + 1, -1), targets), self.cfg.temperature)
        penalty = grad_penalty(self.net, x, targets, self.cfg.margin)
        (contrastive + penalty).sum().backward()
        return ETMLoss(float(contrastive.sum().detach()), float(penalty.sum().detach()))

    def fit(self, x: np.ndarray, target: np.ndarray, generator: torch.Generator,
            checkpoint: Callable[[int], None] | None = None) -> list[float]:
        """Train on x (n, x_dim), Delta (n, d) for ``cfg.steps`` batches; returns the per-step InfoNCE.

        ``checkpoint(k)`` is called after the k-th step (k = 1..steps), e.g. to record a held-out error.
        """
        self.scalers = Scalers.fit(x, target)
        xs = self.scalers.x(x, self.device)
        ts = torch.as_tensor(target / self.scalers.box, dtype=torch.float32, device=self.device)
        opt = torch.optim.Adam(self.net.parameters(), lr=self.cfg.lr, weight_decay=self.cfg.weight_decay)
        n, trace = len(xs), []
        for _ in range(self.cfg.steps):
            idx = torch.randint(n, (min(self.cfg.batch, n),), generator=generator).to(self.device)
            opt.zero_grad()
            trace.append(self.loss(xs[idx], ts[idx], generator).contrastive / len(idx))
            opt.step()
            if checkpoint is not None:
                checkpoint(len(trace))
        return trace

    def predict(self, x: np.ndarray, iters: int | None = None, restarts: int = 0,
                generator: torch.Generator | None = None) -> np.ndarray:
        """Delta (n, d) in data units by noiseless Langevin descent from 0 (Eq. 5; the official rule).

        ``restarts > 0`` (a diagnostic, not the paper's rule) also descends from that many U[-1, 1]^d
        starts per input and keeps, per input, the end point of least energy: it tells a wrong basin of
        the descent from 0 apart from a wrong energy landscape.
        """
        assert self.scalers is not None, "fit the model first"
        xs = self.scalers.x(x, self.device)                              # (n, x_dim)
        n, d = len(xs), len(self.scalers.box)
        cfg = replace(PREDICT_SAMPLER, iters=iters or self.cfg.predict_iters)
        starts = torch.cat([torch.zeros(1, n, d), 2 * torch.rand(restarts, n, d, generator=generator) - 1]).to(self.device)
        xr = xs.expand(1 + restarts, -1, -1)                             # (1 + R, n, x_dim)
        ends = langevin(lambda t: self.net.target_grad(xr, t), starts, cfg)   # (1 + R, n, d)
        with torch.no_grad():
            best = self.net(xr, ends).argmin(0)                          # (n,)
        return ends[best, torch.arange(n, device=self.device)].double().cpu().numpy() * self.scalers.box


class EnsemblePrediction(NamedTuple):
    """One step of an ETM ensemble."""

    delta: np.ndarray     # (n, d) the prediction of a member drawn per input
    members: np.ndarray   # (E, n, d) every member's prediction
    penalty: np.ndarray   # (n,) ||std over members of the predicted s' - s||_2 (MOPO's uncertainty, reward left out)


class ETMEnsemble:
    """E independently initialised ETMs fitted to the same data: EMPO's model (the official
    ``EnsembleEnergyDynamics``): a step uses one member drawn uniformly per input, and the uncertainty
    penalty of MOPO-style offline RL is the norm of the members' standard deviation of s' (not of the reward,
    the last target dimension when ``with_reward``)."""

    def __init__(self, x_dim: int, target_dim: int, cfg: ETMConfig, members: int, device: str = "cpu",
                 with_reward: bool = True):
        self.members = [ETM(x_dim, target_dim, cfg, device) for _ in range(members)]
        self.with_reward = with_reward

    def fit(self, x: np.ndarray, target: np.ndarray, generator: torch.Generator) -> list[list[float]]:
        """Train every member (each from its own initialisation and batches); their InfoNCE traces."""
        return [m.fit(x, target, generator) for m in self.members]

    def predict(self, x: np.ndarray, rng: np.random.Generator, iters: int | None = None) -> EnsemblePrediction:
        preds = np.stack([m.predict(x, iters) for m in self.members])             # (E, n, d)
        pick = rng.integers(len(self.members), size=len(x))
        state = preds[..., :-1] if self.with_reward else preds
        return EnsemblePrediction(preds[pick, np.arange(len(x))], preds, np.linalg.norm(state.std(0), axis=-1))

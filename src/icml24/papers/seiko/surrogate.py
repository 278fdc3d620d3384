"""The surrogate reward and the optimism bonus of SEIKO (Alg. 1, lines 3-4; Sec. 4.1-4.2).

* r_hat: an MLP x -> R whose last layer is linear in a ``features``-dimensional representation phi(x)
  (the official 768 -> 1024 -> 128 -> 64 -> 16 -> 1 on CLIP embeddings is all linear layers; here two SiLU
  hidden layers and a SiLU feature layer of the same width 16), fitted to the noisy feedback of all data
  D_i by Adam on the squared error, keeping the weights of the best validation loss (official: 5% held out).
* UCB (Sec. 4.1): g(x) = min(alpha sqrt(phi(x)^T Sigma^-1 phi(x)), C) with
  ``paper``    Sigma = sum_j phi(x_j) phi(x_j)^T + lambda I  (shrinks like 1/n as the data grow), or
  ``official`` Sigma = Cov(phi) + lambda I, the centred sample covariance divided by n - 1 (``torch.cov``
  in ``aesthetic_scorer.py``: it does not shrink with n).
* Bootstrap (Sec. 4.2): H surrogates, each fitted on a resample of D_i with replacement; the optimistic
  value is the maximum over the heads (official "version 3").
* Thompson sampling (the third oracle beside UCB and bootstrap): the surrogate's weights moved from the fit
  toward a draw from their posterior by Langevin dynamics (SGLD, Welling & Teh 2011):
  theta <- theta - (eps / 2) grad U(theta) + N(0, eps I),
  U = sum_j (y_j - r_theta(x_j))^2 / (2 noise^2) + ||theta||^2 / (2 prior^2), the Gaussian feedback likelihood
  and a Gaussian prior; a short chain is a perturbation of the fit (:func:`sgld`). The official code instead
  adds noise of std 1e-5 sqrt(lr / batch) to the surrogate's training gradients.
"""

from __future__ import annotations

import copy
from typing import Literal, NamedTuple

import numpy as np
import torch
from torch import nn

__all__ = ["RewardMLP", "SurrogateConfig", "fit_reward", "bootstrap_indices", "Ensemble", "fit_ensemble",
           "covariance", "UCB", "seeded", "LangevinConfig", "sgld"]

Covariance = Literal["paper", "official"]


def seeded(seed: int, factory, *args):
    """``factory(*args)`` with torch's global generator seeded by ``seed`` inside a forked scope (the layers'
    default initialisation draws from it), leaving the caller's global state untouched."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return factory(*args)


class RewardMLP(nn.Module):
    """r_hat(x) = w^T phi(x) + b, phi = SiLU(W_3 SiLU(W_2 SiLU(W_1 x))) of width ``features``."""

    def __init__(self, dim: int, hidden: int, features: int):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(dim, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(),
                                   nn.Linear(hidden, features), nn.SiLU())
        self.head = nn.Linear(features, 1)

    def features(self, x: torch.Tensor) -> torch.Tensor:     # (n, d) -> (n, features)
        return self.trunk(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:      # (n, d) -> (n,)
        return self.head(self.trunk(x))[:, 0]


class SurrogateConfig(NamedTuple):
    """How a surrogate is built and fitted."""

    hidden: int            # hidden width
    features: int          # width of phi (official: 16)
    steps: int             # Adam steps (full batch up to ``batch`` points, else minibatches)
    batch: int             # points per step (official: 512)
    lr: float              # Adam learning rate (official: 1e-3)
    weight_decay: float    # Adam weight decay
    val_frac: float        # share of the data held out to keep the best weights (official: 0.05; 0: last weights)


def _split(n: int, val_frac: float) -> int:
    """Size of the training part (the official ``int(n * (1 - val_frac))``, at least 1)."""
    return max(1, int(n * (1.0 - val_frac)))


def fit_reward(x: torch.Tensor, y: torch.Tensor, cfg: SurrogateConfig, init_seed: int, gen: torch.Generator,
               rows: torch.Tensor | None = None) -> RewardMLP:
    """Fit r_hat to (x, y) (n, d), (n,) on the first ``int(n (1 - val_frac))`` points (``rows`` of them, a
    bootstrap resample, when given) and return the weights of the best squared error on the rest
    (the last weights when nothing is held out). Frozen (no gradient) on return."""
    model = seeded(init_seed, RewardMLP, x.shape[1], cfg.hidden, cfg.features)
    n_fit = _split(len(x), cfg.val_frac)
    fit_idx = torch.arange(n_fit) if rows is None else rows
    xv, yv = x[n_fit:], y[n_fit:]
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    best, best_loss = None, float("inf")
    for _ in range(cfg.steps):
        idx = fit_idx if len(fit_idx) <= cfg.batch else fit_idx[torch.randperm(len(fit_idx), generator=gen)[:cfg.batch]]
        loss = torch.mean((model(x[idx]) - y[idx]) ** 2)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if len(xv):
            with torch.no_grad():
                val = float(torch.mean((model(xv) - yv) ** 2))
            if val < best_loss:
                best, best_loss = copy.deepcopy(model.state_dict()), val
    if best is not None:
        model.load_state_dict(best)
    return model.requires_grad_(False).eval()


def bootstrap_indices(n: int, heads: int, rng: np.random.Generator) -> torch.Tensor:
    """(heads, n) indices into range(n), each row a resample with replacement (the official ``bootstrapping``).

    >>> idx = bootstrap_indices(5, 2, np.random.default_rng(0))
    >>> tuple(idx.shape), bool(((idx >= 0) & (idx < 5)).all())
    ((2, 5), True)
    """
    return torch.as_tensor(rng.integers(0, n, size=(heads, n)), dtype=torch.long)


class Ensemble(nn.Module):
    """Bootstrap heads; the optimistic value is the maximum over heads (official ``bootstrap`` optimism)."""

    def __init__(self, heads: list[RewardMLP]):
        super().__init__()
        self.heads = nn.ModuleList(heads)

    def all(self, x: torch.Tensor) -> torch.Tensor:          # (n, d) -> (H, n)
        return torch.stack([h(x) for h in self.heads])

    def forward(self, x: torch.Tensor) -> torch.Tensor:      # (n, d) -> (n,) max over heads
        return self.all(x).max(0).values

    def mean(self, x: torch.Tensor) -> torch.Tensor:         # (n, d) -> (n,) the ensemble's point estimate
        return self.all(x).mean(0)


def fit_ensemble(x: torch.Tensor, y: torch.Tensor, cfg: SurrogateConfig, heads: int, init_seed: int,
                 rng: np.random.Generator, gen: torch.Generator) -> Ensemble:
    """H heads, head k fitted on a resample with replacement of the training part, with its own init."""
    rows = bootstrap_indices(_split(len(x), cfg.val_frac), heads, rng)
    return Ensemble([fit_reward(x, y, cfg, init_seed + k, gen, rows[k]) for k in range(heads)])


def covariance(phi: torch.Tensor, lam: float, kind: Covariance) -> torch.Tensor:
    """Sigma of the UCB bonus from the data's features phi (n, f), (f, f) (module docstring).

    >>> phi = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    >>> covariance(phi, 0.5, "paper").tolist()                       # phi^T phi + 0.5 I
    [[1.5, 0.0], [0.0, 4.5]]
    >>> covariance(phi, 0.0, "official").tolist()                    # centred, / (n - 1)
    [[0.5, -1.0], [-1.0, 2.0]]
    """
    eye = torch.eye(phi.shape[1], dtype=phi.dtype)
    if kind == "paper":
        return phi.T @ phi + lam * eye
    if kind == "official":
        return torch.cov(phi.T) + lam * eye
    raise ValueError(f"unknown covariance {kind!r}; use paper or official")


class UCB(nn.Module):
    """r_hat(x) + g(x), g(x) = min(alpha sqrt(phi(x)^T Sigma^-1 phi(x)), clip) (Sec. 4.1; official clamps the
    bonus after multiplying by alpha)."""

    def __init__(self, reward: RewardMLP, data: torch.Tensor, alpha: float, lam: float, clip: float,
                 kind: Covariance):
        super().__init__()
        self.reward, self.alpha, self.clip = reward, alpha, clip
        with torch.no_grad():
            self.register_buffer("precision", torch.linalg.inv(covariance(reward.features(data), lam, kind)))

    def width(self, x: torch.Tensor) -> torch.Tensor:        # (n, d) -> (n,) sqrt(phi^T Sigma^-1 phi)
        phi = self.reward.features(x)
        quad = torch.einsum("nf,fg,ng->n", phi, self.precision, phi)
        return torch.sqrt(quad.clamp_min(1e-12))

    def bonus(self, x: torch.Tensor) -> torch.Tensor:        # (n, d) -> (n,) g(x)
        return torch.clamp(self.alpha * self.width(x), max=self.clip)

    def forward(self, x: torch.Tensor) -> torch.Tensor:      # (n, d) -> (n,)
        return self.reward(x) + self.bonus(x)


class LangevinConfig(NamedTuple):
    """The Langevin chain of a Thompson draw (module docstring)."""

    steps: int             # SGLD steps from the fitted weights (the draw is the last iterate)
    step: float            # eps: the step size, and the variance of the injected noise
    noise: float           # std of the feedback noise in the likelihood (the loop's known noise, LoopConfig.noise)
    prior: float           # std of the Gaussian prior over every weight


def sgld(model: nn.Module, x: torch.Tensor, y: torch.Tensor, cfg: LangevinConfig,
         gen: torch.Generator) -> nn.Module:
    """A copy of ``model`` moved by ``cfg.steps`` full-batch Langevin steps on U (module docstring) over (x, y)
    (n, d), (n,): theta <- theta - (eps / 2) grad U + sqrt(eps) z, z ~ N(0, I) from ``gen``. Its stationary
    law is the posterior p(theta | x, y) propto exp(-U) (in the limit of small eps); a chain of total time
    steps * eps shorter than the posterior's relaxation time (about 2 prior^2 along the directions the data
    leave to the prior) is a perturbation of the starting weights, not a draw from it. Frozen on return;
    ``model`` is left as it is. Raises FloatingPointError (a diverged seed) if the chain leaves the floats."""
    chain = copy.deepcopy(model).requires_grad_(True)
    params = list(chain.parameters())
    root = cfg.step ** 0.5
    with torch.enable_grad():
        for _ in range(cfg.steps):
            u = ((y - chain(x)) ** 2).sum() / (2 * cfg.noise ** 2) \
                + sum((p ** 2).sum() for p in params) / (2 * cfg.prior ** 2)        # U(theta)
            grads = torch.autograd.grad(u, params)
            with torch.no_grad():
                for p, g in zip(params, grads):
                    p.add_(-0.5 * cfg.step * g + root * torch.randn(p.shape, generator=gen, dtype=p.dtype))
    if not all(bool(torch.isfinite(p).all()) for p in params):
        raise FloatingPointError(f"the Langevin chain diverged (step {cfg.step:g}, noise {cfg.noise:g}): the stable "
                                 "step shrinks like noise^2 / n; lower ts_step")
    return chain.requires_grad_(False).eval()

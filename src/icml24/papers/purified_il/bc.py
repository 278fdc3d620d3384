"""Behaviour cloning, BCND, and the evaluation of a policy on the task.

* BC (the paper's Sec. 3 learner and its code): a deterministic MLP policy mu(s) on z-scored states,
  trained with Adam on the (optionally weighted) squared error sum_i w_i (mu(s_i) - a_i)^2 / sum_i w_i.
* BCND (Sasaki & Yamashina, ICLR 2021, "Behavioral cloning from noisy demonstrations", Algorithm 1):
  round 1 is BC; round m > 1 weights each pair by the likelihood of its action under the round m - 1
  policy, pi_{m-1}(a | s) = N(a; mu_{m-1}(s), diag sigma_{m-1}^2) with sigma_{m-1,j} the weighted residual
  std of action dimension j in that round, normalised to mean 1, and trains a fresh policy on the weighted
  loss. Noisy pairs far from what the previous policy does count less. (The paper's ensemble of K
  policies per round is K = 1 here.)
* Evaluation: undiscounted return of whole episodes of the task (200 steps on Pendulum-v1) from fixed
  reset seeds (the same start states for every policy, so differences between policies are paired).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch
from torch import nn

from icml24.common.nn import relu_mlp
from icml24.common.offline import Policy, collect
from icml24.common.optim import FlatAdam

__all__ = ["BCConfig", "MLPPolicy", "fit_bc", "BCNDResult", "bcnd", "act", "returns"]


class BCConfig(NamedTuple):
    """Sizes and optimiser of a BC policy."""

    hidden: int    # width of every hidden layer
    layers: int    # hidden layers
    steps: int     # Adam steps
    batch: int     # pairs per step (the whole set when smaller)
    lr: float      # Adam learning rate


class MLPPolicy(nn.Module):
    """mu(s) = MLP(z-scored s), actions in the data's units (clipped to +-u_max when acting)."""

    def __init__(self, obs_dim: int, act_dim: int, hidden: int, layers: int, mean: np.ndarray, std: np.ndarray):
        super().__init__()
        self.net = relu_mlp(obs_dim, hidden, layers, act_dim)
        self.mean: torch.Tensor
        self.std: torch.Tensor
        self.register_buffer("mean", torch.as_tensor(mean, dtype=torch.float32))
        self.register_buffer("std", torch.as_tensor(std, dtype=torch.float32))

    def forward(self, s: torch.Tensor) -> torch.Tensor:      # (n, obs_dim) -> (n, act_dim)
        return self.net((s - self.mean) / self.std)


def fit_bc(states: np.ndarray, actions: np.ndarray, cfg: BCConfig, generator: torch.Generator,
           weights: np.ndarray | None = None, device: str = "cpu") -> MLPPolicy:
    """A policy trained by (weighted) squared-error BC on ``states`` (n, obs_dim), ``actions`` (n, act_dim)."""
    mean, std = states.mean(0), states.std(0) + 1e-6
    policy = MLPPolicy(states.shape[1], actions.shape[1], cfg.hidden, cfg.layers, mean, std).to(device)
    S = torch.as_tensor(states, dtype=torch.float32, device=device)
    A = torch.as_tensor(actions, dtype=torch.float32, device=device)
    W = torch.ones(len(S), device=device) if weights is None else torch.as_tensor(weights, dtype=torch.float32,
                                                                                   device=device)
    opt = FlatAdam(policy.parameters(), lr=cfg.lr)
    batch = min(cfg.batch, len(S))
    for _ in range(cfg.steps):
        idx = torch.randint(0, len(S), (batch,), generator=generator).to(device)
        w = W[idx]
        loss = torch.sum(w * torch.sum((policy(S[idx]) - A[idx]) ** 2, 1)) / torch.sum(w)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return policy.eval()


@torch.no_grad()
def _predict(policy: MLPPolicy, states: np.ndarray) -> np.ndarray:
    dev = policy.mean.device
    return policy(torch.as_tensor(states, dtype=torch.float32, device=dev)).cpu().numpy().astype(np.float64)


class BCNDResult(NamedTuple):
    """The last round's policy and the weights each round used (round 1: all ones)."""

    policy: MLPPolicy
    weights: list[np.ndarray]   # rounds x (n,)


def bcnd(states: np.ndarray, actions: np.ndarray, cfg: BCConfig, rounds: int, generator: torch.Generator,
         first: MLPPolicy | None = None, device: str = "cpu") -> BCNDResult:
    """BCND with one policy per round (module docstring); ``first``: round 1's policy, if already trained
    (plain BC on the same data), else it is trained here."""
    w = np.ones(len(states))
    used = [w]
    policy = first if first is not None else fit_bc(states, actions, cfg, generator, w, device)
    for _ in range(rounds - 1):
        resid = (_predict(policy, states) - actions) ** 2                             # (n, act_dim)
        var = np.sum(w[:, None] * resid, 0) / np.sum(w) + 1e-8                         # (act_dim,) sigma_{m-1,j}^2
        lik = np.exp(-0.5 * np.sum(resid / var, 1))                                    # N(a; mu(s), diag var), up to a constant
        w = lik / lik.mean()
        used.append(w)
        policy = fit_bc(states, actions, cfg, generator, w, device)
    return BCNDResult(policy, used)


def act(policy: MLPPolicy, u_max: float) -> Policy:
    """The policy as a numpy observation -> action map, clipped to the action bound +-u_max."""
    return lambda obs: np.clip(_predict(policy, obs), -u_max, u_max)


def returns(policy: Policy, n_episodes: int, seed: int, env_id: str) -> np.ndarray:
    """Undiscounted returns (n_episodes,) of whole episodes of ``env_id`` from reset seeds seed, seed + 1, ..."""
    return np.array([float(e.rewards.sum()) for e in collect(policy, n_episodes, seed, env_id)])

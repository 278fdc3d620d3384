"""SEIKO's online loop (Alg. 1) and its baselines, on a domain with a true reward and a validity test.

For rounds i = 1 ... K with fresh budgets B_i:

1. draw B_i samples of the current model p^{(i-1)} and query noisy feedback y = r(x) + N(0, noise^2);
2. D_i = D_{i-1} + the new pairs;
3. fit the surrogate r_hat_i on D_i (a bootstrap ensemble for ``bootstrap``);
4. the optimistic objective: r_hat + g (``ucb``), the maximum over heads (``bootstrap``), r_hat moved toward a
   posterior draw by Langevin dynamics (``thompson``, surrogate.sgld), r_hat (``greedy``);
5. fine-tune p^{(i)} from p^{(i-1)} to maximise E[objective] - beta KL(p || p^{(i-1)}) (finetune.py).

``nonadaptive`` spends sum_i B_i queries at once on the pretrained model, fits r_hat once and fine-tunes once
with K times the steps of a round (the same fine-tuning compute); ``guidance`` spends them the same way and
fine-tunes nothing: its model is the pretrained sampler guided by r_hat (finetune.Guided); ``nokl`` is ``ucb``
with beta = 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, NamedTuple

import numpy as np
import torch

from icml24.common.diffusion import EpsMLP
from icml24.papers.seiko.finetune import FinetuneConfig, Guided, Sampler, finetune
from icml24.papers.seiko.surrogate import (
    UCB,
    Covariance,
    Ensemble,
    LangevinConfig,
    RewardMLP,
    SurrogateConfig,
    fit_ensemble,
    fit_reward,
    sgld,
)

__all__ = ["Domain", "LoopConfig", "RoundLog", "LoopResult", "online", "regret", "SHOWN"]

SHOWN = 200
"""Samples of the model after each round kept in the log (the first of its evaluation samples; for figures)."""


class Domain(NamedTuple):
    """What the loop needs to know about the task: the true reward, validity, and the diagnostics' probe."""

    reward: Callable[[torch.Tensor], torch.Tensor]     # (n, d) -> (n,) true reward r
    valid: Callable[[torch.Tensor], torch.Tensor]      # (n, d) -> (n,) bool
    near: Callable[[torch.Tensor], torch.Tensor]       # (n, d) -> (n,) bool: valid and near the optimum
    probe: torch.Tensor                                 # (m, d) points near the optimum on the manifold
    best: float                                         # r* over the valid set
    worst: float                                        # min of r over the valid set
    dim: int


class LoopConfig(NamedTuple):
    """One method's loop."""

    method: str                      # ucb | bootstrap | thompson | greedy | nonadaptive | guidance | nokl
    budgets: tuple[int, ...]
    noise: float
    surrogate: SurrogateConfig
    covariance: Covariance
    alpha: float
    lam: float
    clip: float
    heads: int
    finetune: FinetuneConfig         # beta is replaced by 0 for nokl
    eval_samples: int
    langevin: LangevinConfig         # thompson's posterior draw
    guidance: float                  # guidance's scale w


@dataclass
class RoundLog:
    """Per round (one entry per round): what the queries found and what the surrogate and bonus say."""

    queries: list[int] = field(default_factory=list)          # cumulative queries after the round
    query_reward: list[float] = field(default_factory=list)   # mean true reward of the round's queries
    query_near: list[float] = field(default_factory=list)     # share of the round's queries near the optimum
    query_valid: list[float] = field(default_factory=list)    # share of valid queries
    regret: list[float] = field(default_factory=list)         # cumulative regret after the round
    sur_err_near: list[float] = field(default_factory=list)   # mean |r_hat - r| on the probe
    # the confidence width sqrt(phi^T Sigma^-1 phi) (the bonus before alpha and the clip) of r_hat's features,
    # for either covariance, mean over the probe near the optimum and over the data D_i
    width_near: dict[str, list[float]] = field(default_factory=lambda: {"paper": [], "official": []})
    width_data: dict[str, list[float]] = field(default_factory=lambda: {"paper": [], "official": []})
    model_reward: list[float] = field(default_factory=list)   # true reward of the model after the round
    model_valid: list[float] = field(default_factory=list)
    model_near: list[float] = field(default_factory=list)
    samples: list[torch.Tensor] = field(default_factory=list)  # (SHOWN, d) of the model's samples after the round


class LoopResult(NamedTuple):
    """The final model, its evaluation samples and the per-round log."""

    model: EpsMLP | Guided
    samples: torch.Tensor       # (eval_samples, d) of the final model
    log: RoundLog


def regret(domain: Domain, x: torch.Tensor) -> torch.Tensor:
    """Per-query regret r* - r_F(x), r_F = r on valid x and the valid set's minimum elsewhere, (n,) >= 0."""
    r = torch.where(domain.valid(x), domain.reward(x), torch.full((len(x),), domain.worst))
    return (domain.best - r).clamp_min(0.0)


def online(pretrained: EpsMLP, sampler: Sampler, domain: Domain, cfg: LoopConfig,
           seed_of: Callable[[str], int], rng: np.random.Generator, gen: torch.Generator) -> LoopResult:
    """Run ``cfg.method``'s loop from ``pretrained`` (module docstring). ``seed_of(name)`` gives the init
    seed of each surrogate, ``rng`` the feedback noise and bootstrap resamples, ``gen`` every torch draw."""
    at_once = cfg.method in ("nonadaptive", "guidance")
    budgets = (sum(cfg.budgets),) if at_once else cfg.budgets
    ft = cfg.finetune._replace(beta=0.0) if cfg.method == "nokl" else cfg.finetune
    if cfg.method == "nonadaptive":
        ft = ft._replace(steps=ft.steps * len(cfg.budgets))
    model: EpsMLP | Guided = pretrained
    log = RoundLog()
    X = torch.empty(0, domain.dim)
    Y = torch.empty(0)
    total = 0.0
    for i, b in enumerate(budgets):
        x_new = sampler.sample(model, b, gen)              # x ~ p^{(i-1)}
        r_new = domain.reward(x_new)
        y_new = r_new + cfg.noise * torch.as_tensor(rng.normal(size=b), dtype=r_new.dtype)   # y = r(x) + eps
        X, Y = torch.cat([X, x_new]), torch.cat([Y, y_new])                                # D_i = D_{i-1} + new
        total += float(regret(domain, x_new).sum())
        log.queries.append(len(X))
        log.query_reward.append(float(r_new.mean()))
        log.query_near.append(float(domain.near(x_new).float().mean()))
        log.query_valid.append(float(domain.valid(x_new).float().mean()))
        log.regret.append(total)
        perm = torch.as_tensor(rng.permutation(len(X)))                                   # shuffle the split
        Xf, Yf = X[perm], Y[perm]
        if cfg.method == "bootstrap":
            ens: Ensemble = fit_ensemble(Xf, Yf, cfg.surrogate, cfg.heads, seed_of(f"surrogate-{i}"), rng, gen)
            point: torch.nn.Module = ens.heads[0]                                            # widths of head 0
            objective: torch.nn.Module = ens                                                # max over heads
            estimate: Callable[[torch.Tensor], torch.Tensor] = ens.mean
        else:
            r_hat: RewardMLP = fit_reward(Xf, Yf, cfg.surrogate, seed_of(f"surrogate-{i}"), gen)
            point, estimate = r_hat, r_hat
            if cfg.method in ("ucb", "nokl"):
                objective = UCB(r_hat, X, cfg.alpha, cfg.lam, cfg.clip, cfg.covariance)   # r_hat + g
            elif cfg.method == "thompson":
                objective = sgld(r_hat, X, Y, cfg.langevin, gen)                          # r ~ p(r | D_i)
            else:
                objective = r_hat
        with torch.no_grad():
            log.sur_err_near.append(float((estimate(domain.probe) - domain.reward(domain.probe)).abs().mean()))
            if isinstance(point, RewardMLP):
                for kind in ("paper", "official"):
                    u = UCB(point, X, cfg.alpha, cfg.lam, cfg.clip, kind)
                    log.width_near[kind].append(float(u.width(domain.probe).mean()))
                    log.width_data[kind].append(float(u.width(X).mean()))
        if cfg.method == "guidance":
            model = Guided(pretrained, objective, sampler.schedule, cfg.guidance)  # p_pre guided by r_hat
        else:
            assert isinstance(model, EpsMLP)
            model = finetune(model, objective, sampler, ft, gen).model             # p^{(i)}
        xs = sampler.sample(model, cfg.eval_samples, gen)
        log.model_reward.append(float(domain.reward(xs).mean()))
        log.model_valid.append(float(domain.valid(xs).float().mean()))
        log.model_near.append(float(domain.near(xs).float().mean()))
        log.samples.append(xs[:SHOWN])
    return LoopResult(model, xs, log)

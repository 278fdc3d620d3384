"""KL-regularised fine-tuning (SEIKO Alg. 1, line 5; Sec. 4): maximise

    E_{x ~ p_theta}[r_hat(x) + g(x)] - beta KL(p_theta || p_prev)

over the diffusion model's parameters, by backprop of the objective through the DDIM sampler
(:func:`icml24.common.ddim.ddim_sample_grad`, truncated to the last K steps) with the path KL to the previous
round's model as the sum over steps of ||mu_theta(x_t) - mu_prev(x_t)||^2 / (2 sigma_t^2) (the official
``ddim_step_KL``, which averages over dimensions where this sums: a rescaling of beta by 1/d).

Its optimum is the tilted distribution p*(x) propto p_prev(x) exp((r_hat(x) + g(x)) / beta) (Theorem 1's
premise; :func:`tilt`), which has no mass where p_prev has none: the fine-tuned model stays on the
pretrained model's feasible manifold. beta = 0 drops the KL (the unconstrained baseline).

The ``guidance`` baseline fine-tunes nothing: :class:`Guided` steers the pretrained sampler with the surrogate's
gradient at the Tweedie estimate (reconstruction guidance, as in classifier guidance of Dhariwal & Nichol 2021
with the clean-data estimate of Chung et al. 2023):

    eps~(x_t, t) = eps(x_t, t) - w sqrt(1 - alphabar_t) grad_{x_t} r_hat(xhat_0(x_t)),

the noise prediction of p_t(x_t) exp(w r_hat(xhat_0(x_t))).
"""

from __future__ import annotations

import copy
from typing import Callable, NamedTuple

import torch

from icml24.common.ddim import Trajectory, ddim_sample, ddim_sample_grad
from icml24.common.diffusion import EpsMLP, Schedule

__all__ = ["Sampler", "FinetuneConfig", "Finetuned", "finetune", "tilt", "kl_objective", "path_kl", "dim_of",
           "Guided"]


class Guided(torch.nn.Module):
    """The eps-model of the pretrained sampler guided by a reward (module docstring); no trainable weights (its
    gradient is taken with respect to x_t only, never the weights of ``base`` or ``reward``)."""

    def __init__(self, base: EpsMLP, reward: Callable[[torch.Tensor], torch.Tensor], schedule: Schedule,
                 scale: float):
        super().__init__()
        self.base = base
        self.reward, self.scale = reward, scale
        self.alpha_bar: torch.Tensor
        self.register_buffer("alpha_bar", schedule.alpha_bar.clone())

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:    # (n, d), (n,) -> (n, d)
        with torch.enable_grad():
            xt = x.detach().requires_grad_(True)
            eps = self.base(xt, t)
            ab = self.alpha_bar[t].to(x.dtype)[:, None]                                  # (n, 1) abar_t
            root = torch.sqrt(1.0 - ab)                                                   # sqrt(1 - abar_t)
            x0 = (xt - root * eps) / torch.sqrt(ab)                                       # Tweedie xhat_0
            (grad,) = torch.autograd.grad(self.reward(x0).sum(), xt)
        return eps.detach() - self.scale * root * grad                                    # eps~


def dim_of(model: EpsMLP | Guided) -> int:
    """The data dimension d of an eps-MLP (of its base, for a guided one)."""
    if isinstance(model, Guided):
        model = model.base
    first = model.net[0]
    assert isinstance(first, torch.nn.Linear)
    return first.in_features - model.time_dim


class Sampler(NamedTuple):
    """The DDIM sampler every model of a run uses (:mod:`icml24.common.ddim`)."""

    schedule: Schedule
    timesteps: list[int]      # descending tau_S = T > ... > tau_0
    eta: float                # DDIM noise level
    clip: float               # clamp of xhat_0 (inf: none)

    def sample(self, model: EpsMLP | Guided, n: int, gen: torch.Generator) -> torch.Tensor:
        """n samples from x_T ~ N(0, I), no gradient, (n, d)."""
        x_T = torch.randn(n, dim_of(model), generator=gen)
        return ddim_sample(model, self.schedule, x_T, self.timesteps, self.eta, gen, self.clip)

    def trajectory(self, model: EpsMLP | Guided, n: int, gen: torch.Generator, grad_steps: int,
                   ref: EpsMLP | None) -> Trajectory:
        """n samples with gradients through the last ``grad_steps`` steps and the path KL to ``ref``."""
        x_T = torch.randn(n, dim_of(model), generator=gen)
        return ddim_sample_grad(model, self.schedule, x_T, self.timesteps, self.eta, gen, grad_steps, ref, self.clip)


class FinetuneConfig(NamedTuple):
    """The fine-tuning loop of one round."""

    steps: int             # Adam steps
    batch: int             # samples per step
    lr: float              # Adam learning rate (official: 1e-3)
    beta: float            # KL weight (0: no KL)
    grad_steps: int        # K: backprop through the last K DDIM steps
    clip: float            # gradient-norm clip (official: 5)


class Finetuned(NamedTuple):
    """The fine-tuned model and its training trace."""

    model: EpsMLP               # frozen copy
    objective: list[float]      # per step: mean of r_hat + g over the batch
    kl: list[float]             # per step: mean path KL to p_prev over the batch


def finetune(prev: EpsMLP, objective: Callable[[torch.Tensor], torch.Tensor], sampler: Sampler,
             cfg: FinetuneConfig, gen: torch.Generator) -> Finetuned:
    """Fine-tune a copy of ``prev`` to maximise E[objective] - beta KL(p_theta || p_prev) (module docstring).

    Each step draws x_T ~ N(0, I) (batch, d) and the sampler's noise from ``gen``, runs the sampler with
    gradients through its last ``grad_steps`` steps, and takes one Adam step on
    loss = -mean(objective(x_0)) + beta mean(KL_path).
    """
    prev = copy.deepcopy(prev).requires_grad_(False).eval()
    model = copy.deepcopy(prev).requires_grad_(True).train()
    params = list(model.parameters())
    opt = torch.optim.Adam(params, lr=cfg.lr)
    trace_obj, trace_kl = [], []
    for _ in range(cfg.steps):
        traj = sampler.trajectory(model, cfg.batch, gen, cfg.grad_steps, prev if cfg.beta > 0 else None)
        value = objective(traj.x)                                      # (batch,)
        loss = -value.mean() + cfg.beta * traj.kl.mean()               # -E[r_hat + g] + beta KL
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, cfg.clip)
        opt.step()
        trace_obj.append(float(value.detach().mean()))
        trace_kl.append(float(traj.kl.detach().mean()))
    return Finetuned(model.requires_grad_(False).eval(), trace_obj, trace_kl)


@torch.no_grad()
def path_kl(model: EpsMLP | Guided, ref: EpsMLP, sampler: Sampler, n: int, gen: torch.Generator) -> float:
    """Monte Carlo path KL(p_model || p_ref) over ``n`` trajectories of ``model`` (mean of the per-step sums)."""
    return float(sampler.trajectory(model, n, gen, 0, ref).kl.mean())


def tilt(p_prev: torch.Tensor, reward: torch.Tensor, beta: float) -> torch.Tensor:
    """The maximiser of :func:`kl_objective` over distributions on a finite set: p* propto p_prev exp(r / beta).

    >>> [round(p, 4) for p in tilt(torch.tensor([0.5, 0.5]), torch.tensor([0.0, 1.0]), 1.0).tolist()]  # (1, e) / (1 + e)
    [0.2689, 0.7311]
    """
    if beta <= 0:
        raise ValueError("the tilted optimum needs beta > 0 (beta = 0: a point mass on the argmax)")
    logits = torch.log(p_prev) + reward / beta
    return torch.softmax(logits, 0)


def kl_objective(p: torch.Tensor, p_prev: torch.Tensor, reward: torch.Tensor, beta: float) -> torch.Tensor:
    """E_p[r] - beta KL(p || p_prev) of distributions on a finite set (the objective of Alg. 1, line 5)."""
    return (p * reward).sum() - beta * (p * (torch.log(p) - torch.log(p_prev))).sum()

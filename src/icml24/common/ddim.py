"""DDIM sampling on the DDPM schedule of :mod:`icml24.common.diffusion` (Song, Meng & Ermon, ICLR 2021): the
step with its noise level eta, a sampler that can be differentiated end to end (truncated backprop over the
last K steps, with the per-step KL to a reference model that reward fine-tuning penalises), the
deterministic inversion (eta = 0), and the Tweedie estimate of the clean data.

Notation: the DDPM indices t = 0 ... T of :class:`~icml24.common.diffusion.Schedule` (alphabar_0 = 1); a
DDIM sampler visits a descending sub-sequence tau_S = T > ... > tau_1 > tau_0 (:func:`ddim_timesteps`).
One step from t = tau_i to s = tau_{i-1} (DDIM Eq. 12):

* predicted clean data (Tweedie, :func:`tweedie`): xhat_0 = (x_t - sqrt(1 - alphabar_t) eps) / sqrt(alphabar_t);
* noise level (Eq. 16): sigma_t(eta) = eta sqrt((1 - alphabar_s) / (1 - alphabar_t)) sqrt(1 - alphabar_t / alphabar_s);
* x_s = sqrt(alphabar_s) xhat_0 + sqrt(1 - alphabar_s - sigma_t^2) eps + sigma_t z, z ~ N(0, I).

eta = 0 is the deterministic DDIM (an ODE discretisation, invertible); eta = 1 with every step visited is
DDPM's ancestral sampler with the posterior variance (tilde beta_t, Ho et al. Eq. 7). When the last index
tau_0 is 0 the final step is noiseless (alphabar_0 = 1); ``end = 1`` stops at x_1 instead, like diffusers'
``set_alpha_to_one=False`` (Stable Diffusion), so that every step keeps a noise level and the per-step KL
of two samplers is finite.

Everything takes an explicit ``torch.Generator``; draws are made on the generator's device and moved to the
data's, as in :mod:`icml24.common.diffusion`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch

from icml24.common.diffusion import EpsModel, Schedule

__all__ = ["ddim_timesteps", "ddim_sigma", "tweedie", "DDIMMean", "ddim_mean", "ddim_step", "ddim_sample",
           "ddim_invert", "step_kl", "Trajectory", "ddim_sample_grad"]


def ddim_timesteps(T: int, steps: int, end: int = 0) -> list[int]:
    """The ``steps + 1`` descending DDPM indices tau_S = T > ... > tau_0 = ``end``, evenly spaced
    (tau_i = end + round(i (T - end) / S)).

    >>> ddim_timesteps(1000, 4), ddim_timesteps(10, 3, end=1)
    ([1000, 750, 500, 250, 0], [10, 7, 4, 1])
    """
    if not 0 <= end < T:
        raise ValueError(f"end must be in [0, {T}), got {end}")
    if not 1 <= steps <= T - end:
        raise ValueError(f"steps must be in [1, {T - end}], got {steps}")
    return [end + round(i * (T - end) / steps) for i in range(steps, -1, -1)]


def _ab(schedule: Schedule, t: int) -> float:
    return float(schedule.alpha_bar[t])


def ddim_sigma(schedule: Schedule, t: int, s: int, eta: float) -> float:
    """sigma_t(eta) of a step t -> s < t (DDIM Eq. 16).

    With s = t - 1 and eta = 1 it is DDPM's posterior standard deviation sqrt(tilde beta_t),
    tilde beta_t = (1 - alphabar_{t-1}) / (1 - alphabar_t) beta_t:

    >>> from icml24.common.diffusion import linear_schedule
    >>> sch = linear_schedule(100)
    >>> tb = (1 - sch.alpha_bar[49]) / (1 - sch.alpha_bar[50]) * sch.betas[50]
    >>> round(ddim_sigma(sch, 50, 49, 1.0) ** 2 / float(tb), 12)
    1.0
    """
    if not 0 <= s < t <= schedule.T:
        raise ValueError(f"need 0 <= s < t <= {schedule.T}, got t={t}, s={s}")
    a_t, a_s = _ab(schedule, t), _ab(schedule, s)
    return eta * math.sqrt((1.0 - a_s) / (1.0 - a_t)) * math.sqrt(1.0 - a_t / a_s)


def tweedie(schedule: Schedule, x: torch.Tensor, t: int, eps: torch.Tensor) -> torch.Tensor:
    """xhat_0 = (x_t - sqrt(1 - alphabar_t) eps) / sqrt(alphabar_t): Tweedie's estimate E[x_0 | x_t] when ``eps``
    is the MMSE noise prediction E[eps | x_t] (equivalently (x_t + (1 - alphabar_t) grad log p_t(x_t)) /
    sqrt(alphabar_t)); x, eps (n, d).

    >>> from icml24.common.diffusion import linear_schedule
    >>> sch = linear_schedule(10)
    >>> tweedie(sch, torch.ones(1, 2), 0, torch.zeros(1, 2)).tolist()     # t = 0: x_0 itself
    [[1.0, 1.0]]
    """
    ab = _ab(schedule, t)
    return (x - math.sqrt(1.0 - ab) * eps) / math.sqrt(ab)


class DDIMMean(NamedTuple):
    """The Gaussian of one DDIM step x_t -> x_s, and the Tweedie estimate it is built on."""

    mean: torch.Tensor    # (n, d) sqrt(alphabar_s) xhat_0 + sqrt(1 - alphabar_s - sigma^2) eps
    sigma: float          # sigma_t(eta), the step's standard deviation
    x0: torch.Tensor      # (n, d) xhat_0


def ddim_mean(schedule: Schedule, x: torch.Tensor, eps: torch.Tensor, t: int, s: int, eta: float,
              clip: float = math.inf) -> DDIMMean:
    """Mean and standard deviation of the DDIM step t -> s (Eq. 12) given the noise prediction ``eps`` at x_t.

    ``clip`` < inf clamps xhat_0 to [-clip, clip] and re-derives eps = (x_t - sqrt(alphabar_t) xhat_0) /
    sqrt(1 - alphabar_t) from it (diffusers' ``clip_sample`` with ``use_clipped_model_output``), so that a
    step maps a bounded x_t to a bounded x_s whatever the network outputs."""
    sigma = ddim_sigma(schedule, t, s, eta)
    a_s = _ab(schedule, s)
    x0 = tweedie(schedule, x, t, eps)
    if clip < math.inf:
        x0 = x0.clamp(-clip, clip)
        a_t = _ab(schedule, t)
        eps = (x - math.sqrt(a_t) * x0) / math.sqrt(1.0 - a_t)
    direction = math.sqrt(max(1.0 - a_s - sigma ** 2, 0.0))   # "direction pointing to x_t"
    return DDIMMean(math.sqrt(a_s) * x0 + direction * eps, sigma, x0)


def _steps(n: int, t: int, device: torch.device) -> torch.Tensor:
    return torch.full((n,), t, dtype=torch.long, device=device)


def _noise(x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    return torch.randn(x.shape, generator=generator, dtype=x.dtype, device=generator.device).to(x.device)


def ddim_step(model: EpsModel, schedule: Schedule, x: torch.Tensor, t: int, s: int, eta: float,
              generator: torch.Generator, clip: float = math.inf) -> torch.Tensor:
    """One DDIM step x_t -> x_s (Eq. 12); no draw from ``generator`` where sigma = 0 (eta = 0, or s = 0)."""
    m = ddim_mean(schedule, x, model(x, _steps(len(x), t, x.device)), t, s, eta, clip)
    return m.mean if m.sigma == 0 else m.mean + m.sigma * _noise(x, generator)


@torch.no_grad()
def ddim_sample(model: EpsModel, schedule: Schedule, x: torch.Tensor, timesteps: list[int], eta: float,
                generator: torch.Generator, clip: float = math.inf) -> torch.Tensor:
    """Run the DDIM steps tau_S -> ... -> tau_0 of ``timesteps`` (descending, :func:`ddim_timesteps`) from
    x = x_{tau_S} (n, d); no gradient."""
    for t, s in zip(timesteps[:-1], timesteps[1:]):
        x = ddim_step(model, schedule, x, t, s, eta, generator, clip)
    return x


@torch.no_grad()
def ddim_invert(model: EpsModel, schedule: Schedule, x: torch.Tensor, timesteps: list[int],
                iters: int = 0) -> torch.Tensor:
    """Invert the deterministic (eta = 0) sampler: the x_{tau_S} from which :func:`ddim_sample` with eta = 0
    returns ``x`` = x_{tau_0}.

    Each step s -> t solves x_s = sqrt(alphabar_s / alphabar_t) (x_t - sqrt(1 - alphabar_t) eps(x_t)) +
    sqrt(1 - alphabar_s) eps(x_t) for x_t: x_t = sqrt(alphabar_t / alphabar_s) (x_s - sqrt(1 - alphabar_s) eps)
    + sqrt(1 - alphabar_t) eps. ``iters`` = 0 takes eps = eps(x_s, t), the usual DDIM inversion (exact when the
    network's output does not depend on x); ``iters`` > 0 refines it by that many fixed-point iterations
    eps = eps(x_t, t), which converge to the exact inverse for a network of small enough Lipschitz constant.
    """
    for t, s in zip(timesteps[-2::-1], timesteps[::-1]):      # ascending steps s -> t
        a_t, a_s = _ab(schedule, t), _ab(schedule, s)
        steps = _steps(len(x), t, x.device)
        xt = _up(x, model(x, steps), a_t, a_s)
        for _ in range(iters):
            xt = _up(x, model(xt, steps), a_t, a_s)
        x = xt
    return x


def _up(x_s: torch.Tensor, eps: torch.Tensor, a_t: float, a_s: float) -> torch.Tensor:
    """x_t = sqrt(alphabar_t / alphabar_s) (x_s - sqrt(1 - alphabar_s) eps) + sqrt(1 - alphabar_t) eps."""
    return math.sqrt(a_t / a_s) * (x_s - math.sqrt(1.0 - a_s) * eps) + math.sqrt(1.0 - a_t) * eps


def step_kl(mean: torch.Tensor, ref_mean: torch.Tensor, sigma: float) -> torch.Tensor:
    """KL(N(mean, sigma^2 I) || N(ref_mean, sigma^2 I)) = ||mean - ref_mean||^2 / (2 sigma^2) per row, (n, d) -> (n,)
    (SEIKO's per-step KL of two samplers that share the noise level, summed over dimensions).

    >>> step_kl(torch.tensor([[1.0, 2.0]]), torch.tensor([[0.0, 0.0]]), 0.5).tolist()    # (1 + 4) / (2 * 0.25)
    [10.0]
    """
    if sigma <= 0:
        raise ValueError("the per-step KL needs sigma > 0 (eta > 0, and a last index tau_0 >= 1)")
    return ((mean - ref_mean) ** 2).sum(1) / (2.0 * sigma ** 2)


class Trajectory(NamedTuple):
    """A sample of the differentiable sampler and its path KL to the reference."""

    x: torch.Tensor            # (n, d) x_{tau_0}, differentiable in the model's parameters through the last K steps
    kl: torch.Tensor           # (n,) sum over steps of the per-step KL to the reference (zeros without one)


def ddim_sample_grad(model: EpsModel, schedule: Schedule, x: torch.Tensor, timesteps: list[int], eta: float,
                     generator: torch.Generator, grad_steps: int, ref_model: EpsModel | None = None,
                     clip: float = math.inf) -> Trajectory:
    """The DDIM sampler with gradients through its last ``grad_steps`` steps (truncated backprop; all of them
    when ``grad_steps`` = S), and, given ``ref_model``, the path KL sum_i KL(p_theta(x_s | x_t) || p_ref(x_s | x_t))
    along the sampled path (each term :func:`step_kl`, the two steps sharing sigma_t).

    The first S - K steps run without a graph: their parameters get no gradient (as in the official code,
    which detaches the network outputs there) and their KL terms are constants. ``ref_model``'s parameters
    should be frozen (``requires_grad_(False)``): the gradient reaches its mean only through x_t, as in the
    reparameterised path KL. Draws the same noise as
    :func:`ddim_sample` from the same generator state, so without a reference both return the same x.
    ``clip`` as in :func:`ddim_mean`.
    """
    n_steps = len(timesteps) - 1
    if not 0 <= grad_steps <= n_steps:
        raise ValueError(f"grad_steps must be in [0, {n_steps}], got {grad_steps}")
    kl = torch.zeros(len(x), dtype=x.dtype, device=x.device)
    for i, (t, s) in enumerate(zip(timesteps[:-1], timesteps[1:])):
        with torch.set_grad_enabled(i >= n_steps - grad_steps and torch.is_grad_enabled()):
            steps = _steps(len(x), t, x.device)
            m = ddim_mean(schedule, x, model(x, steps), t, s, eta, clip)
            if ref_model is not None:   # frozen parameters; the gradient flows through x_t into both means
                ref = ddim_mean(schedule, x, ref_model(x, steps), t, s, eta, clip).mean
                kl = kl + step_kl(m.mean, ref, m.sigma)
            x = m.mean if m.sigma == 0 else m.mean + m.sigma * _noise(x, generator)
    return Trajectory(x, kl)

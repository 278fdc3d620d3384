"""Inference over (x, c) from one corrupted image (RIG Sec. 4): MAP, mean-field VI with the path-derivative
estimator and restarts, ReGAL, and inference with no corruption model. Every scene of a batch, and every restart
or chain of it, runs in one batch of renders.

The auxiliary latent c of each model (:class:`Model`):

* ``grid`` (rain, fog): the corruption grid's pre-activations (a, b) per voxel, 4 V numbers, flat improper prior
  p(c) ∝ 1 (RIG Sec. 3);
* ``fov``: one number v with fov = lo + (hi - lo) sigmoid(v); the prior is uniform on [lo, hi], so in v it is
  the logistic density log p(v) = log sigmoid(v) + log sigmoid(-v) (change of variables);
* ``none``: no c; the image is explained by x alone at the nominal field of view (the no-corruption baseline).

MAP maximises log p(x) + log p(y | x, c) with respect to the flat measure on c (no Jacobian term: the MAP of the
flat prior); VI and ReGAL use the prior densities above.
"""

from __future__ import annotations

import math
from typing import Callable, Literal, NamedTuple

import torch

from icml24.common.ddim import ddim_mean, ddim_timesteps, tweedie
from icml24.common.diffusion import EpsMLP, Schedule
from icml24.papers.rig.model import Rendered, Setup, log_likelihood, render
from icml24.papers.rig.priors import RealNVP, Standardise
from icml24.papers.rig.render import Corruption

Kind = Literal["grid", "fov", "none"]


class Model:
    """One generative model: world setup, standardisation of x, kind of auxiliary latent, likelihood std."""

    def __init__(self, st: Setup, standard: Standardise, kind: Kind, lik_std: float):
        self.st, self.standard, self.kind, self.lik_std = st, standard, kind, lik_std
        V = st.world.grid.voxels
        self.c_dim = {"grid": 4 * V, "fov": 1, "none": 0}[kind]

    def unpack(self, c: torch.Tensor | None) -> tuple[Corruption | None, torch.Tensor | None]:
        """The corruption grid and the field of view that a c (N, c_dim) stands for."""
        if self.kind == "none" or c is None:
            return None, None
        if self.kind == "fov":
            w = self.st.world
            return None, w.fov_lo + (w.fov_hi - w.fov_lo) * torch.sigmoid(c[:, 0])
        V = self.st.world.grid.voxels
        return Corruption(c[:, :V], c[:, V:].reshape(-1, 3, V)), None

    def render(self, x: torch.Tensor, c: torch.Tensor | None) -> Rendered:
        """Render standardised latents x (N, 12) with the auxiliary latent c (N, c_dim)."""
        corr, fov = self.unpack(c)
        return render(self.st, self.standard.to_z(x), corr, fov)

    def log_lik(self, y: torch.Tensor, x: torch.Tensor, c: torch.Tensor | None) -> torch.Tensor:
        """log p(y | x, c) (N,); y (N, P, 3)."""
        return log_likelihood(y, self.model_rgb(x, c), self.lik_std)

    def model_rgb(self, x: torch.Tensor, c: torch.Tensor | None) -> torch.Tensor:
        return self.render(x, c).render.rgb

    def log_prior_c(self, c: torch.Tensor | None) -> torch.Tensor:
        """log p(c) (N,) up to a constant: 0 for the flat grid prior, the logistic density for the FOV's v."""
        if self.kind != "fov" or c is None:
            return torch.zeros(1 if c is None else c.shape[0])
        return torch.nn.functional.logsigmoid(c[:, 0]) + torch.nn.functional.logsigmoid(-c[:, 0])

    def init_c(self, n: int, level: float) -> torch.Tensor:
        """Initial auxiliary latents (n, c_dim): an empty grid (density pre-activation ``level``, grey colour) or
        the middle of the FOV range."""
        if self.kind == "grid":
            V = self.st.world.grid.voxels
            return torch.cat([torch.full((n, V), level), torch.zeros(n, 3 * V)], 1)
        return torch.zeros(n, self.c_dim)


class InferConfig(NamedTuple):
    """Settings shared by MAP and VI (all from Config)."""

    steps: int              # Adam steps
    lr: float               # Adam learning rate
    restarts: int           # R independent initialisations; the best objective (ELBO for VI) is kept
    mc: int                 # Monte Carlo draws per VI step
    elbo_samples: int       # draws of the final ELBO estimate that ranks the restarts
    init_std_x: float       # initial std of q(x)
    init_std_c: float       # initial std of q(c)
    c_init: float           # initial density pre-activation of the grid
    logstd_max: float       # clamp of log std of q (keeps the flat prior's ELBO bounded)


class Estimate(NamedTuple):
    """Per scene, K weighted latents (K = 1 for MAP and VI: the best restart)."""

    x: torch.Tensor              # (B, K, 12) standardised scene latents
    c: torch.Tensor | None       # (B, K, c_dim) auxiliary latents (None without)
    weights: torch.Tensor        # (B, K) normalised importance weights
    scores: torch.Tensor         # (B, R) objective per restart (ELBO, log joint) or log weight per chain


def normal_logpdf(z: torch.Tensor, mu: torch.Tensor, logstd: torch.Tensor) -> torch.Tensor:
    """sum over the last axis of log N(z; mu, exp(logstd)^2)."""
    return (-0.5 * ((z - mu) * torch.exp(-logstd)) ** 2 - logstd - 0.5 * math.log(2 * math.pi)).sum(-1)


def stl_elbo(mu: torch.Tensor, logstd: torch.Tensor, eps: torch.Tensor,
             log_joint: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
    """Single-draw ELBO estimate log p(z) - log q(z) at z = mu + exp(logstd) eps with the path-derivative
    ("sticking the landing") estimator of Roeder, Wu & Duvenaud 2017 (Eq. 8): the variational parameters of
    log q are detached, so the gradient flows only through z and the score-function term (zero in expectation)
    is dropped; at q = p every draw's gradient is exactly 0. mu, logstd, eps (N, d) -> (N,).

    >>> mu = torch.zeros(1, 1, requires_grad=True); ls = torch.zeros(1, 1, requires_grad=True)
    >>> e = stl_elbo(mu, ls, torch.tensor([[0.7]]), lambda z: normal_logpdf(z, torch.zeros(1), torch.zeros(1)))
    >>> e.sum().backward(); float(mu.grad.abs() + ls.grad.abs())
    0.0
    """
    z = mu + torch.exp(logstd) * eps
    return log_joint(z) - normal_logpdf(z, mu.detach(), logstd.detach())


def _best(scores: torch.Tensor, *values: torch.Tensor) -> list[torch.Tensor]:
    """Per scene, the restart of largest score: scores (B, R), values (B, R, ...) -> (B, 1, ...)."""
    idx = scores.argmax(1)
    return [v[torch.arange(v.shape[0]), idx][:, None] for v in values]


def prior_inits(flow: RealNVP, scenes: int, restarts: int, gen: torch.Generator) -> torch.Tensor:
    """Initial scene latents of every restart: ``restarts`` prior draws per scene, (B, R, 12). MAP, VI and the
    no-corruption VI of a seed start from the first restarts of one such draw (common random numbers: each
    method's restarts are still prior draws, but a scene's methods start from the same points, so the paired
    differences of the claims do not carry the spread of the starting points)."""
    with torch.no_grad():
        return flow.sample(scenes * restarts, gen).reshape(scenes, restarts, -1)


def _starts(inits: torch.Tensor, restarts: int) -> torch.Tensor:
    """The first ``restarts`` of :func:`prior_inits`' draws, flattened scene-major: (B R, 12)."""
    if inits.shape[1] < restarts:
        raise ValueError(f"{inits.shape[1]} initial draws per scene for {restarts} restarts")
    return inits[:, :restarts].reshape(-1, inits.shape[-1]).clone()


def map_fit(model: Model, flow: RealNVP, y: torch.Tensor, ic: InferConfig, inits: torch.Tensor) -> Estimate:
    """MAP over (x, c): maximise log p(x) + log p(y | x, c) by Adam from R prior draws of x (the first R of
    ``inits`` (B, >= R, 12), :func:`prior_inits`) and an empty c; keep the restart of largest log joint.
    y (B, P, 3)."""
    B, R = y.shape[0], ic.restarts
    yy = y.repeat_interleave(R, 0)                                         # (B R, P, 3)
    x = _starts(inits, R).requires_grad_()
    params = [x]
    c = None
    if model.c_dim:
        c = model.init_c(B * R, ic.c_init).requires_grad_()
        params.append(c)
    opt = torch.optim.Adam(params, lr=ic.lr)
    for _ in range(ic.steps):
        obj = flow.log_prob(x) + model.log_lik(yy, x, c)
        opt.zero_grad(set_to_none=True)
        (-obj.sum()).backward()
        opt.step()
    with torch.no_grad():
        score = (flow.log_prob(x) + model.log_lik(yy, x, c)).reshape(B, R)
        xs = x.detach().reshape(B, R, -1)
        if c is None:
            (bx,) = _best(score, xs)
            return Estimate(bx, None, torch.ones(B, 1), score)
        bx, bc = _best(score, xs, c.detach().reshape(B, R, -1))
    return Estimate(bx, bc, torch.ones(B, 1), score)


def vi_fit(model: Model, flow: RealNVP, y: torch.Tensor, ic: InferConfig, inits: torch.Tensor,
           gen: torch.Generator) -> Estimate:
    """Mean-field VI q(x) q(c), a Gaussian (mean, log std) per dimension (RIG Sec. 4, after ProbNeRF), fitted by
    Adam on the path-derivative ELBO (:func:`stl_elbo`, ``mc`` draws per step, from ``gen``) from R restarts whose
    means start at the first R of ``inits`` (B, >= R, 12) (:func:`prior_inits`); the restart with
    the best final ELBO (``elbo_samples`` draws) is kept and its means are the estimate. log std is clamped to
    at most ``logstd_max``: with the improper flat prior the ELBO grows without bound as q(c) spreads over voxels
    the image does not constrain."""
    B, R = y.shape[0], ic.restarts
    N = B * R
    yy = y.repeat_interleave(R, 0)
    d_x = 12
    x0 = _starts(inits, R)
    mu = torch.cat([x0, model.init_c(N, ic.c_init)], 1) if model.c_dim else x0
    ls = torch.cat([torch.full((N, d_x), math.log(ic.init_std_x)),
                    torch.full((N, model.c_dim), math.log(ic.init_std_c))], 1)
    mu.requires_grad_()
    ls.requires_grad_()

    def log_joint(z: torch.Tensor, ys: torch.Tensor) -> torch.Tensor:
        x, c = z[:, :d_x], (z[:, d_x:] if model.c_dim else None)
        return flow.log_prob(x) + model.log_prior_c(c) + model.log_lik(ys, x, c)

    opt = torch.optim.Adam([mu, ls], lr=ic.lr)
    ys_mc = yy.repeat(ic.mc, 1, 1)
    for _ in range(ic.steps):
        lsc = ls.clamp(max=ic.logstd_max)
        eps = torch.randn(ic.mc * N, mu.shape[1], generator=gen)
        elbo = stl_elbo(mu.repeat(ic.mc, 1), lsc.repeat(ic.mc, 1), eps, lambda z: log_joint(z, ys_mc))
        opt.zero_grad(set_to_none=True)
        (-elbo.sum() / ic.mc).backward()
        opt.step()
    with torch.no_grad():
        lsc = ls.clamp(max=ic.logstd_max)
        total = torch.zeros(N)
        for _ in range(ic.elbo_samples):
            eps = torch.randn(N, mu.shape[1], generator=gen)
            total += stl_elbo(mu, lsc, eps, lambda z: log_joint(z, yy))
        score = (total / ic.elbo_samples).reshape(B, R)
        m = mu.detach().reshape(B, R, -1)
        bx, bc = _best(score, m[..., :d_x], m[..., d_x:])
    return Estimate(bx, bc if model.c_dim else None, torch.ones(B, 1), score)


class RegalConfig(NamedTuple):
    """ReGAL's settings (all from Config)."""

    chains: int             # K independent chains per scene
    ddim_steps: int         # reverse diffusion steps (DDIM, eta)
    eta: float              # DDIM noise level
    guidance: float         # reconstruction-guidance scale lambda
    langevin_steps: int     # Langevin steps on c per diffusion step
    langevin_step: float    # Langevin step size eta_c
    clip: float             # the sampler clamps xhat_0 to [-clip, clip]
    c_init: float           # initial density pre-activation of the grid


def importance_weights(log_w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Self-normalised importance weights over the last axis and their effective sample size
    ESS = 1 / sum_k w_k^2; log_w (B, K) -> (w (B, K), ess (B,)).

    >>> w, ess = importance_weights(torch.log(torch.tensor([[1.0, 1.0, 2.0]])))
    >>> w.tolist(), round(float(ess[0]), 6)
    ([[0.25, 0.25, 0.5]], 2.666667)
    """
    w = torch.softmax(log_w, -1)
    return w, 1 / (w ** 2).sum(-1)


def regal(model: Model, eps_net: EpsMLP, schedule: Schedule, y: torch.Tensor, rc: RegalConfig,
          gen: torch.Generator) -> Estimate:
    """ReGAL (RIG Sec. 4.2, Alg. 1): K guided reverse-diffusion chains per scene. At each DDIM step t -> s:

    1. Tweedie xhat_0(x_t) = (x_t - sqrt(1 - abar_t) eps(x_t, t)) / sqrt(abar_t);
    2. reconstruction guidance: eps~ = eps - lambda sqrt(1 - abar_t) grad_{x_t} log p(y | xhat_0(x_t), c), i.e. the
       score of p_t(x_t) plus lambda times the guidance term, then the DDIM step (eta) with eps~;
    3. ``langevin_steps`` Langevin steps on the auxiliary latent,
       c <- c + eta_c grad_c [log p(y | xhat_0, c) + log p(c)] + sqrt(2 eta_c) xi (the first reuses step 2's
       backward pass).

    The K chains of a scene are weighted by w_k ∝ p(y | x_0^k, c^k), the likelihood of each chain's final state
    (a formulation choice: the paper's weights need the proposal density, which the guided sampler does not
    have; with a prior proposal this is the standard importance weight). y (B, P, 3)."""
    B, K = y.shape[0], rc.chains
    N = B * K
    yy = y.repeat_interleave(K, 0)
    x = torch.randn(N, 12, generator=gen)
    c = model.init_c(N, rc.c_init) if model.c_dim else None
    steps = ddim_timesteps(schedule.T, rc.ddim_steps)
    for t, s in zip(steps[:-1], steps[1:]):
        ab = float(schedule.alpha_bar[t])
        x = x.detach().requires_grad_()
        cg = c.detach().requires_grad_() if c is not None else None
        eps = eps_net(x, torch.full((N,), t, dtype=torch.long))
        x0 = tweedie(schedule, x, t, eps).clamp(-rc.clip, rc.clip)
        ll = model.log_lik(yy, x0, cg)
        grads = torch.autograd.grad(ll.sum(), [x] + ([cg] if cg is not None else []))
        with torch.no_grad():
            eps_g = eps - rc.guidance * math.sqrt(1 - ab) * grads[0]
            m = ddim_mean(schedule, x, eps_g, t, s, rc.eta, rc.clip)
            x_next = m.mean + m.sigma * torch.randn(N, 12, generator=gen) if m.sigma > 0 else m.mean
        if cg is not None:
            c = _langevin(model, yy, x0.detach(), cg.detach(), grads[1], rc, gen)
        x = x_next
    with torch.no_grad():
        log_w = model.log_lik(yy, x, c).reshape(B, K)
    w, _ = importance_weights(log_w)
    return Estimate(x.detach().reshape(B, K, -1), c.reshape(B, K, -1) if c is not None else None, w, log_w)


def first_chains(est: Estimate, k: int) -> Estimate:
    """The ReGAL estimate of the first ``k`` of an estimate's K >= k chains, weights renormalised over their log
    weights. The K chains of a scene are independent, so the first k are distributed as a run with k chains;
    taking them from one run (common random numbers) pairs K = k with K = K on the same chains, and the
    difference between the two isolates what the extra chains add.

    >>> e = Estimate(torch.zeros(1, 3, 12), None, torch.ones(1, 3) / 3, torch.log(torch.tensor([[1.0, 3.0, 9.0]])))
    >>> [round(w, 6) for w in first_chains(e, 2).weights[0].tolist()]
    [0.25, 0.75]
    """
    K = est.weights.shape[1]
    if not 1 <= k <= K:
        raise ValueError(f"first {k} chains of a run with {K}")
    w, _ = importance_weights(est.scores[:, :k])
    return Estimate(est.x[:, :k], est.c[:, :k] if est.c is not None else None, w, est.scores[:, :k])


def _langevin(model: Model, yy: torch.Tensor, x0: torch.Tensor, c: torch.Tensor, grad_lik: torch.Tensor,
              rc: RegalConfig, gen: torch.Generator) -> torch.Tensor:
    """Unadjusted Langevin steps on c at fixed xhat_0 (step 3 of :func:`regal`)."""
    eta = rc.langevin_step
    for k in range(rc.langevin_steps):
        if k:
            cg = c.detach().requires_grad_()
            (grad_lik,) = torch.autograd.grad(model.log_lik(yy, x0, cg).sum(), [cg])
        cg = c.detach().requires_grad_()
        (grad_prior,) = torch.autograd.grad(model.log_prior_c(cg).sum(), [cg]) if model.kind == "fov" else (None,)
        with torch.no_grad():
            g = grad_lik + (grad_prior if grad_prior is not None else 0.0)
            c = c + eta * g + math.sqrt(2 * eta) * torch.randn(c.shape, generator=gen)
    return c.detach()

"""Maximum-likelihood fitting, the Voronoi loss and the Hellinger density error for the Gaussian MoE.

* :func:`fit_mle` maximizes the average log-likelihood of R data sets at once by damped Fisher
  scoring on analytic per-sample scores (:func:`scores`).
* :func:`voronoi_loss` is the loss D(G_hat, G*) in which the paper states its parameter rates.
* :func:`hellinger` is the density error E_X h(p_G_hat(.|X), p_G*(.|X)) whose rate is parametric.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from icml24.papers.moe_gating.model import ACTIVATION_DERIVATIVES, ACTIVATIONS, MoEParams, log_density, log_likelihood

# Voronoi exponent rbar(|A_j|) for cells holding 0, 1, 2, 3 fitted atoms (group's NeurIPS-2023 code).
RBAR: tuple[float, ...] = (0.0, 1.0, 4.0, 6.0)


# -- unconstrained coordinates -------------------------------------------------------------------
def has_temperature(gate: str) -> bool:
    """Whether the gate has the temperature tau (every gate except the plain softmax)."""
    return gate != "softmax"


def n_free(k: int, d: int, gate: str) -> int:
    """Number of free parameters: (k-1)(1+d) gate, 1 temperature, k(d+2) experts.

    >>> n_free(2, 1, "temperature"), n_free(2, 1, "softmax")
    (9, 8)
    """
    return (k - 1) * (1 + d) + int(has_temperature(gate)) + k * (d + 2)


def pack(p: MoEParams, gate: str) -> torch.Tensor:
    """Free parameters as one vector per replication, (R, n_free): beta0, beta1 of the k-1 non-reference
    experts, log tau (if the gate has it), a, b, log nu.
    """
    r = p.beta0.shape[0]
    parts = [p.beta0[:, :-1], p.beta1[:, :-1].reshape(r, -1)]
    if has_temperature(gate):
        parts.append(torch.log(p.tau)[:, None])
    parts += [p.a.reshape(r, -1), p.b, torch.log(p.nu)]
    return torch.cat(parts, dim=1)


def unpack(theta: torch.Tensor, k: int, d: int, gate: str) -> MoEParams:
    """Inverse of :func:`pack` (reference expert's gate set to zero; tau = 1 for the softmax gate).

    >>> p = MoEParams(torch.tensor([[0.5, 0.0]]), torch.tensor([[[2.0], [0.0]]]), torch.tensor([0.7]),
    ...               torch.tensor([[[1.0], [-1.0]]]), torch.tensor([[0.1, 0.2]]), torch.tensor([[0.3, 0.4]]))
    >>> all(torch.allclose(u, v) for u, v in zip(unpack(pack(p, "tanh"), 2, 1, "tanh"), p))
    True
    """
    r = theta.shape[0]
    i = 0

    def take(m: int) -> torch.Tensor:
        nonlocal i
        out = theta[:, i:i + m]
        i += m
        return out

    zero = theta.new_zeros(r, 1)
    beta0 = torch.cat([take(k - 1), zero], dim=1)  # (R, k)
    beta1 = torch.cat([take((k - 1) * d).reshape(r, k - 1, d), theta.new_zeros(r, 1, d)], dim=1)  # (R, k, d)
    tau = torch.exp(take(1)[:, 0]) if has_temperature(gate) else theta.new_ones(r)  # (R,)
    a = take(k * d).reshape(r, k, d)
    b = take(k)
    nu = torch.exp(take(k))
    return MoEParams(beta0, beta1, tau, a, b, nu)


# -- maximum likelihood -----------------------------------------------------------------------------
def scores(x: torch.Tensor, y: torch.Tensor, p: MoEParams, gate: str) -> torch.Tensor:
    """Per-sample scores d log p_G(y_t|x_t) / d theta in the coordinates of :func:`pack`, (R, n, n_free).

    With responsibilities r_i = pi_i phi_i / sum_j pi_j phi_j, gate probabilities pi_i, z_i = beta_1i^T x,
    residuals e_i = y - a_i^T x - b_i:

        d/d beta_0i   = r_i - pi_i                          d/d a_i     = r_i e_i / nu_i * x
        d/d beta_1i   = (r_i - pi_i) sigma'(z_i) / tau * x  d/d b_i     = r_i e_i / nu_i
        d/d log tau   = -sum_i (r_i - pi_i) sigma(z_i) / tau  d/d log nu_i = r_i (e_i^2 / nu_i - 1) / 2

    (softmax gate: sigma = identity, tau = 1, no log tau). A test checks these against autograd.
    """
    r_, n = max(y.shape[0], p.beta0.shape[0]), y.shape[1]
    k, d = p.k, p.d
    z = x @ p.beta1.transpose(-1, -2)  # (R, n, k)
    if gate == "softmax":
        sig, dsig, tau = z, torch.ones_like(z), torch.ones_like(p.tau)
    else:
        act = "identity" if gate == "temperature" else gate
        sig, dsig, tau = ACTIVATIONS[act](z), ACTIVATION_DERIVATIVES[act](z), p.tau
    tau3 = tau[:, None, None]
    s = (sig / tau3 if gate != "softmax" else sig) + p.beta0[:, None, :]  # (R, n, k) gate scores
    log_pi = torch.log_softmax(s, dim=-1)
    resid = y[..., None] - (x @ p.a.transpose(-1, -2) + p.b[:, None, :])  # (R, n, k)
    nu = p.nu[:, None, :]
    log_joint = log_pi - 0.5 * (resid ** 2 / nu + torch.log(2 * torch.pi * nu))
    resp = torch.softmax(log_joint, dim=-1)  # (R, n, k) responsibilities r_i
    gs = resp - log_pi.exp()  # (R, n, k) d log p / d s_i
    xe = x[:, :, None, :]  # (R, n, 1, d)
    parts = [gs[..., :-1], ((gs * dsig / tau3)[..., :-1, None] * xe).reshape(r_, n, -1)]
    if has_temperature(gate):
        parts.append(-(gs * sig).sum(dim=-1, keepdim=True) / tau3)
    u = resp * resid / nu  # (R, n, k)
    parts += [(u[..., None] * xe).reshape(r_, n, k * d), u, 0.5 * resp * (resid ** 2 / nu - 1)]
    return torch.cat(parts, dim=-1)


class FitResult(NamedTuple):
    """Output of :func:`fit_mle`.

    Attributes:
        params: the fitted parameters, one set per replication.
        loglik: (R,) average log-likelihood at the fit.
        iterations: iterations used.
        converged: (R,) whether the last accepted step was below ``tol`` (max-norm).
    """

    params: MoEParams
    loglik: torch.Tensor
    iterations: int
    converged: torch.Tensor


def fit_mle(x: torch.Tensor, y: torch.Tensor, init: MoEParams, gate: str, max_iter: int = 100,
            gain_tol: float = 1e-11, damping_min: float = 1e-6) -> FitResult:
    """Maximum-likelihood estimate of (MoE) for R data sets at once: damped Fisher scoring (BHHH/LM).

    Maximizes the average log-likelihood in the unconstrained coordinates of :func:`pack`. With the
    per-sample scores J (R, n, p) of :func:`scores`, each iteration solves
    (J^T J / n + lambda s I) step = mean_t J_t per replication (s: mean diagonal of J^T J / n), accepts
    the step where the likelihood rises (lambda /= 3) and rejects it otherwise (lambda *= 4). J^T J / n
    tends to the Fisher information at the MLE, so near the optimum this is Newton's method without
    second derivatives. A replication stops when an accepted step's predicted gain g^T step falls below
    ``gain_tol`` (the average log-likelihood is then within ~gain_tol of its local maximum); only
    replications still running are computed.

    ``damping_min`` keeps the system solvable along the temperature gate's flat direction: there every
    per-sample score is orthogonal to the ray (beta_1, tau) -> c (beta_1, tau) (the paper's PDE), so the
    fit does not move along it and the scale of (beta_1, tau) stays where the start put it.

    Args:
        x: (R, n, d), y: (R, n) data; init: starting parameters (R replications).
        gate: one of :data:`~icml24.papers.moe_gating.config.GATES`.
    """
    k, d = init.k, init.d
    theta = pack(init, gate)  # (R, p)
    eye = torch.eye(theta.shape[1], dtype=theta.dtype)
    lam = torch.full((theta.shape[0],), 1e-3, dtype=theta.dtype)  # (R,)
    current = log_likelihood(x, y, init, gate)  # (R,)
    converged = torch.zeros(theta.shape[0], dtype=torch.bool)
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 - its last value is the iteration count returned
        act = (~converged).nonzero()[:, 0]  # replications still running
        th, xa, ya = theta[act], x[act], y[act]
        jac = scores(xa, ya, unpack(th, k, d, gate), gate)  # (A, n, p)
        g = jac.mean(dim=1)  # (A, p) gradient of the average log-likelihood
        info = jac.transpose(1, 2) @ jac / jac.shape[1]  # (A, p, p) outer-product Fisher information
        scale = info.diagonal(dim1=1, dim2=2).mean(dim=1)  # (A,) damping in units of the information
        chol, bad = torch.linalg.cholesky_ex(info + (lam[act] * scale)[:, None, None] * eye)
        step = torch.nan_to_num(torch.cholesky_solve(g[..., None], chol)[..., 0]) * (bad == 0)[:, None]
        trial = log_likelihood(xa, ya, unpack(th + step, k, d, gate), gate)
        accept = torch.isfinite(trial) & (trial >= current[act])
        theta[act] = torch.where(accept[:, None], th + step, th)
        current[act] = torch.where(accept, trial, current[act])
        lam[act] = torch.where(accept, (lam[act] / 3).clamp_min(damping_min), lam[act] * 4)
        converged[act] = accept & ((g * step).sum(dim=1) < gain_tol)
        if bool(converged.all()):
            break
    return FitResult(unpack(theta, k, d, gate), current, it, converged)


# -- losses -----------------------------------------------------------------------------------------
class VoronoiLoss(NamedTuple):
    """The Voronoi loss and its parts, each (R,).

    Attributes:
        total: mass + atoms + temperature.
        mass: sum_j |sum_{i in A_j} exp(beta0_i) - exp(beta0*_j)|.
        atoms: sum_i exp(beta0_i) * (parameter errors of atom i to its cell's true atom, with exponents).
        temperature: |tau - tau*| (0 for the plain softmax gate).
        cell_sizes: (R, k*) number of fitted atoms in each Voronoi cell A_j.
    """

    total: torch.Tensor
    mass: torch.Tensor
    atoms: torch.Tensor
    temperature: torch.Tensor
    cell_sizes: torch.Tensor


def voronoi_loss(fit: MoEParams, truth: MoEParams, gate: str, rbar: tuple[float, ...] = RBAR) -> VoronoiLoss:
    """Voronoi loss D(G, G*) between fitted (k atoms) and true (k* atoms) mixing measures.

    Atoms are omega_i = (beta_1i, a_i, b_i, nu_i); the Voronoi cell A_j holds the fitted atoms nearest
    (Euclidean) to true atom j. With Delta the differences to the cell's true atom,

        D = sum_j |sum_{i in A_j} exp(beta_0i) - exp(beta*_0j)|
          + sum_{j: |A_j| = 1} sum_{i in A_j} exp(beta_0i) (||D beta_1|| + ||D a|| + |D b| + |D nu|)
          + sum_{j: |A_j| > 1} sum_{i in A_j} exp(beta_0i) (||D beta_1||^r + |D b|^r + ||D a||^(r/2) + |D nu|^(r/2))
          + |tau - tau*|,                                   r = rbar(|A_j|)

    (exact-specified k = k*: every cell has one atom and D is the plain weighted L1 distance). The
    shared temperature enters once. The loss is invariant to relabelling the fitted atoms.

    Args:
        fit: (R, k) fitted parameters; truth: (1 or R, k*) true parameters.

    >>> t = MoEParams(torch.tensor([[-1.0, 0.0]]), torch.tensor([[[4.0], [0.0]]]), torch.tensor([0.5]),
    ...               torch.tensor([[[-1.0], [1.5]]]), torch.tensor([[1.0, -1.0]]), torch.tensor([[0.09, 0.16]]))
    >>> voronoi_loss(t, t, "tanh").total.item()
    0.0
    """
    r = fit.beta0.shape[0]
    k_true = truth.k
    truth = truth.expand(r) if truth.beta0.shape[0] == 1 else truth

    def atoms(p: MoEParams) -> torch.Tensor:
        return torch.cat([p.beta1.reshape(r, p.k, -1), p.a.reshape(r, p.k, -1), p.b[..., None],
                          p.nu[..., None]], dim=-1)  # (R, k, 2d+2)

    assign = torch.cdist(atoms(fit), atoms(truth)).argmin(dim=-1)  # (R, k): cell of each fitted atom
    member = torch.nn.functional.one_hot(assign, k_true).to(fit.beta0.dtype)  # (R, k, k*)
    sizes = member.sum(dim=1)  # (R, k*)
    w = torch.exp(fit.beta0)  # (R, k)
    mass = (torch.einsum("rik,ri->rk", member, w) - torch.exp(truth.beta0)).abs().sum(dim=1)

    def matched(t: torch.Tensor) -> torch.Tensor:  # true value of each fitted atom's cell, (R, k, ...)
        idx = assign.reshape(r, -1, *([1] * (t.dim() - 2))).expand(-1, -1, *t.shape[2:])
        return t.gather(1, idx)

    e_beta1 = (fit.beta1 - matched(truth.beta1)).norm(dim=-1)  # (R, k)
    e_a = (fit.a - matched(truth.a)).norm(dim=-1)
    e_b = (fit.b - matched(truth.b)).abs()
    e_nu = (fit.nu - matched(truth.nu)).abs()
    size = sizes.gather(1, assign)  # (R, k): |A_j| of each fitted atom's cell
    rb = torch.tensor(rbar, dtype=fit.beta0.dtype)[size.long().clamp_max(len(rbar) - 1)]
    p1 = torch.where(size > 1, rb, torch.ones_like(rb))  # exponent of beta_1 and b
    p2 = torch.where(size > 1, rb / 2, torch.ones_like(rb))  # exponent of a and nu
    per_atom = e_beta1 ** p1 + e_b ** p1 + e_a ** p2 + e_nu ** p2  # (R, k)
    atom_term = (w * per_atom).sum(dim=1)
    temp = (fit.tau - truth.tau).abs() if has_temperature(gate) else torch.zeros_like(mass)
    return VoronoiLoss(mass + atom_term + temp, mass, atom_term, temp, sizes)


def rescale_to_truth(fit: MoEParams, truth: MoEParams) -> MoEParams:
    """Move a fit along the ray (beta_1, tau) -> c (beta_1, tau) to tau = tau* (c = tau*/tau_hat).

    For the temperature gate (and any positively homogeneous activation) this changes no density: it
    picks, among the equally likely parameters, the one at the true temperature. The Voronoi loss of
    the result measures the estimation error of everything the data can identify.
    """
    c = truth.tau.expand_as(fit.tau) / fit.tau  # (R,)
    return fit._replace(beta1=fit.beta1 * c[:, None, None], tau=fit.tau * c)


def hellinger(fit: MoEParams, truth: MoEParams, gate: str, x: torch.Tensor, y_grid: torch.Tensor) -> torch.Tensor:
    """Density error sqrt(E_X h^2(p_fit(.|X), p_truth(.|X))) per replication, shape (R,).

    h^2(p, q) = (1/2) int (sqrt p - sqrt q)^2 dy, by the trapezoid rule on ``y_grid``; E_X is the mean
    over the covariate points ``x`` (e.g. a midpoint grid of U[0,1]).

    Args:
        x: (m, d) covariate points; y_grid: (G,) increasing response grid covering both densities.
    """
    m, g = x.shape[0], y_grid.shape[0]
    xs = x[:, None, :].expand(m, g, -1).reshape(1, m * g, -1)  # (1, m*G, d)
    ys = y_grid[None, :].expand(m, g).reshape(1, m * g)  # (1, m*G)
    half_fit = (0.5 * log_density(xs, ys, fit, gate)).exp().reshape(-1, m, g)  # (R, m, G): sqrt p
    half_true = (0.5 * log_density(xs, ys, truth, gate)).exp().reshape(-1, m, g)
    h2 = 0.5 * torch.trapezoid((half_fit - half_true) ** 2, y_grid, dim=-1)  # (R, m)
    return h2.mean(dim=-1).sqrt()

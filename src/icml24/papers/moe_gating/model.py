"""The softmax Gaussian mixture of experts with its three gates (Nguyen, Akbarian, Ho, ICML 2024).

Data are pairs (X, Y), X in R^d, Y in R, with conditional density (the paper's Gaussian MoE)

    p_G(y | x) = sum_{i=1}^k  softmax_i( s(x) ) * N(y | a_i^T x + b_i, nu_i)             (MoE)

where ``nu_i`` is a *variance* and the gate score s_i(x) is one of (``gate`` argument):

* ``"softmax"``      s_i(x) = beta_1i^T x + beta_0i                       (plain softmax gate)
* ``"temperature"``  s_i(x) = (beta_1i^T x) / tau + beta_0i               (dense-to-sparse gate)
* ``"tanh"``, ``"sigmoid"``, ``"relu"``, ``"identity"``
                     s_i(x) = sigma(beta_1i^T x) / tau + beta_0i          (activation dense-to-sparse gate)

``tau > 0`` is one temperature shared by all experts. ``"identity"`` is the temperature gate written as
an activation gate (the two are the same function; a test checks it).

Parametrization choices (the paper's exact form was not available to us; see README, Deviations):

* The bias beta_0i sits outside the temperature and the activation, so exp(beta_0i) is the mixing
  weight in the Voronoi loss and the pair (beta_1, tau) carries the temperature interaction.
* Softmax is translation invariant, so the last expert is the reference: beta_0k = 0, beta_1k = 0.
* With a linear (or any positively homogeneous) sigma, (beta_1, tau) -> (c beta_1, c tau), c > 0, leaves
  every score unchanged. This is the integrated form of the paper's PDE
  ``tau du/dtau = -beta_1^T du/dbeta_1`` for u = exp(beta_1^T x / tau): the likelihood is constant along
  that ray, which is why the temperature gate's parameters converge slower than any polynomial rate.

All tensors carry a leading replication axis R (size 1 broadcasts), so one call handles R independent
data sets at once.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import torch

from icml24.papers.moe_gating.config import GATES

ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "tanh": torch.tanh,
    "sigmoid": torch.sigmoid,
    "relu": torch.relu,
    "identity": lambda z: z,
}
# sigma'(z) in closed form, for the analytic scores of the fitting code (checked against autograd in tests).
ACTIVATION_DERIVATIVES: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "tanh": lambda z: 1 - torch.tanh(z) ** 2,
    "sigmoid": lambda z: torch.sigmoid(z) * (1 - torch.sigmoid(z)),
    "relu": lambda z: (z > 0).to(z.dtype),
    "identity": torch.ones_like,
}


class MoEParams(NamedTuple):
    """Parameters of R Gaussian MoEs with k experts in d dimensions (last expert = gate reference).

    Attributes:
        beta0: (R, k) gate biases beta_0i; ``beta0[:, -1] == 0``.
        beta1: (R, k, d) gate slopes beta_1i; ``beta1[:, -1] == 0``.
        tau: (R,) temperature tau > 0 (ignored by the plain softmax gate).
        a: (R, k, d) expert slopes a_i.
        b: (R, k) expert intercepts b_i.
        nu: (R, k) expert variances nu_i > 0.
    """

    beta0: torch.Tensor
    beta1: torch.Tensor
    tau: torch.Tensor
    a: torch.Tensor
    b: torch.Tensor
    nu: torch.Tensor

    @property
    def k(self) -> int:
        return self.beta0.shape[-1]

    @property
    def d(self) -> int:
        return self.beta1.shape[-1]

    def to(self, dtype: torch.dtype) -> "MoEParams":
        return MoEParams(*(t.to(dtype) for t in self))

    def expand(self, reps: int) -> "MoEParams":
        """The same parameters repeated ``reps`` times along the replication axis (from R = 1)."""
        return MoEParams(*(t.expand(reps, *t.shape[1:]).clone() for t in self))


class Sample(NamedTuple):
    """R data sets of n pairs drawn from (MoE).

    Attributes:
        x: (R, n, d) covariates, i.i.d. uniform on [0, 1]^d.
        y: (R, n) responses.
        z: (R, n) the latent expert of each pair (0-based).
    """

    x: torch.Tensor
    y: torch.Tensor
    z: torch.Tensor


def activation(name: str) -> Callable[[torch.Tensor], torch.Tensor]:
    """The activation sigma of an activation gate by name (``tanh``, ``sigmoid``, ``relu``, ``identity``).

    >>> activation("tanh")(torch.tensor([0.0])).item()
    0.0
    """
    if name not in ACTIVATIONS:
        raise ValueError(f"unknown activation {name!r}; use one of {tuple(ACTIVATIONS)}")
    return ACTIVATIONS[name]


def gate_scores(x: torch.Tensor, p: MoEParams, gate: str) -> torch.Tensor:
    """Gate scores s_i(x) of the chosen gate (module docstring), shape (R, n, k).

    Args:
        x: (R, n, d) covariates (R = 1 broadcasts against the parameters' R).
        p: parameters.
        gate: one of :data:`GATES`.

    >>> p = MoEParams(torch.tensor([[1.0, 0.0]]), torch.tensor([[[2.0], [0.0]]]), torch.tensor([0.5]),
    ...               torch.zeros(1, 2, 1), torch.zeros(1, 2), torch.ones(1, 2))
    >>> gate_scores(torch.tensor([[[1.0]]]), p, "temperature")   # 2 * 1 / 0.5 + 1
    tensor([[[5., 0.]]])
    """
    lin = x @ p.beta1.transpose(-1, -2)  # (R, n, k): beta_1i^T x
    if gate == "softmax":
        return lin + p.beta0[:, None, :]
    if gate == "temperature":
        return lin / p.tau[:, None, None] + p.beta0[:, None, :]
    if gate in ACTIVATIONS:
        return activation(gate)(lin) / p.tau[:, None, None] + p.beta0[:, None, :]
    raise ValueError(f"unknown gate {gate!r}; use one of {GATES}")


def gate_weights(x: torch.Tensor, p: MoEParams, gate: str) -> torch.Tensor:
    """Gating probabilities softmax_i(s(x)), shape (R, n, k); rows sum to one."""
    return torch.softmax(gate_scores(x, p, gate), dim=-1)


def log_density(x: torch.Tensor, y: torch.Tensor, p: MoEParams, gate: str) -> torch.Tensor:
    """log p_G(y | x) of (MoE), computed stably with logsumexp; shape (R, n).

    Args:
        x: (R, n, d) covariates; y: (R, n) responses (R = 1 broadcasts).
    """
    log_gate = torch.log_softmax(gate_scores(x, p, gate), dim=-1)  # (R, n, k)
    mean = x @ p.a.transpose(-1, -2) + p.b[:, None, :]  # (R, n, k): a_i^T x + b_i
    nu = p.nu[:, None, :]  # (R, 1, k)
    log_normal = -0.5 * ((y[..., None] - mean) ** 2 / nu + torch.log(2 * torch.pi * nu))  # (R, n, k)
    return torch.logsumexp(log_gate + log_normal, dim=-1)


def log_likelihood(x: torch.Tensor, y: torch.Tensor, p: MoEParams, gate: str) -> torch.Tensor:
    """Average log-likelihood (1/n) sum_t log p_G(y_t | x_t) of each replication, shape (R,).

    >>> p = MoEParams(torch.zeros(1, 1), torch.zeros(1, 1, 1), torch.ones(1), torch.zeros(1, 1, 1),
    ...               torch.zeros(1, 1), torch.ones(1, 1))
    >>> round(log_likelihood(torch.zeros(1, 1, 1), torch.zeros(1, 1), p, "softmax").item(), 6)  # log N(0|0,1)
    -0.918939
    """
    return log_density(x, y, p, gate).mean(dim=-1)


def sample(truth: MoEParams, n: int, reps: int, gate: str, generator: torch.Generator) -> Sample:
    """Draw ``reps`` data sets of n pairs from (MoE): X ~ U[0,1]^d, Z ~ softmax(s(X)), Y ~ N(a_Z^T X + b_Z, nu_Z).

    Args:
        truth: parameters with R = 1 (or R = reps).
        generator: the only source of randomness (seeded by the caller).
    """
    dtype = truth.beta0.dtype
    x = torch.rand(reps, n, truth.d, generator=generator, dtype=dtype)  # (R, n, d)
    probs = gate_weights(x, truth, gate)  # (R, n, k)
    z = torch.multinomial(probs.reshape(-1, truth.k), 1, generator=generator).reshape(reps, n)  # (R, n)
    mean = (x @ truth.a.transpose(-1, -2) + truth.b[:, None, :]).gather(-1, z[..., None])[..., 0]  # (R, n)
    sd = truth.nu.expand(reps, -1).sqrt().gather(-1, z)  # (R, n)
    y = mean + sd * torch.randn(reps, n, generator=generator, dtype=dtype)
    return Sample(x, y, z)


class IndependenceCheck(NamedTuple):
    """Numerical check of the paper's linear-independence condition on an activation sigma.

    Attributes:
        first_order: smallest singular value of the column-normalized matrix of
            {1, sigma(beta x), x sigma'(beta x)} (first-order condition; 0 means dependent).
        second_order: the same for {1, sigma(beta x), x sigma'(beta x), x^2 sigma''(beta x)}.
        independent: ``second_order > tol``.
    """

    first_order: float
    second_order: float
    independent: bool


def _smallest_singular(cols: list[torch.Tensor]) -> float:
    mat = torch.stack(cols, dim=1)  # (m, c)
    norms = mat.norm(dim=0)
    if bool((norms < 1e-12 * norms.max()).any()):  # an identically zero function: dependent
        return 0.0
    return float(torch.linalg.svdvals(mat / norms).min())


def independence_check(act: str, betas: tuple[float, ...] = (4.0,), x_max: float = 1.0,
                       grid: int = 512, tol: float = 1e-6) -> IndependenceCheck:
    """Is sigma 'independent' in the paper's sense on the data support x in [0, x_max] (d = 1)?

    Differentiating the activation gate score u = sigma(beta x)/tau w.r.t. (tau, beta) up to second
    order produces (up to constants) the functions sigma(beta x), x sigma'(beta x), x^2 sigma''(beta x);
    with the bias they must be linearly independent for every gate slope beta of the model. If instead
    sigma(z) = z sigma'(z) (identity, ReLU on z > 0) then tau du/dtau = -beta du/dbeta, the paper's
    PDE, and the condition fails. We evaluate the functions on a grid, normalize each column to unit
    norm and report the smallest singular value (derivatives by autograd, float64).

    >>> independence_check("tanh").independent, independence_check("identity").independent
    (True, False)
    """
    sigma = activation(act)
    x = torch.linspace(0.0, x_max, grid, dtype=torch.float64)
    first, second = [torch.ones_like(x)], [torch.ones_like(x)]
    for beta in betas:
        z = (beta * x).requires_grad_(True)
        s = sigma(z)
        (ds,) = torch.autograd.grad(s.sum(), z, create_graph=True)  # sigma'(z)
        (d2s,) = torch.autograd.grad(ds.sum(), z, allow_unused=True) if ds.requires_grad else (None,)
        d2s = torch.zeros_like(x) if d2s is None else d2s  # sigma''(z)
        funcs = [s.detach(), x * ds.detach(), x ** 2 * d2s.detach()]
        first += funcs[:2]
        second += funcs
    low2 = _smallest_singular(second)
    return IndependenceCheck(_smallest_singular(first), low2, low2 > tol)

"""pcDEQ components: the fixed-point solver, implicit differentiation, the positive concave layers,
the nonnegativity projection, and the baselines (signed-weight DEQ, parameter-matched MLP).

Paper: Gabor, Piotrowski, Cavalcante, *Positive Concave Deep Equilibrium Models*, ICML 2024.
A pcDEQ layer computes the unique fixed point

    z* = g_x(z*),   g_x(z) = sigma(W z + x~)                                  (paper Sec. 3)

with W >= 0 (entrywise, any norm), sigma concave, monotone and positive on the positive orthant, and an
injection x~ that makes g_x map the orthant into its interior:

* pcDEQ-1: sigma in {tanh, softsign, relu6} (sigma(0) = 0), so x~ = softplus(x; beta=5) > 0;
* pcDEQ-2: sigma = sigmoid (sigma(0) = 1/2 > 0), so x~ = relu(x) >= 0 suffices.

Then g_x is a positive concave mapping, hence a standard interference mapping: it has at most one fixed
point, boundedness of sigma gives one, and the plain iteration z_{k+1} = g_x(z_k) converges to it
geometrically from any start in the orthant (nonlinear Perron-Frobenius theory; Krause 2015,
Piotrowski & Cavalcante 2022). Training keeps W >= 0 by projecting after every optimizer step.
"""

from __future__ import annotations

import math
from typing import Callable, Literal, NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, autograd, nn

Activation = Literal["tanh", "softsign", "relu6", "sigmoid"]
PCDEQ1_ACTIVATIONS: tuple[str, ...] = ("tanh", "softsign", "relu6")
SOFTPLUS_BETA = 5.0  # pcDEQ-1 injection softplus(x; beta), as in the official code
RESIDUAL_EPS = 1e-5  # denominator guard of the relative residual, as in the official solver


# ------------------------------------------------------------------------------------------------
# Fixed-point solver (paper Sec. 3, "standard fixed point algorithm"; Alg. = plain iteration)
# ------------------------------------------------------------------------------------------------
class SolverStats(NamedTuple):
    """Diagnostics of one fixed-point solve.

    Attributes:
        steps: number of applications of the map performed (1 <= steps <= max_iter).
        rel_residual: the last relative residual ||z_{k+1} - z_k|| / (||z_{k+1}|| + 1e-5), computed over
            the whole tensor (Frobenius norm over the batch), as the official solver does.
        residuals: the relative residual after each step (length ``steps``).
        converged: ``rel_residual < tol`` was reached within ``max_iter`` and every entry is finite.
    """

    steps: int
    rel_residual: float
    residuals: tuple[float, ...]
    converged: bool


class FixedPointResult(NamedTuple):
    """The solver's output: the last iterate ``z`` and its :class:`SolverStats`."""

    z: Tensor
    stats: SolverStats


def fixed_point_iteration(f: Callable[[Tensor], Tensor], z0: Tensor, max_iter: int = 200,
                          tol: float = 1e-4) -> FixedPointResult:
    """Plain fixed-point iteration z_{k+1} = f(z_k) from ``z0`` (the paper's solver, Sec. 3 / App.).

    Stops at the first k with ||z_{k+1} - z_k|| / (||z_{k+1}|| + 1e-5) < ``tol`` or after ``max_iter``
    applications of ``f``; a non-finite iterate also stops it (``converged=False``).

    Args:
        f: the map, any tensor shape to the same shape.
        z0: starting point, e.g. zeros (batch, width).

    >>> r = fixed_point_iteration(lambda z: 0.5 * z + 1.0, torch.zeros(3), max_iter=100, tol=1e-6)
    >>> round(float(r.z[0]), 4), r.stats.converged, r.stats.steps < 30
    (2.0, True, True)
    """
    z = z0
    residuals: list[float] = []
    for _ in range(max_iter):
        z_next = f(z)
        res = (torch.linalg.vector_norm(z_next - z) / (torch.linalg.vector_norm(z_next) + RESIDUAL_EPS)).item()
        z = z_next
        residuals.append(res)
        if not math.isfinite(res) or res < tol:
            break
    last = residuals[-1]
    return FixedPointResult(z, SolverStats(len(residuals), last, tuple(residuals),
                                           bool(math.isfinite(last) and last < tol)))


Solver = Literal["iteration", "anderson"]
SOLVERS: tuple[str, ...] = ("iteration", "anderson")


def anderson(f: Callable[[Tensor], Tensor], z0: Tensor, max_iter: int = 200, tol: float = 1e-4,
             memory: int = 5, lam: float = 1e-4, beta: float = 1.0) -> FixedPointResult:
    """Anderson acceleration of z = f(z) (type II, as in the DEQ code of Bai et al. 2019 and torchdeq):
    an option beside the paper's plain iteration, which stays the default.

    With the last n <= ``memory`` iterates X_i and values F_i = f(X_i) of each sample and G_i = F_i - X_i,
    the mixing weights solve min_alpha ||sum_i alpha_i G_i||^2 + lam c ||alpha||^2 s.t. sum_i alpha_i = 1
    (the bordered system [[0, 1^T], [1, G G^T + lam c I]] [nu; alpha] = [1; 0], per sample; the ridge
    is relative, c = mean_i ||G_i||^2, so that it does not swamp small residuals), and the next
    iterate is X = beta sum_i alpha_i F_i + (1 - beta) sum_i alpha_i X_i. Each step applies f once; the
    stopping rule, the relative residual ||f(z) - z|| / (||f(z)|| + 1e-5) over the whole tensor and the
    returned iterate f(z) are those of :func:`fixed_point_iteration`, so both solvers are compared at
    the same residual and by the same count of applications of f.

    >>> r = anderson(lambda z: 0.99 * z + 0.01, torch.zeros(2, 3), tol=1e-8)
    >>> round(float(r.z[0, 0]), 4), r.stats.converged, r.stats.steps < 10   # plain iteration: ~1800 steps
    (1.0, True, True)
    """
    shape, n = z0.shape, z0.shape[0]
    flat = lambda t: t.reshape(n, -1)  # noqa: E731  (batch, d)
    d = flat(z0).shape[1]
    X = z0.new_zeros(n, memory, d)
    Fv = z0.new_zeros(n, memory, d)
    residuals: list[float] = []

    def apply(k: int, x: Tensor) -> float:
        X[:, k % memory] = x
        fx = flat(f(x.reshape(shape)))
        Fv[:, k % memory] = fx
        res = (torch.linalg.vector_norm(fx - x) / (torch.linalg.vector_norm(fx) + RESIDUAL_EPS)).item()
        residuals.append(res)
        return res

    res = apply(0, flat(z0))
    k = 1
    if math.isfinite(res) and res >= tol and max_iter > 1:
        res = apply(1, Fv[:, 0].clone())
        k = 2
    H = z0.new_zeros(n, memory + 1, memory + 1)
    H[:, 0, 1:] = H[:, 1:, 0] = 1.0
    rhs = z0.new_zeros(n, memory + 1, 1)
    rhs[:, 0] = 1.0
    while k < max_iter and math.isfinite(res) and res >= tol:
        m = min(k, memory)
        G = Fv[:, :m] - X[:, :m]                                                  # (batch, m, d)
        GG = G @ G.transpose(1, 2)                                                # (batch, m, m)
        scale = GG.diagonal(dim1=1, dim2=2).mean(1)[:, None, None] + 1e-30        # relative ridge
        H[:, 1:m + 1, 1:m + 1] = GG + lam * scale * torch.eye(m, dtype=z0.dtype, device=z0.device)
        alpha = torch.linalg.solve(H[:, :m + 1, :m + 1], rhs[:, :m + 1])[:, 1:m + 1, 0]   # (batch, m)
        mixed = beta * (alpha[:, None] @ Fv[:, :m])[:, 0] + (1 - beta) * (alpha[:, None] @ X[:, :m])[:, 0]
        res = apply(k, mixed)
        k += 1
    last = residuals[-1]
    z = Fv[:, (k - 1) % memory].reshape(shape).clone()
    return FixedPointResult(z, SolverStats(len(residuals), last, tuple(residuals),
                                           bool(math.isfinite(last) and last < tol)))


def solve(solver: Solver, f: Callable[[Tensor], Tensor], z0: Tensor, max_iter: int, tol: float) -> FixedPointResult:
    """The fixed point of ``f`` by ``solver`` ("iteration": :func:`fixed_point_iteration`, "anderson")."""
    if solver == "iteration":
        return fixed_point_iteration(f, z0, max_iter, tol)
    if solver == "anderson":
        return anderson(f, z0, max_iter, tol)
    raise ValueError(f"unknown solver {solver!r}; use one of {SOLVERS}")


# ------------------------------------------------------------------------------------------------
# Layers: g_x(z) = sigma(W z + x~) with weight-normalised W = g * v / ||v|| (per output unit)
# ------------------------------------------------------------------------------------------------
def activation_fn(name: str) -> Callable[[Tensor], Tensor]:
    """sigma of the layer: tanh, softsign, relu6 (pcDEQ-1) or sigmoid (pcDEQ-2)."""
    table = {"tanh": torch.tanh, "softsign": F.softsign, "relu6": F.relu6, "sigmoid": torch.sigmoid}
    if name not in table:
        raise ValueError(f"activation {name!r} is not one of {', '.join(table)}")
    return table[name]


def pcdeq_injection(x: Tensor, activation: str) -> Tensor:
    """The injection x~ of paper Sec. 3: softplus(x; beta=5) > 0 for pcDEQ-1, relu(x) for pcDEQ-2.

    Note: in float32, softplus(x; 5) underflows to exactly 0 for x below about -20 (float64: -150);
    inputs come from BatchNorm here, so they stay far above that.

    >>> pcdeq_injection(torch.tensor([-3.0, 0.0]), "tanh") > 0
    tensor([True, True])
    >>> pcdeq_injection(torch.tensor([-1.0, 2.0]), "sigmoid")
    tensor([0., 2.])
    """
    if activation in PCDEQ1_ACTIVATIONS:
        return F.softplus(x, beta=SOFTPLUS_BETA)
    return F.relu(x)


def official_init_(v: Tensor, scale: float = 1e-4, generator: torch.Generator | None = None) -> Tensor:
    """In place: v ~ U[0, 1) * sqrt(scale) / sqrt(shape[0] + shape[1]) (the official code's init)."""
    with torch.no_grad():
        v.uniform_(0.0, 1.0, generator=generator).mul_(math.sqrt(scale) / math.sqrt(v.shape[0] + v.shape[1]))
    return v


class _WeightNormDEQLayer(nn.Module):
    """Shared parts: W = g * v / ||v||_row (torch's old ``weight_norm`` with dim=0), sigma, injection.

    Subclasses define :meth:`linear_map` (dense product or 3x3 convolution).
    """

    nonnegative: bool = True

    def __init__(self, v_shape: tuple[int, ...], activation: str, init_scale: float,
                 generator: torch.Generator | None) -> None:
        super().__init__()
        self.activation = activation
        self.sigma = activation_fn(activation)
        v = official_init_(torch.empty(v_shape), init_scale, generator)
        self.v = nn.Parameter(v)  # direction, shape v_shape
        self.g = nn.Parameter(self._row_norm(v).detach().clone())  # (out,), so W = v at init

    @staticmethod
    def _row_norm(v: Tensor) -> Tensor:
        return torch.linalg.vector_norm(v.flatten(1), dim=1)  # (out,)

    def weight(self) -> Tensor:
        """W = g * v / ||v|| with the norm over all but the output dimension (weight norm, dim=0)."""
        scale = self.g / self._row_norm(self.v).clamp_min(1e-12)  # (out,)
        return self.v * scale.view(-1, *([1] * (self.v.dim() - 1)))

    def inject(self, x: Tensor) -> Tensor:
        """x -> x~ (softplus(beta=5) for pcDEQ-1, relu for pcDEQ-2)."""
        return pcdeq_injection(x, self.activation)

    def step(self, z: Tensor, x_tilde: Tensor, weight: Tensor) -> Tensor:
        """One application of g_x: sigma(W z + x~), with W given (so a solve builds it once)."""
        return self.sigma(self.linear_map(z, weight) + x_tilde)

    def forward(self, z: Tensor, x_tilde: Tensor) -> Tensor:
        """g_x(z) = sigma(W z + x~)."""
        return self.step(z, x_tilde, self.weight())

    def project_(self) -> None:
        """The projection onto W >= 0: clamp g and v at 0 (a no-op for unconstrained layers)."""
        if self.nonnegative:
            with torch.no_grad():
                self.g.clamp_(min=0.0)
                self.v.clamp_(min=0.0)

    def linear_map(self, z: Tensor, weight: Tensor) -> Tensor:  # pragma: no cover - abstract
        raise NotImplementedError


class PcDEQLinear(_WeightNormDEQLayer):
    """Dense pcDEQ layer g_x(z) = sigma(W z + x~), W in R_+^{n x n} (paper Sec. 3; MNIST linear model).

    Args:
        width: n, the number of units (80 on MNIST).
        activation: tanh / softsign / relu6 (pcDEQ-1) or sigmoid (pcDEQ-2).
        init_scale: the official init's variance parameter (1e-4).

    Shapes: ``forward(z, x_tilde)`` with z, x_tilde of shape (batch, n).

    >>> layer = PcDEQLinear(4, "tanh", generator=torch.Generator().manual_seed(0))
    >>> bool((layer.weight() >= 0).all()), layer(torch.zeros(2, 4), torch.ones(2, 4)).shape
    (True, torch.Size([2, 4]))
    """

    def __init__(self, width: int, activation: Activation = "tanh", init_scale: float = 1e-4,
                 generator: torch.Generator | None = None) -> None:
        super().__init__((width, width), activation, init_scale, generator)

    def linear_map(self, z: Tensor, weight: Tensor) -> Tensor:
        return z @ weight.T  # (batch, n)


class PcDEQConv(_WeightNormDEQLayer):
    """Convolutional pcDEQ layer: g_x(z) = sigma(W * z + x~), W a 3x3 convolution with nonnegative taps.

    Args:
        channels: C (82 for MNIST single-conv; 125 for CIFAR-10 single-conv).

    Shapes: z, x_tilde (batch, C, H, W); padding 1 keeps H, W.

    >>> layer = PcDEQConv(3, "sigmoid", generator=torch.Generator().manual_seed(0))
    >>> layer(torch.zeros(1, 3, 5, 5), torch.zeros(1, 3, 5, 5)).shape
    torch.Size([1, 3, 5, 5])
    """

    def __init__(self, channels: int, activation: Activation = "tanh", init_scale: float = 1e-4,
                 generator: torch.Generator | None = None) -> None:
        super().__init__((channels, channels, 3, 3), activation, init_scale, generator)

    def linear_map(self, z: Tensor, weight: Tensor) -> Tensor:
        return F.conv2d(z, weight, padding=1)


class UnconstrainedDEQLinear(PcDEQLinear):
    """Baseline: the same dense layer and init but never projected, so W becomes signed in training.

    It is an ablation of the nonnegativity constraint only (same sigma, injection, solver, init).
    """

    nonnegative = False


def project_nonnegative_(module: nn.Module) -> None:
    """Apply the W >= 0 projection to every pcDEQ layer inside ``module`` (call after optimizer.step())."""
    for layer in module.modules():
        if isinstance(layer, _WeightNormDEQLayer):
            layer.project_()


def attach_projection(optimizer: torch.optim.Optimizer, module: nn.Module):
    """Register :func:`project_nonnegative_` as a post-step hook of ``optimizer``; returns the handle.

    >>> layer = PcDEQLinear(3)
    >>> opt = torch.optim.SGD(layer.parameters(), lr=10.0)
    >>> _ = attach_projection(opt, layer)
    >>> layer(torch.ones(1, 3), torch.ones(1, 3)).sum().backward()  # gradient > 0: SGD pushes W below 0
    >>> opt.step()
    >>> bool((layer.weight() >= 0).all()), bool((layer.g == 0).all())  # g went below 0 and was clipped
    (True, True)
    """
    return optimizer.register_step_post_hook(lambda *_: project_nonnegative_(module))


# ------------------------------------------------------------------------------------------------
# DEQ with implicit differentiation (paper Sec. 3 training; Bai et al. 2019 backward)
# ------------------------------------------------------------------------------------------------
class DEQ(nn.Module):
    """Equilibrium layer: z* = g(z*, x~) by :func:`fixed_point_iteration` (or :func:`anderson`), gradients
    implicitly.

    Forward: solve from z_0 = 0 without gradients, then apply g once more with gradients (the official
    scheme, which makes dL/dtheta = u^T dg/dtheta with u below). Backward: the incoming gradient
    dL/dz* is replaced by the adjoint fixed point

        u = J^T u + dL/dz*,   J = dg/dz at z*            (implicit function theorem)

    solved by the same iteration (starting at dL/dz*) through a tensor hook.

    Args:
        layer: a :class:`PcDEQLinear`, :class:`PcDEQConv` or :class:`UnconstrainedDEQLinear`.
        max_iter, tol: forward solver cap and relative-residual tolerance (200, 1e-4 in the paper's code).
        backward_max_iter, backward_tol: the adjoint solver's (default: the forward values).
        solver: "iteration" (the paper's) or "anderson", for the forward and the adjoint solve alike.

    After a call, ``forward_stats`` (and after backward, ``backward_stats``) hold :class:`SolverStats`.
    The input is the raw pre-injection x; the layer's injection is applied inside.

    >>> deq = DEQ(PcDEQLinear(5, "tanh", generator=torch.Generator().manual_seed(0)), tol=1e-6)
    >>> z = deq(torch.randn(2, 5, generator=torch.Generator().manual_seed(1)))
    >>> x_t = deq.layer.inject(torch.randn(2, 5, generator=torch.Generator().manual_seed(1)))
    >>> bool(torch.allclose(z, deq.layer(z, x_t), atol=1e-5)), deq.forward_stats.converged
    (True, True)
    """

    def __init__(self, layer: _WeightNormDEQLayer, max_iter: int = 200, tol: float = 1e-4,
                 backward_max_iter: int | None = None, backward_tol: float | None = None,
                 solver: Solver = "iteration") -> None:
        super().__init__()
        if solver not in SOLVERS:
            raise ValueError(f"unknown solver {solver!r}; use one of {SOLVERS}")
        self.layer = layer
        self.solver: Solver = solver
        self.max_iter, self.tol = max_iter, tol
        self.backward_max_iter = backward_max_iter or max_iter
        self.backward_tol = backward_tol or tol
        self.forward_stats: SolverStats | None = None
        self.backward_stats: SolverStats | None = None

    def forward(self, x: Tensor) -> Tensor:
        x_tilde = self.layer.inject(x)  # (batch, ...)
        with torch.no_grad():
            w = self.layer.weight()
            xt = x_tilde.detach()
            sol = solve(self.solver, lambda z: self.layer.step(z, xt, w), torch.zeros_like(xt),
                        self.max_iter, self.tol)
        self.forward_stats = sol.stats
        z = self.layer.step(sol.z, x_tilde, self.layer.weight())  # one step with gradients
        if z.requires_grad:
            z0 = sol.z.detach().requires_grad_()
            f0 = self.layer.step(z0, xt, w)  # graph for the vector-Jacobian products u -> J^T u

            def adjoint(grad: Tensor | None) -> Tensor | None:
                if grad is None:  # an undefined (all-zero) incoming gradient stays undefined
                    return None
                out = solve(self.solver, lambda u: autograd.grad(f0, z0, u, retain_graph=True)[0] + grad, grad,
                            self.backward_max_iter, self.backward_tol)
                self.backward_stats = out.stats
                return out.z

            z.register_hook(adjoint)
        return z


def unrolled_deq(layer: _WeightNormDEQLayer, x: Tensor, steps: int) -> Tensor:
    """Reference: ``steps`` iterations of g from 0, differentiated by backprop through every step.

    As steps -> infinity its gradient tends to the implicit one of :class:`DEQ` (a test checks this).
    """
    x_tilde, w = layer.inject(x), layer.weight()
    z = torch.zeros_like(x_tilde)
    for _ in range(steps):
        z = layer.step(z, x_tilde, w)
    return z


# ------------------------------------------------------------------------------------------------
# Networks used by the experiment (the official "linear" MNIST model and baselines)
# ------------------------------------------------------------------------------------------------
class LinearDEQNet(nn.Module):
    """flatten -> Linear(d, n) -> BN -> DEQ layer -> BN -> Linear(n, classes) (official linear model).

    ``layer`` decides pcDEQ (nonnegative) or unconstrained; ``project_()`` is the post-step projection.
    """

    def __init__(self, d_in: int, width: int, classes: int, layer: _WeightNormDEQLayer,
                 max_iter: int = 200, tol: float = 1e-4, solver: Solver = "iteration") -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_in, width)
        self.bn1 = nn.BatchNorm1d(width)
        self.deq = DEQ(layer, max_iter, tol, solver=solver)
        self.bn2 = nn.BatchNorm1d(width)
        self.classifier = nn.Linear(width, classes)

    def forward(self, x: Tensor) -> Tensor:
        h = self.bn1(self.linear1(x.flatten(1)))  # (batch, n)
        return self.classifier(self.bn2(self.deq(h)))  # (batch, classes)

    def project_(self) -> None:
        project_nonnegative_(self)


class MLPNet(nn.Module):
    """Parameter-matched feed-forward baseline: Linear(d, n) -> BN -> tanh -> Linear(n, n) -> tanh -> BN
    -> Linear(n, classes). Its n*n + n hidden weights+bias equal the pcDEQ's n*n v + n g."""

    def __init__(self, d_in: int, width: int, classes: int) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(d_in, width), nn.BatchNorm1d(width), nn.Tanh(),
                                 nn.Linear(width, width), nn.Tanh(), nn.BatchNorm1d(width),
                                 nn.Linear(width, classes))

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)

    def project_(self) -> None:
        """Nothing to project (kept so all models train with one loop)."""


# ------------------------------------------------------------------------------------------------
# Property study: random instances, many starts (numpy float64, rows = starts)
# ------------------------------------------------------------------------------------------------
class RowSolve(NamedTuple):
    """Row-wise fixed-point iteration of z <- sigma(z W^T + x), each row its own start.

    Attributes:
        z: (rows, n) last iterates.
        steps: (rows,) first step at which the row's relative residual fell below tol (max_iter if never).
        converged: (rows,) whether it did (and stayed finite).
        residuals: (iters, rows) relative residual ||z_{k+1} - z_k||_2 / (||z_{k+1}||_2 + 1e-5) per row.
    """

    z: np.ndarray
    steps: np.ndarray
    converged: np.ndarray
    residuals: np.ndarray


_NP_SIGMA: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "tanh": np.tanh, "softsign": lambda a: a / (1 + np.abs(a)),
    "relu6": lambda a: np.clip(a, 0.0, 6.0), "sigmoid": lambda a: 1.0 / (1.0 + np.exp(-a))}


def iterate_rows(w: np.ndarray, x: np.ndarray, z0: np.ndarray, activation: str = "tanh",
                 max_iter: int = 2000, tol: float = 1e-10) -> RowSolve:
    """Fixed-point iteration of g(z) = sigma(W z + x) for every row of ``z0`` at once (float64).

    Args:
        w: (n, n) weights; x: (n,) injected input (already x~); z0: (rows, n) starts.

    >>> s = iterate_rows(np.zeros((2, 2)), np.array([0.5, 1.0]), np.ones((3, 2)), max_iter=5)
    >>> bool(s.converged.all()), np.allclose(s.z, np.tanh([0.5, 1.0]))
    (True, True)
    """
    sigma = _NP_SIGMA[activation]
    z = z0.astype(np.float64)
    rows = z.shape[0]
    steps = np.full(rows, max_iter)
    done = np.zeros(rows, dtype=bool)
    residuals = []
    for k in range(1, max_iter + 1):
        with np.errstate(over="ignore", invalid="ignore"):
            z_next = sigma(z @ w.T + x)  # (rows, n)
            res = np.linalg.norm(z_next - z, axis=1) / (np.linalg.norm(z_next, axis=1) + RESIDUAL_EPS)
        z = z_next
        residuals.append(res)
        newly = ~done & (res < tol)
        steps[newly] = k
        done |= newly
        if done.all():
            break
    return RowSolve(z, steps, done & np.isfinite(z).all(axis=1), np.array(residuals))


def random_instance(n: int, spectral_norm: float, rng: np.random.Generator, nonnegative: bool,
                    activation: str = "tanh") -> tuple[np.ndarray, np.ndarray]:
    """A random layer (W, x~) with ||W||_2 = ``spectral_norm``.

    nonnegative=True: W_ij ~ U[0, 1), x~ = injection of N(0, 1) (softplus(beta=5) or relu): a pcDEQ.
    nonnegative=False: W_ij ~ N(0, 1) (signed), x~ ~ N(0, 1): an unconstrained DEQ of the same size.
    """
    if nonnegative:
        w = rng.uniform(0.0, 1.0, size=(n, n))
        x = pcdeq_injection(torch.from_numpy(rng.normal(size=n)), activation).numpy()
    else:
        w = rng.normal(size=(n, n))
        x = rng.normal(size=n)
    return w * (spectral_norm / np.linalg.norm(w, 2)), x


def thompson_distance(a: Tensor, b: Tensor) -> Tensor:
    """Thompson metric on the interior of the orthant: d_T(a, b) = max_i |log a_i - log b_i| (last dim).

    Positive concave maps are nonexpansive in d_T; the paper's geometric-convergence proof runs in it.

    >>> float(thompson_distance(torch.tensor([1.0, 2.0]), torch.tensor([2.0, 2.0])))
    0.6931...
    """
    return (torch.log(a) - torch.log(b)).abs().amax(dim=-1)


def geometric_rate(residuals: np.ndarray, floor: float = 1e-13) -> float:
    """exp(slope) of a least-squares line through log(residual_k) vs k (points above ``floor`` only).

    A trace r_k = c * q^k gives exactly q.

    >>> round(geometric_rate(3.0 * 0.5 ** np.arange(1, 20)), 6)
    0.5
    """
    r = np.asarray(residuals, dtype=np.float64)
    keep = np.isfinite(r) & (r > floor)
    if keep.sum() < 2:
        return 0.0
    k = np.arange(1, r.size + 1)[keep]
    return float(np.exp(np.polyfit(k, np.log(r[keep]), 1)[0]))

"""ACPO and the baselines, for any differentiable policy class (torch).

A policy is an ``nn.Module`` with ``dist(obs) -> torch.distributions.Distribution`` whose
``log_prob(actions)`` is per sample. Every trust-region method here shares one step:

1. surrogates on the batch (ratio = pi_theta / pi_k):
   ``L_R(theta) = mean(ratio * A_R)``, ``L_C(theta) = mean(ratio * A_C)``, gradients g and b at theta_k;
2. the Fisher matrix H of the mean KL(pi_k || pi_theta), used only through Hessian-vector products
   (:func:`fisher_vector_product`) and conjugate gradient (:func:`conjugate_gradient`): v = H^-1 g,
   w = H^-1 b;
3. the step of the linearised trust-region problem (ACPO Eq. (9)-(10), the CPO form of Achiam et al.
   2017, Thm 2 / App. 10.2 [R])

       max_x g^T x   s.t.   c + b^T x <= 0,   1/2 x^T H x <= delta,

   with c = J_C(pi_k) - l, in closed form by its Lagrange dual (:func:`trust_region_step`); if no point
   of the trust region is feasible, the recovery step x = -sqrt(2 delta / b^T H^-1 b) H^-1 b (ACPO,
   recovery; CPO Eq. 14);
4. a backtracking line search (:func:`line_search`).

What differs between the methods is the advantage and the acceptance rule:

* **ACPO**: average-reward advantages (bias critic, undiscounted GAE, :func:`icml24.common.rl.average_gae`)
  for reward *and* cost; c from the batch's average cost; line search on KL, the linearised constraint
  and the merit L_R - nu* max(0, c + L_C) (our reading of "a line search that trades off constraint
  satisfaction and reward improvement": the paper gives no formula we could read).
* **ATRPO** (Zhang & Ross 2021): the same advantages and trust region, no constraint.
* **CPO with a discount** gamma (Achiam et al. 2017, adapted as ACPO does): discounted GAE advantages,
  c from the batch's average cost (the quantity the constraint is on), CPO's line search (KL, cost
  surrogate not above max(0, -c) and reward surrogate not negative when feasible).
* **PCPO** (Yang et al. 2020, Eq. 10, KL projection): the TRPO reward step, then the projection
  x = sqrt(2 delta / q) v - max(0, (sqrt(2 delta / q) r + c) / s) w onto the linearised constraint.
* **PPO-Lagrangian** (Ray et al. 2019): clipped surrogate of (A_R - lambda A_C) / (1 + lambda), lambda
  updated by projected dual ascent on J_C - l; discounted advantages.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Literal, NamedTuple

import torch
from torch import nn

Method = Literal["acpo", "atrpo", "cpo", "pcpo", "ppo_lag"]
METHODS: tuple[str, ...] = ("acpo", "atrpo", "cpo", "pcpo", "ppo_lag")
MAX_STEP_RATIO = 100.0   # a proposed step with 1/2 x^T H x above this many delta is a numerical failure


# ---------------------------------------------------------------- policies and critics
class Policy(nn.Module):
    """A stochastic policy: ``dist(obs)`` is the action distribution, ``log_prob`` per sample.

    The updates read the policy through ``log_prob``, ``freeze`` and ``mean_kl``, which go through
    ``dist`` here; a policy class with a cheaper exact form overrides them (:class:`TabularSoftmaxPolicy`)."""

    def dist(self, obs: torch.Tensor) -> torch.distributions.Distribution:
        raise NotImplementedError

    def log_prob(self, obs: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        """log pi_theta(a_i | s_i) per sample (M,)."""
        return self.dist(obs).log_prob(actions)

    def freeze(self, obs: torch.Tensor) -> Any:
        """pi_k on ``obs``, detached: the first argument of :meth:`mean_kl`."""
        with torch.no_grad():
            return self.dist(obs)

    def mean_kl(self, old: Any, obs: torch.Tensor) -> torch.Tensor:
        """The sample mean over ``obs`` of KL(pi_k(.|s) || pi_theta(.|s)), ``old`` = ``freeze(obs)`` at theta_k."""
        return torch.distributions.kl_divergence(old, self.dist(obs)).mean()


class TabularSoftmaxPolicy(Policy):
    """pi(a|s) = softmax(theta[s])_a over a finite state and action set (float64)."""

    def __init__(self, n_states: int, n_actions: int, logits: torch.Tensor | None = None):
        super().__init__()
        init = torch.zeros(n_states, n_actions, dtype=torch.float64) if logits is None else logits.double()
        self.logits = nn.Parameter(init.clone())               # (S, A)

    def dist(self, obs: torch.Tensor) -> torch.distributions.Categorical:
        return torch.distributions.Categorical(logits=self.logits[obs])

    def table(self) -> torch.Tensor:
        """pi as an (S, A) table of probabilities."""
        return torch.softmax(self.logits.detach(), dim=-1)

    def log_table(self) -> torch.Tensor:
        """log pi as an (S, A) table, differentiable: theta[s] - logsumexp(theta[s])."""
        return self.logits - self.logits.logsumexp(-1, keepdim=True)

    def log_prob(self, obs: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        """log pi(a_i | s_i) (M,), normalised once per state, not once per sample."""
        return self.log_table()[obs, actions]

    def freeze(self, obs: torch.Tensor) -> torch.Tensor:
        """log pi_k (S, A), detached (the batch enters only in :meth:`mean_kl`)."""
        return self.log_table().detach()

    def mean_kl(self, old: torch.Tensor, obs: torch.Tensor) -> torch.Tensor:
        """KL(pi_k(.|s) || pi(.|s)) = sum_a pi_k(a|s) (log pi_k(a|s) - log pi(a|s)) per state (S,), then its
        sample mean over the batch's states ``obs`` (M,)."""
        kl_s = (old.exp() * (old - self.log_table())).sum(-1)                       # (S,)
        return kl_s[obs].mean()


class GaussianMLPPolicy(Policy):
    """pi(.|s) = N(mu_theta(s), diag(exp(2 log_std))): tanh MLP mean, state-independent log std."""

    def __init__(self, obs_dim: int, act_dim: int, hidden: int, log_std: float = -0.5):
        super().__init__()
        self.mu = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                nn.Linear(hidden, act_dim))
        self.log_std = nn.Parameter(torch.full((act_dim,), log_std))

    def dist(self, obs: torch.Tensor) -> torch.distributions.Distribution:
        return torch.distributions.Independent(torch.distributions.Normal(self.mu(obs), self.log_std.exp()), 1)


class TabularCritic:
    """``heads`` value tables V (heads, S) (a reward and a cost critic), each fitted by exact least squares
    (the per-state mean of its targets)."""

    dtype = torch.float64

    def __init__(self, n_states: int, heads: int = 1):
        self.v = torch.zeros(heads, n_states, dtype=torch.float64)

    def __call__(self, obs: torch.Tensor) -> torch.Tensor:
        """V_i(s) for every head i and sample s: (heads, M)."""
        return self.v[:, obs]

    def fit(self, obs: torch.Tensor, target: torch.Tensor) -> None:
        """Fit head i to ``target[i]`` (heads, M)."""
        count = torch.bincount(obs, minlength=self.v.shape[1]).double()                   # (S,)
        total = torch.zeros_like(self.v).index_add_(1, obs, target.double())              # (heads, S)
        seen = count > 0
        self.v[:, seen] = total[:, seen] / count[seen]


class MLPCritic:
    """``heads`` independent tanh MLPs V_phi_i on the same input (a reward and a cost critic), fitted by
    full-batch Adam on squared error (``iters`` steps per fit). The heads are fitted together, on the sum of
    their losses with one Adam over all their weights: the sum's gradient with respect to one network is that
    network's own and Adam acts per weight, so every head follows exactly the trajectory it would alone, with
    one backward pass and one (multi-tensor) Adam step per iteration for all of them."""

    dtype = torch.float32

    def __init__(self, obs_dim: int, hidden: int, heads: int = 1, lr: float = 3e-3, iters: int = 40):
        self.nets = [nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                   nn.Linear(hidden, 1)) for _ in range(heads)]
        self.opt = torch.optim.Adam([p for net in self.nets for p in net.parameters()], lr=lr, foreach=True)
        self.iters = iters

    def __call__(self, obs: torch.Tensor) -> torch.Tensor:
        """V_i(s) for every head i and sample s: (heads, M)."""
        with torch.no_grad():
            return torch.stack([net(obs).squeeze(-1) for net in self.nets])

    def fit(self, obs: torch.Tensor, target: torch.Tensor) -> None:
        """Fit head i to ``target[i]`` (heads, M)."""
        for _ in range(self.iters):
            self.opt.zero_grad()
            loss = sum((net(obs).squeeze(-1) - t).pow(2).mean() for net, t in zip(self.nets, target))
            loss.backward()
            self.opt.step()


# ---------------------------------------------------------------- linear algebra of the trust region
def flat_params(policy: nn.Module) -> torch.Tensor:
    return torch.cat([p.detach().reshape(-1) for p in policy.parameters()])


def set_flat_params(policy: nn.Module, flat: torch.Tensor) -> None:
    i = 0
    for p in policy.parameters():
        n = p.numel()
        p.data.copy_(flat[i:i + n].view_as(p))
        i += n


def flat_grad(y: torch.Tensor, policy: nn.Module, **kw) -> torch.Tensor:
    return torch.cat([g.reshape(-1) for g in torch.autograd.grad(y, list(policy.parameters()), **kw)])


def fisher_vector_product(policy: Policy, obs: torch.Tensor, old: Any,
                          damping: float) -> Callable[[torch.Tensor], torch.Tensor]:
    """v -> (H + damping I) v, H the Hessian of mean KL(pi_k || pi_theta) at theta = theta_k (the Fisher
    information matrix of the policy, TRPO App. C; ``old`` = ``policy.freeze(obs)`` at theta_k), by double
    backpropagation; a tabular softmax policy takes its closed form (:func:`tabular_fisher_vector_product`,
    equal to it, tested)."""
    if isinstance(policy, TabularSoftmaxPolicy):
        return tabular_fisher_vector_product(policy, obs, damping)
    return autograd_fisher_vector_product(policy, obs, old, damping)


def tabular_fisher_vector_product(policy: TabularSoftmaxPolicy, obs: torch.Tensor,
                                  damping: float) -> Callable[[torch.Tensor], torch.Tensor]:
    """The Fisher matrix of a tabular softmax policy on a batch is block-diagonal over states,
    H_s = (n_s / M) (diag(pi_s) - pi_s pi_s^T) (n_s visits of state s in the M samples), so
    (H v)_s = (n_s / M) pi_s * (v_s - pi_s^T v_s): O(S A) per product, no autograd."""
    S, A = policy.logits.shape
    weight = (torch.bincount(obs, minlength=S).double() / len(obs)).unsqueeze(1)      # (S, 1)
    pi = policy.table()                                                                # (S, A)

    def fvp(v: torch.Tensor) -> torch.Tensor:
        V = v.view(S, A)
        return (weight * pi * (V - (pi * V).sum(1, keepdim=True))).reshape(-1) + damping * v

    return fvp


def autograd_fisher_vector_product(policy: Policy, obs: torch.Tensor, old: Any,
                                   damping: float) -> Callable[[torch.Tensor], torch.Tensor]:
    """v -> (H + damping I) v for any policy class, by double backpropagation through the mean KL."""
    kl = policy.mean_kl(old, obs)
    grad_kl = flat_grad(kl, policy, create_graph=True)

    def fvp(v: torch.Tensor) -> torch.Tensor:
        return flat_grad(grad_kl @ v, policy, retain_graph=True).detach() + damping * v

    return fvp


def conjugate_gradient(Av: Callable[[torch.Tensor], torch.Tensor], b: torch.Tensor, iters: int,
                       tol: float = 1e-10) -> torch.Tensor:
    """Solve A x = b for symmetric positive definite A given only x -> A x (Hestenes-Stiefel CG).

    >>> A = torch.tensor([[4.0, 1.0], [1.0, 3.0]], dtype=torch.float64)
    >>> conjugate_gradient(lambda v: A @ v, torch.tensor([1.0, 2.0], dtype=torch.float64), 10).tolist()
    [0.09090909090909091, 0.6363636363636364]
    """
    x = torch.zeros_like(b)
    r = b.clone()
    p = r.clone()
    rr = r @ r
    for _ in range(iters):
        if rr <= tol:
            break
        Ap = Av(p)
        alpha = rr / (p @ Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rr_new = r @ r
        p = r + (rr_new / rr) * p
        rr = rr_new
    return x


class TrustRegionStep(NamedTuple):
    """The solution of the linearised problem of the module docstring."""

    x: torch.Tensor      # the step in parameter space
    lam: float           # multiplier of the KL constraint (0 in the recovery case)
    nu: float            # multiplier of the cost constraint
    case: str            # "unconstrained" | "constrained" | "recovery"


def trust_region_step(v: torch.Tensor, w: torch.Tensor, g: torch.Tensor, b: torch.Tensor, c: float,
                      delta: float, eps: float = 1e-12, parallel_tol: float = 1e-6) -> TrustRegionStep:
    """The closed-form dual solution of max g^T x s.t. c + b^T x <= 0, 1/2 x^T H x <= delta
    (CPO Thm 2 / App. 10.2, the form ACPO's Eq. (10) takes [R]), given v = H^-1 g and w = H^-1 b.

    With q = g^T v, r = g^T w, s = b^T w, A = q - r^2 / s and B = 2 delta - c^2 / s:

    * B < 0 and c < 0: the whole trust region is feasible; x = sqrt(2 delta / q) v (the TRPO step);
    * B < 0 and c > 0: no point of it is feasible; recovery x = -sqrt(2 delta / s) w;
    * A <= parallel_tol q (g and b parallel, the dual degenerate): the one-constraint-active step
      x = -(c / s) w if r > 0, else the TRPO step (comments in the code);
    * otherwise the dual max over lambda >= 0 of two concave pieces,
      f_a(lam) = -(A / lam + B lam) / 2 + r c / s  on {lam c + r > 0} and
      f_b(lam) = -(q / lam + 2 delta lam) / 2      on {lam c + r <= 0},
      maximised at the projections of sqrt(A / B) and sqrt(q / (2 delta)) onto the pieces;
      nu = max(0, lam c + r) / s and x = (v - nu w) / lam.

    g here is the gradient of the reward surrogate (ascent). CPO's paper and its reference code state
    the same solution for the gradient of a loss, which flips the sign of r (their lam c - r).

    >>> g = torch.tensor([1.0, 0.0], dtype=torch.float64); b = torch.tensor([0.0, 1.0], dtype=torch.float64)
    >>> trust_region_step(g, b, g, b, c=-1.0, delta=0.02).case     # cost far below its limit
    'unconstrained'
    >>> st = trust_region_step(g, b, g, b, c=1.0, delta=0.02); st.case, st.x.tolist()
    ('recovery', [-0.0, -0.2])
    """
    q, r, s = float(g @ v), float(g @ w), float(b @ w)
    if s <= eps:                                                 # the cost does not depend on theta
        return TrustRegionStep(math.sqrt(2 * delta / max(q, eps)) * v, math.sqrt(max(q, eps) / (2 * delta)),
                               0.0, "unconstrained")
    A, B = q - r * r / s, 2 * delta - c * c / s
    if B < 0 and c < 0:
        return TrustRegionStep(math.sqrt(2 * delta / max(q, eps)) * v, math.sqrt(max(q, eps) / (2 * delta)),
                               0.0, "unconstrained")
    if B < 0:
        return TrustRegionStep(-math.sqrt(2 * delta / s) * w, 0.0, math.sqrt(2 * delta / s), "recovery")
    if A <= parallel_tol * q:
        # g and b (nearly) parallel in the H-metric, g ~ (r / s) b: A = q - r^2 / s ~ 0 and the dual's
        # lam_a = sqrt(A / B) ~ 0, so (v - nu w) / lam divides by ~0 (|x| ~ 1e10 in float64). Only the
        # cost constraint is active: with r > 0 the best point is on its boundary, the H-closest one
        # x = -(c / s) w (inside the region since B >= 0); with r <= 0 the reward step lowers the cost too
        # and the TRPO step is feasible (b^T x = -sqrt(2 delta s) <= -|c|).
        if r > 0:
            return TrustRegionStep(-(c / s) * w, 0.0, r / s, "constrained")
        return TrustRegionStep(math.sqrt(2 * delta / max(q, eps)) * v, math.sqrt(max(q, eps) / (2 * delta)),
                               0.0, "unconstrained")
    # nu = max(0, lam c + r) / s > 0 exactly on the piece {lam c + r > 0}, which starts or ends at -r / c
    if c != 0:
        edge = max(-r / c, 0.0)
        la, lb = ((0.0, edge), (edge, math.inf)) if c < 0 else ((edge, math.inf), (0.0, edge))
    else:
        la, lb = ((0.0, math.inf), (0.0, 0.0)) if r > 0 else ((0.0, 0.0), (0.0, math.inf))

    def proj(x: float, lo_hi: tuple[float, float]) -> float:
        return min(max(x, lo_hi[0]), lo_hi[1])

    lam_a = proj(math.sqrt(max(A, 0.0) / max(B, eps)), la)
    lam_b = proj(math.sqrt(max(q, eps) / (2 * delta)), lb)
    f_a = -0.5 * (A / max(lam_a, eps) + B * lam_a) + r * c / s
    f_b = -0.5 * (q / max(lam_b, eps) + 2 * delta * lam_b)
    lam = lam_a if f_a >= f_b else lam_b
    nu = max(0.0, lam * c + r) / s
    return TrustRegionStep((v - nu * w) / max(lam, eps), lam, nu, "constrained")


def pcpo_step(v: torch.Tensor, w: torch.Tensor, g: torch.Tensor, b: torch.Tensor, c: float,
              delta: float, eps: float = 1e-12) -> torch.Tensor:
    """PCPO's KL-projection step (Yang et al. 2020, Eq. 10): the TRPO step on the reward, then the
    projection onto c + b^T x <= 0 in the H-metric."""
    q, r, s = float(g @ v), float(b @ v), float(b @ w)
    x = math.sqrt(2 * delta / max(q, eps)) * v
    if s <= eps:
        return x
    return x - max(0.0, (math.sqrt(2 * delta / max(q, eps)) * r + c) / s) * w


# ---------------------------------------------------------------- one policy update
class Batch(NamedTuple):
    """What an update reads from a rollout (torch tensors over the flattened T * N samples)."""

    obs: torch.Tensor
    actions: torch.Tensor
    adv_r: torch.Tensor  # (M,) reward advantages (average-reward or discounted, per method)
    adv_c: torch.Tensor  # (M,) cost advantages
    c: float             # J_C(pi_k) - l, from the batch's average cost


class UpdateInfo(NamedTuple):
    """Diagnostics of one update."""

    case: str            # trust-region case ("ppo" for PPO-Lagrangian)
    accepted: bool       # the line search accepted a step
    kl: float            # sample mean KL(pi_k || pi_{k+1})
    nu: float            # cost multiplier (PPO-Lagrangian: lambda)


class TrustRegionConfig(NamedTuple):
    """Knobs of the trust-region update."""

    delta: float         # KL radius
    cg_iters: int        # conjugate-gradient iterations
    damping: float       # Fisher damping
    backtracks: int      # line-search halvings
    backtrack_ratio: float


def trust_region_update(policy: Policy, batch: Batch, method: Method, tr: TrustRegionConfig) -> UpdateInfo:
    """One ACPO / ATRPO / CPO / PCPO update of ``policy`` in place (module docstring)."""
    obs, act = batch.obs, batch.actions
    old = policy.freeze(obs)
    with torch.no_grad():
        old_logp = policy.log_prob(obs, act)
    adv_r = batch.adv_r - batch.adv_r.mean()                   # centring leaves E[ratio * A] gradients unbiased
    adv_c = batch.adv_c - batch.adv_c.mean()

    def surrogates() -> tuple[torch.Tensor, torch.Tensor]:
        ratio = torch.exp(policy.log_prob(obs, act) - old_logp)
        return (ratio * adv_r).mean(), (ratio * adv_c).mean()

    L_R, L_C = surrogates()
    g = flat_grad(L_R, policy, retain_graph=True)
    b = flat_grad(L_C, policy)
    fvp = fisher_vector_product(policy, obs, old, tr.damping)
    v = conjugate_gradient(fvp, g, tr.cg_iters)
    c = batch.c
    if method == "atrpo":
        step = TrustRegionStep(math.sqrt(2 * tr.delta / max(float(g @ v), 1e-12)) * v, 0.0, 0.0, "unconstrained")
    else:
        w = conjugate_gradient(fvp, b, tr.cg_iters)
        if method == "pcpo":
            step = TrustRegionStep(pcpo_step(v, w, g, b, c, tr.delta), 0.0, 0.0, "projection")
        else:
            step = trust_region_step(v, w, g, b, c, tr.delta)
    theta_k = flat_params(policy)
    quad = 0.5 * float(step.x @ (fvp(step.x) - tr.damping * step.x))   # 1/2 x^T H x, = delta for a full step
    if not (torch.isfinite(step.x).all() and math.isfinite(quad)) or quad > MAX_STEP_RATIO * tr.delta:
        # numerics broke (a degenerate CG solve, an ill-conditioned H): the linear model promises a step of
        # 1/2 x^T H x <= delta, one of MAX_STEP_RATIO x that is rejected before any parameter moves
        return UpdateInfo(step.case, False, 0.0, step.nu)

    def accept(l_r: float, l_c: float, kl: float) -> bool:
        """Acceptance test of the line search for this method (module docstring)."""
        if not (math.isfinite(l_r) and math.isfinite(l_c) and math.isfinite(kl)) or kl > tr.delta:
            return False
        if method == "atrpo":
            return l_r >= 0
        if step.case == "recovery":
            return l_c < 0
        if method == "pcpo":
            return c + l_c <= max(c, 0.0)
        cost_ok = c + l_c <= max(c, 0.0)
        if method == "acpo":
            merit, merit_k = l_r - step.nu * max(0.0, c + l_c), -step.nu * max(0.0, c)
            return cost_ok and merit >= merit_k
        return cost_ok and (l_r >= 0 or c > 0)                  # CPO

    accepted, kl_val = line_search(policy, theta_k, step.x, surrogates, lambda: float(policy.mean_kl(old, obs)),
                                   accept, tr)
    return UpdateInfo(step.case, accepted, kl_val, step.nu)


class LineSearch(NamedTuple):
    """The outcome of a backtracking line search."""

    accepted: bool       # a trial point passed ``accept`` (else theta_k is kept)
    kl: float            # the accepted point's mean KL (0 when none was accepted)


def line_search(policy: Policy, theta_k: torch.Tensor, x: torch.Tensor, surrogates, mean_kl, accept,
                tr: TrustRegionConfig) -> LineSearch:
    """Backtracking: theta = theta_k + ratio^j x, j = 0..backtracks-1, the first ``accept``-ed one;
    theta_k is kept if none is. A trial point at which the policy's distribution cannot be built (a
    parameter outside its support, e.g. an overflowing log-std) is rejected like one that fails the test."""
    with torch.no_grad():
        for j in range(tr.backtracks):
            set_flat_params(policy, theta_k + tr.backtrack_ratio ** j * x)
            try:
                l_r, l_c = (float(t) for t in surrogates())
                kl = mean_kl()
            except ValueError:                                   # torch.distributions' argument validation
                continue
            if accept(l_r, l_c, kl):
                return LineSearch(True, kl)
        set_flat_params(policy, theta_k)
    return LineSearch(False, 0.0)


class PPOLagConfig(NamedTuple):
    """Knobs of PPO-Lagrangian."""

    clip: float          # PPO ratio clip epsilon
    epochs: int          # full-batch Adam epochs per update
    lr: float            # policy learning rate
    lr_lambda: float     # dual ascent step on J_C - l


def ppo_lag_update(policy: Policy, opt: torch.optim.Optimizer, batch: Batch, lam: float,
                   cfg: PPOLagConfig) -> UpdateInfo:
    """PPO-Lagrangian (Ray et al. 2019): lambda <- max(0, lambda + lr_lambda (J_C - l)), then ``epochs``
    Adam steps on -E[min(ratio A, clip(ratio) A)] with A = (A_R - lambda A_C) / (1 + lambda). The new
    lambda is the returned ``nu``."""
    lam = max(0.0, lam + cfg.lr_lambda * batch.c)
    old = policy.freeze(batch.obs)
    with torch.no_grad():
        old_logp = policy.log_prob(batch.obs, batch.actions)
    adv = (batch.adv_r - lam * batch.adv_c) / (1.0 + lam)
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    for _ in range(cfg.epochs):
        ratio = torch.exp(policy.log_prob(batch.obs, batch.actions) - old_logp)
        loss = -torch.min(ratio * adv, ratio.clamp(1 - cfg.clip, 1 + cfg.clip) * adv).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        kl = float(policy.mean_kl(old, batch.obs))
    return UpdateInfo("ppo", True, kl, lam)

"""The perception-memory-action-learning agent of the paper's framework, as discrete-POMDP active inference.

The paper's framework names four components of an embodied agent and aligns them with Friston's active
inference: perception and learning minimise variational free energy F, action minimises expected free
energy G. It gives no equations; the ones below are the textbook discrete-state forms (Da Costa et al.,
"Active inference on discrete state-spaces: a synthesis", J. Math. Psych. 2020; "DC" below) in the
conventions of ``pymdp`` (reference.py checks the agreement). One hidden-state factor (a joint state, e.g.
location x context), several observation modalities.

Each component is a small swappable object; :class:`Agent` only wires them:

* **perception** :func:`infer_states` - exact Bayesian filtering, q(s_t) ∝ prod_m A_m[o_m, :] * prior,
  with its free energy F (DC);
* **memory** :class:`Memory` - the short-term belief q(s_t) carried to the next step as the prior
  B[u] q(s_t) (``carry=False``: every step starts from a flat prior), and the long-term Dirichlet
  counts :class:`Counts` from which the agent's A and B are read;
* **action** :class:`Planner` - q(pi) = softmax(-gamma G(pi)), G = risk + ambiguity summed over a
  policy horizon (DC), optionally minus the novelty of A (parameter information gain, DC eq. D.15);
  ``epistemic=False`` is the reward-only agent, G = -E_q(o|pi)[ln p(o|C)];
* **learning** :class:`DirichletLearner` - at the end of each episode, the Dirichlet counts of the learned
  A modalities (and of B) grow by the expected counts of the episode under the smoothed beliefs, after an
  optional decay toward the prior (forgetting).

**Preference convention (pinned).** ``GenerativeModel.C`` holds *log-preferences* ln p(o|C) =
log_softmax(c) of the raw scores c (:func:`log_preferences`), per modality. With a normalised C, risk +
ambiguity = -(expected utility + state information gain) exactly (:class:`EFE`); pymdp 1.x uses its C
raw (utility = q(o)·C), so the comparison hands it log_softmax(c).

Shapes: S hidden states, U actions, O_m outcomes of modality m, P policies of length L, T steps.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import NamedTuple, Sequence

import numpy as np
from scipy.special import digamma

from icml24.core.errors import UserError

EPS = np.finfo(float).eps
"""Floor of every logarithm (pymdp's ``MINVAL``), so ln 0 contributes 0 * ln(eps) = 0."""


def _log(x: np.ndarray) -> np.ndarray:
    return np.log(np.maximum(x, EPS))


def _xlogx(x: np.ndarray) -> np.ndarray:
    return x * _log(x)


def log_preferences(c: Sequence[float]) -> np.ndarray:
    """ln p(o|C) = log_softmax(c): the pinned preference convention (a normalised log-distribution).

    >>> np.round(log_preferences([0.0, 3.0, -3.0]), 4)
    array([-3.0509, -0.0509, -6.0509])
    """
    x = np.asarray(c, dtype=float)
    return x - (x.max() + np.log(np.exp(x - x.max()).sum()))


def normalise(counts: np.ndarray) -> np.ndarray:
    """Columns of Dirichlet counts to their expected categorical distributions (sum over axis 0 is 1).

    >>> normalise(np.array([[1.0, 3.0], [1.0, 1.0]]))
    array([[0.5 , 0.75],
           [0.5 , 0.25]])
    """
    return counts / counts.sum(axis=0, keepdims=True)


class GenerativeModel(NamedTuple):
    """The agent's POMDP: p(o, s_{0:T} | u) = D(s_0) prod_t prod_m A_m[o_m,t, s_t] prod_t B[u_t][s_{t+1}, s_t].

    Attributes:
        A: per modality m, (O_m, S) likelihood p(o_m | s); columns sum to 1.
        B: (U, S, S) transitions, B[u][s', s] = p(s' | s, u); columns sum to 1.
        C: per modality, (O_m,) log-preferences ln p(o_m | C) (:func:`log_preferences`).
        D: (S,) prior over the initial state.
    """

    A: tuple[np.ndarray, ...]
    B: np.ndarray
    C: tuple[np.ndarray, ...]
    D: np.ndarray


# ----------------------------------------------------------------------------------------------------------
# Perception


class Posterior(NamedTuple):
    """Result of one perception step."""

    qs: np.ndarray  # (S,) q(s_t)
    F: float  # variational free energy of the step, nats


def likelihood(A: Sequence[np.ndarray], obs: Sequence[int]) -> np.ndarray:
    """p(o | s) = prod_m A_m[o_m, s], (S,)."""
    out = np.ones(A[0].shape[1])
    for A_m, o_m in zip(A, obs):
        out = out * A_m[o_m]
    return out


def infer_states(A: Sequence[np.ndarray], obs: Sequence[int], prior: np.ndarray) -> Posterior:
    """Perception: q(s) ∝ prod_m A_m[o_m, :] * prior (exact Bayes for one factor), and its free energy.

    F = sum_s q(s) [ln q(s) - ln prior(s) - sum_m ln A_m[o_m, s]] = KL[q || prior] - E_q[ln p(o|s)] (DC),
    which at the exact posterior equals the surprise -ln p(o). The prior is the memory's B[u] q(s_{t-1})
    (the issue's q(s) ∝ A[o, :] B q_prev).

    Args:
        A: per modality (O_m, S); obs: one outcome index per modality; prior: (S,).

    >>> A = (np.array([[0.9, 0.2], [0.1, 0.8]]),)
    >>> post = infer_states(A, [0], np.array([0.5, 0.5]))
    >>> np.round(post.qs, 4), round(post.F, 4)   # q = (0.45, 0.1) / 0.55; F = -ln 0.55
    (array([0.8182, 0.1818]), 0.5978)
    """
    ln_lik = sum(_log(A_m[o_m]) for A_m, o_m in zip(A, obs))  # (S,)
    ln_prior = _log(prior)
    ln_joint = ln_lik + ln_prior
    qs = np.exp(ln_joint - ln_joint.max())
    qs = qs / qs.sum()
    F = float(np.sum(_xlogx(qs) - qs * (ln_prior + ln_lik)))
    return Posterior(qs, F)


# ----------------------------------------------------------------------------------------------------------
# Memory


@dataclass
class Counts:
    """Long-term memory: Dirichlet counts of the learned parameters, and the prior counts they decay toward.

    Attributes:
        pA: per modality, (O_m, S) counts, or None where A_m is fixed (known).
        pA0: the prior counts of pA (same structure).
        pB: (U, S, S) counts of B, or None where B is fixed.
        pB0: the prior counts of pB.
    """

    pA: tuple[np.ndarray | None, ...]
    pA0: tuple[np.ndarray | None, ...]
    pB: np.ndarray | None = None
    pB0: np.ndarray | None = None

    @classmethod
    def prior(cls, pA0: Sequence[np.ndarray | None], pB0: np.ndarray | None = None) -> "Counts":
        """Counts equal to their prior (nothing learned yet)."""
        return cls(tuple(None if p is None else p.copy() for p in pA0), tuple(pA0),
                   None if pB0 is None else pB0.copy(), pB0)

    def model(self, base: GenerativeModel) -> GenerativeModel:
        """``base`` with the learned A_m and B replaced by their expected values E[A] = normalise(pA)."""
        A = tuple(a if p is None else normalise(p) for a, p in zip(base.A, self.pA))
        return base._replace(A=A, B=base.B if self.pB is None else normalise_b(self.pB))


def normalise_b(pB: np.ndarray) -> np.ndarray:
    """(U, S, S) transition counts to E[B] (each B[u] column-stochastic)."""
    return pB / pB.sum(axis=1, keepdims=True)


@dataclass
class Memory:
    """Short-term memory (the belief q(s_t), carried to the next step) and long-term memory (the counts).

    With ``carry=True`` the prior of step t+1 is B[u_t] q(s_t) (and D at t = 0); with ``carry=False``
    the agent keeps nothing between steps: every prior is flat, so q(s_t) ∝ A[o_t, :] reads the
    current observation only (the memoryless ablation of the same agent).
    """

    carry: bool = True
    belief: np.ndarray | None = None  # (S,) q(s_t) of the last step, None at the start of an episode
    counts: Counts | None = None

    def prior(self, model: GenerativeModel, action: int | None) -> np.ndarray:
        """(S,) the prior of the next perception step."""
        if not self.carry:
            return np.full(len(model.D), 1.0 / len(model.D))
        if self.belief is None or action is None:
            return model.D
        return model.B[action] @ self.belief


# ----------------------------------------------------------------------------------------------------------
# Action


def all_policies(n_actions: int, policy_len: int) -> np.ndarray:
    """(U^L, L) every action sequence of length L, in pymdp's (itertools.product) order.

    >>> all_policies(2, 2).tolist()
    [[0, 0], [0, 1], [1, 0], [1, 1]]
    """
    return np.array(list(itertools.product(range(n_actions), repeat=policy_len)), dtype=int).reshape(-1, policy_len)


class EFE(NamedTuple):
    """Expected free energy of each policy and its terms, each (P,), summed over the horizon and modalities.

    risk = KL[q(o|pi) || p(o|C)], ambiguity = E_q(s|pi) H[p(o|s)], utility = E_q(o|pi) ln p(o|C),
    info_gain = H[q(o|pi)] - ambiguity, novelty = E_q(o,s|pi) W(pA) (DC eq. D.15). With a normalised C,
    risk + ambiguity = -(utility + info_gain).
    """

    G: np.ndarray  # the score q(pi) uses: epistemic, risk + ambiguity - novelty; reward-only, -utility
    risk: np.ndarray
    ambiguity: np.ndarray
    utility: np.ndarray
    info_gain: np.ndarray
    novelty: np.ndarray


def novelty_weights(pA: np.ndarray) -> np.ndarray:
    """W = ln a0 - ln a + psi(a + 1) - psi(a0 + 1), (O, S): the expected information gain about the
    Dirichlet parameters a of one column from one outcome (DC eq. D.15 in pymdp's stable form; a0 = the
    column sums; 0 where a = 0, a structural zero, as pymdp masks it). For large counts W -> (1/a - 1/a0) / 2,
    the SPM heuristic.

    >>> round(float(novelty_weights(np.ones((3, 1)))[0, 0]), 4)   # ln 3 + psi(2) - psi(4)
    0.2653
    """
    a = np.maximum(pA, EPS)
    a0 = a.sum(axis=0, keepdims=True)
    return (np.log(a0) - np.log(a) + digamma(a + 1.0) - digamma(a0 + 1.0)) * (pA > 0)


def expected_free_energy(model: GenerativeModel, qs: np.ndarray, policies: np.ndarray, *, epistemic: bool = True,
                         pA: Sequence[np.ndarray | None] | None = None) -> EFE:
    """G(pi) = sum_{tau=1..L} sum_m [risk + ambiguity] - novelty (DC), for every policy at once.

    The predicted states roll forward from the current belief: q(s_tau|pi) = B[pi_tau] q(s_{tau-1}|pi),
    q(o_m|pi) = A_m q(s_tau|pi) (pymdp's "marginal" EFE: each step scored on its own predictive marginals).
    ``epistemic=False`` drops every epistemic term: G = -utility (the reward-only agent). ``pA`` (counts
    of the learned modalities, None elsewhere) adds the novelty of A to the epistemic agent's G.

    Args:
        qs: (S,) current belief; policies: (P, L) action indices.

    >>> A = (np.eye(2),)                                   # the state is observed exactly
    >>> m = GenerativeModel(A, np.stack([np.eye(2)]), (log_preferences([0.0, 0.0]),), np.ones(2) / 2)
    >>> efe = expected_free_energy(m, np.array([0.5, 0.5]), np.zeros((1, 1), dtype=int))
    >>> round(float(efe.info_gain[0]), 4), round(float(efe.risk[0]), 4)   # ln 2 to learn, no risk
    (0.6931, 0.0)
    """
    P, L = policies.shape
    q = np.broadcast_to(qs, (P, len(qs)))  # (P, S)
    zeros = np.zeros(P)
    risk, ambiguity, utility, info_gain, novelty = zeros.copy(), zeros.copy(), zeros.copy(), zeros.copy(), zeros.copy()
    H_A = [-_xlogx(A_m).sum(axis=0) for A_m in model.A]  # per modality (S,) entropy of p(o_m | s)
    W = [None if pA is None or p is None else novelty_weights(p) for p in (pA or [None] * len(model.A))]
    for tau in range(L):
        q = np.einsum("pij,pj->pi", model.B[policies[:, tau]], q)  # (P, S) q(s_tau | pi)
        for m, A_m in enumerate(model.A):
            qo = q @ A_m.T  # (P, O_m) q(o_m | pi)
            amb = q @ H_A[m]  # (P,)
            util = qo @ model.C[m]  # (P,)
            ambiguity += amb
            utility += util
            risk += _xlogx(qo).sum(axis=1) - util  # KL[q(o) || p(o|C)]
            info_gain += -_xlogx(qo).sum(axis=1) - amb
            w = W[m]
            if w is not None:
                novelty += np.einsum("po,os,ps->p", qo, w, q)
    G = risk + ambiguity - novelty if epistemic else -utility
    return EFE(G, risk, ambiguity, utility, info_gain, novelty)


class Plan(NamedTuple):
    """The action module's output at one step."""

    policies: np.ndarray  # (P, L)
    efe: EFE
    q_pi: np.ndarray  # (P,) softmax(-gamma G)
    q_u: np.ndarray  # (U,) marginal probability of each first action


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max())
    return e / e.sum()


@dataclass(frozen=True)
class Planner:
    """Action: q(pi) = softmax(-gamma G(pi)) over every policy of length ``policy_len`` (flat prior E);
    the action is drawn from the marginal q(u) = sum_{pi: pi_1 = u} q(pi) (sampling a policy, then taking
    its first action; replanned at every step).

    Attributes:
        policy_len: the horizon L (>= 1).
        gamma: the policy precision (> 0).
        epistemic: True for risk + ambiguity, False for the reward-only G = -utility.
        novelty: subtract the novelty of the learned A modalities from G (epistemic agents with counts).
    """

    policy_len: int
    gamma: float
    epistemic: bool = True
    novelty: bool = False

    def plan(self, model: GenerativeModel, qs: np.ndarray, counts: Counts | None = None,
             remaining: int | None = None) -> Plan:
        """q(pi) at belief ``qs``; the horizon is ``policy_len``, cut to the ``remaining`` moves of the trial."""
        horizon = self.policy_len if remaining is None else max(1, min(self.policy_len, remaining))
        policies = all_policies(model.B.shape[0], horizon)
        pA = counts.pA if (counts is not None and self.novelty and self.epistemic) else None
        efe = expected_free_energy(model, qs, policies, epistemic=self.epistemic, pA=pA)
        q_pi = softmax(-self.gamma * efe.G)
        q_u = np.bincount(policies[:, 0], weights=q_pi, minlength=model.B.shape[0])
        return Plan(policies, efe, q_pi, q_u)

    @staticmethod
    def sample(plan: Plan, rng: np.random.Generator) -> int:
        """u ~ q(u), by inverse CDF of one uniform draw (one draw per step, whatever U is)."""
        cdf = np.cumsum(plan.q_u)
        return int(min(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"), len(cdf) - 1))


# ----------------------------------------------------------------------------------------------------------
# Learning


class Smoothed(NamedTuple):
    """Posterior beliefs over an episode given all of its observations (forward-backward)."""

    marginals: np.ndarray  # (T, S) q(s_t | o_{0:T-1}, u)
    pairs: np.ndarray  # (T-1, S, S) q(s_{t+1} = s', s_t = s | o, u), indexed [t, s', s]
    filtered: np.ndarray  # (T, S) q(s_t | o_{0:t}, u), what perception held online


def smooth(model: GenerativeModel, observations: Sequence[Sequence[int]], actions: Sequence[int]) -> Smoothed:
    """Forward-backward on the agent's model: filtered, smoothed and pairwise posteriors of one episode.

    alpha_t ∝ L_t * B[u_{t-1}] alpha_{t-1} (alpha_0 ∝ L_0 * D), beta_t = B[u_t]^T (L_{t+1} * beta_{t+1}),
    q(s_t) ∝ alpha_t * beta_t, q(s_{t+1}, s_t) ∝ (L_{t+1} * beta_{t+1})[s'] B[u_t][s', s] alpha_t[s], with
    L_t = p(o_t | s) (:func:`likelihood`). Args: ``observations`` T outcome tuples, ``actions`` T-1 indices.
    """
    T, S = len(observations), len(model.D)
    lik = np.stack([likelihood(model.A, o) for o in observations])  # (T, S)
    alpha = np.zeros((T, S))
    a = lik[0] * model.D
    alpha[0] = a / a.sum()
    for t in range(1, T):
        a = lik[t] * (model.B[actions[t - 1]] @ alpha[t - 1])
        alpha[t] = a / a.sum()
    beta = np.ones((T, S))
    for t in range(T - 2, -1, -1):
        b = model.B[actions[t]].T @ (lik[t + 1] * beta[t + 1])
        beta[t] = b / b.sum()
    marg = alpha * beta
    marg = marg / marg.sum(axis=1, keepdims=True)
    pairs = np.zeros((max(T - 1, 0), S, S))
    for t in range(T - 1):
        x = (lik[t + 1] * beta[t + 1])[:, None] * model.B[actions[t]] * alpha[t][None, :]
        pairs[t] = x / x.sum()
    return Smoothed(marg, pairs, alpha)


def dirichlet_update_a(pA: np.ndarray, outcomes: Sequence[int], marginals: np.ndarray) -> np.ndarray:
    """pA + sum_t onehot(o_t) ⊗ q(s_t): the expected outcome-state counts of one modality (DC).

    With one-hot q(s_t) (states known) this is exactly the table of (outcome, state) counts.

    Args: pA (O, S); outcomes: T indices; marginals: (T, S).
    """
    out = pA.copy()
    for o, q in zip(outcomes, marginals):
        out[o] += q
    return out


def dirichlet_update_b(pB: np.ndarray, actions: Sequence[int], pairs: np.ndarray) -> np.ndarray:
    """pB[u_t] + q(s_{t+1}, s_t): the expected transition counts under each taken action (DC).

    Args: pB (U, S, S); actions: T-1 indices; pairs: (T-1, S, S) indexed [t, s', s].
    """
    out = pB.copy()
    for u, xi in zip(actions, pairs):
        out[u] += xi
    return out


def forget(p: np.ndarray, p0: np.ndarray, rate: float) -> np.ndarray:
    """p0 + (1 - rate) (p - p0): the learned part of the counts decays by ``rate`` per episode.

    Without forgetting (rate 0) the counts of N episodes take about N contrary episodes to overturn; with
    it they saturate at about 1 / rate episodes' worth, so a reversal is relearned in a few / rate.

    >>> forget(np.array([11.0, 1.0]), np.array([1.0, 1.0]), 0.5)
    array([6., 1.])
    """
    return p0 + (1.0 - rate) * (p - p0)


class Episode(NamedTuple):
    """What an agent saw and did in one episode (enough to learn from, offline or online)."""

    observations: list[tuple[int, ...]]  # T outcome tuples
    actions: list[int]  # T-1 actions taken between them


@dataclass(frozen=True)
class DirichletLearner:
    """Learning: after an episode, counts <- forget(counts) + expected counts under the smoothed beliefs.

    Attributes:
        modalities: indices of the A modalities learned (the others stay fixed).
        learn_b: learn B too.
        forgetting: decay rate of the learned counts per episode, in [0, 1).
    """

    modalities: tuple[int, ...] = ()
    learn_b: bool = False
    forgetting: float = 0.0

    def update(self, base: GenerativeModel, counts: Counts, episode: Episode) -> Counts:
        """The counts after ``episode``; beliefs smoothed under the model the counts give (one E-step)."""
        post = smooth(counts.model(base), episode.observations, episode.actions)
        pA = list(counts.pA)
        for m in self.modalities:
            p, p0 = counts.pA[m], counts.pA0[m]
            if p is None or p0 is None:
                raise ValueError(f"modality {m} is learned but has no Dirichlet counts")
            decayed = forget(p, p0, self.forgetting)
            pA[m] = dirichlet_update_a(decayed, [o[m] for o in episode.observations], post.marginals)
        pB = counts.pB
        if self.learn_b and counts.pB is not None and counts.pB0 is not None:
            pB = dirichlet_update_b(forget(counts.pB, counts.pB0, self.forgetting), episode.actions, post.pairs)
        return replace(counts, pA=tuple(pA), pB=pB)

    def fit(self, base: GenerativeModel, counts: Counts, episodes: Sequence[Episode]) -> Counts:
        """Offline: replay logged episodes in order through :meth:`update` (the static learner's training)."""
        for episode in episodes:
            counts = self.update(base, counts, episode)
        return counts


# ----------------------------------------------------------------------------------------------------------
# The agent and the memoryless baseline


class Step(NamedTuple):
    """One step of an agent: its belief and free energy after the observation, and the action taken."""

    qs: np.ndarray  # (S,)
    F: float
    action: int


@dataclass
class Agent:
    """Perceive -> remember -> act, and learn after each episode: the paper's loop.

    ``step(obs, rng, remaining)`` runs perception on the memory's prior, stores the belief and, while
    moves remain in the trial, plans over min(policy_len, remaining) steps (a policy never runs past the
    trial's end) and samples an action; ``end_episode()`` hands the episode to the learner (None: a frozen
    agent).
    """

    base: GenerativeModel
    planner: Planner
    memory: Memory = field(default_factory=Memory)
    learner: DirichletLearner | None = None
    _obs: list = field(default_factory=list, init=False, repr=False)
    _actions: list = field(default_factory=list, init=False, repr=False)

    @property
    def model(self) -> GenerativeModel:
        """The model the agent acts on: ``base`` with its learned parameters (if any) at their expected values."""
        return self.base if self.memory.counts is None else self.memory.counts.model(self.base)

    def reset(self) -> None:
        """Start an episode: the short-term belief is cleared, the counts are kept."""
        self.memory.belief = None
        self._obs, self._actions = [], []

    def step(self, obs: Sequence[int], rng: np.random.Generator, remaining: int) -> Step:
        model = self.model
        prior = self.memory.prior(model, self._actions[-1] if self._actions else None)
        post = infer_states(model.A, obs, prior)
        self.memory.belief = post.qs
        self._obs.append(tuple(int(o) for o in obs))
        action = -1
        if remaining > 0:
            action = self.planner.sample(self.planner.plan(model, post.qs, self.memory.counts, remaining), rng)
            self._actions.append(action)
        return Step(post.qs, post.F, action)

    def end_episode(self) -> Episode:
        """The episode just played (observations and the actions between them); learns from it if a learner is set."""
        episode = Episode(list(self._obs), list(self._actions[: len(self._obs) - 1]))
        if self.learner is not None and self.memory.counts is not None:
            self.memory.counts = self.learner.update(self.base, self.memory.counts, episode)
        return episode


@dataclass(frozen=True)
class ReactivePolicy:
    """A memoryless reactive policy: a fixed map from the *current* observation to an action.

    ``step`` reads its ``obs`` argument and nothing else (no state is kept between calls; ``rng`` and
    ``remaining`` are ignored), so it cannot use past observations; unseen observations get ``default``.
    """

    table: tuple[tuple[tuple[int, ...], int], ...]
    default: int = 0

    def step(self, obs: Sequence[int], rng: np.random.Generator | None = None, remaining: int = 1) -> int:
        return dict(self.table).get(tuple(int(o) for o in obs), self.default)


AGENTS = ("epistemic", "reward")
"""Action modules by name: risk + ambiguity (and novelty where counts are learned), or the reward-only G."""
MEMORIES = ("belief", "none")
"""Memory modules by name: the belief carried between steps, or none (a flat prior at every step)."""


def make_agent(name: str, model: GenerativeModel, *, policy_len: int, gamma: float, memory: str = "belief",
               counts: Counts | None = None, learner: DirichletLearner | None = None,
               novelty: bool = False) -> Agent:
    """An :class:`Agent` from module names (:data:`AGENTS`, :data:`MEMORIES`); a bad value is a one-line UserError."""
    if name not in AGENTS:
        raise UserError(f"unknown agent {name!r}: use one of {', '.join(AGENTS)}")
    if memory not in MEMORIES:
        raise UserError(f"unknown memory {memory!r}: use one of {', '.join(MEMORIES)}")
    if policy_len < 1:
        raise UserError(f"policy_len={policy_len}: the planning horizon must be >= 1")
    if not gamma > 0:
        raise UserError(f"gamma={gamma:g}: the policy precision must be > 0")
    planner = Planner(policy_len, gamma, epistemic=name == "epistemic", novelty=novelty)
    return Agent(model, planner, Memory(carry=memory == "belief", counts=counts), learner)

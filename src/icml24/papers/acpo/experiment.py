"""Experiment of ACPO: ``run(config, seed)`` and the figures.

Per seed:

1. three tabular ACMDPs (cmdp.py): a random one (drawn from the seed), the delayed-cost one and the
   slow-mixing one (the two where discounting misleads). Every method (ACPO, ATRPO, CPO at each
   gamma, PCPO, PPO-Lagrangian) trains a tabular softmax policy from the uniform policy on continuing
   rollouts; after every update the policy's exact J and J_C are recorded. The final policy's
   *constrained score* is (J - J_min) / (J* - J_min) if it is feasible (J_C <= l + slack) and 0
   otherwise, with J* the exact constrained optimum and J_min the least average reward (both by the
   occupancy LP): 1 is optimal, 0 is as bad as the worst policy;
2. recovery (C2): ACPO started from an infeasible policy (near the unconstrained optimum) on the random
   and the delayed-cost instance; the number of updates until J_C <= l + slack;
3. the continuing point-on-a-circle task (C3): ACPO, CPO (largest gamma) and PPO-Lagrangian with
   Gaussian MLP policies; the final policy's average reward and cost over a long evaluation rollout.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import torch
from scipy.special import softmax
from threadpoolctl import threadpool_limits

from icml24.common.rl import Rollout, average_gae, collect, gae
from icml24.core import streams
from icml24.core.context import RunContext
from icml24.core.plots import band
from icml24.core.results import RunResult, SeedResult
from icml24.papers.acpo.algorithm import (
    Batch,
    GaussianMLPPolicy,
    MLPCritic,
    PPOLagConfig,
    TabularCritic,
    TabularSoftmaxPolicy,
    TrustRegionConfig,
    ppo_lag_update,
    trust_region_update,
)
from icml24.papers.acpo.cmdp import (
    CMDP,
    TabularCMDPEnv,
    averages,
    cost_bounds,
    delayed_cost_cmdp,
    evaluate,
    optimum,
    random_cmdp,
    slow_mixing_cmdp,
)
from icml24.papers.acpo.config import FULL, QUICK, SEEDS, SMOKE, Config, validate
from icml24.papers.acpo.point_circle import PointCircleEnv

__all__ = ["Config", "SMOKE", "QUICK", "FULL", "SEEDS", "validate", "run", "figures", "train_tabular",
           "TabularTrace", "Learner"]

INSTANCES = ("random", "delayed", "slow")
MISLEADING = ("delayed", "slow")


class Learner(NamedTuple):
    """A method and the discount of its advantages (None: the average-reward criterion)."""

    tag: str             # name in metrics, e.g. "cpo_g0.9"
    method: str          # algorithm.METHODS
    gamma: float | None


def learners(config: Config) -> tuple[Learner, ...]:
    """ACPO, CPO at every gamma, PCPO and PPO-Lagrangian (module docstring). ATRPO (``algorithm.METHODS``) is
    not run: the limit sits below the unconstrained optimum's cost by construction, so it is infeasible."""
    return (Learner("acpo", "acpo", None),
            *(Learner(f"cpo_g{g:g}", "cpo", g) for g in config.gammas),
            Learner(f"pcpo_g{config.gamma:g}", "pcpo", config.gamma),
            Learner(f"ppo_lag_g{config.gamma:g}", "ppo_lag", config.gamma))


class _Agent:
    """A policy, its reward and cost critics (one two-headed critic: head 0 reward, head 1 cost) and
    (PPO-Lagrangian) its optimiser and multiplier."""

    def __init__(self, learner: Learner, policy, critic, config: Config):
        self.learner, self.policy, self.critic = learner, policy, critic
        self.tr = TrustRegionConfig(config.delta, config.cg_iters, config.damping, config.backtracks, 0.5)
        self.ppo = PPOLagConfig(config.ppo_clip, config.ppo_epochs, config.ppo_lr, config.lagrange_lr)
        self.opt = torch.optim.Adam(policy.parameters(), lr=config.ppo_lr) if learner.method == "ppo_lag" else None
        self.multiplier = 0.0
        self.lam = config.lam

    def update(self, ro: Rollout, limit: float, to_tensor) -> str:
        """Advantages from the current critics, critic fits, one policy update; returns its case."""
        obs, nxt = to_tensor(ro.obs).flatten(0, 1), to_tensor(ro.next_obs).flatten(0, 1)   # (T * N, ...)
        signals = (ro.rewards, ro.costs)                                                   # (T, N) each
        v = self.critic(obs).double().numpy().reshape(2, *ro.rewards.shape)                # (2, T, N)
        v_next = self.critic(nxt).double().numpy().reshape(2, *ro.rewards.shape)
        advs = []
        for signal, v_i, v_next_i in zip(signals, v, v_next):
            if self.learner.gamma is None:
                advs.append(average_gae(signal, v_i, v_next_i, float(signal.mean()), self.lam))
            else:
                advs.append(gae(signal, v_i, v_next_i, self.learner.gamma, self.lam))
        adv = np.stack(advs).reshape(2, -1)                                                # (2, T * N)
        self.critic.fit(obs, torch.as_tensor(adv + v.reshape(2, -1), dtype=self.critic.dtype))  # GAE value targets
        acts = torch.as_tensor(ro.actions.reshape(-1, *ro.actions.shape[2:]))
        adv_t = torch.as_tensor(adv, dtype=_pdtype(self.policy))
        batch = Batch(obs, acts, adv_t[0], adv_t[1], float(ro.costs.mean()) - limit)
        if self.opt is not None:                               # PPO-Lagrangian
            info = ppo_lag_update(self.policy, self.opt, batch, self.multiplier, self.ppo)
            self.multiplier = info.nu
        else:
            info = trust_region_update(self.policy, batch, self.learner.method, self.tr)  # type: ignore[arg-type]
        return info.case


def _pdtype(policy) -> torch.dtype:
    return next(policy.parameters()).dtype


class TabularTrace(NamedTuple):
    """Exact J and J_C after every update of one tabular run (index 0: the initial policy)."""

    J: np.ndarray        # (iters + 1,)
    J_C: np.ndarray      # (iters + 1,)
    recoveries: int      # updates that took the recovery step


def train_tabular(m: CMDP, learner: Learner, config: Config, rng: np.random.Generator,
                  init_logits: np.ndarray | None = None, iters: int | None = None) -> TabularTrace:
    """Train ``learner`` on ``m`` from ``init_logits`` (default: the uniform policy) for ``iters`` updates."""
    S, A = m.n_states, m.n_actions
    policy = TabularSoftmaxPolicy(S, A, None if init_logits is None else torch.as_tensor(init_logits))
    agent = _Agent(learner, policy, TabularCritic(S, heads=2), config)
    env = TabularCMDPEnv(m, config.n_envs, rng)
    env.reset()
    J, J_C = [], []
    recoveries = 0

    def record() -> None:
        av = averages(m, policy.table().numpy())
        J.append(av.J)
        J_C.append(av.J_C)

    record()
    for _ in range(config.iters if iters is None else iters):
        ro = env.rollout(policy.table().numpy(), config.steps)      # continuing: each rollout goes on from the last
        recoveries += agent.update(ro, m.limit, lambda x: torch.as_tensor(x, dtype=torch.long)) == "recovery"
        record()
    return TabularTrace(np.array(J), np.array(J_C), recoveries)


def instances(config: Config, rng: np.random.Generator) -> dict[str, CMDP]:
    return {"random": random_cmdp(rng, config.n_states, config.n_actions, config.limit_frac),
            "delayed": delayed_cost_cmdp(config.delay, config.limit_frac),
            "slow": slow_mixing_cmdp(config.switch, config.limit_frac)}


class Scale(NamedTuple):
    """Exact reference values of an instance."""

    J_opt: float         # J*: constrained optimum
    J_min: float         # least average reward of any policy
    cost_range: float    # J_C of the unconstrained optimum - min J_C (the limit sits inside it)
    slack: float         # feasibility slack on J_C


def scale(m: CMDP, config: Config) -> Scale:
    lo, hi = cost_bounds(m)
    return Scale(optimum(m).J, optimum(m, constrained=False, sense="min").J, hi - lo, config.slack_frac * (hi - lo))


def score(J: float, J_C: float, m: CMDP, sc: Scale) -> float:
    """Constrained score (module docstring): min(1, (J - J_min) / (J* - J_min)), times a feasibility factor
    that is 1 up to the slack and falls linearly to 0 at twice the slack (continuous; capped at the
    constrained optimum, so a policy cannot gain by using the slack)."""
    reward = min(1.0, float((J - sc.J_min) / (sc.J_opt - sc.J_min)))
    over = (J_C - m.limit - sc.slack) / sc.slack if sc.slack > 0 else (math.inf if J_C > m.limit else 0.0)
    return reward * float(np.clip(1.0 - max(0.0, over), 0.0, 1.0))


def linearised_recovery_steps(m: CMDP, logits: np.ndarray, delta: float) -> float:
    """Updates a recovery needs by the KL geometry at the start: the recovery step lowers the linearised cost by
    sqrt(2 delta s) per update (CPO Eq. 14), with s = b^T H^-1 b; for a tabular softmax policy, b = d(s) pi(a|s)
    Abar_C(s, a) and H = diag_s d(s) (diag pi_s - pi_s pi_s^T), so s = E_{s ~ d, a ~ pi}[Abar_C(s, a)^2]
    exactly. Returns (J_C - l) / sqrt(2 delta s) at the start (0 if it is feasible)."""
    pi = softmax(logits, axis=1)                                                  # (S, A)
    ev = evaluate(m, pi)
    s_quad = float((ev.d[:, None] * pi * ev.A_C ** 2).sum())
    return max(0.0, ev.J_C - m.limit) / math.sqrt(2 * delta * s_quad)


def run(config: Config, seed: int, ctx: RunContext | None = None) -> SeedResult:
    """One seed: the tabular comparison, the recovery runs and the point-circle task (module docstring)."""
    ctx = ctx or RunContext.local()
    metrics: dict[str, float] = {}
    curves: dict[str, list[float]] = {"iteration": list(map(float, range(config.iters + 1)))}
    with ctx.threads(config.threads), threadpool_limits(config.threads):
        cmdps = instances(config, streams.rng(seed, "instance"))
        scales = {name: scale(m, config) for name, m in cmdps.items()}     # exact LPs, once per instance
        for name, m in cmdps.items():
            sc = scales[name]
            metrics[f"J_opt_{name}"] = sc.J_opt
            for lr in learners(config):
                tr = train_tabular(m, lr, config, streams.rng(seed, "tabular", name, lr.tag))
                metrics[f"J_{lr.tag}_{name}"] = float(tr.J[-1])
                metrics[f"viol_{lr.tag}_{name}"] = float((tr.J_C[-1] - m.limit) / sc.cost_range)
                metrics[f"score_{lr.tag}_{name}"] = score(tr.J[-1], tr.J_C[-1], m, sc)
                curves[f"J_{lr.tag}_{name}"] = ((tr.J - sc.J_min) / (sc.J_opt - sc.J_min)).tolist()
                curves[f"Jc_{lr.tag}_{name}"] = ((tr.J_C - m.limit) / sc.cost_range).tolist()
        for lr in learners(config):
            metrics[f"score_{lr.tag}_misleading"] = float(np.mean([metrics[f"score_{lr.tag}_{n}"] for n in MISLEADING]))
        metrics["acpo_worst_viol"] = max(metrics[f"viol_acpo_{n}"] for n in INSTANCES)
        # 2. recovery from an infeasible start (C2), against the KL-geometry count at that start
        worst = 0.0
        for name in ("random", "delayed"):
            m, sc = cmdps[name], scales[name]
            start = config.infeasible_logit * optimum(m, constrained=False).policy.round()
            tr = train_tabular(m, Learner("acpo", "acpo", None), config, streams.rng(seed, "recovery", name),
                               init_logits=start)
            feasible = np.flatnonzero(tr.J_C <= m.limit + sc.slack)
            k = int(feasible[0]) if len(feasible) else config.iters + 1
            need = math.ceil(linearised_recovery_steps(m, start, config.delta))
            metrics[f"recovery_iters_{name}"] = float(k)
            metrics[f"recovery_need_{name}"] = float(need)
            metrics[f"start_viol_{name}"] = float(tr.J_C[0] - m.limit)
            worst = max(worst, k / max(need, 1))
            curves[f"Jc_recovery_{name}"] = ((tr.J_C - m.limit) / sc.cost_range).tolist()
        metrics["recovery_ratio"] = worst
        # 3. point on a circle (C3)
        if config.circle_iters > 0:
            metrics.update(ctx.stage("point_circle", point_circle, config, seed))
    return SeedResult(seed=seed, metrics=metrics, curves=curves)


def point_circle(config: Config, seed: int) -> dict[str, float]:
    """Train ACPO with a Gaussian MLP policy on :class:`PointCircleEnv`; evaluate the final policy on
    ``circle_eval_steps`` continuing steps per environment. (Laps of about 63 steps are not sensitive to the
    discount, so the task checks that the constrained step works with a neural policy, not the comparison
    with discounted baselines, which the tabular instances make.)"""
    torch.manual_seed(streams.int_seed(seed, "circle", "acpo", "torch", bits=63))     # the MLPs' initial weights
    act_rng = streams.torch_generator(seed, "circle", "acpo", "actions")
    env = PointCircleEnv(config.circle_envs)
    obs, _ = env.reset(seed=streams.int_seed(seed, "circle", "acpo", "env"))
    policy = GaussianMLPPolicy(4, 2, config.circle_hidden)
    agent = _Agent(Learner("acpo", "acpo", None), policy, MLPCritic(4, config.circle_hidden, heads=2), config)

    def act(o: np.ndarray) -> np.ndarray:
        with torch.no_grad():                            # a ~ N(mu(s), diag(exp(2 log_std))), from this run's stream
            mu = policy.mu(torch.as_tensor(o, dtype=torch.float32))                      # (N, 2)
            return (mu + policy.log_std.exp() * torch.randn(mu.shape, generator=act_rng)).numpy()

    for _ in range(config.circle_iters):
        ro = collect(env, act, obs, config.circle_steps)
        obs = ro.last_obs
        agent.update(ro, config.circle_limit, lambda x: torch.as_tensor(x, dtype=torch.float32))
    ev = collect(env, act, obs, config.circle_eval_steps)
    return {"circle_J_acpo": float(ev.rewards.mean()), "circle_Jc_acpo": float(ev.costs.mean())}


def figures(result: RunResult) -> dict:
    """Normalised exact reward and cost minus the limit per update, per instance; recovery curves."""
    import matplotlib.pyplot as plt

    it = result.curve("iteration")[0]
    tags = sorted({n[2:-len("_random")] for n in result.curve_names() if n.startswith("J_") and n.endswith("_random")})
    fig, axes = plt.subplots(2, 3, figsize=(13, 6.5), sharex=True)
    for j, name in enumerate(INSTANCES):
        for tag in tags:
            band(axes[0, j], it, result.curve(f"J_{tag}_{name}"), label=tag)
            band(axes[1, j], it, result.curve(f"Jc_{tag}_{name}"), label=tag)
        axes[0, j].axhline(1.0, color="k", ls="--", lw=1)
        axes[1, j].axhline(0.0, color="k", ls="--", lw=1)
        axes[0, j].set_title(f"{name}: (J - J_min) / (J* - J_min)", fontsize=9)
        axes[1, j].set_title(f"{name}: J_C - l (exact)", fontsize=9)
        axes[1, j].set_xlabel("update")
    axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    fig2, ax = plt.subplots(figsize=(5, 3.4))
    for name in ("random", "delayed"):
        band(ax, it, result.curve(f"Jc_recovery_{name}"), label=f"ACPO from infeasible, {name}")
    ax.axhline(0.0, color="k", ls="--", lw=1)
    ax.set_xlabel("update")
    ax.set_ylabel("J_C - l")
    ax.legend(fontsize=7)
    return {"learning_curves": fig, "recovery": fig2}

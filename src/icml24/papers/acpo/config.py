"""Config, presets and seeds of acpo: importable without torch (icml24 show)."""

from __future__ import annotations

from dataclasses import dataclass

from icml24.core.config import knob
from icml24.core.errors import UserError


@dataclass(frozen=True)
class Config:
    """ACPO vs discounted baselines on exact tabular ACMDPs and on a continuing constrained control task."""

    # tabular ACMDPs (C1, C2)
    n_states: int = knob(10, "states of the random ACMDP", ge=2)
    n_actions: int = knob(3, "actions of the random ACMDP", ge=2)
    delay: int = knob(150, "steps between borrowing and paying its cost (delayed-cost instance; >> 1 / (1 - 0.99))",
                      ge=1, le=5000)
    switch: float = knob(0.005, "per-step probability that the debt ends (slow-mixing instance; mean debt 1 / switch "
                                "steps)", gt=0, lt=1)
    limit_frac: float = knob(0.5, "cost limit l as a fraction of the way from min J_C to the J_C of the "
                                  "unconstrained optimum", gt=0, lt=1)
    slack_frac: float = knob(0.05, "a policy counts as feasible if J_C <= l + slack_frac * (that range)", ge=0)
    iters: int = knob(60, "policy updates per tabular run", ge=1)
    n_envs: int = knob(200, "parallel continuing chains per rollout", ge=1)
    steps: int = knob(100, "steps per chain per update (continuing: chains are never reset)", ge=2)
    delta: float = knob(0.02, "KL trust-region radius delta", gt=0)
    lam: float = knob(0.95, "GAE lambda (average-reward and discounted)", ge=0, le=1)
    gammas: tuple[float, ...] = knob((0.9, 0.99, 0.999), "discounts of the CPO baselines (one run each)", gt=0,
                                     lt=1, nonempty=True)
    gamma: float = knob(0.99, "discount of PCPO and PPO-Lagrangian", gt=0, lt=1)
    cg_iters: int = knob(10, "conjugate-gradient iterations", ge=1)
    damping: float = knob(1e-3, "Fisher damping", ge=0)
    backtracks: int = knob(10, "line-search halvings", ge=1)
    ppo_lr: float = knob(0.05, "PPO-Lagrangian Adam learning rate", gt=0)
    ppo_epochs: int = knob(10, "PPO-Lagrangian epochs per update", ge=1)
    ppo_clip: float = knob(0.2, "PPO ratio clip", gt=0, lt=1)
    lagrange_lr: float = knob(2.0, "PPO-Lagrangian dual ascent step on J_C - l", gt=0)
    infeasible_logit: float = knob(3.0, "recovery run (C2): start from logits = this times the unconstrained "
                                        "optimum's one-hot actions (an infeasible policy)", gt=0)
    # continuing point-on-a-circle task (C3)
    circle_iters: int = knob(200, "policy updates per point-circle run; 0 skips the task", ge=0)
    circle_envs: int = knob(16, "parallel point-circle environments", ge=1)
    circle_steps: int = knob(125, "steps per environment per update", ge=2)
    circle_hidden: int = knob(32, "hidden width of the policy and critics", ge=1)
    circle_limit: float = knob(0.1, "cost limit: long-run fraction of time outside the safe band |x| <= x_lim",
                               gt=0, lt=1)
    circle_eval_steps: int = knob(2000, "steps of the final evaluation rollout per environment", ge=10)
    threads: int = knob(1, "torch and BLAS threads per seed (the BLAS's own default of one thread per core makes "
                           "the small linear solves of the exact evaluation 10-30x slower when seeds run in parallel)",
                        ge=1)


SMOKE = Config(iters=4, n_envs=4, steps=20, circle_iters=2, circle_envs=2, circle_steps=20, circle_eval_steps=20)
QUICK = Config()
FULL = Config(iters=200, n_envs=400, steps=200, circle_iters=500, circle_envs=32, circle_steps=500,
              circle_hidden=64, circle_eval_steps=10_000)
SEEDS = {"smoke": (0,), "quick": tuple(range(8)), "full": tuple(range(20))}


def validate(config: Config) -> None:
    """Rules across fields (called by the CLI before anything runs)."""
    if len(set(config.gammas)) != len(config.gammas):
        raise UserError(f"gammas={','.join(map(str, config.gammas))}: each discount once (one CPO run each)")
    # sizes whose memory is known before anything runs: P is (S, A, S) float64, and every update holds the
    # rollout's (steps, n_envs) arrays of states, actions, rewards, costs and two advantages
    for name, S, A in (("n_states", config.n_states, config.n_actions), ("delay", config.delay + 1, 3)):
        if S * S * A * 8 > MAX_BYTES:
            raise UserError(f"{name}={getattr(config, name)}: its transition table of {S} x {A} x {S} float64 needs "
                            f"{S * S * A * 8 / 2 ** 30:.0f} GiB (at most {MAX_BYTES // 2 ** 30} GiB)")
    for what, samples in (("n_envs x steps", config.n_envs * config.steps),
                          ("circle_envs x circle_steps", config.circle_envs * config.circle_steps),
                          ("circle_envs x circle_eval_steps", config.circle_envs * config.circle_eval_steps)):
        if samples * 8 * 8 > MAX_BYTES:
            raise UserError(f"{what} = {samples:,} samples per rollout: about {samples * 64 / 2 ** 30:.0f} GiB of "
                            f"rollout arrays (at most {MAX_BYTES // 2 ** 30} GiB)")


MAX_BYTES = 4 * 2 ** 30
"""The memory a size knob may ask for before the run is refused (4 GiB)."""

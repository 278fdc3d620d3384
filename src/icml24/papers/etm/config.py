"""Config, presets and seeds of etm: importable without torch (icml24 show)."""

from __future__ import annotations

from dataclasses import dataclass

from icml24.core.config import knob
from icml24.core.errors import UserError


@dataclass(frozen=True)
class Config:
    """ETM against a Gaussian forward ensemble and a deterministic MLP on a discontinuous toy task and on
    model-based policy evaluation of Pendulum-v1 with a torque dead zone."""

    # models (the same width, depth, batch and steps, i.e. the same sample-gradients, for the energy net and the
    # forward nets)
    hidden: int = knob(64, "hidden width of every model (official: 200)", ge=1)
    layers: int = knob(3, "hidden layers of every model (official: 4)", ge=1)
    steps: int = knob(800, "optimiser steps of every model", ge=1)
    batch: int = knob(64, "batch size of every model (official ETM: 1024, forward: 256)", ge=1)
    lr: float = knob(1e-3, "Adam learning rate of every model", gt=0)
    weight_decay: float = knob(1e-4, "Adam weight decay of every model", ge=0)
    negatives: int = knob(16, "ETM: Langevin negatives per sample N (official: 16)", ge=1)
    train_iters: int = knob(50, "ETM: Langevin steps of the negative sampler K (official: 50)", ge=1)
    predict_iters: int = knob(100, "ETM: Langevin descent steps of a prediction (official: 100)", ge=1)
    margin: float = knob(5.0, "ETM: margin M of the gradient penalty", ge=0)
    temperature: float = knob(1.0, "ETM: InfoNCE temperature tau", gt=0)
    restarts: int = knob(0, "diagnostic only: extra uniform starts of the best-of-starts ETM prediction "
                             "(0 skips it; claims use the official descent from 0)", ge=0)
    members: int = knob(5, "Gaussian forward ensemble size", ge=1)
    eval_every: int = knob(100, "steps between two points of the held-out error curves (0: no curves)", ge=0)
    eval_size: int = knob(1000, "held-out transitions of the error curves (at most)", ge=1)
    # discontinuous task (C1)
    jump_train: int = knob(4000, "training transitions of the jump task", ge=10)
    jump_test: int = knob(2000, "test transitions per evaluation set", ge=10)
    jump: float = knob(1.0, "size J of the velocity jump", gt=0, le=10)
    threshold: float = knob(0.3, "action threshold tau of the jump", gt=-1, lt=1)
    jump_noise: float = knob(0.01, "transition noise std of the jump task", ge=0, le=1)
    near: float = knob(0.05, "half-width in a of the region near the discontinuity", gt=0, le=0.5)
    valid_eps: float = knob(0.25, "mode validity: a prediction within this share of the jump's length of a "
                                  "reachable branch is valid", gt=0, lt=0.5)
    # policy evaluation on Pendulum-v1 with a torque dead zone (C2)
    behaviour_episodes: int = knob(20, "episodes of each of the three behaviour policies (200 steps each)", ge=1)
    starts: int = knob(20, "start states per policy (the same for the real and the model rollouts)", ge=1)
    horizon: int = knob(200, "rollout length (Pendulum-v1 episodes are 200 steps)", ge=1, le=200)
    gamma: float = knob(0.995, "discount of the policy values (official: 0.995)", gt=0, le=1)
    threads: int = knob(1, "torch threads per seed", ge=1)
    device: str = knob("cpu", "torch device of the models (cpu, cuda, cuda:N); data and rollouts stay on the CPU",
                       nonempty=True)


SMOKE = Config(hidden=16, layers=1, steps=5, batch=32, negatives=2, train_iters=2, predict_iters=5, restarts=2,
               members=2, eval_every=2, eval_size=20, jump_train=100, jump_test=20, behaviour_episodes=2, starts=2,
               horizon=5)
QUICK = Config()
FULL = Config(hidden=200, layers=4, steps=30_000, batch=1024, eval_every=1000, behaviour_episodes=100,
              jump_train=20_000, starts=50, device="cuda")
SEEDS = {"smoke": (0,), "quick": tuple(range(6)), "full": tuple(range(10))}


def validate(config: Config) -> None:
    """Rules across fields (called by the CLI before anything runs)."""
    if config.threshold - config.near <= -1 or config.threshold + config.near >= 1:
        raise UserError(f"threshold={config.threshold:g}, near={config.near:g}: the region near the jump must lie "
                        "inside the action range (-1, 1)")

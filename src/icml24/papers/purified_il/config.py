"""Config, presets and seeds of purified_il: importable without torch (icml24 show)."""

from __future__ import annotations

from dataclasses import dataclass

from icml24.core.config import knob
from icml24.core.errors import UserError

#: Episode length (time limit) of each task.
EPISODE_STEPS = {"Pendulum-v1": 200, "HalfCheetah-v5": 1000, "Reacher-v5": 50, "Swimmer-v5": 1000}


@dataclass(frozen=True)
class Config:
    """DP-BC (BC on diffusion-purified demonstrations, with the paper's purifier and with the official code's)
    against BC, BCND and an oracle BC on expert demonstrations corrupted by action noise (D2) and on
    demonstrations of intermediate RL checkpoints (D1), a MuJoCo task with an SB3 SAC expert (or Pendulum-v1
    with an analytic expert, D2 only), and the action purification error along the inverse point i_r."""

    # task and demonstrations
    env: str = knob("Reacher-v5", "gymnasium task: a MuJoCo task whose episodes end only at the time limit (its "
                                  "expert: SB3 SAC) or Pendulum-v1 (analytic swing-up expert; no D1)",
                    choices=("Pendulum-v1", "HalfCheetah-v5", "Reacher-v5", "Swimmer-v5"))
    expert_steps: int = knob(40_000, "SAC environment steps of a MuJoCo expert (cached per task, steps, seed and "
                                     "checkpoint spacing; unused on Pendulum-v1)", ge=1)
    expert_seed: int = knob(0, "seed of the MuJoCo expert's training (one expert for every run seed)", ge=0)
    checkpoint_every: int = knob(250, "the expert's training run saves its policy every this many steps (the "
                                       "pool of D1's demonstrators; part of the expert's cache key)", ge=1)
    d1_steps: tuple[int, ...] = knob((250,), "D1: training steps of the intermediate checkpoints "
                                     "that demonstrate, best first (the paper's L3 ... L1); each a multiple of "
                                     "checkpoint_every below expert_steps; empty on Pendulum-v1", ge=1)
    n_optimal: int = knob(50, "optimal pairs D_o (drawn from clean expert episodes; official: 50)", ge=2)
    n_noisy: int = knob(500, "imperfect pairs D_s per data set (drawn from its episodes; official: 500)", ge=2)
    episodes: int = knob(10, "episodes the pairs of each set are drawn from (50 steps each on Reacher, 200 on "
                             "Pendulum-v1, 1000 on HalfCheetah and Swimmer)", ge=1)
    noise_levels: tuple[float, ...] = knob((0.4, 0.5, 0.6), "D2: std of the Gaussian action noise in units of the "
                                           "action bound (1 on MuJoCo, 2 on Pendulum-v1), weakest first (the "
                                           "paper's L3, L2, L1); the recorded action is not clipped", gt=0, le=2,
                                           nonempty=True)
    sp_prob: float = knob(0.3, "probability that salt-and-pepper noise replaces an action by -u_max or +u_max", gt=0,
                          le=1)
    # diffusion model (trained on D_o only)
    T: int = knob(1000, "diffusion steps T (linear beta from 1e-4 to 0.02)", ge=10)
    ddpm_hidden: int = knob(256, "hidden width of both epsilon-networks (official: 1024)", ge=1)
    ddpm_layers: int = knob(3, "hidden layers of both epsilon-networks (official: 4)", ge=1)
    ddpm_time_dim: int = knob(32, "size of the sinusoidal step embedding of the paper's purifier (0: a network that "
                                  "never sees the step, as the official one)", ge=0)
    official_dropout: float = knob(0.2, "dropout of the official purifier's network (official: 0.2), active "
                                        "while it purifies as in the official code", ge=0, lt=1)
    ddpm_steps: int = knob(2000, "Adam steps of each diffusion model (official: 20,000 epochs)", ge=1)
    ddpm_batch: int = knob(256, "batch of the diffusion models (the whole D_o when smaller; official: 512)", ge=1)
    ddpm_lr: float = knob(1e-3, "Adam learning rate of the diffusion models (official: 1e-4)", gt=0)
    inverse_point: int = knob(30, "inverse point i_r of DP-BC's purification (fixed before the first run, inside "
                                  "the paper's range [10, 50] for hard tasks)", ge=0)
    i_sweep: tuple[int, ...] = knob((10, 100), "further inverse points at which DP-BC (both purifiers) "
                                    "is trained and scored on the strongest Gaussian set (Sec. 6.3)", ge=1)
    i_grid: tuple[int, ...] = knob((0, 2, 5, 10, 20, 30, 50, 100, 200, 300, 500, 1000), "inverse points of the "
                                   "action purification-error curve (C3), increasing, from 0 (no purification) "
                                   "towards T (a fresh sample of the model)", ge=0, nonempty=True)
    curve_points: int = knob(150, "imperfect pairs per level on which the error curve is measured", ge=1)
    # imitation
    bc_hidden: int = knob(100, "hidden width of every BC policy (official: 100)", ge=1)
    bc_layers: int = knob(2, "hidden layers of every BC policy (official: 2)", ge=1)
    bc_steps: int = knob(1000, "Adam steps of every BC policy (official: 10,000)", ge=1)
    bc_batch: int = knob(256, "batch of every BC policy (official: 256)", ge=1)
    bc_lr: float = knob(3e-4, "Adam learning rate of every BC policy (official: 3e-4)", gt=0)
    bcnd_rounds: int = knob(3, "BCND: rounds of likelihood-reweighted BC (the first is plain BC)", ge=1)
    eval_episodes: int = knob(20, "evaluation episodes per policy (the same start states for every policy)", ge=1)
    threads: int = knob(1, "torch threads per seed", ge=1)
    device: str = knob("cpu", "torch device of the networks (cpu, cuda, cuda:N); environments stay on the CPU",
                       nonempty=True)


SMOKE = Config(expert_steps=300, checkpoint_every=100, d1_steps=(200, 100), n_optimal=8, n_noisy=16, episodes=1,
               noise_levels=(0.4, 0.6), T=50, ddpm_hidden=16, ddpm_layers=1, ddpm_time_dim=8, ddpm_steps=5,
               inverse_point=5, i_sweep=(2,), i_grid=(0, 2, 5, 10), curve_points=8, bc_hidden=8, bc_layers=1,
               bc_steps=5, bcnd_rounds=2, eval_episodes=2)
QUICK = Config()
# the paper's setting on MuJoCo: HalfCheetah with a 1M-step SAC expert (D1 from its checkpoints), the paper's noise
# levels, 50 optimal and 500 imperfect pairs per set, the official network and optimiser (20,000 steps: the
# official epochs, D_o being one batch) and BC
FULL = Config(env="HalfCheetah-v5", expert_steps=1_000_000, checkpoint_every=50_000,
              d1_steps=(300_000, 150_000, 50_000), noise_levels=(0.25, 0.4, 0.6), n_optimal=50, n_noisy=500,
              episodes=2, ddpm_hidden=1024, ddpm_layers=4, ddpm_steps=20_000, ddpm_lr=1e-4, ddpm_batch=512,
              bc_steps=10_000, curve_points=500, eval_episodes=10, device="cuda")
SEEDS = {"smoke": (0,), "quick": tuple(range(20)), "full": tuple(range(10))}
#: Seeds of the pilot that sized QUICK and its noise (outside the claim seeds and the held-out seeds 1000+).
PILOT_SEEDS = (100, 101, 102, 103)


def validate(config: Config) -> None:
    """Rules across fields (called by the CLI before anything runs)."""
    grid = config.i_grid
    if grid[0] != 0 or any(b <= a for a, b in zip(grid, grid[1:])):
        raise UserError(f"i_grid={grid}: must be increasing and start at 0 (no purification)")
    if grid[-1] > config.T or config.inverse_point > config.T:
        raise UserError(f"i_grid and inverse_point must not exceed T={config.T}")
    if len(config.noise_levels) > 1 and any(b <= a for a, b in zip(config.noise_levels, config.noise_levels[1:])):
        raise UserError(f"noise_levels={config.noise_levels}: must be increasing (weakest first)")
    if config.ddpm_time_dim % 2:
        raise UserError(f"ddpm_time_dim={config.ddpm_time_dim}: must be even (sine and cosine pairs)")
    if config.env == "Pendulum-v1" and config.d1_steps:
        raise UserError("d1_steps must be empty on Pendulum-v1: its analytic expert has no training checkpoints")
    if config.env != "Pendulum-v1" and not config.d1_steps:
        raise UserError(f"d1_steps must name at least one checkpoint of the expert on {config.env}")
    bad = [s for s in config.d1_steps if s % config.checkpoint_every or s >= config.expert_steps]
    if bad:
        raise UserError(f"d1_steps {bad}: each must be a multiple of checkpoint_every={config.checkpoint_every} "
                        f"below expert_steps={config.expert_steps}")
    if len(set(config.d1_steps)) != len(config.d1_steps):
        raise UserError(f"d1_steps={config.d1_steps}: must be distinct")
    if any(i > config.T for i in config.i_sweep) or len(set(config.i_sweep)) != len(config.i_sweep) \
            or config.inverse_point in config.i_sweep:
        raise UserError(f"i_sweep={config.i_sweep}: distinct, at most T={config.T}, without inverse_point")
    length = EPISODE_STEPS[config.env]
    if max(config.n_optimal, config.n_noisy) > length * config.episodes:
        raise UserError(f"n_optimal and n_noisy must not exceed the {length * config.episodes} pairs of "
                        f"episodes={config.episodes} ({length} steps each on {config.env})")

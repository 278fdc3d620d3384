"""Config, presets and seeds of momentor: importable without torch (icml24 show)."""

from __future__ import annotations

from dataclasses import dataclass

from icml24.core.config import knob, path_knob
from icml24.core.errors import UserError

METHODS = ("tpm", "tpm_nontp", "bins", "text")
"""``tpm``: the Temporal Perception Module (interpolated tokens, soft targets, propagation); ``tpm_nontp``: the
same without Neighbouring Token Propagation; ``bins``: nearest-bin tokens with hard targets; ``text``: timestamps
as number text (seconds, one decimal; the duration in the prompt)."""
TASKS = ("when", "what", "after")
"""``when``: localise an event; ``what``: caption a span (its event word); ``after``: the next event and its span."""


@dataclass(frozen=True)
class Config:
    """Each method in the same small decoder LM, on synthetic videos whose event boundaries fall between frames."""

    # token grids: C1 compares them, C2 holds out tokens of the coarse one
    n_t_coarse: int = knob(12, "coarse grid: N_t temporal tokens = frames per video (C1, C2)", ge=2, le=4096)
    n_t_fine: int = knob(32, "fine grid: N_t temporal tokens = frames per video (C1, C3; the paper: 300)", ge=2,
                         le=4096)
    methods: tuple[str, ...] = knob(("tpm", "bins", "text"), "methods trained at both grids (C1, C3)",
                                    choices=METHODS, nonempty=True)
    tasks: tuple[str, ...] = knob(TASKS, "training tasks, drawn uniformly per example, and evaluated ('when' is "
                                         "required: the claims read it)", choices=TASKS, nonempty=True)
    heldout: bool = knob(True, "C2: train tpm and tpm_nontp at the coarse grid with every third token held out")
    heldout_every: int = knob(3, "C2: hold out token indices 1, 1 + k, 1 + 2k, ... (k = this)", ge=2)
    heldout_rate: float = knob(0.0, "C2: share of the training queries with a timestamp within one token of a held-out "
                                    "index that are kept (0: those tokens are never trained; QUICK and FULL: 0.005, "
                                    "rarely trained)", ge=0, le=1)
    # data engine
    feat_dim: int = knob(32, "frame feature dimension", ge=1, le=4096)
    event_types: int = knob(12, "event types (each its own prototype feature)", ge=4)
    events_min: int = knob(2, "fewest events per video", ge=2)
    events_max: int = knob(3, "most events per video", ge=2)
    length_min: float = knob(0.1, "shortest event, as a fraction of the video", gt=0, lt=1)
    length_max: float = knob(0.3, "longest event, as a fraction of the video", gt=0, lt=1)
    noise: float = knob(0.5, "std of the Gaussian noise of every frame-feature entry (prototypes: std 1)", ge=0)
    duration_min: float = knob(20.0, "shortest training and test video (seconds)", gt=0, le=1e5)
    duration_max: float = knob(60.0, "longest training and test video (seconds)", gt=0, le=1e5)
    zs_duration_min: float = knob(90.0, "C3: shortest zero-shot test video (seconds)", gt=0, le=1e5)
    zs_duration_max: float = knob(180.0, "C3: longest zero-shot test video (seconds)", gt=0, le=1e5)
    n_train: int = knob(4000, "training videos (one query each) per model", ge=1)
    n_test: int = knob(300, "test videos per evaluation set (one query each)", ge=1)
    # model and training
    dim: int = knob(64, "decoder width", ge=4)
    layers: int = knob(2, "decoder layers", ge=1)
    heads: int = knob(4, "attention heads (must divide dim)", ge=1)
    steps: int = knob(1000, "optimiser steps per model", ge=1)
    batch: int = knob(32, "examples per step", ge=1)
    lr: float = knob(3e-3, "peak AdamW learning rate (linear warm-up over 5% of the steps, cosine decay)", gt=0)
    weight_decay: float = knob(0.01, "AdamW weight decay", ge=0)
    init_std: float = knob(0.5, "std of the initial embedding tables (words, positions, temporal tokens)", gt=0)
    decay: float = knob(0.5, "NTP decay a: R_ij = a^|i-j| (the paper: 1/2)", gt=0, lt=1)
    feature_dir: str = path_knob("", "folder of real frame features (features.npy, segments.csv; README); every "
                                     "method is also trained and tested on it at the fine grid ('' skips it)", "dir")
    threads: int = knob(1, "torch threads per seed", ge=1)
    device: str = knob("cpu", "torch device of the models (cpu, cuda, cuda:N)", nonempty=True)


SMOKE = Config(n_t_coarse=7, n_t_fine=9, methods=("tpm", "tpm_nontp", "bins", "text"), event_types=4, n_train=40,
               n_test=12, dim=8, layers=1, heads=2, steps=3, batch=8)
QUICK = Config(tasks=("when",), heldout_rate=0.005)
FULL = Config(n_t_coarse=30, n_t_fine=300, methods=METHODS, n_train=50_000, n_test=2000, dim=256, layers=6,
              heads=8, steps=20_000, batch=64, lr=5e-4, device="cuda", heldout_rate=0.005)
"""QUICK and FULL hold C2's tokens out rarely (``heldout_rate`` 0.005) since 2026-12-06. Never trained (0), both arms
sat at a floor (about 0.3 mIoU near those tokens against 0.85 elsewhere) where NTP could not act (README, "C2 on
rarely trained tokens")."""
SEEDS = {"smoke": (0,), "quick": tuple(range(4)), "full": tuple(range(5))}


def validate(config: Config) -> None:
    """Rules across fields (called by the CLI before anything runs)."""
    if "when" not in config.tasks:
        raise UserError(f"tasks={','.join(config.tasks)}: must include when (every claim reads localisation)")
    if config.n_t_fine <= config.n_t_coarse:
        raise UserError(f"n_t_fine={config.n_t_fine} <= n_t_coarse={config.n_t_coarse}: the fine grid must have "
                        "more tokens")
    if config.events_min > config.events_max:
        raise UserError(f"events_min={config.events_min} > events_max={config.events_max}")
    if config.events_max >= config.event_types:
        raise UserError(f"events_max={config.events_max}: needs fewer events per video than event_types="
                        f"{config.event_types} (a video's events have distinct types)")
    if config.length_min > config.length_max:
        raise UserError(f"length_min={config.length_min:g} > length_max={config.length_max:g}: an inverted range")
    if config.events_max * config.length_max >= 1:
        raise UserError(f"events_max * length_max = {config.events_max * config.length_max:g}: the events must fit "
                        "in the video (< 1)")
    for lo, hi in (("duration_min", "duration_max"), ("zs_duration_min", "zs_duration_max")):
        if getattr(config, lo) > getattr(config, hi):
            raise UserError(f"{lo}={getattr(config, lo):g} > {hi}={getattr(config, hi):g}: an inverted range")
    if config.dim % config.heads:
        raise UserError(f"heads={config.heads} does not divide dim={config.dim}")
    if config.heldout and config.n_t_coarse < 2 * config.heldout_every + 1:
        raise UserError(f"n_t_coarse={config.n_t_coarse}: too few tokens to hold out every {config.heldout_every}th "
                        f"(needs >= {2 * config.heldout_every + 1})")
    if config.feature_dir:
        from icml24.papers.momentor.data import check_feature_dir

        check_feature_dir(config.feature_dir, config.n_t_fine)     # a missing file or a bad shape: one line

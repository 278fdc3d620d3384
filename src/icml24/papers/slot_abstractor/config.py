"""Config, presets and seeds of slot_abstractor: importable without torch (icml24 show)."""

from __future__ import annotations

from dataclasses import dataclass

from icml24.core.config import knob
from icml24.core.errors import UserError

TASKS = ("sd", "rmts", "dist3", "id")
METHODS = ("abstractor", "transformer", "standard_ca")
MAX_OBJECTS = {"sd": 2, "rmts": 4, "dist3": 3, "id": 3}
"""Most objects in one panel of each task (art.MAX_OBJECTS; repeated here to stay torch-free)."""
MIN_SHAPES = {"sd": 2, "rmts": 5, "dist3": 4, "id": 5}
"""Fewest training shapes each task's problems need (art.MIN_SHAPES)."""
PRETRAIN_OBJECTS = 4
"""Most objects in a pretraining or ARI scene (one per quadrant; experiment._scenes)."""


@dataclass(frozen=True)
class Config:
    """Slot Attention pretrained on ART scenes and frozen; the Slot Abstractor, a Transformer and the Abstractor
    with standard cross-attention trained on its slots (or on oracle slots) per task and m-holdout."""

    tasks: tuple[str, ...] = knob(TASKS, "ART tasks run (art.py)", choices=TASKS, nonempty=True)
    holdouts: tuple[int, ...] = knob((0, 95), "m: shapes held out of training (test on those m; m = 0 tests "
                                              "on the training shapes)", ge=0, le=99, nonempty=True)
    methods: tuple[str, ...] = knob(METHODS, "reasoning models trained on the same frozen slots",
                                    choices=METHODS, nonempty=True)
    slots: str = knob("learned", "slots the reasoners read: learned (slot attention's) or oracle (the true masks "
                                 "pool the same encoder's features)", choices=("learned", "oracle"))
    # images
    n_shapes: int = knob(100, "glyphs in the shape set (ART: 100)", ge=2, le=100)
    image_size: int = knob(24, "side of a panel in pixels (the paper: 128)", ge=8, le=256)
    glyph_size: int = knob(8, "side of a glyph in pixels", ge=4, le=64)
    jitter: int = knob(2, "largest shift of a glyph from its quadrant's centre, per axis, in pixels", ge=0, le=32)
    # slot attention
    n_slots: int = knob(5, "slots K per panel (the paper: 6 for ART)", ge=2, le=16)
    slot_init: str = knob("learned", "slot initialisation: random (the paper) or learned queries",
                          choices=("random", "learned"))
    slot_dim: int = knob(32, "slot and feature dim D", ge=4, le=512)
    enc_channels: int = knob(32, "channels of the 5x5 encoder convolutions (the paper: 64)", ge=4, le=512)
    enc_layers: int = knob(3, "5x5 encoder convolutions (the paper: 4)", ge=1, le=8)
    dec_hidden: int = knob(64, "hidden width of the per-pixel decoder MLP", ge=4, le=1024)
    slot_iters: int = knob(3, "slot attention iterations T (the paper: 3)", ge=1, le=10)
    pretrain_steps: int = knob(1500, "Adam steps of the autoencoder's reconstruction pretraining", ge=1)
    pretrain_batch: int = knob(32, "scenes per pretraining step (fresh scenes every step)", ge=1, le=4096)
    pretrain_lr: float = knob(1e-3, "peak Adam learning rate of pretraining (linear warm-up over 5%, then "
                                    "cosine decay)", gt=0, le=1)
    pretrain_seed: int = knob(0, "seed of the pretraining scenes and weights: one slot model serves every seed",
                              ge=0)
    ari_images: int = knob(256, "scenes per seed on which the slots' FG-ARI is measured", ge=1)
    # reasoning
    train_problems: int = knob(4000, "training problems per task and m (the paper: 10k)", ge=1)
    test_problems: int = knob(500, "held-out test problems per task and m (the paper: 10k)", ge=10)
    depth: int = knob(2, "Abstractor / Transformer layers (the paper: 6)", ge=1, le=48)
    dim: int = knob(64, "model dim of the reasoners (the paper: 8 heads x 64)", ge=4, le=2048)
    heads: int = knob(4, "attention heads (the paper: 8)", ge=1, le=64)
    mlp: int = knob(128, "hidden width of the feed-forward block (the paper: 512)", ge=4, le=8192)
    steps: int = knob(1500, "Adam steps per reasoner", ge=1)
    batch: int = knob(32, "problems per step (the paper: 16)", ge=1, le=4096)
    lr: float = knob(5e-4, "Adam learning rate of the reasoners (the paper: 8e-5)", gt=0, le=1)
    sd_replicates: int = knob(1, "independent sd experiments per seed, each its own shape split, problems, initial "
                                 "weights and batches (replicate 0 is the seed's own), the metrics their mean: sd "
                                 "reasoners are cheap, and one seed's stalled Abstractor decided the sd claims "
                                 "(README)", ge=1, le=64)
    threads: int = knob(1, "torch threads per seed", ge=1, le=256)


SMOKE = Config(holdouts=(95,), image_size=16, glyph_size=6, jitter=1, slot_dim=8, enc_channels=8, enc_layers=1,
               dec_hidden=8, slot_iters=1, pretrain_steps=3, pretrain_batch=4, ari_images=4, train_problems=16,
               test_problems=10, depth=1, dim=8, heads=2, mlp=8, steps=3, batch=4)
"""Every task at m = 95 (every claim's metric), tiny everywhere."""
QUICK = Config(tasks=("sd", "dist3", "id"), slots="oracle", holdouts=(95,), pretrain_steps=400, train_problems=1200,
               test_problems=300, steps=700, batch=16, lr=1e-3, sd_replicates=6)
"""Batch 16 (the paper's) and 700 steps since 2026-12-05 (before: 32 and 400): the same problems seen about as
often, in more updates, so that a reasoner whose loss sits at ln 2 for its first hundreds of steps gets past it
(README, "Why 700 steps of 16"). Since 2026-12-06 without rmts, whose claims have FULL bands only (claims.FULL_ONLY:
no reasoner learns it at this scale), and with 3 independent sd experiments per seed (sd_replicates: one seed's
stalled Abstractor decided the sd claims). Since 2026-12-06, later, 400 pretraining steps (before: 200): the
200-step encoder's features of some five-shape training sets were nearly collinear (cosine of two different
shapes' slots after context norm 0.997 on development seed 126), which relational cross-attention, seeing
only inner products, could not leave chance on (README, "Why 400 pretraining steps"). Then 6 sd replicates (before:
3): with no stall left, C3_sd's lead (+0.047 and +0.043 on the claim and held-out seeds) sat at its 4-seed CI's
edge, about 0.045 per seed apart; 6 replicates halve that variance, at about 9 s each."""
FULL = Config(image_size=128, glyph_size=40, jitter=5, n_slots=6, slot_init="random", slot_dim=64, enc_channels=64,
              enc_layers=4, dec_hidden=64, pretrain_steps=200_000, pretrain_batch=64, pretrain_lr=4e-4,
              ari_images=1000, train_problems=10_000, test_problems=10_000, depth=6, dim=512, heads=8, mlp=512,
              steps=100_000, batch=16, lr=8e-5)
SEEDS = {"smoke": (0,), "quick": tuple(range(4)), "full": tuple(range(10))}
PILOT_SEEDS = tuple(range(100, 103))
"""Development seeds of the pilot that fixed the bands (never the claim seeds)."""


def validate(config: Config) -> None:
    """Rules across fields (called by the CLI before anything runs)."""
    for m in config.holdouts:
        if m >= config.n_shapes:
            raise UserError(f"holdouts={m}: m must be below n_shapes={config.n_shapes} (some shapes must train)")
        for task in config.tasks:
            if config.n_shapes - m < MIN_SHAPES[task]:
                raise UserError(f"holdouts={m}: {task} needs {MIN_SHAPES[task]} training shapes, n_shapes - m = "
                                f"{config.n_shapes - m}")
            if m > 0 and m < MIN_SHAPES[task]:
                raise UserError(f"holdouts={m}: {task} needs {MIN_SHAPES[task]} held-out shapes to test on")
    objects = max([PRETRAIN_OBJECTS] + [MAX_OBJECTS[t] for t in config.tasks])
    if config.n_slots <= objects:
        raise UserError(f"n_slots={config.n_slots}: the scenes put up to {objects} objects in a panel (pretraining "
                        "and ARI scenes: 4); K needs one slot per object plus the background")
    if config.image_size % 2 or config.image_size // 2 < config.glyph_size + 2 * config.jitter:
        raise UserError(f"image_size={config.image_size}: must be even and hold a {config.glyph_size} px glyph "
                        f"with +-{config.jitter} px jitter in each quadrant (image_size >= "
                        f"{2 * (config.glyph_size + 2 * config.jitter)})")
    if config.dim % config.heads:
        raise UserError(f"dim={config.dim}: must be a multiple of heads={config.heads}")

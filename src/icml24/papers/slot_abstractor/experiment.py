"""Experiment of slot_abstractor: ``run(config, seed)`` and the figures.

One slot model serves every seed (the paper pretrains one per dataset): the Slot Attention autoencoder
(slots.py) trained to reconstruct fresh ART scenes (1 to 4 glyphs of all ``n_shapes`` shapes in random
quadrants) from stream ``pretrain_seed``, built once per key into the artefact cache, with its FG-ARI on 128
fixed scenes at ten points of the training (the curve ``pretrain_ari``). Per seed: the slots' FG-ARI on
``ari_images`` fresh scenes; then per task and m the shape split, ``train_problems`` training and
``test_problems`` test problems (art.py), every panel's factorised slots (learned or oracle, frozen; cached per
seed, task and m), and each method (abstractor.py) trained on the same slots with the same batches. On sd,
``sd_replicates`` independent experiments (replicate r > 0: every stream name followed by ``replicate, r``; the
slots cached per replicate), every metric and loss curve their mean, and ``train_acc_min_*`` the worst replicate's
training accuracy. Reported: held-out accuracy per method, task and m, and for the Abstractor the first layer's
relational attention between slots of the same shape minus slots of different shapes on the test problems.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch

from icml24.common.optim import FlatAdam
from icml24.core import streams
from icml24.core.context import RunContext
from icml24.core.plots import band
from icml24.core.results import RunResult, SeedResult
from icml24.papers.slot_abstractor import art
from icml24.papers.slot_abstractor.abstractor import Reasoner
from icml24.papers.slot_abstractor.config import (
    FULL,
    METHODS,
    PRETRAIN_OBJECTS,
    QUICK,
    SEEDS,
    SMOKE,
    Config,
    validate,
)
from icml24.papers.slot_abstractor.slots import Decomposition, SlotAutoencoder, fg_ari, oracle_factors

__all__ = ["Config", "SMOKE", "QUICK", "FULL", "SEEDS", "validate", "run", "figures", "autoencoder", "pretrain",
           "PRETRAIN_FIELDS", "slot_model", "TaskData", "task_data", "encode", "task_slots", "train_reasoner",
           "relation_attention"]

ARI_CHECKPOINTS = 10
ARI_PROBE = 128
EXAMPLES = 3
"""Scenes of the FG-ARI set kept per seed (``examples["scenes"]``: image, true objects, the learned slot of each
pixel, the reconstruction, the scene's FG-ARI) for the report's masks figure."""
ENCODE_BATCH = 256


def _seeded(seed: int, factory, *args):
    """``factory(*args)`` with torch's global generator seeded by ``seed`` in a forked scope."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return factory(*args)


def autoencoder(config: Config) -> SlotAutoencoder:
    """An untrained autoencoder of the config's shape (weights from stream ``pretrain_seed``)."""
    return _seeded(streams.int_seed(config.pretrain_seed, "init", "autoencoder"), SlotAutoencoder, config.image_size,
                   config.slot_dim, config.n_slots, config.enc_channels, config.enc_layers, config.dec_hidden,
                   config.slot_iters, config.slot_init)


def _scenes(config: Config, n: int, rng: np.random.Generator) -> art.Scenes:
    panels = art.random_panels(n, PRETRAIN_OBJECTS, config.n_shapes, rng)
    return art.render(panels, config.image_size, config.glyph_size, config.jitter, rng)


def _ari(ae: SlotAutoencoder, scenes: art.Scenes, generator: torch.Generator) -> tuple[np.ndarray, Decomposition]:
    """The slots' FG-ARI on each scene, (n,), and the decomposition it was read from."""
    with torch.no_grad():
        dec = ae(torch.from_numpy(scenes.images), generator)
    return fg_ari(scenes.segments, dec.masks.numpy()), dec


class Pretrained(NamedTuple):
    """The slot model's weights and its FG-ARI on the probe scenes at ``steps``."""

    state: dict[str, torch.Tensor]
    steps: list[float]
    ari: list[float]


def pretrain(config: Config) -> Pretrained:
    """Reconstruction (MSE) training of the autoencoder by Adam, fresh scenes every step, linear warm-up over the
    first 5% of the steps and cosine decay, gradient-norm clip 1."""
    ae = autoencoder(config)
    rng = streams.rng(config.pretrain_seed, "pretrain", "scenes")
    gen = streams.torch_generator(config.pretrain_seed, "pretrain", "slots")
    probe = _scenes(config, ARI_PROBE, streams.rng(config.pretrain_seed, "pretrain", "probe"))
    opt = torch.optim.Adam(ae.parameters(), lr=config.pretrain_lr)
    total, warm = config.pretrain_steps, max(1, config.pretrain_steps // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda k: min(1.0, (k + 1) / warm) * 0.5 * (1 + math.cos(math.pi * min(k, total) / total)))
    marks = set(np.unique(np.linspace(0, total, ARI_CHECKPOINTS + 1).astype(int)[1:]).tolist())
    steps, ari = [], []
    for k in range(1, total + 1):
        s = _scenes(config, config.pretrain_batch, rng)
        x = torch.from_numpy(s.images)
        loss = (ae(x, gen).recon - x).square().mean()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(ae.parameters(), 1.0)
        opt.step()
        sched.step()
        if k in marks:
            steps.append(float(k))
            ari.append(float(_ari(ae, probe, streams.torch_generator(config.pretrain_seed, "probe"))[0].mean()))
    return Pretrained({k: v.detach().clone() for k, v in ae.state_dict().items()}, steps, ari)


PRETRAIN_FIELDS = ("n_shapes", "image_size", "glyph_size", "jitter", "n_slots", "slot_init", "slot_dim",
                   "enc_channels", "enc_layers", "dec_hidden", "slot_iters", "pretrain_steps", "pretrain_batch",
                   "pretrain_lr", "pretrain_seed")
"""The config fields the slot model depends on (the key of its cached artefact)."""


def slot_model(config: Config, ctx: RunContext) -> tuple[SlotAutoencoder, Pretrained]:
    """The frozen pretrained autoencoder, built once per key (:data:`PRETRAIN_FIELDS`) into the artefact cache."""
    def build(folder: Path) -> None:
        torch.save(pretrain(config)._asdict(), folder / "slot_model.pt")

    inputs = {f: getattr(config, f) for f in PRETRAIN_FIELDS}
    saved = torch.load(ctx.artefact("slot_model", inputs, build) / "slot_model.pt", weights_only=True)
    pre = Pretrained(**saved)
    ae = autoencoder(config)
    ae.load_state_dict(pre.state)
    return ae.requires_grad_(False).eval(), pre


class TaskData(NamedTuple):
    """One task at one m: the shape split and the problems.

    Attributes:
        train_shapes, test_shapes: shape indices of the split (art.split_shapes).
        train, test: the problems (art.Problems), drawn from ``train_shapes`` and ``test_shapes``.
    """

    train_shapes: np.ndarray
    test_shapes: np.ndarray
    train: art.Problems
    test: art.Problems


def _replicate(replicate: int) -> tuple:
    """The stream names' suffix of an sd replicate: none for the seed's own (0), ``replicate, r`` for r > 0."""
    return ("replicate", replicate) if replicate else ()


def task_data(config: Config, seed: int, task: str, m: int, replicate: int = 0) -> TaskData:
    """The split (stream ``split, m``) and problems (streams ``problems, task, m, train|test``) of one seed
    (replicate r > 0: every stream name followed by ``replicate, r``)."""
    again = _replicate(replicate)
    tr, te = art.split_shapes(config.n_shapes, m, streams.rng(seed, "split", m, *again))
    train = art.generate(task, config.train_problems, tr, streams.rng(seed, "problems", task, m, "train", *again))
    test = art.generate(task, config.test_problems, te, streams.rng(seed, "problems", task, m, "test", *again))
    return TaskData(tr, te, train, test)


class Slots(NamedTuple):
    """Frozen slots of a problem set.

    Attributes:
        z, m: (n, C, P * K, D) feature and position embeddings of every candidate sequence.
        shape: (n, C, P * K) the shape each slot holds (the object with most of its attention mass; -1 for the
            background or an empty slot).
    """

    z: torch.Tensor
    m: torch.Tensor
    shape: torch.Tensor


def encode(ae: SlotAutoencoder, config: Config, problems: art.Problems, rng: np.random.Generator,
           generator: torch.Generator) -> Slots:
    """Render each distinct panel once (the first panel of dist3 and id is the same image in every candidate),
    then its slots: slot attention's z, m (``learned``) or the true masks' (``oracle``)."""
    n, C, P, _ = problems.shapes.shape
    shared = problems.shapes[:, :1, 0] if P == 2 else np.zeros((n, 0, 4), dtype=np.int64)   # (n, 1|0, 4)
    last = problems.shapes[:, :, P - 1]                                                      # (n, C, 4)
    panels = np.concatenate([shared, last], axis=1).reshape(-1, 4)
    scenes = art.render(panels, config.image_size, config.glyph_size, config.jitter, rng)
    zs, ms, owner = [], [], []
    with torch.no_grad():
        for i in range(0, len(panels), ENCODE_BATCH):
            x = torch.from_numpy(scenes.images[i:i + ENCODE_BATCH])
            seg = torch.from_numpy(scenes.segments[i:i + ENCODE_BATCH])
            if config.slots == "oracle":
                f = oracle_factors(ae, x, seg, config.n_slots)
                quadrant = torch.arange(config.n_slots).expand(len(x), -1)
                own = torch.where(quadrant < 4, quadrant + 1, 0)
            else:
                out = ae(x, generator)
                f = out
                own = _owners(out.attn, seg.flatten(1))
            zs.append(f.z)
            ms.append(f.m)
            owner.append(own)
    z, m, own_all = torch.cat(zs), torch.cat(ms), torch.cat(owner)
    per = panels.reshape(n, -1, 4)                                                           # (n, S, 4)
    shape_of = torch.from_numpy(np.concatenate([-np.ones((n, per.shape[1], 1), dtype=np.int64), per], axis=2))
    own_all = own_all.reshape(n, per.shape[1], -1)
    shape = torch.gather(shape_of, 2, own_all)                                               # (n, S, K)
    K, D = config.n_slots, z.shape[-1]
    z, m = z.reshape(n, -1, K, D), m.reshape(n, -1, K, D)

    def seq(t: torch.Tensor) -> torch.Tensor:                                                # (n, S, K, ...) ->
        if P == 1:                                                                           # (n, C, P*K, ...)
            return t.reshape(n, C, K, *t.shape[3:])
        first = t[:, :1].expand(n, C, *t.shape[2:])
        return torch.stack([first, t[:, 1:]], dim=2).reshape(n, C, P * K, *t.shape[3:])

    return Slots(seq(z), seq(m), seq(shape))


def _owners(attn: torch.Tensor, seg: torch.Tensor) -> torch.Tensor:
    """(b, K) the segment each slot holds: object q + 1 goes to the slot that wins most of its pixels (argmax of
    the attention over slots), 0 (background) to every other slot. ``attn`` (b, K, N), ``seg`` (b, N)."""
    K = attn.shape[1]
    win = torch.nn.functional.one_hot(attn.argmax(dim=1), K).float()               # (b, N, K)
    obj = torch.nn.functional.one_hot(seg, 5).float()[..., 1:]                      # (b, N, 4)
    counts = torch.einsum("bnk,bnq->bqk", win, obj)                                 # (b, 4, K)
    own = torch.zeros(attn.shape[0], K, dtype=torch.long)
    for q in range(4):
        present = counts[:, q].sum(-1) > 0
        rows = torch.nonzero(present).squeeze(1)
        own[rows, counts[rows, q].argmax(-1)] = q + 1
    return own


SLOT_FIELDS = PRETRAIN_FIELDS + ("slots", "train_problems", "test_problems")


def task_slots(config: Config, ctx: RunContext, ae: SlotAutoencoder, seed: int, task: str, m: int,
               data: TaskData, replicate: int = 0) -> tuple[Slots, Slots]:
    """Train and test slots of one seed, task, m (and replicate), cached (key: :data:`SLOT_FIELDS`, seed, task, m,
    replicate r > 0)."""
    again = _replicate(replicate)

    def build(folder: Path) -> None:
        out = {}
        for part, probs in (("train", data.train), ("test", data.test)):
            s = encode(ae, config, probs, streams.rng(seed, "render", task, m, part, *again),
                       streams.torch_generator(seed, "slots", task, m, part, *again))
            out[part] = s._asdict()
        torch.save(out, folder / "slots.pt")

    inputs = {**{f: getattr(config, f) for f in SLOT_FIELDS}, "seed": seed, "task": task, "m": m,
              **({"replicate": replicate} if replicate else {})}
    saved = torch.load(ctx.artefact("slots", inputs, build) / "slots.pt", weights_only=True)
    return Slots(**saved["train"]), Slots(**saved["test"])


def _scores(model: Reasoner, s: Slots, idx: torch.Tensor, panel: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    z, m = s.z[idx], s.m[idx]                                  # (b, C, N, D)
    b, C, N, D = z.shape
    out = model(z.reshape(b * C, N, D), m.reshape(b * C, N, D), panel)
    return out.score.reshape(b, C), out.attn.reshape(b, C, N, N)


def _loss(scores: torch.Tensor, answer: torch.Tensor) -> torch.Tensor:
    if scores.shape[1] == 1:                                   # sd: a same/different logit
        return torch.nn.functional.binary_cross_entropy_with_logits(scores[:, 0], answer.float())
    return torch.nn.functional.cross_entropy(scores, answer)


def _predict(scores: torch.Tensor) -> torch.Tensor:
    return (scores[:, 0] > 0).long() if scores.shape[1] == 1 else scores.argmax(dim=1)


def relation_attention(attn: torch.Tensor, shape: torch.Tensor) -> float:
    """Mean attention between distinct slots holding the same shape minus between slots holding different
    shapes (objects only). ``attn`` (B, N, N), ``shape`` (B, N) with -1 for non-objects.

    >>> a = torch.tensor([[[0.0, 0.6, 0.2], [0.6, 0.0, 0.2], [0.3, 0.3, 0.0]]])
    >>> round(relation_attention(a, torch.tensor([[4, 4, 7]])), 6)     # same: 0.6, different: mean(.2,.2,.3,.3)
    0.35
    """
    obj = shape >= 0
    pair = obj[:, :, None] & obj[:, None, :] & ~torch.eye(shape.shape[1], dtype=torch.bool)
    same = (shape[:, :, None] == shape[:, None, :]) & pair
    diff = pair & ~same
    if not same.any() or not diff.any():
        return float("nan")
    return float(attn[same].mean() - attn[diff].mean())


class Trained(NamedTuple):
    """A reasoner's held-out and training accuracy, its relational attention diagnostic, its loss curve."""

    test_acc: float
    train_acc: float
    relation: float
    loss: list[float]


def train_reasoner(config: Config, method: str, task: str, train: Slots, train_answer: np.ndarray, test: Slots,
                   test_answer: np.ndarray, seed: int, m: int, replicate: int = 0) -> Trained:
    """Adam on cross-entropy over candidates (sd: logistic loss), batches from stream ``batches, task, m`` (the
    same for every method; replicate r > 0: the streams ``..., replicate, r`` of the initial weights and the
    batches); then accuracy on the test and on up to ``test_problems`` training problems."""
    P = art.N_PANELS[task]
    panel = torch.arange(P).repeat_interleave(config.n_slots)
    again = _replicate(replicate)
    model = _seeded(streams.int_seed(seed, "init", method, task, m, *again), Reasoner, method, train.z.shape[-1],
                    config.dim, config.heads, config.mlp, config.depth, P)
    opt = FlatAdam(model.parameters(), lr=config.lr)                   # torch.optim.Adam, bit for bit
    gen = streams.torch_generator(seed, "batches", task, m, *again)
    ans_tr, ans_te = torch.from_numpy(train_answer), torch.from_numpy(test_answer)
    n = len(ans_tr)
    losses, run_loss = [], 0.0
    every = max(1, config.steps // 20)
    for k in range(config.steps):
        idx = torch.randint(0, n, (min(config.batch, n),), generator=gen)
        scores, _ = _scores(model, train, idx, panel)
        loss = _loss(scores, ans_tr[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        run_loss += loss.item()
        if (k + 1) % every == 0:
            losses.append(run_loss / every)
            run_loss = 0.0
    model.eval()

    def accuracy(s: Slots, ans: torch.Tensor, limit: int) -> tuple[float, float]:
        hits, rel = [], []
        with torch.no_grad():
            for i in range(0, min(limit, len(ans)), 256):
                idx = torch.arange(i, min(i + 256, limit, len(ans)))
                scores, attn = _scores(model, s, idx, panel)
                hits.append(_predict(scores) == ans[idx])
                b, C, N, _ = attn.shape
                rel.append(relation_attention(attn.reshape(b * C, N, N), s.shape[idx].reshape(b * C, N)))
        return float(torch.cat(hits).float().mean()), float(np.nanmean(rel)) if not np.isnan(rel).all() else 0.0

    test_acc, relation = accuracy(test, ans_te, len(ans_te))
    train_acc, _ = accuracy(train, ans_tr, config.test_problems)
    return Trained(test_acc, train_acc, relation if method != "transformer" else 0.0, losses)


def _task_stage(config: Config, ctx: RunContext, ae: SlotAutoencoder, seed: int, task: str,
                m: int) -> tuple[dict, dict]:
    metrics: dict[str, float] = {}
    curves: dict[str, list[float]] = {}
    trained: dict[str, list[Trained]] = {method: [] for method in config.methods}
    replicates = config.sd_replicates if task == "sd" else 1
    for r in range(replicates):             # independent experiments: shape split, problems, weights, batches
        data = task_data(config, seed, task, m, r)
        train, test = task_slots(config, ctx, ae, seed, task, m, data, r)
        for method in config.methods:       # every method on the same slots and batches
            trained[method].append(train_reasoner(config, method, task, train, data.train.answer, test,
                                                  data.test.answer, seed, m, r))
    for method, runs in trained.items():
        key = f"{method}_{task}_m{m}"
        metrics[f"acc_{key}"] = float(np.mean([t.test_acc for t in runs]))
        metrics[f"train_acc_{key}"] = float(np.mean([t.train_acc for t in runs]))
        if replicates > 1:                                   # a stalled reasoner trains to about chance
            metrics[f"train_acc_min_{key}"] = min(t.train_acc for t in runs)
        if method != "transformer":
            metrics[f"relation_{key}"] = float(np.mean([t.relation for t in runs]))
        curves[f"loss_{key}"] = np.mean([t.loss for t in runs], axis=0).tolist()
    return metrics, curves


def run(config: Config, seed: int, ctx: RunContext | None = None) -> SeedResult:
    """One seed: the slots' FG-ARI, then every task, m and method (module docstring)."""
    ctx = ctx or RunContext.local()
    metrics: dict[str, float] = {}
    curves: dict[str, list[float]] = {}
    with ctx.threads(config.threads):
        ae, pre = slot_model(config, ctx)
        scenes = _scenes(config, config.ari_images, streams.rng(seed, "ari"))
        ari, dec = _ari(ae, scenes, streams.torch_generator(seed, "ari"))                # (ari_images,)
        metrics["fg_ari"] = float(ari.mean())
        examples = {"scenes": [{"image": np.rint(255 * scenes.images[i]).astype(int),     # 0-255 gray
                                "objects": scenes.segments[i],                            # 0 background, k + 1 object
                                "slot": dec.masks[i].argmax(0).numpy(),                   # the slot of each pixel
                                "recon": np.rint(255 * dec.recon[i].clamp(0, 1).numpy()).astype(int),
                                "fg_ari": float(ari[i])} for i in range(min(EXAMPLES, len(ari)))]}
        curves["pretrain_step"], curves["pretrain_ari"] = pre.steps, pre.ari
        for task in config.tasks:
            metrics[f"chance_{task}"] = art.CHANCE[task]
            for m in config.holdouts:
                mt, cv = ctx.stage(f"task_{task}_m{m}", _task_stage, config, ctx, ae, seed, task, m)
                metrics.update(mt)
                curves.update(cv)
    return SeedResult(seed=seed, metrics=metrics, curves=curves, examples=examples)


def figures(result: RunResult) -> dict:
    """Held-out accuracy by task, method and m (mean and min-max over seeds, chance dashed); the pretraining's
    FG-ARI against steps."""
    import matplotlib.pyplot as plt

    cfg = result.config
    tasks, holdouts = cfg["tasks"], cfg["holdouts"]
    methods = [mt for mt in METHODS if mt in cfg["methods"]]
    fig, axes = plt.subplots(1, len(holdouts) + 1, figsize=(4.5 * (len(holdouts) + 1), 3.6))
    width = 0.8 / len(methods)
    for ax, m in zip(axes, holdouts):
        for j, mt in enumerate(methods):
            vals = [result.metric(f"acc_{mt}_{t}_m{m}") for t in tasks]
            x = np.arange(len(tasks)) + j * width
            ax.bar(x, [v.mean() for v in vals], width, label=mt,
                   yerr=np.array([[v.mean() - v.min() for v in vals], [v.max() - v.mean() for v in vals]]))
        for i, t in enumerate(tasks):
            ax.hlines(art.CHANCE[t], i - 0.1, i + 0.9, colors="k", linestyles="--", lw=1)
        ax.set_xticks(np.arange(len(tasks)) + 0.4 - width / 2, tasks)
        ax.set_ylim(0, 1)
        ax.set_title(f"held-out accuracy, m = {m} ({cfg['slots']} slots)")
        ax.legend(fontsize=7)
    band(axes[-1], result.curve("pretrain_step")[0], result.curve("pretrain_ari"), label="FG-ARI", marker="o")
    axes[-1].set_xlabel("pretraining step")
    axes[-1].set_ylabel("FG-ARI (probe scenes)")
    fig.tight_layout()
    figs = {"accuracy": fig}
    kept = {sr.seed: sr.examples["scenes"] for sr in result.seeds if sr.examples}
    if kept:
        figs["masks"] = masks_figure(kept, cfg["slots"])
    return figs


def masks_figure(kept: dict[int, list[dict]], reasoned_on: str):
    """A row per seed, its kept scenes side by side (the first of its FG-ARI set, not chosen): the image, the
    learned slot of each pixel (argmax of the decoder's alpha masks; its title the scene's FG-ARI) and the
    reconstruction."""
    import matplotlib.pyplot as plt

    cols = ("image", "slot", "recon")
    n = max(len(v) for v in kept.values())
    fig, axes = plt.subplots(len(kept), n * len(cols), figsize=(1.25 * n * len(cols), 1.45 * len(kept) + 0.5),
                             squeeze=False)
    for r, (seed, scenes) in enumerate(sorted(kept.items())):
        for i, sc in enumerate(scenes):
            for c, key in enumerate(cols):
                ax = axes[r, i * len(cols) + c]
                gray = key != "slot"
                ax.imshow(np.asarray(sc[key]), cmap="gray" if gray else "tab10", vmin=0, vmax=255 if gray else 9,
                          interpolation="nearest")
                ax.set_title(f"slots, ARI {sc['fg_ari']:.2f}" if key == "slot" else key, fontsize=7)
        axes[r, 0].set_ylabel(f"seed {seed}", fontsize=8)
    for ax in axes.flat:
        ax.set_xticks([])
        ax.set_yticks([])
    fig.suptitle(f"Slot Attention decompositions of each seed's first scenes (FG-ARI: foreground adjusted Rand "
                 f"index; the reasoners read {reasoned_on} slots)", fontsize=8)
    fig.tight_layout()
    return fig

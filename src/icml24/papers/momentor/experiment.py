"""Experiment of Momentor's TPM: ``run(config, seed)`` and the figures.

Per seed (all randomness from named streams of ``seed``):

1. a world: one prototype feature per event type and the background's;
2. at each grid N_t in (``n_t_coarse``, ``n_t_fine``): ``n_train`` training videos (one query each, the task
   drawn from ``tasks``) and ``n_test`` test videos, the same event layouts rendered at both grids; each method
   of ``methods`` trains the same decoder (the same batches) and is scored on 'when' (mIoU, R@1 IoU 0.5/0.7),
   'what' (caption exact match) and 'after' (next event exact match) queries of the test videos, and on the
   test videos with zero-shot durations (C3: the same frames, D in [``zs_duration_min``, ``zs_duration_max``]
   seconds; only number text reads D). The quantization ceiling is the mIoU of the true segments rounded to the
   grid (a perfect discrete-token model);
3. (``heldout``, C2) at the coarse grid, tokens 1, 4, 7, ... are held out: the training videos' queries use no
   timestamp within one token of them, the test 'when' queries have both ends within half a token of one;
   ``tpm`` and ``tpm_nontp`` train on it from the same initial weights and batches (paired since 2026-12-06);
   the mechanism (C2b): the cosine of what training moved a held-out
   token's output embedding to what it moved its neighbours' (the tables' own cosine is a diagnostic: the
   random initialisation dominates it);
4. (``feature_dir``) every method trains and tests on a user's real frame features at the fine grid.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from icml24.core import streams
from icml24.core.context import RunContext
from icml24.core.errors import UserError
from icml24.core.results import RunResult, SeedResult
from icml24.papers.momentor import data
from icml24.papers.momentor.config import FULL, METHODS, QUICK, SEEDS, SMOKE, Config, validate
from icml24.papers.momentor.model import DecoderLM, Encoded, Vocab, encode_queries, fit, generate, query_prompts, read_span
from icml24.papers.momentor.tpm import TemporalPerception, neighbour_cosine

__all__ = ["Config", "SMOKE", "QUICK", "FULL", "SEEDS", "validate", "run", "figures", "METHODS", "Split",
           "engine", "splits", "heldout_split", "make_model", "score", "train_and_score"]

SHOWN = 40
"""Test queries whose predicted and true segments are kept as curves (the report's scatter)."""


def engine(config: Config) -> data.Engine:
    """The data engine's settings from the config."""
    return data.Engine(config.event_types, config.feat_dim, (config.events_min, config.events_max),
                       (config.length_min, config.length_max), config.noise)


class Split(NamedTuple):
    """Training queries and the evaluation sets of one grid."""

    train: data.Videos
    train_q: data.Queries
    test: data.Videos
    tests: dict[str, data.Queries]     # task -> one query per test video
    zs: data.Videos | None             # the test videos with zero-shot durations (the same frames)


def splits(config: Config, seed: int, n_t: int, protos: np.ndarray) -> Split:
    """Training and test videos of one seed rendered at N_t (the layouts and durations do not depend on N_t)."""
    eng = engine(config)
    train_lay = data.layouts(streams.rng(seed, "train-layouts"), config.n_train, eng)
    test_lay = data.layouts(streams.rng(seed, "test-layouts"), config.n_test, eng)
    d_train = data.durations(streams.rng(seed, "train-durations"), config.n_train, config.duration_min,
                             config.duration_max)
    d_test = data.durations(streams.rng(seed, "test-durations"), config.n_test, config.duration_min,
                            config.duration_max)
    d_zs = data.durations(streams.rng(seed, "zs-durations"), config.n_test, config.zs_duration_min,
                          config.zs_duration_max)
    train = data.render(train_lay, protos, n_t, config.noise, streams.rng(seed, "train-noise", n_t), d_train)
    test = data.render(test_lay, protos, n_t, config.noise, streams.rng(seed, "test-noise", n_t), d_test)
    train_q = data.queries(streams.rng(seed, "train-queries"), train, config.tasks)
    tests = {t: data.queries(streams.rng(seed, "test-queries", t), test, (t,)) for t in data.TASKS if t in config.tasks}
    return Split(train, train_q, test, tests, test._replace(duration=d_zs))


def heldout_split(config: Config, seed: int, protos: np.ndarray) -> tuple[Split, np.ndarray]:
    """C2's data at the coarse grid and the held-out token indices: training queries whose timestamps (prompt
    and answer) all keep one token away from a held-out index (and a share ``heldout_rate`` of the others: the
    held-out tokens are rarely trained), test 'when' queries with both ends within half a token of one (videos
    drawn until ``n_train`` and ``n_test`` qualify)."""
    n_t, eng = config.n_t_coarse, engine(config)
    held = data.heldout_tokens(n_t, config.heldout_every)
    g = n_t - 1

    def draw(name: str, n: int, tasks: tuple[str, ...], keep, rate: float) -> tuple[data.Videos, data.Queries]:
        got_v: list[data.Videos] = []
        got_q: list[data.Queries] = []
        have, chunk = 0, 0
        while have < n:
            if chunk == 50:
                raise UserError(f"C2: only {have} of {n} {name} videos have queries that qualify in {50 * 8 * n} "
                                "drawn; use longer events, a finer n_t_coarse, or heldout=false")
            lay = data.layouts(streams.rng(seed, f"{name}-layouts", chunk), 8 * n, eng)
            dur = data.durations(streams.rng(seed, f"{name}-durations", chunk), 8 * n, config.duration_min,
                                 config.duration_max)
            vids = data.render(lay, protos, n_t, config.noise, streams.rng(seed, f"{name}-noise", chunk), dur)
            q = data.queries(streams.rng(seed, f"{name}-queries", chunk), vids, tasks)
            ans = data.answers(vids, q)
            lucky = streams.rng(seed, f"{name}-kept", chunk).random(len(q.video)) < rate
            ok = np.flatnonzero(keep(ans.start * g, ans.end * g) | lucky)[:n - have]
            got_v.append(data.select(vids, ok))
            got_q.append(data.Queries(np.arange(len(ok)) + have, q.task[ok], q.slot[ok]))
            have += len(ok)
            chunk += 1
        return (data.Videos(*(np.concatenate(parts) for parts in zip(*got_v))),
                data.Queries(*(np.concatenate(parts) for parts in zip(*got_q))))

    train, train_q = draw("heldout-train", config.n_train, config.tasks,
                          lambda us, ue: ~data.touches(us, held) & ~data.touches(ue, held), config.heldout_rate)
    test, test_q = draw("heldout-test", config.n_test, ("when",),
                        lambda us, ue: data.near(us, held) & data.near(ue, held), 0.0)
    return Split(train, train_q, test, {"when": test_q}, None), held


def make_model(method: str, n_words: int, feat_dim: int, n_t: int, config: Config,
               generator: torch.Generator) -> DecoderLM:
    """The shared decoder with ``method``'s temporal tokens (none for number text)."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; use one of {', '.join(METHODS)}")
    tpm = None if method == "text" else TemporalPerception(
        n_t, config.dim, continuous=method != "bins", propagation=method == "tpm", decay=config.decay,
        init_std=config.init_std, generator=generator)
    return DecoderLM(n_words, feat_dim, n_t, config.dim, config.layers, config.heads, tpm, generator, config.init_std)


def _plan(method: str, task: str) -> list[str]:
    span = ["number", "number"] if method == "text" else ["time", "time"]
    return {"when": span, "what": ["event"], "after": ["event", *span]}[task]


class Scores(NamedTuple):
    """One trained model's scores and the first ``SHOWN`` predicted 'when' segments."""

    metrics: dict[str, float]
    pred_start: list[float]
    pred_end: list[float]


def score(model: DecoderLM, method: str, vocab: Vocab, split: Split, n_t: int, device: str) -> Scores:
    """mIoU / R@0.5 / R@0.7 on 'when', exact match on 'what' and 'after', zero-shot mIoU; for the TPM also the
    argmax-decoded mIoU (diagnostic)."""
    out: dict[str, float] = {}
    shown: tuple[list[float], list[float]] = ([], [])
    evals = [("", split.test)] + ([("zs_", split.zs)] if split.zs is not None else [])
    for prefix, videos in evals:
        for task, q in split.tests.items():
            if prefix and task != "when":
                continue
            frames = torch.from_numpy(videos.frames[q.video]).to(device)      # (Q, N_t, d): one row per query
            prompts = query_prompts(method, vocab, videos, q, n_t)
            ans = data.answers(videos, q)
            decodes = [False, True] if task == "when" and method in ("tpm", "tpm_nontp") and not prefix else [False]
            for argmax in decodes:
                gen = generate(model, vocab, frames, prompts, _plan(method, task), argmax=argmax)
                if task == "what":
                    out["caption_em"] = float(np.mean([g[0][1] == vocab.event(e) for g, e in zip(gen, ans.event)]))
                    continue
                if task == "after":
                    out["after_em"] = float(np.mean([g[0][1] == vocab.event(e) for g, e in zip(gen, ans.event)]))
                    gen = [g[1:] for g in gen]
                spans = np.array([read_span(method, vocab, g, float(videos.duration[v]), n_t)
                                  for g, v in zip(gen, q.video)])                 # (Q, 2) normalised
                loc = data.localisation(data.iou(spans[:, 0], spans[:, 1], ans.start, ans.end))
                if task == "after":
                    out["after_miou"] = loc.miou
                elif argmax:
                    out["miou_argmax"] = loc.miou
                elif prefix:
                    out["zs_miou"] = loc.miou
                else:
                    out.update(miou=loc.miou, r05=loc.r05, r07=loc.r07)
                    shown = tuple(np.nan_to_num(spans[:SHOWN, i], nan=-1.0).tolist() for i in (0, 1))
    return Scores(out, *shown)


class Trained(NamedTuple):
    """What a stage keeps of a trained model: its scores, a subsampled loss curve, the output table."""

    scores: Scores
    loss: list[float]
    E_out: np.ndarray | None      # (N_t, h) after training, for C2's cosine diagnostics
    E_out_init: np.ndarray | None  # (N_t, h) at initialisation: E_out - E_out_init is what training moved (C2b)


def train_and_score(method: str, split: Split, vocab: Vocab, n_t: int, config: Config, seed: int, tag: str,
                    device: str, init: str = "") -> Trained:
    """Train ``method`` on ``split.train`` and score it (one checkpointed stage of the seed). ``init`` names the
    initial weights' stream (``init, tag, init``; default ``method``): C2's pair both take tpm's, so that
    propagation is the only difference between its arms."""
    model = make_model(method, vocab.size, split.train.frames.shape[2], n_t, config,
                       streams.torch_generator(seed, "init", tag, init or method)).to(device)
    enc = encode_queries(method, vocab, split.train, split.train_q, n_t)
    enc = Encoded(*(t.to(device) for t in enc))
    frames = torch.from_numpy(split.train.frames[split.train_q.video]).to(device)   # one row per query
    start = model.tpm.E_out.detach().cpu().numpy().copy() if model.tpm is not None else None   # (N_t, h)
    losses = fit(model, frames, enc, config.steps, config.batch, config.lr, config.weight_decay,
                 streams.torch_generator(seed, "batches", tag))          # the same batches for every method
    scores = score(model, method, vocab, split, n_t, device)
    table = model.tpm.E_out.detach().cpu().numpy() if model.tpm is not None else None
    every = max(1, len(losses) // 30)
    return Trained(scores, [float(np.mean(losses[i:i + every])) for i in range(0, len(losses), every)], table, start)


def run(config: Config, seed: int, ctx: RunContext | None = None) -> SeedResult:
    """One seed: every method at both grids, the held-out-token study, the real features (module docstring)."""
    ctx = ctx or RunContext.local(config.device)
    metrics: dict[str, float] = {}
    curves: dict[str, list[float]] = {}
    with ctx.threads(config.threads):
        protos = data.prototypes(streams.rng(seed, "prototypes"), engine(config))
        vocab = Vocab(config.event_types)
        for scale, n_t in (("coarse", config.n_t_coarse), ("fine", config.n_t_fine)):
            split = splits(config, seed, n_t, protos)
            ans = data.answers(split.test, split.tests["when"])
            metrics[f"ceiling_{scale}"] = float(data.quantization_ceiling(ans.start, ans.end, n_t).mean())
            curves[f"true_start_{scale}"] = ans.start[:SHOWN].tolist()
            curves[f"true_end_{scale}"] = ans.end[:SHOWN].tolist()
            for method in config.methods:
                done = ctx.stage(f"{method}-{scale}", train_and_score, method, split, vocab, n_t, config, seed,
                                 scale, ctx.device)
                metrics.update({f"{k}_{method}_{scale}": v for k, v in done.scores.metrics.items()})
                curves[f"pred_start_{method}_{scale}"] = done.scores.pred_start
                curves[f"pred_end_{method}_{scale}"] = done.scores.pred_end
                curves[f"loss_{method}_{scale}"] = done.loss
            if "tpm" in config.methods:            # C1e: what reading between the tokens adds to the argmax token
                metrics[f"interp_gain_{scale}"] = metrics[f"miou_tpm_{scale}"] - metrics[f"miou_argmax_tpm_{scale}"]
            if {"tpm", "bins"} <= set(config.methods):  # C1d
                metrics[f"gap_bins_{scale}"] = metrics[f"miou_tpm_{scale}"] - metrics[f"miou_bins_{scale}"]
        if config.heldout:
            split, held = heldout_split(config, seed, protos)
            for method, name in (("tpm", "ntp"), ("tpm_nontp", "nontp")):
                done = ctx.stage(f"heldout-{method}", train_and_score, method, split, vocab, config.n_t_coarse,
                                 config, seed, "heldout", ctx.device, "tpm")      # paired: the same initial weights
                metrics[f"heldout_miou_{name}"] = done.scores.metrics["miou"]
                rows, table = torch.from_numpy(held), torch.from_numpy(done.E_out)
                metrics[f"heldout_cos_{name}"] = neighbour_cosine(table, rows)
                moved = table - torch.from_numpy(done.E_out_init)                   # C2b: what training moved
                metrics[f"heldout_update_cos_{name}"] = neighbour_cosine(moved, rows)
        if config.feature_dir:
            real = data.real_data(config.feature_dir, config.n_t_fine)
            real_vocab = Vocab(len(real.labels))
            split = Split(real.videos, real.train, real.videos, {"when": real.test}, None)
            for method in config.methods:
                done = ctx.stage(f"real-{method}", train_and_score, method, split, real_vocab, config.n_t_fine,
                                 config, seed, "real", ctx.device)
                metrics.update({f"real_{k}_{method}": v for k, v in done.scores.metrics.items()})
    return SeedResult(seed=seed, metrics=metrics, curves=curves)


def figures(result: RunResult) -> dict:
    """mIoU by method and grid with the quantization ceiling; predicted against true segments (coarse grid);
    C2's held-out-token study."""
    import matplotlib.pyplot as plt

    names = result.metric_names()
    methods = [m for m in METHODS if f"miou_{m}_coarse" in names]
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    x = np.arange(len(methods))
    for off, scale in enumerate(("coarse", "fine")):
        vals = np.array([result.metric(f"miou_{m}_{scale}") for m in methods])   # (methods, seeds)
        bars = ax.bar(x + 0.4 * off, vals.mean(1), 0.38, yerr=vals.std(1), capsize=2, label=f"{scale} grid")
        ax.axhline(result.metric(f"ceiling_{scale}").mean(), color=bars.patches[0].get_facecolor(), ls="--",
                   lw=1, label=f"{scale} quantization ceiling")
    ax.set_xticks(x + 0.2, methods)
    ax.set_ylabel("mIoU ('when' queries)")
    ax.legend(fontsize=7)
    out = {"miou": fig}
    fig2, axes = plt.subplots(1, len(methods), figsize=(3.2 * len(methods), 3.2), squeeze=False)
    ts, te = result.curve("true_start_coarse")[0], result.curve("true_end_coarse")[0]
    for ax2, m in zip(axes[0], methods):
        ax2.scatter(ts, result.curve(f"pred_start_{m}_coarse")[0], s=8, label="start")
        ax2.scatter(te, result.curve(f"pred_end_{m}_coarse")[0], s=8, label="end")
        ax2.plot([0, 1], [0, 1], "k--", lw=0.8)
        ax2.set_title(f"{m}, coarse grid (seed {result.seeds[0].seed})", fontsize=8)
        ax2.set_xlabel("true (fraction of the video)")
    axes[0][0].set_ylabel("predicted (-1: no number)")
    axes[0][0].legend(fontsize=7)
    fig2.tight_layout()
    out["segments"] = fig2
    if {"heldout_miou_ntp", "heldout_update_cos_ntp"} <= set(names):
        fig3, ax3 = plt.subplots(1, 2, figsize=(6, 3))
        for a, key, label in ((ax3[0], "heldout_miou", "mIoU near held-out tokens"),
                              (ax3[1], "heldout_update_cos", "cosine of held-out E_out updates to neighbours'")):
            pair = [result.metric(f"{key}_ntp"), result.metric(f"{key}_nontp")]
            a.bar(["NTP", "no NTP"], [v.mean() for v in pair], yerr=[v.std() for v in pair], capsize=2)
            a.set_title(label, fontsize=8)
        fig3.tight_layout()
        out["heldout"] = fig3
    return out

"""Experiment: the theory checks (exact, no training) and the small trained-model comparisons.

``run(config, seed)`` does, in order:

1. **Construction (Thm 2.3).** For each n in ``theory_ns`` and each scale c, strings of length
   ``L = round(c |D|^(n/2))`` (so the bound ``L^2/|D|^n`` is about ``c^2``) are copied by the
   hand-built transformer; copy error, the bound and the n-gram repeat rate are recorded.
2. **GSSMs (Thm 2.7).** Exact errors, by enumerating all ``|D|^L`` strings, of the prefix-storing
   automaton (meets the bound) and of random transition tables (never beat it).
3. **Copy training.** Each model of ``copy_models`` is trained on copy with lengths in
   ``[train_len_min, train_len_max]``; the learning curve gives the examples needed to reach 95%
   string accuracy; after training, accuracy at ``gen_factors`` times the longest training length.
4. **Lookup training.** The Hard-ALiBi transformer and Mamba on prefix-key and suffix-key lookup.

Every random draw comes from a named stream of ``seed`` (:mod:`icml24.core.streams`): the theory's strings
and tables ("theory"), each model's initialisation ("init", model, task; built inside
``torch.random.fork_rng``, so the global RNG state is left untouched), and per task the training and the
evaluation examples ("train", task; "eval", task), the same for every model of the task: the models'
comparisons are paired.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from icml24.common.nn import n_params
from icml24.core import streams
from icml24.core.context import RunContext
from icml24.core.plots import band
from icml24.core.results import RunResult, SeedResult, StageOut
from icml24.papers.copying import theory as th
from icml24.papers.copying.config import FULL, GSSMS, QUICK, SEEDS, SMOKE, TRANSFORMERS, Config, validate
from icml24.papers.copying.model import LSTMLM, Mamba, Transformer
from icml24.papers.copying.tasks import (
    Task,
    TrainLog,
    TrainSpec,
    eval_batch,
    examples_to_reach,
    greedy_string_accuracy,
    teacher_forced_accuracy,
    train,
)

__all__ = ["Config", "SMOKE", "QUICK", "FULL", "SEEDS", "validate", "TRANSFORMERS", "GSSMS", "build_model",
           "theory_metrics", "Trained", "run", "figures"]


def build_model(kind: str, cfg: Config) -> torch.nn.Module:
    """A model by name: a transformer position scheme (hard_alibi, rope, nope, alibi), mamba or lstm."""
    V = cfg.alphabet + 4
    if kind in TRANSFORMERS:
        return Transformer(V, cfg.d_model, cfg.n_layers, cfg.n_heads, kind, cfg.n_hard)
    if kind == "mamba":
        return Mamba(V, cfg.mamba_d, cfg.mamba_layers, cfg.d_state)
    if kind == "lstm":
        return LSTMLM(V, cfg.d_model, cfg.lstm_hidden, cfg.lstm_layers)
    raise ValueError(f"unknown model {kind!r}")


def theory_metrics(cfg: Config, rng: np.random.Generator) -> StageOut:
    """Steps 1-2 of the run: construction errors vs bound, exact GSSM errors vs bound."""
    D = cfg.theory_alphabet
    cur: dict[str, list[float]] = {"theory_n": [], "theory_L": [], "theory_err": [], "theory_bound": [], "theory_repeat": []}
    for n in cfg.theory_ns:
        for c in cfg.theory_scales:
            L = max(n + 1, int(round(c * D ** (n / 2))))
            s = rng.integers(0, D, size=(cfg.theory_strings, L))
            ok = np.concatenate([th.construction_copy_correct(s[i: i + 32], n, D) for i in range(0, len(s), 32)])
            cur["theory_n"].append(float(n))
            cur["theory_L"].append(float(L))
            cur["theory_err"].append(float(1 - ok.mean()))
            cur["theory_bound"].append(float(th.copy_error_upper_bound(L, n, D)))
            cur["theory_repeat"].append(float(th.has_repeated_ngram(s, n).mean()))
    ratio = [e / b for e, b in zip(cur["theory_err"], cur["theory_bound"])]
    # prefix-storing automata: exact error vs 1 - |S|/D^L over the (L, k) grid
    Dg, store_err, store_bound = cfg.gssm_alphabet, 0.0, 0.0
    for L in range(1, cfg.gssm_max_len + 1):
        strings = th.all_strings(Dg, L)
        for k in range(0, cfg.gssm_max_stored + 1):
            m = th.PrefixStoreGSSM(Dg, k)
            store_err += th.exact_copy_error(m.copy(strings), strings)
            store_bound += float(th.gssm_error_lower_bound(L, m.n_states, Dg))
    margins = []
    for _ in range(cfg.gssm_random):
        S = int(rng.integers(2, cfg.gssm_max_states + 1))
        L = int(rng.integers(1, cfg.gssm_max_len + 1))
        update = rng.integers(0, S, size=(S, Dg))
        margins.append((1 - th.random_gssm_success(update, L)) - float(th.gssm_error_lower_bound(L, S, Dg)))
    metrics = {
        "construction_worst_ratio": float(max(ratio)),
        "construction_longest_L": float(cur["theory_L"][-1]),
        "construction_longest_err": float(cur["theory_err"][-1]),
        "construction_width": float(max(cfg.theory_ns) * (D + 1)),
        "prefix_store_error_sum": store_err,
        "prefix_store_bound_sum": store_bound,
        "random_gssm_min_margin": float(min(margins)),
    }
    return StageOut(metrics, cur)


class Trained(NamedTuple):
    """One trained model's outcome (what the rest of the seed reads; the model itself is not kept)."""

    params: int  # trainable parameters
    log: TrainLog  # learning curve
    accs: dict  # eval length -> (teacher-forced Accuracy, greedy string accuracy)


def _train_one(kind: str, task: Task, lens: tuple[int, int], cfg: Config, seed: int,
               eval_lengths: tuple[int, ...]) -> Trained:
    """Train one model on one task: its initialisation from the stream ("init", kind, task), its training and
    evaluation examples from the task's streams, shared by every model of the task."""
    D = cfg.alphabet
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(streams.int_seed(seed, "init", kind, task))
        model = build_model(kind, cfg).to(cfg.device)
    rng, eval_rng = streams.rng(seed, "train", task), streams.rng(seed, "eval", task)
    in_dist = [eval_batch(task, cfg.eval_examples, L, D, eval_rng, cfg.lookup_ngram, cfg.lookup_answer)[0]
               for L in sorted({lens[0], (lens[0] + lens[1]) // 2, lens[1]})]
    copy = task == "copy"   # copy and lookup have budgets of their own
    spec = TrainSpec(steps=cfg.steps if copy else cfg.lookup_steps, batch=cfg.batch if copy else cfg.lookup_batch,
                     context=cfg.context, len_range=lens, lr=cfg.lr if copy else cfg.lookup_lr,
                     weight_decay=cfg.weight_decay, warmup=cfg.warmup if copy else cfg.lookup_warmup,
                     eval_every=cfg.eval_every)
    log = train(model, task, spec, D, rng, in_dist, n_gram=cfg.lookup_ngram, answer_len=cfg.lookup_answer)
    model.eval()
    accs = {}
    for L in eval_lengths:
        b, start = eval_batch(task, cfg.eval_examples, L, D, eval_rng, cfg.lookup_ngram, cfg.lookup_answer)
        accs[L] = (teacher_forced_accuracy(model, b), greedy_string_accuracy(model, b, start))
    return Trained(n_params(model), log, accs)


def run(config: Config, seed: int, ctx: RunContext | None = None) -> SeedResult:
    """One seed: theory checks, copy training of every model, lookup training (see module doc).

    Every trained model is one checkpointed stage of ``ctx``."""
    cfg = config
    ctx = ctx or RunContext.local(cfg.device)
    with ctx.threads(cfg.threads):
        metrics, curves = theory_metrics(cfg, streams.rng(seed, "theory"))
        lens = (cfg.train_len_min, cfg.train_len_max)
        gen_L = tuple(f * cfg.train_len_max for f in cfg.gen_factors)
        for kind in cfg.copy_models:
            params, log, accs = ctx.stage(f"copy_{kind}", _train_one, kind, "copy", lens, cfg, seed, gen_L)
            reached_at, reached = examples_to_reach(log, 0.95)
            metrics[f"{kind}_params"] = float(params)
            metrics[f"{kind}_log10_examples_to_95"] = float(np.log10(reached_at))
            metrics[f"{kind}_reached_95"] = float(reached)
            metrics[f"{kind}_final_acc"] = log.string_acc[-1]
            for f, L in zip(cfg.gen_factors, gen_L):
                metrics[f"{kind}_acc_x{f}"] = accs[L][0].string
                metrics[f"{kind}_char_acc_x{f}"] = accs[L][0].char
                metrics[f"{kind}_greedy_acc_x{f}"] = accs[L][1]
            curves[f"{kind}_curve_examples"] = log.examples
            curves[f"{kind}_curve_acc"] = log.string_acc
        tfs = [k for k in cfg.copy_models if k in TRANSFORMERS]
        if tfs:
            metrics["transformer_log10_examples_to_95"] = min(metrics[f"{k}_log10_examples_to_95"] for k in tfs)
        fmax = max(cfg.gen_factors)
        others = [k for k in cfg.copy_models if k != "hard_alibi"]
        if "hard_alibi" in cfg.copy_models and others:
            metrics["others_best_acc_xmax"] = max(metrics[f"{k}_acc_x{fmax}"] for k in others)
            metrics["hard_alibi_acc_xmax"] = metrics[f"hard_alibi_acc_x{fmax}"]
        llens = (cfg.lookup_len_min, cfg.lookup_len_max)
        for pair in cfg.lookup_runs:
            kind, task = pair.split(":")
            _, log, accs = ctx.stage(f"lookup_{kind}_{task}", _train_one, kind, task, llens, cfg, seed,
                                     (cfg.lookup_len_max,))
            acc, greedy = accs[cfg.lookup_len_max]
            metrics[f"{kind}_{task}_acc"] = acc.string
            metrics[f"{kind}_{task}_greedy_acc"] = greedy
            curves[f"{kind}_{task}_curve_acc"] = log.string_acc
    return SeedResult(seed=seed, metrics=metrics, curves=curves)


def figures(result: RunResult) -> dict:
    """Construction error vs bound; copy learning curves; length generalization; lookup accuracies."""
    import matplotlib.pyplot as plt

    out = {}
    fig, ax = plt.subplots(figsize=(5.2, 3.8))
    ns, Ls = result.curve("theory_n")[0], result.curve("theory_L")[0]
    err, bound, rep = result.curve("theory_err"), result.curve("theory_bound")[0], result.curve("theory_repeat")
    for n in np.unique(ns):
        sel = ns == n
        lengths = ", ".join(str(int(v)) for v in Ls[sel])
        line, = ax.plot(bound[sel], err.mean(0)[sel], "o-", label=f"copy error, n={int(n)} (L={lengths})")
        ax.plot(bound[sel], rep.mean(0)[sel], "x:", color=line.get_color())
    ax.plot([0, 1], [0, 1], "k--", lw=1, label="error = bound")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("bound L^2 / |D|^n")
    ax.set_ylabel("measured copy error (x: n-gram repeat rate)")
    ax.set_title("hand-built 2-layer transformer, |D| = 26")
    ax.legend(fontsize=7)
    out["construction_error"] = fig

    kinds = [k for k in (*TRANSFORMERS, *GSSMS) if f"{k}_curve_acc" in result.curve_names()]
    if kinds:
        fig, ax = plt.subplots(figsize=(5.2, 3.8))
        for k in kinds:
            band(ax, result.curve(f"{k}_curve_examples").mean(0), result.curve(f"{k}_curve_acc"), label=k,
                 alpha=0.15, marker=".")
        ax.axhline(0.95, color="k", lw=0.8, ls=":")
        ax.set_xscale("log")
        ax.set_xlabel("training examples seen")
        ax.set_ylabel("string accuracy (teacher forced)")
        ax.set_title("copy: sample efficiency")
        ax.legend(fontsize=8)
        out["copy_learning_curves"] = fig

        factors = sorted({int(m.split("_x")[-1]) for m in result.metric_names()
                          if m.startswith(f"{kinds[0]}_acc_x") and m.split("_x")[-1].isdigit()})
        fig, (ax, ax2) = plt.subplots(1, 2, figsize=(9, 3.8))
        for k in kinds:
            tf = [result.metric(f"{k}_acc_x{f}").mean() for f in factors]
            gr = [result.metric(f"{k}_greedy_acc_x{f}").mean() for f in factors]
            ch = [result.metric(f"{k}_char_acc_x{f}").mean() for f in factors]
            line, = ax.plot(factors, tf, "o-", label=f"{k} (teacher forced)")
            ax.plot(factors, gr, "x--", color=line.get_color(), label=f"{k} (greedy)")
            ax2.plot(factors, ch, "o-", color=line.get_color(), label=k)
        ax.set_xlabel("string length / longest training length")
        ax.set_ylabel("string accuracy")
        ax.set_title("copy: length generalization (strings)")
        ax.legend(fontsize=7)
        ax2.set_xlabel("string length / longest training length")
        ax2.set_ylabel("character accuracy (teacher forced)")
        ax2.set_title("characters")
        ax2.legend(fontsize=7)
        fig.tight_layout()
        out["length_generalization"] = fig

    names = sorted(m for m in result.metric_names() if m.endswith(("_prefix_acc", "_suffix_acc")))
    if names:
        fig, ax = plt.subplots(figsize=(5.2, 3.6))
        vals = [result.metric(n) for n in names]
        ax.bar(range(len(names)), [v.mean() for v in vals], yerr=[v.std() for v in vals],
               color=["C0" if n.startswith("hard_alibi") else "C1" for n in names])
        ax.set_xticks(range(len(names)), [n.replace("_acc", "").replace("_", " ") for n in names], fontsize=8)
        ax.set_ylabel("string accuracy (teacher forced)")
        ax.set_title("n-gram lookup (prefix: key before string)")
        out["lookup"] = fig
    return out

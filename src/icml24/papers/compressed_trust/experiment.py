"""Experiment of compressed_trust: ``run(config, seed)`` and the figures.

Per seed (one checkpointed stage):

1. SmolLM2-135M-Instruct (or the model at ``llm_path``). The Rotten Tomatoes quotes are split in two: the
   even-indexed ones give ``calibration`` quotes (at most ``calib_tokens`` tokens each), whose input
   statistics of every decoder Linear drive the compression (layers.py), and ``error_quotes`` other
   quotes, whose statistics score the errors; the odd-indexed ones are the probes' pool.
2. Reconstruction errors (C1): each of ``error_methods`` applied to the seven projections of each of
   ``error_layers``; per method, the mean over those layers of log10 of the relative output error
   ``tr(D H D^T) / tr(W H W^T)`` with H from the held-out quotes (not the calibration ones), ``err_<method>``.
3. Trust (C2, C3): the dense model and each of ``methods`` (compressed from the dense weights, restored
   after), each evaluated in ``eval_dtype`` on the same probes (trust.py): per dimension the score
   ``trust_<dim>_<model>`` for each of ``dimensions`` and the content-free baseline ``habit_<dim>_<model>``,
   the fairness control ``fair_control_<model>`` (when fairness is scored), the benign four-shot AUC
   ``benign_<model>`` and the perplexity ``ppl_<model>``;
   per compressed model the mean drop from dense over :data:`trust.CLAIM_DIMENSIONS` (``drop_<m>``), the
   drop of the benign AUC (``benign_drop_<m>``), the perplexity ratio to dense (``ppl_ratio_<m>``) and the
   number of claim dimensions that drop by more than ``margin`` (``n_degraded_<m>``).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import torch

from icml24.common import llm
from icml24.core import streams
from icml24.core.context import RunContext
from icml24.core.results import RunResult, SeedResult
from icml24.papers.compressed_trust import trust
from icml24.papers.compressed_trust.compress import relative_error
from icml24.papers.compressed_trust.config import FULL, QUICK, SEEDS, SMOKE, Config, validate
from icml24.papers.compressed_trust.layers import (
    Method,
    calibration_stats,
    compress_model,
    compress_weight,
    decoder_linears,
    inverse_factors,
)

__all__ = ["Config", "SMOKE", "QUICK", "FULL", "SEEDS", "validate", "run", "figures", "method", "seed_stage"]


def method(name: str, group: int, awq_grid: int = 20) -> Method:
    """The :class:`Method` of a setting name of ``config.METHODS`` (e.g. ``gptq4``, ``wanda24``, ``sparsegpt50``).

    >>> method("gptq3", 64)
    Method(name='gptq3', op='gptq', bits=3, group=64, sparsity=0.0, nm=None, grid=20)
    >>> method("wanda24", 64).nm
    (2, 4)
    """
    for op in ("magnitude", "wanda", "sparsegpt"):
        if name.startswith(op):
            return Method(name, op, sparsity=0.5, nm=(2, 4) if name.endswith("24") else None)
    op, bits = name[:-1], int(name[-1])
    return Method(name, op, bits=bits, group=group, grid=awq_grid)


def load(config: Config, ctx: RunContext) -> llm.LM:
    """SmolLM2 from its wheel (converted once into the artefact cache), or the model at ``llm_path``."""
    return llm.load_lm(Path(config.llm_path), ctx.device) if config.llm_path else llm.smollm2(ctx)


def cast(model: Any, dtype: torch.dtype) -> None:
    """The model's parameters to ``dtype`` in place; buffers (RoPE's inverse frequencies) stay float32, and a
    model loaded from a GGUF file (whose loader marks it quantised and refuses ``.to(dtype)``) is cast too."""
    for p in model.parameters():
        p.data = p.data.to(dtype)


def layer_errors(model: Any, stats: dict, held_out: dict, config: Config) -> dict[str, float]:
    """``err_<method>`` (module docstring, 2): compressed with ``stats``, scored on ``held_out``; the weights of
    the model are not changed."""
    chosen = {n: lin for n, lin in decoder_linears(model).items() if int(n.split(".")[2]) in config.error_layers}
    out = {}
    for name in config.error_methods:
        m = method(name, config.group, config.awq_grid)
        logs = []
        for n, lin in chosen.items():
            W = lin.weight.detach().float().cpu()
            logs.append(np.log10(max(relative_error(W, compress_weight(W, stats[n], m), held_out[n].H), 1e-300)))
        out[f"err_{name}"] = float(np.mean(logs))
    return out


def seed_stage(config: Config, seed: int, ctx: RunContext) -> dict[str, float]:
    """Every metric of one seed (module docstring): the calibration and error quotes from the seed's stream
    "calibration", the probes from "probes"."""
    calib_rng, probe_rng = streams.rng(seed, "calibration"), streams.rng(seed, "probes")
    lm: Any = load(config, ctx)
    tok = lm.tokenizer
    pad = llm.pad_id(tok)
    pool = trust.snippets()
    calib_pool, probe_pool = pool[0::2], pool[1::2]
    picks = calib_rng.choice(len(calib_pool), config.calibration + config.error_quotes, replace=False)
    quotes = [tok.encode(calib_pool[i].text, add_special_tokens=False)[:config.calib_tokens] for i in picks]
    stats = calibration_stats(lm.model, quotes[:config.calibration], pad, config.batch)
    held_out = calibration_stats(lm.model, quotes[config.calibration:], pad, config.batch, config.error_layers)
    metrics = ctx.stage("errors", layer_errors, lm.model, stats, held_out, config)
    probes = trust.probes(probe_rng, config.probes, probe_pool, tok)
    dense = copy.deepcopy(lm.model.state_dict())

    def evaluate() -> trust.Scores:                 # in eval_dtype; the float32 dense weights restored after
        cast(lm.model, getattr(torch, config.eval_dtype))
        try:
            return trust.evaluate(lm, probes, config.batch, config.dimensions)
        finally:
            cast(lm.model, torch.float32)
            lm.model.load_state_dict(dense)

    def compressed(m: Method) -> trust.Scores:     # the model compressed by m, scored; the dense weights after
        compress_model(lm.model, stats, m, factors, errors=False)
        return evaluate()

    # a stage per model (checkpointed; each reports its time when it runs long)
    scores: dict[str, trust.Scores] = {"dense": ctx.stage("dense", evaluate)}
    chosen = [method(name, config.group, config.awq_grid) for name in config.methods]
    factors = inverse_factors(lm.model, stats) if any(m.op in ("gptq", "sparsegpt") for m in chosen) else None
    for m in chosen:
        scores[m.name] = ctx.stage(m.name, compressed, m)
    for tag, sc in scores.items():
        for dim in sc.trust:
            metrics[f"trust_{dim}_{tag}"] = sc.trust[dim]
            metrics[f"habit_{dim}_{tag}"] = sc.habit[dim]
        if "fairness" in sc.trust:
            metrics[f"fair_control_{tag}"] = sc.fairness_control
        metrics[f"benign_{tag}"] = sc.benign
        metrics[f"ppl_{tag}"] = sc.ppl
    for name in config.methods:
        drops = np.array([metrics[f"trust_{d}_dense"] - metrics[f"trust_{d}_{name}"] for d in trust.CLAIM_DIMENSIONS])
        metrics[f"drop_{name}"] = float(drops.mean())
        metrics[f"n_degraded_{name}"] = float(np.sum(drops > config.margin))
        metrics[f"benign_drop_{name}"] = metrics["benign_dense"] - metrics[f"benign_{name}"]
        metrics[f"ppl_ratio_{name}"] = metrics[f"ppl_{name}"] / metrics["ppl_dense"]
    return metrics


def run(config: Config, seed: int, ctx: RunContext | None = None) -> SeedResult:
    """One seed (module docstring)."""
    ctx = ctx or RunContext.local(config.device)
    with ctx.threads(config.threads):
        torch.manual_seed(streams.int_seed(seed, "torch_global"))     # for any draw without a generator
        metrics = seed_stage(config, seed, ctx)
    return SeedResult(seed=seed, metrics=metrics, curves={})


def figures(result: RunResult) -> dict:
    """Trust dimensions and the benign score per model (bars, mean and std over seeds; chance marked) and the
    reconstruction errors."""
    import matplotlib.pyplot as plt

    names = result.metric_names()
    models = ["dense"] + sorted(n[len("drop_"):] for n in names if n.startswith("drop_"))
    dims = [d for d in trust.DIMENSIONS if f"trust_{d}_dense" in names] + ["benign"]
    fig, ax = plt.subplots(figsize=(9, 3.8))
    width = 0.8 / len(models)
    for j, tag in enumerate(models):
        vals = np.stack([result.metric(f"trust_{d}_{tag}" if d != "benign" else f"benign_{tag}") for d in dims], 1)
        ax.bar(np.arange(len(dims)) + (j - (len(models) - 1) / 2) * width, vals.mean(0), width, yerr=vals.std(0),
               capsize=2, label=tag)
    ax.axhline(0.5, color="k", lw=0.8, ls=":", label="chance (AUC)")
    ax.set_xticks(np.arange(len(dims)), [d.replace("_", " ") for d in dims], fontsize=8)
    ax.set_ylabel("score (AUC; higher = more trustworthy)")
    ax.set_ylim(0, 1.05)
    ax.set_title("trust dimensions and benign score per model (mean, std over seeds)", fontsize=9)
    ax.legend(fontsize=7, ncol=len(models) + 1)
    fig.tight_layout()
    errs = sorted(n[len("err_"):] for n in names if n.startswith("err_"))
    fig2, ax2 = plt.subplots(figsize=(6, 3.4))
    vals = np.stack([result.metric(f"err_{m}") for m in errs], 1)                 # (seeds, methods)
    ax2.bar(range(len(errs)), vals.mean(0), yerr=vals.std(0), capsize=2)
    ax2.set_xticks(range(len(errs)), errs, fontsize=8, rotation=20)
    ax2.set_ylabel("log10 relative output error")
    ax2.set_title("reconstruction error on held-out layer inputs (mean over the measured layers)", fontsize=9)
    fig2.tight_layout()
    return {"trust_dimensions": fig, "reconstruction_error": fig2}

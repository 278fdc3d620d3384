"""CI-GCL (Tan et al., ICML 2024, Sec. 4): learnable community-invariant augmenters, a weighted GIN encoder,
InfoNCE and the spectral losses; and GraphCL's random augmentations (You et al. 2020) as the baseline.

Per graph, precomputed once: the low Laplacian eigenvectors U (n, k) (spectral.py) and, with node
features, the top-k SVD X = U_x S V_x^T of the feature matrix. The augmenters (2-layer MLPs, two
logits, Gumbel-softmax at tau = 1, soft probabilities; the official code's choices):

* edge dropping: per edge (i, j), features [(U_i - U_j)^2 || x_i || x_j]; drop probability p; weight
  w_ij = clamp(1 - p, 1e-6, 1), symmetrised by averaging;
* edge adding: per candidate non-edge (``add_candidates`` random non-edges per graph), the same features;
  probability p; the top ``add_frac`` x |E| candidates per graph are added with weight p;
* feature masking (graphs with features): per entry (i, f), features (U_x,i - V_x,f)^2; keep probability q;
  the 10% of a graph's entries with the lowest q are multiplied by q.

Loss (cooperative: encoder and augmenters minimise it together, one Adam):
    L = InfoNCE(g1, g2; tau = 0.2) + w_topo * L_topo + w_feat * L_feat,
    L_topo = mean_graphs [ -||lambda(A_drop) - lambda(A)||^2 + ||lambda(A_add) - lambda(A)||^2 ]   (low spectra)
    L_feat = -mean_graphs ||sigma_{1..k}(X_mask) - sigma_{1..k}(X)||^2,
with view 1 = the feature-masked graph (the graph itself if featureless) and view 2 = the edge-dropped
and edge-added graph. Graphs with at most 5 nodes contribute 0 to both sums, which are divided by the
batch's number of graphs (the official code's ``/ len(data)``). The node features are the data set's
divided by their column norms over all nodes (the official ``x_norm_part``; data.scale_features), for the
encoder, the augmenters and the feature SVD alike.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from icml24.papers.ci_gcl import spectral

__all__ = ["GIN", "Augmenter", "ChunkedMLP", "Views", "RandomViews", "LossWeights", "info_nce", "Precomputed", "precompute",
           "graphcl_views", "CIGCLLoss", "cigcl_loss"]


class GIN(nn.Module):
    """Weighted GIN (Xu et al. 2019; the official ``WGINConv`` stack) on dense padded graphs:
    h' = BatchNorm(ReLU(MLP(h + W h))) per layer (eps = 0, not trained, as in the official code; BatchNorm
    over the real nodes), sum pooling of every layer, readouts concatenated (hidden * layers); a projection
    head Linear-ELU-Linear of the same width."""

    def __init__(self, in_dim: int, hidden: int, layers: int = 2):
        super().__init__()
        self.convs = nn.ModuleList(nn.Sequential(nn.Linear(in_dim if i == 0 else hidden, hidden), nn.ReLU(),
                                                 nn.Linear(hidden, hidden)) for i in range(layers))
        self.norms = nn.ModuleList(nn.BatchNorm1d(hidden) for _ in range(layers))
        width = hidden * layers
        self.head = nn.Sequential(nn.Linear(width, width), nn.ELU(), nn.Linear(width, width))

    def embed(self, W: torch.Tensor, X: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Graph embeddings (G, hidden * layers): the concatenated sum-pooled layer outputs."""
        h, reads = X, []
        for conv, norm in zip(self.convs, self.norms):
            z = F.relu(conv((h + W @ h)[mask]))                             # (real nodes, hidden)
            h = z.new_zeros(*mask.shape, z.shape[1]).index_put((mask,), norm(z))   # (G, n, hidden); BatchNorm over
            reads.append(h.sum(1))                                                 # the real nodes only
        return torch.cat(reads, -1)

    def forward(self, W: torch.Tensor, X: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed(W, X, mask))


def info_nce(z1: torch.Tensor, z2: torch.Tensor, tau: float = 0.2) -> torch.Tensor:
    """One-directional InfoNCE, anchors z1, positives the same graph's z2, the batch's others negatives.

    >>> z = torch.eye(3); round(float(info_nce(z, z, tau=1.0)), 4) == round(float(-torch.log_softmax(torch.eye(3), 1)[0, 0]), 4)
    True
    """
    s = F.normalize(z1, dim=-1) @ F.normalize(z2, dim=-1).T / tau          # (G, G) cosine / tau
    return F.cross_entropy(s, torch.arange(len(z1)))


class Precomputed(NamedTuple):
    """Per-graph constants of the augmenters and the spectral losses."""

    c: torch.Tensor          # (G,) connected components
    lam: torch.Tensor        # (G, k) low spectrum of the graph
    U: torch.Tensor          # (G, n, k) its eigenvectors
    Ux: torch.Tensor | None  # (G, n, k) left singular vectors of the features (None: featureless)
    Vx: torch.Tensor | None  # (G, f, k) right singular vectors
    S: torch.Tensor | None   # (G, k) top singular values

    def take(self, idx: torch.Tensor) -> "Precomputed":
        """The constants of the graphs ``idx``."""
        return Precomputed(*(None if t is None else t[idx] for t in self))  # type: ignore[arg-type]


def precompute(A: torch.Tensor, X: torch.Tensor, mask: torch.Tensor, k: int, featureless: bool) -> Precomputed:
    c = spectral.components(A, mask)
    lam = spectral.low_spectrum(A, mask, c, k).detach()
    U = spectral.low_eigvecs(A, mask, c, k)
    if featureless:
        return Precomputed(c, lam, U, None, None, None)
    u, s, vh = torch.linalg.svd(X, full_matrices=False)
    kk = min(k, s.shape[1])
    return Precomputed(c, lam, U, u[:, :, :kk], vh[:, :kk, :].transpose(1, 2), s[:, :kk])


class _ChunkedMLPFunction(torch.autograd.Function):
    """y = W2 ReLU(W1 x + b1) + b2 on rows x (N, d), ``chunk`` rows at a time, forward and backward; backward
    recomputes each chunk's hidden activations instead of storing all (N, hidden) of them."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, w1: torch.Tensor, b1: torch.Tensor, w2: torch.Tensor, b2: torch.Tensor,
                chunk: int) -> torch.Tensor:
        out = x.new_empty(x.shape[0], w2.shape[0])                                   # (N, out)
        for s in range(0, x.shape[0], chunk):
            h = torch.addmm(b1, x[s:s + chunk], w1.T).relu_()                        # (chunk, hidden)
            torch.addmm(b2, h, w2.T, out=out[s:s + chunk])
        ctx.save_for_backward(x, w1, b1, w2)
        ctx.chunk = chunk
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        x, w1, b1, w2 = ctx.saved_tensors
        gx = torch.empty_like(x) if ctx.needs_input_grad[0] else None
        gw1_t, gb1, gw2 = x.new_zeros(w1.shape[1], w1.shape[0]), torch.zeros_like(b1), torch.zeros_like(w2)
        for s in range(0, x.shape[0], ctx.chunk):
            xc, gc = x[s:s + ctx.chunk], grad[s:s + ctx.chunk]                       # (chunk, d), (chunk, out)
            h = torch.addmm(b1, xc, w1.T).relu_()                                    # recomputed (chunk, hidden)
            gw2.addmm_(gc.T, h)
            gh = torch.ops.aten.threshold_backward(gc @ w2, h, 0.0)                  # through the ReLU
            gw1_t.addmm_(xc.T, gh)                # (d, hidden): MKL's fast layout for a long inner dimension
            gb1 += gh.sum(0)
            if gx is not None:
                torch.mm(gh, w1, out=gx[s:s + ctx.chunk])
        return gx, gw1_t.T, gb1, gw2, grad.sum(0), None


class ChunkedMLP(nn.Sequential):
    """The augmenters' MLP, Linear-ReLU-Linear (two logits), applied to its input's rows ``chunk`` at a time:
    the same function as ``nn.Sequential``'s forward, with a (chunk, hidden) activation that stays in cache
    where the whole (rows, hidden) one (15,000 x 128 per batch for the feature masking) goes through
    memory at every step (benchmarks/bench_ci_gcl_gin.py). Gradients equal the unchunked ones up to float
    summation order (tests/papers/test_ci_gcl.py)."""

    def __init__(self, n_in: int, hidden: int, n_out: int = 2, chunk: int = 2048):
        super().__init__(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, n_out))
        self.chunk = chunk

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        first, _, last = self
        rows = x.reshape(-1, x.shape[-1])                                            # (N, n_in)
        out = _ChunkedMLPFunction.apply(rows, first.weight, first.bias, last.weight, last.bias, self.chunk)
        return out.reshape(*x.shape[:-1], out.shape[-1])


def _gumbel_prob(logits: torch.Tensor, tau: float = 1.0) -> torch.Tensor:
    """Probability of class 1 under a soft Gumbel-softmax sample (in (0, 1)): ``F.gumbel_softmax(logits, tau,
    hard=False)[..., 1]`` with its draws, as the sigmoid of the two perturbed logits' difference (a softmax over
    two classes, without its (..., 2) output and backward)."""
    noise = -torch.empty_like(logits, memory_format=torch.legacy_contiguous_format).exponential_().log()
    y = (logits + noise) / tau                                               # (..., 2) logits + Gumbel(0, 1) noise
    return torch.sigmoid(y[..., 1] - y[..., 0])


class Views(NamedTuple):
    """The two augmented views and what the spectral losses need."""

    W1: torch.Tensor             # (G, n, n) view 1 structure (the graph itself)
    X1: torch.Tensor             # (G, n, f) view 1 features (masked)
    W2: torch.Tensor             # (G, n, n) view 2 structure (dropped + added)
    W_drop: torch.Tensor         # (G, n, n) dropped only
    W_add: torch.Tensor          # (G, n, n) added only (A + added edges)
    p_drop: torch.Tensor         # (G, n, n) drop probability of every edge (0 off the edges)


class Augmenter(nn.Module):
    """The three learnable augmenters (module docstring)."""

    def __init__(self, k: int, feat_dim: int, hidden: int, add_candidates: int = 20, add_frac: float = 0.1,
                 mask_frac: float = 0.1):
        super().__init__()
        self.drop = ChunkedMLP(k + 2 * feat_dim, hidden)
        self.add = ChunkedMLP(k + 2 * feat_dim, hidden)
        self.mask_net = ChunkedMLP(k, hidden)
        self.add_candidates, self.add_frac, self.mask_frac = add_candidates, add_frac, mask_frac

    @staticmethod
    def pair_features(U: torch.Tensor, X: torch.Tensor, g: torch.Tensor, i: torch.Tensor, j: torch.Tensor
                      ) -> torch.Tensor:
        """[(U_i - U_j)^2 || x_i || x_j] of the pairs (g, i, j), (P, k + 2 f)."""
        return torch.cat([(U[g, i] - U[g, j]) ** 2, X[g, i], X[g, j]], -1)

    def drop_logits(self, A: torch.Tensor, U: torch.Tensor, X: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """The drop MLP's logits on every edge i < j: (g, i, j) indices and logits (E, 2)."""
        g, i, j = torch.nonzero(torch.triu(A, 1), as_tuple=True)
        return g, i, j, self.drop(self.pair_features(U, X, g, i, j))

    def forward(self, A: torch.Tensor, X: torch.Tensor, mask: torch.Tensor, pre: Precomputed,
                generator: torch.Generator) -> Views:
        # edge dropping, on the edges only (symmetric by construction: one probability per edge i < j)
        g, i, j, logits = self.drop_logits(A, pre.U, X)
        p = _gumbel_prob(logits)
        pd = torch.zeros_like(A).index_put((g, i, j), p).index_put((g, j, i), p)       # (G, n, n)
        W_drop = A * (1 - pd).clamp(1e-6, 1)
        # edge adding: random candidate non-edges, the top add_frac |E| by probability, weight = probability
        real = (mask[:, :, None] & mask[:, None, :]).float()
        non = torch.triu(real * (1 - A), 1)
        score = torch.rand(A.shape, generator=generator) * non
        top = torch.topk(score.flatten(1), self.add_candidates, dim=1)                  # (G, candidates)
        ok = top.values > 0
        n = A.shape[1]
        cg = torch.arange(A.shape[0])[:, None].expand_as(top.indices)[ok]
        ci, cj = (top.indices // n)[ok], (top.indices % n)[ok]
        pa = _gumbel_prob(self.add(self.pair_features(pre.U, X, cg, ci, cj)))           # (C,)
        pa_dense = torch.zeros(A.shape[0], self.add_candidates).masked_scatter(ok, pa)   # (G, candidates)
        n_add = (self.add_frac * A.sum((1, 2)) / 2).ceil().long().clamp(min=1, max=self.add_candidates)
        thr = torch.sort(pa_dense, dim=1, descending=True).values.gather(1, (n_add - 1)[:, None])
        keep = (pa_dense >= thr) & ok                                                    # top n_add per graph
        w = (pa_dense * keep)[ok]
        added = torch.zeros_like(A).index_put((cg, ci, cj), w).index_put((cg, cj, ci), w)
        W_add = A + added
        # feature masking
        X1 = X
        if pre.Ux is not None and pre.Vx is not None:
            fpairs = (pre.Ux[:, :, None, :] - pre.Vx[:, None, :, :]) ** 2       # (G, n, f, k)
            # the MLP on the real nodes' entries only (the padded ones' keep probability is 1 below); the Gumbel
            # noise still covers every entry (G, n, f, 2), so the global generator's draws, and which entry each
            # goes to, are those of the padded computation
            logits = fpairs.new_zeros(*fpairs.shape[:3], 2).index_put((mask,), self.mask_net(fpairs[mask]))
            q = _gumbel_prob(logits)                                          # keep probability (G, n, f)
            q = torch.where(mask[:, :, None], q, torch.ones_like(q))
            cut = torch.quantile(q.flatten(1), self.mask_frac, dim=1)[:, None, None]
            X1 = X * torch.where(q <= cut, q, torch.ones_like(q))
        return Views(A, X1, W_drop + added, W_drop, W_add, pd)


class RandomViews(NamedTuple):
    """GraphCL's two random views."""

    W1: torch.Tensor             # (G, n, n) view 1 structure
    X1: torch.Tensor             # (G, n, f) view 1 features
    W2: torch.Tensor             # (G, n, n) view 2 structure
    X2: torch.Tensor             # (G, n, f) view 2 features


def graphcl_views(A: torch.Tensor, X: torch.Tensor, mask: torch.Tensor, frac: float, featureless: bool,
                  generator: torch.Generator) -> RandomViews:
    """GraphCL's random augmentations: view 1 masks ``frac`` of the feature entries (featureless: drops
    ``frac`` of the edges), view 2 drops ``frac`` of the edges."""
    def drop_edges() -> torch.Tensor:
        keep = torch.triu((torch.rand(A.shape, generator=generator) >= frac).float(), 1)
        keep = keep + keep.transpose(1, 2)
        return A * keep

    if featureless:
        return RandomViews(drop_edges(), X, drop_edges(), X)
    keep = (torch.rand(X.shape, generator=generator) >= frac).float()
    return RandomViews(A, X * keep, drop_edges(), X)


class CIGCLLoss(NamedTuple):
    """The parts of one batch's loss."""

    total: torch.Tensor
    contrastive: float
    topo: float
    feat: float


class LossWeights(NamedTuple):
    """The CI-GCL loss's knobs (official defaults)."""

    k: int = 4              # low eigenvalues (and singular values) the spectral losses read
    w_topo: float = 0.8     # weight of the topological spectral loss (0: the augmenter without spectra)
    w_feat: float = 1.0     # weight of the feature spectral loss
    tau: float = 0.2        # InfoNCE temperature


def cigcl_loss(encoder: GIN, aug: Augmenter, A: torch.Tensor, X: torch.Tensor, mask: torch.Tensor, pre: Precomputed,
               weights: LossWeights, generator: torch.Generator) -> CIGCLLoss:
    """The CI-GCL loss of one batch (module docstring); w_topo = w_feat = 0 is the augmenter without spectra."""
    k, w_topo, w_feat, tau = weights
    v = aug(A, X, mask, pre, generator)
    contrastive = info_nce(encoder(v.W1, v.X1, mask), encoder(v.W2, X, mask), tau)
    big = (mask.sum(1) > 5).float()                                         # graphs with more than 5 nodes
    G = A.shape[0]
    topo = torch.zeros(())
    if w_topo:
        lam_drop = spectral.low_spectrum(v.W_drop, mask, pre.c, k)
        lam_add = spectral.low_spectrum(v.W_add, mask, pre.c, k)
        topo = (big * (-((lam_drop - pre.lam) ** 2).sum(1) + ((lam_add - pre.lam) ** 2).sum(1))).sum() / G
    feat = torch.zeros(())
    if w_feat and pre.S is not None:
        s = torch.linalg.svdvals(v.X1)[:, :pre.S.shape[1]]
        feat = -(big * ((s - pre.S) ** 2).sum(1)).sum() / G
    total = contrastive + w_topo * topo + w_feat * feat
    return CIGCLLoss(total, float(contrastive.detach()), float(topo.detach()), float(feat.detach()))

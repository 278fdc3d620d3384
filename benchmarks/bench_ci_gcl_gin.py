"""Benchmark: CI-GCL's dense batched GIN (padded (G, n, n) adjacency, one batched matmul per layer) against the
same encoder in PyG (a weighted ``MessagePassing`` GIN layer, the official code's ``WGINConv``, on a sparse
``torch_geometric`` batch: edge_index, edge_weight, scatter-add, ``global_add_pool``), at QUICK's sizes:

1. the encoder alone: forward + backward of the graph embeddings of 128 graphs;
2. a whole CI-GCL training step (augmenters, two views, InfoNCE, the spectral losses, backward), where
   the PyG encoder reads each augmented view through ``data.sparse_edges`` (the augmenters and the
   batched ``eigvalsh`` need the dense weighted adjacency either way);
3. the augmenters' MLPs (model.ChunkedMLP: 2,048 rows at a time, hidden activations recomputed in backward)
   against the same Linear-ReLU-Linear layers run as the official code runs them (``nn.Sequential``, one
   (rows, 128) activation per MLP, autograd's backward), in a whole CI-GCL training step with the dense
   encoder; the two steps interleaved, the same weights and Gumbel noise (loss checked equal).

In 1-2 both encoders hold the same weights and give the same embeddings and the same loss (checked below).
Run: python benchmarks/bench_ci_gcl_gin.py   (about a minute; one thread)
"""

from __future__ import annotations

import copy

import numpy as np
import torch
from torch import nn

from icml24.core.bench import median_time, median_timing, pin_threads, ratio_row
from icml24.papers.ci_gcl import data
from icml24.papers.ci_gcl.model import GIN, Augmenter, LossWeights, cigcl_loss, precompute


def wgin_conv(mlp: nn.Module):
    """The official code's ``WGINConv`` (eps = 0): h' = MLP(h + sum_j w_ij h_j), by message passing."""
    from torch_geometric.nn import MessagePassing

    class WGINConv(MessagePassing):
        def __init__(self) -> None:
            super().__init__(aggr="add")
            self.nn = mlp

        def forward(self, x, edge_index, edge_weight):
            return self.nn(x + self.propagate(edge_index, x=x, edge_weight=edge_weight))

        def message(self, x_j, edge_weight):
            return x_j * edge_weight.view(-1, 1)

    return WGINConv()


class PygGIN(nn.Module):
    """model.GIN's encoder and head with PyG layers, sharing the dense model's weights; ``forward`` takes the
    dense views (W, X, mask) like model.GIN and converts them."""

    def __init__(self, dense: GIN):
        super().__init__()
        self.convs = nn.ModuleList(wgin_conv(conv) for conv in dense.convs)
        self.norms, self.head = dense.norms, dense.head

    def embed_sparse(self, x, edge_index, edge_weight, batch, n_graphs):
        from torch_geometric.nn import global_add_pool

        reads = []
        for conv, norm in zip(self.convs, self.norms):
            x = norm(torch.relu(conv(x, edge_index, edge_weight)))
            reads.append(global_add_pool(x, batch, size=n_graphs))
        return torch.cat(reads, -1)

    def embed(self, W, X, mask):
        edge_index, edge_weight = data.sparse_edges(W, mask)
        batch = torch.repeat_interleave(torch.arange(W.shape[0]), mask.sum(1))
        return self.embed_sparse(X[mask], edge_index, edge_weight, batch, W.shape[0])

    def forward(self, W, X, mask):
        return self.head(self.embed(W, X, mask))


def cigcl_step(encoder: nn.Module, aug: Augmenter, g: data.Graphs, pre, seed: int = 0):
    def step():
        torch.manual_seed(seed)                                     # the same Gumbel noise for both encoders
        loss = cigcl_loss(encoder, aug, g.A, g.X, g.mask, pre, LossWeights(4, 0.8, 1.0, 0.2),
                          torch.Generator().manual_seed(seed))
        loss.total.backward()
        return float(loss.total.detach())
    return step


if __name__ == "__main__":
    pin_threads(1)
    torch.manual_seed(0)
    sets = {"SBM, 128 graphs of 20-40 nodes": data.sbm_dataset(np.random.default_rng(0), 128, signal=0.5),
            "MUTAG, 128 graphs (<= 28 atoms)": data.mutag_dataset().subset(np.arange(128))}
    print(f"{'what':60s} {'PyG ms':>8s} {'dense ms':>9s} {'dense/PyG':>10s}")
    for name, g in sets.items():
        g = data.scale_features(g)
        pre = precompute(g.A, g.X, g.mask, 4, featureless=False)
        for hidden in (64, 256):
            dense = GIN(g.X.shape[2], hidden)
            pyg = PygGIN(dense)
            dense.train(), pyg.train()
            batch = data.to_pyg(g)
            assert torch.allclose(dense.embed(g.A, g.X, g.mask),
                                  pyg.embed_sparse(batch.x, batch.edge_index, batch.edge_weight, batch.batch,
                                                   batch.num_graphs), atol=1e-4)

            def dense_enc():
                dense.embed(g.A, g.X, g.mask).square().sum().backward()

            def pyg_enc():
                pyg.embed_sparse(batch.x, batch.edge_index, batch.edge_weight, batch.batch,
                                 batch.num_graphs).square().sum().backward()

            t_pyg, t_dense = median_time(pyg_enc, repeats=7), median_time(dense_enc, repeats=7)
            what = f"GIN embeddings fwd+bwd, hidden {hidden}, {name}"
            print(f"{what:60s} {t_pyg * 1e3:8.1f} {t_dense * 1e3:9.1f} {t_dense / t_pyg:10.2f}")
            ratio_row(what, "torch_geometric weighted GIN (WGINConv, sparse)", t_dense, t_pyg, "yes (atol 1e-4)")

            aug = Augmenter(4, g.X.shape[2], 128)
            step_dense, step_pyg = cigcl_step(dense, aug, g, pre), cigcl_step(pyg, aug, g, pre)
            assert abs(step_dense() - step_pyg()) < 1e-3
            t_pyg, t_dense = median_time(step_pyg, repeats=5), median_time(step_dense, repeats=5)
            what = f"CI-GCL training step, hidden {hidden}, {name}"
            print(f"{what:60s} {t_pyg * 1e3:8.1f} {t_dense * 1e3:9.1f} {t_dense / t_pyg:10.2f}")
            ratio_row(what, "the same step with the torch_geometric encoder", t_dense, t_pyg, "yes (loss atol 1e-3)")

        dense, aug = GIN(g.X.shape[2], 64), Augmenter(4, g.X.shape[2], 128)
        plain = copy.deepcopy(aug)
        plain.drop, plain.add, plain.mask_net = (nn.Sequential(*m) for m in (plain.drop, plain.add, plain.mask_net))
        step_chunked, step_plain = cigcl_step(dense, aug, g, pre), cigcl_step(dense, plain, g, pre)
        assert abs(step_chunked() - step_plain()) < 1e-4
        timings: dict[str, list] = {"chunked": [], "plain": []}
        for _ in range(5):                                          # interleaved: the machine's drift hits both
            timings["chunked"].append(median_time(step_chunked, repeats=3))
            timings["plain"].append(median_time(step_plain, repeats=3))
        t_chunked, t_plain = (median_timing([(float(t), t.cpu) for t in ts]) for ts in timings.values())
        what = f"CI-GCL training step, augmenter MLPs chunked, {name}"
        print(f"{what:60s} {t_plain * 1e3:8.1f} {t_chunked * 1e3:9.1f} {t_chunked / t_plain:10.2f}"
              "   (columns: nn.Sequential ms, chunked ms, chunked / Sequential)")
        ratio_row(what, "the same MLPs as nn.Sequential (the official code's)", t_chunked, t_plain,
                  "yes (loss atol 1e-4)")

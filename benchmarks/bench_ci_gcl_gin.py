"""Benchmark: CI-GCL's dense batched GIN (padded (G, n, n) adjacency, one batched matmul per layer) against
PyG's ``GINConv`` on the same graphs as a sparse ``torch_geometric`` batch (edge_index, scatter-add),
forward + backward of the graph embeddings, on a training batch of SBM graphs and of MUTAG.

Both models hold the same weights and give the same embeddings (checked below). PyG's layer is the
unweighted ``GINConv``: CI-GCL's augmented views need edge weights, which ``GINConv`` does not take (the
official code writes its own ``WGINConv``), so this is a lower bound on PyG's cost.
Run: python benchmarks/bench_ci_gcl_gin.py   (seconds; one thread)
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from icml24.core.bench import median_time, ratio_row
from icml24.papers.ci_gcl import data
from icml24.papers.ci_gcl.model import GIN


class PygGIN(nn.Module):
    """The encoder of model.GIN with ``torch_geometric.nn.GINConv`` layers and ``global_add_pool``."""

    def __init__(self, dense: GIN):
        from torch_geometric.nn import GINConv

        super().__init__()
        self.convs = nn.ModuleList(GINConv(conv, train_eps=True) for conv in dense.convs)
        with torch.no_grad():
            for conv, eps in zip(self.convs, dense.eps):
                conv.eps.fill_(float(eps))
        self.norms = dense.norms

    def embed(self, x: torch.Tensor, edge_index: torch.Tensor, batch: torch.Tensor, n_graphs: int) -> torch.Tensor:
        from torch_geometric.nn import global_add_pool

        reads = []
        for conv, norm in zip(self.convs, self.norms):
            x = torch.relu(norm(conv(x, edge_index)))
            reads.append(global_add_pool(x, batch, size=n_graphs))
        return torch.cat(reads, -1)


def to_pyg(graphs: data.Graphs):
    """The padded graphs as one PyG ``Batch`` (real nodes only)."""
    from torch_geometric.data import Batch, Data

    out = []
    for g in range(graphs.A.shape[0]):
        m = graphs.mask[g]
        a = graphs.A[g][m][:, m]
        out.append(Data(x=graphs.X[g][m], edge_index=torch.nonzero(a).T.contiguous()))
    return Batch.from_data_list(out)


if __name__ == "__main__":
    torch.set_num_threads(1)
    torch.manual_seed(0)
    sets = {"SBM, 128 graphs of 20-40 nodes": data.sbm_dataset(np.random.default_rng(0), 128, signal=0.5),
            "MUTAG, 128 graphs (<= 28 atoms)": data.mutag_dataset().subset(np.arange(128))}
    print(f"{'batch':34s} {'hidden':>6s} {'PyG ms':>8s} {'dense ms':>9s} {'dense/PyG':>10s}")
    for name, g in sets.items():
        batch = to_pyg(g)
        for hidden in (64, 256):
            dense = GIN(g.X.shape[2], hidden)
            pyg = PygGIN(dense)
            dense.train(), pyg.train()
            same = torch.allclose(dense.embed(g.A, g.X, g.mask), pyg.embed(batch.x, batch.edge_index, batch.batch,
                                                                        g.A.shape[0]), atol=1e-4)
            assert same

            def dense_step():
                dense.embed(g.A, g.X, g.mask).square().sum().backward()

            def pyg_step():
                pyg.embed(batch.x, batch.edge_index, batch.batch, g.A.shape[0]).square().sum().backward()

            t_pyg, t_dense = median_time(pyg_step, repeats=7), median_time(dense_step, repeats=7)
            print(f"{name:34s} {hidden:6d} {t_pyg * 1e3:8.1f} {t_dense * 1e3:9.1f} {t_dense / t_pyg:10.2f}")
            ratio_row(f"GIN embeddings fwd+bwd, hidden {hidden}, {name}", "torch_geometric GINConv (sparse)",
                      t_dense, t_pyg, "yes (atol 1e-4)")

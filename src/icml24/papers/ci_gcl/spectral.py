"""Spectra of batches of small graphs, differentiable in the edge weights (Tan et al., ICML 2024, Sec. 3-4).

Graphs are dense and padded: a weighted adjacency W (G, n, n), symmetric, zero off the real nodes, and a
node mask (G, n). The Laplacian is the official code's: self-loops added to the real nodes, then the
symmetric normalisation, L = I - D^{-1/2} (W + I) D^{-1/2} with D the degrees of W + I. Its eigenvalues
lie in [0, 2); padded rows get the diagonal value :data:`PAD` and no off-diagonal entries, so their
eigenvalues sort after every real one. One ``torch.linalg.eigvalsh`` call covers the whole batch; its
gradient V diag(g) V^T is defined even where eigenvalues repeat (no eigenvector gradients are used).

The *low spectrum* of a graph skips its c trivial eigenvalues (c = connected components of the
unperturbed graph, each contributing a 0) and keeps the next k: lambda_{c+1..c+k}.
"""

from __future__ import annotations

import torch

__all__ = ["PAD", "laplacian", "eigvals", "components", "low_spectrum", "low_spectrum_loop", "low_eigvecs"]

PAD = 3.0


def laplacian(W: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Normalised Laplacian with self-loops, (G, n, n); padded diagonal entries are PAD.

    >>> W = torch.tensor([[[0.0, 1.0], [1.0, 0.0]]]); L = laplacian(W, torch.ones(1, 2, dtype=torch.bool))
    >>> L.round(decimals=4).tolist()      # degrees 2: I - (W + I) / 2
    [[[0.5, -0.5], [-0.5, 0.5]]]
    """
    m = mask.to(W.dtype)                                               # (G, n)
    Wt = W + torch.diag_embed(m)
    deg = Wt.sum(-1)
    dinv = torch.where(deg > 0, deg.clamp(min=1e-12).rsqrt(), torch.zeros_like(deg))
    return torch.diag_embed(m + PAD * (1 - m)) - dinv[:, :, None] * Wt * dinv[:, None, :]


def eigvals(W: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """All eigenvalues of :func:`laplacian`, ascending, (G, n) (the padded ones, PAD, last)."""
    return torch.linalg.eigvalsh(laplacian(W, mask))


def components(W: torch.Tensor, mask: torch.Tensor, tol: float = 1e-6) -> torch.Tensor:
    """Connected components per graph: the multiplicity of the eigenvalue 0, (G,) long."""
    with torch.no_grad():
        return (eigvals(W.double(), mask) < tol).sum(-1)


def low_spectrum(W: torch.Tensor, mask: torch.Tensor, c: torch.Tensor, k: int) -> torch.Tensor:
    """lambda_{c+1..c+k} of every graph, (G, k), batched (module docstring); a graph with fewer than c + k
    nodes gets PAD in the places it has no eigenvalue for (the losses leave graphs of <= 5 nodes out)."""
    ev = eigvals(W, mask)                                                  # (G, n)
    idx = c[:, None] + torch.arange(k)[None, :]                            # (G, k) wanted eigenvalue indices
    have = idx < ev.shape[1]                                               # beyond the batch's width: PAD
    return torch.where(have, ev.gather(1, idx.clamp(max=ev.shape[1] - 1)), ev.new_full((), PAD))


def low_spectrum_loop(W: torch.Tensor, mask: torch.Tensor, c: torch.Tensor, k: int) -> torch.Tensor:
    """The same, one unpadded graph at a time (the official code's loop; reference and benchmark)."""
    out = []
    for g in range(W.shape[0]):
        real = mask[g]
        ev = eigvals(W[g][real][:, real][None], real[real][None])[0][int(c[g]):int(c[g]) + k]
        out.append(torch.cat([ev, ev.new_full((k - len(ev),), PAD)]))
    return torch.stack(out)


def low_eigvecs(W: torch.Tensor, mask: torch.Tensor, c: torch.Tensor, k: int) -> torch.Tensor:
    """Eigenvectors of lambda_{c+1..c+k}, (G, n, k), zero on padded nodes and in the columns of a graph with
    fewer than c + k nodes that it has no eigenvalue for (the augmenters' features)."""
    with torch.no_grad():
        _, V = torch.linalg.eigh(laplacian(W, mask))                      # columns ascending
        idx = c[:, None] + torch.arange(k)[None, :]                        # (G, k)
        have = (idx < W.shape[1]) & (idx < mask.sum(1, keepdim=True))     # an eigenvalue of a real node
        U = V.gather(2, idx.clamp(max=W.shape[1] - 1)[:, None, :].expand(-1, W.shape[1], -1))
        return U * mask[:, :, None] * have[:, None, :]

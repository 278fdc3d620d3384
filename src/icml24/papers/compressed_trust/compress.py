"""Layer-wise compression of ``nn.Linear`` weights, each written from its original paper.

Every operator takes a weight W (out, in) and, where it needs data, the calibration statistics of the
layer's inputs X (n tokens, in): ``H = X^T X / n`` and ``mean |X|`` (:class:`CalibStats`). The squared
output error of a changed weight is then ``||(W - W') X^T||^2 / n = tr((W - W') H (W - W')^T)``
(:func:`output_error`), so nothing needs the activations themselves.

Quantisation (asymmetric min-max grid of 2^b levels per output row and group of ``group`` input columns;
``group = 0``: one group per row, i.e. per channel):

* :func:`rtn`: round to nearest.
* :func:`gptq`: Frantar et al. 2023 (Alg. 1): columns quantised in order, each column's error
  ``(w_q - q_q) / [H^-1]_qq`` fed back into the later columns through the upper Cholesky factor of
  ``H^-1`` (dampened by 1% of the mean diagonal), in blocks of 32 columns with lazy batch updates (the
  reference code: 128; the same arithmetic, less memory traffic on a CPU); a group's grid is fitted when
  the group starts, to its columns as they stand then (the reference fits it to the weights as they
  stood at the block's start, without the feedback of the block's earlier columns).
* :func:`awq`: Lin et al. 2024: per input channel scales ``s = mean|X|^a``, the grid search over
  a in {0, 1/20, ..., 19/20} for the a that minimises the output error of ``Q(W diag s) diag(s)^-1``.

Pruning (``sparsity`` of the weights set to 0, unstructured per row, or ``nm = (N, M)``: N zeros in every M
consecutive input weights of a row, e.g. 2:4):

* :func:`magnitude`: the smallest |W| (per layer, unstructured; per group for N:M).
* :func:`wanda`: Sun et al. 2024: the smallest ``|W_ij| ||X_j||_2`` per output row (or group); no update.
* :func:`sparsegpt`: Frantar & Alistarh 2023 (Alg. 1): the mask chosen per block of 32 columns (the
  reference: 128; every M columns for N:M) by ``w^2 / [H^-1]_jj^2``, and the OBS update ``-w_j / [H^-1]_jj H^-1_{j,:}`` of the
  remaining columns after each column.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch
from scipy.linalg import lapack

from icml24.papers.compressed_trust import kernels

BLOCK = 32
DAMP = 0.01


class CalibStats(NamedTuple):
    """Second moment ``H = X^T X / n`` (in, in), float64, ``mean |X|`` (in,), and the token count n."""

    H: torch.Tensor
    mean_abs: torch.Tensor
    n: int


def stats(X: torch.Tensor) -> CalibStats:
    """Calibration statistics of inputs X (n, in)."""
    X = X.double()
    return CalibStats(X.T @ X / len(X), X.abs().mean(0), len(X))


def output_error(W: torch.Tensor, W_new: torch.Tensor, H: torch.Tensor) -> float:
    """Mean squared output error per token ``tr(D H D^T)`` of ``D = W - W_new`` (see the module docstring)."""
    D = (W - W_new).float()
    return float(((D @ H.float()) * D).sum(dtype=torch.float64))


def relative_error(W: torch.Tensor, W_new: torch.Tensor, H: torch.Tensor) -> float:
    """:func:`output_error` divided by the output energy ``tr(W H W^T)`` of the dense layer."""
    return output_error(W, W_new, H) / max(output_error(W, torch.zeros_like(W), H), 1e-300)


# -- quantisation ----------------------------------------------------------------------------------
def grid(w: torch.Tensor, bits: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Min-max asymmetric grid of each row of w (..., rows, cols): scale and zero point (..., rows, 1)."""
    lo = w.amin(-1, keepdim=True).clamp(max=0)
    hi = w.amax(-1, keepdim=True).clamp(min=0)
    scale = ((hi - lo) / (2**bits - 1)).clamp(min=1e-12)
    return scale, torch.round(-lo / scale)


def quantize(w: torch.Tensor, scale: torch.Tensor, zero: torch.Tensor, bits: int) -> torch.Tensor:
    """Round w to its grid and back: ``(clamp(round(w / s) + z, 0, 2^b - 1) - z) s``.

    >>> s, z = grid(torch.tensor([[0.0, 1.0, 3.0]]), 2)     # levels 0, 1, 2, 3
    >>> quantize(torch.tensor([[0.4, 1.6, 3.0]]), s, z, 2).tolist()
    [[0.0, 2.0, 3.0]]
    """
    q = torch.clamp(torch.round(w / scale) + zero, 0, 2**bits - 1)
    return (q - zero) * scale


def _compiled(Wt: torch.Tensor) -> bool:
    """Whether GPTQ and SparseGPT run their column loops as the compiled kernels: CPU tensors (else torch)."""
    return Wt.device.type == "cpu"


def _np(*tensors: torch.Tensor) -> tuple[np.ndarray, ...]:
    """numpy views of contiguous CPU tensors (the kernels write through them)."""
    return tuple(t.numpy() for t in tensors)


def _group(cols: int, group: int) -> int:
    g = cols if group <= 0 else group
    if cols % g:
        raise ValueError(f"group size {group} does not divide the {cols} input columns")
    return g


def rtn(W: torch.Tensor, bits: int, group: int = 0) -> torch.Tensor:
    """Round-to-nearest, per output row and group of ``group`` input columns (0: the whole row); W (..., out, in)."""
    g = _group(W.shape[-1], group)
    Wg = W.reshape(*W.shape[:-1], W.shape[-1] // g, g)          # (..., out, groups, g)
    s, z = grid(Wg, bits)
    return quantize(Wg, s, z, bits).reshape(W.shape)


class InverseFactor(NamedTuple):
    """What GPTQ and SparseGPT read of H: the upper Cholesky factor U of the damped inverse (float32, computed
    in float64) and the dead inputs."""

    U: torch.Tensor        # (..., in, in), U^T U = (H + damp mean(diag H) I)^-1
    dead: torch.Tensor     # (..., in) bool, inputs that never fired


def inverse_factor(H: torch.Tensor, damp: float = DAMP) -> InverseFactor:
    """:class:`InverseFactor` of H (..., in, in): the cubic part of GPTQ and SparseGPT, the same for every
    method compressed from the same statistics (so it can be computed once and passed to each). Dead inputs
    (zero diagonal) get a unit diagonal before the damping.

    With J the reversal of the indices, J H J = L L^T gives H^-1 = (J L^-1 J)^T (J L^-1 J), and J L^-1 J is
    upper triangular with a positive diagonal: U itself. One Cholesky and one triangular inverse (LAPACK
    trtri), a third of the arithmetic of inverting H and factoring the inverse; in float64.
    """
    H = H.double()
    d = torch.diagonal(H, dim1=-2, dim2=-1)
    dead = d == 0
    Hr = H.flip(-2, -1)                                                              # J H J (a copy)
    torch.diagonal(Hr, dim1=-2, dim2=-1).add_(dead.flip(-1).to(H.dtype)).add_(damp * d.mean(-1, keepdim=True))
    A = Hr.cpu().numpy()                      # C order; A[i].T is the same symmetric matrix in Fortran order
    potrf, trtri = lapack.get_lapack_funcs(("potrf", "trtri"), (A,))
    for i in np.ndindex(A.shape[:-2]):        # LAPACK in place on the Fortran view: L, then L^-1 (0 above)
        L, info = potrf(A[i].T, lower=1, overwrite_a=1, clean=1)                     # J H J = L L^T
        L_inv, info_inv = trtri(L, lower=1, overwrite_c=1)
        if info or info_inv:
            raise np.linalg.LinAlgError(f"the damped H is not positive definite (LAPACK info {info}, {info_inv})")
        A[i] = L_inv.T
    U = np.ascontiguousarray(np.swapaxes(A, -1, -2)[..., ::-1, ::-1], dtype=np.float32)   # U = J L^-1 J
    return InverseFactor(torch.from_numpy(U).to(H.device), dead)


def gptq(W: torch.Tensor, H: torch.Tensor, bits: int, group: int = 0, damp: float = DAMP,
         factor: InverseFactor | None = None) -> torch.Tensor:
    """GPTQ (module docstring): W (..., out, in) quantised with the error feedback of Frantar et al. (2023),
    Alg. 1; H (..., in, in), or its ``factor`` if already computed (then H and damp are not read). A leading
    batch dimension compresses several layers of one shape at once. Internally the weights are held
    transposed, (..., in, out), so that a column is contiguous."""
    U, dead = factor if factor is not None else inverse_factor(H, damp)
    Wt = W.float().masked_fill(dead[..., None, :], 0.0).transpose(-1, -2).contiguous()   # (..., in, out)
    cols = Wt.shape[-2]
    g = _group(cols, group)
    Qt = torch.zeros_like(Wt)
    scale = zero = torch.zeros(*Wt.shape[:-2], Wt.shape[-1], dtype=Wt.dtype)
    if _compiled(Wt):       # the same arithmetic as the loop below, a block per compiled call (kernels.py)
        Wl, Ul, Ql = (t.reshape(-1, *t.shape[-2:]) for t in (Wt, U.float().contiguous(), Qt))   # (L, ., .) views
        scale, zero = scale.reshape(len(Wl), -1).clone(), zero.reshape(len(Wl), -1).clone()
        Err = torch.empty(len(Wl), BLOCK, Wt.shape[-1])
        for b0 in range(0, cols, BLOCK):
            b1 = min(b0 + BLOCK, cols)
            kernels.gptq_block(*_np(Wl, Ul, Ql, Err, scale, zero), b0, b1, g, np.float32(2**bits - 1))  # type: ignore[call-arg]
            Wl[:, b1:, :] -= Ul[:, b0:b1, b1:].transpose(-1, -2) @ Err[:, :b1 - b0]   # lazy batch update
        return Qt.transpose(-1, -2).contiguous()
    for b0 in range(0, cols, BLOCK):
        b1 = min(b0 + BLOCK, cols)
        W1, Err = Wt[..., b0:b1, :].clone(), torch.zeros_like(Wt[..., b0:b1, :])
        for j in range(b1 - b0):
            c = b0 + j
            if c % g == 0:     # the group's grid, from its columns as they stand now (this block's feedback applied)
                cur = torch.cat([W1[..., j:, :], Wt[..., b1:c + g, :]], -2)[..., :g, :]
                s_, z_ = grid(cur.transpose(-1, -2), bits)
                scale, zero = s_[..., 0], z_[..., 0]
            w = W1[..., j, :]                                          # (..., out)
            q = quantize(w, scale, zero, bits)
            Qt[..., c, :] = q
            err = (w - q) / U[..., c, c, None]                         # Alg. 1: E = (W - Q) / [H^-1]_qq
            # feedback into the block's later columns: W1[j:] -= U[c, j:] err^T
            W1[..., j:, :].sub_(U[..., c, c:b1, None] * err[..., None, :])
            Err[..., j, :] = err
        Wt[..., b1:, :] -= U[..., b0:b1, b1:].transpose(-1, -2) @ Err   # lazy batch update of the later blocks
    return Qt.transpose(-1, -2).contiguous()


def awq(W: torch.Tensor, st: CalibStats, bits: int, group: int = 0, points: int = 20) -> torch.Tensor:
    """AWQ (module docstring): ``Q(W diag s) diag(s)^-1`` with ``s = mean|X|^a`` at each layer's best a of the
    grid; W (..., out, in) with ``st.H`` (..., in, in) and ``st.mean_abs`` (..., in)."""
    H = st.H.float()

    def err(Wq: torch.Tensor) -> torch.Tensor:                    # (...,) output error of each layer
        D = W - Wq
        return ((D @ H) * D).sum((-2, -1), dtype=torch.float64)

    best = rtn(W, bits, group)
    best_err = err(best)
    m = st.mean_abs.float().clamp(min=1e-8)
    for k in range(1, points):
        s = m ** (k / points)
        s = s / torch.sqrt(s.amax(-1, keepdim=True) * s.amin(-1, keepdim=True))   # scale-free (official code)
        Wq = rtn(W * s[..., None, :], bits, group) / s[..., None, :]
        e = err(Wq)
        better = e < best_err
        best = torch.where(better[..., None, None], Wq, best)
        best_err = torch.minimum(e, best_err)
    return best


# -- pruning ---------------------------------------------------------------------------------------
def _mask_from_scores(score: torch.Tensor, sparsity: float, nm: tuple[int, int] | None, per_row: bool) -> torch.Tensor:
    """Bool mask (True = pruned) of the lowest scores of score (..., rows, cols): N of every M (nm), per row,
    or over the whole matrix."""
    if nm is not None:
        n, m = nm
        grouped = score.reshape(*score.shape[:-1], score.shape[-1] // m, m)
        idx = torch.argsort(grouped, dim=-1, stable=True)[..., :n]
        return torch.zeros_like(grouped, dtype=torch.bool).scatter_(-1, idx, True).reshape(score.shape)
    if per_row:
        k = int(score.shape[-1] * sparsity)
        idx = torch.argsort(score, dim=-1, stable=True)[..., :k]
        return torch.zeros_like(score, dtype=torch.bool).scatter_(-1, idx, True)
    flat = score.reshape(*score.shape[:-2], -1)
    k = int(flat.shape[-1] * sparsity)
    idx = torch.argsort(flat, dim=-1, stable=True)[..., :k]
    return torch.zeros_like(flat, dtype=torch.bool).scatter_(-1, idx, True).reshape(score.shape)


def magnitude(W: torch.Tensor, sparsity: float = 0.5, nm: tuple[int, int] | None = None) -> torch.Tensor:
    """Magnitude pruning: zero the smallest |W| (over the layer; per group of M for N:M)."""
    return W.masked_fill(_mask_from_scores(W.abs(), sparsity, nm, per_row=False), 0.0)


def wanda(W: torch.Tensor, st: CalibStats, sparsity: float = 0.5, nm: tuple[int, int] | None = None) -> torch.Tensor:
    """Wanda: zero the smallest ``|W_ij| ||X_j||_2`` per output row (or per group of M); weights not updated."""
    norms = torch.sqrt(torch.diagonal(st.H, dim1=-2, dim2=-1) * st.n).float()   # ||X_j||_2 over the tokens
    return W.masked_fill(_mask_from_scores(W.abs() * norms[..., None, :], sparsity, nm, per_row=True), 0.0)


def sparsegpt(W: torch.Tensor, H: torch.Tensor, sparsity: float = 0.5, nm: tuple[int, int] | None = None,
              damp: float = DAMP, factor: InverseFactor | None = None) -> torch.Tensor:
    """SparseGPT (module docstring): adaptive mask selection and OBS updates, Frantar & Alistarh (2023), Alg. 1;
    W (..., out, in), H (..., in, in) or its ``factor``, as in :func:`gptq`. Held transposed internally."""
    if nm is not None and not (0 < nm[0] <= nm[1] and BLOCK % nm[1] == 0 and W.shape[-1] % nm[1] == 0):
        raise ValueError(f"N:M = {nm[0]}:{nm[1]}: M must divide the block ({BLOCK}) and the {W.shape[-1]} input "
                         f"columns, and 0 < N <= M")
    U, dead = factor if factor is not None else inverse_factor(H, damp)
    Wt = W.float().masked_fill(dead[..., None, :], 0.0).transpose(-1, -2).contiguous()   # (..., in, out)
    cols = Wt.shape[-2]
    if _compiled(Wt):       # the same arithmetic as the loop below, a block per compiled call (kernels.py)
        Wl, Ul = (t.reshape(-1, *t.shape[-2:]) for t in (Wt, U.float().contiguous()))     # (L, ., .) views
        Err = torch.empty(len(Wl), BLOCK, Wt.shape[-1])
        block_mask = np.zeros((len(Wl), BLOCK, Wt.shape[-1]), np.uint8)
        for b0 in range(0, cols, BLOCK):
            b1 = min(b0 + BLOCK, cols)
            if nm is None:                               # unstructured: the block's mask at once, over its weights
                d = torch.diagonal(Ul, dim1=-2, dim2=-1)[:, b0:b1, None]
                score = (Wl[:, b0:b1] ** 2 / d**2).transpose(-1, -2)
                block_mask[:, :b1 - b0] = _mask_from_scores(score, sparsity, None, per_row=False).transpose(-1, -2).numpy()
            kernels.sparsegpt_block(*_np(Wl, Ul, Err), block_mask, b0, b1, *(nm or (0, 0)))  # type: ignore[call-arg]
            Wl[:, b1:, :] -= Ul[:, b0:b1, b1:].transpose(-1, -2) @ Err[:, :b1 - b0]   # lazy batch update
        return Wt.transpose(-1, -2).contiguous()
    for b0 in range(0, cols, BLOCK):
        b1 = min(b0 + BLOCK, cols)
        W1, Err = Wt[..., b0:b1, :].clone(), torch.zeros_like(Wt[..., b0:b1, :])
        d = torch.diagonal(U, dim1=-2, dim2=-1)[..., b0:b1, None]                  # (..., block, 1)
        mask = None
        if nm is None:                                   # unstructured: the block's mask at once, over its weights
            mask = _mask_from_scores((W1**2 / d**2).transpose(-1, -2), sparsity, None, per_row=False).transpose(-1, -2)
        mask_m = torch.zeros(0, dtype=torch.bool)
        for j in range(b1 - b0):
            c = b0 + j
            if nm is not None and j % nm[1] == 0:               # N:M: choose the mask of the next M columns now
                score = (W1[..., j:j + nm[1], :] ** 2 / d[..., j:j + nm[1], :] ** 2).transpose(-1, -2)
                mask_m = _mask_from_scores(score, sparsity, nm, per_row=True).transpose(-1, -2)   # (..., M, out)
            pruned = mask[..., j, :] if mask is not None else mask_m[..., j % nm[1], :]  # type: ignore[index]
            w = W1[..., j, :]
            q = torch.where(pruned, torch.zeros_like(w), w)
            err = (w - q) / U[..., c, c, None]
            W1[..., j:, :].sub_(U[..., c, c:b1, None] * err[..., None, :])        # OBS update of the later columns
            W1[..., j, :] = q
            Err[..., j, :] = err
        Wt[..., b0:b1, :] = W1
        Wt[..., b1:, :] -= U[..., b0:b1, b1:].transpose(-1, -2) @ Err
    return Wt.transpose(-1, -2).contiguous()

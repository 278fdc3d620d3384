"""Compiled CPU loops (numba) of the column-by-column parts of GPTQ and SparseGPT (:mod:`.compress`).

Inside a block of columns both algorithms walk the columns in order, each step a few operations on one
(out,) row of the transposed weights: as torch calls, the per-call overhead is most of a layer's time. Here a
block is one compiled loop; the lazy batch update of the later blocks (a GEMM) stays in torch. Every
operation is the float32 operation of the torch formulation in the same order (no fused multiply-add, no
reassociation), so both give the same bits (tested).

Arrays: ``Wt`` (L, in, out) transposed weights of L layers, updated in place; ``U`` (L, in, in) the upper
Cholesky factor of the damped ``H^-1``; ``Err`` (L, block, out) the block's scaled errors
``(w_c - q_c) / U_cc`` (Alg. 1 of both papers).
"""

from __future__ import annotations

import numba
import numpy as np

_TINY = np.float32(1e-12)
_ZERO = np.float32(0.0)


@numba.njit(cache=True)
def gptq_block(Wt, U, Qt, Err, scale, zero, b0, b1, g, levels):
    """GPTQ's columns b0..b1-1: fills Qt[:, c] (the quantised column) and Err, and feeds each column's error
    into the block's later columns of Wt; a group's grid (``scale``, ``zero``, (L, out)) is fitted when the
    group starts, to its columns as they stand then. ``levels`` = 2^bits - 1 (float32)."""
    L, _, out = Wt.shape
    for l in range(L):
        for j in range(b1 - b0):
            c = b0 + j
            if c % g == 0:                                   # min-max grid of columns c..c+g-1 (compress.grid)
                for o in range(out):
                    lo = Wt[l, c, o]
                    hi = lo
                    for r in range(c + 1, c + g):
                        w = Wt[l, r, o]
                        lo = min(lo, w)
                        hi = max(hi, w)
                    lo = min(lo, _ZERO)
                    hi = max(hi, _ZERO)
                    s = max((hi - lo) / levels, _TINY)
                    scale[l, o] = s
                    zero[l, o] = np.rint(-lo / s)
            d = U[l, c, c]
            for o in range(out):                             # compress.quantize, then E = (W - Q) / [H^-1]_cc
                w = Wt[l, c, o]
                s = scale[l, o]
                z = zero[l, o]
                q = min(max(np.rint(w / s) + z, _ZERO), levels)
                q = (q - z) * s
                Qt[l, c, o] = q
                Err[l, j, o] = (w - q) / d
            for k in range(c + 1, b1):                       # W[k] -= U[c, k] E[c] (the block's later columns)
                u = U[l, c, k]
                for o in range(out):
                    Wt[l, k, o] = Wt[l, k, o] - u * Err[l, j, o]


@numba.njit(cache=True)
def sparsegpt_block(Wt, U, Err, mask, b0, b1, n, m):
    """SparseGPT's columns b0..b1-1: zeroes the pruned weights of each column, fills Err and applies the OBS
    update to the block's later columns of Wt. ``mask`` (L, block, out) uint8 is the block's mask (1 =
    pruned) when ``m == 0``; with N:M (``m > 0``) the mask of every M columns is chosen here when they start,
    by ``w^2 / U_cc^2`` of the columns as they stand then: the n smallest of each output's M weights (a stable
    order, ties to the earlier column, as ``torch.argsort(stable=True)``)."""
    L, _, out = Wt.shape
    order = np.empty(max(m, 1), np.int64)
    score = np.empty(max(m, 1), Wt.dtype)
    for l in range(L):
        for j in range(b1 - b0):
            c = b0 + j
            if m > 0 and j % m == 0:
                for o in range(out):
                    for i in range(m):
                        d = U[l, c + i, c + i]
                        w = Wt[l, c + i, o]
                        score[i] = w * w / (d * d)
                        order[i] = i
                    for i in range(1, m):                    # stable insertion sort of the M scores
                        k = order[i]
                        p = i - 1
                        while p >= 0 and score[order[p]] > score[k]:
                            order[p + 1] = order[p]
                            p -= 1
                        order[p + 1] = k
                    for i in range(m):
                        mask[l, j + order[i], o] = 1 if i < n else 0
            d = U[l, c, c]
            for o in range(out):
                w = Wt[l, c, o]
                q = _ZERO if mask[l, j, o] else w
                Err[l, j, o] = (w - q) / d
                Wt[l, c, o] = q
            for k in range(c + 1, b1):                       # OBS update of the block's later columns
                u = U[l, c, k]
                for o in range(out):
                    Wt[l, k, o] = Wt[l, k, o] - u * Err[l, j, o]

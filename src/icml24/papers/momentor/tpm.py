"""Momentor's Temporal Perception Module (TPM, the paper's method section) as an ``nn.Module`` for any decoder LM.

A video of duration D has N_t temporal tokens with an input table E_in (N_t, h) and an output table E_out
(N_t, h) appended to the LM's vocabulary and head. A time t becomes the continuous position

    u = clip(t / D, 0, 1) (N_t - 1)                                              (continuous position)

whose input embedding interpolates two rows, (1 - r) E_in[floor(u)] + r E_in[ceil(u)] with r = u - floor(u), and
whose output target puts mass (1 - r) on token floor(u) and r on ceil(u) (cross-entropy over the extended
vocabulary). Frame i (frames = N_t) gets (E_in[i] + E_out[i]) / 2 added as its temporal position. Neighbouring
Token Propagation (NTP) reparametrises both tables as E' = E + R E - stopgrad(R E), R_ij = 2^-|i-j|: the forward
is E, the backward (I + R^T) g, so a token's gradient reaches its neighbours with exponential decay.

The paper gives no decoding rule; :func:`local_expectation` is ours (it recovers u from a fitted soft target).
The official release's loss writes the soft labels through chained indexing of a copy and never sets them (the
notes); this module follows the paper's text. ``continuous=False`` gives the nearest-bin baseline (hard rows,
one-hot targets, argmax decoding) with the same tables and frame encoding.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import nn


def positions(t: torch.Tensor, duration: torch.Tensor, n_tokens: int) -> torch.Tensor:
    """Continuous temporal position u = clip(t / D, 0, 1) (N_t - 1), in token units.

    >>> positions(torch.tensor([0.0, 5.0, 10.0, 12.0]), torch.tensor(10.0), 3)
    tensor([0., 1., 2., 2.])
    """
    return torch.clamp(t / duration, 0.0, 1.0) * (n_tokens - 1)


class Interpolation(NamedTuple):
    """The two rows a continuous position u touches and the weight of the upper one."""

    lower: torch.Tensor   # floor(u), long
    upper: torch.Tensor   # ceil(u), long
    r: torch.Tensor       # u - floor(u) in [0, 1), float


def interpolation(u: torch.Tensor) -> Interpolation:
    """floor(u), ceil(u) and r = u - floor(u) (at an integer u both rows are u and r = 0).

    >>> interpolation(torch.tensor([1.25, 2.0]))
    Interpolation(lower=tensor([1, 2]), upper=tensor([2, 2]), r=tensor([0.2500, 0.0000]))
    """
    lower = torch.floor(u)
    return Interpolation(lower.long(), torch.ceil(u).long(), u - lower)


def nearest(u: torch.Tensor) -> torch.Tensor:
    """The nearest token index floor(u + 1/2) (halves round up, unlike torch.round's half-to-even).

    >>> nearest(torch.tensor([0.5, 1.49, 2.5]))
    tensor([1, 1, 3])
    """
    return torch.floor(u + 0.5).long()


def interpolate(table: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """Input embedding of continuous positions: (1 - r) E[floor(u)] + r E[ceil(u)].

    Args:
        table: (N_t, h) token table.
        u: (...) positions in [0, N_t - 1].

    Returns (..., h).

    >>> E = torch.tensor([[0.0, 0.0], [1.0, 2.0], [3.0, 6.0]])
    >>> interpolate(E, torch.tensor([1.0, 1.5]))
    tensor([[1., 2.],
            [2., 4.]])
    """
    lo, hi, r = interpolation(u)
    r = r.unsqueeze(-1)
    return (1 - r) * table[lo] + r * table[hi]


def soft_target(u: torch.Tensor, n_tokens: int) -> torch.Tensor:
    """The soft target over the temporal tokens: mass 1 - r on floor(u) and r on ceil(u).

    Returns (..., N_t); its expectation sum_k k q_k is u.

    >>> soft_target(torch.tensor([1.25]), 4)
    tensor([[0.0000, 0.7500, 0.2500, 0.0000]])
    """
    lo, hi, r = interpolation(u)
    q = torch.zeros(*u.shape, n_tokens, dtype=u.dtype, device=u.device)
    q.scatter_add_(-1, lo.unsqueeze(-1), (1 - r).unsqueeze(-1))
    q.scatter_add_(-1, hi.unsqueeze(-1), r.unsqueeze(-1))   # at an integer u both writes hit one token: mass 1
    return q


def hard_target(u: torch.Tensor, n_tokens: int) -> torch.Tensor:
    """The nearest-bin baseline's target: one-hot at floor(u + 1/2).

    >>> hard_target(torch.tensor([1.25, 1.5]), 3)
    tensor([[0., 1., 0.],
            [0., 0., 1.]])
    """
    return nn.functional.one_hot(nearest(u), n_tokens).to(u.dtype)


def propagation_matrix(n_tokens: int, decay: float = 0.5, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """R_ij = decay^|i - j| (the paper: decay 1/2), (N_t, N_t); ones on the diagonal.

    >>> propagation_matrix(3)
    tensor([[1.0000, 0.5000, 0.2500],
            [0.5000, 1.0000, 0.5000],
            [0.2500, 0.5000, 1.0000]])
    """
    idx = torch.arange(n_tokens)
    return torch.tensor(decay, dtype=torch.float64).pow((idx[:, None] - idx[None, :]).abs()).to(dtype)


class NeighbourPropagation(torch.autograd.Function):
    """NTP as a custom autograd function: forward returns E exactly, backward (I + R^T) g.

    This is what E + R E - stopgrad(R E) computes, without the forward's rounding error (the two matmul terms
    cancel only to ~1e-7 in float32).
    """

    @staticmethod
    def forward(ctx, table: torch.Tensor, R: torch.Tensor) -> torch.Tensor:  # noqa: D102
        ctx.save_for_backward(R)
        return table.clone()

    @staticmethod
    def backward(ctx, grad: torch.Tensor):  # noqa: D102
        (R,) = ctx.saved_tensors
        return grad + R.T @ grad, None                                  # d/dE of E + R E: (I + R^T) g


def propagate(table: torch.Tensor, R: torch.Tensor, exact: bool = True) -> torch.Tensor:
    """E' = E + R E - stopgrad(R E) (NTP); ``exact``: the custom function, whose forward is E bit for bit.

    >>> E = torch.ones(3, 1, requires_grad=True)
    >>> propagate(E, propagation_matrix(3)).sum().backward()
    >>> E.grad.squeeze(1)        # 1 + column sums of R
    tensor([2.7500, 3.0000, 2.7500])
    """
    if exact:
        return NeighbourPropagation.apply(table, R)
    RE = R @ table                                                       # (N_t, h)
    return table + RE - RE.detach()


def local_expectation(p: torch.Tensor) -> torch.Tensor:
    """Decode a continuous position from probabilities over the temporal tokens: the expectation over the argmax
    token k and its larger neighbour j, (k p_k + j p_j) / (p_k + p_j).

    Args:
        p: (..., N_t) probabilities (or any non-negative scores) over the temporal tokens.

    Returns (...) positions in token units; on a soft target it returns u.

    >>> local_expectation(soft_target(torch.tensor([2.3, 0.0, 3.0]), 4))
    tensor([2.3000, 0.0000, 3.0000])
    """
    n = p.shape[-1]
    k = p.argmax(-1)                                                      # (...)
    left = p.gather(-1, (k - 1).clamp(min=0).unsqueeze(-1)).squeeze(-1)
    right = p.gather(-1, (k + 1).clamp(max=n - 1).unsqueeze(-1)).squeeze(-1)
    left = torch.where(k == 0, torch.full_like(left, -1.0), left)        # no neighbour beyond the ends
    right = torch.where(k == n - 1, torch.full_like(right, -1.0), right)
    j = torch.where(right >= left, k + 1, k - 1)
    pk, pj = p.gather(-1, k.unsqueeze(-1)).squeeze(-1), torch.maximum(left, right)
    return (k * pk + j * pj).to(p.dtype) / (pk + pj)


class Tables(NamedTuple):
    """The token tables one forward pass uses (after NTP where it is on)."""

    E_in: torch.Tensor    # (N_t, h)
    E_out: torch.Tensor   # (N_t, h)


class TemporalPerception(nn.Module):
    """The TPM: temporal-token tables, their input embedding, frame encoding, targets and decoding.

    Args:
        n_tokens: N_t, the number of temporal tokens (= frames per video).
        dim: h, the LM width.
        continuous: interpolated inputs, soft targets and local-expectation decoding (TPM); False gives the
            nearest-bin baseline (rows floor(u + 1/2), one-hot targets, argmax decoding).
        propagation: Neighbouring Token Propagation on both tables.
        decay: a in R_ij = a^|i-j| (the paper: 1/2).
        exact: NTP as the custom autograd function (forward exactly E); False: the paper's reparametrisation.

    >>> tpm = TemporalPerception(4, 2)
    >>> tpm.embed(torch.tensor([1.5]), tpm.tables()).shape, tpm.frame_encoding(4, tpm.tables()).shape
    (torch.Size([1, 2]), torch.Size([4, 2]))
    """

    R: torch.Tensor

    def __init__(self, n_tokens: int, dim: int, continuous: bool = True, propagation: bool = True,
                 decay: float = 0.5, exact: bool = True, init_std: float = 0.5,
                 generator: torch.Generator | None = None):
        super().__init__()
        if n_tokens < 2:
            raise ValueError(f"N_t={n_tokens}: the TPM needs at least two temporal tokens")
        self.n_tokens, self.continuous, self.propagation, self.exact = n_tokens, continuous, propagation, exact
        self.E_in = nn.Parameter(torch.randn(n_tokens, dim, generator=generator) * init_std)
        self.E_out = nn.Parameter(torch.randn(n_tokens, dim, generator=generator) * init_std)
        self.register_buffer("R", propagation_matrix(n_tokens, decay), persistent=False)

    def tables(self) -> Tables:
        """E_in and E_out as this forward pass sees them: through NTP when ``propagation`` is on."""
        if not self.propagation:
            return Tables(self.E_in, self.E_out)
        return Tables(propagate(self.E_in, self.R, self.exact), propagate(self.E_out, self.R, self.exact))

    def embed(self, u: torch.Tensor, tables: Tables) -> torch.Tensor:
        """Input embedding of positions u (...) -> (..., h): interpolated rows, or the nearest row."""
        if self.continuous:
            return interpolate(tables.E_in, u)
        return tables.E_in[nearest(u)]

    def frame_encoding(self, n_frames: int, tables: Tables) -> torch.Tensor:
        """(E_in[i] + E_out[i]) / 2 for frames i = 0..N_t - 1, (N_t, h); the frames must number N_t."""
        if n_frames != self.n_tokens:
            raise ValueError(f"{n_frames} frames with N_t={self.n_tokens} temporal tokens: the TPM's frame "
                             "encoding needs frames = N_t")
        return (tables.E_in + tables.E_out) / 2

    def target(self, u: torch.Tensor) -> torch.Tensor:
        """Target distribution over the temporal tokens (..., N_t): soft (TPM) or one-hot (bins)."""
        return soft_target(u, self.n_tokens) if self.continuous else hard_target(u, self.n_tokens)

    def decode(self, logits: torch.Tensor) -> torch.Tensor:
        """Position in token units from logits over the temporal tokens (..., N_t): local expectation (TPM) or
        argmax (bins)."""
        if self.continuous:
            return local_expectation(torch.softmax(logits, -1))
        return logits.argmax(-1).to(logits.dtype)


def neighbour_cosine(table: torch.Tensor, indices: torch.Tensor) -> float:
    """Mean cosine similarity of rows ``indices`` of ``table`` (N_t, h) to their two neighbours. C2b applies it
    to what training moved the output table (trained minus initial: with NTP a held-out row's update follows
    its neighbours'); on the table itself it is a diagnostic, which the random initialisation dominates.

    >>> neighbour_cosine(torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]), torch.tensor([1]))
    0.5
    """
    cos = nn.functional.cosine_similarity
    rows = table[indices]
    return float(((cos(rows, table[indices - 1], dim=-1) + cos(rows, table[indices + 1], dim=-1)) / 2).mean())

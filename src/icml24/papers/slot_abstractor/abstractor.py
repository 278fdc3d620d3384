"""Context normalisation, relational cross-attention, the Slot Abstractor and its two baselines.

* Context normalisation (Webb et al. 2020; Slot Abstractor Sec. 3.2): each feature is normalised across the
  slots of a candidate sequence, (v - mean) / sqrt(var + eps) * gamma + beta, with the unbiased variance as in
  the official code.
* Relational cross-attention (Altabaa et al. 2024; Slot Abstractor Eq. 2): queries and keys from the features,
  values from the symbols,

      RCA(z, s) = softmax( LN(z) W_q (LN(z) W_k)^T / sqrt(d_h) ) LN(s) W_v     (per head, then W_o)

  so the attention pattern is a function of feature-feature inner products only (the relational bottleneck).
  W_q and W_k start identical (the code seeds both Linear layers alike), LN is one module for z and s.
* The Abstractor layer in the official code's order: s += RCA(z, s); s += FF(LN_f(s)); s += SA(LN_a(s));
  s += FF(LN_f(s)): the official ``ff`` is ``PreNorm(FeedForward)``, one module (its LayerNorm LN_f included)
  called twice; FF is Linear, GELU, Linear as there. The symbols start as a linear embedding of the slots'
  position embeddings m (plus a learned panel code, as the paper's PGM model adds row/column codes; here it
  tells the panels of dist3 and id apart); the features z are embedded linearly too (the official code feeds the
  context-normed z and m themselves).
* Scoring (Sec. 3.3): mean-pool the symbols over the slots, a linear layer to one score per candidate sequence;
  softmax over candidates (sd: a same/different logit).
* Baselines on the same slots: ``standard_ca`` is the Abstractor with the values taken from LN(z) instead of
  LN(s) (the features flow into the symbols: no bottleneck); ``transformer`` is a pre-LN Transformer encoder
  over the tokens W [z; m] (+ the panel code).
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import nn

METHODS = ("abstractor", "transformer", "standard_ca")


def context_norm(v: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """Normalise (B, N, D) across the N slots per feature, unbiased variance, then scale and shift (D,).

    >>> v = torch.tensor([[[1.0], [3.0]]])
    >>> context_norm(v, torch.ones(1), torch.zeros(1)).flatten().tolist()   # mean 2, unbiased var 2
    [-0.7071067690849304, 0.7071067690849304]
    """
    mean = v.mean(dim=1, keepdim=True)
    var = v.var(dim=1, keepdim=True, unbiased=True)
    return (v - mean) / torch.sqrt(var + eps) * gamma + beta


class ContextNorm(nn.Module):
    """:func:`context_norm` with learned gamma (init 1) and beta (init 0)."""

    def __init__(self, dim: int):
        super().__init__()
        self.gamma, self.beta = nn.Parameter(torch.ones(dim)), nn.Parameter(torch.zeros(dim))

    def forward(self, v: torch.Tensor) -> torch.Tensor:
        return context_norm(v, self.gamma, self.beta)


class CrossAttention(nn.Module):
    """Multi-head attention whose queries and keys come from ``x`` and values from ``values`` (Eq. 2 above).

    With ``values = LN(s)`` it is relational cross-attention; with ``values = LN(z)`` it is standard. W_q and W_k
    start identical. ``forward`` returns the output (B, N, d) and the head-mean attention (B, N, N).

    >>> ca = CrossAttention(8, 2)
    >>> bool(torch.equal(ca.q.weight, ca.k.weight))
    True
    """

    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v, self.o = (nn.Linear(dim, dim) for _ in range(4))
        with torch.no_grad():
            self.k.weight.copy_(self.q.weight)
            self.k.bias.copy_(self.q.bias)

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        """(B, h, N, N) softmax(q k^T / sqrt(d_h)) per head."""
        B, N, d = x.shape
        q = self.q(x).reshape(B, N, self.heads, -1).transpose(1, 2)
        k = self.k(x).reshape(B, N, self.heads, -1).transpose(1, 2)
        return (q @ k.transpose(-1, -2) * (d // self.heads) ** -0.5).softmax(dim=-1)

    def forward(self, x: torch.Tensor, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        B, N, d = x.shape
        a = self.attention(x)
        v = self.v(values).reshape(B, N, self.heads, -1).transpose(1, 2)
        out = (a @ v).transpose(1, 2).reshape(B, N, d)
        return self.o(out), a.mean(dim=1)


class LayerOutput(NamedTuple):
    """``symbols`` (B, N, d) after the layer; ``attn`` (B, N, N) its cross-attention (head mean)."""

    symbols: torch.Tensor
    attn: torch.Tensor


class AbstractorLayer(nn.Module):
    """One layer in the official order (module docstring); ``relational=False`` takes values from LN(z)."""

    def __init__(self, dim: int, heads: int, mlp: int, relational: bool):
        super().__init__()
        self.relational = relational
        self.norm = nn.LayerNorm(dim)                      # one LN for z and s in the cross-attention
        self.cross = CrossAttention(dim, heads)
        self.self_attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm_sa, self.norm_ff = nn.LayerNorm(dim), nn.LayerNorm(dim)   # LN_a; LN_f of PreNorm(FF)
        self.ff = nn.Sequential(nn.Linear(dim, mlp), nn.GELU(), nn.Linear(mlp, dim))

    def forward(self, z: torch.Tensor, s: torch.Tensor) -> LayerOutput:
        """Features ``z`` and symbols ``s`` (B, N, d) -> the updated symbols and the cross-attention."""
        zn = self.norm(z)
        delta, attn = self.cross(zn, self.norm(s) if self.relational else zn)
        s = s + delta
        s = s + self.ff(self.norm_ff(s))                  # the official ff(s) + s, ff = PreNorm(FeedForward)
        h = self.norm_sa(s)
        s = s + self.self_attn(h, h, h, need_weights=False)[0]
        s = s + self.ff(self.norm_ff(s))
        return LayerOutput(s, attn)


class Scored(NamedTuple):
    """``score`` (B,) per candidate sequence; ``attn`` (B, N, N) the first layer's cross-attention (head mean;
    zeros for the Transformer)."""

    score: torch.Tensor
    attn: torch.Tensor


class Reasoner(nn.Module):
    """Scores one candidate sequence of slots: context norm of z and m, then the Abstractor (``abstractor``,
    ``standard_ca``) or a Transformer (``transformer``), mean-pool, a linear score.

    Inputs: ``z``, ``m`` (B, N, D_slot) with N = panels * K, ``panel`` (N,) the panel index of each slot.

    >>> r = Reasoner("abstractor", slot_dim=6, dim=8, heads=2, mlp=16, depth=1, panels=2)
    >>> r(torch.randn(3, 4, 6), torch.randn(3, 4, 6), torch.tensor([0, 0, 1, 1])).score.shape
    torch.Size([3])
    """

    def __init__(self, method: str, slot_dim: int, dim: int, heads: int, mlp: int, depth: int, panels: int):
        super().__init__()
        self.method = method
        self.norm_z, self.norm_m = ContextNorm(slot_dim), ContextNorm(slot_dim)
        self.panel_code = nn.Embedding(panels, dim)
        if method == "transformer":
            self.embed = nn.Linear(2 * slot_dim, dim)
            layer = nn.TransformerEncoderLayer(dim, heads, mlp, dropout=0.0, batch_first=True, norm_first=True)
            self.encoder = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
            self.final = nn.LayerNorm(dim)
        else:
            self.embed_z, self.embed_m = nn.Linear(slot_dim, dim), nn.Linear(slot_dim, dim)
            self.layers = nn.ModuleList(AbstractorLayer(dim, heads, mlp, method == "abstractor")
                                        for _ in range(depth))
        self.score = nn.Linear(dim, 1)

    def forward(self, z: torch.Tensor, m: torch.Tensor, panel: torch.Tensor) -> Scored:
        z, m = self.norm_z(z), self.norm_m(m)
        code = self.panel_code(panel)                                  # (N, dim)
        if self.method == "transformer":
            h = self.final(self.encoder(self.embed(torch.cat([z, m], dim=-1)) + code))
            attn = h.new_zeros(h.shape[0], h.shape[1], h.shape[1])
        else:
            x, h = self.embed_z(z), self.embed_m(m) + code             # features, symbols s^(0)
            attn = x.new_zeros(())
            for i, layer in enumerate(self.layers):
                h, a = layer(x, h)
                attn = a if i == 0 else attn
        return Scored(self.score(h.mean(dim=1)).squeeze(-1), attn)

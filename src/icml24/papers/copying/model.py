"""The three model families of the paper's experiments (Section 4), one interface:
``model(ids: (B, T) long) -> logits (B, T, V)``.

* :class:`Transformer`: a GPT-NeoX-style decoder (pre-LayerNorm, MLP 4x) whose position scheme is
  ``"rope"``, ``"nope"``, ``"alibi"`` or ``"hard_alibi"`` (Section 4.1: head i of the first
  ``n_hard`` heads attends only to the last i+1 tokens, ``[t-i, t]``; the other heads are NoPE).
* :class:`Mamba`: the selective SSM of Gu & Dao (2023, Algorithm 2) in pure PyTorch, with a fused
  scan and hand-written backward (:func:`selective_scan`) and the plain autograd recurrence beside it
  (:func:`selective_scan_naive`).
* :class:`LSTMLM`: an LSTM language model.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from icml24.papers.copying.config import Position


# -- attention masks and biases ------------------------------------------------------------------
def hard_alibi_mask(T: int, i: int) -> torch.Tensor:
    """Hard-ALiBi head i: (T, T) bool, query t may attend to key s iff ``t - i <= s <= t``.

    >>> hard_alibi_mask(4, 1).int().tolist()
    [[1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]]
    """
    t = torch.arange(T).view(-1, 1)
    s = torch.arange(T).view(1, -1)
    return (s <= t) & (s >= t - i)


def alibi_slopes(n_heads: int) -> torch.Tensor:
    """ALiBi slopes ``m_h = 2^(-8 (h+1) / H)`` (Press et al., 2022), (H,).

    >>> alibi_slopes(4).tolist()
    [0.25, 0.0625, 0.015625, 0.00390625]
    """
    return torch.tensor([2.0 ** (-8.0 * (h + 1) / n_heads) for h in range(n_heads)])


def attention_bias(T: int, n_heads: int, position: Position, n_hard: int) -> torch.Tensor:
    """(H, T, T) additive bias: causal mask, plus ALiBi's ``-m_h (t - s)`` or Hard-ALiBi windows."""
    t = torch.arange(T).view(-1, 1)
    s = torch.arange(T).view(1, -1)
    causal = s <= t
    bias = torch.zeros(n_heads, T, T).masked_fill(~causal, -math.inf)
    if position == "alibi":
        bias = bias - alibi_slopes(n_heads).view(-1, 1, 1) * (t - s).clamp(min=0)
    elif position == "hard_alibi":
        for i in range(min(n_hard, n_heads)):
            bias[i] = bias[i].masked_fill(~hard_alibi_mask(T, i), -math.inf)
    return bias


def rotary(x: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """RoPE (Su et al.) on (B, H, T, d) queries or keys, rotating pairs (2k, 2k+1) by ``t theta_k``."""
    d, T = x.shape[-1], x.shape[-2]
    theta = base ** (-torch.arange(0, d, 2, dtype=x.dtype, device=x.device) / d)  # (d/2,)
    ang = torch.arange(T, dtype=x.dtype, device=x.device).view(-1, 1) * theta  # (T, d/2)
    cos, sin = ang.cos(), ang.sin()
    x1, x2 = x[..., 0::2], x[..., 1::2]
    out = torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)
    return out.flatten(-2)


# -- transformer -----------------------------------------------------------------------------------
class Block(nn.Module):
    """Pre-LN transformer block: ``x + Attn(LN x)``, then ``x + MLP(LN x)`` (MLP 4x, GELU)."""

    def __init__(self, d: int, n_heads: int):
        super().__init__()
        self.h = n_heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x: torch.Tensor, bias: torch.Tensor, use_rope: bool) -> torch.Tensor:
        B, T, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(B, T, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)  # (B,H,T,dh)
        if use_rope:
            q, k = rotary(q), rotary(k)
        att = F.scaled_dot_product_attention(q, k, v, attn_mask=bias.to(q))  # (B, H, T, dh)
        x = x + self.proj(att.transpose(1, 2).reshape(B, T, d))
        return x + self.mlp(self.ln2(x))


class Transformer(nn.Module):
    """Decoder-only transformer with a selectable position scheme (Section 4.1).

    Args:
        vocab: V. d: model width. n_layers, n_heads. position: rope / nope / alibi / hard_alibi.
        n_hard: number of Hard-ALiBi heads per layer (default half of the heads, as in the paper).

    >>> m = Transformer(10, 16, 1, 2, "hard_alibi")
    >>> m(torch.zeros(3, 7, dtype=torch.long)).shape
    torch.Size([3, 7, 10])
    """

    def __init__(self, vocab: int, d: int, n_layers: int, n_heads: int, position: Position = "nope",
                 n_hard: int | None = None):
        super().__init__()
        self.position, self.n_heads = position, n_heads
        self.n_hard = n_heads // 2 if n_hard is None else n_hard
        self.emb = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList([Block(d, n_heads) for _ in range(n_layers)])
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.emb(ids)  # (B, T, d); no absolute positions
        bias = attention_bias(ids.shape[1], self.n_heads, self.position, self.n_hard)  # (H, T, T)
        for blk in self.blocks:
            x = blk(x, bias, self.position == "rope")
        return self.head(self.ln(x))


# -- Mamba -----------------------------------------------------------------------------------------
def selective_scan_naive(dA: torch.Tensor, dBx: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
    """The recurrence of Gu & Dao (2023, Alg. 2) step by step: ``h_t = dA_t * h_{t-1} + dBx_t``, ``y_t = h_t C_t``.

    Args:
        dA: (B, L, E, N) discretized decays ``exp(Delta A)``. dBx: (B, L, E, N) inputs ``Delta B x``.
        C: (B, L, N). Returns y (B, L, E).
    """
    h = torch.zeros_like(dBx[:, 0])  # (B, E, N)
    ys = []
    for t in range(dA.shape[1]):
        h = dA[:, t] * h + dBx[:, t]
        ys.append(torch.einsum("ben,bn->be", h, C[:, t]))
    return torch.stack(ys, dim=1)


class _SelectiveScan(torch.autograd.Function):
    """The fused selective scan of one Mamba mixer, forward and a hand-written backward.

    Forward (Gu & Dao 2023, Alg. 2, zero-order hold for A, Euler for B):
        dA_t = exp(Delta_t A)                          (B, E, N)
        h_t  = dA_t * h_{t-1} + (Delta_t x_t) B_t      (h_{-1} = 0)
        y_t  = h_t C_t                                  (B, E)
    Backward, with g_t = dLoss/dh_t accumulated in reverse, g_t = gy_t C_t + dA_{t+1} * g_{t+1}, and
    Q_t = g_t * h_{t-1} * dA_t (the gradient at Delta_t A, Q_0 = 0):
        dLoss/dC_t = sum_e gy_t h_t,   dLoss/d(Delta x)_t = sum_n g_t B_t,   dLoss/dB_t = sum_e g_t (Delta x)_t,
        dLoss/dDelta_t = x_t dLoss/d(Delta x)_t + sum_n Q_t A,   dLoss/dA = sum_{b,t} Q_t Delta_t,
        dLoss/dx_t = Delta_t dLoss/d(Delta x)_t.
    Why it is fast on a CPU: every (B, E, N)-sized step works on one time slice that stays in cache and
    writes into preallocated (B, L, E, N) buffers (h; g and Q in the backward), so no full-size
    temporaries are allocated (each costs as much as the whole recurrence); dA is recomputed per step
    instead of stored; the contractions with B, C, A and Delta are whole-sequence einsums afterwards.
    """

    @staticmethod
    def forward(ctx, x, delta, A, Bm, Cm):   # x, delta (B, L, E); A (E, N); Bm, Cm (B, L, N)
        Bsz, L, E = x.shape
        dx = delta * x                                                   # (B, L, E)
        h = x.new_empty(Bsz, L, E, A.shape[1])                           # (B, L, E, N)
        dA = x.new_empty(Bsz, E, A.shape[1])                             # one step's exp(Delta_t A)
        for t in range(L):
            torch.mul(dx[:, t, :, None], Bm[:, t, None, :], out=h[:, t])   # Delta_t B_t x_t
            if t:
                torch.mul(delta[:, t, :, None], A, out=dA).exp_()
                h[:, t].addcmul_(dA, h[:, t - 1])                        # + dA_t h_{t-1}
        ctx.save_for_backward(x, delta, A, Bm, Cm, h)
        return torch.einsum("blen,bln->ble", h, Cm)

    @staticmethod
    def backward(ctx, gy):
        x, delta, A, Bm, Cm, h = ctx.saved_tensors
        L = x.shape[1]
        g, q = torch.empty_like(h), torch.empty_like(h)                  # dLoss/dh_t and Q_t, (B, L, E, N)
        dA, dA_next = torch.empty_like(h[:, 0]), torch.empty_like(h[:, 0])
        for t in range(L - 1, -1, -1):
            torch.mul(gy[:, t, :, None], Cm[:, t, None, :], out=g[:, t])
            if t < L - 1:
                g[:, t].addcmul_(dA_next, g[:, t + 1])                   # g_t += dA_{t+1} g_{t+1}
            if t:
                torch.mul(delta[:, t, :, None], A, out=dA).exp_()
                torch.mul(g[:, t], h[:, t - 1], out=q[:, t]).mul_(dA)    # Q_t
                dA, dA_next = dA_next, dA
            else:
                q[:, 0].zero_()
        dC = torch.einsum("ble,blen->bln", gy, h)
        d_dx = torch.einsum("blen,bln->ble", g, Bm)                      # dLoss/d(Delta x)
        dB = torch.einsum("blen,ble->bln", g, delta * x)
        d_delta = d_dx * x + torch.einsum("blen,en->ble", q, A)
        dAm = torch.einsum("blen,ble->en", q, delta)
        return d_dx * delta, d_delta, dAm, dB, dC


def selective_scan(x: torch.Tensor, delta: torch.Tensor, A: torch.Tensor, Bm: torch.Tensor,
                   Cm: torch.Tensor) -> torch.Tensor:
    """The selective scan of a Mamba mixer from its inputs (no D skip), fused, with a hand-written backward.

    Args: x, delta (B, L, E); A (E, N) (negative); Bm, Cm (B, L, N). Returns y (B, L, E), equal to
    ``selective_scan_naive(exp(delta A), delta B x, C)`` (see :class:`_SelectiveScan`).

    >>> g = torch.Generator().manual_seed(0)
    >>> x, d = torch.randn(2, 9, 3, generator=g), torch.rand(2, 9, 3, generator=g)
    >>> A, Bm, Cm = -torch.rand(3, 4, generator=g), torch.randn(2, 9, 4, generator=g), torch.randn(2, 9, 4, generator=g)
    >>> ref = selective_scan_naive(torch.exp(d.unsqueeze(-1) * A), (d * x).unsqueeze(-1) * Bm.unsqueeze(2), Cm)
    >>> bool(torch.allclose(selective_scan(x, d, A, Bm, Cm), ref, atol=1e-6))
    True
    """
    return _SelectiveScan.apply(x, delta, A, Bm, Cm)


class MambaMixer(nn.Module):
    """One Mamba mixer (Gu & Dao 2023, Fig. 3 / Alg. 2): in-proj, causal depthwise conv, SiLU,
    input-dependent ``(Delta, B, C)``, selective scan, skip ``D x``, gate ``SiLU(z)``, out-proj."""

    def __init__(self, d: int, d_state: int = 16, expand: int = 2, d_conv: int = 4, fast_scan: bool = True):
        super().__init__()
        E = expand * d
        self.E, self.N, self.fast_scan = E, d_state, fast_scan
        self.dt_rank = math.ceil(d / 16)
        self.in_proj = nn.Linear(d, 2 * E, bias=False)
        self.conv = nn.Conv1d(E, E, d_conv, groups=E, padding=d_conv - 1)
        self.x_proj = nn.Linear(E, self.dt_rank + 2 * d_state, bias=False)
        self.dt_proj = nn.Linear(self.dt_rank, E)
        # Delta initialised log-uniform in [1e-3, 1e-1] via the softplus inverse (as in Mamba)
        dt = torch.exp(torch.rand(E) * (math.log(0.1) - math.log(1e-3)) + math.log(1e-3))
        with torch.no_grad():
            self.dt_proj.bias.copy_(dt + torch.log(-torch.expm1(-dt)))
        self.A_log = nn.Parameter(torch.log(torch.arange(1, d_state + 1, dtype=torch.float32)).repeat(E, 1))  # S4D-real
        self.D = nn.Parameter(torch.ones(E))
        self.out_proj = nn.Linear(E, d, bias=False)

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        B, L, _ = u.shape
        x, z = self.in_proj(u).chunk(2, dim=-1)  # (B, L, E) each
        x = F.silu(self.conv(x.transpose(1, 2))[..., :L].transpose(1, 2))  # causal conv
        dt, Bm, Cm = self.x_proj(x).split([self.dt_rank, self.N, self.N], dim=-1)
        delta = F.softplus(self.dt_proj(dt))  # (B, L, E)
        A = -torch.exp(self.A_log)  # (E, N)
        if self.fast_scan:
            y = selective_scan(x, delta, A, Bm, Cm)
        else:
            dA = torch.exp(delta.unsqueeze(-1) * A)  # (B, L, E, N): zero-order hold
            dBx = delta.unsqueeze(-1) * Bm.unsqueeze(2) * x.unsqueeze(-1)  # (B, L, E, N): Euler for B
            y = selective_scan_naive(dA, dBx, Cm)
        y = y + self.D * x
        return self.out_proj(y * F.silu(z))


class RMSNorm(nn.Module):
    """``x / rms(x) * w``."""

    def __init__(self, d: int, eps: float = 1e-5):
        super().__init__()
        self.w, self.eps = nn.Parameter(torch.ones(d)), eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.w


class Mamba(nn.Module):
    """Mamba language model: embedding, ``n_layers`` residual ``x + Mixer(RMSNorm x)``, norm, head.

    >>> m = Mamba(10, 16, 2, d_state=4)
    >>> m(torch.zeros(2, 5, dtype=torch.long)).shape
    torch.Size([2, 5, 10])
    """

    def __init__(self, vocab: int, d: int, n_layers: int, d_state: int = 16, expand: int = 2,
                 fast_scan: bool = True):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.norms = nn.ModuleList([RMSNorm(d) for _ in range(n_layers)])
        self.mixers = nn.ModuleList([MambaMixer(d, d_state, expand, fast_scan=fast_scan) for _ in range(n_layers)])
        self.norm = RMSNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.emb(ids)
        for norm, mixer in zip(self.norms, self.mixers):
            x = x + mixer(norm(x))
        return self.head(self.norm(x))


# -- LSTM ------------------------------------------------------------------------------------------
class LSTMLM(nn.Module):
    """LSTM language model: embedding, ``n_layers`` LSTM of width ``hidden``, linear head.

    >>> LSTMLM(10, 8, 16, 2)(torch.zeros(2, 5, dtype=torch.long)).shape
    torch.Size([2, 5, 10])
    """

    def __init__(self, vocab: int, d: int, hidden: int, n_layers: int, dropout: float = 0.0):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.lstm = nn.LSTM(d, hidden, n_layers, batch_first=True, dropout=dropout if n_layers > 1 else 0.0)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.lstm(self.emb(ids))[0])

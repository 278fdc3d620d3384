"""Slot Attention autoencoder (Locatello et al. 2020) with the Slot Abstractor's factorised slot outputs.

Encoder: ``enc_layers`` 5x5 convolutions with ReLU, then the soft position embedding p_j = W_p g_j of the grid
g_j = [x, y, 1 - x, 1 - y] added to the CNN features, LayerNorm and an MLP (Locatello et al. Sec. 2.2). Slot
attention (their Algorithm 1): K slots, T iterations,

    A = softmax_k( k(x) q(slots)^T / sqrt(D) )          (softmax over slots, Alg. 1 line 6)
    W = A / sum_j A                                      (renormalised over pixels, line 7)
    slots = GRU(W v(x), slots); slots += MLP(LN(slots))   (lines 8-9)

Decoder: spatial broadcast of each slot over the grid plus the position embedding, a per-pixel MLP (1x1
convolutions) to an intensity and an alpha logit; alpha softmax over slots composes the image.

Factorised outputs (Slot Abstractor Sec. 3.1): from the final iteration's renormalised attention W,

    z_k = sum_j W_kj f_j        (feature embedding: CNN features, no position)
    m_k = sum_j W_kj p_j        (position embedding)

:func:`oracle_factors` gives the same z, m from the true object masks in place of W (the ``oracle`` slots).
Slot initialisation: ``random`` (the paper: slots ~ N(mu, sigma^2) with learned mu, sigma) or ``learned``
(one learned query per slot, a stated deviation that decomposes faster at CPU scale).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch
from torch import nn


def grid(size: int) -> torch.Tensor:
    """(size * size, 4) position features [x, y, 1 - x, 1 - y] in [0, 1], row-major."""
    r = torch.linspace(0.0, 1.0, size)
    y, x = torch.meshgrid(r, r, indexing="ij")
    return torch.stack([x, y, 1 - x, 1 - y], dim=-1).reshape(-1, 4)


class SlotAttention(nn.Module):
    """Slot attention (Locatello et al. Algorithm 1) over N inputs of dim D, K slots of dim D.

    >>> sa = SlotAttention(dim=8, n_slots=3, iters=2, init="learned")
    >>> out = sa(torch.randn(2, 10, 8))
    >>> out.slots.shape, out.attn.shape
    (torch.Size([2, 3, 8]), torch.Size([2, 3, 10]))
    """

    class Out(NamedTuple):
        """``slots`` (B, K, D); ``attn`` (B, K, N): the final softmax over slots, before renormalising."""

        slots: torch.Tensor
        attn: torch.Tensor

    def __init__(self, dim: int, n_slots: int, iters: int, init: str, hidden: int | None = None, eps: float = 1e-8):
        super().__init__()
        self.dim, self.n_slots, self.iters, self.init, self.eps = dim, n_slots, iters, init, eps
        if init == "learned":
            self.queries = nn.Parameter(torch.randn(n_slots, dim) * dim ** -0.5)
        else:
            self.mu = nn.Parameter(torch.randn(dim) * dim ** -0.5)
            self.log_sigma = nn.Parameter(torch.full((dim,), -1.0))
        self.norm_in, self.norm_slots, self.norm_mlp = nn.LayerNorm(dim), nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.q, self.k, self.v = (nn.Linear(dim, dim, bias=False) for _ in range(3))
        self.gru = nn.GRUCell(dim, dim)
        h = hidden or 2 * dim
        self.mlp = nn.Sequential(nn.Linear(dim, h), nn.ReLU(), nn.Linear(h, dim))

    def initial(self, batch: int, generator: torch.Generator | None) -> torch.Tensor:
        """(B, K, D) initial slots: the learned queries, or N(mu, sigma^2) draws from ``generator``."""
        if self.init == "learned":
            return self.queries.expand(batch, -1, -1)
        noise = torch.randn(batch, self.n_slots, self.dim, generator=generator)
        return self.mu + self.log_sigma.exp() * noise

    def forward(self, x: torch.Tensor, generator: torch.Generator | None = None,
                slots: torch.Tensor | None = None) -> "SlotAttention.Out":
        x = self.norm_in(x)                                           # (B, N, D)
        k, v = self.k(x), self.v(x)
        slots = self.initial(x.shape[0], generator) if slots is None else slots
        attn = x.new_zeros(())
        for _ in range(self.iters):
            prev = slots
            q = self.q(self.norm_slots(slots))                        # (B, K, D)
            logits = torch.einsum("bkd,bnd->bkn", q, k) * self.dim ** -0.5
            attn = logits.softmax(dim=1)                              # over slots (Alg. 1 line 6)
            w = (attn + self.eps) / (attn + self.eps).sum(dim=2, keepdim=True)   # over inputs (line 7)
            updates = torch.einsum("bkn,bnd->bkd", w, v)
            slots = self.gru(updates.reshape(-1, self.dim), prev.reshape(-1, self.dim)).reshape(prev.shape)
            slots = slots + self.mlp(self.norm_mlp(slots))
        return SlotAttention.Out(slots, attn)


def slot_attention_loop(sa: SlotAttention, x: torch.Tensor, slots: torch.Tensor) -> torch.Tensor:
    """The same slot attention run image by image (the naive reference of the batched forward; benchmark)."""
    return torch.cat([sa(x[i:i + 1], slots=slots[i:i + 1]).slots for i in range(len(x))])


class Decomposition(NamedTuple):
    """Output of :class:`SlotAutoencoder`.

    Attributes:
        recon: (B, H, W) reconstructed image.
        masks: (B, K, H, W) decoder alpha masks (softmax over slots).
        attn: (B, K, H * W) final slot attention (softmax over slots).
        z: (B, K, D) feature embeddings, m: (B, K, D) position embeddings (module docstring).
    """

    recon: torch.Tensor
    masks: torch.Tensor
    attn: torch.Tensor
    z: torch.Tensor
    m: torch.Tensor


class SlotAutoencoder(nn.Module):
    """Conv encoder + soft position embedding, slot attention, spatial-broadcast per-pixel MLP decoder (gray).

    >>> ae = SlotAutoencoder(size=12, dim=8, n_slots=3, channels=8, enc_layers=2, dec_hidden=8, iters=1,
    ...                      init="learned")
    >>> out = ae(torch.rand(2, 12, 12))
    >>> out.recon.shape, out.masks.shape, out.z.shape
    (torch.Size([2, 12, 12]), torch.Size([2, 3, 12, 12]), torch.Size([2, 3, 8]))
    """

    def __init__(self, size: int, dim: int, n_slots: int, channels: int, enc_layers: int, dec_hidden: int,
                 iters: int, init: str):
        super().__init__()
        self.size = size
        layers: list[nn.Module] = []
        for i in range(enc_layers):
            layers += [nn.Conv2d(1 if i == 0 else channels, channels, 5, padding=2), nn.ReLU()]
        self.cnn = nn.Sequential(*layers, nn.Conv2d(channels, dim, 1))
        self.register_buffer("grid", grid(size), persistent=False)
        self.pos_enc = nn.Linear(4, dim)                              # soft position embedding p_j
        self.norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim))
        self.slot_attention = SlotAttention(dim, n_slots, iters, init)
        self.pos_dec = nn.Linear(4, dim)
        self.decoder = nn.Sequential(nn.Linear(dim, dec_hidden), nn.ReLU(), nn.Linear(dec_hidden, dec_hidden),
                                     nn.ReLU(), nn.Linear(dec_hidden, 2))

    def features(self, images: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, N, D) CNN features f_j and (N, D) position embedding p_j of (B, H, W) images."""
        f = self.cnn(images[:, None]).flatten(2).transpose(1, 2)      # (B, N, D)
        return f, self.pos_enc(self.grid)

    def forward(self, images: torch.Tensor, generator: torch.Generator | None = None) -> Decomposition:
        B, K = images.shape[0], self.slot_attention.n_slots
        f, p = self.features(images)
        x = self.mlp(self.norm(f + p))
        out = self.slot_attention(x, generator)
        w = out.attn / out.attn.sum(dim=2, keepdim=True).clamp_min(1e-8)        # (B, K, N)
        z = torch.einsum("bkn,bnd->bkd", w, f)
        m = torch.einsum("bkn,nd->bkd", w, p)
        dec = self.decoder(out.slots[:, :, None, :] + self.pos_dec(self.grid))   # (B, K, N, 2)
        masks = dec[..., 1].softmax(dim=1)                                       # alpha over slots
        recon = (masks * dec[..., 0]).sum(dim=1)
        hw = (self.size, self.size)
        return Decomposition(recon.reshape(B, *hw), masks.reshape(B, K, *hw), out.attn, z, m)


class Factors(NamedTuple):
    """Factorised slots: ``z`` (B, K, D) feature and ``m`` (B, K, D) position embeddings."""

    z: torch.Tensor
    m: torch.Tensor


def oracle_factors(ae: SlotAutoencoder, images: torch.Tensor, segments: torch.Tensor, n_slots: int) -> Factors:
    """z, m with the true masks in place of the attention: slot k < 4 pools quadrant k's object (zero where the
    quadrant is empty), slot 4 the background, slots beyond stay zero. ``segments`` (B, H, W): 0 background,
    q + 1 the object of quadrant q."""
    f, p = ae.features(images)
    onehot = torch.stack([segments.flatten(1) == q + 1 for q in range(4)] + [segments.flatten(1) == 0], 1).float()
    w = onehot / onehot.sum(dim=2, keepdim=True).clamp_min(1.0)                  # (B, 5, N)
    z, m = torch.einsum("bkn,bnd->bkd", w, f), torch.einsum("bkn,nd->bkd", w, p)
    pad = (0, 0, 0, n_slots - 5)
    return Factors(nn.functional.pad(z, pad), nn.functional.pad(m, pad))


def adjusted_rand_index(true: np.ndarray, pred: np.ndarray) -> float:
    """ARI of two labelings of the same items (Hubert & Arabie 1985):

        ARI = (sum_ij C(n_ij, 2) - t) / ((a + b) / 2 - t),  a = sum_i C(n_i., 2), b = sum_j C(n_.j, 2),
        t = a b / C(n, 2);   1 when both labelings are one cluster each (sklearn's convention).

    >>> adjusted_rand_index(np.array([0, 0, 1, 1]), np.array([5, 5, 2, 2]))
    1.0
    """
    _, ti = np.unique(true, return_inverse=True)
    _, pi = np.unique(pred, return_inverse=True)
    table = np.zeros((ti.max() + 1, pi.max() + 1))
    np.add.at(table, (ti, pi), 1)

    def comb2(x: np.ndarray) -> float:
        return float((x * (x - 1) / 2).sum())

    a, b, n = comb2(table.sum(1)), comb2(table.sum(0)), len(true)
    index, t = comb2(table), a * b / (n * (n - 1) / 2) if n > 1 else 0.0
    if (a + b) / 2 == t:
        return 1.0
    return (index - t) / ((a + b) / 2 - t)


def fg_ari(segments: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Foreground ARI per image: the ARI between the true object index and the argmax slot of the masks,
    over the pixels of the objects only. ``segments`` (B, H, W) with 0 = background, ``masks`` (B, K, H, W)."""
    pred = masks.argmax(axis=1)
    out = []
    for s, p in zip(segments, pred):
        fg = s > 0
        out.append(adjusted_rand_index(s[fg], p[fg]))
    return np.array(out)

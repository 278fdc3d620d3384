"""Compression of every ``nn.Linear`` of a causal LM's decoder layers, layer by layer, from calibration
statistics collected in one forward pass of the dense model.

Linear layers that read the same input tensor (q, k and v; gate and up) share one :class:`CalibStats`.
The statistics come from the dense model for every layer (not sequentially from the already-compressed
layers below, as GPTQ's reference code does): one calibration pass serves every method.
"""

from __future__ import annotations

from typing import Any, Callable, Collection, NamedTuple, Sequence

import torch
from torch import nn

from icml24.common import llm
from icml24.papers.compressed_trust import compress
from icml24.papers.compressed_trust.compress import CalibStats


class Method(NamedTuple):
    """A compression method at one setting: ``op`` (kind: rtn, gptq, awq, magnitude, wanda, sparsegpt),
    bits (quantisation) or sparsity and N:M (pruning), group size, and AWQ's grid points over the exponent."""

    name: str
    op: str
    bits: int = 16
    group: int = 0
    sparsity: float = 0.0
    nm: tuple[int, int] | None = None
    grid: int = 20


def decoder_linears(model: Any) -> dict[str, nn.Linear]:
    """The ``nn.Linear`` modules of the decoder layers (attention and MLP projections), by dotted name; the
    embeddings and the LM head stay dense (as in GPTQ, AWQ, SparseGPT and Wanda)."""
    inner = getattr(model, "model", None)
    if inner is None or not hasattr(inner, "layers"):
        raise TypeError(f"decoder_linears: {type(model).__name__} has no model.layers (not an HF decoder LM)")
    return {f"model.layers.{i}.{n}": m for i, layer in enumerate(inner.layers)
            for n, m in layer.named_modules() if isinstance(m, nn.Linear)}


class _Accumulator:
    def __init__(self, width: int):
        self.H = torch.zeros(width, width, dtype=torch.float64)
        self.abs = torch.zeros(width, dtype=torch.float64)
        self.n = 0

    def add(self, X: torch.Tensor) -> None:
        X = X.reshape(-1, X.shape[-1]).float().cpu()        # (tokens, in): one batch's sums in float32,
        self.H += (X.T @ X).double()                        # accumulated over batches in float64
        self.abs += X.abs().sum(0).double()
        self.n += len(X)

    def result(self) -> CalibStats:
        return CalibStats(self.H / self.n, self.abs / self.n, self.n)


SHARED_INPUT = {"k_proj": "q_proj", "v_proj": "q_proj", "up_proj": "gate_proj"}
"""Llama-family projections that read the same tensor as another one (their statistics are shared)."""


def input_owner(name: str, names: set[str]) -> str:
    """The Linear whose input statistics ``name`` shares (itself unless listed in :data:`SHARED_INPUT`).

    >>> input_owner("model.layers.0.self_attn.k_proj", {"model.layers.0.self_attn.q_proj"})
    'model.layers.0.self_attn.q_proj'
    """
    head, _, leaf = name.rpartition(".")
    other = f"{head}.{SHARED_INPUT[leaf]}" if leaf in SHARED_INPUT else name
    return other if other in names else name


def calibration_stats(model: Any, seqs: Sequence[Sequence[int]], pad_id: int, batch: int = 8,
                      layers: Collection[int] | None = None) -> dict[str, CalibStats]:
    """:class:`CalibStats` of every decoder Linear's input (of the decoder ``layers`` only, if given) over the
    tokens of ``seqs`` (padding excluded)."""
    linears = {n: m for n, m in decoder_linears(model).items() if layers is None or int(n.split(".")[2]) in layers}
    owners = {n: input_owner(n, set(linears)) for n in linears}
    acc = {n: _Accumulator(linears[n].in_features) for n in set(owners.values())}
    dev = next(model.parameters()).device
    mask_box: list[torch.Tensor] = []

    def hook(name: str) -> Callable:
        def pre(_m: nn.Module, args: tuple) -> None:
            acc[name].add(args[0][mask_box[0]])              # (tokens, in): the real tokens only
        return pre

    handles = [linears[n].register_forward_pre_hook(hook(n)) for n in acc]
    try:
        with torch.no_grad():
            for i in range(0, len(seqs), batch):
                ids, mask = llm.left_pad(seqs[i:i + batch], pad_id)
                mask_box[:] = [mask.bool().to(dev)]
                position_ids = (mask.cumsum(1) - 1).clamp(min=0)
                model(input_ids=ids.to(dev), attention_mask=mask.to(dev), position_ids=position_ids.to(dev))
    finally:
        for h in handles:
            h.remove()
    return {n: acc[owners[n]].result() for n in linears}


def compress_weight(W: torch.Tensor, st: CalibStats, method: Method,
                    factor: compress.InverseFactor | None = None) -> torch.Tensor:
    """``method`` applied to weights W (..., out, in) with their input statistics (leading dims: layers);
    GPTQ and SparseGPT use ``factor`` (of ``st.H``) when given."""
    if method.op == "rtn":
        return compress.rtn(W, method.bits, method.group)
    if method.op == "gptq":
        return compress.gptq(W, st.H, method.bits, method.group, factor=factor)
    if method.op == "awq":
        return compress.awq(W, st, method.bits, method.group, method.grid)
    if method.op == "magnitude":
        return compress.magnitude(W, method.sparsity, method.nm)
    if method.op == "wanda":
        return compress.wanda(W, st, method.sparsity, method.nm)
    if method.op == "sparsegpt":
        return compress.sparsegpt(W, st.H, method.sparsity, method.nm, factor=factor)
    raise ValueError(f"unknown compression op {method.op!r}")


def shape_groups(model: Any) -> dict[tuple[int, ...], list[str]]:
    """The decoder Linears by weight shape: the groups :func:`compress_model` compresses in one batched call."""
    groups: dict[tuple[int, ...], list[str]] = {}
    for name, lin in decoder_linears(model).items():
        groups.setdefault(tuple(lin.weight.shape), []).append(name)
    return groups


def _stacked(stats: dict[str, CalibStats], names: list[str]) -> CalibStats:
    return CalibStats(torch.stack([stats[n].H for n in names]), torch.stack([stats[n].mean_abs for n in names]),
                      stats[names[0]].n)


def inverse_factors(model: Any, stats: dict[str, CalibStats]) -> dict[tuple[int, ...], compress.InverseFactor]:
    """GPTQ's and SparseGPT's :class:`compress.InverseFactor` of every shape group, computed once for all the
    methods compressed from ``stats`` (pass it to :func:`compress_model`)."""
    return {shape: compress.inverse_factor(_stacked(stats, names).H) for shape, names in shape_groups(model).items()}


def compress_model(model: Any, stats: dict[str, CalibStats], method: Method,
                   factors: dict[tuple[int, ...], compress.InverseFactor] | None = None,
                   errors: bool = True) -> dict[str, float]:
    """Replace every decoder Linear's weight by its compressed version, in place; with ``errors``, the relative
    output error ``tr(D H D^T) / tr(W H W^T)`` of each layer, by name (else an empty dict). Layers of one
    weight shape are compressed together (one batched call: the same arithmetic per layer); GPTQ and
    SparseGPT take their factors from ``factors`` (:func:`inverse_factors`) when given."""
    linears = decoder_linears(model)
    out = {}
    with torch.no_grad():
        for shape, names in shape_groups(model).items():
            W = torch.stack([linears[n].weight.detach().float().cpu() for n in names])      # (L, out, in)
            W_new = compress_weight(W, _stacked(stats, names), method, factors[shape] if factors else None)
            for i, n in enumerate(names):
                if errors:
                    out[n] = compress.relative_error(W[i], W_new[i], stats[n].H)
                linears[n].weight.copy_(W_new[i].to(linears[n].weight))
    return out

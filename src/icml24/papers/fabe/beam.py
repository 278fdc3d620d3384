"""Diverse (group) beam search with a KV cache, batched over inputs x groups x beams.

Vijayakumar et al. (2016), "Diverse Beam Search", Alg. 1, as in Hugging Face's group beam search (transformers
4.x; 5.x moved it to hub code): the ``num_beams`` beams of an input are split into ``G`` groups of ``b`` beams.
At each step the groups are decoded in order; group ``g``'s next-token log-probabilities are lowered by the Hamming
diversity term

    log p(v | y_{<t}) - lambda * #{beams of groups g' < g that chose v at this step},

and each group then takes one step of ordinary beam search on these penalised scores, which accumulate into the
beam scores. Every group keeps ``2b`` candidates (more with several end tokens); a candidate among the top ``b``
that ends (an end token, or the input's length limit) enters the group's finished pool with the score

    s = sum_t (penalised log-prob_t) / (generated tokens, end token included) ** length_penalty,

the pool keeps the best ``b``, and the group stops once its pool is full and its best running beam, normalised by
the current length, cannot beat the pool's worst (transformers' ``early_stopping=False`` heuristic). One group
of ``b`` beams with ``lambda = 0`` is plain beam search (transformers 5's ``_beam_search`` step for step); ``G``
groups of one beam with ``lambda = 0`` are ``G`` copies of one-beam search (greedy until an end token).

Rows are (input, group, beam), the prompt is encoded once per input and its KV cache copied to the ``G b``
rows; finished inputs leave the batch.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Sequence

import numpy as np
import torch
from torch.nn import functional as F

from icml24.common.llm import left_pad

NEG = -1.0e9


class Beams(NamedTuple):
    """K = G b finished hypotheses per input, group-major (group 0's best first).

    Attributes:
        tokens: per input, K generated token lists (a final end token removed).
        scores: (n, K) length-normalised penalised log-probabilities (transformers' ``sequences_scores``).
        lengths: (n, K) generated tokens counted by the normalisation (end token included).
        group: (K,) the group of each column.
    """

    tokens: list[list[list[int]]]
    scores: np.ndarray
    lengths: np.ndarray
    group: np.ndarray


def _forward(model: Any, ids: torch.Tensor, mask: torch.Tensor, pos: torch.Tensor, cache: Any = None) -> tuple[Any, Any]:
    """(logits, KV cache) of one forward; transformers >= 5.2 names the cache ``cache``, older ones
    ``past_key_values``."""
    key = "cache" if _NEW_CACHE_NAME else "past_key_values"
    kw = {key: cache} if cache is not None else {}
    out = model(input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=True, **kw)
    return out.logits, getattr(out, "cache", None) or out.past_key_values


def _new_cache_name() -> bool:
    try:
        import transformers

        major, minor = (int(x) for x in transformers.__version__.split(".")[:2])
        return (major, minor) >= (5, 20)
    except (ImportError, ValueError):
        return False


_NEW_CACHE_NAME = _new_cache_name()


@torch.no_grad()
def diverse_beam_search(model: Any, prompts: Sequence[Sequence[int]], max_new: Sequence[int], eos: Sequence[int],
                        pad_id: int, groups: int = 4, beams: int = 1, penalty: float = 0.0,
                        length_penalty: float = 1.0, device: str = "cpu") -> Beams:
    """Diverse beam search (module docstring) for each prompt, at most ``max_new[i]`` new tokens for input ``i``.

    Args:
        model: an HF causal LM (KV cache with ``reorder_cache``).
        prompts: n token-id lists (left-padded into one batch).
        max_new: (n,) length limit per input (>= 1).
        eos: end token ids.
        groups, beams: G groups of b beams; K = G b hypotheses per input.
        penalty: lambda of the Hamming diversity term.
    """
    n, G, b = len(prompts), groups, beams
    if n == 0:
        return Beams([], np.zeros((0, G * b)), np.zeros((0, G * b), dtype=np.int64), np.repeat(np.arange(G), b))
    limit = torch.as_tensor(list(max_new), dtype=torch.long)
    if int(limit.min()) < 1:
        raise ValueError("max_new must be >= 1 for every input")
    L = int(limit.max())
    eos_t = torch.as_tensor(sorted(set(eos)), dtype=torch.long)
    keep_k = max(2, 1 + len(eos_t)) * b
    GB = G * b

    ids, mask = left_pad(prompts, pad_id)
    pos = (mask.cumsum(1) - 1).clamp(min=0)
    first, cache = _forward(model, ids.to(device), mask.to(device), pos.to(device))
    expand = torch.arange(n).repeat_interleave(GB)
    cache.reorder_cache(expand.to(device))
    logits = first[:, -1].float().cpu()[expand]                         # (N, V)
    mask = mask[expand]
    next_pos = mask.sum(1, keepdim=True)                                     # (N, 1) position of the next token
    V = logits.shape[-1]

    # finished pools, for every input
    pool_s = torch.full((n, G, b), NEG)
    pool_fin = torch.zeros((n, G, b), dtype=torch.bool)
    pool_tok = torch.full((n, G, b, L), pad_id, dtype=torch.long)
    pool_len = torch.zeros((n, G, b), dtype=torch.long)
    # running state, for the active inputs
    act = torch.arange(n)
    run_s = torch.full((n, G, b), NEG)
    run_s[:, :, 0] = 0.0
    hist = torch.zeros((n, G, b, 0), dtype=torch.long)
    unsat = torch.ones((n, G), dtype=torch.bool)

    for t in range(L):
        na = len(act)
        logp = F.log_softmax(logits, -1).view(na, G, b, V)
        lim = limit[act]
        counts = torch.zeros((na, V))
        new_s = torch.empty((na, G, b))
        new_src = torch.empty((na, G, b), dtype=torch.long)
        new_tok = torch.empty((na, G, b), dtype=torch.long)
        any_open = torch.zeros(na, dtype=torch.bool)
        ps, pf, pt, pl = pool_s[act], pool_fin[act], pool_tok[act], pool_len[act]
        for g in range(G):
            acc = (logp[:, g] - penalty * counts[:, None, :] + run_s[:, g, :, None]).reshape(na, b * V)
            top_v, top_i = acc.topk(keep_k, dim=1)                              # (na, keep_k), sorted
            src, tok = top_i // V, top_i % V
            hit = torch.isin(tok, eos_t) | (t + 1 >= lim)[:, None]
            any_open |= ~hit.all(1)
            # the b best candidates that do not end continue
            sel_v, sel_j = (top_v + hit.float() * NEG).topk(b, dim=1)
            new_s[:, g] = sel_v
            new_src[:, g] = src.gather(1, sel_j)
            new_tok[:, g] = tok.gather(1, sel_j)
            # candidates among the top b that end enter the pool (while the group is still open)
            ok = hit & (torch.arange(keep_k) < b)[None, :] & unsat[:, g, None]
            cand = torch.where(ok, top_v / float(t + 1) ** length_penalty, torch.full_like(top_v, NEG))
            merged = torch.cat([ps[:, g], cand], 1)                               # (na, b + keep_k)
            best = merged.topk(b, dim=1).indices
            cand_tok = torch.cat([hist[:, g].gather(1, src[:, :, None].expand(-1, -1, t)), tok[:, :, None]], 2)
            cand_tok = F.pad(cand_tok, (0, L - t - 1), value=pad_id)              # (na, keep_k, L)
            m_tok = torch.cat([pt[:, g], cand_tok], 1)
            m_len = torch.cat([pl[:, g], torch.full((na, keep_k), t + 1)], 1)
            m_fin = torch.cat([pf[:, g], ok], 1)
            ps[:, g] = merged.gather(1, best)
            pt[:, g] = m_tok.gather(1, best[:, :, None].expand(-1, -1, L))
            pl[:, g] = m_len.gather(1, best)
            pf[:, g] = m_fin.gather(1, best)
            # Hamming diversity: tokens chosen by this group's continuing beams
            live = unsat[:, g].float()[:, None].expand(-1, b)
            counts.scatter_add_(1, new_tok[:, g], live)
        pool_s[act], pool_fin[act], pool_tok[act], pool_len[act] = ps, pf, pt, pl
        run_s = new_s
        hist = torch.cat([hist.gather(2, new_src[..., None].expand(-1, -1, -1, t)), new_tok[..., None]], 3)
        best_possible = run_s[:, :, 0] / float(t + 1) ** length_penalty               # (na, G)
        worst = torch.where(pf, ps.min(-1, keepdim=True).values, torch.full_like(ps, NEG))
        unsat = unsat & (best_possible[..., None] > worst).any(-1)
        if not bool(unsat.any()) or not bool(any_open.any()) or t + 1 >= L:
            break
        # inputs whose groups are all done leave the batch
        keep = unsat.any(1) & any_open
        rows = ((torch.arange(na)[:, None, None] * G + torch.arange(G)[None, :, None]) * b + new_src)  # (na, G, b)
        if not bool(keep.all()):
            rows, act, run_s, hist, unsat = rows[keep], act[keep], run_s[keep], hist[keep], unsat[keep]
            new_tok = new_tok[keep]
        flat = rows.reshape(-1)
        cache.reorder_cache(flat.to(device))
        mask = torch.cat([mask[flat], torch.ones((len(flat), 1), dtype=torch.long)], 1)
        next_pos = next_pos[flat]
        step, cache = _forward(model, new_tok.reshape(-1, 1).to(device), mask.to(device), next_pos.to(device), cache)
        logits = step[:, -1].float().cpu()
        next_pos = next_pos + 1

    order = pool_s.argsort(dim=2, descending=True)                                 # best first within a group
    pool_s, pool_len = pool_s.gather(2, order), pool_len.gather(2, order)
    pool_tok = pool_tok.gather(2, order[..., None].expand(-1, -1, -1, L))
    eos_set = set(eos_t.tolist())
    tokens: list[list[list[int]]] = []
    for i in range(n):
        row = []
        for g in range(G):
            for k in range(b):
                seq = pool_tok[i, g, k, :int(pool_len[i, g, k])].tolist()
                row.append(seq[:-1] if seq and seq[-1] in eos_set else seq)
        tokens.append(row)
    return Beams(tokens, pool_s.reshape(n, GB).numpy().astype(np.float64), pool_len.reshape(n, GB).numpy(),
                 np.repeat(np.arange(G), b))

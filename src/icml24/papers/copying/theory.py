"""The paper's theory made executable (Section 2): the hand-built 2-layer copying transformer and
finite-state GSSMs, with both error bounds.

* :func:`ngram_hash` and :func:`construction_predict` build the depth-2 transformer of Theorem 2.3
  by hand (no training): layer 1 uses Hard-ALiBi heads to write the last ``n`` tokens of every
  position into its residual stream (the n-gram "hash"); layer 2 lets each output position attend to
  the earlier position whose preceding n-gram equals its own, and emits the token found there.
* :func:`copy_error_upper_bound` is the theorem's error bound, ``L^2 / |D|^n``; the construction
  fails only when an n-gram of the input repeats (a birthday event).
* :class:`PrefixStoreGSSM` and :func:`random_gssm_success` are generalized state space models
  (Definition 2.1: finite state set ``S``, update ``u: S x D -> S``, output from the state alone);
  :func:`gssm_error_lower_bound` is Theorem 2.7, ``1 - |S| / |D|^L`` for uniform strings of length L.

Token ids (shared with :mod:`tasks`): letters ``0..D-1``, then ``$`` (BOS) ``= D``, ``|`` (SEP)
``= D+1``, ``.`` (EOS) ``= D+2``, ``*`` (PAD) ``= D+3``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import torch


def copy_error_upper_bound(L: int | np.ndarray, n: int, D: int) -> np.ndarray:
    """Theorem 2.3's bound on the construction's copy error, ``min(1, L^2 / D^n)``.

    It is a union bound over pairs of positions whose n-grams coincide (each pair collides with
    probability ``D^-n`` for uniform strings, overlapping or not).

    >>> float(copy_error_upper_bound(26, 2, 26))
    1.0
    >>> float(copy_error_upper_bound(100, 4, 10))
    1.0
    >>> round(float(copy_error_upper_bound(10, 4, 10)), 4)
    0.01
    """
    L = np.asarray(L, dtype=np.float64)
    return np.minimum(1.0, L ** 2 / float(D) ** n)


def gssm_error_lower_bound(L: int | np.ndarray, n_states: float, D: int) -> np.ndarray:
    """Theorem 2.7: any GSSM with ``|S| = n_states`` errs on uniform length-L strings w.p. >= this.

    ``max(0, 1 - |S| / D^L)``, computed in log space so large L do not overflow.

    >>> float(gssm_error_lower_bound(3, 8, 2))   # 8 states can hold every 3-bit string
    0.0
    >>> float(gssm_error_lower_bound(4, 8, 2))
    0.5
    """
    L = np.asarray(L, dtype=np.float64)
    log_ratio = math.log(n_states) - L * math.log(D)  # log(|S| / D^L)
    return np.maximum(0.0, -np.expm1(np.minimum(log_ratio, 0.0))) + 0.0  # + 0.0 turns -0.0 into 0.0


# -- the hand-built transformer (Theorem 2.3, Appendix proof) ------------------------------------
def boundary_embedding(tokens: torch.Tensor, D: int) -> torch.Tensor:
    """Token embedding of the construction: one-hot letters, BOS and SEP share a "boundary" channel.

    Args:
        tokens: (B, T) int ids. Returns (B, T, D+1) float64; EOS and PAD embed to 0.
    """
    letters = torch.nn.functional.one_hot(tokens.clamp(max=D), D + 1).to(torch.float64)  # (B, T, D+1)
    is_boundary = (tokens == D) | (tokens == D + 1)  # $ and |
    is_letter = tokens < D
    letters[..., D] = is_boundary.to(torch.float64)
    return letters * (is_letter | is_boundary).unsqueeze(-1)


def hard_alibi_window_mean(x: torch.Tensor, window: int) -> torch.Tensor:
    """A Hard-ALiBi head with uniform scores: position t averages the values at ``[t-window+1, t]``.

    Computed over the window only (the dense masked softmax is :func:`model.hard_alibi_mask`; a test
    checks both agree). Near the start the window is clipped to the positions that exist.

    Args:
        x: (B, T, C) values. Returns (B, T, C).

    >>> hard_alibi_window_mean(torch.tensor([[[1.0], [3.0], [5.0]]]), 2)[0, :, 0]
    tensor([1., 2., 4.])
    """
    csum = torch.cumsum(x, dim=1)  # (B, T, C)
    shifted = torch.nn.functional.pad(csum, (0, 0, window, 0))[:, : x.shape[1]]  # csum[t - window]
    t = torch.arange(1, x.shape[1] + 1, dtype=x.dtype, device=x.device)
    count = torch.clamp(t, max=window).view(1, -1, 1)  # keys in the (clipped) window
    return (csum - shifted) / count


class NgramHash(NamedTuple):
    """Output of layer 1 of the construction."""

    hash: torch.Tensor  # (B, T, n*(D+1)): slot j holds the token at lag j, zeroed beyond a boundary
    lag_tokens: torch.Tensor  # (B, T, n, D+1): the raw tokens at lags 0..n-1 (zero before the start)


def ngram_hash(tokens: torch.Tensor, n: int, D: int) -> NgramHash:
    """Layer 1: write the last ``n`` tokens of every position into its residual stream.

    Head j (j = 0..n-1) is a Hard-ALiBi head with window j+1 and uniform scores, so it returns the
    mean of the embeddings at lags 0..j; times the window size that is the window sum ``S_j``, and the
    token at lag j is ``S_j - S_{j-1}`` (exact, O(log L)-bit numbers). A ReLU MLP then zeroes every
    slot older than the most recent boundary token (``$`` or ``|``):
    ``slot_j = relu(tok_j - #boundaries at lags < j)``. The hash of a position is the concatenation of
    its slots, so two positions have equal hashes iff they end the same n-gram since the last boundary.

    Args:
        tokens: (B, T) int ids.
    """
    e = boundary_embedding(tokens, D)  # (B, T, D+1)
    T = tokens.shape[1]
    t = torch.arange(1, T + 1, dtype=torch.float64).view(1, -1, 1)
    sums = [hard_alibi_window_mean(e, j + 1) * torch.clamp(t, max=j + 1) for j in range(n)]  # S_j
    lag = [sums[0]] + [sums[j] - sums[j - 1] for j in range(1, n)]  # tok_j, each (B, T, D+1)
    slots = []
    for j in range(n):
        seen = sums[j - 1][..., D:] if j > 0 else torch.zeros_like(e[..., D:])  # boundaries at lags < j
        slots.append(torch.relu(lag[j] - seen))
    return NgramHash(torch.cat(slots, dim=-1), torch.stack(lag, dim=2))


def construction_logits(tokens: torch.Tensor, n: int, D: int, beta: float = 100.0,
                        first_query: int = 0) -> torch.Tensor:
    """Both layers of the construction on a full sequence (teacher forcing); (B, T', D+4) outputs.

    Layer 2 (one head): the query at t is ``hash_t``; the key at s is ``hash_{s-1}`` (moved one
    step by a Hard-ALiBi window-2 head), the value at s is the one-hot token at s; causal mask s <= t;
    scores ``beta * <q_t, k_s>`` (the number of agreeing slots; the maximum is reached exactly by the
    positions whose preceding n-gram equals the current one). The output is the attention-weighted
    value: the token that followed the current n-gram earlier in the context. Layer 2 runs in float32
    (its scores are small integers, exact there); only query rows ``t >= first_query`` are computed,
    so T' = T - first_query.
    """
    V = D + 4
    h = ngram_hash(tokens, n, D).hash.to(torch.float32)  # (B, T, n(D+1)), entries 0/1
    keys = torch.nn.functional.pad(h, (0, 0, 1, 0))[:, :-1]  # k_s = hash_{s-1}; k_0 = 0
    vals = torch.nn.functional.one_hot(tokens, V).to(torch.float32)  # (B, T, V)
    scores = beta * torch.einsum("btc,bsc->bts", h[:, first_query:], keys)  # (B, T', T)
    T = tokens.shape[1]
    causal = torch.ones(T, T, dtype=torch.bool).tril()[first_query:]  # (T', T)
    scores = scores.masked_fill(~causal, -math.inf)
    return torch.softmax(scores, dim=-1) @ vals  # (B, T', V)


def construction_copy_correct(strings: np.ndarray, n: int, D: int, beta: float = 100.0) -> np.ndarray:
    """Whether the construction copies each string exactly (all L answer tokens right).

    Runs ``$ x | x`` through :func:`construction_logits` once (teacher forcing). A string is copied
    exactly by greedy decoding iff every teacher-forced prediction is right: up to the first error
    both see the same prefix, so both fail at the same place. A test checks this against
    :func:`construction_generate`.

    Args:
        strings: (B, L) int letters in ``[0, D)``. Returns (B,) bool.
    """
    B, L = strings.shape
    x = torch.as_tensor(strings, dtype=torch.long)
    seq = torch.cat([torch.full((B, 1), D), x, torch.full((B, 1), D + 1), x], dim=1)  # $ x | x
    probs = construction_logits(seq, n, D, beta, first_query=L + 1)  # (B, L+1, V), from the "|" on
    pred = probs[:, :L].argmax(-1)  # predictions for the L answer tokens
    return (pred == x).all(dim=1).numpy()


def construction_generate(strings: np.ndarray, n: int, D: int, beta: float = 100.0) -> np.ndarray:
    """Free greedy decoding with the construction: feed ``$ x |`` and append argmax L times; (B, L)."""
    B, L = strings.shape
    seq = torch.cat([torch.full((B, 1), D), torch.as_tensor(strings, dtype=torch.long),
                     torch.full((B, 1), D + 1)], dim=1)
    for _ in range(L):
        nxt = construction_logits(seq, n, D, beta, first_query=seq.shape[1] - 1)[:, -1].argmax(-1, keepdim=True)
        seq = torch.cat([seq, nxt], dim=1)
    return seq[:, L + 2:].numpy()


def construction_copy_error(n: int, L: int, D: int, n_strings: int, rng: np.random.Generator,
                            batch: int = 64) -> float:
    """Monte Carlo copy error of the construction on ``n_strings`` uniform strings of length L."""
    wrong = 0
    for start in range(0, n_strings, batch):
        b = min(batch, n_strings - start)
        wrong += int((~construction_copy_correct(rng.integers(0, D, size=(b, L)), n, D)).sum())
    return wrong / n_strings


def has_repeated_ngram(strings: np.ndarray, n: int) -> np.ndarray:
    """(B,) bool: some n-gram occurs twice in the string (the only way the construction can fail).

    >>> has_repeated_ngram(np.array([[0, 1, 0, 1], [0, 1, 2, 3]]), 2)
    array([ True, False])
    """
    B, L = strings.shape
    base = int(strings.max(initial=0)) + 1
    codes = sum(strings[:, j: L - n + 1 + j].astype(np.int64) * base ** (n - 1 - j) for j in range(n))
    s = np.sort(codes, axis=1)  # (B, L-n+1)
    return (s[:, 1:] == s[:, :-1]).any(axis=1)


# -- generalized state space models (Definition 2.1, Theorem 2.7) ----------------------------------
class PrefixStoreGSSM:
    """The best GSSM with ``|S| = D^k`` states: it stores the first k tokens and guesses the rest.

    Update ``u(s, x)`` appends x to the stored prefix until k tokens are held; the output reads the
    stored tokens back and then emits a fixed guess (token 0). After the input it can be in ``D^k``
    states, and it copies a uniform string iff its last ``L-k`` tokens equal the guess, so its error
    is exactly ``1 - D^k / D^L``: Theorem 2.7's bound holds with equality.
    """

    def __init__(self, D: int, k: int):
        self.D, self.k = D, k

    @property
    def n_states(self) -> int:
        """Reachable states after the input (the ones the bound counts)."""
        return self.D ** self.k

    def copy(self, strings: np.ndarray) -> np.ndarray:
        """Run the automaton over (B, L) strings; returns its (B, L) output."""
        B, L = strings.shape
        state = np.zeros((B, 0), dtype=strings.dtype)
        for t in range(L):  # u(s, x_t)
            if state.shape[1] < self.k:
                state = np.concatenate([state, strings[:, t: t + 1]], axis=1)
        guess = np.zeros((B, max(0, L - state.shape[1])), dtype=strings.dtype)
        return np.concatenate([state, guess], axis=1)[:, :L]


def all_strings(D: int, L: int) -> np.ndarray:
    """Every string of length L over D letters, (D^L, L), lexicographic.

    >>> all_strings(2, 2).tolist()
    [[0, 0], [0, 1], [1, 0], [1, 1]]
    """
    grid = np.indices((D,) * L).reshape(L, -1).T
    return grid.astype(np.int64)


def exact_copy_error(outputs: np.ndarray, strings: np.ndarray) -> float:
    """Exact copy error when ``strings`` is the whole uniform sample space (every string once)."""
    return float(np.mean(~(outputs == strings).all(axis=1)))


def random_gssm_success(update: np.ndarray, L: int) -> float:
    """Exact best success probability of a GSSM with transition table ``update`` (|S|, D) on length L.

    The output after the separator depends on the state alone, so for each reachable final state at
    most one input string (of those mapped to it) can be copied: with the best readout the success
    probability is ``#distinct final states / D^L`` (computed over all D^L strings from state 0).
    """
    S, D = update.shape
    strings = all_strings(D, L)  # (D^L, L)
    state = np.zeros(len(strings), dtype=np.int64)
    for t in range(L):
        state = update[state, strings[:, t]]  # u(s, x_t)
    return len(np.unique(state)) / float(D) ** L

"""Tests of the copying paper: the hand-built construction, the GSSM bounds, the models and tasks."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from icml24.papers.copying import theory as th


# -- theory: the construction (Theorem 2.3) ------------------------------------------------------
def test_ngram_hash_holds_the_last_n_tokens_until_the_boundary():
    D, n = 5, 3
    seq = torch.tensor([[D, 0, 1, 2, D + 1, 3]])  # $ a b c | d
    out = th.ngram_hash(seq, n, D)
    slots = out.hash.view(1, 6, n, D + 1)
    # position of "c" (t=3): lags 0,1,2 are c, b, a
    assert slots[0, 3].argmax(-1).tolist() == [2, 1, 0] and slots[0, 3].sum().item() == 3
    # position of "|" (t=4): slot 0 is the boundary channel, older slots are zeroed by the ReLU gate
    assert slots[0, 4, 0, D].item() == 1 and slots[0, 4, 1:].abs().sum().item() == 0
    # position of "d" (t=5): d, boundary, then nothing
    assert slots[0, 5, 0, 3].item() == 1 and slots[0, 5, 1, D].item() == 1 and slots[0, 5, 2].sum().item() == 0
    # the raw lag tokens are exact, including zeros before the start
    assert out.lag_tokens[0, 0, 1:].abs().sum().item() == 0
    assert torch.equal(out.lag_tokens[0, 5, 2], th.boundary_embedding(seq, D)[0, 3])


def _hand_mask(T: int, i: int) -> torch.Tensor:
    """Hard-ALiBi head i written out by loops: query t may see key s iff t - i <= s <= t."""
    m = torch.zeros(T, T, dtype=torch.bool)
    for t in range(T):
        for s in range(T):
            m[t, s] = t - i <= s <= t
    return m


def test_window_mean_equals_dense_hard_alibi_attention():
    x = torch.randn(2, 9, 4, dtype=torch.float64)
    for w in (1, 2, 4):
        mask = _hand_mask(9, w - 1)
        att = torch.softmax(torch.zeros(9, 9, dtype=torch.float64).masked_fill(~mask, -math.inf), -1)
        assert torch.allclose(th.hard_alibi_window_mean(x, w), att @ x)


def test_construction_copies_exactly_unless_an_ngram_repeats():
    rng = np.random.default_rng(0)
    D = 26
    for n, L in ((2, 12), (3, 40), (4, 60)):
        s = rng.integers(0, D, size=(300, L))
        ok = th.construction_copy_correct(s, n, D)
        rep = th.has_repeated_ngram(s, n)
        assert ok[~rep].all(), "a string without a repeated n-gram must be copied exactly"
        assert (~ok).mean() <= th.copy_error_upper_bound(L, n, D) + 0.02


def _de_bruijn(k: int, n: int) -> list[int]:
    """The de Bruijn sequence B(k, n): every n-gram over k letters occurs once (cyclically)."""
    a, seq = [0] * k * n, []

    def db(t, p):
        if t > n:
            if n % p == 0:
                seq.extend(a[1: p + 1])
        else:
            a[t] = a[t - p]
            db(t + 1, p)
            for j in range(a[t - p] + 1, k):
                a[t] = j
                db(t + 1, t)

    db(1, 1)
    return seq


def test_construction_copies_a_string_far_longer_than_its_width():
    D, n = 10, 2
    s = np.array([_de_bruijn(D, n)])  # length 100 = D^n, every bigram once: width n(D+1) = 22
    assert s.shape[1] == 100 and not th.has_repeated_ngram(s, n)[0]
    assert th.construction_copy_correct(s, n, D)[0]
    assert np.array_equal(th.construction_generate(s[:, :30], n, D), s[:, :30])


def test_teacher_forced_exactness_equals_free_greedy_copying():
    rng = np.random.default_rng(1)
    s = rng.integers(0, 4, size=(40, 10))  # small alphabet: many repeats, many failures
    tf = th.construction_copy_correct(s, 2, 4)
    gen = th.construction_generate(s, 2, 4)
    assert 0 < tf.sum() < len(tf)
    assert np.array_equal(tf, (gen == s).all(axis=1))


def test_error_bound_values():
    assert th.copy_error_upper_bound(10, 2, 10) == pytest.approx(1.0)
    assert th.copy_error_upper_bound(5, 2, 10) == pytest.approx(0.25)
    assert th.gssm_error_lower_bound(2, 3, 2) == pytest.approx(0.25)
    assert th.gssm_error_lower_bound(1000, 2.0 ** 100, 26) == pytest.approx(1.0)


# -- theory: GSSMs (Theorem 2.7) ------------------------------------------------------------------
def test_prefix_store_gssm_meets_the_lower_bound_with_equality():
    D = 3
    for L in range(1, 7):
        strings = th.all_strings(D, L)
        for k in range(0, 5):
            m = th.PrefixStoreGSSM(D, k)
            err = th.exact_copy_error(m.copy(strings), strings)
            assert err == pytest.approx(float(th.gssm_error_lower_bound(L, m.n_states, D)), abs=1e-12)


def test_random_gssms_never_beat_the_lower_bound():
    rng = np.random.default_rng(2)
    for _ in range(30):
        S, D, L = int(rng.integers(2, 40)), int(rng.integers(2, 4)), int(rng.integers(1, 7))
        update = rng.integers(0, S, size=(S, D))
        err = 1 - th.random_gssm_success(update, L)
        assert err >= float(th.gssm_error_lower_bound(L, S, D)) - 1e-12

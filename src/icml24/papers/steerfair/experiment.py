"""Experiment of SteerFair: ``run(config, seed)`` and the figures.

Per seed, two parts (each a checkpointed stage):

(a) ``small``: a small Llama trained from scratch on the generated task (task.py) whose training
    questions carry the gold answer at option A with probability ``bias``. Evaluation: every test
    question in each of its K cyclic orderings (gold at A, B, ...); accuracy per gold position, its
    mean and its standard deviation over the K positions (population std, ddof 0), for
    ``none`` (no intervention), ``steerfair`` (unsupervised, from ``unlabelled`` questions, oriented
    by ``orient``: by default label-free, from the model's own answers on the unlabelled questions in
    every cyclic ordering, steer.py), ``sf_official`` (the same directions with the official code's
    sign, scikit-learn's), ``random`` (random unit directions on SteerFair's heads), ``iti100`` and
    ``iti500`` (supervised, from ``labels_small`` / ``labels_large`` labelled questions; the small set
    is the first part of the large one). Every method steers ``k`` heads; SteerFair, its variants and
    the random control at strength ``alpha``, the ITI baselines at their own strength, chosen per seed
    from ``iti_alphas`` by mean accuracy on their labelled questions in every ordering (``alpha_iti*``).
    Diagnostic: the mean signed cosine between a method's direction and the "position direction" of
    each steered head (mean activation at the answer token with the gold at A minus with the gold
    elsewhere, over the test questions: the direction that carries the A-preference, found with the
    labels), ``cos_<method>`` (> 0: subtracting the direction removes A-preference) and its absolute
    value ``abscos_<method>``; and ``sf_oracle_sign``, SteerFair's directions and heads with each
    head's sign set by that labelled direction (not a method: it measures what the orientation costs).
(b) ``llm``: SmolLM2-135M-Instruct (or the model at ``llm_path``) on generated two-option questions
    (questions.py) in both orders: share of "A" answers over the two orderings, accuracy per
    gold position, for ``none``, ``steerfair`` and ``random`` (``llm_k`` heads). SteerFair is oriented
    as in (a), from the model's answers to the unlabelled questions in both orders; its strength is
    ``llm_alpha`` or, at 0, chosen per seed from ``llm_alphas`` without labels: the value whose share
    of "A" answers on ``llm_heldout`` further unlabelled questions (both orders) is closest to 1/2
    (``llm_alpha``); the random control steers the same heads at the same strength. Every prompt runs
    once without its last token (``llm.cache_prompts``; the chat template's system turn, which every prompt
    starts with, once for all of them); each read of it (steered, recorded, or followed by a
    demonstration's forced answer) runs only the tokens from its last on, over that key-value cache:
    steering and recording act at the last position, which no earlier position attends to.
"""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import Any, Callable, ContextManager, NamedTuple

import numpy as np
import torch

from icml24.common import llm
from icml24.core import streams
from icml24.core.context import RunContext
from icml24.core.results import RunResult, SeedResult, StageOut
from icml24.papers.steerfair import questions, task
from icml24.papers.steerfair.config import FULL, QUICK, SEEDS, SMOKE, Config, validate
from icml24.papers.steerfair.model import choose, train
from icml24.papers.steerfair.steer import Directions, answer_direction, iti, random_directions, steerfair

__all__ = ["Config", "SMOKE", "QUICK", "FULL", "SEEDS", "validate", "run", "figures", "small_stage", "llm_stage",
           "METHODS", "LLM_METHODS"]

METHODS = ("none", "steerfair", "sf_official", "random", "iti100", "iti500", "sf_oracle_sign")
LLM_METHODS = ("none", "steerfair", "random")


class _Read(NamedTuple):
    """One read of the LLM over cached prompts (``llm_stage``)."""

    logp: np.ndarray    # (n, V) next-token log-probabilities after each prompt (and its suffix)
    heads: np.ndarray   # (n, L, H, d) the heads' outputs at the last token


def _steered(model: torch.nn.Module, d: Directions | None, alpha: float) -> Callable[[], ContextManager]:
    return (lambda: nullcontext()) if d is None else (lambda: llm.steering(model, d.u, d.mask, alpha))


def small_stage(config: Config, seed: int) -> StageOut:
    """Part (a) (module docstring): data and directions from the seed's stream "small", the model's
    initialisation and batches from "small_model"."""
    rng = streams.rng(seed, "small")
    gen = streams.torch_generator(seed, "small_model")
    K = config.options
    vocab = task.Vocab(K, config.categories, config.items)
    cat = task.category_map(rng, vocab)
    train_qs = task.sample(rng, config.train_questions, vocab, cat, task.zipf_weights(config.items, config.zipf),
                           config.bias)
    uniform = task.zipf_weights(config.items, 0.0)
    test = task.sample(rng, config.test_questions, vocab, cat, uniform, None)
    unlabelled = task.sample(rng, config.unlabelled, vocab, cat, uniform, None)
    labelled = task.sample(rng, config.labels_large, vocab, cat, uniform, None)
    seqs = task.training_sequences(train_qs, vocab)
    model = llm.tiny_llama(vocab=vocab.size, hidden=config.hidden, layers=config.layers, heads=config.heads,
                           max_len=seqs.shape[1], seed=int(gen.initial_seed() % 2**31)).to(config.device)
    log = train(model, seqs, seqs.shape[1] - 3, config.steps, config.batch, config.lr, gen, config.device)
    letters = [task.LETTER0 + k for k in range(K)]
    orderings = [task.gold_at(test, p) for p in range(K)]
    by_position = [task.prompts(q, vocab).tolist() for q in orderings]

    def acts(rows: np.ndarray) -> np.ndarray:
        return llm.record_heads(model, rows.tolist(), task.PAD, 256, config.device)   # (n, L, H, d)

    rules = [acts(task.demonstrations(unlabelled, vocab, r)) for r in range(K)]
    # the label-free orientation: the model's own answers on the unlabelled questions in every cyclic ordering
    unl_prompts = np.concatenate([task.prompts(task.rotate(unlabelled, s), vocab) for s in range(K)])
    own = answer_direction(acts(unl_prompts), choose(model, unl_prompts.tolist(), letters, task.PAD, 256,
                                                     config.device))
    sf = steerfair(rules, config.components, config.k, config.orient, own.b)
    directions: dict[str, Directions | None] = {
        "none": None, "steerfair": sf,
        "sf_official": steerfair(rules, config.components, config.k, "official"),
        "random": random_directions(sf.mask, sf.u.shape[-1], rng)}
    alphas = {tag: config.alpha for tag in directions}

    def accuracy(qs: task.Questions, d: Directions | None, alpha: float) -> np.ndarray:
        """(K,) accuracy with the gold answer at each position, steered by d at strength alpha."""
        acc = np.zeros(K)
        for p in range(K):
            q = task.gold_at(qs, p)
            with _steered(model, d, alpha)():
                acc[p] = float(np.mean(choose(model, task.prompts(q, vocab).tolist(), letters, task.PAD, 256,
                                              config.device) == p))
        return acc

    wrong = (labelled.gold + rng.integers(1, K, len(labelled.gold))) % K
    correct_acts = acts(np.concatenate([task.prompts(labelled, vocab), task.answers(labelled, vocab)], 1))
    wrong_acts = acts(np.concatenate([task.prompts(labelled, vocab), task.answers(labelled, vocab, wrong)], 1))
    for tag, n in (("iti100", config.labels_small), ("iti500", config.labels_large)):
        directions[tag] = di = iti(correct_acts[:n], wrong_acts[:n], config.k, rng)
        # ITI's own strength: the grid value with the best mean accuracy on its n labelled questions, every ordering
        sub = task.Questions(labelled.category[:n], labelled.options[:n], labelled.gold[:n])
        dev = [accuracy(sub, di, a).mean() for a in config.iti_alphas]
        alphas[tag] = float(config.iti_alphas[int(np.argmax(dev))])

    # the position direction of the diagnostic: answer-token activations, gold at A minus gold elsewhere
    ans = [acts(np.asarray(p)) for p in by_position]                          # K x (n, L, H, d)
    position_dir = ans[0].mean(0) - np.mean([a.mean(0) for a in ans[1:]], axis=0)        # (L, H, d)
    position_dir /= np.linalg.norm(position_dir, axis=-1, keepdims=True).clip(1e-12)

    # diagnostic only (uses the labels): SteerFair's directions with each head's sign set so that subtracting
    # removes the A-preference; how much of SteerFair's result is the orientation of its directions
    flip = np.where(np.sum(sf.u * position_dir, -1, keepdims=True) < 0, -1.0, 1.0)
    directions["sf_oracle_sign"] = Directions(sf.u * flip, sf.mask)
    alphas["sf_oracle_sign"] = config.alpha

    metrics: dict[str, float] = {"train_loss": float(np.mean(log.loss[-50:])), "own_letter": float(own.letter)}
    curves: dict[str, list[float]] = {"train_loss": log.loss}
    for tag, d in directions.items():
        acc = np.zeros(K)
        share_a = 0.0
        if tag.startswith("iti"):
            metrics[f"alpha_{tag}"] = alphas[tag]
        for p, (q, prompts) in enumerate(zip(orderings, by_position)):
            with _steered(model, d, alphas[tag])():
                pred = choose(model, prompts, letters, task.PAD, 256, config.device)
            acc[p] = float(np.mean(pred == q.gold))
            share_a += float(np.mean(pred == 0)) / K
        metrics[f"acc_mean_{tag}"] = float(acc.mean())
        metrics[f"acc_std_{tag}"] = float(acc.std())
        metrics[f"share_a_{tag}"] = share_a
        for p in range(K):
            metrics[f"acc_pos{p}_{tag}"] = float(acc[p])
        curves[f"acc_by_position_{tag}"] = acc.tolist()
        if d is not None:
            cos = np.sum(d.u * position_dir, -1)[d.mask]          # > 0: subtracting u removes the A-preference
            metrics[f"cos_{tag}"] = float(cos.mean())
            metrics[f"abscos_{tag}"] = float(np.abs(cos).mean())
    return StageOut(metrics, curves)


def load_llm(config: Config, ctx: RunContext) -> llm.LM:
    """SmolLM2 from its wheel (converted once into the artefact cache), or the model at ``llm_path``."""
    return llm.load_lm(Path(config.llm_path), ctx.device) if config.llm_path else llm.smollm2(ctx)


def llm_stage(config: Config, seed: int, ctx: RunContext) -> StageOut:
    """Part (b) (module docstring): questions and random directions from the seed's stream "llm"."""
    rng = streams.rng(seed, "llm")
    lm: Any = load_llm(config, ctx)
    tok, model = lm.tokenizer, lm.model
    pad = llm.pad_id(tok)
    letters = questions.letter_ids(tok)
    test = questions.sample(rng, config.llm_test)
    unlabelled = questions.sample(rng, config.llm_unlabelled)
    heldout = questions.sample(rng, config.llm_heldout)
    both = (unlabelled, questions.swap(unlabelled))                       # the two cyclic orderings
    sites = llm.head_sites(model)

    def cached(qs: questions.TwoOption) -> llm.PromptCache:
        """The prompts of qs, all but their last token run once: each (steered) read costs the tokens after."""
        return llm.cache_prompts(model, questions.prompt_ids(tok, qs), pad, config.llm_batch, ctx.device)

    def read(prompts: llm.PromptCache, suffixes: list[list[int]] | None = None) -> _Read:
        """The next-token distribution after each prompt (and its suffix), and the heads there."""
        with llm.Recorder([s.module for s in sites]) as rec:
            logp = llm.cached_next_token_logprobs(model, prompts, ctx.device, suffixes).numpy()
        return _Read(logp, rec.stack().reshape(len(logp), len(sites), sites[0].n_heads, sites[0].d_head))

    def chosen(logp: np.ndarray) -> np.ndarray:
        """(n,) the option whose letter is likelier, from (n, V) next-token log-probabilities."""
        return logp[:, letters].argmax(1)

    def answers(prompts: llm.PromptCache, d: Directions | None, alpha: float) -> np.ndarray:
        """(n,) the option chosen after each prompt, steered by d at strength alpha."""
        with _steered(model, d, alpha)():
            return chosen(llm.cached_next_token_logprobs(model, prompts, ctx.device).numpy())

    unl = [cached(q) for q in both]
    # SteerFair's demonstrations: each unlabelled question followed by rule r's forced answer
    rules = [np.concatenate([read(p, questions.answer_suffixes(tok, q, r)).heads for p, q in zip(unl, both)])
             for r in (0, 1)]
    # the label-free orientation: the model's own answers to the unlabelled questions in both orders
    own_reads = [read(p) for p in unl]
    own_answers = np.concatenate([chosen(o.logp) for o in own_reads])
    own = answer_direction(np.concatenate([o.heads for o in own_reads]), own_answers)
    sf = steerfair(rules, config.components, config.llm_k, config.orient, own.b)

    def share_a(prompts: list[llm.PromptCache], alpha: float) -> float:
        """Share of 'A' answers after the prompts (no label read), steered by SteerFair at strength alpha."""
        return float(np.mean(np.concatenate([answers(p, sf, alpha) for p in prompts]) == 0))

    alpha = config.llm_alpha
    if alpha == 0:      # chosen per seed, label-free: the share of "A" on held-out unlabelled questions closest to 1/2
        held = [cached(q) for q in (heldout, questions.swap(heldout))]                    # both orders
        gaps = [abs(share_a(held, a) - 0.5) for a in config.llm_alphas]
        alpha = float(config.llm_alphas[int(np.argmin(gaps))])
    directions: dict[str, Directions | None] = {
        "none": None, "steerfair": sf, "random": random_directions(sf.mask, sf.u.shape[-1], rng)}
    metrics: dict[str, float] = {"llm_alpha": alpha, "llm_own_letter": float(own.letter),
                                 "llm_share_a_unlabelled": float(np.mean(own_answers == 0))}
    curves: dict[str, list[float]] = {}
    by_position = [questions.gold_at(test, p) for p in (0, 1)]
    test_prompts = [cached(q) for q in by_position]
    for tag, d in directions.items():
        acc, share = np.zeros(2), 0.0
        for p, (q, prompts) in enumerate(zip(by_position, test_prompts)):
            pred = answers(prompts, d, alpha)
            acc[p] = float(np.mean(pred == q.gold))
            share += float(np.mean(pred == 0)) / 2
        metrics[f"llm_acc_{tag}"] = float(acc.mean())
        metrics[f"llm_acc_pos0_{tag}"], metrics[f"llm_acc_pos1_{tag}"] = float(acc[0]), float(acc[1])
        metrics[f"llm_share_a_{tag}"] = share
        metrics[f"llm_imbalance_{tag}"] = abs(share - 0.5)
        curves[f"llm_acc_by_position_{tag}"] = acc.tolist()
    return StageOut(metrics, curves)


def run(config: Config, seed: int, ctx: RunContext | None = None) -> SeedResult:
    """One seed: part (a) and, with ``llm``, part (b) (module docstring)."""
    ctx = ctx or RunContext.local(config.device)
    with ctx.threads(config.threads):
        torch.manual_seed(streams.int_seed(seed, "torch_global"))     # for any draw without a generator
        outs = [ctx.stage("small", small_stage, config, seed)]
        if config.llm:
            outs.append(ctx.stage("llm", llm_stage, config, seed, ctx))
    return SeedResult.from_stages(seed, outs)


def figures(result: RunResult) -> dict:
    """Accuracy by the gold answer's position, before and after steering, for both models."""
    import matplotlib.pyplot as plt

    out = {}
    for key, prefix, methods, title in (
            ("accuracy_by_position", "acc_by_position_", METHODS, "(a) small Llama, generated task"),
            ("llm_accuracy_by_position", "llm_acc_by_position_", LLM_METHODS, "(b) SmolLM2-135M-Instruct")):
        if f"{prefix}none" not in result.curve_names():
            continue
        fig, ax = plt.subplots(figsize=(6, 3.6))
        K = result.curve(f"{prefix}none").shape[1]
        width = 0.8 / len(methods)
        for j, tag in enumerate(methods):
            acc = result.curve(f"{prefix}{tag}")                             # (seeds, K)
            ax.bar(np.arange(K) + (j - (len(methods) - 1) / 2) * width, acc.mean(0), width,
                   yerr=acc.std(0), capsize=2, label=tag)
        ax.set_xticks(np.arange(K), [f"gold at {chr(65 + p)}" for p in range(K)])
        ax.set_ylabel("accuracy (mean, std over seeds)")
        ax.set_ylim(0, 1)
        ax.set_title(f"{title}: accuracy by ordering", fontsize=9)
        ax.legend(fontsize=7, ncol=len(methods))
        fig.tight_layout()
        out[key] = fig
    return out

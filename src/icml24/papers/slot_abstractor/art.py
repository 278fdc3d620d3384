"""The ART tasks (Webb et al. 2021, ESBN), generated here: 100 glyphs, four rule tasks, the m-holdout.

The official Slot Abstractor code imports the ESBN generators without shipping them, so they are written here
from their definitions (shape identity only):

* ``sd`` (same/different): one panel with two objects; the answer is whether they are the same shape (binary).
* ``rmts`` (relational match-to-sample): a source pair (same or different) and two target pairs, one with the
  source's relation; each candidate is one panel of four objects (source pair on top, target pair below).
* ``dist3`` (distribution of three): row 1 holds shapes A B C, row 2 a permutation of them with the last one
  missing; four candidate shapes (the missing one and three others).
* ``id`` (identity rules): row 1 follows one of ABA, AAB, ABB, AAA; row 2 follows the same rule with new shapes,
  the last one missing; four candidate shapes.

A problem is a set of candidates; each candidate is a sequence of panels (images with at most four objects in
the quadrants, in reading order, each jittered). The dist3 and id rows are one panel each (three objects), so a
candidate is two panels; rmts and sd have one. Glyphs: 100 characters of matplotlib's DejaVu Sans from the
Greek, Cyrillic, arrow, mathematical, geometric-shape and dingbat ranges, chosen greedily (in a fixed order)
so that every pair differs by a mean absolute pixel difference of at least 0.15 at 10 px.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

TASKS = ("sd", "rmts", "dist3", "id")
N_CANDIDATES = {"sd": 1, "rmts": 2, "dist3": 4, "id": 4}
"""Scored sequences per problem (sd: one sequence and a same/different logit)."""
N_PANELS = {"sd": 1, "rmts": 1, "dist3": 2, "id": 2}
"""Panels per candidate sequence."""
MAX_OBJECTS = {"sd": 2, "rmts": 4, "dist3": 3, "id": 3}
"""Most objects in one panel of the task."""
CHANCE = {"sd": 0.5, "rmts": 0.5, "dist3": 0.25, "id": 0.25}
MIN_SHAPES = {"sd": 2, "rmts": 5, "dist3": 4, "id": 5}
"""Fewest training shapes a problem needs (rmts: A B, C C, D E; id: A B, C D and a wrong candidate)."""
N_GLYPHS = 100
GLYPH_MIN_DIFF = 0.15
"""Smallest mean absolute pixel difference between two chosen glyphs at :data:`REF_SIZE` px."""
REF_SIZE = 10
_RANGES = ((0x391, 0x3A9), (0x3B1, 0x3C9), (0x410, 0x44F), (0x2190, 0x21FF), (0x2200, 0x22FF),
           (0x25A0, 0x25FF), (0x2700, 0x27BF))


def _render(code: int, size: int) -> np.ndarray | None:
    """The glyph of ``code`` rendered large, cropped to its ink, centred on a square and area-resized to
    (size, size) in [0, 1]; None when the font lacks it or it has no ink."""
    from matplotlib import font_manager, ft2font

    font = ft2font.FT2Font(font_manager.findfont("DejaVu Sans"))
    if font.get_char_index(code) == 0:
        return None
    font.set_size(8 * size, 72)
    font.set_text(chr(code))
    font.draw_glyphs_to_bitmap()
    im = np.asarray(font.get_image(), dtype=np.float64) / 255.0
    rows, cols = np.nonzero(im > 0.1)
    if len(rows) == 0:
        return None
    im = im[rows.min():rows.max() + 1, cols.min():cols.max() + 1]
    side = max(im.shape)
    side += (-side) % size                                   # a multiple of size: an exact area average
    sq = np.zeros((side, side))
    r0, c0 = (side - im.shape[0]) // 2, (side - im.shape[1]) // 2
    sq[r0:r0 + im.shape[0], c0:c0 + im.shape[1]] = im
    f = side // size
    out = sq.reshape(size, f, size, f).mean(axis=(1, 3))
    return out / out.max()


def _candidates() -> list[int]:
    """The code points in the fixed interleaved order of the greedy choice (one from each range in turn)."""
    lists = [list(range(a, b + 1)) for a, b in _RANGES]
    order: list[int] = []
    for i in range(max(len(x) for x in lists)):
        order.extend(x[i] for x in lists if i < len(x))
    return order


@lru_cache(maxsize=1)
def glyph_codes() -> tuple[int, ...]:
    """The 100 code points: greedy in :func:`_candidates` order, keeping a glyph only if it differs from every
    one kept by at least :data:`GLYPH_MIN_DIFF` (mean absolute difference at :data:`REF_SIZE` px)."""
    kept: list[int] = []
    ims: list[np.ndarray] = []
    for code in _candidates():
        im = _render(code, REF_SIZE)
        if im is None or im.mean() < 0.08:                   # hairline glyphs vanish at 8-10 px
            continue
        if all(np.abs(im - o).mean() >= GLYPH_MIN_DIFF for o in ims):
            kept.append(code)
            ims.append(im)
            if len(kept) == N_GLYPHS:
                return tuple(kept)
    raise RuntimeError(f"only {len(kept)} distinct glyphs found in DejaVu Sans")


@lru_cache(maxsize=4)
def glyphs(size: int) -> np.ndarray:
    """(100, size, size) float32 glyph bitmaps in [0, 1] (shape index = row)."""
    ims = [_render(c, size) for c in glyph_codes()]
    if any(im is None for im in ims):                        # glyph_codes keeps only glyphs the font draws
        raise RuntimeError("a chosen glyph has no ink at this size")
    return np.stack([im for im in ims if im is not None]).astype(np.float32)


class Problems(NamedTuple):
    """A batch of problems of one task.

    Attributes:
        shapes: (n, C, P, O) shape index per candidate, panel, object slot; -1 where a panel has fewer objects.
        answer: (n,) index of the correct candidate (sd: 1 for same, 0 for different).
    """

    shapes: np.ndarray
    answer: np.ndarray


def split_shapes(n_shapes: int, m: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The m-holdout: a random ``n_shapes - m`` shapes for training, the other ``m`` for testing (m = 0: both
    use all shapes, ESBN's m = 0 regime)."""
    perm = rng.permutation(n_shapes)
    train = np.sort(perm[:n_shapes - m])
    test = np.sort(perm[n_shapes - m:]) if m > 0 else train
    return train, test


def _draw(pool: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    return rng.choice(pool, size=k, replace=False)


def _wrong_completions(task: str, row1: np.ndarray, row2: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """The shapes of ``pool`` that do not complete row 2 correctly, so that exactly one candidate is right.

    dist3: every shape but the missing one. id: every shape ``x`` for which (row2[0], row2[1], x) breaks row 1's
    identity pattern (a = b, b = x, a = x) or reuses a row-1 shape (row 2 holds new shapes). Without the second
    condition an AAB row (C C ?) would be completed by any new shape; with it the wrong options of AAB are C
    (AAA) and row 1's two shapes.

    >>> _wrong_completions("id", np.array([0, 0, 1]), np.array([2, 2, 3]), np.arange(6)).tolist()
    [0, 1, 2]
    """
    if task == "dist3":
        return pool[pool != row2[2]]
    a, b = row2[0], row2[1]
    same = (row1[0] == row1[1], row1[1] == row1[2], row1[0] == row1[2])
    fits = ((a == b) == same[0]) & ((pool == b) == same[1]) & ((pool == a) == same[2]) & ~np.isin(pool, row1)
    return pool[~fits]


def generate(task: str, n: int, pool: np.ndarray, rng: np.random.Generator) -> Problems:
    """``n`` problems of ``task`` whose shapes all come from ``pool``; the answer is correct by construction.

    >>> p = generate("id", 3, np.arange(10), np.random.default_rng(0))
    >>> p.shapes.shape, p.answer.shape
    ((3, 4, 2, 4), (3,))
    """
    if len(pool) < MIN_SHAPES[task]:
        raise ValueError(f"{task} needs at least {MIN_SHAPES[task]} shapes, got {len(pool)}")
    C, P = N_CANDIDATES[task], N_PANELS[task]
    shapes = -np.ones((n, C, P, 4), dtype=np.int64)
    answer = np.zeros(n, dtype=np.int64)
    for i in range(n):
        if task == "sd":
            same = rng.random() < 0.5
            a, b = _draw(pool, 2, rng)
            shapes[i, 0, 0, :2] = (a, a) if same else (a, b)
            answer[i] = int(same)
        elif task == "rmts":
            same = rng.random() < 0.5
            s = _draw(pool, 5, rng)
            source = (s[0], s[0]) if same else (s[0], s[1])
            pair_same, pair_diff = (s[2], s[2]), (s[3], s[4])
            correct = int(rng.integers(2))
            for c in range(2):
                match = c == correct
                target = pair_same if match == same else pair_diff
                shapes[i, c, 0] = (*source, *target)
            answer[i] = correct
        else:
            if task == "dist3":
                row1 = _draw(pool, 3, rng)
                row2 = row1[rng.permutation(3)]
                while (row2 == row1).all():                  # a permutation other than the identity
                    row2 = row1[rng.permutation(3)]
            else:
                rule = ((0, 1, 0), (0, 0, 1), (0, 1, 1), (0, 0, 0))[int(rng.integers(4))]
                s = _draw(pool, 4, rng)
                row1, row2 = s[:2][list(rule)], s[2:][list(rule)]
            target = row2[2]
            others = _draw(_wrong_completions(task, row1, row2, pool), 3, rng)
            options = np.concatenate([[target], others])
            order = rng.permutation(4)
            for c in range(4):
                shapes[i, c, 0, :3] = row1
                shapes[i, c, 1, :3] = (row2[0], row2[1], options[order[c]])
            answer[i] = int(np.nonzero(order == 0)[0][0])
    return Problems(shapes, answer)


class Scenes(NamedTuple):
    """Rendered panels.

    Attributes:
        images: (n, H, W) float32 gray images in [0, 1].
        segments: (n, H, W) int64 ground truth: 0 background, k + 1 the object in quadrant k.
    """

    images: np.ndarray
    segments: np.ndarray


def render(panels: np.ndarray, size: int, glyph: int, jitter: int, rng: np.random.Generator) -> Scenes:
    """Draw (n, 4) shape indices (-1: empty quadrant) as (n, size, size) scenes: object k centred in quadrant k
    (reading order) and shifted by a uniform integer jitter in [-jitter, jitter] per axis.

    >>> s = render(np.array([[0, -1, -1, 3]]), 24, 8, 2, np.random.default_rng(0))
    >>> s.images.shape, sorted(set(s.segments.ravel().tolist()))
    ((1, 24, 24), [0, 1, 4])
    """
    g = glyphs(glyph)
    g = np.where(g > 0.1, g, 0.0).astype(np.float32)       # faint anti-aliasing off: every inked pixel is labelled
    n = len(panels)
    images = np.zeros((n, size, size), dtype=np.float32)
    segments = np.zeros((n, size, size), dtype=np.int64)
    half = size // 2
    shifts = rng.integers(-jitter, jitter + 1, size=(n, 4, 2))
    for i in range(n):
        for q in range(4):
            k = panels[i, q]
            if k < 0:
                continue
            r = (q // 2) * half + (half - glyph) // 2 + shifts[i, q, 0]
            c = (q % 2) * half + (half - glyph) // 2 + shifts[i, q, 1]
            images[i, r:r + glyph, c:c + glyph] = g[k]
            segments[i, r:r + glyph, c:c + glyph][g[k] > 0] = q + 1
    return Scenes(images, segments)


def random_panels(n: int, max_objects: int, n_shapes: int, rng: np.random.Generator) -> np.ndarray:
    """(n, 4) pretraining scenes: 1 to ``max_objects`` objects of any of ``n_shapes`` shapes in random quadrants."""
    panels = -np.ones((n, 4), dtype=np.int64)
    for i in range(n):
        k = int(rng.integers(1, max_objects + 1))
        panels[i, rng.choice(4, size=k, replace=False)] = rng.integers(0, n_shapes, size=k)
    return panels

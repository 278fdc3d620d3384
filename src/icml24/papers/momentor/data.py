"""The synthetic data engine, the task grammar, number text, IoU metrics and a user's real frame features.

Videos (numpy only, no torch: ``validate`` imports this module):

* a video of duration D seconds has 2..3 events of distinct types (of ``event_types``), each a segment
  [s, e] of the normalised time line [0, 1] with continuous ends, 10-30% of the video long, separated by
  background gaps (a uniform split of the time left);
* frame i of N_t is sampled at c_i = i / (N_t - 1) and covers the window [c_i - w/2, c_i + w/2], w = 1 / (N_t - 1);
  its feature is the overlap-weighted mix of the prototypes of what the window covers (each event's share of the
  window, the rest background) plus N(0, noise^2) per entry. A boundary inside a window moves that frame's mix
  linearly, so sub-frame positions are visible in the input (else no method could beat the grid);
* the frame features do not depend on D (events are fractions of the video), so a method that reads positions
  relative to the video is unaffected by longer videos (C3).

Tasks (one query per video): ``when`` an event happens (answer its segment), ``what`` happens in a span (its
event word), what happens ``after`` an event (the next event's word and segment).
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from icml24.core.errors import UserError

TASKS = ("when", "what", "after")


@dataclass(frozen=True)
class Engine:
    """What the synthetic videos are made of (the config's data-engine knobs)."""

    event_types: int = 12
    feat_dim: int = 32
    events: tuple[int, int] = (2, 3)               # fewest, most events per video
    length: tuple[float, float] = (0.1, 0.3)       # shortest, longest event (fraction of the video)
    noise: float = 0.5                             # std of every frame-feature entry's noise


class Videos(NamedTuple):
    """A batch of videos with their planted events (normalised positions p = t / D in [0, 1])."""

    frames: np.ndarray     # (V, N_t, feat_dim) float32
    duration: np.ndarray   # (V,) seconds
    types: np.ndarray      # (V, K) event type of each slot, in temporal order; -1 where absent
    start: np.ndarray      # (V, K) normalised start of each slot (NaN where absent)
    end: np.ndarray        # (V, K) normalised end
    n_events: np.ndarray   # (V,) events per video


class Queries(NamedTuple):
    """One query per row: which video, which task (index into :data:`TASKS`), which event slot it asks about."""

    video: np.ndarray      # (Q,) int
    task: np.ndarray       # (Q,) int
    slot: np.ndarray       # (Q,) int: the event a 'when' / 'what' query is about, the one an 'after' query names


class Answers(NamedTuple):
    """What each query's answer is."""

    event: np.ndarray      # (Q,) the answer's event type ('what', 'after'); the queried type for 'when'
    start: np.ndarray      # (Q,) normalised start of the answer's segment ('when', 'after'; for 'what' the span given)
    end: np.ndarray        # (Q,) normalised end


def prototypes(rng: np.random.Generator, engine: Engine) -> np.ndarray:
    """One N(0, I) prototype feature per event type plus the background's (last row), (types + 1, feat_dim)."""
    return rng.standard_normal((engine.event_types + 1, engine.feat_dim))


class Layouts(NamedTuple):
    """Where each video's events are (no frames yet: the same layouts render at every N_t)."""

    types: np.ndarray
    start: np.ndarray
    end: np.ndarray
    n_events: np.ndarray


def layouts(rng: np.random.Generator, n: int, engine: Engine) -> Layouts:
    """``n`` event layouts: a count uniform in ``engine.events``, distinct types, lengths U(length), gaps a uniform
    split (Dirichlet(1, ..., 1), as normalised Exp(1) draws) of the time the events leave."""
    k_min, k_max = engine.events
    count = rng.integers(k_min, k_max + 1, size=n)                              # (V,)
    present = np.arange(k_max) < count[:, None]                                  # (V, K)
    lengths = np.where(present, rng.uniform(*engine.length, size=(n, k_max)), 0.0)
    gaps = np.where(np.arange(k_max + 1) <= count[:, None], rng.exponential(size=(n, k_max + 1)), 0.0)
    gaps *= (1.0 - lengths.sum(1, keepdims=True)) / gaps.sum(1, keepdims=True)  # (V, K + 1), summing to 1 - sum L
    lead = np.concatenate([np.zeros((n, 1)), lengths[:, :-1]], 1)
    start = np.cumsum(gaps[:, :-1] + lead, 1)                                   # s_j = sum_{i<=j} gap_i + sum_{i<j} L_i
    types = np.argsort(rng.random((n, engine.event_types)), 1)[:, :k_max]       # distinct types per video
    return Layouts(np.where(present, types, -1), np.where(present, start, np.nan),
                   np.where(present, start + lengths, np.nan), count)


def overlaps(start: np.ndarray, end: np.ndarray, n_frames: int) -> np.ndarray:
    """Share of each frame's window [c_i - w/2, c_i + w/2] (c_i = i / (N_t - 1), w = 1 / (N_t - 1)) that each
    segment covers, (V, K, N_t); NaN segments cover nothing.

    >>> overlaps(np.array([[0.25]]), np.array([[0.75]]), 3)     # frames at 0, 0.5, 1 with windows of width 0.5
    array([[[0., 1., 0.]]])
    >>> overlaps(np.array([[0.1]]), np.array([[0.6]]), 3).round(2)
    array([[[0.3, 0.7, 0. ]]])
    """
    w = 1.0 / (n_frames - 1)
    c = np.arange(n_frames) * w                                                   # (N_t,)
    s, e = np.nan_to_num(start, nan=0.0)[..., None], np.nan_to_num(end, nan=0.0)[..., None]
    cover = np.clip(np.minimum(e, c + w / 2) - np.maximum(s, c - w / 2), 0.0, None) / w
    return cover                                                                  # (V, K, N_t)


def render(lay: Layouts, protos: np.ndarray, n_frames: int, noise: float, rng: np.random.Generator,
           duration: np.ndarray) -> Videos:
    """Frame features of ``lay`` at N_t = ``n_frames``: the overlap-weighted prototype mix plus noise."""
    cover = overlaps(lay.start, lay.end, n_frames)                                # (V, K, N_t)
    present = lay.types >= 0
    event_protos = protos[np.where(present, lay.types, 0)] * present[..., None]   # (V, K, d)
    frames = np.einsum("vkn,vkd->vnd", cover, event_protos)                       # events' share
    frames += (1.0 - cover.sum(1))[..., None] * protos[-1]                        # the background's share
    frames += noise * rng.standard_normal(frames.shape)
    return Videos(frames.astype(np.float32), duration, lay.types, lay.start, lay.end, lay.n_events)


def durations(rng: np.random.Generator, n: int, low: float, high: float) -> np.ndarray:
    """Video durations U(low, high) seconds."""
    return rng.uniform(low, high, size=n)


def queries(rng: np.random.Generator, videos: Videos, tasks: tuple[str, ...]) -> Queries:
    """One query per video: a task drawn uniformly from ``tasks``, a slot uniformly among those it can ask about
    (for 'after', every event but the last)."""
    n = len(videos.n_events)
    task = np.array([TASKS.index(t) for t in tasks])[rng.integers(0, len(tasks), size=n)]
    last = videos.n_events - np.where(task == TASKS.index("after"), 1, 0)            # slots 0 .. last - 1
    slot = np.floor(rng.random(n) * last).astype(np.int64)
    return Queries(np.arange(n), task, slot)


def answers(videos: Videos, q: Queries) -> Answers:
    """The answer of each query, read from the planted events."""
    after = q.task == TASKS.index("after")
    ans_slot = q.slot + after                                                     # 'after' answers the next event
    v = q.video
    event = np.where(after | (q.task == TASKS.index("what")), videos.types[v, ans_slot], videos.types[v, q.slot])
    return Answers(event, videos.start[v, ans_slot], videos.end[v, ans_slot])


def heldout_tokens(n_tokens: int, every: int) -> np.ndarray:
    """Held-out token indices 1, 1 + every, ... below N_t - 1 (C2; the ends are kept).

    >>> heldout_tokens(16, 3)
    array([ 1,  4,  7, 10, 13])
    """
    return np.arange(1, n_tokens - 1, every)


def touches(u: np.ndarray, held: np.ndarray) -> np.ndarray:
    """Whether a position u (token units) is within one token of a held-out index, |u - h| < 1: then the
    interpolated embedding or the soft target would use token h.

    >>> touches(np.array([0.0, 0.5, 2.0, 3.0]), np.array([1]))
    array([False,  True, False, False])
    """
    return (np.abs(u[..., None] - held) < 1).any(-1)


def near(u: np.ndarray, held: np.ndarray, radius: float = 0.5) -> np.ndarray:
    """Whether u is within ``radius`` tokens of a held-out index (C2's test positions)."""
    return (np.abs(u[..., None] - held) <= radius).any(-1)


def select(videos: Videos, keep: np.ndarray) -> Videos:
    """The videos where ``keep`` (V,) is true."""
    return Videos(*(a[keep] for a in videos))


# ---- number text -----------------------------------------------------------------------------------------------

def seconds_text(t: float) -> str:
    """A time as number text: seconds with one decimal (the number-text baseline's format).

    >>> seconds_text(7.04), seconds_text(123.456)
    ('7.0', '123.5')
    """
    return f"{t:.1f}"


def parse_seconds(text: str) -> float | None:
    """The seconds a generated string names, or None if it is not a number (digits, at most one dot).

    >>> parse_seconds("12.5"), parse_seconds("1.2.3"), parse_seconds("")
    (12.5, None, None)
    """
    if not text or text.count(".") > 1 or text == "." or not text.replace(".", "").isdigit():
        return None
    return float(text)


# ---- metrics ---------------------------------------------------------------------------------------------------

def iou(pred_start: np.ndarray, pred_end: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Temporal IoU of predicted and true segments (any common unit); an inverted or missing (NaN) prediction
    scores 0, an inverted true segment is an error.

    >>> iou(np.array([0.0, 2.0, 3.0]), np.array([2.0, 4.0, 1.0]), np.array([1.0, 1.0, 1.0]), np.array([3.0, 3.0, 3.0]))
    array([0.33333333, 0.33333333, 0.        ])
    """
    start, end = np.asarray(start, np.float64), np.asarray(end, np.float64)
    if np.any(end < start):
        raise ValueError("iou: a true segment ends before it starts")
    ps, pe = np.asarray(pred_start, np.float64), np.asarray(pred_end, np.float64)
    valid = np.isfinite(ps) & np.isfinite(pe) & (pe >= ps)
    ps, pe = np.where(valid, ps, 0.0), np.where(valid, pe, 0.0)
    inter = np.clip(np.minimum(pe, end) - np.maximum(ps, start), 0.0, None)
    union = (pe - ps) + (end - start) - inter
    return np.where(valid & (union > 0), inter / np.where(union > 0, union, 1.0), 0.0)


class Localisation(NamedTuple):
    """mIoU and R@1 at IoU 0.5 and 0.7 of a set of predictions."""

    miou: float
    r05: float
    r07: float


def localisation(ious: np.ndarray) -> Localisation:
    """mIoU, R@1 IoU>=0.5 and R@1 IoU>=0.7 of per-query IoUs.

    >>> localisation(np.array([0.4, 0.6, 0.8, 1.0]))
    Localisation(miou=0.7, r05=0.75, r07=0.5)
    """
    return Localisation(float(ious.mean()), float((ious >= 0.5).mean()), float((ious >= 0.7).mean()))


def quantization_ceiling(start: np.ndarray, end: np.ndarray, n_tokens: int) -> np.ndarray:
    """IoU of each true segment (normalised) with itself rounded to the N_t-token grid: what a perfect
    discrete-token model scores, per query.

    >>> quantization_ceiling(np.array([0.1]), np.array([0.3]), 3)        # grid 0, 0.5, 1: [0, 0.5]
    array([0.4])
    """
    g = n_tokens - 1
    return iou(np.floor(start * g + 0.5) / g, np.floor(end * g + 0.5) / g, start, end)


# ---- a user's real frame features (FULL) -------------------------------------------------------------------------

SEGMENT_COLUMNS = ("video", "label", "start", "end", "duration", "split")


class RealData(NamedTuple):
    """A user's frame features and grounded segments as videos and 'when' queries."""

    videos: Videos          # one slot per segment of the video (types: label ids)
    train: Queries
    test: Queries
    labels: tuple[str, ...]


def _segments(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in SEGMENT_COLUMNS if c not in (reader.fieldnames or ())]
        if missing:
            raise UserError(f"{path}: lacks the columns {', '.join(missing)} (needs {', '.join(SEGMENT_COLUMNS)})")
        return list(reader)


def check_feature_dir(folder: str, n_tokens: int) -> tuple[tuple[int, ...], list[dict[str, str]]]:
    """The shape of ``features.npy`` and the rows of ``segments.csv`` in ``folder``, or a one-line
    :class:`UserError`: a file missing, frames != N_t, an inverted segment, an unknown video, a bad split."""
    root = Path(folder).expanduser()
    feats, segs = root / "features.npy", root / "segments.csv"
    for f in (feats, segs):
        if not f.is_file():
            raise UserError(f"feature_dir={folder}: lacks {f.name} (needs features.npy of shape (videos, N_t, d) "
                            "and segments.csv with columns " + ",".join(SEGMENT_COLUMNS) + ")")
    try:
        shape = tuple(np.load(feats, mmap_mode="r").shape)
    except (ValueError, OSError) as exc:
        raise UserError(f"{feats}: not a numpy array file ({exc})") from None
    if len(shape) != 3:
        raise UserError(f"{feats}: shape {shape}, needs (videos, frames, feature dim)")
    if shape[1] != n_tokens:
        raise UserError(f"{feats}: {shape[1]} frames per video but n_t_fine={n_tokens}: the TPM needs frames = N_t")
    rows = _segments(segs)
    if not rows:
        raise UserError(f"{segs}: no segments")
    for i, row in enumerate(rows, start=2):
        try:
            v, s, e, d = int(row["video"]), float(row["start"]), float(row["end"]), float(row["duration"])
        except ValueError:
            raise UserError(f"{segs} line {i}: video, start, end and duration must be numbers") from None
        if not 0 <= v < shape[0]:
            raise UserError(f"{segs} line {i}: video {v} not in features.npy ({shape[0]} videos)")
        if not (math.isfinite(s) and math.isfinite(e) and d > 0):
            raise UserError(f"{segs} line {i}: start, end must be finite and duration > 0")
        if e < s:
            raise UserError(f"{segs} line {i}: an inverted segment (start {s:g} > end {e:g})")
        if row["split"] not in ("train", "test"):
            raise UserError(f"{segs} line {i}: split {row['split']!r}, use train or test")
    splits = {r["split"] for r in rows}
    if splits != {"train", "test"}:
        raise UserError(f"{segs}: needs both train and test segments (has {', '.join(sorted(splits))})")
    return shape, rows


def real_data(folder: str, n_tokens: int) -> RealData:
    """Load a user's ``features.npy`` (videos, N_t, d) and ``segments.csv`` (one grounded segment per row, times
    in seconds) as videos with one slot per segment and a 'when' query per segment."""
    shape, rows = check_feature_dir(folder, n_tokens)
    frames = np.load(Path(folder).expanduser() / "features.npy").astype(np.float32)
    labels = tuple(sorted({r["label"] for r in rows}))
    per_video: dict[int, list[dict[str, str]]] = {}
    for r in rows:
        per_video.setdefault(int(r["video"]), []).append(r)
    vids = sorted(per_video)
    k = max(len(v) for v in per_video.values())
    types = np.full((len(vids), k), -1, np.int64)
    start, end = np.full((len(vids), k), np.nan), np.full((len(vids), k), np.nan)
    duration, count = np.zeros(len(vids)), np.zeros(len(vids), np.int64)
    split = []
    for i, v in enumerate(vids):
        segs = sorted(per_video[v], key=lambda r: float(r["start"]))
        duration[i], count[i] = float(segs[0]["duration"]), len(segs)
        for j, r in enumerate(segs):
            types[i, j] = labels.index(r["label"])
            start[i, j] = min(max(float(r["start"]) / duration[i], 0.0), 1.0)
            end[i, j] = min(max(float(r["end"]) / duration[i], 0.0), 1.0)
            split.append((i, j, r["split"]))
    videos = Videos(frames[vids], duration, types, start, end, count)

    def pick(name: str) -> Queries:
        sel = [(i, j) for i, j, s in split if s == name]
        return Queries(np.array([i for i, _ in sel]), np.zeros(len(sel), np.int64), np.array([j for _, j in sel]))

    return RealData(videos, pick("train"), pick("test"), labels)

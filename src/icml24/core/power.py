"""Power of a claim: could this run have seen the paper's effect?

A claim's verdict is computed from per-seed values ``x`` (one number per seed whose mean is the claim's
statistic: a paired difference, a scalar metric, a per-seed log-log slope, a curve's last point) with the
bootstrap CI of :func:`icml24.core.stats.mean_ci`. The power of the run for the paper's effect is estimated
from the run itself:

1. **plant** the effect: shift the method's per-seed values by one constant so that the statistic equals
   the paper's effect, keeping the seed-to-seed spread, and clip them to the metric's valid range (a
   baseline at the ceiling leaves no room: the clipped statistic stays below the effect);
2. **resample**: draw ``replicates`` new sets of as many seeds from the planted values, with replacement;
3. apply the claim's own CI (the expanded-percentile bootstrap of :func:`mean_ci`, here with
   ``POWER_BOOT`` resamples per set instead of 4000: the same interval up to Monte Carlo noise in its
   quantiles, which averages out over the sets) and band to each set; the power is the fraction that pass.

With ``POWER_REPLICATES`` = 2500 the Monte Carlo standard error is at most 0.01 (the estimate is stable to
0.02), and the generators are seeded, so the same run always gets the same power.

A constraint claim (every seed inside its band) has no CI: a resampled set passes when every seed it
holds lies inside the band.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from icml24.core.stats import expanded_alpha

POWER_REPLICATES = 2500
"""Resampled seed sets per power estimate (Monte Carlo standard error <= 0.5 / sqrt(2500) = 0.01)."""
POWER_BOOT = 1000
"""Bootstrap resamples of the CI of each resampled set (the claim's own CI uses 4000)."""
POWER_SEED = 31
"""Seed of the generator that draws the resampled seed sets (fixed: the power is deterministic)."""
FAIL_POWER = 0.8
"""A claim that misses its band fails only where the run's power for the paper's effect is at least this."""
N_BOOT = 4000
BOOT_SEED = 0
"""The bootstrap of :func:`icml24.core.stats.mean_ci` (its defaults): ``N_BOOT`` resamples drawn by
``default_rng(BOOT_SEED)``; :func:`mean_ci_rows` reuses exactly these indices."""
_CHUNK = 500


class Planted(NamedTuple):
    """Per-seed values with the paper's effect planted.

    Attributes:
        method: the method's per-seed values after the shift and the clip, shape (seeds,).
        values: the claim's per-seed values recomputed from them, shape (seeds,).
        shift: the constant added to the method's values before clipping.
        clipped: how many seeds the valid range clipped.
    """

    method: np.ndarray
    values: np.ndarray
    shift: float
    clipped: int


def plant(base: np.ndarray, method: np.ndarray, sign: float, effect: float,
          valid: tuple[float, float] = (-math.inf, math.inf)) -> Planted:
    """Shift ``method`` so that ``mean(base + sign * method)`` equals ``effect``, then clip it to ``valid``.

    The claim's per-seed values are ``base + sign * method``: for ``metric - against`` with the method in
    ``metric``, ``base = -against`` and ``sign = +1``; with the method in ``against``, ``base = metric`` and
    ``sign = -1``; for a scalar metric, ``base = 0`` and ``sign = +1``.

    >>> p = plant(np.zeros(3), np.array([0.5, 0.7, 0.9]), 1.0, 0.9, valid=(0.0, 1.0))
    >>> p.method.round(3).tolist(), p.clipped          # shifted by +0.2, the last seed clipped at 1
    ([0.7, 0.9, 1.0], 1)
    """
    base = np.asarray(base, dtype=np.float64)
    method = np.asarray(method, dtype=np.float64)
    shift = sign * (effect - float(np.mean(base + sign * method)))
    lo, hi = valid
    moved = method + shift
    kept = np.clip(moved, lo, hi)
    return Planted(kept, base + sign * kept, float(shift), int(np.sum(kept != moved)))


def bootstrap_weights(n: int, n_boot: int = N_BOOT) -> np.ndarray:
    """(n_boot, n) weights whose product with per-seed values gives each bootstrap mean; with the default
    ``n_boot`` these are the resamples of :func:`mean_ci` (same generator, same draws)."""
    idx = np.random.default_rng(BOOT_SEED).integers(0, n, size=(n_boot, n))
    w = np.zeros((n_boot, n))
    np.add.at(w, (np.arange(n_boot)[:, None], idx), 1.0 / n)
    return w


def _quantiles(x: np.ndarray, qs: tuple[float, float]) -> list[np.ndarray]:
    """``np.quantile(x, q, axis=1)`` (linear interpolation) for each q, by partial sorting."""
    m = x.shape[1]
    pos = [q * (m - 1) for q in qs]
    ks = sorted({k for p in pos for k in (int(math.floor(p)), min(int(math.floor(p)) + 1, m - 1))})
    part = np.partition(x, ks, axis=1)
    out = []
    for p in pos:
        k = int(math.floor(p))
        lo, hi = part[:, k], part[:, min(k + 1, m - 1)]
        out.append(lo + (p - k) * (hi - lo))
    return out


def mean_ci_rows(rows: np.ndarray, level: float = 0.95, n_boot: int = N_BOOT) -> tuple[np.ndarray, np.ndarray]:
    """The lower and upper bounds of :func:`icml24.core.stats.mean_ci` for each row of ``rows`` (R, n)
    (exactly its interval with the default ``n_boot``)."""
    rows = np.asarray(rows, dtype=np.float64)
    n = rows.shape[1]
    w = bootstrap_weights(n, n_boot)  # (B, n)
    a = expanded_alpha(n, level)
    low, high = np.empty(rows.shape[0]), np.empty(rows.shape[0])
    for start in range(0, rows.shape[0], _CHUNK):
        boot = rows[start:start + _CHUNK] @ w.T  # (chunk, B) bootstrap means
        low[start:start + _CHUNK], high[start:start + _CHUNK] = _quantiles(boot, (a, 1 - a))
    return low, high


def pass_rate(values: np.ndarray, contains, *, constraint: bool = False, replicates: int = POWER_REPLICATES,
              seed: int = POWER_SEED, n_seeds: int | None = None) -> float:
    """Fraction of resampled seed sets of ``values`` whose CI (or, for a constraint, every seed) passes.

    Args:
        values: per-seed values, shape (seeds,).
        contains: the band's test, ``contains(low, high) -> bool`` (e.g. ``Band.contains``).
        constraint: every seed of the set must lie inside the band (no CI).
        replicates: resampled sets; seed: their generator's seed.
        n_seeds: seeds per resampled set (default: as many as ``values``): the power a run with that many
            seeds would have at the same spread.
    """
    values = np.asarray(values, dtype=np.float64)
    n = values.size
    if n < 2 or not np.all(np.isfinite(values)):
        return math.nan
    size = n if n_seeds is None else n_seeds
    sets = np.random.default_rng(seed).integers(0, n, size=(replicates, size))  # (R, size) seed indices
    if constraint:
        inside = np.array([contains(v, v) for v in values])
        return float(np.mean(inside[sets].all(axis=1)))
    low, high = mean_ci_rows(values[sets], n_boot=POWER_BOOT)
    ok = np.array([contains(lo, hi) for lo, hi in zip(low, high)])
    return float(np.mean(ok))

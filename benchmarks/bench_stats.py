"""Bootstrap CI over seeds: icml24.core.stats.mean_ci against scipy.stats.bootstrap (the peer), and a
per-replicate Python loop as a second baseline row.

All three compute the same expanded percentile interval (4000 resamples, the alpha of
:func:`icml24.core.stats.expanded_alpha`); they draw different resamples, so their bounds agree to Monte
Carlo error (checked below: within 3% of the data's range), not bit for bit.

Run: python benchmarks/bench_stats.py   (a few seconds; prints one table of medians and ratios)
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from icml24.core.bench import median_time, pin_threads, ratio_row
from icml24.core.stats import expanded_alpha, mean_ci

N_BOOT = 4000


def loop_ci(values: np.ndarray, seed: int = 0) -> tuple[float, float]:
    """The naive formulation: one resample and one mean per Python iteration."""
    rng = np.random.default_rng(seed)
    n = values.size
    boots = [values[rng.integers(0, n, size=n)].mean() for _ in range(N_BOOT)]
    a = expanded_alpha(n)
    return tuple(np.quantile(boots, [a, 1 - a]))


def scipy_ci(values: np.ndarray, seed: int = 0) -> tuple[float, float]:
    a = expanded_alpha(values.size)
    res = stats.bootstrap((values,), np.mean, n_resamples=N_BOOT, confidence_level=1 - 2 * a, method="percentile",
                          vectorized=True, rng=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


if __name__ == "__main__":
    pin_threads(1)
    print(f"{'seeds':>5s} {'ours ms':>8s} {'scipy ms':>9s} {'ours/scipy':>11s} {'loop ms':>8s} {'ours/loop':>10s}  bounds agree")
    for n in (5, 10, 40):
        values = np.random.default_rng(n).normal(size=n)
        ours = mean_ci(values)
        lo, hi = scipy_ci(values)
        span = float(values.max() - values.min())
        agree = abs(ours.low - lo) < 0.03 * span and abs(ours.high - hi) < 0.03 * span
        t_ours = median_time(lambda: mean_ci(values), repeats=7, number=5)
        t_scipy = median_time(lambda: scipy_ci(values), repeats=7, number=5)
        t_loop = median_time(lambda: loop_ci(values), repeats=5)
        print(f"{n:5d} {t_ours * 1e3:8.2f} {t_scipy * 1e3:9.2f} {t_ours / t_scipy:11.2f} {t_loop * 1e3:8.2f} "
              f"{t_ours / t_loop:10.3f}  {agree}")
        ratio_row(f"bootstrap CI of the mean, {n} seeds", "scipy.stats.bootstrap", t_ours, t_scipy,
                  "yes (3% of range)" if agree else "no")

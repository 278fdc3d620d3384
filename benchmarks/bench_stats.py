"""Bootstrap CI over seeds: the vectorized resampling in icml24.core.stats vs a per-replicate loop.

Run: python benchmarks/bench_stats.py   (prints the median time of each and their ratio)
"""

from __future__ import annotations

import numpy as np

from icml24.core.bench import median_time
from icml24.core.stats import expanded_alpha, mean_ci


def loop_ci(values: np.ndarray, n_boot: int = 4000, seed: int = 0) -> tuple[float, float]:
    """The naive formulation: one resample and one mean per Python iteration."""
    rng = np.random.default_rng(seed)
    n = values.size
    boots = [values[rng.integers(0, n, size=n)].mean() for _ in range(n_boot)]
    a = expanded_alpha(n)
    return tuple(np.quantile(boots, [a, 1 - a]))


if __name__ == "__main__":
    values = np.random.default_rng(1).normal(size=10)
    fast = median_time(lambda: mean_ci(values))
    slow = median_time(lambda: loop_ci(values))
    print(f"vectorized bootstrap: {fast * 1e3:.2f} ms; loop: {slow * 1e3:.2f} ms; speed-up x{slow / fast:.1f}")

"""Timing for the benchmark scripts in ``benchmarks/``: medians of repeated calls, never one shot."""

from __future__ import annotations

import statistics
import time
from typing import Callable


def median_time(fn: Callable[[], object], repeats: int = 7, number: int = 1, warmup: bool = True) -> float:
    """Median over ``repeats`` of the mean seconds per call of ``fn`` (``number`` calls per repeat).

    >>> median_time(lambda: None, repeats=3) >= 0
    True
    """
    if warmup:
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return statistics.median(times)


RATIO_MARK = "RATIO\t"  # prefix of the machine-readable rows that benchmarks/summary.py collects


def format_ratio_row(workload: str, baseline: str, ours_s: float, baseline_s: float, agree: str) -> str:
    """One row of the combined ratio table of ``make bench``: the workload, what it is compared with, both
    median times in ms, ours / baseline (< 1: ours is faster) and whether the outputs agree, tab-separated
    after :data:`RATIO_MARK`.

    >>> format_ratio_row("scan", "peer", 0.5, 1.0, "yes (atol 1e-4)").split("\\t")[1:]
    ['scan', 'peer', '500.000', '1000.000', '0.500', 'yes (atol 1e-4)']
    """
    return RATIO_MARK + "\t".join([workload, baseline, f"{ours_s * 1e3:.3f}", f"{baseline_s * 1e3:.3f}",
                                    f"{ours_s / baseline_s:.3f}", agree])


def ratio_row(workload: str, baseline: str, ours_s: float, baseline_s: float, agree: str) -> None:
    """Print :func:`format_ratio_row` (benchmarks/summary.py collects these lines)."""
    print(format_ratio_row(workload, baseline, ours_s, baseline_s, agree))

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

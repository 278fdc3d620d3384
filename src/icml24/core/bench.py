"""Timing for the benchmark scripts in ``benchmarks/``: medians of repeated calls, never one shot."""

from __future__ import annotations

import statistics
import time
from typing import Callable


class Timing(float):
    """Median wall seconds per call (the float itself) with the process's CPU seconds per call beside it
    (``cpu``: all threads of this process; above the wall time when a pool ran more than one thread).

    >>> t = Timing(0.5, cpu=1.0)
    >>> float(t), t.cpu, round(t / 0.25, 3)
    (0.5, 1.0, 2.0)
    """

    cpu: float

    def __new__(cls, wall: float, cpu: float) -> "Timing":
        out = super().__new__(cls, wall)
        out.cpu = cpu
        return out


def median_time(fn: Callable[[], object], repeats: int = 7, number: int = 1, warmup: bool = True) -> Timing:
    """Median over ``repeats`` of the mean seconds per call of ``fn`` (``number`` calls per repeat), wall
    and CPU time of the repeat with the median wall time.

    >>> t = median_time(lambda: sum(range(1000)), repeats=3)
    >>> t >= 0 and t.cpu >= 0
    True
    """
    if warmup:
        fn()
    runs = []
    for _ in range(repeats):
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(number):
            fn()
        runs.append(((time.perf_counter() - start) / number, (time.process_time() - cpu) / number))
    return median_timing(runs)


def median_timing(runs: list[tuple[float, float]]) -> Timing:
    """The median wall time of (wall, cpu) seconds pairs, with the CPU time of the run closest to it.

    >>> t = median_timing([(3.0, 3.1), (1.0, 1.2), (2.0, 2.5)])
    >>> float(t), t.cpu
    (2.0, 2.5)
    """
    wall = statistics.median(w for w, _ in runs)
    return Timing(wall, min(runs, key=lambda r: abs(r[0] - wall))[1])


class Clock:
    """Wall and CPU seconds since it was made: ``c = Clock(); ...; runs.append(c.split())``."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def split(self, per: int = 1) -> tuple[float, float]:
        """(wall, cpu) seconds elapsed, divided by ``per`` calls."""
        return (time.perf_counter() - self.wall) / per, (time.process_time() - self.cpu) / per


def interleaved(fns: dict[str, Callable[[], object]], repeats: int = 7) -> dict[str, Timing]:
    """Median seconds per call of each function (wall, with CPU), the calls of one repeat interleaved (after a
    warm-up call of each), so that a machine whose speed drifts slows every side alike.

    >>> t = interleaved({"a": lambda: sum(range(100)), "b": lambda: sum(range(10))}, repeats=3)
    >>> sorted(t), t["a"] >= 0
    (['a', 'b'], True)
    """
    times: dict[str, list[tuple[float, float]]] = {k: [] for k in fns}
    for f in fns.values():
        f()
    for _ in range(repeats):
        for k, f in fns.items():
            clock = Clock()
            f()
            times[k].append(clock.split())
    return {k: median_timing(v) for k, v in times.items()}


POOL_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS")
"""Environment variables that size the thread pools torch, numpy's BLAS and numba start (read at import)."""


def pin_threads(n: int = 1) -> None:
    """Every thread pool of this process at ``n`` threads: numba's, torch's intra-op pool, and the BLAS and
    OpenMP pools (threadpoolctl). threadpoolctl reaches only the libraries loaded when it is called, so the
    lazily loaded ones are loaded first: numba's threading layer (OpenMP, TBB or its own) and scipy's OpenBLAS,
    which numba's ``np.dot`` calls (left alone it runs a second thread, and a benchmark's wall time is no
    longer its CPU time)."""
    import scipy.linalg.cython_blas  # noqa: F401  (numba's BLAS, loaded on the first compiled np.dot)
    import torch
    from threadpoolctl import threadpool_limits

    try:
        import numba
    except ImportError:
        pass
    else:
        numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]
    torch.set_num_threads(n)
    threadpool_limits(n)


RATIO_MARK = "RATIO\t"  # prefix of the machine-readable rows that benchmarks/summary.py collects


def format_ratio_row(workload: str, baseline: str, ours_s: float, baseline_s: float, agree: str) -> str:
    """One row of the combined ratio table of ``make bench``: the workload, what it is compared with, both
    median wall times in ms, ours / baseline (< 1: ours is faster), whether the outputs agree, and the CPU
    times in ms where the times are :class:`Timing` ('-' otherwise), tab-separated after :data:`RATIO_MARK`.

    >>> format_ratio_row("scan", "peer", 0.5, 1.0, "yes (atol 1e-4)").split("\\t")[1:]
    ['scan', 'peer', '500.000', '1000.000', '0.500', 'yes (atol 1e-4)', '-', '-']
    >>> format_ratio_row("scan", "peer", Timing(0.5, 0.9), Timing(1.0, 1.0), "yes").split("\\t")[-2:]
    ['900.000', '1000.000']
    """
    cpu = [f"{t.cpu * 1e3:.3f}" if isinstance(t, Timing) else "-" for t in (ours_s, baseline_s)]
    return RATIO_MARK + "\t".join([workload, baseline, f"{ours_s * 1e3:.3f}", f"{baseline_s * 1e3:.3f}",
                                    f"{ours_s / baseline_s:.3f}", agree, *cpu])


def ratio_row(workload: str, baseline: str, ours_s: float, baseline_s: float, agree: str) -> None:
    """Print :func:`format_ratio_row` (benchmarks/summary.py collects these lines)."""
    print(format_ratio_row(workload, baseline, ours_s, baseline_s, agree))

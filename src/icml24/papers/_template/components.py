"""Components of the template: Monte Carlo errors of the sample mean and median, CI coverage.

A real paper puts its method here (or in model.py / algorithm.py when this grows past ~400 lines),
each function documented against the paper's equation numbers, with shapes and a doctest.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import stats as sps


class EstimatorErrors(NamedTuple):
    """Mean squared errors of two location estimators over replications."""

    mse_mean: float
    mse_median: float


def estimator_errors(samples: np.ndarray, mu: float) -> EstimatorErrors:
    """MSE of the sample mean and sample median of each row as estimates of ``mu``.

    Args:
        samples: (reps, n) independent draws, one replication per row.
        mu: the true location.

    For N(mu, 1) data, MSE(mean) = 1/n exactly and MSE(median) -> pi / (2n) (asymptotic efficiency
    of the median, 2/pi).

    >>> x = np.array([[0.0, 1.0, 5.0], [1.0, 1.0, 1.0]])
    >>> estimator_errors(x, mu=1.0)   # row means 2 and 1, medians 1 and 1
    EstimatorErrors(mse_mean=0.5, mse_median=0.0)
    """
    means = samples.mean(axis=1)  # (reps,)
    medians = np.median(samples, axis=1)  # (reps,)
    return EstimatorErrors(float(np.mean((means - mu) ** 2)), float(np.mean((medians - mu) ** 2)))


def t_interval_coverage(samples: np.ndarray, mu: float, level: float = 0.95) -> float:
    """Fraction of rows whose Student-t interval ``xbar +- t_{n-1} s / sqrt(n)`` contains ``mu``.

    Args:
        samples: (reps, n) draws, n >= 2.

    >>> t_interval_coverage(np.array([[0.0, 2.0], [5.0, 5.1]]), mu=1.0)
    0.5
    """
    n = samples.shape[1]
    half = sps.t.ppf(0.5 + level / 2, df=n - 1) * samples.std(axis=1, ddof=1) / np.sqrt(n)  # (reps,)
    return float(np.mean(np.abs(samples.mean(axis=1) - mu) <= half))


def running_mean(stream: np.ndarray, checkpoints: np.ndarray) -> np.ndarray:
    """The mean of the first k values of ``stream`` for each k in ``checkpoints`` (1-based counts).

    >>> running_mean(np.array([1.0, 3.0, 5.0]), np.array([1, 2, 3]))
    array([1., 2., 3.])
    """
    csum = np.cumsum(stream)  # (T,)
    return csum[checkpoints - 1] / checkpoints

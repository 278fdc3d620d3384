"""Claims of the template, one of each kind the claims engine knows."""

from __future__ import annotations

import math

from icml24.core.claims import Band, Claim

CLAIMS = (
    Claim("C1", "The sample mean's RMSE falls as n^-1/2.", "textbook", "slope", metric="rmse_mean",
          against="n", statistic="log-log slope of RMSE vs n, bootstrap CI over seeds",
          bands={"quick": Band(-0.6, -0.4), "full": Band(-0.55, -0.45)}, paper_value="-0.5"),
    Claim("C2", "For Gaussian data the median is less efficient than the mean.", "textbook", "order",
          metric="mse_median", against="mse_mean", statistic="MSE(median) - MSE(mean) at the largest n",
          bands={"quick": Band(lo=0), "full": Band(lo=0)}),
    Claim("C3", "The median's MSE is pi/2 times the mean's (asymptotic relative efficiency 2/pi).", "textbook", "within",
          metric="efficiency_ratio", statistic="MSE(median) / MSE(mean) at the largest n",
          bands={"quick": Band(1.4, 1.75), "full": Band(1.5, 1.65)}, paper_value=f"{math.pi / 2:.3f}"),
    Claim("C4", "The t-interval has at least its nominal 95% coverage (up to Monte Carlo error).",
          "textbook", "constraint", metric="t_coverage", statistic="coverage per seed",
          bands={"quick": Band(lo=0.9), "full": Band(lo=0.93)}),
    Claim("C5", "The sample mean is unbiased.", "textbook", "equiv", metric="estimate", against="truth",
          statistic="estimate - truth, CI within +-delta", bands={"quick": Band(-0.03, 0.03),
                                                                  "full": Band(-0.005, 0.005)}),
    Claim("C6", "The running mean converges to mu (law of large numbers).", "textbook", "convergence",
          metric="running_mean", statistic="final running mean, tail drift over the last quarter",
          bands={"quick": Band(0.97, 1.03, tol=0.05), "full": Band(0.995, 1.005, tol=0.01)}),
)


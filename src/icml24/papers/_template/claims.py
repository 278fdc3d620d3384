"""Claims of the template, one of each kind the claims engine knows."""

from __future__ import annotations

import math

from icml24.core.claims import Band, Claim, Null

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
    Claim("C4", "The t-interval has its nominal 95% coverage (up to Monte Carlo error).",
          "textbook", "within", metric="t_coverage",
          statistic="coverage of the 95% t-interval at n = 10, mean over seeds (8 x 400 intervals at QUICK)",
          bands={"quick": Band(lo=0.93), "full": Band(lo=0.94)},
          note="bands from theory, between the t-interval's 0.95 and the z-interval's 0.918 at n = 10 (the null "
               "a per-seed band of 0.9 could not reject)"),
    Claim("C5", "The sample mean is unbiased.", "textbook", "equiv", metric="estimate", against="truth",
          statistic="estimate - truth, CI within +-delta", bands={"quick": Band(-0.03, 0.03),
                                                                  "full": Band(-0.005, 0.005)}),
    Claim("C6", "The running mean converges to mu (law of large numbers).", "textbook", "convergence",
          metric="running_mean", statistic="final running mean, tail drift over the last quarter",
          bands={"quick": Band(0.97, 1.03, tol=0.05), "full": Band(0.995, 1.005, tol=0.01)}),
)

# Null results for the claims that are not order/slope (tests/test_falsifiability.py): a broken implementation.
NULLS: dict[str, Null] = {
    # the 2/pi efficiency missing: mean and median equally efficient, ratio 1.0
    "C3": Null("efficiency_ratio", "the median is as efficient as the mean (the 2/pi factor missing)", value=1.0),
    # z = 1.96 instead of t_9 = 2.262 at n = 10: coverage 2 * T_9(1.96) - 1 = 0.918
    "C4": Null("t_coverage", "the interval uses the normal quantile instead of Student's t (n = 10)", value=0.918),
    # an estimator that ignores the data and returns 0: bias -mu = -1
    "C5": Null("estimate", "the estimator ignores the data and returns 0", value=0.0),
    # the running sum without the division by k: E[sum of k draws] = k mu = k for mu = 1 (the checkpoint curve)
    "C6": Null("running_mean", "the running mean forgets to divide by k (a running sum, k mu)", like="checkpoint"),
}

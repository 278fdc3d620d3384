"""Claims of the template, one of each kind the claims engine knows."""

from __future__ import annotations

import math

from icml24.core.claims import NONNEG, PROB, REAL, Band, Claim, Effect, Null

# Every claim declares two more things (a newcomer copies this pattern):
# * effect=Effect(value, source): the effect the paper reports, in the units of the claim's *statistic* (an order
#   claim: the mean of metric - against; a slope claim: the log-log slope; within: the mean of metric; constraint:
#   the worst seed; convergence: the mean of the curve's last point). `source` names the table or figure and how the
#   paper's number was converted. Where the paper prints no number, give the smallest effect that still supports its
#   words with minimal=True and a one-line `why`. Where the claim is written baseline - method, name the method's
#   metric (`against`) in `method=`. The effect decides whether a missed band is a fail (power >= 0.8) or
#   inconclusive: it is the paper's number, never one chosen for a verdict.
# * ranges={metric: range}: the valid range of every metric the claim reads (PROB, CORR, NONNEG, REAL or a (lo, hi)
#   pair); planting the effect to compute the power clips to it.

CLAIMS = (
    Claim("C1", "The sample mean's RMSE falls as n^-1/2.", "textbook", "slope", metric="rmse_mean",
          against="n", statistic="log-log slope of RMSE vs n, bootstrap CI over seeds",
          bands={"quick": Band(-0.6, -0.4), "full": Band(-0.55, -0.45)}, paper_value="-0.5",
          effect=Effect(-0.5, "textbook: RMSE(xbar) = sigma / sqrt(n), slope -1/2 in log-log"),
          ranges={"rmse_mean": NONNEG, "n": NONNEG}),
    Claim("C2", "For Gaussian data the median is less efficient than the mean.", "textbook", "order",
          metric="mse_median", against="mse_mean", statistic="MSE(median) - MSE(mean) at the largest n",
          bands={"quick": Band(lo=0), "full": Band(lo=0)},
          # the statistic is a difference of MSEs, so the effect is one too (not the ratio pi/2 of C3)
          effect=Effect((math.pi / 2 - 1) / 1024, "textbook: MSE(median) ~ pi / (2n), MSE(mean) = 1 / n, so the "
                        "difference is (pi/2 - 1) / n = 5.6e-4 at QUICK's largest n = 1024 (3.5e-5 at FULL's 16384)"),
          ranges={"mse_median": NONNEG, "mse_mean": NONNEG}),
    Claim("C3", "The median's MSE is pi/2 times the mean's (asymptotic relative efficiency 2/pi).", "textbook", "within",
          metric="efficiency_ratio", statistic="MSE(median) / MSE(mean) at the largest n",
          bands={"quick": Band(1.4, 1.75), "full": Band(1.5, 1.65)}, paper_value=f"{math.pi / 2:.3f}",
          effect=Effect(math.pi / 2, "textbook: asymptotic relative efficiency 2/pi, MSE ratio pi/2 = 1.571"),
          ranges={"efficiency_ratio": NONNEG}),
    Claim("C4", "The t-interval has its nominal 95% coverage (up to Monte Carlo error).",
          "textbook", "within", metric="t_coverage",
          statistic="coverage of the 95% t-interval at n = 10, mean over seeds (8 x 400 intervals at QUICK)",
          bands={"quick": Band(lo=0.93), "full": Band(lo=0.94)},
          note="bands from theory, between the t-interval's 0.95 and the z-interval's 0.918 at n = 10 (the null "
               "a per-seed band of 0.9 could not reject)",
          effect=Effect(0.95, "textbook: the t-interval is exact for Gaussian data, coverage 0.95"),
          ranges={"t_coverage": PROB}),
    Claim("C5", "The sample mean is unbiased.", "textbook", "equiv", metric="estimate", against="truth",
          statistic="estimate - truth, CI within +-delta", bands={"quick": Band(-0.03, 0.03),
                                                                  "full": Band(-0.005, 0.005)},
          effect=Effect(0.0, "textbook: E[xbar] - mu = 0 (unbiased)"),
          ranges={"estimate": REAL, "truth": REAL}),
    Claim("C6", "The running mean converges to mu (law of large numbers).", "textbook", "convergence",
          metric="running_mean", statistic="final running mean, tail drift over the last quarter",
          bands={"quick": Band(0.97, 1.03, tol=0.05), "full": Band(0.995, 1.005, tol=0.01)},
          effect=Effect(1.0, "textbook: the running mean converges to mu = 1 (Config.mu)"),
          ranges={"running_mean": REAL}),
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

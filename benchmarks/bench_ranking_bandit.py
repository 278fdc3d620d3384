"""Benchmark of UCR's hot kernels (ranking_bandit): prints times and speed-up ratios.

1. Per-round decision (UCB scores for all N x K pairs + matching) at K=10, d=10 and growing N;
   vectorised scores vs a per-(item, position) loop computing theta^T z and z^T V^{-1} z one by one
   (a loop baseline: it shows the scores are vectorised, not that they are fast). The matching *is* the
   peer: scipy's ``linear_sum_assignment`` (no code of ours to compare with it).
2. Gram-inverse update: Sherman-Morrison vs inverting V + z z^T afresh.
3. Logistic MLE over a stream: warm-started geometric refits (refit_growth=0.05) vs refitting the MLE
   from scratch (Newton to convergence) after every observation.

Run: python benchmarks/bench_ranking_bandit.py   (about a minute on one core)
"""

from __future__ import annotations

import numpy as np

from icml24.core.bench import median_time, pin_threads, ratio_row
from icml24.papers.ranking_bandit.algorithm import UCR, ItemGLMs, confidence_radius, logistic_newton_step, sherman_morrison
from icml24.papers.ranking_bandit.components import best_list, design_vectors, mean_function


def fed_ucr(n, k, d, rng, rounds=200):
    pol = UCR(n, k, d, "logistic", ucb_scale=0.5)
    for _ in range(rounds):
        x = rng.normal(size=d)
        items = rng.choice(n, size=k, replace=False)
        pol.update(x, items, (rng.random(k) < 0.5).astype(float))
    return pol


def loop_scores(pol, x):
    """Reference: one (item, position) at a time."""
    glm = pol.glm
    rho = pol.ucb_scale * confidence_radius(glm.counts, glm.p, glm.lam, pol.delta, pol.n_items)
    z = design_vectors(x, glm.k)
    out = np.empty((glm.theta.shape[0], glm.k))
    for j in range(glm.theta.shape[0]):
        for pos in range(glm.k):
            out[j, pos] = mean_function(glm.theta[j] @ z[pos] + rho[j] * np.sqrt(z[pos] @ glm.v_inv[j] @ z[pos]),
                                        "logistic")
    return out


def main():
    pin_threads(1)
    rng = np.random.default_rng(0)
    k, d = 10, 10
    print("1. per-round decision, K=10, d=10")
    for n in (100, 1000, 10000):
        pol = fed_ucr(n, k, d, rng)
        x = rng.normal(size=d)
        assert np.allclose(pol.scores(x), loop_scores(pol, x))
        scores = pol.scores(x)
        scores_t = median_time(lambda: pol.scores(x), repeats=5, number=20, warmup=False)
        match_t = median_time(lambda: best_list(scores), repeats=5, number=20, warmup=False)
        slow = median_time(lambda: loop_scores(pol, x), repeats=3, warmup=False) if n <= 1000 else float("nan")
        print(f"   N={n:6d}: decision {(scores_t + match_t) * 1e3:7.3f} ms = scores {scores_t * 1e3:.3f} ms + "
              f"matching {match_t * 1e3:.3f} ms; per-pair loop scores {slow * 1e3:8.2f} ms; "
              f"ratio loop/vectorised {slow / scores_t:6.1f}x")
        if n <= 1000:
            ratio_row(f"UCR scores, N={n}, K={k}, d={d}", "our per-pair loop", scores_t, slow, "yes (allclose)")

    print("2. Gram inverse update, p = K + d = 20, batch of K=10 items")
    p = k + d
    a = rng.normal(size=(k, p, 3 * p))
    v = a @ np.swapaxes(a, 1, 2) + np.eye(p)
    v_inv = np.linalg.inv(v)
    z = rng.normal(size=(k, p))
    assert np.allclose(sherman_morrison(v_inv, z), np.linalg.inv(v + z[:, :, None] * z[:, None, :]))
    sm = median_time(lambda: sherman_morrison(v_inv, z), repeats=5, number=200, warmup=False)
    fresh = median_time(lambda: np.linalg.inv(v + z[:, :, None] * z[:, None, :]), repeats=5, number=200,
                        warmup=False)
    print(f"   Sherman-Morrison {sm * 1e6:.1f} us, fresh inverse {fresh * 1e6:.1f} us; ratio {fresh / sm:.1f}x")
    ratio_row("Gram inverse update, p=20, 10 items", "numpy inverse from scratch", sm, fresh, "yes (allclose)")

    print("3. logistic MLE: 3 items shown in random order for 1000 rounds (K = 3, d = 5)")
    n_rounds, kk, dd = 1000, 3, 5
    xs = rng.normal(size=(n_rounds, dd))
    orders = np.array([rng.permutation(kk) for _ in range(n_rounds)])
    ys = (rng.random((n_rounds, kk)) < 0.5).astype(float)

    def incremental():
        glm = ItemGLMs(kk, kk, dd, "logistic", refit_growth=0.05)
        for t in range(n_rounds):
            glm.update(xs[t], orders[t], ys[t])
        return glm.theta

    def scratch():
        data = {j: [] for j in range(kk)}
        theta = np.zeros((kk, kk + dd))
        for t in range(n_rounds):
            z = design_vectors(xs[t], kk)
            for pos, j in enumerate(orders[t]):
                data[j].append((z[pos], ys[t, pos]))
                zj, yj = np.array([r[0] for r in data[j]]), np.array([r[1] for r in data[j]])
                theta[j] = 0.0
                for _ in range(8):  # Newton from zero to convergence on all the item's data
                    theta[j] = logistic_newton_step(theta[j], zj, yj, 1.0)
        return theta

    inc = median_time(incremental, repeats=3, warmup=False)
    full = median_time(scratch, repeats=1, warmup=False)
    gap = np.abs(incremental() - scratch()).max()
    print(f"   incremental {inc * 1e3:.1f} ms, refit from scratch every round {full * 1e3:.1f} ms; "
          f"ratio {full / inc:.1f}x; final max |theta_inc - theta_mle| = {gap:.2e}")
    ratio_row("logistic MLE, 3 items x 1000 rounds", "refit from scratch every round", inc, full,
              f"max theta gap {gap:.1e}")


if __name__ == "__main__":
    main()

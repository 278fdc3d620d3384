"""Fits per second of the batched MLE (all replications in one call) against a per-replication loop.

Both fit the same R data sets from the same starts with the same algorithm
(:func:`icml24.papers.moe_gating.algorithm.fit_mle`); the loop calls it R times with R = 1. Prints the
median wall time of a few repeats and the speed-up ratio.

    python benchmarks/bench_moe_gating.py [--reps 16] [--n 5000] [--repeats 3]
"""

from __future__ import annotations

import argparse

import torch

from icml24.core.bench import Clock, median_timing, pin_threads, ratio_row
from icml24.papers.moe_gating.algorithm import fit_mle
from icml24.papers.moe_gating.experiment import Config, initial_params, true_params
from icml24.papers.moe_gating.model import MoEParams, sample


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=16)
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--gate", default="tanh")
    args = parser.parse_args()
    pin_threads(1)

    cfg = Config()
    truth = true_params(cfg)
    gen = torch.Generator().manual_seed(0)
    data = sample(truth, args.n, args.reps, args.gate, gen)
    init = initial_params(truth, 2, args.reps, args.gate, cfg.init_scale, gen)

    def batched() -> torch.Tensor:
        return fit_mle(data.x, data.y, init, args.gate).loglik

    def looped() -> torch.Tensor:
        out = []
        for r in range(args.reps):
            one = MoEParams(*(t[r:r + 1] for t in init))
            out.append(fit_mle(data.x[r:r + 1], data.y[r:r + 1], one, args.gate).loglik)
        return torch.cat(out)

    torch.testing.assert_close(batched(), looped(), rtol=1e-9, atol=1e-9)  # same fits either way
    times = {}
    for name, fn in (("batched", batched), ("loop", looped)):
        runs = []
        for _ in range(args.repeats):
            clock = Clock()
            fn()
            runs.append(clock.split())
        times[name] = median_timing(runs)
        print(f"{name:8s} {times[name]:.3f} s for {args.reps} fits at n={args.n} "
              f"({args.reps / times[name]:.1f} fits/s)")
    print(f"speed-up batched / loop: {times['loop'] / times['batched']:.2f}x")
    ratio_row(f"{args.reps} MLE fits at n={args.n} ({args.gate} gate)", "our per-fit loop", times["batched"],
              times["loop"], "yes (rtol 1e-9)")


if __name__ == "__main__":
    main()

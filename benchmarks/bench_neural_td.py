"""Benchmark: projected neural TD steps per second, vectorised over chains vs a per-chain loop.

Three ways to run B independent chains of Algorithm 1 (same init, same transitions, same result):
  * vectorised  - ``neural_td`` on all B chains at once (the experiment's kernel);
  * per-chain   - ``neural_td`` called B times with one chain each;
  * literal     - ``neural_td_naive``: explicit parameters, autograd-free gradients, explicit projection.
Prints chain-steps per second and the speed-up ratios (median of repeats). Run:
    python benchmarks/bench_neural_td.py
"""

from __future__ import annotations

import numpy as np
import torch

from icml24.core.bench import Clock, median_timing, pin_threads, ratio_row
from icml24.papers.neural_td.algorithm import Transitions, markov_transitions, neural_td, neural_td_naive, theory_schedule
from icml24.papers.neural_td.components import init_network, random_pair_chain


def main(width: int = 64, chains: int = 8, T: int = 400, repeats: int = 3) -> None:
    pin_threads(1)
    chain = random_pair_chain(5, 2, 16, 0.5, np.random.default_rng(0), 5.0)
    net = init_network(16, width, 2, torch.Generator().manual_seed(0))
    tr = markov_transitions(chain.P, chain.mu, T, chains, np.random.default_rng(1))
    sched = theory_schedule(T, 0.01, 0.5)
    cks = np.array([T])

    def vectorised():
        return neural_td(net, chain, tr, sched, 0.5, cks, chain.q_pi).error[:, 0]

    def per_chain():
        return np.concatenate([neural_td(net, chain, Transitions(tr.cur[i:i + 1], tr.nxt[i:i + 1]), sched, 0.5,
                                         cks, chain.q_pi).error[:, 0] for i in range(chains)])

    def literal():
        return neural_td_naive(net, chain, tr, sched, 0.5, cks, chain.q_pi).error[:, 0]

    times, outs = {}, {}
    for name, fn in (("vectorised", vectorised), ("per-chain", per_chain), ("literal", literal)):
        ts = []
        for _ in range(repeats):
            clock = Clock()
            outs[name] = fn()
            ts.append(clock.split())
        times[name] = median_timing(ts)
        print(f"{name:>10}: {chains * T / times[name]:9.0f} chain-steps/s  ({times[name]:.3f} s)")
    assert np.allclose(outs["vectorised"], outs["per-chain"], rtol=1e-3, atol=1e-7)
    assert np.allclose(outs["vectorised"], outs["literal"], rtol=1e-3, atol=1e-7)
    print(f"ratio per-chain / vectorised: {times['per-chain'] / times['vectorised']:.2f}x")
    print(f"ratio literal / vectorised:   {times['literal'] / times['vectorised']:.2f}x")
    print(f"(width m = {width}, L = 2, B = {chains} chains, T = {T}, 1 thread)")
    for name in ("per-chain", "literal"):
        ratio_row(f"neural TD, {chains} chains x {T} steps, m={width}", f"our {name} loop", times["vectorised"],
                  times[name], "yes (rtol 1e-3)")


if __name__ == "__main__":
    main()

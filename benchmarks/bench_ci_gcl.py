"""Benchmark: CI-GCL's batched, differentiable low Laplacian spectrum against the per-graph loop of the
official code (one ``eigvalsh`` per graph), forward + backward, on a batch of SBM graphs and of molecules.

Both give the same eigenvalues (checked below, and in tests/papers/test_ci_gcl.py).
Run: python benchmarks/bench_ci_gcl.py   (seconds; one thread)
"""

from __future__ import annotations

import numpy as np
import torch

from icml24.core.bench import median_time, pin_threads, ratio_row
from icml24.papers.ci_gcl import data, spectral


def fwd_bwd(fn, graphs: data.Graphs, k: int = 4):
    c = spectral.components(graphs.A, graphs.mask)
    W = graphs.A.clone().requires_grad_()

    def step():
        fn(W, graphs.mask, c, k).square().sum().backward()
    return step


if __name__ == "__main__":
    pin_threads(1)
    sets = {"SBM, 128 graphs of 20-40 nodes": data.sbm_dataset(np.random.default_rng(0), 128),
            "molecules, 128 graphs (<= 47 atoms)": data.solubility_dataset().subset(np.arange(128))}
    print(f"{'batch':38s} {'loop ms':>9s} {'batched ms':>11s} {'batched/loop':>13s}")
    for name, g in sets.items():
        c = spectral.components(g.A, g.mask)
        assert torch.allclose(spectral.low_spectrum(g.A, g.mask, c, 4), spectral.low_spectrum_loop(g.A, g.mask, c, 4),
                              atol=1e-5)
        loop = median_time(fwd_bwd(spectral.low_spectrum_loop, g), repeats=5)
        batched = median_time(fwd_bwd(spectral.low_spectrum, g), repeats=5)
        print(f"{name:38s} {loop * 1e3:9.1f} {batched * 1e3:11.1f} {batched / loop:13.2f}")
        ratio_row(f"low Laplacian spectrum fwd+bwd, {name}", "official per-graph eigvalsh loop", batched, loop,
                  "yes (atol 1e-5)")

"""Benchmark: Mamba's parallel selective scan vs the step-by-step loop (forward + backward, sequence
256), and training throughput (tokens/s) of each model family at the QUICK sizes.

Run: ``python benchmarks/bench_copying.py`` (one process, a few tens of seconds on one core).
"""

from __future__ import annotations

import numpy as np
import torch

from icml24.core.bench import median_time
from icml24.papers.copying.experiment import QUICK, build_model
from icml24.papers.copying.model import selective_scan, selective_scan_naive
from icml24.papers.copying.tasks import masked_lm_loss, packed_batch


def scan_fwd_bwd(scan, B=4, L=256, E=64, N=16):
    g = torch.Generator().manual_seed(0)
    dA = torch.rand(B, L, E, N, generator=g).requires_grad_()
    dBx = torch.randn(B, L, E, N, generator=g).requires_grad_()
    C = torch.randn(B, L, N, generator=g).requires_grad_()

    def step():
        scan(dA, dBx, C).sum().backward()
    return step


def train_tokens_per_s(kind: str, steps: int = 5) -> float:
    torch.manual_seed(0)
    model = build_model(kind, QUICK)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    batches = [packed_batch("copy", QUICK.batch, QUICK.context, (QUICK.train_len_min, QUICK.train_len_max),
                            QUICK.alphabet, rng)[0] for _ in range(steps + 1)]
    it = iter(batches)

    def step():
        b = next(it)
        loss = masked_lm_loss(model(b.ids[:, :-1]), b.ids, b.mask)
        opt.zero_grad()
        loss.backward()
        opt.step()
    sec = median_time(step, repeats=steps)
    return QUICK.batch * QUICK.context / sec


if __name__ == "__main__":
    torch.set_num_threads(1)
    fast = median_time(scan_fwd_bwd(selective_scan), repeats=5)
    naive = median_time(scan_fwd_bwd(selective_scan_naive), repeats=5)
    print("selective scan, B=4 L=256 E=64 N=16, forward+backward (median of 5):")
    print(f"  parallel (Hillis-Steele) {fast * 1e3:8.1f} ms")
    print(f"  naive loop               {naive * 1e3:8.1f} ms")
    print(f"  speed-up naive/parallel  {naive / fast:8.2f}x")
    print("training throughput at QUICK sizes (tokens/s, batch x context per step):")
    for kind in ("hard_alibi", "rope", "mamba", "lstm"):
        print(f"  {kind:11s} {train_tokens_per_s(kind):10.0f}")

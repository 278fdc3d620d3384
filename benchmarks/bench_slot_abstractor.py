"""Benchmark: slot_abstractor's batched slot attention (every image of a batch in one pass) against a per-image loop
(``slot_attention_loop``, the naive reference), forward only as the frozen encoder runs it; and the Abstractor's
cost as the objects grow (relational cross-attention and self-attention over N slots: quadratic in N).

Both slot attentions give the same slots (checked below, and in tests/papers/test_slot_abstractor.py).
Run: python benchmarks/bench_slot_abstractor.py   (under a minute; one thread)
"""

from __future__ import annotations

import torch

from icml24.core.bench import median_time, pin_threads, ratio_row
from icml24.papers.slot_abstractor.abstractor import Reasoner
from icml24.papers.slot_abstractor.config import QUICK
from icml24.papers.slot_abstractor.slots import SlotAttention, slot_attention_loop

if __name__ == "__main__":
    pin_threads(1)
    torch.manual_seed(0)
    D, K, N = QUICK.slot_dim, QUICK.n_slots, QUICK.image_size ** 2
    sa = SlotAttention(D, K, QUICK.slot_iters, "random").eval()
    print(f"{'workload':44s} {'loop ms':>9s} {'batched ms':>11s} {'images/s batched':>17s} {'batched/loop':>13s}")
    with torch.no_grad():
        for b in (8, 64):
            x, init = torch.randn(b, N, D), torch.randn(b, K, D)
            assert torch.allclose(sa(x, slots=init).slots, slot_attention_loop(sa, x, init), atol=1e-5)
            loop = median_time(lambda: slot_attention_loop(sa, x, init), repeats=5)
            batched = median_time(lambda: sa(x, slots=init), repeats=7)
            name = f"{b} images x {N} inputs x {K} slots, T = {QUICK.slot_iters}"
            print(f"{name:44s} {loop * 1e3:9.2f} {batched * 1e3:11.2f} {b / batched:17.0f} {batched / loop:13.4f}")
            ratio_row(f"slot_abstractor slot attention, {name}", "per-image loop", batched, loop, "yes (atol 1e-5)")
        print(f"\n{'Abstractor forward, batch 128':44s} {'ms':>9s} {'ms / N^2 x 1e3':>15s}")
        for n in (10, 20, 40, 80):
            r = Reasoner("abstractor", D, QUICK.dim, QUICK.heads, QUICK.mlp, QUICK.depth, panels=1).eval()
            z, m, panel = torch.randn(128, n, D), torch.randn(128, n, D), torch.zeros(n, dtype=torch.long)
            t = median_time(lambda: r(z, m, panel), repeats=5)
            print(f"{f'N = {n} slots':44s} {t * 1e3:9.2f} {t * 1e6 / n ** 2:15.3f}")

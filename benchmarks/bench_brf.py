"""Train-step time of the BRF-RSNN: fused network vs the plain per-step formulation.

One train step = forward over the whole sequence + loss + backward (BPTT). The fast path is
:class:`icml24.papers.brf.model.RSNN` (input projection hoisted, whole-sequence BRF layer with a hand-written
adjoint backward run as compiled numba loops on the CPU, closed-form LI readout); the baseline is
:func:`reference_forward` (concat + Linear + cell + readout every step, autograd through all of it: the
official code's structure).

    python benchmarks/bench_brf.py                      # the paper's S-MNIST size: T=784, B=256, H=256
    python benchmarks/bench_brf.py --steps 64 --batch 64 --hidden 64   # the QUICK digits size
"""

from __future__ import annotations

import argparse

import torch

from icml24.core.bench import median_time, pin_threads, ratio_row
from icml24.papers.brf.model import RSNN, reference_forward, sequence_nll


def time_step(net: RSNN, forward, x: torch.Tensor, y: torch.Tensor, repeats: int) -> float:
    """Median seconds of one forward + backward (after one warm-up step)."""
    def step():
        net.zero_grad()
        sequence_nll(forward(x).readout, y).backward()

    return median_time(step, repeats=repeats)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=784)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    pin_threads(args.threads)
    g = torch.Generator().manual_seed(0)
    net = RSNN(1, args.hidden, 10, "brf", generator=g)
    x = 100 * torch.rand(args.steps, args.batch, 1, generator=g)  # pixel-like drive, as in the digits task
    y = torch.randint(0, 10, (args.batch,), generator=g)
    with torch.no_grad():  # same numbers from both paths
        assert torch.equal(net(x).spikes, reference_forward(net, x).spikes)
    fast = time_step(net, net, x, y, args.repeats)
    ref = time_step(net, lambda x: reference_forward(net, x), x, y, args.repeats)
    print(f"BRF-RSNN train step T={args.steps} B={args.batch} H={args.hidden} threads={args.threads}: "
          f"per-step reference {ref:.3f} s, fused {fast:.3f} s, speed-up {ref / fast:.2f}x "
          f"(median of {args.repeats})")
    ratio_row(f"BRF-RSNN train step T={args.steps} B={args.batch} H={args.hidden}",
              "per-step reference (= official network)", fast, ref, "spikes identical")


if __name__ == "__main__":
    main()

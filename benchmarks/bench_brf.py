"""Train-step time of the BRF-RSNN: fused network vs the plain per-step formulation.

One train step = forward over the whole sequence + loss + backward (BPTT). The fast path is
:class:`icml24.papers.brf.model.RSNN` (input projection hoisted, whole-sequence BRF layer with a hand-written
adjoint backward run as compiled numba loops on the CPU, closed-form LI readout); the baseline is
:func:`reference_forward` (concat + Linear + cell + readout every step, autograd through all of it: the
official code's structure).

    python benchmarks/bench_brf.py                      # the paper's S-MNIST size: T=784, B=256, H=256
    python benchmarks/bench_brf.py --steps 64 --batch 64 --hidden 64   # the QUICK digits size
    python benchmarks/bench_brf.py --drive 100          # the drive of earlier rounds: almost no spikes (7e-6)

The fused layer's recurrent product and weight gradient are event-driven (cost proportional to the spike
rate), so the drive is scaled to make the untrained network fire at about the rate of a trained BRF network
(0.03-0.14 over the QUICK tasks: README); the rate is printed. Spikes are compared with the reference's as the
mismatches per reference spike (the sums run in another order, so a spike at the threshold can flip in float32).
"""

from __future__ import annotations

import argparse

import torch

from icml24.core.bench import interleaved, pin_threads, ratio_row
from icml24.papers.brf.model import RSNN, reference_forward, sequence_nll


def train_step(net: RSNN, forward, x: torch.Tensor, y: torch.Tensor):
    """One forward + backward of ``forward`` (the network or the reference) as a function of no arguments."""
    def step():
        net.zero_grad()
        sequence_nll(forward(x).readout, y).backward()

    return step


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=784)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--drive", type=float, default=2000.0, help="input scale: x = drive * U[0, 1]")
    args = ap.parse_args()
    pin_threads(args.threads)
    g = torch.Generator().manual_seed(0)
    net = RSNN(1, args.hidden, 10, "brf", generator=g)
    x = args.drive * torch.rand(args.steps, args.batch, 1, generator=g)  # (T, B, 1) pixel-like drive
    y = torch.randint(0, 10, (args.batch,), generator=g)
    with torch.no_grad():  # the same spikes from both paths, up to threshold ties
        spikes = net(x).spikes
        ref_spikes = reference_forward(net, x).spikes
    rate = float(spikes.mean())
    flips = int((spikes != ref_spikes).sum())
    per_spike = flips / max(1, int(ref_spikes.sum()))
    assert per_spike < 1e-4, f"{flips} spikes differ from the reference's ({per_spike:.2e} per reference spike)"
    times = interleaved({"fused": train_step(net, net, x, y),
                         "reference": train_step(net, lambda x: reference_forward(net, x), x, y)}, args.repeats)
    fast, ref = times["fused"], times["reference"]
    print(f"BRF-RSNN train step T={args.steps} B={args.batch} H={args.hidden} threads={args.threads}, spike rate "
          f"{rate:.3f}: per-step reference {ref:.3f} s, fused {fast:.3f} s, speed-up {ref / fast:.2f}x "
          f"(median of {args.repeats} interleaved; CPU time {fast.cpu:.3f} s and {ref.cpu:.3f} s; {flips} spikes "
          f"differ from the reference's, {per_spike:.1e} per spike)")
    ratio_row(f"BRF-RSNN train step T={args.steps} B={args.batch} H={args.hidden} rate {rate:.3f}",
              "per-step reference (= official network)", fast, ref, f"{flips} spikes differ")


if __name__ == "__main__":
    main()

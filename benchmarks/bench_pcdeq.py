"""Benchmark: pcDEQ solve with implicit backward vs (a) backprop through the unrolled iteration and
(b) a per-sample loop of solves. (`torchdeq` is not installed here, so its solver is not compared.)

Layer: PcDEQLinear(80, tanh) with W >= 0 rescaled to spectral norm 1 (about 13 forward steps, like the
end of QUICK training), batch 64 (the paper's linear MNIST block and batch size), float32, one thread.
Prints the median over repeats and the ratios. The implicit backward saves memory (O(1) in the number
of steps), not time: each adjoint step is one autograd vector-Jacobian product.
"""

from __future__ import annotations

import torch

from icml24.core.bench import median_time
from icml24.papers.pcdeq import DEQ, PcDEQLinear, fixed_point_iteration, unrolled_deq


def main() -> None:
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(0)
    layer = PcDEQLinear(80, "tanh", generator=gen)
    with torch.no_grad():
        layer.g.mul_(1.0 / torch.linalg.matrix_norm(layer.weight(), ord=2))
    x = torch.randn(64, 80, generator=gen)
    deq = DEQ(layer)
    deq(x)
    steps = deq.forward_stats.steps

    def implicit():
        layer.zero_grad()
        deq(x).square().sum().backward()

    def unrolled():
        layer.zero_grad()
        unrolled_deq(layer, x, steps + 1).square().sum().backward()

    def batched_solve():
        with torch.no_grad():
            w, xt = layer.weight(), layer.inject(x)
            fixed_point_iteration(lambda z: layer.step(z, xt, w), torch.zeros_like(xt))

    def per_sample_solve():
        with torch.no_grad():
            w, xt = layer.weight(), layer.inject(x)
            for i in range(xt.shape[0]):
                fixed_point_iteration(lambda z: layer.step(z, xt[i:i + 1], w), torch.zeros_like(xt[i:i + 1]))

    t_imp, t_unr = median_time(implicit), median_time(unrolled)
    t_bat, t_loop = median_time(batched_solve), median_time(per_sample_solve)
    print(f"forward steps {steps}, backward steps {deq.backward_stats.steps}")
    print(f"forward+backward: implicit {t_imp * 1e3:.2f} ms, unrolled autograd {t_unr * 1e3:.2f} ms, "
          f"ratio unrolled/implicit {t_unr / t_imp:.2f}")
    print(f"forward solve: batched {t_bat * 1e3:.2f} ms, per-sample loop {t_loop * 1e3:.2f} ms, "
          f"ratio loop/batched {t_loop / t_bat:.1f}")


if __name__ == "__main__":
    main()

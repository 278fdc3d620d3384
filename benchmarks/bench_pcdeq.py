"""Benchmark: pcDEQ solve with implicit backward vs (a) backprop through the unrolled iteration and
(b) a per-sample loop of solves; and Anderson acceleration against the plain fixed-point iteration.

The plain iteration is the official code's solver (`solvers.fixed_point_iteration` of
mateuszgabor/pcdeq: the same update, relative residual and stopping rule as ours, which is the official
solver restated). Anderson (memory 5, the DEQ/torchdeq scheme with a relative ridge) is compared at the
same tolerance: applications of the map and wall time, forward solve and a training step (forward +
implicit backward, both solves by the same method); the fixed points agree to the tolerance.

Layer: PcDEQLinear(80, tanh) with W >= 0 rescaled to spectral norm 1 (about 13 forward steps, like the
end of QUICK training), batch 64 (the paper's linear MNIST block and batch size), float32, one thread.
Prints the median over repeats and the ratios. The implicit backward saves memory (O(1) in the number
of steps), not time: each adjoint step is one autograd vector-Jacobian product.
"""

from __future__ import annotations

import torch

from icml24.core.bench import median_time, pin_threads, ratio_row
from icml24.papers.pcdeq import DEQ, PcDEQConv, PcDEQLinear, anderson, fixed_point_iteration, unrolled_deq


def _unit_norm(layer, shape: tuple[int, ...], gen: torch.Generator) -> None:
    """Rescale the layer's W to spectral radius 1 (power iteration on z -> W z, the Perron root for W >= 0): a
    slow, tanh-limited contraction."""
    with torch.no_grad():
        w = layer.weight()
        u = torch.rand(shape, generator=gen)
        for _ in range(50):
            v = layer.linear_map(u, w)
            norm = torch.linalg.vector_norm(v) / torch.linalg.vector_norm(u)
            u = v / torch.linalg.vector_norm(v)
        layer.g.mul_(1.0 / norm)


def solver_rows() -> None:
    """Plain iteration (= the official solver) against Anderson at the same tolerance."""
    gen = torch.Generator().manual_seed(1)
    lin = PcDEQLinear(80, "tanh", generator=gen)
    _unit_norm(lin, (64, 80), gen)
    conv = PcDEQConv(82, "tanh", generator=gen)
    _unit_norm(conv, (8, 82, 28, 28), gen)
    cases = [("linear-80, batch 64", lin, torch.randn(64, 80, generator=gen)),
             ("single-conv-82, batch 8, 28x28", conv, torch.randn(8, 82, 28, 28, generator=gen))]
    print("solver: plain iteration (official) vs Anderson, applications of the map and median wall time")
    for name, layer, x in cases:
        with torch.no_grad():
            w, xt = layer.weight(), layer.inject(x)
        for tol in (1e-4, 1e-6):
            def plain(tol=tol, w=w, xt=xt, layer=layer):
                with torch.no_grad():
                    return fixed_point_iteration(lambda z: layer.step(z, xt, w), torch.zeros_like(xt), 500, tol)

            def accel(tol=tol, w=w, xt=xt, layer=layer):
                with torch.no_grad():
                    return anderson(lambda z: layer.step(z, xt, w), torch.zeros_like(xt), 500, tol)

            p, a = plain(), accel()
            gap = float((p.z - a.z).abs().max())
            tp, ta = median_time(plain, repeats=5), median_time(accel, repeats=5)
            print(f"  {name}, tol {tol:g}: steps {p.stats.steps} vs {a.stats.steps}; {tp * 1e3:.2f} vs {ta * 1e3:.2f} ms,"
                  f" ratio anderson/plain {ta / tp:.2f}; max |z_plain - z_anderson| {gap:.1e}")
            ratio_row(f"Anderson solve, {name}, tol {tol:g} ({a.stats.steps} vs {p.stats.steps} steps)",
                      "plain iteration (= official solver)", ta, tp, f"fixed points within {gap:.1e}")
    x = cases[0][2]
    for solver in ("iteration", "anderson"):
        deq = DEQ(lin, solver=solver)

        def step(deq=deq):
            lin.zero_grad()
            deq(x).square().sum().backward()

        t = median_time(step)
        print(f"  train step linear-80 (forward + implicit backward, tol 1e-4), {solver}: {t * 1e3:.2f} ms, "
              f"steps {deq.forward_stats.steps} forward / {deq.backward_stats.steps} backward")


def main() -> None:
    pin_threads(1)
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
    ratio_row("pcDEQ linear-80 forward solve, batch 64", "our per-sample loop", t_bat, t_loop, "same iteration")
    solver_rows()


if __name__ == "__main__":
    main()

"""Per-round ExO solve time: the fast saddle-point Newton solver against general convex solvers.

All solvers get the same random instances (q from a Dirichlet, hybrid-regularizer stability weights)
of the paper's ExO program on several games and must reach the same optimum (checked to 1e-6):

* fast: :class:`SaddleSolver` (dual in (p, u), estimator in closed form, log-barrier Newton);
* reference: :func:`solve_exo_reference`, scipy ``trust-constr`` on the full program in (p, G, c, t);
* SLSQP: :class:`ExOSolver`, null-space reduction + scipy SLSQP, cold start per instance.

A second workload is the exact-objective baseline of claim C1b (LS2020's exponential-weights objective,
:class:`ExpWeightsExOSolver`) on the sequence of (q, w) that its learner re-solves in a run on apple
tasting: the solver warm-started from its previous optimum (what a run uses) against the three cold
stages per solve (the previous code path).

Prints the median time per solve (median over repeats) and the speed-up ratios.

    python benchmarks/bench_partial_monitoring.py [--instances 3] [--repeats 3]
"""

from __future__ import annotations

import argparse

import numpy as np

from icml24.core.bench import Clock, Timing, median_timing, pin_threads, ratio_row
from icml24.papers.partial_monitoring import algorithm
from icml24.papers.partial_monitoring.components import make_game, stochastic_env
from icml24.papers.partial_monitoring.exo import (
    ExOSolver,
    ExpWeightsExOSolver,
    SaddleSolver,
    solve_exo_reference,
    stability_weights,
)


def learner_path(horizon: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (q, w) at which C1b's exact-objective negentropy learner re-solves ExO in one run (apple tasting)."""
    calls = []

    class Recording(ExpWeightsExOSolver):
        def solve(self, q, w, lb=None, floor_beta=None):
            calls.append((q.copy(), w.copy()))
            return super().solve(q, w, lb)

    game = make_game("apple_tasting")
    spec = algorithm.LearnerSpec("negentropy", "fixed", 2, stability="exact")
    original, algorithm.ExpWeightsExOSolver = algorithm.ExpWeightsExOSolver, Recording
    try:
        algorithm.play(game, stochastic_env(np.array([0.6, 0.4]), horizon), spec, np.random.default_rng(0),
                       np.array([horizon]))
    finally:
        algorithm.ExpWeightsExOSolver = original
    return calls


def main() -> None:
    pin_threads(1)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=3, help="random instances per game")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--games", default="apple_tasting,bandit3,label_efficient,pricing3")
    parser.add_argument("--path-horizon", type=int, default=2000, help="rounds of the exact-objective learner run")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    cases = []
    for name in args.games.split(","):
        game = make_game(name)
        for _ in range(args.instances):
            q = rng.dirichlet(np.ones(game.k))
            cases.append((game, q, stability_weights(q, float(rng.uniform(1, 30)), 1.0)))

    def timed(fn) -> tuple[Timing, list[float]]:
        times, values = [], []
        for _ in range(args.repeats):
            clock = Clock()
            values = [fn(g, q, w).value for g, q, w in cases]
            times.append(clock.split(len(cases)))
        return median_timing(times), values

    fast_t, fast_v = timed(lambda g, q, w: SaddleSolver(g).solve(q, w))
    ref_t, ref_v = timed(lambda g, q, w: solve_exo_reference(g, q, w))
    slsqp_t, slsqp_v = timed(lambda g, q, w: ExOSolver(g).solve(q, w))
    gap = max(max(abs(a - b) for a, b in zip(fast_v, ref_v)), max(abs(a - b) for a, b in zip(fast_v, slsqp_v)))
    print(f"{len(cases)} instances, {args.repeats} repeats; max |objective difference| = {gap:.2e}")
    print(f"fast saddle Newton : {fast_t * 1e3:8.2f} ms / solve")
    print(f"trust-constr (ref) : {ref_t * 1e3:8.2f} ms / solve   ratio {ref_t / fast_t:6.1f}x")
    print(f"SLSQP (reduced)    : {slsqp_t * 1e3:8.2f} ms / solve   ratio {slsqp_t / fast_t:6.1f}x")
    ratio_row("ExO solve (saddle Newton)", "scipy trust-constr on the full program", fast_t, ref_t,
              f"objectives within {gap:.1e}")
    ratio_row("ExO solve (saddle Newton)", "scipy SLSQP on the reduced program", fast_t, slsqp_t,
              f"objectives within {gap:.1e}")

    path = learner_path(args.path_horizon)
    game = make_game("apple_tasting")

    def path_timed(fresh: bool) -> tuple[Timing, np.ndarray]:
        times, values = [], np.zeros(len(path))
        for _ in range(args.repeats):
            solver = ExpWeightsExOSolver(game)
            clock = Clock()
            for i, (q, w) in enumerate(path):
                if fresh:
                    solver._warm = None                  # forget the previous optimum: the three cold stages
                values[i] = solver.solve(q, w).value
            times.append(clock.split(len(path)))
        return median_timing(times), values

    warm_t, warm_v = path_timed(fresh=False)
    cold_t, cold_v = path_timed(fresh=True)
    # SLSQP's tolerance (ftol 1e-12) is absolute; where q is concentrated the objective itself is ~1e-9.
    # Lower is better: how much worse the warm path can be, and how much better (where the cold stages stall)
    worse, better = float(np.max(warm_v - cold_v)), float(np.max(cold_v - warm_v))
    print(f"exact objective, {len(path)} re-solves of one learner run: warm {warm_t * 1e3:.2f} ms, "
          f"three cold stages {cold_t * 1e3:.2f} ms / solve")
    ratio_row(f"exact-objective ExO along a learner run ({len(path)} solves)", "three cold stages per solve",
              warm_t, cold_t, f"warm at most {worse:.1e} above, up to {better:.1e} below (largest {np.abs(cold_v).max():.1e})")


if __name__ == "__main__":
    main()

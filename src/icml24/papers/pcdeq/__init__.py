"""pcDEQ: positive concave deep equilibrium models (Gabor, Piotrowski, Cavalcante, ICML 2024).

Import the pieces you need, e.g. ``from icml24.papers.pcdeq import PcDEQLinear, DEQ, attach_projection``;
the package itself imports no torch until a name is used.
"""

from icml24.core.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "components": ["SolverStats", "FixedPointResult", "fixed_point_iteration", "anderson", "solve", "SOLVERS", "pcdeq_injection",
                   "PcDEQLinear", "PcDEQConv", "UnconstrainedDEQLinear", "project_nonnegative_",
                   "attach_projection", "DEQ", "unrolled_deq", "LinearDEQNet", "MLPNet",
                   "RowSolve", "iterate_rows", "random_instance", "thompson_distance", "geometric_rate"],
    "data": ["ImageData", "mnist_5k_split", "stratified_indices", "read_idx", "load_idx_dataset"],
    "config": ["Config", "SMOKE", "QUICK", "FULL"],
    "experiment": ["run", "figures", "property_study"],
    "claims": ["CLAIMS"],
})

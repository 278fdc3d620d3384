"""Neural TD with deep networks (Ke, Wen & Zhang, ICML 2024): projected neural TD(0) with an L-layer
network, exact finite-MDP references (stationary distribution, Q^pi, NTK-linearised projected fixed
point) and the experiment that checks the O~(1/T) rate and the width-dependent floor.
"""

from icml24.core.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "components": ["PairChain", "random_pair_chain", "stationary_distribution", "bellman_q", "mu_error",
                   "Network", "Forward", "init_network", "forward", "backward", "param_grads", "ntk_gram",
                   "SigmaSpectrum", "sigma_spectrum", "LinearizedFixedPoint", "linearized_fixed_point"],
    "algorithm": ["Transitions", "markov_transitions", "iid_transitions", "Schedule", "theory_schedule",
                  "earlier_schedule", "TDTrace", "neural_td", "neural_td_naive", "ExpectedTD",
                  "expected_neural_td"],
    "config": ["Config", "SMOKE", "QUICK", "FULL"],
    "experiment": ["run", "figures"],
    "claims": ["CLAIMS"],
})

"""Position: A Call for Embodied AI (Paolo, Gonzalez-Billandon & Kégl, ICML 2024): the paper's framework -
perception, memory, action and learning aligned with active inference - as a discrete-POMDP agent with four
swappable modules (agent.py), the mazes where each mechanism is needed (envs.py), and the agreement with
pymdp 1.0.4 (reference.py, the ``aif`` extra). A position paper without experiments: the claims test the
framework's mechanisms, not the paper's thesis.
"""

from icml24.core.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "agent": ["GenerativeModel", "log_preferences", "normalise", "Posterior", "likelihood", "infer_states", "Counts",
              "Memory", "all_policies", "EFE", "novelty_weights", "expected_free_energy", "Plan", "Planner",
              "Smoothed", "smooth", "dirichlet_update_a", "dirichlet_update_b", "forget", "Episode",
              "DirichletLearner", "Step", "Agent", "ReactivePolicy", "AGENTS", "MEMORIES", "make_agent"],
    "envs": ["Maze", "tmaze", "delayed_tmaze", "make_env", "ENVS", "arm_prior", "Trace", "play", "cue_first", "success",
             "fit_reactive"],
    "reference": ["Agreement", "compare_tmaze"],
    "config": ["Config", "SMOKE", "QUICK", "FULL"],
    "experiment": ["run", "figures", "c1_stage", "c2_stage", "c3_stage"],
    "claims": ["CLAIMS"],
})

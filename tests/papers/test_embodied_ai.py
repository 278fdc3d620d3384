"""embodied_ai: perception against exact Bayes, F, G and the policy posterior by hand, Dirichlet learning as
counts, agreement with pymdp, the memoryless policy, and bad input through the CLI."""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import math

import numpy as np
import pytest
from conftest import run_cli

from icml24.core.errors import UserError
from icml24.papers.embodied_ai import agent as ag
from icml24.papers.embodied_ai import envs


def _random_model(rng: np.random.Generator, S: int = 3, U: int = 2, outcomes=(2, 3)) -> ag.GenerativeModel:
    A = tuple(rng.dirichlet(np.ones(o), size=S).T for o in outcomes)  # each (O_m, S)
    B = np.stack([rng.dirichlet(np.ones(S), size=S).T for _ in range(U)])  # (U, S, S), columns sum to 1
    C = tuple(ag.log_preferences(rng.normal(size=o)) for o in outcomes)
    return ag.GenerativeModel(A, B, C, rng.dirichlet(np.ones(S)))


def _path_weights(model, observations, actions):
    """Brute force: p(s_0..s_t, o_0..o_t | u) for every state path of length len(observations)."""
    S = len(model.D)
    out = {}
    for path in itertools.product(range(S), repeat=len(observations)):
        w = model.D[path[0]]
        for t, s in enumerate(path):
            w *= np.prod([A_m[o, s] for A_m, o in zip(model.A, observations[t])])
            if t:
                w *= model.B[actions[t - 1]][s, path[t - 1]]
        out[path] = w
    return out


def test_filtering_smoothing_and_free_energy_equal_exact_bayes_by_enumeration():
    rng = np.random.default_rng(3)
    model = _random_model(rng)
    T = 4
    observations = [tuple(int(rng.integers(a.shape[0])) for a in model.A) for _ in range(T)]
    actions = [int(a) for a in rng.integers(2, size=T - 1)]
    memory, surprise = ag.Memory(), 0.0
    for t in range(T):  # the agent's perception + memory loop
        post = ag.infer_states(model.A, observations[t], memory.prior(model, actions[t - 1] if t else None))
        memory.belief = post.qs
        w = _path_weights(model, observations[: t + 1], actions[:t])
        evidence = sum(w.values())
        exact = np.array([sum(v for p, v in w.items() if p[-1] == s) for s in range(3)]) / evidence
        np.testing.assert_allclose(post.qs, exact, atol=1e-12)
        surprise += post.F  # at the exact posterior each step's F is -ln p(o_t | o_<t), so they sum to -ln p(o_0..t)
        assert surprise == pytest.approx(-math.log(evidence), abs=1e-10)
    sm = ag.smooth(model, observations, actions)
    w = _path_weights(model, observations, actions)
    Z = sum(w.values())
    for t in range(T):
        exact = [sum(v for p, v in w.items() if p[t] == s) / Z for s in range(3)]
        np.testing.assert_allclose(sm.marginals[t], exact, atol=1e-12)
    for t in range(T - 1):
        exact = [[sum(v for p, v in w.items() if p[t + 1] == s1 and p[t] == s0) / Z for s0 in range(3)] for s1 in range(3)]
        np.testing.assert_allclose(sm.pairs[t], exact, atol=1e-12)


def test_free_energy_by_hand():
    A = (np.array([[0.9, 0.2], [0.1, 0.8]]),)
    prior = np.array([0.3, 0.7])
    post = ag.infer_states(A, [1], prior)
    # p(o=1) = 0.3 * 0.1 + 0.7 * 0.8 = 0.59; q = (0.03, 0.56) / 0.59
    q = np.array([0.03, 0.56]) / 0.59
    np.testing.assert_allclose(post.qs, q, atol=1e-12)
    kl = q[0] * math.log(q[0] / 0.3) + q[1] * math.log(q[1] / 0.7)
    accuracy = q[0] * math.log(0.1) + q[1] * math.log(0.8)
    assert post.F == pytest.approx(kl - accuracy, abs=1e-12)
    assert post.F == pytest.approx(-math.log(0.59), abs=1e-12)  # at the exact posterior, F is the surprise


def test_expected_free_energy_and_policy_posterior_on_a_two_state_example_by_hand():
    # two states, "stay" (u = 0) and "swap" (u = 1); state 0 is informative, state 1 ambiguous
    A = (np.array([[0.9, 0.5], [0.1, 0.5]]),)
    B = np.stack([np.eye(2), np.array([[0.0, 1.0], [1.0, 0.0]])])
    lnC = ag.log_preferences([1.0, 0.0])
    model = ag.GenerativeModel(A, B, (lnC,), np.array([0.5, 0.5]))
    qs = np.array([0.8, 0.2])
    efe = ag.expected_free_energy(model, qs, np.array([[0], [1]]))
    c0, c1 = 1 - math.log(1 + math.e), -math.log(1 + math.e)  # log_softmax([1, 0])
    h = -(0.9 * math.log(0.9) + 0.1 * math.log(0.1))  # H[p(o | s = 0)]
    for k, (p0, p1) in enumerate(((0.8, 0.2), (0.2, 0.8))):  # q(s | stay), q(s | swap)
        o0, o1 = 0.9 * p0 + 0.5 * p1, 0.1 * p0 + 0.5 * p1
        risk = o0 * (math.log(o0) - c0) + o1 * (math.log(o1) - c1)
        ambiguity = p0 * h + p1 * math.log(2)
        assert efe.risk[k] == pytest.approx(risk, abs=1e-12)
        assert efe.ambiguity[k] == pytest.approx(ambiguity, abs=1e-12)
        assert efe.G[k] == pytest.approx(risk + ambiguity, abs=1e-12)
        assert efe.utility[k] == pytest.approx(o0 * c0 + o1 * c1, abs=1e-12)
        # with a normalised C: risk + ambiguity = -(utility + information gain)
        assert efe.G[k] == pytest.approx(-(efe.utility[k] + efe.info_gain[k]), abs=1e-12)
    gamma = 4.0
    plan = ag.Planner(1, gamma).plan(model, qs)
    expected = 1.0 / (1.0 + math.exp(-gamma * (efe.G[1] - efe.G[0])))
    assert plan.q_pi[0] == pytest.approx(expected, abs=1e-12) and plan.q_u.sum() == pytest.approx(1.0)
    reward_only = ag.expected_free_energy(model, qs, np.array([[0], [1]]), epistemic=False)
    np.testing.assert_allclose(reward_only.G, -efe.utility, atol=1e-12)


def test_horizon_sums_steps_and_policies_are_in_pymdp_order():
    rng = np.random.default_rng(5)
    model = _random_model(rng)
    qs = rng.dirichlet(np.ones(3))
    two = ag.expected_free_energy(model, qs, np.array([[1, 0]]))
    first = ag.expected_free_energy(model, qs, np.array([[1]]))
    second = ag.expected_free_energy(model, model.B[1] @ qs, np.array([[0]]))
    assert two.G[0] == pytest.approx(first.G[0] + second.G[0], abs=1e-12)
    assert ag.all_policies(3, 2).tolist() == [list(p) for p in itertools.product(range(3), repeat=2)]


def test_novelty_weights_flat_large_and_structural_zero():
    from scipy.special import digamma

    assert ag.novelty_weights(np.ones((3, 1)))[0, 0] == pytest.approx(math.log(3) + digamma(2) - digamma(4))
    a = np.array([[400.0], [600.0]])
    np.testing.assert_allclose(ag.novelty_weights(a), (1 / a - 1 / 1000.0) / 2, rtol=2e-3)  # the SPM limit
    assert ag.novelty_weights(np.array([[0.0], [5.0]]))[0, 0] == 0.0


def test_dirichlet_updates_equal_counts_when_states_are_observed():
    rng = np.random.default_rng(11)
    S, U, T = 3, 2, 40
    states = [int(rng.integers(S))]
    actions = [int(a) for a in rng.integers(U, size=T - 1)]
    B_true = np.stack([rng.dirichlet(np.ones(S), size=S).T for _ in range(U)])
    for u in actions:
        states.append(int(rng.choice(S, p=B_true[u][:, states[-1]])))
    outcomes = [int(rng.integers(2)) for _ in range(T)]
    # modality 0 shows the state exactly (so the smoothed beliefs are one-hot), modality 1 is learned
    model = ag.GenerativeModel((np.eye(S), np.full((2, S), 0.5)), np.full((U, S, S), 1.0 / S), (np.zeros(S), np.zeros(2)),
                               np.full(S, 1.0 / S))
    counts = ag.Counts.prior([None, np.ones((2, S))], np.ones((U, S, S)))
    episode = ag.Episode([(s, o) for s, o in zip(states, outcomes)], actions)
    learned = ag.DirichletLearner((1,), learn_b=True).update(model, counts, episode)
    a_counts, b_counts = np.zeros((2, S)), np.zeros((U, S, S))
    np.add.at(a_counts, (outcomes, states), 1.0)
    np.add.at(b_counts, (actions, states[1:], states[:-1]), 1.0)
    np.testing.assert_allclose(learned.pA[1] - 1.0, a_counts, atol=1e-12)
    np.testing.assert_allclose(learned.pB - 1.0, b_counts, atol=1e-12)
    assert learned.pA[0] is None
    # forgetting: the learned part decays by the rate before the new counts are added
    again = ag.DirichletLearner((1,), forgetting=0.25).update(model, learned, episode)
    np.testing.assert_allclose(again.pA[1] - 1.0, 0.75 * a_counts + a_counts, atol=1e-12)
    # offline fit = the same updates replayed
    fitted = ag.DirichletLearner((1,)).fit(model, counts, [episode, episode])
    np.testing.assert_allclose(fitted.pA[1] - 1.0, 2 * a_counts, atol=1e-12)


def test_epistemic_agent_samples_the_cue_and_the_reward_only_agent_is_indifferent():
    maze = envs.tmaze(0.8)
    qs = ag.infer_states(maze.process.A, (0, 0, 0), maze.process.D).qs
    epistemic = ag.Planner(2, 16.0).plan(maze.process, qs)
    reward_only = ag.Planner(2, 16.0, epistemic=False).plan(maze.process, qs)
    assert epistemic.q_u[1] > 0.99                       # first move: the cue
    np.testing.assert_allclose(reward_only.q_u, 0.2, atol=1e-9)  # ambiguous arms: every move ties on utility


def test_memoryless_policy_never_reads_past_observations():
    maze = envs.delayed_tmaze(corridor=2)
    policy = envs.fit_reactive(maze, 4, 0, "test")
    assert {f.name for f in dataclasses.fields(policy)} == {"table", "default"}  # frozen, no state
    assert list(inspect.signature(policy.step).parameters) == ["obs", "rng", "remaining"]
    junction = (2, 0, 0)
    history_a, history_b = [(0, 0, 1), (1, 0, 0)], [(0, 0, 2), (1, 0, 0)]  # cue 'left' vs cue 'right' earlier
    for history in (history_a, history_b):
        for obs in history:
            policy.step(obs)
    assert policy.step(junction) == envs.ReactivePolicy(policy.table).step(junction)
    # the junction looks the same in both contexts, so a memoryless map succeeds in exactly one of them
    traces = [envs.play(maze, policy, seed, "c") for seed in range(12)]
    by_context = {t.context: envs.success(maze, t) for t in traces}
    assert set(by_context) == {0, 1} and sum(by_context.values()) == 1


def test_belief_memory_carries_the_cue_down_the_corridor_and_no_memory_forgets_it():
    maze = envs.delayed_tmaze(corridor=3)
    for memory, expected in (("belief", 1.0), ("none", 0.5)):
        agent = ag.make_agent("epistemic", maze.process, policy_len=2, gamma=16.0, memory=memory)
        trace = envs.play(maze, agent, 0, "b")
        q_context = trace.beliefs.reshape(len(trace.beliefs), -1, 2).sum(axis=1)[:, trace.context]
        assert q_context[0] == pytest.approx(1.0)                 # the cue is seen at the start
        assert q_context[maze.steps - 1] == pytest.approx(expected)  # at the junction


def test_reversal_flips_the_paying_arm_and_the_arm_prior_leaves_known_columns_known():
    maze, flipped = envs.tmaze(0.9), envs.tmaze(0.9, flipped=True)
    left_c0 = 2 * maze.n_contexts + 0
    assert maze.process.A[envs.REWARD][envs.WIN, left_c0] == pytest.approx(0.9)
    assert flipped.process.A[envs.REWARD][envs.WIN, left_c0] == pytest.approx(0.1)
    prior = envs.arm_prior(maze, 2.0)
    np.testing.assert_allclose(prior[:, left_c0], 2.0)
    np.testing.assert_allclose(ag.normalise(prior)[:, 0], [1.0, 0.0, 0.0])  # centre: null, known


def test_agreement_with_pymdp_on_the_tmaze_through_a_reference_run():
    pytest.importorskip("pymdp")
    from icml24.papers.embodied_ai.config import SMOKE
    from icml24.papers.embodied_ai.experiment import run

    out = run(dataclasses.replace(SMOKE, reference=True), 0)
    for name in ("qs", "F", "G", "q_pi"):
        assert out.metrics[f"ref_max_abs_{name}"] < 1e-5, name


def test_component_level_bad_input_is_a_one_line_user_error():
    model = envs.tmaze().process
    for call, words in ((lambda: envs.make_env("grid"), "unknown environment"),
                        (lambda: ag.make_agent("curious", model, policy_len=2, gamma=1.0), "unknown agent"),
                        (lambda: ag.make_agent("epistemic", model, policy_len=0, gamma=1.0), "policy_len=0"),
                        (lambda: ag.make_agent("epistemic", model, policy_len=1, gamma=0.0), "gamma=0"),
                        (lambda: envs.tmaze(reward_prob=1.2), "reward_prob=1.2"),
                        (lambda: envs.delayed_tmaze(reward_prob=-0.1), "reward_prob=-0.1")):
        with pytest.raises(UserError, match=words) as err:
            call()
        assert "\n" not in str(err.value)


@pytest.mark.parametrize("override, words", [
    ("policy_len=0", "policy_len=0: must be >= 1"), ("gamma=0", "gamma=0.0: must be > 0"),
    ("gamma=-1", "gamma=-1.0: must be > 0"), ("reward_prob=1.5", "reward_prob=1.5: must be <= 1"),
    ("reversal_reward_prob=-0.2", "reversal_reward_prob=-0.2: must be >= 0"), ("forgetting=1", "forgetting=1.0"),
    ("agent=curious", "agent=curious: must be one of epistemic, reward"), ("memory=tape", "memory=tape"),
    ("preferences=1,2", "need three scores"),
])
def test_bad_input_through_the_cli_is_one_line_exit_2_nothing_written(tmp_path, override, words):
    out = run_cli("run", "embodied_ai", "--preset", "smoke", "--set", override, cwd=tmp_path)
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(lines) == 1 and lines[0].startswith("error:") and words in lines[0], out.stderr
    assert list(tmp_path.iterdir()) == []


def test_reference_without_pymdp_names_the_pip_command_through_the_cli(tmp_path):
    hide = ("import importlib.util as u, sys; f = u.find_spec; "
            "u.find_spec = lambda n, *a, **k: None if n == 'pymdp' else f(n, *a, **k); "
            "from icml24.cli import main; main(sys.argv[1:])")
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", hide, "run", "embodied_ai", "--preset", "smoke", "--set",
                          "reference=true"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(lines) == 1 and lines[0].startswith("error:"), out.stderr
    assert "pip install 'icml24[aif]'" in lines[0]
    assert list(tmp_path.iterdir()) == []


def test_default_run_never_imports_pymdp():
    import subprocess
    import sys

    code = ("import sys; from icml24.papers.embodied_ai.experiment import run, SMOKE; run(SMOKE, 0); "
            "print('pymdp' in sys.modules, 'jax' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["False", "False"], out.stderr

"""Tests of the select-rank bandit (Wang et al., ICML 2024): model, matching, estimators, loader."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from icml24.core.claims import Verdict
from icml24.core.registry import get_paper
from icml24.core.results import RunResult
from icml24.core.testing import check_config_rule
from icml24.papers.ranking_bandit import algorithm as alg
from icml24.papers.ranking_bandit import claims as cl
from icml24.papers.ranking_bandit import components as cp
from icml24.papers.ranking_bandit import env as ev
from icml24.papers.ranking_bandit import experiment as ex
from icml24.papers.ranking_bandit import movielens as ml


# -- model and matching ------------------------------------------------------------------------
def test_mean_responses_hand_values():
    theta = np.array([[0.0, -1.0, 1.0, 0.0], [2.0, 0.0, 0.0, 1.0]])  # K=2, d=2
    x = np.array([1.0, -2.0])
    eta = cp.linear_predictor(theta, x)  # alpha_jk + beta_j^T x
    np.testing.assert_allclose(eta, [[1.0, 0.0], [0.0, -2.0]])
    np.testing.assert_allclose(cp.mean_responses(theta, x, "logistic"),
                               1 / (1 + np.exp(-np.array([[1.0, 0.0], [0.0, -2.0]]))))
    np.testing.assert_allclose(cp.mean_responses(theta, x, "linear"), eta)
    z = cp.design_vectors(x, 2)
    np.testing.assert_allclose(theta @ z.T, eta)  # eta[j, k] = theta_j^T z_k(x)


def test_matching_equals_bruteforce_on_random_instances():
    rng = np.random.default_rng(0)
    for _ in range(300):
        k = int(rng.integers(1, 5))
        n = int(rng.integers(k, 7))
        w = rng.normal(size=(n, k)) if rng.random() < 0.5 else rng.random((n, k))
        fast, slow = cp.best_list(w), cp.best_list_bruteforce(w)
        assert fast.value == pytest.approx(slow.value, abs=1e-12)
        assert len(set(fast.items.tolist())) == k  # K distinct items, every position filled
        assert cp.list_satisfaction(w, fast.items) == pytest.approx(fast.value)


def test_best_list_is_not_a_sort_when_position_effects_are_item_specific():
    # item 0 is best at position 0 and item 1 too, but item 1 is much worse at position 1
    w = np.array([[0.9, 0.8], [0.95, 0.1], [0.2, 0.15]])
    assert cp.best_list(w).items.tolist() == [1, 0]  # 0.95 + 0.8 beats 0.9 + 0.1 and 0.9 + 0.15


# -- estimators --------------------------------------------------------------------------------
def _feed(glm, rng, rounds, theta_true=None):
    n_items, k = glm.theta.shape[0], glm.k
    d = glm.p - k
    for _ in range(rounds):
        x = rng.normal(size=d)
        items = rng.choice(n_items, size=k, replace=False)
        if theta_true is None:
            y = rng.normal(size=k)
        else:
            mu = cp.mean_responses(theta_true, x, glm.link)[items, np.arange(k)]
            y = (rng.random(k) < mu).astype(float) if glm.link == "logistic" else mu + 0.1 * rng.normal(size=k)
        glm.update(x, items, y)
        yield x, items, y


def test_incremental_gram_inverse_equals_fresh_inverse_and_linear_theta_equals_ridge():
    rng = np.random.default_rng(1)
    glm = alg.ItemGLMs(5, 3, 2, "linear", lam=0.7)
    gram = np.broadcast_to(0.7 * np.eye(5), (5, 5, 5)).copy()
    b = np.zeros((5, 5))
    for x, items, y in _feed(glm, rng, 200):
        z = cp.design_vectors(x, 3)
        gram[items] += z[:, :, None] * z[:, None, :]
        b[items] += y[:, None] * z
    np.testing.assert_allclose(glm.v_inv, np.linalg.inv(gram), atol=1e-10)
    np.testing.assert_allclose(glm.theta, np.linalg.solve(gram, b[..., None])[..., 0], atol=1e-10)
    assert glm.counts.sum() == 600


def test_widths_equal_naive_quadratic_form():
    rng = np.random.default_rng(2)
    glm = alg.ItemGLMs(4, 3, 3, "logistic")
    list(_feed(glm, rng, 40, theta_true=rng.normal(size=(4, 6))))
    x = rng.normal(size=3)
    z = cp.design_vectors(x, 3)
    naive = np.sqrt(np.einsum("kp,npq,kq->nk", z, glm.v_inv, z))
    np.testing.assert_allclose(glm.widths(x), naive, atol=1e-12)


def _full_mle(z, y, lam, steps=50):
    theta = np.zeros(z.shape[1])
    for _ in range(steps):
        theta = alg.logistic_newton_step(theta, z, y, lam)
    return theta


def test_online_logistic_newton_tracks_the_full_mle():
    rng = np.random.default_rng(3)
    truth = rng.normal(size=(3, 5))
    glm = alg.ItemGLMs(3, 2, 3, "logistic", lam=1.0, refit_growth=0.0)
    data = {j: ([], []) for j in range(3)}
    for x, items, y in _feed(glm, rng, 300, theta_true=truth):
        z = cp.design_vectors(x, 2)
        for pos, j in enumerate(items):
            data[j][0].append(z[pos])
            data[j][1].append(y[pos])
    for j in range(3):
        mle = _full_mle(np.array(data[j][0]), np.array(data[j][1]), 1.0)
        gradient = np.array(data[j][0]).T @ (cp.mean_function(np.array(data[j][0]) @ mle, "logistic")
                                            - np.array(data[j][1])) + mle
        assert np.abs(gradient).max() < 1e-8  # the reference really is the penalised MLE
        np.testing.assert_allclose(glm.theta[j], mle, atol=1e-3)


def test_batched_newton_step_equals_per_item_steps_and_ignores_padding():
    rng = np.random.default_rng(4)
    z = rng.normal(size=(2, 7, 3))
    y = (rng.random((2, 7)) < 0.5).astype(float)
    theta = rng.normal(size=(2, 3))
    mask = np.array([[True] * 7, [True] * 4 + [False] * 3])
    batched = alg.logistic_newton_step(theta, z, y, 0.5, mask)
    np.testing.assert_allclose(batched[0], alg.logistic_newton_step(theta[0], z[0], y[0], 0.5))
    np.testing.assert_allclose(batched[1], alg.logistic_newton_step(theta[1], z[1, :4], y[1, :4], 0.5))


def test_glm_estimate_converges_to_the_truth():
    rng = np.random.default_rng(5)
    truth = np.array([[0.5, -0.5, 1.0, -1.0, 0.5], [-1.0, 0.0, 0.3, 0.3, -0.8]])  # N=2, K=2, d=3
    glm = alg.ItemGLMs(2, 2, 3, "logistic", lam=1.0)  # both items shown every round, random order
    errors = []
    for rounds in (200, 2800):
        list(_feed(glm, rng, rounds, theta_true=truth))
        errors.append(np.abs(glm.theta - truth).max())
    assert errors[1] < 0.15 and errors[1] < 0.5 * errors[0]


def test_confidence_radius_hand_value_and_monotone():
    r = alg.confidence_radius(np.array([0, 10, 1000]), dim=5, lam=1.0, delta=0.1, n_items=20)
    assert r[0] == pytest.approx(np.sqrt(2 * np.log(200)))
    assert r[1] == pytest.approx(np.sqrt(5 * np.log(1 + 10 / 5) + 2 * np.log(200)))
    assert np.all(np.diff(r) > 0)


def test_ucr_without_bonus_is_greedy_and_bonus_only_raises_scores():
    rng = np.random.default_rng(6)
    ucr = alg.UCR(6, 3, 2, "logistic", ucb_scale=1.0)
    list(_feed(ucr.glm, rng, 30, theta_true=rng.normal(size=(6, 5))))
    greedy = alg.UCR(6, 3, 2, "logistic", ucb_scale=0.0)
    greedy.glm = ucr.glm
    x = rng.normal(size=2)
    np.testing.assert_allclose(greedy.scores(x), ucr.glm.means(x))
    assert np.all(ucr.scores(x) >= greedy.scores(x))
    assert greedy.select(x, rng).tolist() == cp.best_list(ucr.glm.means(x)).items.tolist()


# -- environment and simulation ----------------------------------------------------------------
def test_oracle_has_zero_regret_and_random_positive_regret():
    rng = np.random.default_rng(7)
    env = ev.synthetic_env(rng, 6, 3, 2, spread=1.0)
    xs = env.contexts(200, rng)
    best = ev.optimal_values(env, xs)
    cps = np.array([50, 200])
    oracle = ev.simulate(env, alg.Oracle(env.theta, env.link), xs, best, rng, cps)
    np.testing.assert_allclose(oracle.regret, 0.0, atol=1e-9)
    rand = ev.simulate(env, alg.RandomRanker(6, 3), xs, best, rng, cps)
    assert np.all(rand.regret > 0) and rand.regret[1] > rand.regret[0]
    np.testing.assert_allclose(oracle.satisfaction - rand.satisfaction, rand.regret)


def test_ucr_learns_on_a_small_instance():
    rng = np.random.default_rng(8)
    env = ev.synthetic_env(rng, 8, 2, 2, spread=0.5)
    xs = env.contexts(1500, rng)
    best = ev.optimal_values(env, xs)
    cps = np.array([500, 1000, 1500])
    trace = ev.simulate(env, alg.UCR(8, 2, 2, "logistic", ucb_scale=0.5), xs, best, rng, cps)
    rand = ev.simulate(env, alg.RandomRanker(8, 2), xs, best, rng, cps)
    assert trace.regret[-1] < 0.5 * rand.regret[-1]
    per_round = np.diff(np.concatenate([[0], trace.regret])) / np.diff(np.concatenate([[0], cps]))
    assert per_round[-1] < per_round[0]  # regret per round falls: learning


# -- MovieLens loader and environment ----------------------------------------------------------
def _low_rank_ratings(rng, n_users=60, n_items=12):
    u, v = rng.normal(size=(n_users, 2)), rng.normal(size=(n_items, 2))
    full = np.clip(np.round(3.5 + 0.8 * u @ v.T + 0.3 * rng.normal(size=(n_users, n_items))), 1, 5)
    seen = rng.random((n_users, n_items)) < 0.7
    users, items = np.nonzero(seen)
    return users + 1, items + 101, full[users, items]


def test_loader_reads_movielens_csv_and_udata(tmp_path):
    rng = np.random.default_rng(9)
    users, items, ratings = _low_rank_ratings(rng)
    csv_path = tmp_path / "ratings.csv"
    csv_path.write_text("userId,movieId,rating,timestamp\n" + "".join(
        f"{u},{i},{r:.1f},9{u}{i}\n" for u, i, r in zip(users, items, ratings)))
    got = ml.load_ratings(csv_path)
    np.testing.assert_array_equal(got.user, users)
    np.testing.assert_array_equal(got.item, items)
    np.testing.assert_allclose(got.rating, ratings)
    udata = tmp_path / "u.data"
    udata.write_text("".join(f"{u}\t{i}\t{int(r)}\t88{u}\n" for u, i, r in zip(users, items, ratings)))
    got = ml.load_ratings(udata)
    np.testing.assert_array_equal(got.item, items)
    np.testing.assert_allclose(got.rating, ratings)


def test_loader_rejects_missing_path(tmp_path):
    from icml24.core.errors import UserError

    with pytest.raises(UserError):
        ml.load_ratings(tmp_path / "nope.csv")


def test_factor_fit_explains_low_rank_ratings_and_env_is_well_formed():
    rng = np.random.default_rng(10)
    users, items, ratings = _low_rank_ratings(rng)
    data = ml.Ratings(users, items, ratings)
    fit = ml.fit_factors(data, n_items=12, dim=2)
    assert fit.rmse < 0.7 * ratings.std()  # factors explain most of the variance
    env = ml.movielens_env(data, 10, 3, 2, np.random.default_rng(0))
    assert env.theta.shape == (10, 5) and env.pool.shape[1] == 2
    mu = env.means(env.contexts(5, rng)[0])
    assert mu.shape == (10, 3) and np.all((mu > 0) & (mu < 1))


def test_movielens_claim_runs_with_data_and_is_not_checkable_without(tmp_path):
    rng = np.random.default_rng(11)
    users, items, ratings = _low_rank_ratings(rng)
    path = tmp_path / "ratings.csv"
    path.write_text("userId,movieId,rating\n" + "".join(f"{u},{i},{r}\n" for u, i, r in zip(users, items, ratings)))
    cfg = dataclasses.replace(ex.SMOKE, movielens_path=str(path), ml_items=8, ml_positions=2, ml_dim=2)
    seeds = [ex.run(cfg, s) for s in (0, 1)]
    assert all(m in seeds[0].metrics for m in cl.OPTIONAL_METRICS)
    res = RunResult("ranking_bandit", "quick", {}, "x", seeds)
    c4 = {r.claim_id: r for r in get_paper("ranking_bandit").check(res, "quick")}["C4"]
    assert c4.verdict in (Verdict.PASS, Verdict.FAIL) and np.isfinite(c4.value)
    no_data = RunResult("ranking_bandit", "quick", {}, "x", [ex.run(ex.SMOKE, s) for s in (0, 1)])
    c4 = {r.claim_id: r for r in get_paper("ranking_bandit").check(no_data, "quick")}["C4"]
    assert c4.verdict is Verdict.NOT_CHECKABLE


def test_auto_finds_an_installed_dslabs_copy_and_skips_without_one(tmp_path, monkeypatch):
    monkeypatch.setattr(ml, "DSLABS_DIRS", (str(tmp_path / "a"), str(tmp_path / "b")))
    assert ml.find_ratings("auto") is None and ml.find_ratings("") is None
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "Rdata.rdx").write_bytes(b"")
    assert ml.find_ratings("auto") == tmp_path / "b"
    assert ml.find_ratings(str(tmp_path / "x.csv")) == tmp_path / "x.csv"
    # "auto" passes the CLI's path check (resolved by the paper, not required to exist)
    from icml24.core.config import check_paths

    check_paths(dataclasses.replace(ex.QUICK, movielens_path="auto"))


# -- experiment ---------------------------------------------------------------------------------
def test_smoke_run_pinned_structure():
    r = ex.run(ex.SMOKE, 0)
    assert r.curves["t"][-1] == ex.SMOKE.horizon
    for regime in ("low", "diverse"):
        assert r.metrics[f"regret_{regime}_random"] > r.metrics[f"regret_{regime}_ucr"] > 0
        assert np.all(np.diff(r.curves[f"regret_{regime}_random"]) > 0)
    assert r.curves["grid_nk"] == [8.0, 12.0, 24.0]


@pytest.mark.slow
def test_quick_run_reproduces_the_committed_claims():
    """QUICK from scratch gives the claim values and verdicts in results/ranking_bandit/quick.json."""
    from pathlib import Path

    from icml24.core.config import config_hash, to_dict
    from icml24.core.results import read_json

    committed = read_json(Path(__file__).resolve().parents[2] / "results" / "ranking_bandit" / "quick.json")
    assert committed["config_hash"] == config_hash(ex.QUICK)
    seeds = [ex.run(ex.QUICK, s) for s in ex.SEEDS["quick"]]
    res = RunResult("ranking_bandit", "quick", to_dict(ex.QUICK), config_hash(ex.QUICK), seeds)
    got = {r.claim_id: r for r in get_paper("ranking_bandit").check(res, "quick")}
    for want in committed["claims"]:
        assert got[want["claim_id"]].verdict.value == want["verdict"]
        if want["value"] is not None:
            assert got[want["claim_id"]].value == pytest.approx(want["value"], rel=1e-9)


# -- R data reader (tests write R's XDR serialization themselves; no R needed) ---------------------
def _xdr_writer():
    import struct

    def i32(*vals):
        return b"".join(struct.pack(">i", v) for v in vals)

    def flags(t, attr=False, tag=False, obj=False):
        return i32(t | (obj << 8) | (attr << 9) | (tag << 10))

    def chars(s):
        b = s.encode()
        return i32(9, len(b)) + b

    def sym(name):
        return flags(1) + chars(name)

    def strs(vals):
        return flags(16) + i32(len(vals)) + b"".join(chars(v) for v in vals)

    def pairlist(items):  # [(tag or None, payload bytes)] -> LISTSXP cells ending in NILVALUE
        return b"".join(flags(2, tag=tag is not None) + (sym(tag) if tag else b"") + val
                        for tag, val in items) + i32(254)

    def ints(vals, attrs=None, obj=False):
        return (flags(13, attr=bool(attrs), obj=obj) + i32(len(vals), *vals)
                + (pairlist(attrs) if attrs else b""))

    def reals(vals):
        return flags(14) + i32(len(vals)) + struct.pack(f">{len(vals)}d", *vals)

    def compact_intseq(n, start):  # ALTREP form R >= 3.5 writes for 1:n style vectors
        info = pairlist([(None, sym("compact_intseq")), (None, sym("base")), (None, ints([13]))])
        return i32(238) + info + reals([n, start, 1.0]) + i32(254)

    def data_frame(columns):
        n = None
        body = b""
        for _, (payload, length) in columns.items():
            body += payload
            n = length
        attrs = [("names", strs(list(columns))), ("class", strs(["data.frame"])),
                 ("row.names", ints([-(2 ** 31), -n]))]
        return flags(19, attr=True, obj=True) + i32(len(columns)) + body + pairlist(attrs)

    def stream(item):
        return b"X\n" + i32(3, 0x040201, 0x030500, 5) + b"UTF-8" + item

    return dict(i32=i32, flags=flags, strs=strs, ints=ints, reals=reals, pairlist=pairlist,
                compact_intseq=compact_intseq, data_frame=data_frame, stream=stream)


def _movielens_frame(w):
    genres = w["ints"]([2, 1, 2, 1], attrs=[("levels", w["strs"](["Comedy", "Drama"])),
                                           ("class", w["strs"](["factor"]))], obj=True)
    return w["data_frame"]({
        "movieId": (w["ints"]([31, 1029, 31, 7]), 4),
        "title": (w["strs"](["A", "B", "A", "C"]), 4),
        "genres": (genres, 4),
        "userId": (w["compact_intseq"](4, 1), 4),
        "rating": (w["reals"]([2.5, 3.0, 4.5, 5.0]), 4),
    })


def test_r_reader_reads_an_rds_and_a_lazy_load_database(tmp_path):
    import gzip
    import zlib

    from icml24.papers.ranking_bandit import rdata

    w = _xdr_writer()
    frame = w["stream"](_movielens_frame(w))
    (tmp_path / "movielens.rds").write_bytes(gzip.compress(frame))
    cols = rdata.read_r_object(tmp_path / "movielens.rds", "movielens")
    assert cols["genres"] == ["Drama", "Comedy", "Drama", "Comedy"]  # factor codes -> levels
    assert cols["title"] == ["A", "B", "A", "C"]
    np.testing.assert_array_equal(cols["userId"], [1, 2, 3, 4])  # ALTREP compact sequence
    np.testing.assert_array_equal(cols["rating"], [2.5, 3.0, 4.5, 5.0])

    # a package lazy-load DB: Rdata.rdb records (length + zlib) indexed by a gzip'd Rdata.rdx
    other = w["stream"](w["reals"]([1.0]))
    records = [w["i32"](len(s)) + zlib.compress(s) for s in (other, frame)]
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "Rdata.rdb").write_bytes(b"".join(records))
    offsets = [(0, len(records[0])), (len(records[0]), len(records[1]))]
    variables = w["flags"](19, attr=True) + w["i32"](2) + b"".join(w["ints"](list(p)) for p in offsets) \
        + w["pairlist"]([("names", w["strs"](["other", "movielens"]))])
    index = w["flags"](19, attr=True) + w["i32"](3) + variables + w["flags"](19) + w["i32"](0) \
        + w["flags"](10) + w["i32"](1, 1) + w["pairlist"]([("names", w["strs"](["variables", "references",
                                                                                "compressed"]))])
    (folder / "Rdata.rdx").write_bytes(gzip.compress(w["stream"](index)))
    got = ml.load_ratings(folder)
    np.testing.assert_array_equal(got.user, [1, 2, 3, 4])
    np.testing.assert_array_equal(got.item, [31, 1029, 31, 7])
    np.testing.assert_allclose(got.rating, [2.5, 3.0, 4.5, 5.0])
    assert rdata.read_r_object(folder, "other").tolist() == [1.0]


@pytest.mark.parametrize("preset, overrides, field", [
    ("SMOKE", [], None), ("QUICK", [], None), ("FULL", [], None),
    ("SMOKE", ["n_positions=7"], "n_positions"), ("SMOKE", ["first_checkpoint=300"], "first_checkpoint"),
    ("SMOKE", ["grid_positions=2,2"], "grid_positions"), ("SMOKE", ["grid_positions=2,7,3"], "grid_positions"),
    ("SMOKE", ["grid_items="], "grid_items"), ("SMOKE", ["epsilon=1.5"], "epsilon"), ("SMOKE", ["delta=0"], "delta"),
    ("SMOKE", ["lam=0"], "lam"), ("SMOKE", ["link=probit"], "link"), ("SMOKE", ["ml_positions=60"], "ml_positions"),
    ("SMOKE", ["horizon=0"], "horizon"),
])
def test_config_rules(preset, overrides, field):
    check_config_rule(getattr(ex, preset), overrides, ex.validate, field)

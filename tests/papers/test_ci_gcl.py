"""CI-GCL: Laplacian spectra against numpy and by hand (a batch narrower than c + k included), eigenvalue
gradients against finite differences, batched against per-graph spectra, the augmenters' probabilities and
symmetry, the data (MUTAG from the grakel wheel), the cross-validated probe and C2's precision by hand."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from icml24.papers.ci_gcl import data, spectral
from icml24.papers.ci_gcl.experiment import drop_precision, folds, probe
from icml24.papers.ci_gcl.model import GIN, Augmenter, LossWeights, cigcl_loss, graphcl_views, info_nce, precompute


def _graphs(seed=0, n=8):
    """Small featureless SBM graphs (a constant 1 on the real nodes)."""
    g = data.sbm_dataset(np.random.default_rng(seed), n, (8, 14), degree=4.0)
    return g._replace(X=g.mask[:, :, None].float())


def test_laplacian_eigenvalues_against_numpy():
    g = _graphs()
    ev = spectral.eigvals(g.A.double(), g.mask)
    for k in range(g.A.shape[0]):
        m = int(g.mask[k].sum())
        A = g.A[k, :m, :m].double().numpy() + np.eye(m)
        d = A.sum(1)
        L = np.eye(m) - A / np.sqrt(np.outer(d, d))
        assert np.allclose(ev[k, :m].numpy(), np.linalg.eigvalsh(L), atol=1e-10)
        assert np.allclose(ev[k, m:].numpy(), spectral.PAD)                 # padding sorts last


def test_components_count_zero_eigenvalues():
    A = torch.zeros(1, 5, 5)
    for i, j in ((0, 1), (1, 2), (3, 4)):
        A[0, i, j] = A[0, j, i] = 1
    assert int(spectral.components(A, torch.ones(1, 5, dtype=torch.bool))[0]) == 2


def test_batched_low_spectrum_equals_the_per_graph_loop():
    g = _graphs(1, 10)
    c = spectral.components(g.A, g.mask)
    assert torch.allclose(spectral.low_spectrum(g.A.double(), g.mask, c, 4),
                          spectral.low_spectrum_loop(g.A.double(), g.mask, c, 4), atol=1e-10)


def test_eigenvalue_gradients_against_finite_differences():
    g = _graphs(2, 2)
    c = spectral.components(g.A, g.mask)
    W = (g.A.double() * (0.5 + torch.rand(g.A.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(0))))
    W = ((W + W.transpose(1, 2)) / 2).requires_grad_()
    f = lambda W: spectral.low_spectrum(W, g.mask, c, 3).pow(2).sum()
    f(W).backward()
    i, j = [int(t) for t in torch.nonzero(torch.triu(g.A[0], 1))[0]]
    h = 1e-6
    E = torch.zeros_like(W)
    E[0, i, j] = E[0, j, i] = h
    fd = (f(W.detach() + E) - f(W.detach() - E)) / (2 * h)
    assert float(W.grad[0, i, j] + W.grad[0, j, i]) == pytest.approx(float(fd), rel=1e-5)


def test_augmenter_weights_are_symmetric_probabilities_on_the_graph():
    torch.manual_seed(0)
    g = _graphs(3, 6)
    pre = precompute(g.A, g.X, g.mask, 3, featureless=True)
    aug = Augmenter(3, 1, 16, add_candidates=5, add_frac=0.2)
    v = aug(g.A, g.X, g.mask, pre, torch.Generator().manual_seed(0))
    assert torch.allclose(v.W_drop, v.W_drop.transpose(1, 2)) and torch.allclose(v.W_add, v.W_add.transpose(1, 2))
    assert float(v.p_drop.detach().min()) >= 0 and float(v.p_drop.detach().max()) <= 1
    assert torch.all(v.W_drop <= g.A + 1e-7) and torch.all((v.W_drop > 0) == (g.A > 0))   # only weakened
    added = (v.W_add - g.A).detach()
    assert torch.all(added[g.A > 0] == 0) and float(added.min()) >= 0 and float(added.max()) <= 1
    real = g.mask[:, :, None] & g.mask[:, None, :]
    assert torch.all(added[~real] == 0)                                                     # never on padding
    n_edges = g.A.sum((1, 2)) / 2
    assert torch.all((added > 0).sum((1, 2)) / 2 <= torch.clamp((0.2 * n_edges).ceil(), max=5))


def test_feature_masking_scales_the_lowest_tenth_and_the_loss_backpropagates():
    torch.manual_seed(1)
    g = data.solubility_dataset().subset(np.arange(6))
    pre = precompute(g.A, g.X, g.mask, 3, featureless=False)
    aug, enc = Augmenter(3, g.X.shape[2], 16), GIN(g.X.shape[2], 16)
    v = aug(g.A, g.X, g.mask, pre, torch.Generator().manual_seed(0))
    changed = (v.X1 != g.X) & (g.X != 0)
    assert changed.any() and torch.all(v.X1 <= g.X + 1e-7)
    out = cigcl_loss(enc, aug, g.A, g.X, g.mask, pre, LossWeights(3, 0.8, 1.0, 0.2), torch.Generator().manual_seed(0))
    out.total.backward()
    assert all(p.grad is not None for p in aug.drop.parameters()) and out.topo != 0 and out.feat != 0


def test_info_nce_equals_a_direct_computation():
    z1, z2 = torch.randn(4, 3, dtype=torch.float64), torch.randn(4, 3, dtype=torch.float64)
    a = z1 / z1.norm(dim=1, keepdim=True)
    b = z2 / z2.norm(dim=1, keepdim=True)
    s = (a @ b.T).numpy() / 0.2
    direct = np.mean([-(s[i, i] - np.log(np.exp(s[i]).sum())) for i in range(4)])
    assert float(info_nce(z1, z2, 0.2)) == pytest.approx(direct)


def test_sbm_degrees_are_matched_across_classes_and_communities_are_planted():
    g = data.sbm_dataset(np.random.default_rng(0), 600, (20, 40), degree=6.0, ratio=8.0)
    deg = (g.A.sum((1, 2)) / g.mask.sum(1)).numpy()
    means = [deg[g.y == c].mean() for c in range(3)]
    assert max(means) - min(means) < 0.3 and abs(np.mean(means) - 6.0) < 0.5
    assert set(np.unique(g.community[0][g.mask[0]].numpy())) == set(range(int(g.y[0]) + 2))


def test_edge_noise_keeps_the_edge_count_and_flips_the_fraction():
    g = _graphs(4, 5)
    noisy = data.edge_noise(g, 0.2, np.random.default_rng(0))
    assert torch.equal(noisy.A.sum((1, 2)), g.A.sum((1, 2)))
    flipped = (noisy.A != g.A).sum((1, 2)) / 2
    assert torch.equal(flipped, 2 * torch.round(0.2 * g.A.sum((1, 2)) / 2))
    assert torch.equal(noisy.A, noisy.A.transpose(1, 2))


def test_graphcl_views_drop_edges_and_mask_features():
    g = data.solubility_dataset().subset(np.arange(20))
    W1, X1, W2, X2 = graphcl_views(g.A, g.X, g.mask, 0.2, False, torch.Generator().manual_seed(0))
    assert torch.equal(W1, g.A) and torch.equal(X2, g.X)
    kept = float(W2.sum() / g.A.sum())
    assert 0.7 < kept < 0.9 and torch.equal(W2, W2.transpose(1, 2))


def test_folds_are_stratified_round_robin():
    y = np.array([0] * 7 + [1] * 3)
    f = folds(y, 5, np.random.default_rng(0))
    # class 0 (7 graphs) fills folds 0-4 then 0-1; class 1 continues at fold 2: folds 2, 3, 4
    assert sorted(f[y == 0].tolist()) == [0, 0, 1, 1, 2, 3, 4] and sorted(f[y == 1].tolist()) == [2, 3, 4]
    assert np.bincount(f).tolist() == [2, 2, 2, 2, 2]


def test_probe_cross_validates_and_scores_every_test_fold():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 50)
    emb = np.concatenate([rng.normal(size=(100, 1)), 3 * y[:, None] + 0.1 * rng.normal(size=(100, 1))], 1)
    f = folds(y, 10, rng)
    assert probe(emb, y, f) == 1.0 and probe(emb, y, np.stack([f, folds(y, 10, rng)])) == 1.0
    # features that say nothing: about chance
    assert probe(rng.permutation(emb), y, f) < 0.75 and probe(rng.normal(size=(100, 4)), y, f) < 0.75


def test_probe_equals_a_naive_rbf_svm_loop():
    # the precomputed Gram matrix gives scikit-learn's RBF SVM on the standardised embeddings, gamma 'scale'
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    from icml24.papers.ci_gcl.experiment import C_GRID

    rng = np.random.default_rng(3)
    y = np.repeat([0, 1], 30)
    emb = rng.normal(size=(60, 5)) + 0.8 * y[:, None]
    f = folds(y, 5, rng)
    z = StandardScaler().fit_transform(emb)
    svm = {C: SVC(C=C, kernel="rbf", gamma=1 / (5 * z.var())) for C in C_GRID}
    accs = []
    for t in range(5):
        test, val = f == t, f == (t + 1) % 5
        fit = ~test & ~val
        val_acc = [svm[C].fit(z[fit], y[fit]).score(z[val], y[val]) for C in C_GRID]
        best = C_GRID[int(np.argmax(val_acc))]
        accs.append(svm[best].fit(z[~test], y[~test]).score(z[test], y[test]))
    assert 0.6 < np.mean(accs) < 1.0
    assert probe(emb, y, f) == pytest.approx(np.mean(accs), abs=1e-12)


def test_score_equals_scikit_learns_svc_bit_for_bit():
    # _score calls SVC's libsvm directly (no input validation): the same accuracy for every C, 2 and 3 classes
    from sklearn.svm import SVC

    from icml24.papers.ci_gcl.experiment import C_GRID, _score, _scores, rbf_gram

    rng = np.random.default_rng(5)
    accs = set()
    for labels in ([0, 1], [2, 5, 7]):
        y = rng.choice(labels, size=200)
        K = rbf_gram(rng.normal(size=(200, 6)) + 0.5 * y[:, None])
        fit, test = np.arange(200) < 120, np.arange(200) >= 120
        for C in C_GRID:
            svc = SVC(C=C, kernel="precomputed").fit(K[np.ix_(fit, fit)], y[fit])
            for rows in (test, fit):                    # held-out and training accuracy (the fit's every detail)
                acc = _score(K, y, fit, rows, C)
                assert acc == svc.score(K[np.ix_(rows, fit)], y[rows])
                accs.add(acc)
        for rows in (test, fit):                            # every C on the blocks taken once: the same numbers
            assert _scores(K, y, fit, rows, C_GRID) == [_score(K, y, fit, rows, C) for C in C_GRID]
    assert len(accs) > 10                                   # the cases differ: a wrong solver argument would show
    with pytest.raises(ValueError, match="one class"):      # as SVC refuses a training fold of one class
        _score(K, np.zeros(200, dtype=int), fit, test, 1.0)


def test_drop_precision_by_hand():
    # one graph: a 4-cycle 0-1-2-3 with communities {0, 1} and {2, 3}: edges 1-2 and 3-0 are inter
    A = torch.zeros(1, 4, 4)
    for i, j in ((0, 1), (1, 2), (2, 3), (0, 3)):
        A[0, i, j] = A[0, j, i] = 1
    g = data.Graphs(A, torch.ones(1, 4, 1), torch.ones(1, 4, dtype=torch.bool), np.array([0]),
                    torch.tensor([[0, 0, 1, 1]]))
    pre = precompute(g.A, g.X, g.mask, 1, featureless=True)
    aug = Augmenter(1, 1, 4)

    class Fixed(torch.nn.Module):                       # logits favour dropping edges (1, 2) and (0, 3)
        def forward(self, f):
            return torch.stack([torch.zeros(len(f)), torch.tensor([0.0, 5.0, 5.0, 0.0])[: len(f)]], 1)

    aug.drop = Fixed()
    prec, share = drop_precision(aug, g, pre, top=0.5)
    # edges in nonzero order of triu: (0,1), (0,3), (1,2), (2,3); scores 0, 5, 5, 0 -> top 2 = (0,3), (1,2)
    assert share == 0.5 and prec == 1.0


@pytest.mark.parametrize("preset, overrides, field", [
    ("SMOKE", [], None), ("QUICK", [], None), ("FULL", [], None),
    ("SMOKE", ["sbm_graphs=5"], "sbm_graphs"), ("SMOKE", ["sbm_min_nodes=30", "sbm_max_nodes=20"], "sbm_min_nodes"),
    ("SMOKE", ["k=30"], "k="), ("SMOKE", ["sbm_ratio=1"], "sbm_ratio"), ("SMOKE", ["lr=0"], "lr"),
    ("SMOKE", ["noise=1"], "noise"), ("SMOKE", ["add_frac=0"], "add_frac"), ("SMOKE", ["batch=1"], "batch"),
    ("SMOKE", ["tu_path=/nonexistent"], "tu_path=/nonexistent, tu_name=MUTAG: .*missing .*MUTAG_A.txt"),
    ("SMOKE", ["tu_name="], "tu_name"),
    ("SMOKE", ["sbm_signal=1.5"], "sbm_signal"), ("SMOKE", ["folds=2"], "folds"), ("SMOKE", ["tu_epochs=0"], "tu_epochs"),
    ("SMOKE", ["restarts=3", "drop_restarts=2"], "drop_restarts=2 < restarts=3"), ("SMOKE", ["drop_restarts=0"], "drop_restarts"),
])
def test_config_rules(preset, overrides, field):
    from icml24.core.testing import check_config_rule
    from icml24.papers.ci_gcl import config as cf

    check_config_rule(getattr(cf, preset), overrides, cf.validate, field)


def test_premise_on_two_cliques_joined_by_two_edges():
    # two 5-cliques, joined by edges 0-5 and 1-6: removing an inter edge halves the cut (lambda_2 drops a lot),
    # removing an intra edge barely moves lambda_2
    n = 10
    A = torch.zeros(1, n, n)
    for block in (range(5), range(5, 10)):
        for i in block:
            for j in block:
                if i != j:
                    A[0, i, j] = 1
    for i, j in ((0, 5), (1, 6)):
        A[0, i, j] = A[0, j, i] = 1
    g = data.Graphs(A, torch.ones(1, n, 1), torch.ones(1, n, dtype=torch.bool), np.array([0]),
                    torch.tensor([[0] * 5 + [1] * 5]))
    from icml24.papers.ci_gcl.experiment import premise

    p = premise(g, 4, np.random.default_rng(0), per_kind=20)
    assert p.inter > 20 * p.intra
    lam = spectral.low_spectrum(A.double(), g.mask, torch.tensor([1]), 1)
    B = A.clone()
    B[0, 0, 5] = B[0, 5, 0] = 0
    assert p.inter == pytest.approx(float((spectral.low_spectrum(B.double(), g.mask, torch.tensor([1]), 1) - lam) ** 2))


def test_graphs_smaller_than_c_plus_k_get_pad_in_both_spectra():
    A = torch.zeros(2, 6, 6)
    A[0, 0, 1] = A[0, 1, 0] = A[0, 1, 2] = A[0, 2, 1] = 1            # a 3-node path (padded to 6)
    for i in range(5):
        A[1, i, i + 1] = A[1, i + 1, i] = 1                          # a 6-node path
    mask = torch.tensor([[True] * 3 + [False] * 3, [True] * 6])
    c = spectral.components(A, mask)
    batched, loop = spectral.low_spectrum(A.double(), mask, c, 4), spectral.low_spectrum_loop(A.double(), mask, c, 4)
    assert torch.allclose(batched, loop) and batched[0, 2:].tolist() == [spectral.PAD, spectral.PAD]


def test_a_batch_narrower_than_c_plus_k_gets_pad_not_repeats():
    # a 3-node path alone (batch width 3 < c + k = 5): with self-loops the degrees are 2, 3, 2 and
    # M = D^-1/2 (A + I) D^-1/2 has eigenvalues 1, 1/2 (on (1, 0, -1)) and tr M - 3/2 = 4/3 - 3/2 = -1/6,
    # so L = I - M has 0, 1/2, 7/6; the low spectrum past the trivial 0 is [1/2, 7/6, PAD, PAD]
    A = torch.zeros(1, 3, 3)
    A[0, 0, 1] = A[0, 1, 0] = A[0, 1, 2] = A[0, 2, 1] = 1
    mask, c = torch.ones(1, 3, dtype=torch.bool), torch.tensor([1])
    want = [0.5, 7 / 6, spectral.PAD, spectral.PAD]
    assert spectral.low_spectrum(A.double(), mask, c, 4)[0].tolist() == pytest.approx(want)
    assert spectral.low_spectrum_loop(A.double(), mask, c, 4)[0].tolist() == pytest.approx(want)
    U = spectral.low_eigvecs(A, mask, c, 4)[0]                                    # (3, 4)
    assert torch.all(U[:, 2:] == 0) and U[:, 0].abs().tolist() == pytest.approx([2 ** -0.5, 0, 2 ** -0.5], abs=1e-6)


def test_tu_loader_reads_the_tu_format(tmp_path):
    # graph 1: triangle (nodes 1-3), graph 2: path 4-5-6-7; edges listed in both directions as TU does
    (tmp_path / "TOY_A.txt").write_text("1, 2\n2, 1\n2, 3\n3, 2\n1, 3\n3, 1\n4, 5\n5, 4\n5, 6\n6, 5\n6, 7\n7, 6\n")
    (tmp_path / "TOY_graph_indicator.txt").write_text("1\n1\n1\n2\n2\n2\n2\n")
    (tmp_path / "TOY_graph_labels.txt").write_text("-1\n1\n")
    (tmp_path / "TOY_node_labels.txt").write_text("0\n1\n0\n2\n2\n0\n1\n")
    g = data.tu_dataset(str(tmp_path), "TOY")
    assert g.A.shape == (2, 4, 4) and g.y.tolist() == [0, 1] and g.X.shape == (2, 4, 3)
    assert g.A[0, :3, :3].sum() == 6 and g.A[1].sum() == 6 and g.mask.sum(1).tolist() == [3, 4]
    assert g.X[1, 0].tolist() == [0, 0, 1] and g.X[0, 3].tolist() == [0, 0, 0]        # node 4 has label 2; padding 0
    from icml24.core.errors import UserError

    with pytest.raises(UserError, match="missing"):
        data.tu_dataset(str(tmp_path), "NOPE")


@pytest.mark.parametrize("file, text, match", [
    ("A", "1, 2\nhello\n", "TOY_A.txt: not a TU A file"),
    ("A", "1, 2\n2, 9\n", "outside 1..3"),
    ("A", "1, 3\n", "two different graphs"),
    ("graph_indicator", "1\n2\n1\n", "numbered 1..2 in order"),
    ("graph_labels", "1\n1\n1\n", "numbered 1..3 in order"),
    ("node_labels", "0\n1\n", "2 node labels for 3 nodes"),
    ("graph_labels", "", "no nodes or no graphs"),
])
def test_tu_files_with_garbage_are_refused_in_one_line_naming_the_file(tmp_path, file, text, match):
    from icml24.core.errors import UserError

    good = {"A": "1, 2\n2, 1\n", "graph_indicator": "1\n1\n2\n", "graph_labels": "1\n-1\n",
            "node_labels": "0\n1\n0\n"}
    for key, body in {**good, file: text}.items():
        (tmp_path / f"TOY_{key}.txt").write_text(body)
    with pytest.raises(UserError, match=match) as err:
        data.read_tu(str(tmp_path), "TOY")
    assert "\n" not in str(err.value)


def test_a_tu_data_set_with_a_class_too_small_for_the_folds_is_refused_before_any_compute(tmp_path):
    # 4 graphs of one node each: classes of 3 and 1 graphs; a training fold could miss the class of 1
    from icml24.core.errors import UserError
    from icml24.papers.ci_gcl import config as cf

    files = {"A": "", "graph_indicator": "1\n2\n3\n4\n", "graph_labels": "1\n1\n1\n-1\n"}
    for key, body in files.items():
        (tmp_path / f"TOY_{key}.txt").write_text(body)
    config = replace(cf.SMOKE, tu_path=str(tmp_path), tu_name="TOY")
    with pytest.raises(UserError, match=r"graphs per class are \[1, 3\]"):
        cf.validate(config)
    (tmp_path / "TOY_graph_labels.txt").write_text("1\n1\n-1\n-1\n")        # 2 and 2: still too small
    with pytest.raises(UserError, match=r"\[2, 2\]"):
        cf.validate(config)


def test_mutag_from_the_grakel_wheel():
    g = data.mutag_dataset()
    assert g.A.shape == (188, 28, 28) and g.X.shape == (188, 28, 7) and g.dropped == 0
    assert np.bincount(g.y).tolist() == [63, 125]                 # labels -1 / 1
    assert int(g.mask.sum()) == 3371 and int(g.A.sum()) == 7442     # nodes; directed edges of MUTAG_A.txt
    assert torch.all(g.X[g.mask].sum(1) == 1) and torch.all(g.X[~g.mask] == 0)    # one-hot atom types


def test_sbm_features_carry_the_community_with_probability_signal():
    full = data.sbm_dataset(np.random.default_rng(0), 30, (20, 30), signal=1.0)
    for k in range(30):
        m = full.mask[k]
        dim, comm = full.X[k][m].argmax(1), full.community[k][m]
        pairs = set(zip(comm.tolist(), dim.tolist()))
        assert len(pairs) == len(set(comm.tolist())) == len(set(dim.tolist()))   # a bijection community -> dim
    half = data.sbm_dataset(np.random.default_rng(0), 300, (20, 30), signal=0.5)
    agree = []
    for k in range(300):
        m = half.mask[k]
        dim, comm = half.X[k][m].argmax(1), half.community[k][m]
        top = {c: int(torch.mode(dim[comm == c]).values) for c in comm.unique().tolist()}
        agree += [float(d == top[c]) for c, d in zip(comm.tolist(), dim.tolist())]
    # P(own dimension) = 0.5 + 0.5 / 4 = 0.625 (the mode can pick a wrong dimension in small communities)
    assert 0.58 < np.mean(agree) < 0.7
    assert torch.all(half.X[half.mask].sum(1) == 1)


def test_pyg_batches_round_trip_and_sparse_edges_aggregate_like_the_dense_product():
    g = data.sbm_dataset(np.random.default_rng(5), 6, (8, 14), signal=0.5)
    batch = data.to_pyg(g)
    assert batch.num_graphs == 6 and batch.num_nodes == int(g.mask.sum())
    back = data.from_pyg(batch)
    assert torch.equal(back.A, g.A) and torch.equal(back.X, g.X) and torch.equal(back.mask, g.mask)
    assert back.y.tolist() == g.y.tolist() and torch.equal(back.community, g.community)
    assert torch.equal(data.from_pyg(batch.to_data_list()).A, g.A)            # a list of Data too
    # weighted: sum_j w_ij x_j by scatter over sparse_edges equals the dense W @ X on the real nodes
    W = (g.A * torch.rand(g.A.shape, generator=torch.Generator().manual_seed(0))).requires_grad_()
    ei, ew = data.sparse_edges(W, g.mask)
    x = g.X[g.mask]
    agg = torch.zeros_like(x).index_add_(0, ei[0], ew[:, None] * x[ei[1]])
    assert torch.allclose(agg, (W @ g.X)[g.mask], atol=1e-6)
    agg.sum().backward()
    assert torch.allclose(W.grad, (g.A > 0).float() * g.X.sum(2)[:, None, :])   # d/dW_ij = sum_f x_jf


def test_spectral_losses_are_means_over_the_batch_like_the_official_code(monkeypatch):
    # deterministic augmenters (no Gumbel noise) and every non-edge a candidate: a batch and the same batch
    # twice give the same views per graph, so mean losses agree and summed ones would double
    from icml24.papers.ci_gcl import model

    monkeypatch.setattr(model, "_gumbel_prob", lambda logits, tau=1.0: torch.softmax(logits, -1)[..., 1])
    g = data.sbm_dataset(np.random.default_rng(6), 4, (8, 10))
    g = g._replace(X=torch.rand(g.X.shape, generator=torch.Generator().manual_seed(1)) * g.mask[:, :, None])
    gg = g.subset(np.r_[np.arange(4), np.arange(4)])
    torch.manual_seed(0)
    enc, aug = GIN(4, 8), Augmenter(3, 4, 8, add_candidates=50)
    out = [cigcl_loss(enc, aug, h.A, h.X, h.mask, precompute(h.A, h.X, h.mask, 3, False), LossWeights(3, 0.8, 1.0, 0.2),
                      torch.Generator().manual_seed(0)) for h in (g, gg)]
    assert out[0].topo != 0 and out[0].feat != 0
    assert out[1].topo == pytest.approx(out[0].topo, rel=1e-5) and out[1].feat == pytest.approx(out[0].feat, rel=1e-5)


def test_features_are_scaled_by_their_column_norms():
    g = data.mutag_dataset()
    s = data.scale_features(g)
    flat = s.X.reshape(-1, s.X.shape[2])
    assert torch.allclose(flat.norm(dim=0), torch.ones(7))
    assert torch.equal(s.X > 0, g.X > 0)
    plain = g._replace(X=g.mask[:, :, None].float())
    assert data.featureless(plain) and data.scale_features(plain) is plain


def test_fiedler_split_bisects_two_cliques():
    from icml24.papers.ci_gcl.experiment import fiedler_split

    n = 10
    A = torch.zeros(1, n, n)
    A[0, :5, :5] = 1
    A[0, 5:, 5:] = 1
    A[0, 0, 5] = A[0, 5, 0] = 1
    A = A * (1 - torch.eye(n))
    mask = torch.ones(1, n, dtype=torch.bool)
    pre = precompute(A, mask[:, :, None].float(), mask, 2, featureless=True)
    split = fiedler_split(pre, mask)[0].tolist()
    assert len(set(split[:5])) == 1 and len(set(split[5:])) == 1 and split[0] != split[5]


def test_gin_on_the_real_nodes_equals_the_padded_computation():
    # the encoder runs its MLPs on the real nodes only; the padded computation (every node through the MLP,
    # BatchNorm over the real ones, padded rows zeroed) gives the same embeddings
    g = data.mutag_dataset().subset(np.arange(12))
    torch.manual_seed(0)
    enc = GIN(g.X.shape[2], 16)
    h, reads = g.X, []
    for conv, norm in zip(enc.convs, enc.norms):
        z = torch.relu(conv(h + g.A @ h))                                   # every padded node too
        h = torch.zeros_like(z)
        h[g.mask] = norm(z[g.mask])
        reads.append(h.sum(1))
    assert torch.allclose(enc.embed(g.A, g.X, g.mask), torch.cat(reads, -1), atol=1e-5)


def _masking_case():
    """Twelve MUTAG graphs (features scaled), their precomputed spectra and an augmenter of seed 0."""
    g = data.scale_features(data.mutag_dataset().subset(np.arange(12)))
    pre = precompute(g.A, g.X, g.mask, 4, False)
    torch.manual_seed(0)
    return g, pre, Augmenter(4, g.X.shape[2], 16)


def _padded_masking(aug, g, pre, prob):
    """The feature masking as first written: the mask MLP on every padded entry, ``prob`` (logits (G, n, f, 2)
    -> keep probability), the padded entries' probability set to 1, the lowest tenth per graph scaled."""
    q = prob(aug.mask_net((pre.Ux[:, :, None, :] - pre.Vx[:, None, :, :]) ** 2))      # (G, n, f)
    q = torch.where(g.mask[:, :, None], q, torch.ones_like(q))
    cut = torch.quantile(q.flatten(1), aug.mask_frac, dim=1)[:, None, None]
    return g.X * torch.where(q <= cut, q, torch.ones_like(q))


def test_feature_masking_on_the_real_entries_equals_the_padded_computation(monkeypatch):
    # the mask MLP runs on the real nodes' entries only; the padded computation (every entry, the padded ones'
    # keep probability set to 1) gives the same masked features
    from icml24.papers.ci_gcl import model

    monkeypatch.setattr(model, "_gumbel_prob", lambda logits, tau=1.0: torch.softmax(logits, -1)[..., 1])
    g, pre, aug = _masking_case()
    expected = _padded_masking(aug, g, pre, lambda logits: torch.softmax(logits, -1)[..., 1])
    X1 = aug(g.A, g.X, g.mask, pre, torch.Generator().manual_seed(0)).X1
    assert torch.allclose(X1, expected, atol=1e-6) and not torch.equal(X1, g.X)


def test_feature_masking_draws_the_padded_computations_gumbel_noise():
    # with the real Gumbel noise: the same global-generator draws, entry for entry, as the mask MLP run on every
    # padded entry (torch's gumbel_softmax over the (G, n, f, 2) logits), so the masked features are equal
    import torch.nn.functional as F

    g, pre, aug = _masking_case()
    A = g.A
    gen = torch.Generator().manual_seed(0)
    torch.manual_seed(1)
    X1 = aug(A, g.X, g.mask, pre, gen).X1
    # the padded computation, with the draws in the forward's order: drop, add, then the mask
    torch.manual_seed(1)
    gen = torch.Generator().manual_seed(0)
    _, _, _, logits = aug.drop_logits(A, pre.U, g.X)
    F.gumbel_softmax(logits, tau=1.0, hard=False)
    real = (g.mask[:, :, None] & g.mask[:, None, :]).float()
    score = torch.rand(A.shape, generator=gen) * torch.triu(real * (1 - A), 1)
    top = torch.topk(score.flatten(1), aug.add_candidates, dim=1)
    ok = top.values > 0
    n = A.shape[1]
    cg = torch.arange(A.shape[0])[:, None].expand_as(top.indices)[ok]
    F.gumbel_softmax(aug.add(aug.pair_features(pre.U, g.X, cg, top.indices[ok] // n, top.indices[ok] % n)), tau=1.0)
    expected = _padded_masking(aug, g, pre, lambda logits: F.gumbel_softmax(logits, tau=1.0)[..., 1])
    assert torch.allclose(X1, expected, atol=1e-6)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_extra_drop_restarts_train_only_cigcl_for_c2a(monkeypatch, seed):
    """drop_restarts > restarts adds CI-GCL encoders on the SBM graphs, each from its own initial seed: only
    C2a's drop precision changes, every other metric (the first ``restarts`` encoders', C2b's paired precisions,
    the probes', the graphs' inter-community share, MUTAG's) stays bit for bit, and the extra encoders get no
    probe."""
    from icml24.papers.ci_gcl import config as cf
    from icml24.papers.ci_gcl import experiment

    calls = []
    train, probe = experiment.train, experiment.probe
    monkeypatch.setattr(experiment, "train", lambda method, graphs, *a: calls.append(
        (graphs.A.shape[0], method, torch.initial_seed())) or train(method, graphs, *a))
    probes = []
    monkeypatch.setattr(experiment, "probe", lambda emb, *a: probes.append(len(emb)) or probe(emb, *a))
    base = replace(cf.SMOKE, restarts=1, drop_restarts=1)
    one = experiment.run(base, seed).metrics
    sbm, n_probes = [c for c in calls if c[0] == base.sbm_graphs], probes.count(base.sbm_graphs)
    calls.clear()
    probes.clear()
    three = experiment.run(replace(base, drop_restarts=3), seed).metrics
    extra = [c for c in calls if c[0] == base.sbm_graphs]
    assert sorted(c[:2] for c in extra) == sorted([c[:2] for c in sbm] + [(base.sbm_graphs, "cigcl")] * 2)
    cigcl_inits = [c[2] for c in extra if c[1] == "cigcl"]
    assert len(set(cigcl_inits)) == 3                                                          # independent
    assert [c[2] for c in extra if c[1] == "learned"] == cigcl_inits[:1]                       # paired with the first
    assert probes.count(base.sbm_graphs) == n_probes                                            # no probe
    assert one.keys() == three.keys()
    changed = {k for k in one if one[k] != three[k]}
    assert changed == {"sbm_drop_precision_cigcl"}
    assert one["sbm_drop_precision_cigcl_paired"] == one["sbm_drop_precision_cigcl"]            # 1 of 1: the same


def test_c2b_pairs_the_first_restarts_and_noise_every_method_probes_all(monkeypatch):
    """QUICK's shape at SMOKE's size: 2 restarts, 3 CI-GCL encoders on the SBM graphs: the no-spectra augmenters
    train the first 2 CI-GCL encoders' initial seeds, and C2b's paired precision is the mean over those 2 only;
    the noisy probes cover CI-GCL and GraphCL, and every method with ``noise_every_method``."""
    from icml24.papers.ci_gcl import config as cf
    from icml24.papers.ci_gcl import experiment

    calls, precisions = [], []
    train, drop_precision = experiment.train, experiment.drop_precision
    monkeypatch.setattr(experiment, "train", lambda method, graphs, *a: calls.append(
        (graphs.A.shape[0], method, torch.initial_seed())) or train(method, graphs, *a))
    def recorded(aug, graphs, *a):
        share = drop_precision(aug, graphs, *a)
        precisions.append((len(graphs.y), share.top))
        return share

    monkeypatch.setattr(experiment, "drop_precision", recorded)
    base = replace(cf.SMOKE, restarts=2, drop_restarts=3)
    m = experiment.run(base, 0).metrics
    sbm = [c for c in calls if c[0] == base.sbm_graphs]
    cigcl = [c[2] for c in sbm if c[1] == "cigcl"]
    assert len(set(cigcl)) == 3 and [c[2] for c in sbm if c[1] == "learned"] == cigcl[:2]
    tops = [p for n, p in precisions if n == base.sbm_graphs][:3]                  # CI-GCL's 3, in training order
    assert m["sbm_drop_precision_cigcl"] == pytest.approx(np.mean(tops), abs=1e-12)
    assert m["sbm_drop_precision_cigcl_paired"] == pytest.approx(np.mean(tops[:2]), abs=1e-12)
    noisy = {k for k in m if k.startswith("mutag_noisy_acc_")}
    assert noisy == {"mutag_noisy_acc_cigcl", "mutag_noisy_acc_graphcl"}
    every = experiment.run(replace(cf.SMOKE, noise_every_method=True), 0).metrics
    assert {k for k in every if k.startswith("mutag_noisy_acc_")} == {f"mutag_noisy_acc_{x}" for x in
                                                                       experiment.METHODS}


@pytest.mark.parametrize("rows", [0, 1, 7, 64])
def test_chunked_mlp_equals_the_sequential_mlp_and_its_gradients(rows):
    # chunks of 5 rows: several chunks, a ragged last one; leading dims (rows, 3) flattened and restored
    from icml24.papers.ci_gcl import model

    torch.manual_seed(0)
    mlp = model.ChunkedMLP(4, 6, chunk=5).double()
    x = torch.randn(rows, 3, 4, dtype=torch.float64, requires_grad=True)
    out = mlp(x)
    ref = torch.nn.Sequential.forward(mlp, x)                          # the unchunked Linear-ReLU-Linear
    assert out.shape == ref.shape == (rows, 3, 2) and torch.allclose(out, ref, atol=1e-12)
    w = torch.randn(rows, 3, 2, dtype=torch.float64)
    grads = torch.autograd.grad((out * w).sum(), [x, *mlp.parameters()])
    refs = torch.autograd.grad((ref * w).sum(), [x, *mlp.parameters()])
    assert all(torch.allclose(g, r, atol=1e-12) for g, r in zip(grads, refs))
    if rows:
        params = [p.detach().requires_grad_() for p in mlp.parameters()]
        assert torch.autograd.gradcheck(lambda *args: model._ChunkedMLPFunction.apply(*args, 5),
                                        (x.detach().reshape(-1, 4).requires_grad_(), *params))


def test_gumbel_prob_is_gumbel_softmax_with_its_draws():
    import torch.nn.functional as F

    from icml24.papers.ci_gcl.model import _gumbel_prob

    logits = torch.randn(50, 3, 2, dtype=torch.float64)
    torch.manual_seed(4)
    mine = _gumbel_prob(logits, tau=0.7)
    torch.manual_seed(4)
    ref = F.gumbel_softmax(logits, tau=0.7, hard=False)[..., 1]
    assert torch.allclose(mine, ref, atol=1e-12) and not torch.allclose(mine, torch.softmax(logits / 0.7, -1)[..., 1])

"""Momentor's TPM: interpolation, soft targets and their decoding, Neighbouring Token Propagation (both forms)
against (I + R^T) g, IoU and the quantization ceiling by hand, the data engine's planted events and sub-frame
boundaries, the held-out tokens of C2, the token grammar of each method, a short training run, a user's real
features, and the bad inputs (one line, exit 2, nothing written)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch

from icml24.papers.momentor import data
from icml24.papers.momentor import experiment as ex
from icml24.papers.momentor.model import TIME, WORD, Vocab, encode, encode_queries, fit, loss, read_span, sequence
from icml24.papers.momentor.tpm import (
    NeighbourPropagation,
    TemporalPerception,
    hard_target,
    interpolate,
    local_expectation,
    nearest,
    neighbour_cosine,
    positions,
    propagate,
    propagation_matrix,
    soft_target,
)


def test_interpolation_is_the_row_at_integers_and_linear_between():
    g = torch.Generator().manual_seed(0)
    E = torch.randn(6, 4, generator=g)
    assert torch.equal(interpolate(E, torch.arange(6.0)), E)
    for k, r in ((0, 0.25), (2, 0.5), (4, 0.9)):
        assert torch.allclose(interpolate(E, torch.tensor(k + r)), (1 - r) * E[k] + r * E[k + 1])
    u = torch.linspace(2.0, 3.0, 11)                                  # inside one cell: linear in u
    emb = interpolate(E, u)
    assert torch.allclose(emb[2:] - 2 * emb[1:-1] + emb[:-2], torch.zeros(9, 4), atol=1e-6)
    tpm = TemporalPerception(6, 4, generator=g)
    assert torch.allclose(tpm.embed(torch.tensor([1.5]), tpm.tables()), (tpm.E_in[1] + tpm.E_in[2]) / 2)
    bins = TemporalPerception(6, 4, continuous=False, propagation=False, generator=g)
    assert torch.equal(bins.embed(torch.tensor([1.4, 1.5]), bins.tables()), bins.E_in[[1, 2]])
    # u = clip(t / D, 0, 1) (N_t - 1)
    assert torch.allclose(positions(torch.tensor([-1.0, 15.0, 30.0, 45.0]), torch.tensor(30.0), 7),
                          torch.tensor([0.0, 3.0, 6.0, 6.0]))


def test_soft_target_has_expectation_u_and_two_tokens():
    u = torch.tensor([0.0, 0.3, 2.0, 4.75, 7.0])
    q = soft_target(u, 8)
    k = torch.arange(8.0)
    assert torch.allclose(q.sum(-1), torch.ones(5))
    assert torch.allclose((q * k).sum(-1), u)                          # sum_k k q_k = u
    assert ((q > 0).sum(-1) <= 2).all() and torch.equal(q[2], torch.eye(8)[2])
    assert torch.allclose(q[3, 4:6], torch.tensor([0.25, 0.75]))
    # the local expectation recovers u from a fitted soft target; hard targets and argmax give the nearest bin
    assert torch.allclose(local_expectation(q), u)
    assert torch.equal(hard_target(u, 8).argmax(-1), torch.tensor([0, 0, 2, 5, 7]))
    assert torch.equal(nearest(torch.tensor([2.5, 3.5])), torch.tensor([3, 4]))
    bins = TemporalPerception(8, 2, continuous=False)
    assert torch.equal(bins.decode(torch.log(hard_target(u, 8) + 1e-9)), torch.tensor([0.0, 0, 2, 5, 7]))


def test_local_expectation_uses_the_larger_neighbour_and_the_ends():
    p = torch.tensor([[0.1, 0.6, 0.3, 0.0], [0.7, 0.3, 0.0, 0.0], [0.0, 0.0, 0.2, 0.8], [0.2, 0.5, 0.1, 0.2]])
    expected = [(1 * 0.6 + 2 * 0.3) / 0.9, 0.3 / 1.0, (3 * 0.8 + 2 * 0.2) / 1.0, (0.5 + 0) / 0.7]
    assert torch.allclose(local_expectation(p), torch.tensor(expected))


def test_propagation_matrix():
    R = propagation_matrix(5, 0.5)
    i, j = np.indices((5, 5))
    assert np.allclose(R.numpy(), 0.5 ** np.abs(i - j)) and torch.equal(torch.diag(R), torch.ones(5))


@pytest.mark.parametrize("exact", [True, False])
def test_ntp_forward_is_E_and_backward_is_I_plus_R_transpose(exact):
    g = torch.Generator().manual_seed(1)
    E = torch.randn(9, 5, generator=g, requires_grad=True)
    G = torch.randn(9, 5, generator=g)
    R = propagation_matrix(9, 0.5)
    out = propagate(E, R, exact=exact)
    if exact:
        assert torch.equal(out, E)                                     # bit for bit
    else:
        assert torch.allclose(out, E, atol=1e-6)                       # E + R E - R E: equal up to rounding
    (out * G).sum().backward()
    assert torch.allclose(E.grad, G + R.T @ G, atol=1e-5)              # (I + R^T) g, not R^T g
    assert not torch.allclose(E.grad, R.T @ G, atol=1e-3)


def test_ntp_backward_is_not_the_forwards_derivative_and_matches_the_reparametrisation():
    g = torch.Generator().manual_seed(2)
    E = torch.randn(6, 3, generator=g, dtype=torch.float64, requires_grad=True)
    R = propagation_matrix(6, 0.5, torch.float64)
    # the forward is the identity, the backward (I + R^T) g on purpose: a finite-difference check must disagree
    assert not torch.autograd.gradcheck(lambda e: NeighbourPropagation.apply(e, R), (E,), raise_exception=False)
    # the same gradient as E + R E - stopgrad(R E) in a downstream loss
    W = torch.randn(3, 2, generator=g, dtype=torch.float64)
    grads = []
    for exact in (True, False):
        E.grad = None
        (propagate(E, R, exact) @ W).tanh().sum().backward()
        grads.append(E.grad.clone())
    assert torch.allclose(*grads)
    tpm = TemporalPerception(6, 3)
    assert tpm.tables().E_in is not tpm.E_in and torch.equal(tpm.tables().E_in, tpm.E_in)
    assert TemporalPerception(6, 3, propagation=False).tables().E_in is not None


def test_frame_encoding_needs_frames_equal_to_tokens():
    tpm = TemporalPerception(5, 4)
    t = tpm.tables()
    assert torch.allclose(tpm.frame_encoding(5, t), (tpm.E_in + tpm.E_out) / 2)
    with pytest.raises(ValueError, match="frames = N_t"):
        tpm.frame_encoding(6, t)
    with pytest.raises(ValueError, match="at least two"):
        TemporalPerception(1, 4)


def test_neighbour_cosine():
    table = torch.tensor([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.0, 1.0]])
    assert neighbour_cosine(table, torch.tensor([1])) == pytest.approx(math.cos(math.pi / 4))
    assert neighbour_cosine(table, torch.tensor([2])) == pytest.approx((math.cos(math.pi / 4) + 1) / 2)


def test_iou_by_hand():
    ps, pe = np.array([1.0, 0.0, 2.0, 5.0, 4.0, np.nan, 1.0]), np.array([3.0, 4.0, 3.0, 6.0, 2.0, 3.0, 3.0])
    s, e = np.array([1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 2.0]), np.array([3.0, 3.0, 4.0, 4.0, 3.0, 3.0, 5.0])
    expected = [1.0, 2 / 4, 1 / 4, 0.0, 0.0, 0.0, 1 / 4]              # same, contained, inside, disjoint, inverted, NaN
    assert np.allclose(data.iou(ps, pe, s, e), expected)
    with pytest.raises(ValueError, match="ends before it starts"):
        data.iou(ps[:1], pe[:1], np.array([3.0]), np.array([1.0]))
    loc = data.localisation(np.array(expected))
    assert loc == pytest.approx(data.Localisation(np.mean(expected), 2 / 7, 1 / 7))


def test_quantization_ceiling_by_hand():
    # N_t = 5: grid 0, .25, .5, .75, 1. [0.1, 0.4] -> [0, 0.5]: IoU 0.3 / 0.5; [0.25, 0.75] is on the grid
    assert np.allclose(data.quantization_ceiling(np.array([0.1, 0.25]), np.array([0.4, 0.75]), 5), [0.6, 1.0])
    lay = data.layouts(np.random.default_rng(0), 2000, data.Engine())
    s, e = lay.start[:, 0], lay.end[:, 0]
    ceil = [data.quantization_ceiling(s, e, n).mean() for n in (12, 32, 300)]
    assert ceil[0] < 0.8 < ceil[1] < ceil[2] < 1.0                    # short events: the coarse grid loses > 20%


def test_layouts_are_ordered_disjoint_and_in_range():
    eng = data.Engine(event_types=6, events=(2, 4), length=(0.1, 0.2))
    lay = data.layouts(np.random.default_rng(3), 500, eng)
    for v in range(500):
        k = lay.n_events[v]
        s, e, t = lay.start[v, :k], lay.end[v, :k], lay.types[v, :k]
        assert 2 <= k <= 4 and (lay.types[v, k:] == -1).all() and np.isnan(lay.start[v, k:]).all()
        assert s[0] >= 0 and e[-1] <= 1 + 1e-12 and (s[1:] >= e[:-1] - 1e-12).all()
        assert np.all((e - s >= 0.1 - 1e-12) & (e - s <= 0.2 + 1e-12)) and len(set(t)) == k


def test_engine_answers_match_planted_events_and_frames_show_sub_frame_boundaries():
    eng = data.Engine(event_types=5, feat_dim=6, noise=0.0)
    protos = np.eye(6)                                                 # prototype k = basis vector k (5: background)
    rng = np.random.default_rng(4)
    lay = data.layouts(rng, 50, eng)
    vids = data.render(lay, protos, 11, 0.0, rng, np.full(50, 40.0))
    # noise-free frames are the coverage of each event type and the background
    cover = data.overlaps(lay.start, lay.end, 11)                      # (V, K, N_t)
    for v in range(50):
        for k in range(lay.n_events[v]):
            assert np.allclose(vids.frames[v, :, lay.types[v, k]], cover[v, k], atol=1e-6)
            # the coverage integrates to the event's length: sum_i cover_i * w = L
            assert cover[v, k].sum() / 10 == pytest.approx(lay.end[v, k] - lay.start[v, k])
    assert np.allclose(vids.frames.sum(-1), 1.0, atol=1e-5)
    for task in data.TASKS:
        q = data.queries(np.random.default_rng(5), vids, (task,))
        a = data.answers(vids, q)
        nxt = q.slot + (task == "after")
        assert (nxt < vids.n_events).all()
        assert np.array_equal(a.start, vids.start[q.video, nxt]) and np.array_equal(a.end, vids.end[q.video, nxt])
        assert np.array_equal(a.event, vids.types[q.video, nxt])
    # a boundary inside frame i's window moves that frame's mix linearly
    one = data.overlaps(np.array([[0.3, 0.32]]).T, np.array([[0.6, 0.6]]).T, 11)[:, 0]    # frame 3 covers .25-.35
    assert one[0, 3] == pytest.approx(0.5) and one[1, 3] == pytest.approx(0.3)


def test_heldout_positions_never_reach_training_targets():
    cfg = dataclasses.replace(ex.SMOKE, n_t_coarse=10, n_train=60, n_test=20)
    protos = data.prototypes(np.random.default_rng(0), ex.engine(cfg))
    split, held = ex.heldout_split(cfg, 0, protos)
    assert held.tolist() == [1, 4, 7]
    vocab = Vocab(cfg.event_types)
    enc = encode_queries("tpm", vocab, split.train, split.train_q, 10)
    tgt = soft_target(enc.tgt_time[enc.tgt_kind == TIME], 10)        # every timestamp target's distribution
    inputs = enc.time[enc.kind == TIME]                                # and every interpolated input
    assert len(tgt) > len(split.train_q.video) / 2 and tgt[:, torch.from_numpy(held)].sum() == 0
    rows = torch.cat([torch.floor(inputs), torch.ceil(inputs)]).long()
    assert not np.isin(rows.numpy(), held).any()
    a = data.answers(split.test, split.tests["when"])
    assert data.near(a.start * 9, held).all() and data.near(a.end * 9, held).all()
    # heldout_rate = 1 keeps every query: then held-out tokens are trained
    split1, _ = ex.heldout_split(dataclasses.replace(cfg, heldout_rate=1.0), 0, protos)
    enc1 = encode_queries("tpm", vocab, split1.train, split1.train_q, 10)
    assert soft_target(enc1.tgt_time[enc1.tgt_kind == TIME], 10)[:, torch.from_numpy(held)].sum() > 0


def test_token_grammar_of_each_method_and_the_target_alignment():
    v = Vocab(4)
    prompt, ans = sequence("text", v, "when", 2, (2, 0.25, 0.5), 47.3, 12)
    words = [v.words[int(x)] for _, x in prompt + ans]
    assert words == ["<dur>", "4", "7", ".", "3", "<when>", "ev2", "1", "1", ".", "8", "<sep>", "2", "3", ".", "6",
                     "<eos>"]
    prompt, ans = sequence("tpm", v, "after", 1, (3, 0.1, 0.5), 47.3, 11)
    assert prompt == [(WORD, v.id("<after>")), (WORD, v.event(1))]
    assert ans[0] == (WORD, v.event(3)) and ans[1] == (TIME, pytest.approx(1.0)) and ans[2] == (TIME, 5.0)
    prompt, ans = sequence("bins", v, "what", 1, (1, 0.1, 0.5), 47.3, 11)
    assert [k for k, _ in prompt] == [WORD, TIME, TIME] and ans == [(WORD, v.event(1)), (WORD, v.id("<eos>"))]
    enc = encode([prompt], [ans])
    assert enc.tgt_kind.tolist() == [[0, 0, WORD, WORD, 0]]            # position j predicts token j + 1
    assert enc.tgt_word[0, 2] == v.event(1) and enc.time[0, 2] == pytest.approx(5.0)
    with pytest.raises(ValueError, match="unknown task"):
        sequence("tpm", v, "why", 1, (1, 0.1, 0.5), 47.3, 11)
    # number text read back, unparsable numbers as NaN
    toks = [(WORD, v.id(c)) for c in "12.5"] + [(WORD, v.id("<sep>"))] + [(WORD, v.id(c)) for c in "25.0"]
    assert read_span("text", v, toks, 50.0, 12) == (0.25, 0.5)
    bad = [(WORD, v.id(".")), (WORD, v.id("<sep>")), (WORD, v.id("<eos>"))]
    assert all(math.isnan(x) for x in read_span("text", v, bad, 50.0, 12))
    assert read_span("tpm", v, [(TIME, 2.75), (TIME, 5.5)], 50.0, 12) == (0.25, 0.5)


def test_a_short_training_run_learns_to_localise_and_the_seed_decides_everything():
    cfg = dataclasses.replace(ex.SMOKE, n_t_coarse=8, n_t_fine=12, tasks=("when",), n_train=1000, n_test=60, dim=32,
                              heads=2, layers=2, steps=250, batch=32, event_types=4)
    protos = data.prototypes(np.random.default_rng(0), ex.engine(cfg))
    split = ex.splits(cfg, 0, 8, protos)
    vocab = Vocab(cfg.event_types)
    out = []
    for _ in range(2):
        model = ex.make_model("tpm", vocab.size, cfg.feat_dim, 8, cfg, torch.Generator().manual_seed(0))
        enc = encode_queries("tpm", vocab, split.train, split.train_q, 8)
        frames = torch.from_numpy(split.train.frames)
        before = float(loss(model, frames[:64], enc.take(torch.arange(64))).detach())
        losses = fit(model, frames, enc, cfg.steps, cfg.batch, cfg.lr, cfg.weight_decay, torch.Generator().manual_seed(1))
        out.append(ex.score(model, "tpm", vocab, split, 8, "cpu").metrics)
    a = data.answers(split.test, split.tests["when"])
    constant = data.iou(np.full(60, a.start.mean()), np.full(60, a.end.mean()), a.start, a.end).mean()
    assert np.mean(losses[-20:]) < 0.6 * before
    assert out[0] == out[1] and out[0]["miou"] > constant + 0.2       # far better than the mean segment (.18)
    assert out[0]["miou"] > out[0]["miou_argmax"]                      # reading between the tokens helps


def _write_features(folder, frames=10, inverted=False, skip=None):
    folder.mkdir(exist_ok=True)
    rng = np.random.default_rng(0)
    if skip != "features.npy":
        np.save(folder / "features.npy", rng.standard_normal((6, frames, 5)).astype(np.float32))
    if skip != "segments.csv":
        rows = ["video,label,start,end,duration,split"]
        for v in range(6):
            s, e = (8.0, 2.0) if inverted and v == 3 else (2.0 + v, 9.0 + v)
            rows.append(f"{v},{'open door' if v % 2 else 'sit'},{s},{e},30.0,{'test' if v > 3 else 'train'}")
        (folder / "segments.csv").write_text("\n".join(rows) + "\n")
    return folder


def test_real_features_load_and_run(tmp_path):
    folder = _write_features(tmp_path / "feats", frames=ex.SMOKE.n_t_fine)
    real = data.real_data(str(folder), ex.SMOKE.n_t_fine)
    assert real.labels == ("open door", "sit") and len(real.train.video) == 4 and len(real.test.video) == 2
    assert real.videos.start[0, 0] == pytest.approx(2 / 30) and real.videos.types[1, 0] == 0
    res = ex.run(dataclasses.replace(ex.SMOKE, feature_dir=str(folder), methods=("tpm", "text"), heldout=False), 0)
    assert {"real_miou_tpm", "real_miou_text"} <= set(res.metrics)


@pytest.mark.parametrize("preset, overrides, error", [
    ("SMOKE", [], None), ("QUICK", [], None), ("FULL", [], None),
    ("SMOKE", ["n_t_coarse=1"], "n_t_coarse"), ("SMOKE", ["n_t_fine=7"], "n_t_fine"),
    ("SMOKE", ["methods=tpm,wavelets"], "methods"), ("SMOKE", ["tasks=when,why"], "tasks"),
    ("SMOKE", ["tasks=what"], "must include when"), ("SMOKE", ["steps=0"], "steps"), ("SMOKE", ["batch=0"], "batch"),
    ("SMOKE", ["lr=0"], "lr"), ("SMOKE", ["decay=1"], "decay"), ("SMOKE", ["heads=3"], "divide"),
    ("SMOKE", ["length_min=0.3", "length_max=0.1"], "inverted"), ("SMOKE", ["duration_min=70"], "inverted"),
    ("SMOKE", ["events_max=4"], "event_types"), ("SMOKE", ["events_min=3", "events_max=2"], "events_min"),
    ("QUICK", ["events_max=4"], "fit in the video"), ("SMOKE", ["heldout_rate=2"], "heldout_rate"),
    ("SMOKE", ["noise=-1"], "noise"), ("SMOKE", ["n_t_coarse=6"], "hold out"),
])
def test_config_rules(preset, overrides, error):
    from icml24.core.testing import check_config_rule
    from icml24.papers.momentor import config as cf

    check_config_rule(getattr(cf, preset), overrides, cf.validate, error)


@pytest.mark.parametrize("case, error", [
    ("features.npy", "lacks features.npy"), ("segments.csv", "lacks segments.csv"), ("frames", "frames = N_t"),
    ("inverted", "inverted segment"), (None, None),
])
def test_feature_dir_rules(tmp_path, case, error):
    from icml24.core.testing import check_config_rule
    from icml24.papers.momentor import config as cf

    folder = _write_features(tmp_path / "f", frames=11 if case == "frames" else 10, inverted=case == "inverted",
                             skip=case if case and case.endswith(("npy", "csv")) else None)
    check_config_rule(cf.SMOKE, ["n_t_fine=10", f"feature_dir={folder}"], cf.validate, error)


def test_cli_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path):
    from conftest import run_cli

    for bad in ("n_t_coarse=1", "methods=tpm,wavelets", f"feature_dir={tmp_path / 'none'}"):
        out = run_cli("run", "momentor", "--preset", "smoke", "--set", bad, "--out", str(tmp_path / "runs"),
                      "--results", str(tmp_path / "results"), cwd=tmp_path)
        assert out.returncode == 2 and out.stderr.startswith("error:") and out.stderr.count("\n") == 1, out.stderr
        assert list(tmp_path.iterdir()) == []


def test_ntp_moves_an_untrained_row_with_its_neighbours():
    """C2b's statistic on a toy: only rows 0 and 2 of E_out are in the loss. With NTP row 1 receives
    R_01 g_0 + R_21 g_2 and its update is parallel to theirs (cosine 1); without NTP it does not move (0)."""
    for propagation, expected in ((True, 1.0), (False, 0.0)):
        g = torch.Generator().manual_seed(0)
        tpm = TemporalPerception(3, 4, propagation=propagation, generator=g)
        start = tpm.E_out.detach().clone()
        h = torch.randn(4, generator=g)
        opt = torch.optim.SGD(tpm.parameters(), lr=0.1)
        for _ in range(5):
            opt.zero_grad()
            E_out = tpm.tables().E_out
            (-(E_out[0] @ h) - (E_out[2] @ h)).backward()       # raise the logits of tokens 0 and 2 for h
            opt.step()
        moved = tpm.E_out.detach() - start
        assert neighbour_cosine(moved, torch.tensor([1])) == pytest.approx(expected, abs=1e-5)


def test_c2s_pair_starts_from_the_same_weights_and_differs_only_in_propagation():
    cfg = dataclasses.replace(ex.SMOKE, n_t_coarse=10, n_train=40, n_test=10, steps=2)
    protos = data.prototypes(np.random.default_rng(0), ex.engine(cfg))
    split, _ = ex.heldout_split(cfg, 0, protos)
    vocab = Vocab(cfg.event_types)
    pair = [ex.train_and_score(m, split, vocab, cfg.n_t_coarse, cfg, 0, "heldout", "cpu", "tpm")
            for m in ("tpm", "tpm_nontp")]
    assert np.array_equal(pair[0].E_out_init, pair[1].E_out_init)
    own = ex.train_and_score("tpm_nontp", split, vocab, cfg.n_t_coarse, cfg, 0, "heldout", "cpu")
    assert not np.array_equal(own.E_out_init, pair[1].E_out_init)       # its own stream: other weights
    a = ex.make_model("tpm", vocab.size, 32, 10, cfg, torch.Generator().manual_seed(3)).state_dict()
    b = ex.make_model("tpm_nontp", vocab.size, 32, 10, cfg, torch.Generator().manual_seed(3)).state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)   # the same parameters, drawn alike

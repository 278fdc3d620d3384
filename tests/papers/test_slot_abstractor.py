"""Slot Abstractor: slot attention's permutation equivariance, the relational bottleneck of RCA (equal attention,
equal output), context normalisation's moments, ARI against sklearn, the factorised and oracle slots by hand,
the ART generators' answers, the m-holdout, the slot cache, and the config's rules."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from conftest import run_cli

from icml24.core import streams
from icml24.core.context import RunContext
from icml24.papers.slot_abstractor import art
from icml24.papers.slot_abstractor import config as cf
from icml24.papers.slot_abstractor.abstractor import AbstractorLayer, CrossAttention, Reasoner, context_norm
from icml24.papers.slot_abstractor.experiment import (
    EXAMPLES,
    _owners,
    autoencoder,
    masks_figure,
    relation_attention,
    run,
    slot_model,
    task_data,
    task_slots,
)
from icml24.papers.slot_abstractor.slots import (
    SlotAttention,
    SlotAutoencoder,
    adjusted_rand_index,
    fg_ari,
    oracle_factors,
    slot_attention_loop,
)

TINY = cf.SMOKE


def test_slot_attention_is_permutation_equivariant_in_the_slots():
    torch.manual_seed(0)
    sa = SlotAttention(dim=8, n_slots=4, iters=3, init="random").eval()
    x = torch.randn(2, 12, 8)
    init = torch.randn(2, 4, 8)
    perm = torch.tensor([2, 0, 3, 1])
    out, out_p = sa(x, slots=init), sa(x, slots=init[:, perm])
    assert torch.allclose(out.slots[:, perm], out_p.slots, atol=1e-5)
    assert torch.allclose(out.attn[:, perm], out_p.attn, atol=1e-6)
    # the batched forward equals the per-image loop (the benchmark's reference)
    assert torch.allclose(sa(x, slots=init).slots, slot_attention_loop(sa, x, init), atol=1e-5)
    # attention is a softmax over slots at every input
    assert torch.allclose(out.attn.sum(dim=1), torch.ones(2, 12), atol=1e-6)


def test_equal_relational_attention_gives_equal_output_and_standard_ca_does_not():
    torch.manual_seed(0)
    ca = CrossAttention(6, 2)
    with torch.no_grad():                          # W_q = W_k = I: the attention is a function of x x^T
        ca.q.weight.copy_(torch.eye(6))
        ca.k.weight.copy_(torch.eye(6))
        ca.q.bias.zero_()
        ca.k.bias.zero_()
    # a rotation within each head's 3 coordinates keeps every inner product q . k
    q1, _ = torch.linalg.qr(torch.randn(3, 3))
    q2, _ = torch.linalg.qr(torch.randn(3, 3))
    R = torch.block_diag(q1, q2)
    z1 = torch.randn(1, 5, 6)
    z2 = z1 @ R
    s = torch.randn(1, 5, 6)
    assert torch.allclose(ca.attention(z1), ca.attention(z2), atol=1e-5)
    assert torch.allclose(ca(z1, s)[0], ca(z2, s)[0], atol=1e-5)        # RCA: values from the symbols
    assert not torch.allclose(ca(z1, z1)[0], ca(z2, z2)[0], atol=1e-3)   # standard: values from the features


def test_abstractor_layer_starts_with_tied_query_and_key_and_keeps_symbols_out_of_the_attention():
    torch.manual_seed(1)
    layer = AbstractorLayer(8, 2, 16, relational=True)
    assert torch.equal(layer.cross.q.weight, layer.cross.k.weight)
    z, s1, s2 = torch.randn(2, 4, 8), torch.randn(2, 4, 8), torch.randn(2, 4, 8)
    # the cross-attention pattern reads the features only
    assert torch.allclose(layer(z, s1)[1], layer(z, s2)[1])


def test_abstractor_layer_pre_norms_its_one_feed_forward_as_the_official_code():
    """With both attentions' outputs zeroed, a layer is s -> s1 = s + FF(LN_f(s)) -> s1 + FF(LN_f(s1)): the
    official ``ff = PreNorm(dim, FeedForward)``, one module and one LayerNorm, called twice."""
    torch.manual_seed(2)
    layer = AbstractorLayer(8, 2, 16, relational=True)
    with torch.no_grad():
        for lin in (layer.cross.o, layer.self_attn.out_proj):
            lin.weight.zero_()
            lin.bias.zero_()
        z, s = torch.randn(2, 4, 8), 5 * torch.randn(2, 4, 8)
        s1 = s + layer.ff(layer.norm_ff(s))
        assert torch.allclose(layer(z, s)[0], s1 + layer.ff(layer.norm_ff(s1)), atol=1e-6)
        assert not torch.allclose(layer(z, s)[0], s1 + layer.ff(s1), atol=1e-3)   # not the un-normed FF


def test_context_norm_gives_zero_mean_unit_variance_across_slots():
    v = torch.randn(3, 7, 5) * 4 + 2
    out = context_norm(v, torch.ones(5), torch.zeros(5))
    assert torch.allclose(out.mean(dim=1), torch.zeros(3, 5), atol=1e-5)
    assert torch.allclose(out.var(dim=1, unbiased=True), torch.ones(3, 5), atol=1e-4)
    g, b = torch.full((5,), 2.0), torch.full((5,), -1.0)
    assert torch.allclose(context_norm(v, g, b), 2 * out - 1, atol=1e-5)
    # by hand: [1, 3, 8] has mean 4 and unbiased variance 13
    x = torch.tensor([[[1.0], [3.0], [8.0]]])
    assert torch.allclose(context_norm(x, torch.ones(1), torch.zeros(1)).flatten(),
                          torch.tensor([-3.0, -1.0, 4.0]) / 13 ** 0.5, atol=1e-6)


def test_ari_equals_sklearn_on_hand_made_masks():
    from sklearn.metrics import adjusted_rand_score

    rng = np.random.default_rng(0)
    cases = [(np.array([0, 0, 1, 1, 2, 2]), np.array([1, 1, 0, 0, 2, 2])),       # a relabelling: 1
             (np.array([0, 0, 0, 1, 1, 1]), np.array([0, 0, 1, 1, 2, 2])),
             (np.array([0, 0, 0, 0]), np.array([0, 1, 2, 3])),                   # one true cluster: 0
             (np.array([3, 3, 3]), np.array([1, 1, 1]))]                         # both one cluster: 1
    cases += [(rng.integers(0, 4, 50), rng.integers(0, 3, 50)) for _ in range(5)]
    for t, p in cases:
        assert adjusted_rand_index(t, p) == pytest.approx(adjusted_rand_score(t, p), abs=1e-12)
    # by hand: [0,0,1,1] vs [0,0,0,1]: index 1, a = 2, b = 3, t = 1, ARI = (1 - 1) / (2.5 - 1) = 0
    assert adjusted_rand_index(np.array([0, 0, 1, 1]), np.array([0, 0, 0, 1])) == 0.0
    # FG-ARI ignores the background: masks that split the background but group the objects score 1
    seg = np.array([[[0, 1, 1, 2, 2, 0]]])
    masks = np.zeros((1, 3, 1, 6))
    masks[0, 0, 0, [0, 1, 2]] = 1
    masks[0, 1, 0, [3, 4]] = 1
    masks[0, 2, 0, 5] = 1
    assert fg_ari(seg, masks)[0] == 1.0


def test_factorised_and_oracle_slots_by_hand():
    ae = SlotAutoencoder(size=8, dim=4, n_slots=6, channels=4, enc_layers=1, dec_hidden=4, iters=1, init="learned")
    img = torch.rand(1, 8, 8)
    seg = torch.zeros(1, 8, 8, dtype=torch.long)
    seg[0, 0, :2] = 1                                # object of quadrant 0: two pixels
    seg[0, 7, 7] = 4                                 # object of quadrant 3: one pixel
    f, p = ae.features(img)
    o = oracle_factors(ae, img, seg, 6)
    assert torch.allclose(o.z[0, 0], f[0, :2].mean(0), atol=1e-6)
    assert torch.allclose(o.m[0, 3], p[63], atol=1e-6)
    assert torch.equal(o.z[0, 1], torch.zeros(4)) and torch.equal(o.z[0, 5], torch.zeros(4))
    bg = seg.flatten() == 0
    assert torch.allclose(o.m[0, 4], p[bg].mean(0), atol=1e-6)
    # learned z, m are attention-weighted means of the same f and p
    out = ae(img)
    w = out.attn / out.attn.sum(-1, keepdim=True)
    assert torch.allclose(out.z, w @ f, atol=1e-5) and torch.allclose(out.m, w @ p, atol=1e-5)
    assert torch.allclose(out.masks.sum(1), torch.ones(1, 8, 8), atol=1e-5)


def test_slot_owners_and_relation_attention():
    attn = torch.zeros(1, 3, 4)                     # slot 0 wins pixels 0,1 (object 1), slot 2 wins 2,3 (object 2)
    attn[0, 0, :2] = 1.0
    attn[0, 2, 2:] = 1.0
    own = _owners(attn, torch.tensor([[1, 1, 2, 0]]))
    assert own.tolist() == [[1, 0, 2]]
    a = torch.tensor([[[0.0, 0.5, 0.1, 0.4], [0.5, 0.0, 0.2, 0.3], [0.1, 0.2, 0.0, 0.7], [0.4, 0.3, 0.7, 0.0]]])
    # slots 0,1 shape 5, slot 2 shape 6, slot 3 background: same pairs 0.5, 0.5; different 0.1, 0.2, 0.1, 0.2
    assert relation_attention(a, torch.tensor([[5, 5, 6, -1]])) == pytest.approx(0.5 - 0.15)


def _rule(row) -> tuple[bool, bool, bool]:
    return row[0] == row[1], row[1] == row[2], row[0] == row[2]


@pytest.mark.parametrize("task", art.TASKS)
def test_generators_answers_are_correct_by_construction(task):
    pool = np.arange(3, 40)
    p = art.generate(task, 200, pool, np.random.default_rng(1))
    assert set(np.unique(p.shapes[p.shapes >= 0])) <= set(pool.tolist())
    for sh, a in zip(p.shapes, p.answer):
        if task == "sd":
            assert a == int(sh[0, 0, 0] == sh[0, 0, 1])
        elif task == "rmts":
            rel = [c[0, 0] == c[0, 1] for c in sh]               # source relation (the same in both)
            tgt = [c[0, 2] == c[0, 3] for c in sh]
            assert rel[0] == rel[1] and [t == rel[0] for t in tgt].count(True) == 1 and tgt[a] == rel[0]
        elif task == "dist3":
            good = [sorted(c[1, :3]) == sorted(c[0, :3]) for c in sh]
            assert good.count(True) == 1 and good[a]
        else:
            good = [_rule(c[1, :3]) == _rule(c[0, :3]) and not set(c[1, :3]) & set(c[0, :3]) for c in sh]
            assert good.count(True) == 1 and good[a]
    if task != "sd":
        assert np.bincount(p.answer, minlength=art.N_CANDIDATES[task]).min() > 20   # no positional shortcut


def test_held_out_shapes_never_appear_in_training_problems():
    cfg = dataclasses.replace(TINY, train_problems=300, test_problems=50)
    for task in art.TASKS:
        d = task_data(cfg, 100, task, 95)
        assert len(d.train_shapes) == 5 and len(d.test_shapes) == 95
        assert not set(d.train_shapes) & set(d.test_shapes)
        assert set(np.unique(d.train.shapes[d.train.shapes >= 0])) <= set(d.train_shapes.tolist())
        assert set(np.unique(d.test.shapes[d.test.shapes >= 0])) <= set(d.test_shapes.tolist())
    d0 = task_data(cfg, 100, "id", 0)
    assert len(d0.train_shapes) == 100 and np.array_equal(d0.train_shapes, d0.test_shapes)


def test_one_hundred_distinct_glyphs_and_the_renderer():
    codes = art.glyph_codes()
    assert len(set(codes)) == 100
    g = art.glyphs(art.REF_SIZE)
    d = np.abs(g[:, None] - g[None]).mean(axis=(2, 3))
    np.fill_diagonal(d, 1.0)
    assert d.min() >= art.GLYPH_MIN_DIFF
    s = art.render(np.array([[5, -1, 7, 7]]), 24, 8, 2, np.random.default_rng(0))
    assert sorted(np.unique(s.segments).tolist()) == [0, 1, 3, 4]
    for q in (1, 3, 4):                              # each object stays in its quadrant
        r, c = np.nonzero(s.segments[0] == q)
        assert (r // 12 == (q - 1) // 2).all() and (c // 12 == (q - 1) % 2).all()
    assert s.images.max() <= 1.0 and (s.images[0][s.segments[0] == 0] == 0).all()


def test_slot_cache_reloads_identical_slots(tmp_path):
    ctx = RunContext(cache_dir=tmp_path, code_hash="test")
    ae, pre = slot_model(TINY, ctx)
    ae2, _ = slot_model(TINY, ctx)
    assert all(torch.equal(a, b) for a, b in zip(ae.state_dict().values(), ae2.state_dict().values()))
    assert len(pre.ari) == len(pre.steps) > 0
    d = task_data(TINY, 0, "id", 95)
    first = task_slots(TINY, ctx, ae, 0, "id", 95, d)
    again = task_slots(TINY, ctx, ae, 0, "id", 95, d)
    fresh = task_slots(TINY, RunContext.local(), ae, 0, "id", 95, d)   # recomputed from scratch
    for a, b, c in zip(first, again, fresh):
        for x, y, w in zip(a, b, c):
            assert torch.equal(x, y) and torch.equal(x, w)
    assert len(list(tmp_path.glob("slots-*"))) == 1 and len(list(tmp_path.glob("slot_model-*"))) == 1
    z = first[1].z
    n, C, N, D = z.shape
    assert (C, N) == (4, 2 * TINY.n_slots)
    assert torch.equal(z[:, 0, :TINY.n_slots], z[:, 3, :TINY.n_slots])   # the shared first panel


def test_reasoner_is_invariant_to_the_order_of_slots_within_a_panel():
    torch.manual_seed(0)
    for method in cf.METHODS:
        r = Reasoner(method, 6, 8, 2, 16, 2, panels=2).eval()
        z, m = torch.randn(3, 6, 6), torch.randn(3, 6, 6)
        panel = torch.tensor([0, 0, 0, 1, 1, 1])
        perm = torch.tensor([2, 0, 1, 4, 5, 3])
        assert torch.allclose(r(z, m, panel).score, r(z[:, perm], m[:, perm], panel).score, atol=1e-5), method


def test_untrained_autoencoder_is_deterministic_in_the_pretrain_seed():
    a, b = autoencoder(TINY), autoencoder(TINY)
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))


@pytest.mark.parametrize("override", ["holdouts=100", "n_slots=4", "tasks=abc", "image_size=17", "image_size=12",
                                      "holdouts=97"])
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, override):
    out = run_cli("run", "slot_abstractor", "--preset", "smoke", "--out", str(tmp_path / "runs"), "--set",
                  f"{override}", timeout=120)
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip().startswith("error:") and len(out.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "runs").exists()


def test_a_seed_keeps_example_decompositions_and_the_report_draws_them(tmp_path):
    """The first scenes of the FG-ARI set, as the report's masks figure reads them: the image and the
    reconstruction as 0-255 gray levels, the true objects, the learned slot of each pixel and the scene's
    FG-ARI (whose mean over every scene is the seed's fg_ari)."""
    config = cf.SMOKE
    out = run(config, 0, RunContext(cache_dir=tmp_path, code_hash="test"))
    scenes = out.examples["scenes"]
    assert len(scenes) == min(EXAMPLES, config.ari_images)
    n = config.image_size
    for sc in scenes:
        assert sc["image"].shape == sc["objects"].shape == sc["slot"].shape == sc["recon"].shape == (n, n)
        assert 0 <= sc["image"].min() and sc["image"].max() <= 255 and sc["image"].dtype.kind == "i"
        assert set(np.unique(sc["slot"])) <= set(range(config.n_slots))
        assert -1.0 <= sc["fg_ari"] <= 1.0
    fig = masks_figure({0: out.to_dict()["examples"]["scenes"], 1: scenes}, "oracle")   # JSON and arrays
    assert len(fig.axes) == 2 * 3 * len(scenes)


def test_sd_replicates_average_independent_experiments_and_replicate_zero_is_the_single_run(tmp_path):
    from icml24.papers.slot_abstractor.experiment import _task_stage, train_reasoner

    ctx = RunContext(cache_dir=tmp_path, code_hash="test")
    ae, _ = slot_model(TINY, ctx)
    two = dataclasses.replace(TINY, sd_replicates=2, methods=("abstractor",), steps=6)
    metrics, curves = _task_stage(two, ctx, ae, 0, "sd", 95)
    data = [task_data(two, 0, "sd", 95, r) for r in (0, 1)]
    assert not np.array_equal(data[0].train_shapes, data[1].train_shapes)      # another shape split
    # replicate 0 reads the single run's stream names (no suffix), replicate 1 its own
    assert np.array_equal(data[0].train_shapes, art.split_shapes(two.n_shapes, 95, streams.rng(0, "split", 95))[0])
    assert np.array_equal(data[1].train_shapes,
                          art.split_shapes(two.n_shapes, 95, streams.rng(0, "split", 95, "replicate", 1))[0])
    runs, slots = [], []
    for r, d in enumerate(data):
        train, test = task_slots(two, ctx, ae, 0, "sd", 95, d, r)
        slots.append(train)
        runs.append(train_reasoner(two, "abstractor", "sd", train, d.train.answer, test, d.test.answer, 0, 95, r))
    fresh = task_slots(two, RunContext.local(), ae, 0, "sd", 95, data[1], 1)[0]   # not replicate 0's cached slots
    assert torch.equal(slots[1].z, fresh.z) and not torch.equal(slots[0].z, slots[1].z)
    assert len(list(tmp_path.glob("slots-*"))) == 2
    assert runs[0].loss != runs[1].loss
    assert metrics["acc_abstractor_sd_m95"] == pytest.approx(np.mean([t.test_acc for t in runs]))
    assert metrics["train_acc_min_abstractor_sd_m95"] == min(t.train_acc for t in runs)
    assert curves["loss_abstractor_sd_m95"] == pytest.approx(np.mean([t.loss for t in runs], axis=0).tolist())
    one, _ = _task_stage(dataclasses.replace(two, sd_replicates=1), ctx, ae, 0, "sd", 95)
    assert one["acc_abstractor_sd_m95"] == runs[0].test_acc and "train_acc_min_abstractor_sd_m95" not in one
    other, _ = _task_stage(two, ctx, ae, 0, "id", 95)                 # only sd takes replicates
    assert "train_acc_min_abstractor_id_m95" not in other

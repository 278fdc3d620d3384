"""Pilot (issue 40; development seeds): do the sd training shapes' slot features separate same from different
through their inner products (all that relational cross-attention sees)? For each seed's sd training problems:
the cosine of LN(z) between two object slots of one candidate, same-shape pairs against different-shape pairs,
and its separation d' = (mean same - mean different) / pooled sd. Seeds whose Abstractor stalled (126 at QUICK)
beside those whose did not. Usage: [PRETRAIN=steps] pilot_stall_relations.py SEED... (PRETRAIN: the autoencoder's pretraining steps, QUICK's by
default)"""
import sys
from pathlib import Path

import numpy as np
import torch

from icml24.core.context import RunContext
from icml24.papers.slot_abstractor import experiment as ex
from icml24.papers.slot_abstractor.abstractor import context_norm
from icml24.papers.slot_abstractor.config import QUICK

torch.set_num_threads(1)
ctx = RunContext(cache_dir=Path("runs/_pilot_cache"), code_hash="pilot")
import dataclasses, os
QUICK = dataclasses.replace(QUICK, pretrain_steps=int(os.environ.get("PRETRAIN", QUICK.pretrain_steps)))
ae, _ = ex.slot_model(QUICK, ctx)
for seed in [int(s) for s in sys.argv[1:]]:
    data = ex.task_data(QUICK, seed, "sd", 95)
    train, _ = ex.task_slots(QUICK, ctx, ae, seed, "sd", 95, data)
    z = torch.nn.functional.layer_norm(train.z, train.z.shape[-1:])               # (n, C, S, D)
    zn = z / z.norm(dim=-1, keepdim=True)
    cos = zn @ zn.transpose(-1, -2)                                                 # (n, C, S, S)
    sh = train.shape                                                                # (n, C, S)
    obj = (sh[..., :, None] >= 0) & (sh[..., None, :] >= 0)
    off = ~torch.eye(sh.shape[-1], dtype=torch.bool)
    same = obj & off & (sh[..., :, None] == sh[..., None, :])
    diff = obj & off & (sh[..., :, None] != sh[..., None, :])
    a, b = cos[same].numpy(), cos[diff].numpy()
    dprime = (a.mean() - b.mean()) / np.sqrt((a.var() + b.var()) / 2)
    # per pair of training shapes: the cosine of the two shapes' mean features (how alike the shapes look)
    shapes = data.train_shapes
    means = torch.stack([zn[sh == s].mean(0) for s in shapes])
    mn = means / means.norm(dim=-1, keepdim=True)
    pc = (mn @ mn.T)[~torch.eye(len(shapes), dtype=torch.bool)]
    print(f"seed {seed}: shapes {shapes.tolist()}; cos same {a.mean():.3f} (sd {a.std():.3f}) different "
          f"{b.mean():.3f} (sd {b.std():.3f}); d' {dprime:.2f}; shape-mean cosines max {pc.max():.3f} "
          f"mean {pc.mean():.3f}", flush=True)
    # after the reasoner's context norm across the sequence's slots (gamma 1, beta 0), as RCA's input sees them
    n, C, S, D = train.z.shape
    cz = context_norm(train.z.reshape(n * C, S, D), torch.ones(D), torch.zeros(D)).reshape(n, C, S, D)
    czn = cz / cz.norm(dim=-1, keepdim=True)
    ccos = czn @ czn.transpose(-1, -2)
    a2, b2 = ccos[same].numpy(), ccos[diff].numpy()
    print(f"    after context norm: cos same {a2.mean():.3f} (sd {a2.std():.3f}) different {b2.mean():.3f} "
          f"(sd {b2.std():.3f}); d' {(a2.mean() - b2.mean()) / np.sqrt((a2.var() + b2.var()) / 2):.2f}", flush=True)

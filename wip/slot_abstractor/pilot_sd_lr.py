"""Pilot (issue 40; development seeds only): does the sd Abstractor's stall at chance depend on the learning rate?
QUICK settings, m = 95, the package's train_reasoner (FlatAdam). Usage: [PRETRAIN=steps] pilot_sd_lr.py LR METHOD SEED... (PRETRAIN: the slot
autoencoder's pretraining steps, QUICK's by default; the pretraining pilot of 2026-12-06 ran PRETRAIN=400 and 800)
Prints the training and held-out accuracy per seed, then the stalls (training accuracy below 0.6) and the mean."""
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from icml24.core.context import RunContext
from icml24.papers.slot_abstractor import experiment as ex
from icml24.papers.slot_abstractor.config import QUICK

torch.set_num_threads(1)
ctx = RunContext(cache_dir=Path("runs/_pilot_cache"), code_hash="pilot")     # slot model and slots, built once
lr, method, seeds = float(sys.argv[1]), sys.argv[2], [int(s) for s in sys.argv[3:]]
config = replace(QUICK, lr=lr, pretrain_steps=int(os.environ.get("PRETRAIN", QUICK.pretrain_steps)))
ae, _ = ex.slot_model(config, ctx)
rows = []
for seed in seeds:
    t0 = time.time()
    data = ex.task_data(config, seed, "sd", 95)
    train, test = ex.task_slots(config, ctx, ae, seed, "sd", 95, data)
    t = ex.train_reasoner(config, method, "sd", train, data.train.answer, test, data.test.answer, seed, 95)
    rows.append((t.train_acc, t.test_acc))
    print(f"lr={lr} {method} seed={seed} train={t.train_acc:.3f} test={t.test_acc:.3f} ({time.time() - t0:.0f} s)",
          flush=True)
a = np.array(rows)
print(f"lr={lr} {method}: {int((a[:, 0] < 0.6).sum())} of {len(a)} stall; held-out mean {a[:, 1].mean():.3f}, "
      f"without the stalls {a[a[:, 0] >= 0.6, 1].mean():.3f}")

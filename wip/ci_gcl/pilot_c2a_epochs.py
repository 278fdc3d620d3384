"""C2a's statistic (CI-GCL's inter-community share of the top-20% drop edges minus the graphs' share) and C2b's
(CI-GCL minus the augmenter without spectral losses) on the SBM task against the training length: is QUICK's
12 epochs (48 optimiser steps) too short for the augmenter to settle?

Usage: pilot_c2a_epochs.py EPOCHS,EPOCHS,... RESTARTS SEED... (development seeds only)
"""
import sys
import time
from dataclasses import replace

import numpy as np
import torch

from icml24.core import streams
from icml24.papers.ci_gcl import data
from icml24.papers.ci_gcl.experiment import QUICK, drop_precision, train
from icml24.papers.ci_gcl.model import precompute

torch.set_num_threads(1)
epochs = [int(e) for e in sys.argv[1].split(",")]
restarts, seeds = int(sys.argv[2]), [int(s) for s in sys.argv[3:]]
for seed in seeds:
    g = data.sbm_dataset(streams.rng(seed, "sbm_graphs"), QUICK.sbm_graphs, (QUICK.sbm_min_nodes, QUICK.sbm_max_nodes),
                         QUICK.sbm_degree, QUICK.sbm_ratio, signal=QUICK.sbm_signal)
    g = data.scale_features(g)
    pre = precompute(g.A, g.X, g.mask, QUICK.k, data.featureless(g))
    for ep in epochs:
        c = replace(QUICK, epochs=ep)
        out = {}
        t0 = time.perf_counter()
        for method in ("cigcl", "learned"):
            vals = []
            for r in range(restarts):
                torch.manual_seed(streams.int_seed(seed, "sbm", "init", r))
                t = train(method, g, pre, c, streams.torch_generator(seed, "sbm", "training", r))
                prec, base = drop_precision(t.augmenter, g, pre, c.drop_top, g.community)
                vals.append(prec - base)
            out[method] = np.array(vals)
        print(f"seed {seed} epochs {ep:3d} ({time.perf_counter() - t0:.0f} s): C2a per restart "
              f"{np.round(out['cigcl'], 3)} mean {out['cigcl'].mean():+.3f}; C2b per restart "
              f"{np.round(out['cigcl'] - out['learned'], 3)}", flush=True)

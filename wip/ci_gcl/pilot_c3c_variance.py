"""Pilot (issue 34; development seeds only): how much of C3c's seed-to-seed spread is the probe's (fold partitions and
noisy copies) and how much the encoders'? Per seed: QUICK's MUTAG encoders (cigcl, graphcl; 2 restarts, as QUICK),
then the probe on 8 fold partitions and 8 noisy copies; prints C3c's statistic on disjoint probe subsets of
QUICK's size (2 partitions, 3 copies) and on all of them. Usage: pilot_c3c_variance.py SEED..."""
import sys, time
import numpy as np, torch
torch.set_num_threads(1)
from dataclasses import replace
from icml24.core import streams
from icml24.papers.ci_gcl import data, experiment as ex
from icml24.papers.ci_gcl.config import QUICK
from icml24.papers.ci_gcl.model import precompute

R, D = 8, 8
for seed in [int(s) for s in sys.argv[1:]]:
    t0 = time.time()
    g = data.scale_features(data.mutag_dataset())
    pre = precompute(g.A, g.X, g.mask, QUICK.k, data.featureless(g))
    rng = np.random.default_rng([seed, 34])
    fold = np.stack([ex.folds(g.y, QUICK.folds, rng) for _ in range(R)])
    noisy = [data.edge_noise(g, QUICK.noise / 2, rng) for _ in range(D)]
    cfg = replace(QUICK, epochs=QUICK.tu_epochs)
    drop = {}   # method -> (restarts, R, D) clean minus noisy accuracy, per partition and copy
    for method in ("cigcl", "graphcl"):
        per = []
        for r in range(QUICK.restarts):
            torch.manual_seed(streams.int_seed(seed, "mutag", "init", r))
            enc = ex.train(method, g, pre, cfg, streams.torch_generator(seed, "mutag", "training", r)).encoder
            clean = np.array([ex.probe(ex._embed(enc, g), g.y, fold[p]) for p in range(R)])              # (R,)
            nz = np.array([[ex.probe(ex._embed(enc, gn), g.y, fold[p]) for gn in noisy] for p in range(R)])  # (R, D)
            per.append(clean[:, None] - nz)
        drop[method] = np.stack(per)
    diff = drop["graphcl"] - drop["cigcl"]                      # (restarts, R, D): C3c per encoder pair, partition, copy
    subsets = [diff[:, 2 * i:2 * i + 2, 3 * i:3 * i + 3].mean() for i in range(2)] + \
              [diff[:, 4:6, 6:8].mean(), diff[:, 6:8, 0:3].mean()]
    print(f"seed={seed} c3c_all={diff.mean():+.4f} quick_size_subsets={' '.join(f'{v:+.4f}' for v in subsets)} "
          f"restart0={diff[0].mean():+.4f} restart1={diff[1].mean():+.4f} ({time.time() - t0:.0f}s)", flush=True)

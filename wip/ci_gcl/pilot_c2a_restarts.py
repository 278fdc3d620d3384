"""C2a's statistic per restart on the SBM task (QUICK's design), to split its seed-to-seed spread into the part
between restarts (the augmenter's initialisation and draws) and the part between seeds (the graphs).

Usage: pilot_c2a_restarts.py RESTARTS SEED... (development seeds, outside the claim and held-out seeds)
"""
import sys

import numpy as np
import torch

from icml24.core import streams
from icml24.papers.ci_gcl import data
from icml24.papers.ci_gcl.experiment import QUICK, drop_precision, train
from icml24.papers.ci_gcl.model import precompute

torch.set_num_threads(1)
restarts, seeds = int(sys.argv[1]), [int(s) for s in sys.argv[2:]]
c = QUICK
rows = []
for seed in seeds:
    g = data.sbm_dataset(streams.rng(seed, "sbm_graphs"), c.sbm_graphs, (c.sbm_min_nodes, c.sbm_max_nodes),
                         c.sbm_degree, c.sbm_ratio, signal=c.sbm_signal)
    g = data.scale_features(g)
    pre = precompute(g.A, g.X, g.mask, c.k, data.featureless(g))
    vals = []
    for r in range(restarts):
        torch.manual_seed(streams.int_seed(seed, "sbm", "init", r))
        t = train("cigcl", g, pre, c, streams.torch_generator(seed, "sbm", "training", r))
        prec, base = drop_precision(t.augmenter, g, pre, c.drop_top)
        vals.append(prec - base)
    rows.append(vals)
    print(seed, np.round(vals, 3), flush=True)
a = np.array(rows)                                    # (seeds, restarts)
within = a.var(1, ddof=1).mean()
total_of_means2 = a[:, :2].mean(1).var(ddof=1)
print(f"within-seed (restart) variance {within:.5f}; variance of 2-restart means over seeds {total_of_means2:.5f}; "
      f"between-seed part {max(total_of_means2 - within / 2, 0):.5f}")
for R in (2, 3, 4, 6):
    print(f"expected sd of the per-seed mean at {R} restarts: "
          f"{np.sqrt(max(total_of_means2 - within / 2, 0) + within / R):.4f}")

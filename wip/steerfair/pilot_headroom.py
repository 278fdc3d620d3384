"""Pilot (development seeds 100+, outside the claim seeds 0-7 and held-out 1000-1007): does model (a) get
headroom (right at B and C when trained longer / with less Zipf skew) and does SteerFair's accuracy change
(C1b) then? Usage: python pilot_headroom.py zipf steps bias seed [seed ...]"""
import sys
import time
from dataclasses import replace

import torch

from icml24.papers.steerfair.config import QUICK
from icml24.papers.steerfair.experiment import small_stage

torch.set_num_threads(1)
zipf, steps, bias = float(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
cfg = replace(QUICK, zipf=zipf, steps=steps, bias=bias, llm=False)
for seed in map(int, sys.argv[4:]):
    t = time.time()
    m = small_stage(cfg, seed).metrics
    print(f"zipf {zipf} steps {steps} bias {bias} seed {seed}: loss {m['train_loss']:.3f} "
          + " ".join(f"{tag}: acc {m[f'acc_mean_{tag}']:.3f} std {m[f'acc_std_{tag}']:.3f} "
                     f"pos {m[f'acc_pos0_{tag}']:.2f}/{m[f'acc_pos1_{tag}']:.2f}/{m[f'acc_pos2_{tag}']:.2f}"
                     for tag in ("none", "steerfair", "random", "sf_oracle_sign", "iti500"))
          + f" cos {m['cos_steerfair']:.2f} ({time.time() - t:.0f} s)", flush=True)

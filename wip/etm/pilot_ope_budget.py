"""Pilot (development seeds only; not run by any test): etm's policy-evaluation stage (claim C2) at more
optimiser steps, every model at the same steps (matched sample-gradients). Usage:
    pilot_ope_budget.py STEPS SEED [SEED ...]
Prints, per seed, each model's held-out one-step MSE curve end, normalised absolute error and Spearman, and the
ETM-minus-ensemble differences the claims read (C2a: ftm - etm abs error; C2b: etm - ftm Spearman)."""
import dataclasses
import sys
import time

import torch

from icml24.core.context import RunContext
from icml24.papers.etm.config import QUICK
from icml24.papers.etm.experiment import ope_stage

torch.set_num_threads(1)
steps = int(sys.argv[1])
cfg = dataclasses.replace(QUICK, steps=steps, eval_every=max(100, steps // 8))
for seed in map(int, sys.argv[2:]):
    t0 = time.time()
    out = ope_stage(cfg, seed, RunContext.local())
    m, c = out.metrics, out.curves
    print(f"steps {steps} seed {seed}: {time.time() - t0:.0f} s; one-step mse etm {m['ope_step_mse_etm']:.4f} "
          f"ftm {m['ope_step_mse_ftm']:.4f} mlp {m['ope_step_mse_mlp']:.4f}; etm curve "
          f"{[round(v, 4) for v in c['ope_curve_etm']]}; abs etm {m['ope_abs_error_etm']:.3f} ftm "
          f"{m['ope_abs_error_ftm']:.3f} mlp {m['ope_abs_error_mlp']:.3f}; spearman etm {m['ope_spearman_etm']:.3f} "
          f"ftm {m['ope_spearman_ftm']:.3f} mlp {m['ope_spearman_mlp']:.3f}; C2a {m['ope_abs_error_ftm'] - m['ope_abs_error_etm']:+.3f} "
          f"C2b {m['ope_spearman_etm'] - m['ope_spearman_ftm']:+.3f}", flush=True)

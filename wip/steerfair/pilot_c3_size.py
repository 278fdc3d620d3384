"""Pilot for issue 33's C3 sizes (2026-12-06): whole seeds (parts (a) and (b)) on development seeds, outside the
claim seeds 0-7 and the held-out seeds 1000-1007, at 200 test, 200 unlabelled and 50 held-out questions per seed
with the shared-prefix prompt cache and 64 prompts a batch; run one process per seed, two at a time, as QUICK's
workers do. Prints the seconds a seed and part (b)'s numbers (C3 = random minus SteerFair imbalance)."""

import sys
import time
from pathlib import Path
from dataclasses import replace

import torch

from icml24.core.context import RunContext
from icml24.papers.steerfair import experiment
from icml24.papers.steerfair.config import QUICK

torch.set_num_threads(1)
config = replace(QUICK, llm_test=200, llm_unlabelled=200, llm_heldout=50, llm_batch=64)
seed = int(sys.argv[1])
ctx = RunContext(cache_dir=Path("/tmp/sfcache"))            # SmolLM2 converted once, as in a run
t = time.perf_counter()
m = experiment.run(config, seed, ctx).metrics
print(f"seed {seed}: {time.perf_counter() - t:.1f} s  alpha {m['llm_alpha']}  share_a none/sf/random "
      f"{m['llm_share_a_none']:.3f}/{m['llm_share_a_steerfair']:.3f}/{m['llm_share_a_random']:.3f}  "
      f"C3 {m['llm_imbalance_random'] - m['llm_imbalance_steerfair']:+.3f}  acc none/sf "
      f"{m['llm_acc_none']:.3f}/{m['llm_acc_steerfair']:.3f}", flush=True)

"""Pilot of C2a's spread on development seeds: how much of it is which test videos were drawn?

Trains the C2 pair (tpm, tpm_nontp) on the package's held-out split (QUICK's design), scores both on N_TEST
test videos near the held-out tokens, and splits C2a's per-seed difference (mIoU with NTP minus without) into
the test-sampling part (disjoint subsets of QUICK's 300 videos within a seed) and the rest.

    python wip/momentor/pilot_c2a_testsize.py N_TEST [--paired] SEED [SEED ...]

--paired: both arms start from the same initial weights (tpm's initialisation stream), so NTP is the only
difference between them.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import torch

from icml24.core import streams
from icml24.papers.momentor import data, experiment
from icml24.papers.momentor.config import QUICK
from icml24.papers.momentor.model import Vocab, generate, query_prompts, read_span

torch.set_num_threads(1)
paired = "--paired" in sys.argv
n_test, seeds = int(sys.argv[1]), [int(s) for s in sys.argv[2:] if s != "--paired"]
config = QUICK.__class__(**{**QUICK.__dict__, "n_test": n_test})
rows = []
for seed in seeds:
    t0 = time.time()
    protos = data.prototypes(streams.rng(seed, "prototypes"), experiment.engine(config))
    split, held = experiment.heldout_split(config, seed, protos)
    vocab = Vocab(config.event_types)
    ious = {}
    for method in ("tpm", "tpm_nontp"):
        model = experiment.make_model(method, vocab.size, split.train.frames.shape[2], config.n_t_coarse, config,
                                      streams.torch_generator(seed, "init", "heldout", "tpm" if paired else method))
        enc = experiment.encode_queries(method, vocab, split.train, split.train_q, config.n_t_coarse)
        frames = torch.from_numpy(split.train.frames[split.train_q.video])
        experiment.fit(model, frames, enc, config.steps, config.batch, config.lr, config.weight_decay,
                       streams.torch_generator(seed, "batches", "heldout"))
        q = split.tests["when"]
        gen = generate(model, vocab, torch.from_numpy(split.test.frames[q.video]),
                       query_prompts(method, vocab, split.test, q, config.n_t_coarse), ["time", "time"])
        spans = np.array([read_span(method, vocab, g, float(split.test.duration[v]), config.n_t_coarse)
                          for g, v in zip(gen, q.video)])
        ans = data.answers(split.test, q)
        ious[method] = np.nan_to_num(data.iou(spans[:, 0], spans[:, 1], ans.start, ans.end))
    d = ious["tpm"] - ious["tpm_nontp"]                                  # (n_test,) paired per video
    subs = d[: len(d) // 300 * 300].reshape(-1, 300).mean(1)             # disjoint QUICK-sized test sets
    rows.append((d.mean(), subs))
    print(f"seed {seed}: C2a on {len(d)} videos {d.mean():+.4f} (mIoU NTP {ious['tpm'].mean():.3f}, no-NTP "
          f"{ious['tpm_nontp'].mean():.3f}); on {len(subs)} subsets of 300: {np.round(subs, 4)} (sd "
          f"{subs.std(ddof=1):.4f}) ({time.time() - t0:.0f} s)", flush=True)
within = np.mean([s.var(ddof=1) for _, s in rows])
means = np.array([m for m, _ in rows])
print(f"test-sampling variance at 300 videos {within:.6f} (sd {np.sqrt(within):.4f}); variance of the seeds' "
      f"{n_test}-video means {means.var(ddof=1):.6f} (sd {means.std(ddof=1):.4f}); mean over seeds {means.mean():+.4f}")

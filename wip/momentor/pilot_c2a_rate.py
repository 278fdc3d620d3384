"""Pilot of C2 on rarely trained tokens: the paired C2 pair (both arms from tpm's initial weights) at several
``heldout_rate`` values (the share of the training queries near a held-out token that are kept), on development
seeds. Prints, per seed and rate, how many training queries touch a held-out token, the mIoU near the held-out
tokens with and without NTP (C2a's two sides) and C2b's update cosines.

    python wip/momentor/pilot_c2a_rate.py RATE,RATE,... SEED [SEED ...]
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace

import numpy as np
import torch

from icml24.core import streams
from icml24.papers.momentor import data, experiment
from icml24.papers.momentor.config import QUICK
from icml24.papers.momentor.model import Vocab

torch.set_num_threads(1)
rates = [float(r) for r in sys.argv[1].split(",")]
seeds = [int(s) for s in sys.argv[2:]]
for seed in seeds:
    for rate in rates:
        t0 = time.time()
        config = replace(QUICK, heldout_rate=rate)
        protos = data.prototypes(streams.rng(seed, "prototypes"), experiment.engine(config))
        split, held = experiment.heldout_split(config, seed, protos)
        ans = data.answers(split.train, split.train_q)
        g = config.n_t_coarse - 1
        near = np.zeros(len(ans.start), bool)
        for h in held:                                             # a timestamp within one token of a held-out one
            near |= (np.abs(ans.start * g - h) < 1) | (np.abs(ans.end * g - h) < 1)
        vocab = Vocab(config.event_types)
        out = {}
        for method in ("tpm", "tpm_nontp"):
            done = experiment.train_and_score(method, split, vocab, config.n_t_coarse, config, seed, "heldout", "cpu",
                                              "tpm")
            moved = torch.from_numpy(done.E_out - done.E_out_init)
            out[method] = (done.scores.metrics["miou"], experiment.neighbour_cosine(moved, torch.from_numpy(held)))
        print(f"seed {seed} rate {rate:.4f}: {near.sum()} of {len(near)} training queries near a held-out token; "
              f"mIoU NTP {out['tpm'][0]:.3f} no-NTP {out['tpm_nontp'][0]:.3f} C2a {out['tpm'][0] - out['tpm_nontp'][0]:+.4f}; "
              f"update cos {out['tpm'][1]:.3f} / {out['tpm_nontp'][1]:.3f} ({time.time() - t0:.0f} s)", flush=True)

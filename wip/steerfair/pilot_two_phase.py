"""Pilot (development seeds 100+): a model that knows the content but is biased in where it puts the answer.
Phase 1 trains on unbiased questions (gold at a uniform position) for the config's steps; phase 2 fine-tunes
on questions with the gold at A with probability ``bias2`` for ``steps2`` steps at ``lr2``. Does SteerFair
then raise accuracy (C1b)? Usage: python pilot_two_phase.py bias2 steps2 lr2 seed [seed ...]"""
import os
import sys
import time
from dataclasses import replace

import numpy as np
import torch

from icml24.papers.steerfair import experiment, task
from icml24.papers.steerfair.config import QUICK
from icml24.papers.steerfair.model import train as train_once

torch.set_num_threads(1)
bias2, steps2, lr2 = float(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
cfg = replace(QUICK, bias=1 / 3, llm=False, alpha=float(os.environ.get("ALPHA", QUICK.alpha)))
sample_once = task.sample


def sample(rng, n, vocab, category, weights, bias):
    if bias is None:
        return sample_once(rng, n, vocab, category, weights, bias)
    a = sample_once(rng, n, vocab, category, weights, bias)              # phase 1: unbiased
    b = sample_once(rng, n, vocab, category, weights, bias2)             # phase 2: gold at A with prob bias2
    return task.Questions(*(np.concatenate([x, y]) for x, y in zip(a, b)))


def train(model, seqs, answer_from, steps, batch, lr, gen, device="cpu"):
    half = len(seqs) // 2
    log1 = train_once(model, seqs[:half], answer_from, steps, batch, lr, gen, device)
    log2 = train_once(model, seqs[half:], answer_from, steps2, batch, lr2, gen, device)
    return type(log1)(log1.loss + log2.loss)


experiment.task.sample = sample
experiment.train = train
for seed in map(int, sys.argv[4:]):
    t = time.time()
    m = experiment.small_stage(cfg, seed).metrics
    print(f"alpha {cfg.alpha} bias2 {bias2} steps2 {steps2} lr2 {lr2} seed {seed}: "
          + " ".join(f"{tag}: acc {m[f'acc_mean_{tag}']:.3f} std {m[f'acc_std_{tag}']:.3f} "
                     f"pos {m[f'acc_pos0_{tag}']:.2f}/{m[f'acc_pos1_{tag}']:.2f}/{m[f'acc_pos2_{tag}']:.2f}"
                     for tag in ("none", "steerfair", "random", "sf_oracle_sign", "iti500"))
          + f" cos {m['cos_steerfair']:.2f} ({time.time() - t:.0f} s)", flush=True)

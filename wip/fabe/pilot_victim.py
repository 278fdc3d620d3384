"""Pilot, part 2: victims trained on the pool (development seeds 100-101) scored on the pilot's clean rewrites."""
import json, time
import numpy as np, torch
torch.set_num_threads(1)
from icml24.core.streams import rng, torch_generator
from icml24.papers.fabe import data, defense
from icml24.papers.fabe.victim import train
from icml24.papers.fabe.config import QUICK as C
from icml24.papers.fabe.experiment import SPLIT_SEED
sp = data.split(data.snippets(), C.min_words, C.max_words, C.dev, C.test_clean, rng(SPLIT_SEED, "split"))
P = json.load(open("wip/fabe/pilot_out.json"))
for seed in (100, 101):
    for a in C.attacks:
        t0 = time.time()
        pz = data.poison_training(sp.pool, a, C.poison_rate, 1, rng(seed, "poison", a))
        v, log = train(pz.text, pz.label, C.ngrams, C.buckets, C.dim, C.epochs, C.batch, C.lr, torch_generator(seed, "victim", a))
        dt = time.time() - t0
        pen = 1.0 if a == "syntactic" else 0.1
        c = P[f"clean_{pen}"]; y = np.array(c["labels"])
        lc = v.logits([t for row in c["texts"] for t in row]).reshape(len(y), -1, 2)
        f = defense.fabe_logits(lc, np.array(c["scores"])).argmax(1)
        none = v.logits(c["inputs"]).argmax(1)
        dev_rot = [t for t, l in zip(sp.dev.text, sp.dev.label) if l == 0][8:40]
        r = np.random.default_rng(1)
        asr = np.mean(v.logits([data.poison(t, a, r) for t in dev_rot]).argmax(1) == 1)
        print(f"seed {seed} {a}: train {dt:.1f}s acc {log.accuracy:.3f}; dev ASR_none {asr:.2f}; clean acc none {np.mean(none == y):.2f} "
              f"fabe {np.mean(f == y):.2f} k1 {np.mean(lc[:, 0].argmax(1) == y):.2f}; floor {np.mean(f[y == 0] == 1):.2f} (none {np.mean(none[y == 0] == 1):.2f})", flush=True)

"""Pilot on development snippets (outside every run's test set and training pool): timing, trigger survival,
fidelity, ASR floor. Usage: python wip/fabe/pilot.py N_PER_ATTACK"""
import sys, time, json
from pathlib import Path
import numpy as np, torch
torch.set_num_threads(1)
from icml24.common import llm
from icml24.core.context import RunContext
from icml24.core.streams import rng
from icml24.papers.fabe import data, defense
from icml24.papers.fabe.config import QUICK as C

n = int(sys.argv[1]) if len(sys.argv) > 1 else 8
sp = data.split(data.snippets(), C.min_words, C.max_words, C.dev, C.test_clean, rng(0, "fabe-split"))
dev = sp.dev
r = np.random.default_rng(12345)
rot = [t for t, y in zip(dev.text, dev.label) if y == 0][:n]
fresh = [t for t, y in zip(dev.text, dev.label) if y == 1][:n]
t0 = time.time()
ctx = RunContext(cache_dir=Path("runs/_cache/fabe_pilot"), code_hash="pilot")
lm0 = llm.smollm2(ctx)
lm = defense.hf_text_lm(lm0.model, lm0.tokenizer)
print("load", round(time.time() - t0, 1), "s", flush=True)
out = {}
for attack, pen in zip(C.attacks, C.diversity):
    pois = [data.poison(t, attack, r) for t in rot]
    t0 = time.time()
    rw = defense.rewrite(lm, pois, C.prompt, C.groups, 1, pen, C.length_factor, 1.0, C.gen_batch)
    dt = time.time() - t0
    surv = np.array([[data.has_trigger(x, attack) for x in row] for row in rw.text])
    print(f"{attack}: {dt:.1f} s for {len(pois)} inputs; survival all-K {surv.mean():.2f}, group0 {surv[:, 0].mean():.2f}; fallback {rw.fallback.mean():.2f}", flush=True)
    w = defense.softmax(rw.scores)
    print("  weights mean max", w.max(1).mean().round(3), "scores", rw.scores[0].round(3))
    for i in range(3):
        print("  IN :", pois[i]); [print(f"  {w[i, j]:.2f}:", rw.text[i][j]) for j in range(len(rw.text[i]))]
    out[attack] = dict(time=dt, n=len(pois), survival=float(surv.mean()), survival_g0=float(surv[:, 0].mean()))
t0 = time.time()
for pen in sorted(set(C.diversity)):
    rw = defense.rewrite(lm, rot + fresh, C.prompt, C.groups, 1, pen, C.length_factor, 1.0, C.gen_batch)
    out[f"clean_{pen}"] = dict(time=time.time() - t0, texts=rw.text, scores=rw.scores.tolist(), labels=[0] * n + [1] * n,
                                 inputs=rot + fresh)
    print(f"clean pen {pen}: {time.time() - t0:.1f} s", flush=True)
    t0 = time.time()
t0 = time.time()
on = defense.onion_filter(lm, [data.poison(t, "badnets", r) for t in rot[:4]], 0.0, 32)
print("onion 4 inputs", round(time.time() - t0, 1), "s"); [print("  ", x) for x in on.text]
Path("wip/fabe/pilot_out.json").write_text(json.dumps(out, indent=1))

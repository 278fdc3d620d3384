"""Pilot (development seeds 100-101; not run by any test): seiko's digits domain with a rare class as the optimum.

The eps-MLP (3 x 256) is pretrained on sklearn's digits with class RARE kept at KEEP examples (the others whole), so
its samples are rarely that digit. Reward r(x) = max(p(RARE | x), DECOY * p(DECOYCLASS | x)) from a logistic
regression (C = 100) trained on all 1,797 digits: valid digits reach the optimum (a confident RARE scores about 1),
and a surrogate fitted on the pretrained samples sees mostly the decoy class. Validity as in pilot_digits_loop.py
(classifier max prob > 0.9 and the 16-component PCA error below the real digits' 99th percentile), on the samples
clamped to [-1, 1]; xhat_0 clamped at 1. Usage:
    pilot_digits_rare.py RARE KEEP DECOYCLASS DECOY BETA ALPHA [methods]
"""
import sys
import time

import numpy as np
import torch
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression

from icml24.common.ddim import ddim_timesteps
from icml24.common.diffusion import EpsMLP, linear_schedule
from icml24.papers.seiko import config as cf
from icml24.papers.seiko.experiment import loop_config, pretrain
from icml24.papers.seiko.finetune import Sampler
from icml24.papers.seiko.loop import Domain, online

torch.set_num_threads(1)
RARE, KEEP, DECOYCLASS = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
DECOY, BETA, ALPHA = float(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
METHODS = sys.argv[7].split(",") if len(sys.argv) > 7 else ["ucb", "greedy", "nonadaptive", "nokl"]
d = load_digits()
X, y = d.data / 8.0 - 1.0, d.target
clf = LogisticRegression(C=100, max_iter=3000).fit(X, y)
pca = PCA(16).fit(X)
ae_err = lambda Z: ((pca.inverse_transform(pca.transform(Z)) - Z) ** 2).mean(1)
thr = np.quantile(ae_err(X), 0.99)


def proba(x: torch.Tensor) -> np.ndarray:
    return clf.predict_proba(x.detach().clamp(-1, 1).numpy().astype(np.float64))


def reward(x: torch.Tensor) -> torch.Tensor:
    p = proba(x)
    return torch.tensor(np.maximum(p[:, RARE], DECOY * p[:, DECOYCLASS]), dtype=torch.float32)


def valid(x: torch.Tensor) -> torch.Tensor:
    z = x.detach().clamp(-1, 1).numpy().astype(np.float64)
    return torch.tensor((clf.predict_proba(z).max(1) > 0.9) & (ae_err(z) < thr))


def near(x: torch.Tensor) -> torch.Tensor:
    return valid(x) & torch.tensor(proba(x).argmax(1) == RARE)


# pretraining on the skewed set (seeded; cached per RARE, KEEP)
path = f"/tmp/digits_rare_{RARE}_{KEEP}.pt"
keep = np.flatnonzero(y != RARE)
keep = np.concatenate([keep, np.flatnonzero(y == RARE)[:KEEP]])
sched = linear_schedule(1000)
model = EpsMLP(64, 256, 3, 32)
try:
    model.load_state_dict(torch.load(path))
except FileNotFoundError:  # seiko's own pretraining (L_simple, cosine decay, EMA 0.995), on the kept digits
    t0 = time.time()
    model.load_state_dict(pretrain(cf.Config(dim=64), torch.tensor(X[keep], dtype=torch.float32)))
    print(f"pretrained on {len(keep)} digits ({KEEP} of class {RARE}) in {time.time() - t0:.0f} s", flush=True)
    torch.save(model.state_dict(), path)
model.requires_grad_(False).eval()
Xt = torch.tensor(X, dtype=torch.float32)
rv, vv = reward(Xt), valid(Xt)
probe = Xt[torch.tensor(y == RARE)][:64]
dom = Domain(reward, valid, near, probe, float(rv[vv].max()), float(rv[vv].min()), 64)
sampler = Sampler(sched, ddim_timesteps(1000, 30, end=1), 1.0, 1.0)
xs = sampler.sample(model, 1000, torch.Generator().manual_seed(0))
labels = np.bincount(proba(xs).argmax(1), minlength=10)
print(f"real digits: best valid reward {dom.best:.3f}; pretrained: reward {float(reward(xs).mean()):.3f} valid "
      f"{float(valid(xs).float().mean()):.3f} near {float(near(xs).float().mean()):.3f} labels {labels.tolist()}",
      flush=True)
cfg = cf.Config(beta=BETA, alpha=ALPHA)
for seed in (100, 101):
    for method in METHODS:
        t0 = time.time()
        out = online(model, sampler, dom, loop_config(cfg, method), lambda name: seed * 1000 + hash(name) % 1000,
                     np.random.default_rng(seed), torch.Generator().manual_seed(seed))
        x = out.samples
        print(f"seed {seed} {method:12s} reward {float(reward(x).mean()):.3f} valid {float(valid(x).float().mean()):.3f} "
              f"near {float(near(x).float().mean()):.3f} query_near {[round(v, 2) for v in out.log.query_near]} "
              f"labels {np.bincount(proba(x).argmax(1), minlength=10).tolist()} {time.time() - t0:.0f} s", flush=True)

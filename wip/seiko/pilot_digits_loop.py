"""Pilot (development seeds 100-101; not run by any test): SEIKO's loop on sklearn's 8x8 digits with a decoy reward.

r(x) = max(ink_A(x), decoy * ink_B(x)): region A (the left edge, rows 2-5, columns 0-1) is inked by few digits,
region B (the centre 4 x 4) by many, so a surrogate fitted on the pretrained model's samples sees mostly the decoy.
Validity: a logistic-regression classifier (C = 100) gives max prob > 0.9 and a 16-component PCA reconstructs
the digit within the 99th percentile of the real digits' error. Usage: pilot_digits_loop.py EPS_PT [decoy] [beta] [clip] [alpha]
(EPS_PT from pilot_digits.py: an eps-MLP 3 x 256 on the digits in [-1, 1]).
"""
import sys, time
import numpy as np, torch
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.decomposition import PCA
from icml24.common.diffusion import EpsMLP, linear_schedule
from icml24.common.ddim import ddim_timesteps
from icml24.papers.seiko import config as cf
from icml24.papers.seiko.experiment import loop_config
from icml24.papers.seiko.finetune import Sampler
from icml24.papers.seiko.loop import Domain, online

torch.set_num_threads(1)
path = sys.argv[1]
decoy = float(sys.argv[2]) if len(sys.argv) > 2 else 0.7
beta = float(sys.argv[3]) if len(sys.argv) > 3 else 0.7
CLIP = float(sys.argv[4]) if len(sys.argv) > 4 else 3.0    # the clamp of xhat_0 (seiko: 3; the data: [-1, 1])
d = load_digits(); X = d.data / 8.0 - 1.0
clf = LogisticRegression(C=100, max_iter=3000).fit(X, d.target)
pca = PCA(16).fit(X)
ae_err = lambda Z: ((pca.inverse_transform(pca.transform(Z)) - Z) ** 2).mean(1)
thr = np.quantile(ae_err(X), 0.99)
A = np.zeros(64, bool); B = np.zeros(64, bool)
for r in range(2, 6):
    A[r * 8: r * 8 + 2] = True
    B[r * 8 + 2: r * 8 + 6] = True
At, Bt = torch.tensor(A), torch.tensor(B)
ink = lambda x, m: ((x.clamp(-1, 1) + 1) / 2)[:, m].mean(1)
reward = lambda x: torch.maximum(ink(x, At), decoy * ink(x, Bt))
def valid(x):
    z = x.detach().clamp(-1, 1).numpy().astype(np.float64)          # the image: samples clamped to the pixel range
    return torch.tensor((clf.predict_proba(z).max(1) > 0.9) & (ae_err(z) < thr))
Xt = torch.tensor(X, dtype=torch.float32)
rv = reward(Xt); vv = valid(Xt)
qA = float(torch.quantile(ink(Xt, At), 0.9))
near = lambda x: valid(x) & (ink(x, At) > qA)
probe = Xt[torch.argsort(ink(Xt, At), descending=True)[:64]]
dom = Domain(reward, valid, near, probe, float(rv[vv].max()), float(rv[vv].min()), 64)
print(f"real digits: reward median {float(rv.median()):.3f}, best valid {dom.best:.3f}, share with ink_A > decoy ink_B "
      f"{float((ink(Xt, At) > decoy * ink(Xt, Bt)).float().mean()):.3f}, near share {float(near(Xt).float().mean()):.3f}")
model = EpsMLP(64, 256, 3, 32); model.load_state_dict(torch.load(path)); model.requires_grad_(False).eval()
sampler = Sampler(linear_schedule(1000), ddim_timesteps(1000, 30, end=1), 1.0, CLIP)
xs = sampler.sample(model, 1000, torch.Generator().manual_seed(0))
print(f"pretrained: reward {float(reward(xs).mean()):.3f} valid {float(valid(xs).float().mean()):.3f} near {float(near(xs).float().mean()):.3f}")
METHODS = sys.argv[6].split(",") if len(sys.argv) > 6 else ["ucb", "greedy", "nonadaptive", "nokl"]
ALPHA = float(sys.argv[5]) if len(sys.argv) > 5 else 3.0   # UCB bonus weight (the circle: 3)
cfg = cf.Config(beta=beta, alpha=ALPHA)
for seed in (100, 101):
    for method in METHODS:
        t0 = time.time()
        out = online(model, sampler, dom, loop_config(cfg, method), lambda name: seed * 1000 + hash(name) % 1000,
                     np.random.default_rng(seed), torch.Generator().manual_seed(seed))
        x = out.samples
        z = x.clamp(-1, 1).numpy().astype(np.float64)
        print(f"   classifier > 0.9 {(clf.predict_proba(z).max(1) > 0.9).mean():.3f}, PCA error below the 99th percentile "
              f"{(ae_err(z) < thr).mean():.3f}, pixels outside [-1.1, 1.1] {(np.abs(z) > 1.1).mean():.3f}")
        print(f"seed {seed} {method:12s} reward {float(reward(x).mean()):.3f} valid {float(valid(x).float().mean()):.3f} "
              f"near {float(near(x).float().mean()):.3f} query_near {[round(v, 2) for v in out.log.query_near]} {time.time() - t0:.0f} s",
              flush=True)

"""Pilot of seiko's digits domain (development seeds only): is the pretrained DDPM valid, and where is the ink?"""
import sys, time, math, copy, json
import numpy as np, torch
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.decomposition import PCA
from icml24.common.diffusion import EpsMLP, ddpm_loss, linear_schedule
from icml24.common.ddim import ddim_timesteps, ddim_sample

torch.set_num_threads(1)
hidden, layers, steps = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
d = load_digits()
X = d.data / 8.0 - 1.0
y = d.target
clf = LogisticRegression(C=float(sys.argv[4]) if len(sys.argv) > 4 else 1.0, max_iter=2000).fit(X, y)
pca = PCA(16).fit(X)
err = lambda Z: ((pca.inverse_transform(pca.transform(Z)) - Z) ** 2).mean(1)
thr = np.quantile(err(X), 0.99)
conf = clf.predict_proba(X).max(1)
print("real: conf>0.9", (conf > 0.9).mean(), "ae thr", thr)
torch.manual_seed(0)
data = torch.tensor(X, dtype=torch.float32)
sched = linear_schedule(1000)
model = EpsMLP(64, hidden, layers, 32)
ema = copy.deepcopy(model).requires_grad_(False)
opt = torch.optim.Adam(model.parameters(), lr=2e-3)
dec = torch.optim.lr_scheduler.LambdaLR(opt, lambda k: 0.5 * (1 + math.cos(math.pi * k / steps)))
gen = torch.Generator().manual_seed(0)
t0 = time.time()
for k in range(steps):
    idx = torch.randint(0, len(data), (512,), generator=gen)
    loss = ddpm_loss(model, sched, data[idx], gen)
    opt.zero_grad(); loss.backward(); opt.step(); dec.step()
    with torch.no_grad():
        for e, p in zip(ema.parameters(), model.parameters()):
            e.mul_(0.995).add_(p, alpha=0.005)
print("pretrain s", time.time() - t0, "loss", float(loss.detach()))
torch.save(ema.state_dict(), f"/tmp/digits_eps_{hidden}_{layers}_{steps}.pt")
ema.eval()
for S in (20, 30):
    xs = ddim_sample(ema, sched, torch.randn(1000, 64, generator=gen), ddim_timesteps(1000, S, end=1), 1.0, gen, 3.0).numpy()
    c = clf.predict_proba(xs).max(1)
    e = err(xs)
    v = (c > 0.9) & (e < thr)
    # nearest-neighbour distance to training (memorisation)
    nn = np.sqrt(((xs[:200, None] - X[None]) ** 2).sum(-1)).min(1)
    nnr = np.sqrt(((X[:200, None] - X[200:][None]) ** 2).sum(-1)).min(1)
    print(S, "conf", (c > 0.9).mean(), "ae", (e < thr).mean(), "valid", v.mean(), "nn", np.median(nn), "real nn", np.median(nnr),
          "labels", np.bincount(clf.predict(xs), minlength=10))
    # ink regions
    for name, rows, cols in (("centre", range(2, 6), range(2, 6)), ("left", range(1, 7), range(0, 3)), ("bottom", range(5, 8), range(1, 7))):
        m = np.zeros(64, bool)
        for r in rows:
            for cc in cols:
                m[r * 8 + cc] = True
        ink = lambda Z: ((np.clip(Z, -1, 1) + 1) / 2)[:, m].mean(1)
        rr = ink(X)
        print("  ", name, "real ink q50/q90/max", np.round(np.quantile(rr, [0.5, 0.9, 1.0]), 3), "valid-real max", rr[(conf > 0.9) & (err(X) < thr)].max(),
              "sample ink mean", ink(xs).mean().round(3), "share>q90", (ink(xs) > np.quantile(rr, 0.9)).mean())

"""Pilot: a DDPM over whitened PCA coefficients of the digits (k components), decoded to pixels."""
import sys, time, math, copy
import numpy as np, torch
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.decomposition import PCA
from icml24.common.diffusion import EpsMLP, ddpm_loss, linear_schedule
from icml24.common.ddim import ddim_timesteps, ddim_sample
torch.set_num_threads(1)
k, hidden, steps = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
d = load_digits(); X = d.data / 8.0 - 1.0; y = d.target
clf = LogisticRegression(C=100, max_iter=3000).fit(X, y)
pca = PCA(k, whiten=True).fit(X)
Z = pca.transform(X) / 2.0          # whitened, std 0.5
rec = pca.inverse_transform(Z * 2.0)
print("decoded real conf>0.9", (clf.predict_proba(rec).max(1) > 0.9).mean())
torch.manual_seed(0)
data = torch.tensor(Z, dtype=torch.float32)
sched = linear_schedule(1000)
model = EpsMLP(k, hidden, 3, 32); ema = copy.deepcopy(model).requires_grad_(False)
opt = torch.optim.Adam(model.parameters(), lr=2e-3)
dec = torch.optim.lr_scheduler.LambdaLR(opt, lambda j: 0.5 * (1 + math.cos(math.pi * j / steps)))
gen = torch.Generator().manual_seed(0); t0 = time.time()
for j in range(steps):
    idx = torch.randint(0, len(data), (512,), generator=gen)
    loss = ddpm_loss(model, sched, data[idx], gen)
    opt.zero_grad(); loss.backward(); opt.step(); dec.step()
    with torch.no_grad():
        for e, p in zip(ema.parameters(), model.parameters()): e.mul_(0.995).add_(p, alpha=0.005)
print("pretrain s", round(time.time() - t0), float(loss.detach()))
ema.eval()
for eta in (1.0, 0.5):
    zs = ddim_sample(ema, sched, torch.randn(1000, k, generator=gen), ddim_timesteps(1000, 30, end=1), eta, gen, 3.0).numpy()
    xs = pca.inverse_transform(zs * 2.0)
    pr = clf.predict_proba(xs)
    print(eta, "conf>0.9", (pr.max(1) > 0.9).mean(), "labels", np.bincount(pr.argmax(1), minlength=10))
torch.save(ema.state_dict(), f"/tmp/latent_{k}_{hidden}_{steps}.pt")

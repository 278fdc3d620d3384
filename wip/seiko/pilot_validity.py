"""Pilot: which digit classifier judges validity (max prob > 0.9) of a saved pretrained DDPM's samples."""
import sys
import numpy as np, torch
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.decomposition import PCA
from sklearn.model_selection import cross_val_score
from icml24.common.diffusion import EpsMLP, linear_schedule
from icml24.common.ddim import ddim_timesteps, ddim_sample
torch.set_num_threads(1)
path, hidden = sys.argv[1], int(sys.argv[2])
d = load_digits(); X = d.data / 8.0 - 1.0; y = d.target
m = EpsMLP(64, hidden, 3, 32); m.load_state_dict(torch.load(path)); m.eval()
gen = torch.Generator().manual_seed(1)
xs = ddim_sample(m, linear_schedule(1000), torch.randn(1000, 64, generator=gen), ddim_timesteps(1000, 30, end=1), 1.0, gen, 3.0).numpy()
rng = np.random.default_rng(0)
Xa = np.concatenate([X] + [np.clip(X + rng.normal(0, s, X.shape), -1, 1) for s in (0.15, 0.3)]); ya = np.tile(y, 3)
blob = -np.ones((50, 64)); 
for r in range(2, 6):
    for c in range(2, 6): blob[:, r * 8 + c] = 1
blob += rng.normal(0, 0.05, blob.shape)
for name, clf, (A, b) in (("lr100", LogisticRegression(C=100, max_iter=3000), (X, y)),
                          ("lr10-aug", LogisticRegression(C=10, max_iter=3000), (Xa, ya)),
                          ("mlp", MLPClassifier((128,), max_iter=600, random_state=0), (X, y)),
                          ("mlp-aug", MLPClassifier((128,), max_iter=600, random_state=0), (Xa, ya))):
    clf.fit(A, b)
    cv = cross_val_score(type(clf)(**clf.get_params()), X, y, cv=3).mean()
    pr = clf.predict_proba(xs).max(1)
    print(name, "cv acc", round(cv, 3), "real>0.9", (clf.predict_proba(X).max(1) > 0.9).mean().round(3),
          "samples>0.9", (pr > 0.9).mean().round(3), "blob>0.9", (clf.predict_proba(blob).max(1) > 0.9).mean())
pca = PCA(16).fit(X); err = lambda Z: ((pca.inverse_transform(pca.transform(Z)) - Z) ** 2).mean(1)
print("ae thr", np.quantile(err(X), 0.99), "samples ok", (err(xs) < np.quantile(err(X), 0.99)).mean(), "blob ok", (err(blob) < np.quantile(err(X), 0.99)).mean())

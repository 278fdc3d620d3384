"""MovieLens ratings: loading from a local path, and the semi-synthetic select-rank environment.

No data is downloaded (its licence forbids shipping it). :func:`load_ratings` reads a path the user
gives, or with ``"auto"`` (:func:`find_ratings`) the dslabs copy that Debian's ``r-cran-dslabs`` package
installs (``apt-get install r-cran-dslabs``; `make reproduce` does this where it runs as root):

* a CSV with a header naming ``userId``, ``movieId`` and ``rating`` (MovieLens ``ratings.csv``),
* a headerless whitespace/tab file of ``user item rating [timestamp]`` rows (MovieLens 100k ``u.data``),
* R data holding the dslabs ``movielens`` data frame: an ``.rds`` / ``.rda`` file or the dslabs
  package's lazy-load database (the ``data/`` folder with ``Rdata.rdx`` / ``Rdata.rdb``), decoded by
  the small XDR reader in :mod:`icml24.papers.ranking_bandit.rdata` (no R needed).

:func:`movielens_env` fits user and item factors to the ratings of the most-rated movies (ridge ALS)
and builds a :class:`~icml24.papers.ranking_bandit.env.RankingEnv` whose click probabilities come
from the fitted ratings plus position effects (the paper's real-data experiment uses proprietary
data; this is our substitute, see the README).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import NamedTuple

import numpy as np

from icml24.core.errors import UserError
from icml24.papers.ranking_bandit.env import RankingEnv

#: Where R packages put dslabs' lazy-load data: Debian's r-cran-dslabs, then a site or user install.
DSLABS_DIRS = ("/usr/lib/R/site-library/dslabs/data", "/usr/local/lib/R/site-library/dslabs/data",
               "/usr/lib/R/library/dslabs/data")


def find_ratings(value: str) -> Path | None:
    """The ratings path a ``movielens_path`` value names: None for '' (skip), the first installed
    dslabs data folder of :data:`DSLABS_DIRS` for "auto" (None if there is none), else the path itself.

    >>> find_ratings("") is None, find_ratings("u.data")
    (True, PosixPath('u.data'))
    """
    if not value:
        return None
    if value != "auto":
        return Path(value).expanduser()
    return next((Path(d) for d in DSLABS_DIRS if (Path(d) / "Rdata.rdx").is_file()), None)


class Ratings(NamedTuple):
    """Explicit ratings as parallel arrays (n,): raw user ids, raw item ids, ratings."""

    user: np.ndarray
    item: np.ndarray
    rating: np.ndarray


def load_ratings(path: str | Path) -> Ratings:
    """Read MovieLens ratings from a local file or folder (formats in the module docstring)."""
    path = Path(path)
    if not path.exists():
        raise UserError(f"MovieLens path {str(path)!r} does not exist")
    if path.is_dir() or path.suffix.lower() in (".rds", ".rda", ".rdata", ".rdx", ".rdb"):
        from icml24.papers.ranking_bandit.rdata import read_r_object

        frame = read_r_object(path, name="movielens")
        return _from_columns(frame, "userId", "movieId", "rating", path)
    with path.open(newline="", encoding="utf-8") as fh:
        first = fh.readline()
    if "movieid" in first.lower():
        with path.open(newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        return _from_columns({k: [r[k] for r in rows] for k in ("userId", "movieId", "rating")},
                             "userId", "movieId", "rating", path)
    table = np.loadtxt(path, ndmin=2, delimiter="," if "," in first else None)
    if table.shape[1] < 3:
        raise UserError(f"{path}: expected rows of 'user item rating [timestamp]'")
    return Ratings(table[:, 0].astype(np.int64), table[:, 1].astype(np.int64), table[:, 2].astype(np.float64))


def _from_columns(columns, user: str, item: str, rating: str, path: Path) -> Ratings:
    missing = [c for c in (user, item, rating) if c not in columns]
    if missing:
        raise UserError(f"{path}: no column(s) {', '.join(missing)} in the ratings")
    return Ratings(np.asarray(columns[user], dtype=np.float64).astype(np.int64),
                   np.asarray(columns[item], dtype=np.float64).astype(np.int64),
                   np.asarray(columns[rating], dtype=np.float64))


class RatingFactors(NamedTuple):
    """Ridge-ALS fit of centred ratings r_ui - m ~ b_i + u_u^T v_i on the observed entries."""

    mean: float
    item_bias: np.ndarray  # (N,)
    user_factors: np.ndarray  # (U, d)
    item_factors: np.ndarray  # (N, d)
    rmse: float


def fit_factors(ratings: Ratings, n_items: int, dim: int, reg: float = 5.0, iters: int = 15) -> RatingFactors:
    """Keep the ``n_items`` most-rated items and the users who rated any; fit biases and factors by ALS.

    Alternating ridge regressions on the observed entries only: items (b_i, v_i) given users, then
    users u_u given items. Deterministic (initialised from the SVD of the zero-filled matrix).
    """
    items, counts = np.unique(ratings.item, return_counts=True)
    if items.size < n_items:
        raise UserError(f"the ratings hold {items.size} movies, fewer than ml_items={n_items}")
    keep = items[np.argsort(-counts, kind="stable")[:n_items]]
    sel = np.isin(ratings.item, keep)
    users, u_idx = np.unique(ratings.user[sel], return_inverse=True)
    i_idx = np.searchsorted(np.sort(keep), ratings.item[sel])  # column c is movie np.sort(keep)[c]
    r = ratings.rating[sel]
    mean = float(r.mean())
    mat = np.zeros((users.size, n_items))  # (U, N) centred ratings, 0 where unobserved
    obs = np.zeros((users.size, n_items), dtype=bool)
    mat[u_idx, i_idx], obs[u_idx, i_idx] = r - mean, True
    u_svd, s, vt = np.linalg.svd(mat, full_matrices=False)
    uf = u_svd[:, :dim] * np.sqrt(s[:dim])  # (U, d)
    bias = np.zeros(n_items)
    eye = reg * np.eye(dim + 1)
    for _ in range(iters):
        design = np.hstack([np.ones((users.size, 1)), uf])  # (U, d+1)
        coef = np.array([np.linalg.solve(design[obs[:, i]].T @ design[obs[:, i]] + eye,
                                         design[obs[:, i]].T @ mat[obs[:, i], i]) for i in range(n_items)])
        bias, vf = coef[:, 0], coef[:, 1:]  # (N,), (N, d)
        resid = mat - bias  # (U, N)
        uf = np.array([np.linalg.solve(vf[obs[u]].T @ vf[obs[u]] + reg * np.eye(dim), vf[obs[u]].T @ resid[u, obs[u]])
                       for u in range(users.size)])
    pred = bias + uf @ vf.T
    rmse = float(np.sqrt(np.mean((pred - mat)[obs] ** 2)))
    return RatingFactors(mean, bias, uf, vf, rmse)


def movielens_env(ratings: Ratings, n_items: int, n_positions: int, dim: int, rng: np.random.Generator,
                  position_decay: float = 0.3, position_noise: float = 0.3, logit_scale: float = 1.5) -> RankingEnv:
    """Semi-synthetic environment: users are real MovieLens users, click odds from their fitted ratings.

    mu_j(x_u, k) = sigmoid(alpha_jk + beta_j^T x_u) with x_u the fitted user factor (a uniformly drawn
    user each round), beta_j = s v_j and alpha_jk = s b_j - position_decay (k - 1) + position_noise eps_jk:
    s (``logit_scale``) converts a predicted rating above the mean into log-odds of a click; the
    position effects are simulated (MovieLens has no positions), drawn from ``rng``.
    """
    fit = fit_factors(ratings, n_items, dim)
    alpha = logit_scale * fit.item_bias[:, None] - position_decay * np.arange(n_positions) \
        + position_noise * rng.standard_normal((n_items, n_positions))  # (N, K)
    theta = np.hstack([alpha, logit_scale * fit.item_factors])  # (N, K + d)
    return RankingEnv(theta, "logistic", np.zeros(dim), spread=0.0, pool=fit.user_factors)

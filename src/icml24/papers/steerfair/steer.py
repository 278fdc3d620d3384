"""SteerFair's bias directions (Sec. 3), the ITI-style supervised directions and the random control.

Every method returns a :class:`Directions`: a unit vector u per head (layers, heads, d_head) and the
heads to steer (layers, heads) bool. At inference each chosen head's output at the last token becomes
``h - alpha u`` rescaled to ``||h||`` (:func:`icml24.common.llm.steer`), the same rule and strength for
every method, so the methods differ only in the direction and the heads.

SteerFair (unsupervised), per head:

1. the activations of the demonstrations of rule r (every unlabelled question followed by option r's
   letter and text), each feature column scaled to unit norm over the samples (official code);
2. PCA (centred, as scikit-learn's) with ``components`` components: the rule's candidate bias
   directions. PCA's sign is arbitrary and "away from the bias" needs one; ``orient`` chooses it:

   - ``"answers"`` (default; our deviation, label-free): the model's own answers on the unlabelled
     questions in every cyclic ordering (no forced answer, no gold label): its most frequent answer
     letter a*, and per head the activation difference b at the prompt's last token (where steering
     acts) between the orderings it answers a* and the rest; each component is oriented so that
     ``u . b > 0``, so subtracting it moves away from the model's preferred letter
     (:func:`answer_direction`, :func:`orient`);
   - ``"official"``: the sign scikit-learn's PCA returns (``svd_flip``: the largest-magnitude entry of
     each component positive), the official code's; content-free, so the bias sign is a coin flip;
   - ``"rule_mean"``: toward the rule's mean (scaled) activation (this package's earlier choice);
3. combination across rules ("qr", the default of the official code): QR of the stacked directions
   (sign fixed so that diag(R) >= 0, i.e. the basis keeps the orientation of the inputs), the mean of the
   orthonormal basis vectors, scaled to unit norm (the official code leaves it at norm ``1/sqrt(m)``;
   only alpha's scale differs);
4. head selection: the ``k`` heads with the largest first-component explained-variance ratio averaged
   over rules. The official code ranks by the mean of the centred PCA projections, which is zero up to
   rounding for every head (a PCA's scores have mean 0 over its fitting data), so its ranking is
   arbitrary; we use the explained variance, the per-head PCA statistic it meant to read.

ITI-style (supervised, Li et al. 2023): from n labelled questions, the demonstrations with the gold
answer and with one wrong answer; per head the mass-mean direction (mean over correct minus mean over
wrong, unit norm; steering subtracts u = -direction, i.e. moves toward "correct"), heads ranked by the
held-out accuracy of a logistic-regression probe on that head (ITI's 4:1 split).

Random control: Gaussian unit vectors on SteerFair's heads.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Directions(NamedTuple):
    """Unit directions (L, H, d) and the heads to steer (L, H) bool."""

    u: np.ndarray
    mask: np.ndarray


class RulePCA(NamedTuple):
    """Per-head PCA of one rule's demonstrations: components (L, H, m, d), explained-variance ratios (L, H, m)."""

    components: np.ndarray
    ratio: np.ndarray


def unit_columns(X: np.ndarray) -> np.ndarray:
    """Each feature column of X (n, d) scaled to unit norm over the n samples (zero columns kept).

    >>> unit_columns(np.array([[3.0, 0.0], [4.0, 0.0]])).tolist()
    [[0.6, 0.0], [0.8, 0.0]]
    """
    norm = np.linalg.norm(X, axis=0)
    return X / np.where(norm > 0, norm, 1.0)


def pca(X: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-m principal axes of X (n, d), centred, by SVD: components (m, d) and explained-variance ratios (m,)."""
    Xc = X - X.mean(0)
    _, s, Vt = np.linalg.svd(Xc, full_matrices=False)
    var = s**2
    return Vt[:m], var[:m] / max(var.sum(), 1e-30)


def sklearn_sign(V: np.ndarray) -> np.ndarray:
    """Rows of V (m, d) signed as scikit-learn's PCA returns them (``svd_flip`` on V): the entry of largest
    magnitude of each row positive.

    >>> sklearn_sign(np.array([[0.6, -0.8], [0.8, 0.6]])).tolist()
    [[-0.6, 0.8], [0.8, 0.6]]
    """
    big = V[np.arange(len(V)), np.abs(V).argmax(1)]
    return V * np.where(big < 0, -1.0, 1.0)[:, None]


def rule_pca(acts: np.ndarray, m: int, toward_mean: bool = True) -> RulePCA:
    """Steps 1-2 (module docstring) for one rule: acts (n, L, H, d) -> components and ratios; each component
    oriented toward the rule's mean (scaled) activation (``toward_mean``) or signed as scikit-learn's."""
    n, L, H, d = acts.shape
    comps = np.zeros((L, H, m, d))
    ratio = np.zeros((L, H, m))
    for l in range(L):
        for h in range(H):
            X = unit_columns(acts[:, l, h].astype(np.float64))
            V, r = pca(X, m)
            V = sklearn_sign(V)
            if toward_mean:
                V = V * np.where(V @ X.mean(0) < 0, -1.0, 1.0)[:, None]
            comps[l, h, :len(V)] = V
            ratio[l, h, :len(r)] = r
    return RulePCA(comps, ratio)


class Orientation(NamedTuple):
    """The label-free orientation: the model's most frequent answer letter and, per head, the activation
    difference (L, H, d) between the prompts it answers with that letter and the rest (zero where one side
    is empty)."""

    letter: int
    b: np.ndarray


def answer_direction(acts: np.ndarray, answers: np.ndarray) -> Orientation:
    """:class:`Orientation` from the last-token activations (n, L, H, d) of unlabelled prompts and the model's
    answers (n,) to them (letter indices; no gold label is read).

    >>> a = np.zeros((3, 1, 1, 2)); a[0, 0, 0] = [2.0, 0.0]; a[2, 0, 0] = [2.0, 2.0]
    >>> o = answer_direction(a, np.array([1, 0, 1])); o.letter, o.b[0, 0].tolist()
    (1, [2.0, 1.0])
    """
    answers = np.asarray(answers)
    letter = int(np.bincount(answers).argmax())
    top = answers == letter
    if top.all():
        return Orientation(letter, np.zeros(acts.shape[1:]))
    return Orientation(letter, acts[top].mean(0) - acts[~top].mean(0))


def orient(components: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Components (L, H, m, d) with each one's sign set so that ``u . b > 0`` for b (L, H, d): subtracting it
    moves a head's output away from the preferred letter's side (kept where ``u . b == 0``).

    >>> (orient(np.array([[[[1.0, 0.0], [0.0, 1.0]]]]), np.array([[[-1.0, 0.0]]])) + 0.0).tolist()
    [[[[-1.0, 0.0], [0.0, 1.0]]]]
    """
    dot = np.einsum("lhmd,lhd->lhm", components, b)
    return components * np.where(dot < 0, -1.0, 1.0)[..., None]


def combine_qr(directions: np.ndarray) -> np.ndarray:
    """Step 3: orthonormal basis of the rows of ``directions`` (r, d) by QR (diag R >= 0), its mean, unit norm.

    >>> combine_qr(np.array([[1.0, 0.0], [1.0, 1.0]])).round(4).tolist()   # basis e1, e2 -> (1, 1)/sqrt 2
    [0.7071, 0.7071]
    """
    Q, R = np.linalg.qr(directions.T)                  # Q (d, r)
    Q = Q * np.where(np.diag(R) < 0, -1.0, 1.0)        # keep each basis vector on its input's side
    mean = Q.mean(1)
    return mean / max(np.linalg.norm(mean), 1e-30)


ORIENTATIONS = ("answers", "official", "rule_mean")


def steerfair(rules: list[np.ndarray], components: int, k: int, how: str = "official",
              b: np.ndarray | None = None) -> Directions:
    """SteerFair's directions and heads from the activations (n_r, L, H, d) of each rule's demonstrations;
    ``how`` orients the components (module docstring), ``"answers"`` needs ``b`` (:func:`answer_direction`)."""
    if how not in ORIENTATIONS:
        raise ValueError(f"orientation {how!r}: one of {ORIENTATIONS}")
    fits = [rule_pca(a, components, toward_mean=how == "rule_mean") for a in rules]
    comps = [f.components for f in fits]
    if how == "answers":
        if b is None:
            raise ValueError("orientation 'answers' needs b, the activation difference of the model's answers")
        comps = [orient(c, b) for c in comps]
    L, H, _, d = fits[0].components.shape
    u = np.zeros((L, H, d))
    for l in range(L):
        for h in range(H):
            u[l, h] = combine_qr(np.concatenate([c[l, h] for c in comps]))
    score = np.mean([f.ratio[:, :, 0] for f in fits], axis=0)     # (L, H)
    return Directions(u, top_k(score, k))


def top_k(score: np.ndarray, k: int) -> np.ndarray:
    """(L, H) bool mask of the k largest entries of ``score`` (ties broken by position).

    >>> top_k(np.array([[0.1, 0.5], [0.3, 0.2]]), 2).tolist()
    [[False, True], [True, False]]
    """
    flat = np.argsort(-score.ravel(), kind="stable")[:k]
    mask = np.zeros(score.size, dtype=bool)
    mask[flat] = True
    return mask.reshape(score.shape)


def probe_accuracy(X: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> float:
    """Held-out accuracy of a logistic-regression probe on X (n, d) -> y (n,), 4:1 split (ITI)."""
    from sklearn.linear_model import LogisticRegression

    perm = rng.permutation(len(y))
    cut = int(0.8 * len(y))
    tr, va = perm[:cut], perm[cut:]
    if len(np.unique(y[tr])) < 2 or len(va) == 0:
        return 0.5
    clf = LogisticRegression(max_iter=1000).fit(X[tr], y[tr])
    return float(clf.score(X[va], y[va]))


def iti(correct: np.ndarray, wrong: np.ndarray, k: int, rng: np.random.Generator) -> Directions:
    """ITI-style directions (module docstring) from activations (n, L, H, d) of correct and wrong demonstrations."""
    n, L, H, d = correct.shape
    u = np.zeros((L, H, d))
    score = np.zeros((L, H))
    y = np.r_[np.ones(n), np.zeros(len(wrong))]
    for l in range(L):
        for h in range(H):
            diff = correct[:, l, h].mean(0) - wrong[:, l, h].mean(0)
            u[l, h] = -diff / max(np.linalg.norm(diff), 1e-30)     # subtracting u moves toward "correct"
            score[l, h] = probe_accuracy(np.concatenate([correct[:, l, h], wrong[:, l, h]]), y, rng)
    return Directions(u, top_k(score, k))


def random_directions(mask: np.ndarray, d: int, rng: np.random.Generator) -> Directions:
    """Gaussian unit directions (L, H, d) on the heads of ``mask`` (the control at the same strength)."""
    g = rng.standard_normal((*mask.shape, d))
    return Directions(g / np.linalg.norm(g, axis=-1, keepdims=True), mask.copy())

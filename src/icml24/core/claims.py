"""Executable claims: what a paper says, how we measure it, and the verdict at each preset.

A :class:`Claim` names the paper's words, where they appear, the metric(s) it reads from a run, the
statistic, and a pass :class:`Band` per preset. :func:`evaluate` computes the measured number with
its CI over seeds first, and only then the verdict:

* ``pass``  - the statistic lies in the preset's band (strict bounds unless ``Band(closed=True)``);
* ``fail``  - it does not, and the run had power >= 0.8 (:data:`~icml24.core.power.FAIL_POWER`) to see the
  paper's effect (:class:`Effect`): with the effect planted at this run's seed-to-seed spread, the claim
  would have passed in at least 80% of resampled runs (:mod:`icml24.core.power`);
* ``inconclusive`` - it does not, but the run could not have seen the paper's effect (power < 0.8, or no
  effect declared): a blind experiment, not evidence against the paper;
* ``not checkable`` - the preset has no band (too small to test this claim), a metric the claim
  needs is absent from the run (e.g. data not present), a seed diverged (a metric the claim reads is
  NaN: the detail names the seed and the metric), or a CI needs more seeds than were run.

Kinds (all CIs are over seeds, see :mod:`icml24.core.stats`):

============  ==========================================================================
order         paired difference ``metric - against`` per seed; CI inside band (``Band(lo=0)``: a > b)
slope         log-log slope of curve ``metric`` against curve ``against``; CI inside band
within        mean of a scalar ``metric``; CI inside band (e.g. an error below a bound)
constraint    every seed's ``metric`` inside band; the worst seed is the value
equiv         paired difference ``metric - against``; CI inside a band around 0 (equivalence)
convergence   last point of curve ``metric``; CI inside band and tail drift <= ``band.tol``
              (tail drift: largest distance of the last quarter of the curve from its end)
============  ==========================================================================
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Iterable, Literal, Mapping

if TYPE_CHECKING:
    from icml24.core.results import RunResult

Kind = Literal["order", "slope", "within", "constraint", "equiv", "convergence"]
KINDS: tuple[str, ...] = ("order", "slope", "within", "constraint", "equiv", "convergence")


class Verdict(str, Enum):
    """The outcome of a claim at one preset."""

    PASS = "pass"
    FAIL = "fail"
    INCONCLUSIVE = "inconclusive"
    NOT_CHECKABLE = "not checkable"


VERDICTS: tuple[str, ...] = tuple(v.value for v in Verdict)

# Valid ranges of metrics (``Claim.ranges``): planting a paper's effect never moves a value outside them.
PROB = (0.0, 1.0)
"""An accuracy, a rate, a probability, a normalised score in [0, 1]."""
CORR = (-1.0, 1.0)
"""A correlation (Pearson, Spearman, Kendall) in [-1, 1]."""
NONNEG = (0.0, math.inf)
"""An error, a count, a time, a norm: >= 0."""
REAL = (-math.inf, math.inf)
"""No bound (a return, a log-ratio, a slope)."""


@dataclass(frozen=True)
class Effect:
    """The effect the paper reports, in the units of the claim's statistic.

    Attributes:
        value: the effect (e.g. 0.03 for "accuracy +3 points", -0.5 for an n^-1/2 rate).
        source: where it comes from (table, figure, section) and how it was converted to the statistic.
        minimal: True when the paper prints no number and ``value`` is the smallest effect that would
            still support its words.
        why: for a minimal effect, one line that justifies the value.
        method: the metric that holds the method's per-seed values, which planting shifts (default: the
            claim's ``metric``; name ``against`` where the claim reads ``baseline - method``).
    """

    value: float
    source: str
    minimal: bool = False
    why: str = ""
    method: str | None = None

    def __post_init__(self) -> None:
        if not math.isfinite(self.value):
            raise ValueError(f"Effect({self.value!r}): the effect must be a finite number")
        if self.minimal and not self.why:
            raise ValueError("a minimal Effect needs `why`: one line on why this is the smallest supporting effect")
        if not self.source:
            raise ValueError("an Effect needs a `source`")

    def describe(self) -> str:
        return f"{self.value:g}" + (" (minimal)" if self.minimal else "")


@dataclass(frozen=True)
class Band:
    """The region a statistic must lie in to pass: ``lo < CI low`` and ``CI high < hi``.

    Bounds are strict by default, so a CI of exactly [0, 0] does not pass ``Band(lo=0)`` ("a > b"
    needs evidence that the difference is positive, not a tie). ``closed=True`` makes both bounds
    inclusive, for quantities that can attain the bound (a convergence fraction that must be 1).
    ``tol`` bounds the tail drift of a convergence curve (other kinds ignore it).

    >>> Band(hi=-0.3).contains(-0.6, -0.4)
    True
    >>> Band(lo=0).contains(0.0, 0.0), Band(lo=1, closed=True).contains(1.0, 1.0)
    (False, True)
    >>> Band(lo=0).describe(), Band(lo=1, closed=True).describe()
    ('CI > 0', 'CI >= 1')
    """

    lo: float = -math.inf
    hi: float = math.inf
    tol: float = math.inf
    closed: bool = False

    def contains(self, low: float, high: float) -> bool:
        if self.closed:
            return bool(self.lo <= low and high <= self.hi)
        return bool(self.lo < low and high < self.hi)

    def describe(self) -> str:
        ge, le = (">=", "<=") if self.closed else (">", "<")
        parts = []
        if self.lo > -math.inf and self.hi < math.inf:
            parts.append(f"CI within {'[' if self.closed else '('}{self.lo:g}, {self.hi:g}{']' if self.closed else ')'}")
        elif self.lo > -math.inf:
            parts.append(f"CI {ge} {self.lo:g}")
        elif self.hi < math.inf:
            parts.append(f"CI {le} {self.hi:g}")
        if self.tol < math.inf:
            parts.append(f"tail drift <= {self.tol:g}")
        return ", ".join(parts) or "any value"


@dataclass(frozen=True)
class Claim:
    """One claim of a paper, made executable.

    Attributes:
        id: short stable identifier, e.g. ``"C1"``.
        statement: the paper's claim in its own words (or a faithful paraphrase, marked as such).
        where: where in the paper (section, theorem, figure, table).
        kind: one of :data:`KINDS`.
        metric: the metric (scalar per seed) or curve (per seed) the claim reads.
        against: the second metric for order/equiv, or the x-curve for slope; else None.
        statistic: how the number is computed, in words.
        bands: pass band per preset name; a preset without a band is "not checkable" there.
        paper_value: the number the paper prints, if it prints one.
        note: anything a reader must know to interpret the verdict (e.g. why a preset is unchecked).
        effect: the paper's effect in the statistic's units (:class:`Effect`); without one a claim that
            misses its band is inconclusive, never failed.
        ranges: the valid range of each metric the claim reads (:data:`PROB`, :data:`CORR`,
            :data:`NONNEG`, :data:`REAL`, or a pair); planting the effect clips to it.
    """

    id: str
    statement: str
    where: str
    kind: Kind
    metric: str
    against: str | None = None
    statistic: str = ""
    bands: Mapping[str, Band] = field(default_factory=dict)
    paper_value: str | None = None
    note: str = ""
    effect: Effect | None = None
    ranges: Mapping[str, tuple[float, float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.id}: unknown kind {self.kind!r}; use one of {KINDS}")
        if self.kind in ("order", "slope", "equiv") and not self.against:
            raise ValueError(f"claim {self.id}: kind {self.kind!r} needs `against`")
        for name, (lo, hi) in self.ranges.items():
            if name not in self.needs:
                raise ValueError(f"claim {self.id}: ranges names {name!r}, which the claim does not read")
            if not lo < hi:
                raise ValueError(f"claim {self.id}: range of {name} is empty: ({lo}, {hi})")
        method = self.effect.method if self.effect else None
        if method is not None and (method not in self.needs or self.kind not in ("order", "equiv")):
            raise ValueError(f"claim {self.id}: Effect.method {method!r} must be the metric or `against` "
                             "of an order or equiv claim")

    @property
    def method(self) -> str:
        """The metric whose per-seed values planting shifts (:attr:`Effect.method`, else ``metric``)."""
        return (self.effect.method if self.effect and self.effect.method else None) or self.metric

    def valid(self, name: str) -> tuple[float, float]:
        """The declared valid range of metric ``name`` (unbounded if none is declared)."""
        return tuple(self.ranges.get(name, REAL))  # type: ignore[return-value]

    @property
    def needs(self) -> tuple[str, ...]:
        """Names of the metrics/curves this claim reads from a run."""
        return (self.metric,) + ((self.against,) if self.against else ())

    @property
    def reads_curves(self) -> bool:
        return self.kind in ("slope", "convergence")


@dataclass
class ClaimResult:
    """A measured claim: the number with its CI, then the verdict and why.

    ``power`` is the probability that the claim would pass if the paper's ``effect`` were true at this
    run's seed-to-seed spread (:mod:`icml24.core.power`); NaN where it cannot be computed (no effect
    declared, fewer than two seeds, not checkable)."""

    claim_id: str
    kind: str
    preset: str
    verdict: Verdict
    value: float
    low: float
    high: float
    n_seeds: int
    band: str
    detail: str
    statement: str = ""
    where: str = ""
    paper_value: str | None = None
    power: float = math.nan
    effect: float = math.nan
    effect_source: str = ""
    seeds_needed: int | None = None
    """Inconclusive claims only, set where a run is published or re-checked (``core.store.judge``): the fewest
    seeds at which the power would reach 0.8 at this run's spread (:func:`seeds_for_power`'s grid), or
    ``MAX_SEEDS + 1`` where even :data:`MAX_SEEDS` would not; None where not computed."""

    @property
    def label(self) -> str:
        """The verdict as shown: ``inconclusive (power 0.42; 0.8 at about 31 seeds)`` carries its power and,
        where computed, the seeds that would let the run see the paper's effect (:func:`verdict_label`)."""
        return verdict_label({"verdict": self.verdict.value, "power": self.power, "seeds_needed": self.seeds_needed})

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["verdict"] = self.verdict.value
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "ClaimResult":
        d = dict(d)
        d["verdict"] = Verdict(d["verdict"])
        for key in ("value", "low", "high", "power", "effect"):
            d[key] = math.nan if d.get(key) is None else float(d[key])
        return cls(**d)


def _fmt_power(p: float | None) -> str:
    return "-" if p is None or math.isnan(p) else f"{p:.2f}"


def verdict_label(c: Mapping[str, Any], seeds: bool = True) -> str:
    """:attr:`ClaimResult.label` of a stored claim dict (``results/<slug>/<preset>.json``); ``seeds=False`` leaves
    out :func:`seeds_note` (the report shows it on a line of its own).

    >>> verdict_label({"verdict": "inconclusive", "power": 0.5, "seeds_needed": 27})
    'inconclusive (power 0.50; 0.8 at about 27 seeds)'
    >>> verdict_label({"verdict": "inconclusive", "power": 0.5, "seeds_needed": 27}, seeds=False)
    'inconclusive (power 0.50)'
    """
    if c["verdict"] == Verdict.INCONCLUSIVE.value:
        note = seeds_note(c) if seeds else ""
        return f"inconclusive (power {_fmt_power(c.get('power'))}{'; ' + note if note else ''})"
    return str(c["verdict"])


def seeds_note(c: Mapping[str, Any]) -> str:
    """How many seeds would give a stored inconclusive claim power 0.8 (its ``seeds_needed``); '' where not computed.

    >>> seeds_note({"verdict": "inconclusive", "power": 0.01, "seeds_needed": MAX_SEEDS + 1})
    '0.8 not within 512 seeds'
    """
    need = c.get("seeds_needed")
    if c["verdict"] != Verdict.INCONCLUSIVE.value or need is None:
        return ""
    return f"0.8 not within {MAX_SEEDS} seeds" if need > MAX_SEEDS else f"0.8 at about {need} seeds"


def _nan(x: float) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


@dataclass(frozen=True)
class _PerSeed:
    """A claim reduced to per-seed values whose mean is its statistic, and how to plant an effect in them.

    The per-seed values are ``base + sign * method`` (see :func:`icml24.core.power.plant`)."""

    base: Any  # (S,) array
    sign: float
    method: Any  # (S,) array: the method's values, shifted by planting
    valid: tuple[float, float]
    drift: Any = None  # (S,) tail drift per seed (convergence)

    @property
    def values(self):
        return self.base + self.sign * self.method


def _per_seed(claim: Claim, result: "RunResult") -> _PerSeed:
    """Per-seed values of a claim of any kind but ``constraint`` (whose values are the metric itself)."""
    import numpy as np

    if claim.kind in ("order", "equiv"):
        assert claim.against is not None  # guaranteed by Claim.__post_init__
        m, a = result.metric(claim.metric), result.metric(claim.against)
        if claim.method == claim.against:
            return _PerSeed(m, -1.0, a, claim.valid(claim.against))
        return _PerSeed(-a, 1.0, m, claim.valid(claim.metric))
    if claim.kind in ("within", "constraint"):
        v = result.metric(claim.metric)
        return _PerSeed(np.zeros_like(v), 1.0, v, claim.valid(claim.metric))
    if claim.kind == "slope":
        assert claim.against is not None
        lx = np.log(result.curve(claim.against)[0])
        with np.errstate(divide="ignore", invalid="ignore"):
            ly = np.log(result.curve(claim.metric))  # (S, P)
        xc = lx - lx.mean()
        slopes = ly @ xc / float(xc @ xc)  # (S,): their mean is the slope of the mean log curve
        return _PerSeed(np.zeros_like(slopes), 1.0, slopes, REAL)
    ys = result.curve(claim.metric)  # convergence: (S, P)
    w = max(1, ys.shape[1] // 4)
    # tail drift: how far the last quarter of the curve strays from its final value
    tail = ys[:, -1 - w:] if ys.shape[1] > w else ys[:, :0]
    drift = np.max(np.abs(tail - ys[:, -1:]), axis=1) if tail.size else np.full(ys.shape[0], math.nan)
    last = ys[:, -1]
    return _PerSeed(np.zeros_like(last), 1.0, last, claim.valid(claim.metric), drift)


def _planted(claim: Claim, result: "RunResult", preset: str):
    """The claim's per-seed values and the :class:`~icml24.core.power.Planted` effect in them."""
    import numpy as np

    from icml24.core import power

    assert claim.effect is not None
    ps = _per_seed(claim, result)
    target = claim.effect.value
    if claim.kind == "constraint":  # the statistic is the worst seed: plant so that it equals the effect
        band = claim.bands.get(preset) or Band()
        worst = float(np.max(ps.values) if band.hi < math.inf else np.min(ps.values))
        target = float(np.mean(ps.values)) + target - worst
    return ps, power.plant(ps.base, ps.method, ps.sign, target, ps.valid)


def claim_power(claim: Claim, result: "RunResult", preset: str, n_seeds: int | None = None) -> float:
    """Probability that ``claim`` passes at ``preset`` if the paper's effect were true at ``result``'s
    seed-to-seed spread (:mod:`icml24.core.power`), for a run with ``n_seeds`` seeds (default: as many as
    ``result``); NaN without an effect, a band or two seeds."""
    from icml24.core import power

    band = claim.bands.get(preset)
    if band is None or claim.effect is None or len(result.seeds) < 2:
        return math.nan
    _, planted = _planted(claim, result, preset)
    # where the paper is right a convergence curve has converged: its tail drift is not planted
    return power.pass_rate(planted.values, band.contains, constraint=claim.kind == "constraint", n_seeds=n_seeds)


MAX_SEEDS = 512
"""The largest run :func:`seeds_for_power` considers."""


def seeds_for_power(claim: Claim, result: "RunResult", preset: str, target: float = 0.8,
                    max_seeds: int = MAX_SEEDS) -> int | None:
    """The fewest seeds (on a grid growing by 1.25x) at which ``claim`` would have power >= ``target`` at
    ``result``'s spread; None if even ``max_seeds`` would not (an effect the band cannot reach, a
    baseline at its ceiling) or the power cannot be computed. Sizes a preset from a pilot run."""
    n = max(2, len(result.seeds))
    while n <= max_seeds:
        pw = claim_power(claim, result, preset, n_seeds=n)
        if math.isnan(pw):
            return None
        if pw >= target:
            return n
        n = max(n + 1, int(n * 1.25))
    return None


def plant_effect(claim: Claim, result: "RunResult", preset: str = "quick") -> "RunResult":
    """A copy of ``result`` with the paper's effect planted in every seed: the positive control.

    The method's metric is shifted so that the claim's statistic equals the effect (clipped to its valid
    range); a slope claim's curve is multiplied by ``x ** d`` (its log-log slope moves by ``d``); a
    convergence curve is shifted and its tail (the quarter the drift reads) set to its planted end."""
    import copy

    import numpy as np

    if claim.effect is None:
        raise ValueError(f"claim {claim.id}: no Effect to plant")
    ps, planted = _planted(claim, result, preset)
    out = copy.deepcopy(result)
    for s, old, new in zip(out.seeds, ps.method, planted.method):
        if claim.kind == "slope":
            assert claim.against is not None
            x = np.asarray(s.curves[claim.against])
            s.curves[claim.metric] = list(np.asarray(s.curves[claim.metric]) * (x / x[0]) ** (new - old))
        elif claim.kind == "convergence":
            ys = np.asarray(s.curves[claim.metric]) + (new - old)
            ys[-1 - max(1, ys.size // 4):] = new
            s.curves[claim.metric] = list(map(float, ys))
        else:
            s.metrics[claim.method] = float(new)
    return out


def evaluate(claim: Claim, result: "RunResult", preset: str) -> ClaimResult:
    """Measure ``claim`` on ``result`` and give its verdict at ``preset`` (see module docstring)."""
    import numpy as np

    from icml24.core import stats

    band = claim.bands.get(preset)
    band_text = band.describe() if band else "-"
    if claim.kind == "constraint":
        band_text = band_text.replace("CI", "every seed")
    effect = claim.effect.value if claim.effect else math.nan
    source = claim.effect.source if claim.effect else ""

    def out(verdict: Verdict, value=math.nan, low=math.nan, high=math.nan, n=0, detail="",
            pw=math.nan) -> ClaimResult:
        return ClaimResult(claim.id, claim.kind, preset, verdict, float(value), float(low), float(high),
                           int(n), band_text, detail, claim.statement, claim.where, claim.paper_value,
                           float(pw), float(effect), source)

    have = result.curve_names() if claim.reads_curves else result.metric_names()
    missing = [m for m in claim.needs if m not in have]
    if missing:
        return out(Verdict.NOT_CHECKABLE, detail=f"run has no {', '.join(missing)}")

    for s in result.seeds:
        for name in claim.needs:
            vals = s.curves[name] if claim.reads_curves else [s.metrics[name]]
            bad = [v for v in vals if _nan(v) or (isinstance(v, float) and math.isinf(v))]
            if bad:
                return out(Verdict.NOT_CHECKABLE, n=len(result.seeds),
                           detail=f"seed {s.seed} diverged: {name} is {'NaN' if _nan(bad[0]) else bad[0]} "
                                  "(see the run's 'diverged')")

    if claim.kind == "slope":
        assert claim.against is not None  # guaranteed by Claim.__post_init__
        xs = result.curve(claim.against)  # (S, P)
        if xs.size and not np.allclose(xs, xs[:1], equal_nan=True):
            return out(Verdict.NOT_CHECKABLE, detail="seeds disagree on the x grid of the slope")
        value, low, high, n = stats.slope_over_seeds(xs[0], result.curve(claim.metric))
    elif claim.kind == "constraint":
        vals = result.metric(claim.metric)
        n = vals.size
        if n == 0 or not np.all(np.isfinite(vals)):
            return out(Verdict.NOT_CHECKABLE, n=n, detail="measured value is NaN or missing")
        low, high = float(vals.min()), float(vals.max())
        b = band or Band()
        value = high if b.hi < math.inf else low  # the worst seed
        if band is None:
            return out(Verdict.NOT_CHECKABLE, value, low, high, n, f"no band at preset {preset!r}")
        inside = sum(b.contains(v, v) for v in vals)
        pw = claim_power(claim, result, preset)
        ok = inside == n
        return out(_verdict(ok, pw), value, low, high, n,
                   f"worst seed {value:.4g}; {inside} of {n} seeds inside band{_power_text(claim, pw)}", pw)
    else:
        per_seed = _per_seed(claim, result)
        value, low, high, n = stats.mean_ci(per_seed.values)

    if _nan(value):
        return out(Verdict.NOT_CHECKABLE, value, low, high, n, "measured value is NaN (a seed is missing)")
    if band is None:
        return out(Verdict.NOT_CHECKABLE, value, low, high, n,
                   claim.note or f"no pass band at preset {preset!r}: too small to test this claim")
    if _nan(low) or _nan(high):
        return out(Verdict.NOT_CHECKABLE, value, low, high, n, f"a CI needs at least 2 seeds, got {n}")
    ok = band.contains(low, high)
    detail = f"{n} seeds"
    if claim.kind == "convergence":
        drift = float(np.mean(per_seed.drift))
        ok = ok and (drift <= band.tol if not _nan(drift) else band.tol == math.inf)
        detail += f"; tail drift {drift:.3g}"
    pw = claim_power(claim, result, preset)
    return out(_verdict(ok, pw), value, low, high, n, detail + _power_text(claim, pw), pw)


def _verdict(ok: bool, pw: float) -> Verdict:
    """pass; fail only where the run could have seen the paper's effect (power >= FAIL_POWER); else inconclusive."""
    from icml24.core.power import FAIL_POWER

    if ok:
        return Verdict.PASS
    return Verdict.FAIL if not _nan(pw) and pw >= FAIL_POWER else Verdict.INCONCLUSIVE


def _power_text(claim: Claim, pw: float) -> str:
    """What the detail adds about power (the power itself has its own field and column)."""
    return "; no paper effect declared: power unknown" if claim.effect is None else ""


def evaluate_all(claims: Iterable[Claim], result: "RunResult", preset: str) -> list[ClaimResult]:
    """:func:`evaluate` for each claim, in order."""
    return [evaluate(c, result, preset) for c in claims]


# -- falsifiability: what a null result looks like ------------------------------------------------
@dataclass(frozen=True)
class Null:
    """A null result for a claim: what a trivial policy, a method no better than its baseline, or a
    broken implementation would measure. The falsifiability test replaces ``metric`` in every seed of a
    published run (by ``value``, or by the same seed's ``like`` metric plus ``offset``) and requires the
    claim not to pass.

    Attributes:
        metric: the metric (or curve) the null replaces.
        why: what null this is, in words (e.g. "RF learns the task as well as BRF").
        value: the null's value (a float for a metric; a constant curve for a curve).
        like: another metric (curve) of the same seed whose value the null takes.
        offset: added to ``like``'s value.
    """

    metric: str
    why: str
    value: float | None = None
    like: str | None = None
    offset: float = 0.0

    def __post_init__(self):
        if (self.value is None) == (self.like is None):
            raise ValueError(f"Null of {self.metric}: give exactly one of value or like")


def default_null(claim: Claim, preset: str = "quick") -> Null | None:
    """The generic null of an order claim and of a slope claim, from the claim's band at ``preset``.

    * order: the method measures its baseline's value, moved to the wrong side of the band by twice
      the margin the band allows (``Band(lo=0)``: equal to the baseline; ``Band(lo=-0.02)``, a
      non-inferiority margin: 0.04 worse than the baseline).
    * slope: with only an upper bound (a rate no faster than ...), the curve grows linearly in the x
      variable (slope 1: e.g. linear regret); otherwise it is flat (slope 0: nothing changes).

    Other kinds need a paper-declared :class:`Null` (``claims.NULLS``)."""
    band = claim.bands.get(preset)
    if band is None:
        return None
    if claim.kind == "order" and claim.against:
        if band.lo > -math.inf:
            return Null(claim.metric, "the method measures what its baseline does, less the margin",
                        like=claim.against, offset=min(0.0, 2 * band.lo))
        return Null(claim.metric, "the method measures what its baseline does, plus the margin",
                    like=claim.against, offset=max(0.0, 2 * band.hi))
    if claim.kind == "slope" and claim.against:
        if band.lo == -math.inf and band.hi < math.inf:
            return Null(claim.metric, "the curve grows linearly in the x variable", like=claim.against)
        return Null(claim.metric, "the curve does not change with the x variable", value=1.0)
    return None


def apply_null(result: "RunResult", null: Null, curves: bool) -> "RunResult":
    """A copy of ``result`` with ``null`` applied to every seed (to a curve when ``curves``)."""
    import copy

    out = copy.deepcopy(result)
    for s in out.seeds:
        if curves:
            n = len(s.curves[null.metric])
            s.curves[null.metric] = ([v + null.offset for v in s.curves[null.like]] if null.like is not None
                                     else [float(null.value or 0)] * n)
        else:
            s.metrics[null.metric] = (s.metrics[null.like] + null.offset if null.like is not None
                                      else float(null.value or 0))
    return out

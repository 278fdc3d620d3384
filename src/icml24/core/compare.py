"""How published numbers are compared, and what "the same numbers" promises.

Two promises, each with its own test:

* **Same machine, same packages:** the same config and seed give bit-identical per-seed metrics
  (``test_same_seed_same_numbers`` in the contract test; ``make check`` on the machine that published).
* **Another machine** (other CPU features, e.g. numpy's AVX-512 summation paths, or another BLAS
  kernel): claim statistics recomputed from the *stored* seeds agree to ``STAT_RTOL`` (they are sums
  over the same numbers in another order), and per-seed metrics of a fresh run agree to
  ``SEED_RTOL`` for closed-form and sampling computations; training runs (chaotic in the last bit)
  are compared by their claim verdicts only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, NamedTuple

STAT_RTOL = 1e-9
"""Relative tolerance for a claim statistic recomputed from the same stored per-seed numbers."""
STAT_ATOL = 1e-12
"""Absolute floor for statistics that are (near) zero, where a relative tolerance means nothing."""
SEED_RTOL = 1e-6
"""Relative tolerance for per-seed metrics of a fresh, untrained run on another machine."""


def close(a: float | None, b: float | None, rtol: float = STAT_RTOL, atol: float = STAT_ATOL) -> bool:
    """``a`` equals ``b`` up to ``rtol`` (relative) or ``atol`` (absolute); NaN/None equal each other.

    >>> close(-0.48178570762283235, -0.48178570762283246)
    True
    >>> close(1.0, 1.001), close(None, float("nan")), close(math.inf, math.inf)
    (False, True, True)
    """
    fa = math.nan if a is None else float(a)
    fb = math.nan if b is None else float(b)
    if math.isnan(fa) or math.isnan(fb):
        return math.isnan(fa) and math.isnan(fb)
    if math.isinf(fa) or math.isinf(fb):
        return fa == fb
    return math.isclose(fa, fb, rel_tol=rtol, abs_tol=atol)


@dataclass(frozen=True)
class Difference:
    """One per-seed number that differs beyond tolerance between two runs."""

    seed: int
    name: str
    stored: float
    fresh: float

    @property
    def rel(self) -> float:
        """Relative difference ``|fresh - stored| / max(|stored|, tiny)``."""
        return abs(self.fresh - self.stored) / max(abs(self.stored), 1e-300)


def seed_differences(stored: Iterable[Any], fresh: Iterable[Any], rtol: float = SEED_RTOL) -> list[Difference]:
    """Every metric and curve point of matching seeds that differs beyond ``rtol`` (SeedResult lists)."""
    out = []
    by_seed: Mapping[int, Any] = {s.seed: s for s in fresh}
    for s in stored:
        f = by_seed.get(s.seed)
        if f is None:
            continue
        for name, v in s.metrics.items():
            if not close(v, f.metrics.get(name), rtol=rtol):
                out.append(Difference(s.seed, name, v, f.metrics.get(name, math.nan)))
        for name, curve in s.curves.items():
            other = f.curves.get(name, [])
            for k, v in enumerate(curve):
                w = other[k] if k < len(other) else math.nan
                if not close(v, w, rtol=rtol):
                    out.append(Difference(s.seed, f"{name}[{k}]", v, w))
    return out


class PaperComparison(NamedTuple):
    """Two publications of one paper at one preset (say, from two machines), side by side."""

    slug: str
    machines: tuple[str, str]                 # the CPU model each ran on (from its provenance)
    verdicts: list[tuple[str, str, str]]      # (claim id, verdict here, verdict there); "missing" where absent
    compared: int                             # per-seed metrics and curve points of the seeds both ran
    differences: list[Difference]             # those beyond SEED_RTOL

    @property
    def agree(self) -> bool:
        """Every claim has the same verdict in both."""
        return all(here == there for _, here, there in self.verdicts)


def compare_published(here: Mapping[str, Any], there: Mapping[str, Any]) -> PaperComparison:
    """Compare two published summaries (``results/<slug>/<preset>.json`` as dicts) of the same paper: every
    claim's verdict, and every per-seed number of the seeds both ran against ``SEED_RTOL``. A training run on
    another machine is expected to differ in its numbers (module docstring) and to keep its verdicts."""
    from icml24.core.results import RunResult

    a, b = RunResult.from_dict(here), RunResult.from_dict(there)
    ours = {c["claim_id"]: c["verdict"] for c in here["claims"]}
    theirs = {c["claim_id"]: c["verdict"] for c in there["claims"]}
    verdicts = [(cid, ours.get(cid, "missing"), theirs.get(cid, "missing")) for cid in dict.fromkeys([*ours, *theirs])]
    both = {s.seed for s in b.seeds}
    compared = sum(len(s.metrics) + sum(len(c) for c in s.curves.values()) for s in a.seeds if s.seed in both)
    machines = (here.get("provenance", {}).get("cpu_model", "?"), there.get("provenance", {}).get("cpu_model", "?"))
    return PaperComparison(a.slug, machines, verdicts, compared, seed_differences(a.seeds, b.seeds))

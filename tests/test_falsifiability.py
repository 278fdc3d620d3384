"""Every claim can fail: on a null result it does not pass; and every claim can pass: with the paper's
effect planted in the published run, it passes where the run's power says it should (the positive control).

For each paper, the published QUICK run is taken and, claim by claim, the metric the claim reads is
replaced by its null (``icml24.core.claims.Null``): the baseline swapped with the method for an order
claim, a flat curve for a slope claim (both generic), or what the paper's ``claims.NULLS`` declares (a
trivial policy, a broken implementation) for the other kinds. A claim whose null still passes is a test
that cannot fail. Claims that are not checkable at QUICK (no band, data absent) are skipped.
"""

from __future__ import annotations

import pytest
from conftest import REPO

from icml24.core.claims import Null, Verdict, apply_null, default_null, evaluate, plant_effect
from icml24.core.power import FAIL_POWER
from icml24.core.registry import get_paper, list_papers
from icml24.core.results import RunResult, read_json

CASES = [(slug, claim.id) for slug in [*list_papers(), "_template"] for claim in get_paper(slug).claims]


def _null(paper, claim) -> Null | None:
    declared = getattr(paper.claims_module, "NULLS", {})
    return declared.get(claim.id) or default_null(claim)


def _checkable(slug: str, claim_id: str):
    """The paper, the claim, its published QUICK run and its verdict there (skips a claim not checkable)."""
    paper = get_paper(slug)
    claim = next(c for c in paper.claims if c.id == claim_id)
    published = RunResult.from_dict(read_json(REPO / "results" / slug / "quick.json"))
    real = evaluate(claim, published, "quick")
    if real.verdict is Verdict.NOT_CHECKABLE:
        pytest.skip(f"{slug} {claim_id} is not checkable at QUICK ({real.detail})")
    return paper, claim, published, real


@pytest.mark.parametrize("slug, claim_id", CASES)
def test_a_null_result_does_not_pass(slug, claim_id):
    paper, claim, published, real = _checkable(slug, claim_id)
    null = _null(paper, claim)
    assert null is not None, f"{slug} {claim_id} ({claim.kind}) declares no null in claims.NULLS"
    verdict = evaluate(claim, apply_null(published, null, claim.reads_curves), "quick")
    assert verdict.verdict in (Verdict.FAIL, Verdict.INCONCLUSIVE), \
        f"{slug} {claim_id} passes on its null ({null.why}): value {verdict.value}, band {verdict.band}"


def test_declared_nulls_name_real_claims_and_metrics():
    for slug in [*list_papers(), "_template"]:
        paper = get_paper(slug)
        ids = {c.id: c for c in paper.claims}
        for cid, null in getattr(paper.claims_module, "NULLS", {}).items():
            assert cid in ids, f"{slug}: NULLS names unknown claim {cid}"
            assert null.metric in ids[cid].needs, f"{slug} {cid}: the null replaces {null.metric}, not read by the claim"


@pytest.mark.parametrize("slug, claim_id", CASES)
def test_the_planted_paper_effect_passes_with_the_computed_power(slug, claim_id):
    """The positive control: the published run with the paper's effect planted (the method's per-seed
    values shifted so the statistic equals the effect, clipped to the metric's range) passes where the
    run's power is high, and is never a failure (its power is the run's power: it could not fail).

    The planted run's verdict is judged at the published run's power, not at a power recomputed on the
    planted run: where the metric's range clips the planted values (a baseline near its ceiling), planting
    again on the planted run shifts the unclipped seeds by the shortfall the clipping left, so that recomputed
    power overstates what the published run could see (slot_abstractor's C2b_sd at commit 68befed, the
    Transformer at 0.90 of a 1.0 ceiling; tests/core/test_power.py pins the case). Where the run's power is
    below FAIL_POWER the planted run may miss: a planted miss is then inconclusive, as the run's own would be."""
    paper, claim, published, real = _checkable(slug, claim_id)
    assert claim.effect is not None, f"{slug} {claim_id} declares no paper effect"
    planted = evaluate(claim, plant_effect(claim, published), "quick")
    if real.power >= FAIL_POWER:      # the run could see the effect (NaN power: it could not)
        assert planted.verdict is Verdict.PASS, \
            f"{slug} {claim_id}: power {real.power:.2f} but the planted effect does not pass ({planted.detail})"

"""Every registered paper (and the template, which is the fixture until papers land) meets the contract."""

from __future__ import annotations

import dataclasses
import math
import os
import re

import pytest
from conftest import REPO

from icml24.core.card import PaperCard
from icml24.core.claims import KINDS, Claim, Verdict
from icml24.core.compare import SEED_RTOL, close, seed_differences
from icml24.core.config import apply_overrides, check_knobs, config_hash, field_docs, to_dict
from icml24.core.publish import readme_block, render_results_block
from icml24.core.registry import code_files, get_paper, list_papers
from icml24.core.results import RunResult, SeedResult, dumps, read_json

PAPERS = list_papers() + ["_template"]
SMOKE_READS_SMOLLM2 = {"compressed_trust"}
"""The papers whose SMOKE loads the real SmolLM2 (the others' SMOKE uses a tiny random Llama or none)."""
README_SECTIONS = ("The claim", "What we reproduce", "Results", "Deviations from the paper",
                   "Notation map", "How to run", "Citation")


@pytest.fixture(scope="module", params=PAPERS)
def paper(request):
    return get_paper(request.param)


@pytest.fixture(scope="module")
def extras_installed(paper):
    """Skip a paper whose extra is missing, except under CI=true, where a missing extra is a failure
    (CI installs `.[dev,all]`, so a skip there would hide a paper that was never tested)."""
    from icml24.core.deps import install_hint, missing

    gone = missing(paper.card)
    if gone:
        message = f"{paper.slug} needs {', '.join(gone)}: {install_hint(paper.card)}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="module")
def smoke_runs(paper, extras_installed, tmp_path_factory, request):
    """Two SMOKE runs of seed 0 (for determinism) - computed once per paper - and the torch thread
    counts before and after (``run`` must restore what it changes). Both runs share an artefact cache
    (nothing is checkpointed, so the second run computes everything again): the first builds an
    artefact (an expert, a trained encoder), the second loads it, and the two must agree. SmolLM2's
    conversion, the one artefact several tests read, is built once per session (``smollm2_cache``)."""
    import torch

    from icml24.core.context import RunContext

    exp = paper.experiment
    cache = tmp_path_factory.mktemp(f"cache-{paper.slug}")
    if paper.slug in SMOKE_READS_SMOLLM2:
        request.getfixturevalue("smollm2_cache")(cache)
    ctx = RunContext(cache_dir=cache)
    outside = torch.get_num_threads()
    torch.set_num_threads(3)          # a count no run sets itself (make test starts torch at 1 thread)
    try:
        runs = exp.run(exp.SMOKE, 0, ctx), exp.run(exp.SMOKE, 0, ctx)
        after = torch.get_num_threads()
    finally:
        torch.set_num_threads(outside)
    return (*runs, (3, after))


def test_contract_names(paper):
    pkg = __import__(paper.module, fromlist=["__all__"])
    for name in pkg.__all__:
        assert getattr(pkg, name) is not None, name
    assert isinstance(paper.card, PaperCard)
    assert paper.card.slug == paper.slug or paper.slug not in list_papers()
    for name in ("Config", "SMOKE", "QUICK", "FULL", "run"):
        assert hasattr(paper.experiment, name), f"experiment.{name} missing"
    assert not hasattr(paper.claims_module, "check") or callable(paper.claims_module.check)
    assert paper.claims and all(isinstance(c, Claim) and c.kind in KINDS for c in paper.claims)
    assert len({c.id for c in paper.claims}) == len(paper.claims), "claim ids must be unique"


def test_presets_are_frozen_configs_with_docs(paper):
    cfg_type = paper.config_type
    assert dataclasses.is_dataclass(cfg_type) and cfg_type.__dataclass_params__.frozen
    for preset in ("smoke", "quick", "full"):
        assert type(paper.preset(preset)) is cfg_type, preset
    undocumented = [k for k, doc in field_docs(cfg_type).items() if not doc.strip()]
    assert not undocumented, f"fields without a doc: {undocumented}"
    assert len({config_hash(paper.preset(p)) for p in ("smoke", "quick", "full")}) == 3


def test_presets_satisfy_their_knob_rules(paper):
    for preset in ("smoke", "quick", "full"):
        check_knobs(paper.preset(preset))  # raises UserError naming the field
    validate = getattr(paper.configs, "validate", None)
    for preset in ("smoke", "quick"):  # FULL may need a data path the user gives (pcdeq: data=idx)
        if validate is not None:
            validate(paper.preset(preset))


def _bumped(value):
    """A different value of the same type, written as a command-line string."""
    if isinstance(value, bool):
        return str(not value).lower()
    if isinstance(value, int):
        return str(value + 1)
    if isinstance(value, float):
        return repr(value * 2 + 1)
    return None


def test_overrides_change_the_saved_config(paper):
    smoke = paper.preset("smoke")
    bumped = {k: _bumped(v) for k, v in dataclasses.asdict(smoke).items() if _bumped(v) is not None}
    assert bumped
    for name, raw in bumped.items():  # every field the command line can bump, one at a time
        changed = apply_overrides(smoke, [f"{name}={raw}"])
        assert to_dict(changed)[name] != to_dict(smoke)[name]
        assert {k: v for k, v in to_dict(changed).items() if k != name} == \
               {k: v for k, v in to_dict(smoke).items() if k != name}
        assert config_hash(changed) != config_hash(smoke)


def test_every_config_field_is_read_by_the_papers_code(paper):
    """A knob nothing reads changes the config hash and nothing else: every field is named by the code the
    run executes (or by ``validate``), as an attribute, a keyword or a string key."""
    code = "\n".join(p.read_text(encoding="utf-8") for p in code_files(paper.folder) if p.name != "config.py")
    config_py = paper.folder / "config.py"
    if config_py.is_file():
        code += config_py.read_text(encoding="utf-8").partition("def validate")[2]
    unread = [f.name for f in dataclasses.fields(paper.config_type)
              if not re.search(rf"\.{f.name}\b|[\"']{f.name}[\"']|\b{f.name}=", code)]
    assert unread == [], f"{paper.slug}: config fields no code reads: {unread}"


def _finite(seed_result: SeedResult) -> list[str]:
    bad = [k for k, v in seed_result.metrics.items() if not math.isfinite(v)]
    bad += [k for k, v in seed_result.curves.items() if not all(math.isfinite(x) for x in v)]
    return bad


def test_smoke_run_is_finite_and_has_every_claim_metric(paper, smoke_runs):
    first, _, _ = smoke_runs
    assert isinstance(first, SeedResult) and first.seed == 0
    assert not _finite(first), f"non-finite outputs: {_finite(first)}"
    for claim in paper.claims:
        have = first.curves if claim.reads_curves else first.metrics
        missing = [m for m in claim.needs if m not in have]
        optional = getattr(paper.claims_module, "OPTIONAL_METRICS", ())
        assert not [m for m in missing if m not in optional], f"{claim.id} needs {missing}"


def test_same_seed_same_numbers(smoke_runs):
    first, second, _ = smoke_runs
    assert first.metrics == second.metrics
    assert first.curves == second.curves


def test_run_restores_the_torch_thread_count(smoke_runs):
    before, after = smoke_runs[2]
    assert before == after, f"run left torch with {after} threads (was {before}): use ctx.threads(n)"


def test_check_returns_one_result_per_claim(paper, smoke_runs):
    result = RunResult(paper.slug, "smoke", to_dict(paper.preset("smoke")),
                       config_hash(paper.preset("smoke")), [smoke_runs[0]])
    out = paper.check(result, "smoke")
    assert [r.claim_id for r in out] == [c.id for c in paper.claims]
    for r in out:                            # no paper has a SMOKE band: one seed decides nothing
        assert r.verdict == Verdict.NOT_CHECKABLE and r.preset == "smoke", f"{r.claim_id}: {r.verdict} at SMOKE"


def test_every_claim_declares_the_papers_effect_and_its_metrics_ranges(paper):
    """The frame can tell a failed reproduction from a blind run only if each claim says what effect the
    paper reports (or, marked minimal, the smallest that supports its words) and where its metrics live."""
    for c in paper.claims:
        assert c.effect is not None, f"{paper.slug} {c.id}: declare effect=Effect(value, source) (the paper's effect)"
        read = (c.metric,) if c.kind == "slope" else c.needs  # a slope's x grid has no range to declare
        missing = [m for m in read if m not in c.ranges]
        assert not missing, f"{paper.slug} {c.id}: declare the valid range of {missing} in ranges= (PROB, CORR, ...)"


def test_published_values_lie_in_their_declared_ranges(paper):
    summary = RunResult.from_dict(read_json(REPO / "results" / paper.slug / "quick.json"))
    for c in paper.claims:
        for name, (lo, hi) in c.ranges.items():
            rows = [s.curves.get(name, []) if c.reads_curves else [s.metrics.get(name, math.nan)]
                    for s in summary.seeds]
            vals = [v for row in rows for v in row if not math.isnan(v)]
            assert all(lo <= v <= hi for v in vals), f"{paper.slug} {c.id}: {name} outside its range [{lo}, {hi}]"


def test_readme_sections_and_results_block(paper):
    text = paper.readme.read_text(encoding="utf-8")
    for section in README_SECTIONS:
        assert f"\n## {section}" in text, f"README lacks section '## {section}'"
    summary_path = REPO / "results" / paper.slug / "quick.json"
    assert summary_path.is_file(), f"run `icml24 run {paper.slug}` and commit {summary_path}"
    summary = read_json(summary_path)
    assert summary["preset"] == "quick"
    assert summary["config_hash"] == config_hash(paper.preset("quick")), "quick.json is from another config"
    assert summary["provenance"].get("code_hash") == paper.code_hash, \
        f"results/{paper.slug}/quick.json is from older code: rerun `icml24 run {paper.slug}`"
    assert readme_block(paper.readme) == render_results_block(summary)


def test_published_claims_match_the_current_claims_code(paper):
    """The verdicts in quick.json are what claims.py says about its stored seeds today."""
    summary = read_json(REPO / "results" / paper.slug / "quick.json")
    fresh = [c.to_dict() for c in paper.check(RunResult.from_dict(summary), "quick")]
    stored = RunResult.from_dict(summary).claims
    key = ("claim_id", "verdict", "band", "statement")
    assert [{k: c[k] for k in key} for c in fresh] == [{k: c[k] for k in key} for c in stored], \
        f"claims changed since results/{paper.slug}/quick.json was published: rerun `icml24 run {paper.slug}`"
    for f, s in zip(fresh, stored):
        # Recomputed from the same stored seeds: equal up to summation order (another CPU's SIMD
        # path sums in another order), so relative STAT_RTOL, not bit for bit (core.compare).
        assert close(f["value"], s["value"]) and close(f["low"], s["low"]) and close(f["high"], s["high"]), \
            f"{f['claim_id']}: recomputed {f['value']} vs published {s['value']}"
        # the power is a Monte Carlo estimate on the same numbers: the same on this machine, and one
        # resampled run in 2500 (a quantile summed in another order) may flip on another one
        assert close(f["power"], s.get("power"), rtol=0, atol=0.002), \
            f"{f['claim_id']}: recomputed power {f['power']} vs published {s.get('power')}"


@pytest.mark.slow
def test_quick_from_scratch_reproduces_the_published_numbers(paper, tmp_path):
    """`make check`: QUICK rerun in a fresh store gives exactly the committed per-seed metrics and claims."""
    from icml24.core.store import run_preset

    summary = RunResult.from_dict(read_json(REPO / "results" / paper.slug / "quick.json"))
    fresh = run_preset(paper, "quick", tmp_path)
    # Verdicts must agree on any machine; per-seed numbers are bit-identical only where they were
    # published (same host and packages), and are reported, not asserted, elsewhere (core.compare).
    assert [(c["claim_id"], c["verdict"]) for c in fresh.claims] == \
           [(c["claim_id"], c["verdict"]) for c in summary.claims]
    keys = ("host", "cpu_model", "platform", "packages")
    same_machine = all(fresh.provenance.get(k) == summary.provenance.get(k) for k in keys)
    if same_machine:
        def numbers(run):  # JSON text, so that NaN compares equal to NaN
            return [dumps({"seed": s.seed, "metrics": s.metrics, "curves": s.curves}) for s in run.seeds]

        assert numbers(fresh) == numbers(summary)
    else:
        diffs = seed_differences(summary.seeds, fresh.seeds)
        print(f"{paper.slug}: {len(diffs)} per-seed numbers differ beyond {SEED_RTOL:g} on this machine"
              + (f" (worst relative {max(d.rel for d in diffs):.3g})" if diffs else ""))

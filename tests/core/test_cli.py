"""The CLI: every command answers --help, user errors are one line + exit 2 + nothing written."""

from __future__ import annotations

import json
import re

import pytest
from conftest import run_cli


@pytest.mark.parametrize("cmd", ["list", "show", "run", "check", "reproduce", "heldout", "compare", "report"])
def test_every_command_has_help(cmd):
    out = run_cli(cmd, "--help")
    assert out.returncode == 0 and "usage:" in out.stdout


def test_list_imports_neither_torch_nor_numpy(tmp_path):
    code = ("import sys\nfrom icml24.cli import main\ntry:\n    main(['list'])\nexcept SystemExit as e:\n"
            "    assert e.code == 0, e.code\nheavy = [m for m in ('torch', 'numpy', 'scipy') if m in sys.modules]\n"
            "print('HEAVY', heavy)")
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "HEAVY []" in out.stdout


BAD = [
    (["run", "no_such_paper"], "unknown paper 'no_such_paper'"),
    (["run", "_template", "--set", "nope=1"], "unknown config key 'nope'"),
    (["run", "_template", "--set", "reps=many"], "not an integer"),
    (["run", "_template", "--set", "reps"], "key=value"),
    (["run", "_template", "--seeds", "5-2"], "end is before start"),
    (["run", "_template", "--seeds", "x"], "bad seed list"),
    (["run", "_template", "--preset", "huge"], "unknown preset"),
    (["run", "_template", "--executor", "dask"], "unknown executor"),
    (["run", "_template", "--device", "cuda"], "no device setting"),
    (["run", "_template", "--bogus-flag"], "unrecognized arguments: --bogus-flag"),
    (["check", "_template", "--from", "does/not/exist"], "cannot read run results"),
    (["check", "no_such_paper"], "unknown paper"),
    (["show", "no_such_paper"], "unknown paper"),
    (["reproduce", "--only", "nope", "--preset", "smoke"], "unknown paper"),
    (["report", "--preset", "huge"], "unknown preset"),
    (["compare", "does/not/exist"], "no such results folder"),
    (["compare", ".", "--preset", "huge"], "unknown preset"),
]


@pytest.mark.parametrize("args, words", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_user_errors_are_one_line_exit_2_and_write_nothing(tmp_path, args, words):
    out = run_cli(*args, cwd=tmp_path)
    assert out.returncode == 2, (out.stdout, out.stderr)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and words in lines[0], out.stderr
    assert list(tmp_path.iterdir()) == [], "a failed command wrote files"


def test_unreadable_run_dir_is_a_user_error(tmp_path):
    bad = tmp_path / "run"
    bad.mkdir()
    (bad / "result.json").write_text("{ truncated")
    out = run_cli("check", "_template", "--from", str(bad), cwd=tmp_path)
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1


def test_run_saves_overrides_then_check_reads_the_run(tmp_path):
    out = run_cli("run", "_template", "--preset", "smoke", "--set", "reps=60", "--seeds", "0-1",
                  "--out", "runs", "--results", "results", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (rdir,) = (tmp_path / "runs" / "_template" / "smoke").iterdir()
    assert json.loads((rdir / "config.json").read_text())["reps"] == 60
    for name in ("provenance.json", "claims.json", "metrics.jsonl", "result.json", "figures/rmse_vs_n.png"):
        assert (rdir / name).is_file(), name
    prov = json.loads((rdir / "provenance.json").read_text())
    assert prov["packages"]["numpy"] and prov["device"] == "cpu" and prov["wall_time_s"] > 0
    assert len((rdir / "metrics.jsonl").read_text().splitlines()) == 2
    assert not (tmp_path / "results").exists(), "a run with --set must not be published"
    chk = run_cli("check", "_template", "--from", str(rdir), cwd=tmp_path)
    assert chk.returncode == 0 and "C1" in chk.stdout


def test_check_exits_1_on_a_failed_claim_not_on_an_inconclusive_one(tmp_path):
    # 3 replications per n and 3 seeds: the claims that miss their bands (C1 - C4) had too little power to
    # see the paper's effect, so they are inconclusive and `check` exits 0 (the run itself succeeds).
    out = run_cli("run", "_template", "--preset", "quick", "--set", "reps=3", "--set", "coverage_n=2",
                  "--seeds", "0-2", "--out", "runs", "--results", "results", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (rdir,) = (tmp_path / "runs" / "_template" / "quick").iterdir()
    chk = run_cli("check", "_template", "--from", str(rdir), cwd=tmp_path)
    assert chk.returncode == 0 and "inconclusive" in chk.stdout and "fail" not in chk.stdout
    # the same run with an estimator that ignores the data (C5's null: bias -1, where the paper's unbiased
    # estimator would pass with power 1): a real failure, exit 1
    run = json.loads((rdir / "result.json").read_text())
    for seed in run["seeds"]:
        seed["metrics"]["estimate"] = 0.0
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(run))
    chk = run_cli("check", "_template", "--from", str(broken), cwd=tmp_path)
    assert chk.returncode == 1 and "fail" in chk.stdout


def test_show_lists_claims_and_every_config_field():
    out = run_cli("show", "_template")
    assert out.returncode == 0
    for word in ("C1", "C6", "n_values", "stream_length", "sample sizes"):
        assert word in out.stdout


def test_every_paper_shows_in_80_columns_with_its_knobs_valid_values(monkeypatch, capsys):
    from icml24.cli import show
    from icml24.core.config import valid_values
    from icml24.core.registry import get_paper, list_papers

    monkeypatch.setenv("COLUMNS", "80")
    for slug in list_papers():
        show(slug)
        out = capsys.readouterr().out
        assert "…" not in out and max(map(len, out.splitlines())) <= 80, slug
        assert not [line for line in out.splitlines() if line.endswith(" ")], slug
        flat = " ".join(out.split())  # a wrapped line joined back
        for name, valid in valid_values(get_paper(slug).config_type).items():
            assert f"{name} = " in flat and (not valid or f"valid: {valid}" in flat), (slug, name)
        assert out.count("one of") == len([v for v in valid_values(get_paper(slug).config_type).values()
                                           if "one of" in v]), slug  # a Literal with choices says it once


def test_check_prints_wrapped_claims_below_120_columns_and_a_table_above(monkeypatch, capsys):
    from pathlib import Path

    from icml24.cli import check

    results = Path(__file__).resolve().parents[2] / "results"
    monkeypatch.setenv("COLUMNS", "80")
    check("ranking_bandit", None, results, False)
    narrow = capsys.readouterr().out
    assert "…" not in narrow and max(map(len, narrow.splitlines())) <= 80
    assert re.search(r"^C3 \(slope\) (pass|fail|inconclusive)", narrow, flags=re.M), narrow
    assert "pass band CI within (0.25, 0.75)" in " ".join(narrow.split())
    monkeypatch.setenv("COLUMNS", "160")
    check("ranking_bandit", None, results, False)
    wide = capsys.readouterr().out
    assert "┃ id" in wide and max(map(len, wide.splitlines())) <= 160


@pytest.mark.parametrize("slug", ["_template", "compressed_trust"])
def test_show_fits_80_columns_in_a_pipe_and_lists_valid_values(slug):
    out = run_cli("show", slug)  # captured: a pipe, where rich uses 80 columns
    assert out.returncode == 0 and "…" not in out.stdout  # rich cuts a cell with an ellipsis
    assert max(map(len, out.stdout.splitlines())) <= 80
    assert "valid: >= 1" in out.stdout or "valid: > 0" in out.stdout


def test_reproduce_at_smoke_publishes_nothing(tmp_path):
    """SMOKE is the tests' size: `reproduce --preset smoke` runs and reports but, like `run`, never publishes."""
    out = run_cli("reproduce", "--preset", "smoke", "--only", "_template", "--out", "runs", "--results", "results",
                  "--report", "report", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "report" / "index.html").is_file() and list((tmp_path / "runs" / "_template").iterdir())
    assert not list(tmp_path.glob("results/**/*.json")) and "published:" not in out.stdout
    assert re.search(r"time: _template \[smoke\] 1 seeds, \d+ s of seed time, finished 0:\d\d into the run", out.stdout)


def test_heldout_prints_its_verdicts_in_80_columns(tmp_path, monkeypatch, capsys):
    from conftest import REPO

    from icml24 import cli
    from icml24.core import results as R

    monkeypatch.setenv("ICML24_EXTRA_PAPERS", "stages=frame_fixtures.stages")
    monkeypatch.syspath_prepend(str(REPO / "tests" / "fixtures"))
    monkeypatch.setattr(R, "git_sha", lambda cwd=None, paths=None: "abc")  # publishes whatever the tree's state
    monkeypatch.setenv("COLUMNS", "80")
    assert cli.run("stages", "quick", None, [], "serial", None, None, None, tmp_path / "runs", tmp_path / "results",
                   1000, False) == 0
    capsys.readouterr()
    code = cli.heldout("quick", "serial", None, None, "stages", None, 1000, tmp_path / "held", tmp_path / "results",
                       1000, False)
    out = capsys.readouterr().out
    assert code == 0 and "…" not in out and max(map(len, out.splitlines())) <= 80
    assert "quick: published seeds vs seeds + 1000" in out and "stages C1: agree; published not checkable" in out
    assert "0 verdict(s) differ" in out


def test_the_executor_order_reads_each_papers_published_seed_times(tmp_path):
    """reproduce submits the longest runs' seeds first: a first seed's estimate is the longest wall time of the
    published run's seeds, another seed's their median; a paper never published (or with an unreadable summary)
    counts as the longest."""
    import math

    from icml24.cli import _published_seed_seconds

    (tmp_path / "pcdeq").mkdir()
    (tmp_path / "pcdeq" / "quick.json").write_text(
        json.dumps({"seeds": [{"seed": i, "wall_time": t} for i, t in enumerate((9.0, 1.0, 4.0))]}))
    (tmp_path / "brf").mkdir()
    (tmp_path / "brf" / "quick.json").write_text("{not json")

    def seconds(slug):
        return _published_seed_seconds(tmp_path, slug, "quick")

    assert seconds("pcdeq") == (9.0, 4.0)  # the first seed (artefact builds): the longest; others: median
    assert seconds("brf") == (math.inf, math.inf) == seconds("acpo")


def test_reproduce_prints_its_speed_against_the_published_seed_times(capsys):
    """Per paper and over every seed: this call's seed times over the published run's, read before the call
    (a summary without some seed, or none, adds nothing); so that a slow hour is told from a slow code change."""
    from types import SimpleNamespace

    from icml24.cli import _console, _print_times
    from icml24.core.results import SeedResult

    def outcome(slug, times):
        seeds = [SeedResult(i, {}, {}, wall_time=t) for i, t in enumerate(times)]
        result = SimpleNamespace(seeds=seeds, provenance={"elapsed_s": 61})
        return SimpleNamespace(result=result, request=SimpleNamespace(paper=SimpleNamespace(slug=slug), preset="quick"),
                               skipped=0)

    published = {"a": {0: 2.0, 1: 4.0}, "b": {7: 1.0}}
    _print_times(_console(), [outcome("a", (3.0, 4.0, 9.0)), outcome("b", (1.0,))], published)
    out = capsys.readouterr().out
    assert "time: a [quick] 3 seeds, 16 s of seed time, finished 1:01 into the run, 1.25x the published seed times" in out
    assert "time: b [quick] 1 seeds, 1 s of seed time, finished 1:01 into the run\n" in out     # seed 0 never published
    assert "speed: the seeds took a median 1.25x (1.00-1.50) their published wall times (2 seeds)" in out


def test_compare_puts_two_publications_side_by_side(tmp_path, capsys):
    """Two results folders holding one paper's published summary: identical numbers and verdicts agree (exit
    0); a per-seed number moved beyond SEED_RTOL and a verdict changed are named, with exit 1; a paper published
    in one folder only is named as such."""
    import shutil

    from conftest import REPO

    from icml24 import cli
    from icml24.core.compare import compare_published

    here, there = tmp_path / "here", tmp_path / "there"
    for folder in (here, there):
        (folder / "pcdeq").mkdir(parents=True)
        shutil.copy(REPO / "results" / "pcdeq" / "quick.json", folder / "pcdeq" / "quick.json")
    (here / "embodied_ai").mkdir()
    shutil.copy(REPO / "results" / "embodied_ai" / "quick.json", here / "embodied_ai" / "quick.json")
    summary = json.loads((there / "pcdeq" / "quick.json").read_text())
    same = compare_published(summary, summary)
    assert same.agree and same.differences == [] and same.compared > 0
    assert cli.compare(there, "pcdeq", "quick", here) == 0
    assert "pcdeq: 8 of 8 verdicts agree; 0 of" in " ".join(capsys.readouterr().out.split())

    seed = summary["seeds"][1]
    name = sorted(seed["metrics"])[0]
    seed["metrics"][name] = seed["metrics"][name] * (1 + 1e-3) + 1e-3
    summary["claims"][0]["verdict"] = "fail" if summary["claims"][0]["verdict"] != "fail" else "pass"
    (there / "pcdeq" / "quick.json").write_text(json.dumps(summary))
    c = compare_published(json.loads((here / "pcdeq" / "quick.json").read_text()), summary)
    assert not c.agree and [(d.seed, d.name) for d in c.differences] == [(seed["seed"], name)]
    assert cli.compare(there, "pcdeq,embodied_ai", "quick", here) == 1
    out = " ".join(capsys.readouterr().out.split())
    cid = summary["claims"][0]["claim_id"]
    assert "pcdeq: 7 of 8 verdicts agree; 1 of" in out and f"seed {seed['seed']} {name}" in out
    assert f"{cid}: " in out and "embodied_ai: only in" in out and "1 paper(s) with a verdict that differs" in out

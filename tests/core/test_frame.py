"""The frame for heavy papers: extras, run context (threads, stage checkpoints, artefact cache),
user faults (never retried, nothing written), path knobs checked up front, and the code hash."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import REPO, run_cli

from icml24.core import testing
from icml24.core.context import RunContext, torch_threads
from icml24.core.errors import UserError
from icml24.core.executors import execute
from icml24.core.registry import code_files, get_paper
from icml24.core.results import read_json
from icml24.core.store import RunRequest, SeedSeconds, execute_runs

FIXTURES = REPO / "tests" / "fixtures"
EXTRA = "stages=frame_fixtures.stages,needs_extra=frame_fixtures.needs_extra"


@pytest.fixture
def fixture_papers(monkeypatch):
    monkeypatch.setenv("ICML24_EXTRA_PAPERS", EXTRA)
    monkeypatch.syspath_prepend(str(FIXTURES))


def _env(log: Path | None = None, fixtures: Path = FIXTURES) -> dict:
    env = {"ICML24_EXTRA_PAPERS": EXTRA, "PYTHONPATH": os.pathsep.join([str(fixtures), os.environ.get("PYTHONPATH", "")])}
    if log is not None:
        env["STAGES_LOG"] = str(log)
    return env


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*")) if root.exists() else []


# -- 1. per-paper dependencies -----------------------------------------------------------------------
def test_missing_extra_is_one_line_exit_2_and_nothing_written(tmp_path):
    out = run_cli("run", "needs_extra", "--preset", "smoke", "--out", str(tmp_path / "runs"),
                  "--results", str(tmp_path / "results"), env=_env())
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "no_such_module_xyz" in lines[0] and "pip install 'icml24[llm]'" in lines[0]
    assert not (tmp_path / "runs").exists() and not (tmp_path / "results").exists()


def test_list_and_show_work_without_the_extra_and_without_torch():
    code = ("import sys; from icml24.cli import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n    assert e.code == 0, e.code\n"
            "heavy = [m for m in ('torch', 'no_such_module_xyz', 'transformers') if m in sys.modules]\n"
            "assert not heavy, heavy\n")
    for args in (["list"], ["show", "needs_extra"]):
        out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                             env={**os.environ, **_env()}, timeout=60)
        assert out.returncode == 0, out.stderr
    assert "Fixture: a paper whose extra is missing" in out.stdout


# -- 2. run context ----------------------------------------------------------------------------------
def test_thread_scope_restores_the_previous_count_even_on_error():
    outside = torch.get_num_threads()
    torch.set_num_threads(3)          # a count the scopes below never set (make test starts torch at 1 thread)
    try:
        with pytest.raises(RuntimeError):
            with torch_threads(1):
                assert torch.get_num_threads() == 1
                raise RuntimeError("boom")
        assert torch.get_num_threads() == 3
        with torch_threads(0):  # 0: leave the setting alone
            assert torch.get_num_threads() == 3
    finally:
        torch.set_num_threads(outside)


def test_stage_restores_generator_state_on_resume(tmp_path, fixture_papers):
    exp = get_paper("stages").experiment
    plain = exp.run(exp.SMOKE, 3)
    ctx = RunContext(workdir=tmp_path / "work", cache_dir=tmp_path / "cache", code_hash="c1")
    first = exp.run(exp.SMOKE, 3, ctx)
    (tmp_path / "work" / "s2.stage.pkl").unlink()  # as if killed during the last stage
    resumed = exp.run(exp.SMOKE, 3, ctx)
    assert plain.metrics == first.metrics == resumed.metrics and plain.curves == resumed.curves
    stale = RunContext(workdir=tmp_path / "work", cache_dir=tmp_path / "cache", code_hash="c2")
    assert exp.run(exp.SMOKE, 3, stale).metrics == plain.metrics  # older-code checkpoints are recomputed


def _stage_log(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def test_seed_resumes_from_its_checkpoint_after_sigkill(tmp_path):
    args = ["run", "stages", "--preset", "smoke", "--set", "sleep=1.5", "--results", str(tmp_path / "results")]
    killed, clean = tmp_path / "killed", tmp_path / "clean"
    log = tmp_path / "killed.log"
    proc = subprocess.Popen([sys.executable, "-m", "icml24.cli", *args, "--out", str(killed)],
                            env={**os.environ, **_env(log)}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list(killed.rglob("s1.stage.pkl")):
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the seed finished before it could be killed"
    assert not list(killed.rglob("seed-0.json")), "killed mid-seed: no seed file yet"
    before = _stage_log(log)
    # killed after s1's checkpoint was written: during s2 (or in the microseconds before s2 logged its start)
    assert before[:3] == ["build table 3", "stage s0 seed 0", "stage s1 seed 0"]
    assert before[3:] in ([], ["stage s2 seed 0"])

    again = run_cli(*args, "--out", str(killed), env=_env(log))
    assert again.returncode == 0, again.stderr
    # stages s0 and s1 came from their checkpoints; only s2 ran again; the cached table was not rebuilt
    assert _stage_log(log)[len(before):] == ["stage s2 seed 0"]
    assert not list(killed.rglob("*.stage.pkl")), "checkpoints are removed once the seed file is written"
    ref = run_cli(*args, "--out", str(clean), env=_env(tmp_path / "clean.log"))
    assert ref.returncode == 0, ref.stderr

    def seed0(root):
        (rdir,) = (root / "stages" / "smoke").iterdir()
        s = read_json(rdir / "seeds" / "seed-0.json")
        return s["metrics"], s["curves"]

    assert seed0(killed) == seed0(clean)


def test_artefact_is_shared_across_seeds_and_rebuilt_when_the_code_changes(tmp_path, monkeypatch):
    fixtures = tmp_path / "fixtures"
    # a private copy under another package name, so that its code can change without touching the repo
    shutil.copytree(FIXTURES / "frame_fixtures", fixtures / "frame_fixtures_copy")
    log = tmp_path / "log"
    monkeypatch.setenv("STAGES_LOG", str(log))
    monkeypatch.setenv("ICML24_EXTRA_PAPERS", "stages=frame_fixtures_copy.stages")
    monkeypatch.syspath_prepend(str(fixtures))
    paper = get_paper("stages")
    assert paper.folder == fixtures / "frame_fixtures_copy" / "stages"
    req = RunRequest(paper, "quick", paper.preset("smoke"), (0, 1, 2))
    (out,) = execute_runs([req], root=tmp_path / "runs")
    assert not out.failed and _stage_log(log).count("build table 3") == 1
    (cached,) = [d for d in (tmp_path / "runs" / "_cache" / "stages").iterdir() if d.is_dir()]  # (and its lock file)
    assert read_json(cached / "key.json")["inputs"] == {"table_size": 3}

    old = paper.code_hash
    with open(paper.folder / "experiment.py", "a") as fh:
        fh.write("\n# a code change\n")
    new_paper = get_paper("stages")
    assert new_paper.code_hash != old
    (out,) = execute_runs([RunRequest(new_paper, "quick", new_paper.preset("smoke"), (0, 1, 2))], root=tmp_path / "runs")
    assert not out.failed and out.skipped == 0  # the seeds of older code run again ...
    assert _stage_log(log).count("build table 3") == 2  # ... and the artefact is rebuilt once, for all of them
    assert len([d for d in (tmp_path / "runs" / "_cache" / "stages").iterdir() if d.is_dir()]) == 2


def test_each_run_is_finalized_when_its_seeds_are_in_and_longer_runs_start_first(tmp_path, fixture_papers):
    """Two runs in one call (as reproduce makes them): the one estimated longer has its first seed submitted
    first (core.store.schedule), and it is finalized (claims, figures, result.json) as soon as its last seed is
    in, while the other run still has a seed to go."""
    from icml24.core.config import apply_overrides

    paper = get_paper("stages")
    short = RunRequest(paper, "smoke", paper.preset("smoke"), (0, 1))
    long = RunRequest(paper, "smoke", apply_overrides(paper.preset("smoke"), ["table_size=5"]), (0, 1, 2))
    events = []
    outcomes = execute_runs([short, long], root=tmp_path / "runs", on_event=lambda k, p: events.append((k, p)),
                            seed_seconds=lambda r: SeedSeconds(2.0, 2.0) if r is long else SeedSeconds(1.0, 1.0))
    assert [o.request for o in outcomes] == [short, long] and not any(o.failed for o in outcomes)
    done = [(i, out.unit.seed) for k, p in events if k == "done" for i, out in [p]]
    assert done == [(1, 0), (0, 0), (1, 1), (1, 2), (0, 1)]
    order = [(k, p if k == "finalize" else p[0]) for k, p in events if k in ("done", "finalize")]
    assert order == [("done", 1), ("done", 0), ("done", 1), ("done", 1), ("finalize", 1), ("done", 0),
                     ("finalize", 0)]
    assert all((o.run_dir / "result.json").is_file() for o in outcomes)


def test_a_user_fault_keeps_the_runs_already_finalized_and_removes_the_others(tmp_path, fixture_papers):
    """The faulty run was created first (it made the store's root), the good one ran first and was finalized:
    the good run stays whole, the faulty run's folder goes, and asking for one run twice is refused up front."""
    from icml24.core.config import apply_overrides

    paper = get_paper("stages")
    bad = RunRequest(paper, "smoke", apply_overrides(paper.preset("smoke"), ["fault=user"]), (0,))
    good = RunRequest(paper, "smoke", paper.preset("smoke"), (0,))
    root = tmp_path / "runs"
    with pytest.raises(UserError, match="stages seed 0: fixture: bad knob"):
        execute_runs([bad, good], root=root, seed_seconds=lambda r: SeedSeconds(2.0, 2.0) if r is good
                     else SeedSeconds(1.0, 1.0))
    (kept,) = [d for d in (root / "stages" / "smoke").iterdir()]
    assert kept.name == good.hash and (kept / "result.json").is_file()
    with pytest.raises(UserError, match=r"the same run asked for twice: stages \[smoke\]"):
        execute_runs([good, RunRequest(paper, "smoke", paper.preset("smoke"), (1,))], root=tmp_path / "other")
    assert not (tmp_path / "other").exists()


# -- 3. Ray places units with the resources they ask for -------------------------------------------
@pytest.mark.ray
@pytest.mark.usefixtures("ray_turn")
def test_ray_requests_a_gpu_per_cuda_unit_and_cpus_from_threads():
    ray = pytest.importorskip("ray")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=4, num_gpus=1, include_dashboard=False, log_to_driver=False)
    try:
        paper = get_paper("copying")
        full = RunRequest(paper, "full", paper.preset("full"), (0,))  # FULL: device cuda, threads 0 -> 1 CPU
        quick = RunRequest(paper, "quick", paper.preset("quick"), (0,))
        (gpu_unit,), (cpu_unit,) = full.units([0]), quick.units([0])
        assert (gpu_unit.num_gpus, gpu_unit.num_cpus) == (1.0, 1.0)
        assert (cpu_unit.num_gpus, cpu_unit.num_cpus) == (0.0, float(paper.preset("quick").threads))
        outs = {o.unit.preset: o for o in execute([gpu_unit, cpu_unit], fn=testing.assigned_resources, executor="ray")}
        assert outs["full"].result == {"CPU": 1.0, "GPU": 1.0}
        assert outs["quick"].result == {"CPU": 1.0}
    finally:
        if started:
            ray.shutdown()


# -- 4. user faults: never retried, nothing written --------------------------------------------------
@pytest.mark.parametrize("fn, kind", [(testing.raise_user_error, "UserError"),
                                      (testing.raise_missing_file, "FileNotFoundError"),
                                      (testing.raise_missing_module, "ModuleNotFoundError")])
def test_user_faults_are_not_retried(fn, kind):
    for name in ("serial", "process"):
        (out,) = list(execute([1], fn=fn, executor=name, workers=1))
        assert out.attempts == 1 and out.user_error and kind in out.error


@pytest.mark.parametrize("fault", ["user", "missing_file", "missing_module"])
def test_a_user_fault_in_a_seed_stops_the_run_and_leaves_nothing(tmp_path, fault):
    log = tmp_path / "log"
    out = run_cli("run", "stages", "--preset", "smoke", "--set", f"fault={fault}", "--out", str(tmp_path / "runs"),
                  "--results", str(tmp_path / "results"), env=_env(log))
    assert out.returncode == 2, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and out.stderr.startswith("error: stages seed 0:")
    assert _files(tmp_path / "runs") == [] and not (tmp_path / "results").exists()


def test_a_worker_fault_is_retried_and_reported(tmp_path, fixture_papers):
    paper = get_paper("stages")
    from icml24.core.config import apply_overrides

    req = RunRequest(paper, "smoke", apply_overrides(paper.preset("smoke"), ["fault=worker"]), (0,))
    (out,) = execute_runs([req], root=tmp_path / "runs")
    assert out.result is None and "worker fault" in out.failed[0]
    saved = (out.run_dir / "errors" / "seed-0.txt").read_text()
    assert saved == out.failed[0] and saved.startswith("Traceback")  # the full traceback, kept in the run folder


def test_a_deterministic_fault_is_tried_once_and_its_type_and_message_are_printed(tmp_path, fixture_papers):
    out = run_cli("run", "stages", "--preset", "smoke", "--set", "fault=overflow", "--out", str(tmp_path / "runs"),
                  "--results", str(tmp_path / "results"), env=_env(tmp_path / "log"))
    assert out.returncode == 1, out.stderr
    text = out.stdout + out.stderr
    assert ("diverged (its numbers became NaN or infinite) after 1 attempt (not retried: it fails the same way every "
            "time): OverflowError: fixture: overflow") in " ".join(text.split())  # a numerical breakdown, tried once
    (saved,) = (tmp_path / "runs").rglob("errors/seed-0.txt")
    assert "Traceback" in saved.read_text() and "OverflowError: fixture: overflow" in saved.read_text()


def test_a_shape_error_is_tried_once(fixture_papers):
    from icml24.core.config import apply_overrides
    from icml24.core.executors import execute

    paper = get_paper("stages")
    req = RunRequest(paper, "smoke", apply_overrides(paper.preset("smoke"), ["fault=shape"]), (0,))
    (out,) = execute(req.units([0]))  # a RuntimeError about shapes fails the same way every time
    assert out.attempts == 1 and "shapes cannot be multiplied" in out.error
    worker = RunRequest(paper, "smoke", apply_overrides(paper.preset("smoke"), ["fault=worker"]), (0,))
    assert [o.attempts for o in execute(worker.units([0]))] == [2]  # any other RuntimeError: retried once


def test_a_seed_that_raises_a_numerical_breakdown_is_diverged_and_the_claims_not_checkable(tmp_path, fixture_papers):
    import json

    from icml24.core.config import apply_overrides

    paper = get_paper("stages")
    req = RunRequest(paper, "smoke", apply_overrides(paper.preset("smoke"), ["fault=singular_odd"]), (0, 1, 2))
    (out,) = execute_runs([req], root=tmp_path / "runs")
    assert out.result is not None and list(out.failed) == [1]
    assert out.result.diverged == {"1": ["raised numpy.linalg.LinAlgError: Singular matrix"]}
    saved = json.loads((out.run_dir / "result.json").read_text())
    assert saved["diverged"] == out.result.diverged and [s["seed"] for s in saved["seeds"]] == [0, 2]
    (c1,) = saved["claims"]  # measured on seeds 0 and 2 it would pass: without seed 1 it is not the run's claim
    assert c1["verdict"] == "not checkable" and c1["detail"].startswith("seed 1 diverged (raised numpy.linalg.LinAlgError")
    # every seed diverged: result.json is still written, every claim not checkable
    (out,) = execute_runs([RunRequest(paper, "smoke", req.config, (1,))], root=tmp_path / "runs2")
    assert out.result is not None and (out.run_dir / "result.json").is_file()
    assert [c["verdict"] for c in out.result.claims] == ["not checkable"]
    assert not (out.run_dir / "errors" / "figures.txt").exists()


def test_figures_that_cannot_be_drawn_leave_the_result_and_a_traceback(tmp_path, fixture_papers):
    paper = get_paper("stages")
    from icml24.core.config import apply_overrides

    req = RunRequest(paper, "smoke", apply_overrides(paper.preset("smoke"), ["fault=figure"]), (0,))
    (out,) = execute_runs([req], root=tmp_path / "runs")
    assert out.result is not None and (out.run_dir / "result.json").is_file()
    assert "fixture: figure of diverged numbers" in (out.run_dir / "errors" / "figures.txt").read_text()


def test_data_path_knob_is_checked_before_anything_runs(tmp_path):
    start = time.perf_counter()
    out = run_cli("run", "brf", "--preset", "smoke", "--set", "ecg_path=/nonexistent", "--out", str(tmp_path / "runs"),
                  "--results", str(tmp_path / "results"))
    assert out.returncode == 2 and out.stderr.strip() == "error: ecg_path=/nonexistent: no such directory"
    assert time.perf_counter() - start < 30 and not (tmp_path / "runs").exists()


def test_missing_cuda_is_a_user_error_when_torch_has_none(tmp_path):
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    out = run_cli("run", "copying", "--preset", "smoke", "--device", "cuda", "--out", str(tmp_path / "runs"))
    assert out.returncode == 2 and "no CUDA device" in out.stderr and not (tmp_path / "runs").exists()


# -- 5. the code hash covers the core modules that compute numbers -----------------------------------
def test_code_hash_covers_imported_core_and_common_modules():
    names = {p.relative_to(REPO / "src" / "icml24").as_posix() for p in code_files(get_paper("neural_td").folder)}
    assert "core/stats.py" in names and "core/context.py" in names
    assert "core/results.py" not in names and "core/config.py" not in names  # plumbing
    brf = {p.name for p in code_files(get_paper("brf").folder)}
    assert {"wheel_data.py", "nn.py"} <= brf and "claims.py" not in brf and "card.py" not in brf


def test_unknown_device_is_a_user_error():
    from icml24.core.context import check_device

    with pytest.raises(UserError, match="unknown device"):
        check_device("tpu")


def test_show_imports_no_torch_for_any_paper():
    """`icml24 show` reads configs from each paper's light config.py: torch stays unimported (fast)."""
    from icml24.core.registry import list_papers

    code = ("import sys\nfrom icml24.cli import main\n"
            "for slug in sys.argv[1:]:\n"
            "    try:\n        main(['show', slug])\n    except SystemExit as e:\n        assert e.code == 0, (slug, e.code)\n"
            "assert 'torch' not in sys.modules, 'show imported torch'\n")
    out = subprocess.run([sys.executable, "-c", code, *list_papers(), "_template"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]


@pytest.mark.parametrize("ci, outcome", [("true", "1 error"), ("", "1 skipped")])
def test_contract_test_fails_under_ci_when_an_extra_is_missing(ci, outcome):
    """Under CI=true a paper whose extra is missing is an error of the contract test, never a skip."""
    env = {**os.environ, **_env(), "CI": ci}
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
                          str(REPO / "tests" / "test_contract.py"), "-k", "test_same_seed_same_numbers and needs_extra"],
                         capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert outcome in out.stdout and "no_such_module_xyz" in out.stdout, out.stdout[-1500:]


def test_a_piped_run_says_what_is_still_running(tmp_path):
    out = run_cli("run", "stages", "--preset", "smoke", "--set", "sleep=0.5", "--out", str(tmp_path / "runs"),
                  "--results", str(tmp_path / "results"), env={**_env(), "ICML24_HEARTBEAT_S": "0.3"})
    assert out.returncode == 0, out.stderr
    assert "running 0:00: stages [smoke] 0/1 seeds done" in out.stderr
    assert "cache: " in out.stdout and "now holds" in out.stdout  # the first run that fills the cache says so


def test_a_seed_keeps_its_examples_through_json_and_writes_none_when_it_has_none():
    from icml24.core.results import SeedResult, dumps

    with_examples = SeedResult(3, {"m": 1.0}, {"c": [1.0, 2.0]}, 0.5, {"a": [{"text": "x", "w": [0.25, 0.75]}]})
    back = SeedResult.from_dict(json.loads(dumps(with_examples.to_dict())))
    assert back == with_examples
    assert "examples" not in SeedResult(3, {"m": 1.0}).to_dict()          # other papers' files are unchanged
    numpy_values = SeedResult(3, {}, examples={"a": [{"y": np.int64(1), "w": np.float32(0.5), "v": np.arange(2)}]})
    assert json.loads(dumps(numpy_values.to_dict()))["examples"] == {"a": [{"y": 1, "w": 0.5, "v": [0, 1]}]}


def test_from_stages_merges_stage_outputs_and_refuses_a_name_produced_twice():
    from icml24.core.results import SeedResult, StageOut

    res = SeedResult.from_stages(5, [StageOut({"a": 1.0}, {"x": [1.0, 2.0]}), StageOut({"b": 2.0}, {"y": [3.0]})])
    assert (res.seed, res.metrics, res.curves) == (5, {"a": 1.0, "b": 2.0}, {"x": [1.0, 2.0], "y": [3.0]})
    with pytest.raises(ValueError, match=r"seed 5: two stages produce \['a'\]"):
        SeedResult.from_stages(5, [StageOut({"a": 1.0}, {}), StageOut({"a": 3.0}, {})])
    with pytest.raises(ValueError, match=r"\['x'\]"):
        SeedResult.from_stages(5, [StageOut({}, {"x": [1.0]}), StageOut({}, {"x": [2.0]})])

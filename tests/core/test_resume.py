"""Run store: atomic files, and `reproduce` resuming after SIGKILL without redoing finished units."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from icml24.core.results import TMP_PREFIX, atomic_write_text, read_json

ARGS = ["reproduce", "--preset", "quick", "--only", "_template", "--seeds", "0-59"]


def test_atomic_write_replaces_whole_file(tmp_path):
    target = tmp_path / "a" / "x.json"
    atomic_write_text(target, '{"v": 1}')
    atomic_write_text(target, '{"v": 2}')
    assert read_json(target) == {"v": 2}
    assert [p.name for p in target.parent.iterdir()] == ["x.json"]
    assert target.stat().st_mode & 0o777 == 0o644


def _cmd(root: Path) -> list[str]:
    return [sys.executable, "-m", "icml24.cli", *ARGS, "--out", str(root / "runs"),
            "--results", str(root / "results"), "--report", str(root / "report")]


def _seed_dir(root: Path) -> Path:
    (run,) = (root / "runs" / "_template" / "quick").iterdir()
    return run / "seeds"


def _per_seed(root: Path) -> dict:
    result = read_json(next((root / "runs" / "_template" / "quick").iterdir()) / "result.json")
    return {s["seed"]: (s["metrics"], s["curves"]) for s in result["seeds"]}


def test_reproduce_resumes_after_sigkill(tmp_path):
    killed, clean = tmp_path / "killed", tmp_path / "clean"
    proc = subprocess.Popen(_cmd(killed), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        seeds = killed / "runs" / "_template" / "quick"
        if seeds.is_dir() and any(seeds.iterdir()) and len(list(_seed_dir(killed).glob("seed-*.json"))) >= 10:
            break
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the run finished before it could be killed"

    # Nothing half-written: every file that is not a temp file parses.
    for path in (killed / "runs").rglob("*.json"):
        if not path.name.startswith(TMP_PREFIX):
            json.loads(path.read_text())
    done = {p: (p.stat().st_mtime_ns, p.stat().st_ino) for p in _seed_dir(killed).glob("seed-*.json")}
    assert 10 <= len(done) < 60

    resumed = subprocess.run(_cmd(killed), capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert f"resumed, {len(done)} of 60 seeds already done" in " ".join(resumed.stdout.split())
    for path, stamp in done.items():  # finished units were not redone
        assert (path.stat().st_mtime_ns, path.stat().st_ino) == stamp
    assert not list((killed / "runs").rglob(TMP_PREFIX + "*"))

    fresh = subprocess.run(_cmd(clean), capture_output=True, text=True, timeout=300)
    assert fresh.returncode == 0, fresh.stderr
    assert _per_seed(killed) == _per_seed(clean)
    assert (killed / "report" / "index.html").is_file()


def test_changed_config_in_same_dir_is_refused(tmp_path):
    from icml24.core.errors import UserError
    from icml24.core.registry import get_paper
    from icml24.core.store import RunRequest, execute_runs, run_dir

    paper = get_paper("_template")
    req = RunRequest(paper, "smoke", paper.preset("smoke"), (0,))
    (out,) = execute_runs([req], root=tmp_path)
    assert (out.run_dir / "seeds" / "seed-0.json").is_file() and out.result is not None
    # same directory (same hash) but a tampered config.json must not be silently mixed
    (run_dir(tmp_path, req) / "config.json").write_text('{"reps": 1}')
    with pytest.raises(UserError, match="different config"):
        execute_runs([req], root=tmp_path)


def test_seeds_from_other_code_are_run_again(tmp_path, monkeypatch):
    from icml24.core.registry import Paper, get_paper
    from icml24.core.store import RunRequest, execute_runs, seed_file

    paper = get_paper("_template")
    req = RunRequest(paper, "smoke", paper.preset("smoke"), (0, 1))
    (first,) = execute_runs([req], root=tmp_path)
    assert first.skipped == 0
    (again,) = execute_runs([req], root=tmp_path)
    assert again.skipped == 2 and again.result.provenance["code_hash"] == paper.code_hash
    monkeypatch.setattr(Paper, "code_hash", property(lambda self: "edited-code"))
    stamp = seed_file(first.run_dir, 0).stat().st_mtime_ns
    (edited,) = execute_runs([req], root=tmp_path)
    assert edited.skipped == 0 and seed_file(first.run_dir, 0).stat().st_mtime_ns != stamp
    assert edited.result.provenance["code_hash"] == "edited-code"


def test_code_hash_follows_the_paper_code_and_the_common_modules_it_imports(tmp_path, monkeypatch):
    import icml24.core.registry as reg

    papers = tmp_path / "src" / "icml24" / "papers"
    (papers / "p").mkdir(parents=True)
    (papers.parent / "common").mkdir()
    (papers.parent / "common" / "shared.py").write_text("X = 1\n")
    (papers.parent / "common" / "unused.py").write_text("Y = 1\n")
    (papers / "p" / "experiment.py").write_text("from icml24.common import shared\n")
    (papers / "p" / "claims.py").write_text("CLAIMS = ()\n")
    monkeypatch.setattr(reg, "PAPERS_DIR", papers)
    paper = reg.Paper("p", "p")
    monkeypatch.setattr(reg.Paper, "folder", property(lambda self: papers / "p"))
    base = paper.code_hash
    (papers / "p" / "claims.py").write_text("CLAIMS = (1,)\n")  # claims are re-judged, not hashed
    (papers.parent / "common" / "unused.py").write_text("Y = 2\n")  # not imported by the paper
    assert paper.code_hash == base
    (papers.parent / "common" / "shared.py").write_text("X = 2\n")
    assert paper.code_hash != base

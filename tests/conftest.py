"""Shared test fixtures: repository paths and a CLI runner that captures exit codes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def repo() -> Path:
    return REPO


def run_cli(*args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 300):
    """Run ``python -m icml24.cli ...`` in a subprocess; returns the CompletedProcess."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "icml24.cli", *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout)


def _shared_tmp(config, tmp_path_factory) -> Path:
    """The temporary folder every pytest-xdist worker of this run can see (the run's own one without xdist)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if hasattr(config, "workerinput") else base


def ray_lock(config, tmp_path_factory):
    """A lock held while a test starts a local Ray cluster, so that two xdist workers never run two at once."""
    from filelock import FileLock

    return FileLock(str(_shared_tmp(config, tmp_path_factory) / "local-ray.lock"))


@pytest.fixture
def ray_turn(request, tmp_path_factory):
    """:func:`ray_lock` for one test."""
    with ray_lock(request.config, tmp_path_factory):
        yield


@pytest.fixture(scope="session")
def smollm2_cache(request, tmp_path_factory):
    """A callable that puts SmolLM2's converted artefact into a test's cache folder. The GGUF is dequantised
    once per test run (about 25 s; under pytest-xdist the workers share it through a lock in the run's common
    temporary folder) and hard-linked into each folder that asks, so the tests that read the real model share
    one conversion; what is linked is exactly what ``llm.smollm2`` builds under its own key."""
    import shutil

    from filelock import FileLock

    from icml24.common import llm
    from icml24.core.context import RunContext

    shared = _shared_tmp(request.config, tmp_path_factory)
    root = shared / "smollm2-once"
    with FileLock(str(shared / "smollm2-once.lock")):
        if not root.is_dir():
            llm.smollm2(RunContext(cache_dir=root))     # the conversion, by the first worker that asks
    (built,) = [p for p in root.iterdir() if p.is_dir()]
    assert not any(p.name.startswith(".tmp") for p in root.iterdir())   # the build left no temporary folder

    def seed(cache_dir: Path) -> Path:
        cache_dir.mkdir(parents=True, exist_ok=True)
        if not (cache_dir / built.name).exists():
            shutil.copytree(built, cache_dir / built.name, copy_function=os.link)
        return cache_dir

    return seed

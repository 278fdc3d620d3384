"""Shared test fixtures: repository paths and a CLI runner that captures exit codes."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

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


def quick_check_timeout(slug: str, floor: int = 600, slack: float = 3.0) -> int:
    """Seconds allowed to `make check`'s from-scratch QUICK run of ``slug`` (serial, in the test process): ``slack``
    times the summed seed times of its published QUICK run, at least ``floor`` (pyproject's time-out of every test).
    The same seeds have taken up to 2.5x their published times on one machine, and a fresh store rebuilds the
    paper's artefacts (purified_il's expert: about 9 minutes); several papers' QUICK takes over 600 s serially."""
    import math

    from icml24.cli import _published_times  # the executor's order reads the same seed times

    return max(floor, math.ceil(slack * sum(_published_times(REPO / "results", slug, "quick").values())))


def pytest_collection_modifyitems(items) -> None:
    """The from-scratch QUICK checks (`make check`) run under :func:`quick_check_timeout`, not the flat 600 s."""
    for item in items:
        if getattr(item, "originalname", "") == "test_quick_from_scratch_reproduces_the_published_numbers":
            item.add_marker(pytest.mark.timeout(quick_check_timeout(item.callspec.params["paper"])))


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


@contextmanager
def gguf_parsed_once() -> Iterator[None]:
    """Within the block, ``gguf.GGUFReader`` and ``gguf.get_tensor_name_map`` remember what they returned.

    Transformers parses a GGUF file three times to load one model (tokenizer, config, weights; 8 s each for
    SmolLM2, most of it reading the 49k-token vocabulary one memmap slice at a time) and rebuilds gguf's
    tensor-name table once per module (397 times, 11 s). With both remembered the conversion writes the
    same bytes (every file compared) in 15 s instead of 36 s. Only the tests use this: ``common/llm.py`` is
    in the LLM papers' code hash, so changing it there would unpublish their results."""
    import gguf

    saved = gguf.GGUFReader, gguf.get_tensor_name_map
    gguf.GGUFReader = functools.lru_cache(maxsize=None)(saved[0])
    gguf.get_tensor_name_map = functools.lru_cache(maxsize=None)(saved[1])
    try:
        yield
    finally:
        gguf.GGUFReader, gguf.get_tensor_name_map = saved


@pytest.fixture(scope="session")
def smollm2_cache(request, tmp_path_factory):
    """A callable that puts SmolLM2's converted artefact into a test's cache folder. The GGUF is dequantised
    once per test run (about 15 s with :func:`gguf_parsed_once`; under pytest-xdist the workers share it
    through a lock in the run's common temporary folder) and hard-linked into each folder that asks, so the
    tests that read the real model share one conversion; what is linked is exactly what ``llm.smollm2`` builds
    under its own key."""
    import shutil

    from filelock import FileLock

    from icml24.common import llm
    from icml24.core.context import RunContext

    shared = _shared_tmp(request.config, tmp_path_factory)
    root = shared / "smollm2-once"
    with FileLock(str(shared / "smollm2-once.lock")):
        if not root.is_dir():
            with gguf_parsed_once():
                llm.smollm2(RunContext(cache_dir=root))     # the conversion, by the first worker that asks
    (built,) = [p for p in root.iterdir() if p.is_dir()]
    assert not any(p.name.startswith(".tmp") for p in root.iterdir())   # the build left no temporary folder

    def seed(cache_dir: Path) -> Path:
        cache_dir.mkdir(parents=True, exist_ok=True)
        if not (cache_dir / built.name).exists():
            shutil.copytree(built, cache_dir / built.name, copy_function=os.link)
        return cache_dir

    return seed

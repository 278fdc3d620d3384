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

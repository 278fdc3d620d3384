"""Unit functions with known behaviour, importable by worker processes, for testing executors."""

from __future__ import annotations

from pathlib import Path


def square(x: int) -> dict:
    """A deterministic unit: returns ``{"x": x, "y": x * x}``."""
    return {"x": x, "y": x * x}


def fail_on_odd(x: int) -> dict:
    """Raises for odd inputs on every attempt; even inputs behave like :func:`square`."""
    if x % 2:
        raise ValueError(f"unit {x} always fails")
    return square(x)


def fail_first_attempt(arg: tuple[int, str]) -> dict:
    """Fails the first time it sees ``x`` (remembered by a marker file in ``folder``), then succeeds."""
    x, folder = arg
    marker = Path(folder) / f"attempted-{x}"
    if not marker.exists():
        marker.touch()
        raise RuntimeError(f"first attempt of unit {x} fails")
    return square(x)

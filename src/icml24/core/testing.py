"""Unit functions with known behaviour, importable by worker processes, for testing executors."""

from __future__ import annotations

from pathlib import Path


def square(x: int) -> dict:
    """A deterministic unit: returns ``{"x": x, "y": x * x}``."""
    return {"x": x, "y": x * x}


def blas_threads(x: int) -> dict:
    """The thread counts of the BLAS pools numpy's worker process sees (the executor's cap)."""
    import numpy as np  # noqa: F401  (loads the BLAS library, so threadpoolctl can see it)
    from threadpoolctl import threadpool_info

    return {"x": x, "threads": sorted({p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"})}


def malloc_environment(x: int) -> dict:
    """The glibc allocator variables a worker process started with (the executor's WORKER_MALLOC)."""
    import os

    return {"x": x, "env": {k: v for k, v in os.environ.items() if k.startswith("MALLOC_")}}


def fail_on_odd(x: int) -> dict:
    """Raises a worker-like fault (``RuntimeError``) for odd inputs on every attempt; even inputs behave like
    :func:`square`."""
    if x % 2:
        raise RuntimeError(f"unit {x} always fails")
    return square(x)


def overflow_on_odd(x: int) -> dict:
    """Raises a deterministic fault (``OverflowError``) for odd inputs; even inputs behave like :func:`square`."""
    if x % 2:
        raise OverflowError(f"unit {x} overflows")
    return square(x)


def fail_first_attempt(arg: tuple[int, str]) -> dict:
    """Fails the first time it sees ``x`` (remembered by a marker file in ``folder``), then succeeds."""
    x, folder = arg
    marker = Path(folder) / f"attempted-{x}"
    if not marker.exists():
        marker.touch()
        raise RuntimeError(f"first attempt of unit {x} fails")
    return square(x)


def assigned_resources(unit) -> dict:
    """The resources Ray reserved for the task running ``unit`` (call inside a Ray worker)."""
    import ray

    return {k: v for k, v in ray.get_runtime_context().get_assigned_resources().items() if k in ("CPU", "GPU")}


def raise_user_error(x: int) -> dict:
    """A unit that fails with a user fault (never retried)."""
    from icml24.core.errors import UserError

    raise UserError(f"unit {x}: a bad value the user gave")


def raise_missing_file(x: int) -> dict:
    """A unit whose data file is missing (a user fault)."""
    raise FileNotFoundError(f"/nonexistent/unit-{x}.csv")


def raise_missing_module(x: int) -> dict:
    """A unit whose package is not installed (a user fault)."""
    import importlib

    importlib.import_module("no_such_module_xyz")
    return {}


def check_config_rule(base, overrides: list[str], validate, error: str | None) -> None:
    """What the CLI does with ``--set`` before anything runs (overrides, knob rules, the paper's
    ``validate``): with ``error`` None it must accept the config, else raise one-line ``UserError``
    whose message matches the regex ``error`` (a test helper for the papers' config rules)."""
    import re

    from icml24.core.config import apply_overrides, check_knobs
    from icml24.core.errors import UserError

    try:
        config = apply_overrides(base, overrides)
        check_knobs(config)
        if validate is not None:
            validate(config)
    except UserError as exc:
        message = str(exc)
        if error is None:
            raise AssertionError(f"{overrides} rejected: {message}") from None
        if not re.search(error, message) or "\n" in message:
            raise AssertionError(f"{overrides}: message {message!r} does not match {error!r} on one line") from None
        return
    if error is not None:
        raise AssertionError(f"{overrides} accepted; expected an error matching {error!r}")

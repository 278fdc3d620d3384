"""Executors: run (paper, preset, config, seed) units serially, on a local process pool, or on Ray.

All three call the same top-level :func:`run_unit` and yield :class:`Outcome` objects as units
finish, so they give identical per-seed metrics for the same seeds. A unit that raises is retried
once (``retries=1``); if it fails again its traceback is reported and the other units carry on.
Ray is imported only when ``executor="ray"`` is asked for (``pip install icml24[ray]``).
"""

from __future__ import annotations

import os
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

from icml24.core.errors import UserError

EXECUTORS: tuple[str, ...] = ("serial", "process", "ray")


def check_executor(name: str) -> str:
    """``name`` if it is a known executor, else a :class:`UserError`."""
    if name not in EXECUTORS:
        raise UserError(f"unknown executor {name!r}; use one of {', '.join(EXECUTORS)}")
    return name


@dataclass(frozen=True)
class Unit:
    """One seed of one configured paper run: the smallest piece of work an executor schedules."""

    slug: str
    module: str
    preset: str
    config: tuple  # sorted (key, value) pairs of the config's JSON form: hashable and picklable
    config_hash: str
    seed: int


@dataclass
class Outcome:
    """What came back for a unit: a result dict, or the error after all attempts."""

    unit: Any
    result: dict[str, Any] | None
    error: str | None
    attempts: int


def run_unit(unit: Unit) -> dict[str, Any]:
    """Import the paper, rebuild its config, run one seed; returns ``SeedResult.to_dict()``."""
    import importlib

    from icml24.core.config import from_dict

    experiment = importlib.import_module(f"{unit.module}.experiment")
    config = from_dict(experiment.Config, dict(unit.config))
    start = time.perf_counter()
    result = experiment.run(config, unit.seed)
    result.wall_time = time.perf_counter() - start
    if result.seed != unit.seed:
        raise RuntimeError(f"{unit.slug}.run returned seed {result.seed} for seed {unit.seed}")
    return result.to_dict()


def _call(fn: Callable[[Any], Any], unit: Any) -> tuple[Any, str | None]:
    try:
        return fn(unit), None
    except Exception:  # noqa: BLE001 - any failure in a unit is reported, never fatal to the others
        return None, traceback.format_exc()


def _serial(fn, units, retries) -> Iterator[Outcome]:
    for unit in units:
        for attempt in range(1, retries + 2):
            result, err = _call(fn, unit)
            if err is None:
                break
        yield Outcome(unit, result, err, attempt)


def _process(fn, units, retries, workers) -> Iterator[Outcome]:
    import multiprocessing

    # spawn, not fork: forking a parent that already started torch/OpenMP threads can deadlock.
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        pending = {pool.submit(_call, fn, u): (u, 1) for u in units}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                unit, attempt = pending.pop(fut)
                result, err = fut.result()
                if err is not None and attempt <= retries:
                    pending[pool.submit(_call, fn, unit)] = (unit, attempt + 1)
                    continue
                yield Outcome(unit, result, err, attempt)


def _ray(fn, units, retries, workers, address) -> Iterator[Outcome]:
    try:
        import ray
    except ImportError:
        raise UserError("executor 'ray' needs the ray extra: pip install 'icml24[ray]'") from None
    if not ray.is_initialized():
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if address:
            kwargs["address"] = address
        else:
            kwargs["num_cpus"] = workers
        ray.init(**kwargs)
    # Ray's own retries are off: the retry rule is ours, the same for every executor.
    remote = ray.remote(max_retries=0)(_call)
    pending = {remote.remote(fn, u): (u, 1) for u in units}
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            unit, attempt = pending.pop(ref)
            try:
                result, err = ray.get(ref)
            except Exception:  # noqa: BLE001 - a worker that died counts as a failed attempt
                result, err = None, traceback.format_exc()
            if err is not None and attempt <= retries:
                pending[remote.remote(fn, unit)] = (unit, attempt + 1)
                continue
            yield Outcome(unit, result, err, attempt)


def execute(
    units: Iterable[Any],
    fn: Callable[[Any], Any] = run_unit,
    executor: str = "serial",
    workers: int | None = None,
    address: str | None = None,
    retries: int = 1,
) -> Iterator[Outcome]:
    """Run ``fn(unit)`` for every unit on the chosen executor; yields outcomes as units finish.

    ``fn`` must be a module-level function (it is pickled by reference for process and Ray).
    ``workers`` defaults to the CPU count; ``address`` points Ray at an existing cluster.
    """
    units = list(units)
    check_executor(executor)
    if not units:
        return iter(())
    workers = workers or min(len(units), os.cpu_count() or 1)
    if executor == "serial":
        return _serial(fn, units, retries)
    if executor == "process":
        return _process(fn, units, retries, workers)
    return _ray(fn, units, retries, workers, address)

"""Executors: run (paper, preset, config, seed) units serially, on a local process pool, or on Ray.

All three call the same top-level :func:`run_unit` and yield :class:`Outcome` objects as units
finish, so they give identical per-seed metrics for the same seeds. A unit that raises is retried
once (``retries=1``) unless the fault is deterministic (:data:`DETERMINISTIC_FAULTS`); a unit that still
fails has its traceback reported and the other units carry on.
A *user* fault (:data:`USER_FAULTS`: a :class:`UserError`, a missing file, a missing package) is never
retried: the outcome carries ``user_error`` (one line) and the caller stops (see ``core.store``).
Retries are for faults of a worker. Ray is imported only when ``executor="ray"`` is asked for
(``pip install icml24[ray]``); it places each unit with the CPUs and GPUs the unit asks for
(:attr:`Unit.num_cpus`, :attr:`Unit.num_gpus`: a GPU per unit when the config's device is ``cuda``).

A unit runs with a :class:`UnitContext`: the paper's :class:`~icml24.core.context.RunContext` (same checkpoints,
same cache, same numbers) that also says, through :func:`note`, when one of its stages has been running for
:data:`NOTE_AFTER_S` seconds, every :data:`NOTE_EVERY_S` seconds after that, and when it ends, and when it
builds a cached artefact. ``execute(..., on_note=f)`` passes those lines to ``f`` in the calling process
(serial: directly; process pool: through a queue); without ``on_note``, and on Ray, they are dropped.
"""

from __future__ import annotations

import logging
import math
import os
import re
import threading
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, NamedTuple, Sequence, TypeVar

from icml24.core.context import RunContext, artefact_key
from icml24.core.errors import UserError

T = TypeVar("T")

EXECUTORS: tuple[str, ...] = ("serial", "process", "ray")


def check_executor(name: str) -> str:
    """``name`` if it is a known executor, else a :class:`UserError`."""
    if name not in EXECUTORS:
        raise UserError(f"unknown executor {name!r}; use one of {', '.join(EXECUTORS)}")
    return name


USER_FAULTS: tuple[type[BaseException], ...] = (UserError, FileNotFoundError, PermissionError, IsADirectoryError,
                                                NotADirectoryError, ModuleNotFoundError)
"""Exceptions that mean the user asked for something impossible: never retried, the run stops."""
DETERMINISTIC_FAULTS: tuple[type[BaseException], ...] = (ArithmeticError, ValueError, TypeError, LookupError,
                                                         AssertionError, MemoryError, RecursionError,
                                                         NotImplementedError)
"""Exceptions the same seed raises again on every attempt (an overflow, a singular matrix, a shape): reported
at once, not retried; the other seeds carry on. So is a ``RuntimeError`` whose message is about shapes or a
CPU allocation (torch's "mat1 and mat2 shapes cannot be multiplied", "size mismatch", "can't allocate
memory": :data:`DETERMINISTIC_RUNTIME`). Anything else (a ``RuntimeError`` of a dying worker, an OS fault) is
retried."""
DETERMINISTIC_RUNTIME = re.compile(r"shapes? |size mismatch|must match the size|dimension|can't allocate memory|"
                                   r"not enough memory", re.IGNORECASE)
"""A ``RuntimeError`` message that says the same call will fail the same way (torch's shape and CPU allocation
errors)."""


@dataclass(frozen=True)
class Unit:
    """One seed of one configured paper run: the smallest piece of work an executor schedules.

    Attributes:
        slug, module, preset: which paper (and its import path) at which preset name.
        config: sorted (key, value) pairs of the config's JSON form (hashable and picklable).
        config_hash: the run store's key of the config.
        seed: the seed.
        device: torch device of the unit (the config's ``device`` field, else ``"cpu"``).
        workdir: the unit's checkpoint folder ("" keeps nothing on disk).
        cache_dir: the artefact cache root shared by all units ("" caches nothing).
        code_hash: fingerprint of the paper's code (part of artefact keys).
        num_cpus: CPUs Ray reserves for the unit (the config's ``threads``, at least 1).
        num_gpus: GPUs Ray reserves for the unit (1 when ``device`` is cuda).
    """

    slug: str
    module: str
    preset: str
    config: tuple
    config_hash: str
    seed: int
    device: str = "cpu"
    workdir: str = ""
    cache_dir: str = ""
    code_hash: str = ""
    num_cpus: float = 1.0
    num_gpus: float = 0.0


@dataclass
class Outcome:
    """What came back for a unit: a result dict, or the error after all attempts."""

    unit: Any
    result: dict[str, Any] | None
    error: str | None
    attempts: int
    user_error: str | None = None  # one line, when the failure is a user fault (never retried)


NOTE_AFTER_S = 10.0
"""A stage still running after this many seconds is noted, and so is its end (``ICML24_NOTE_AFTER_S``
overrides); shorter stages stay silent."""

NOTE_EVERY_S = 30.0
"""A long stage is noted again every this many seconds while it runs, with its time so far
(``ICML24_NOTE_EVERY_S`` overrides)."""

_SINK: Any = None
"""Where :func:`note` sends its lines in this process: a callable (serial executor), a queue (a worker of
the process pool) or None (dropped)."""


def note(text: str) -> None:
    """Send one progress line of a running unit to the caller of :func:`execute` (dropped when nobody listens).
    A line that cannot be sent is dropped: progress never costs a seed."""
    sink = _SINK
    if sink is None:
        return
    try:
        put = getattr(sink, "put", None)
        put(text) if put is not None else sink(text)
    except Exception:  # noqa: BLE001 - a closed queue, a console that is gone
        pass


WORKER_MALLOC: Mapping[str, str] = {"MALLOC_MMAP_THRESHOLD_": str(4 << 30), "MALLOC_TRIM_THRESHOLD_": str(16 << 30)}
"""glibc's allocator settings of the frame's worker processes (process pool and Ray): blocks up to 4 GiB come
from the heap, and freed memory is kept for reuse instead of being returned to the system (and faulted in
again, a page at a time, by the next allocation). Papers that allocate whole-sequence buffers of hundreds of
MB per step spend a third of their time in those page faults otherwise (BRF's fused layer at the paper's
size; compressed_trust's per-layer copies: 203 s of system time of 1,067 s CPU). The numbers are the same
bits (the published runs reproduce with and without them); a worker's peak resident memory can be higher.
Set either variable yourself to override it; the serial executor runs in the calling process, which keeps
the allocator it started with."""


def _worker_malloc() -> dict[str, str]:
    """The :data:`WORKER_MALLOC` variables this process's environment does not set itself (the user's win)."""
    return {k: v for k, v in WORKER_MALLOC.items() if k not in os.environ}


@contextmanager
def _worker_environment() -> Iterator[None]:
    """:data:`WORKER_MALLOC` in ``os.environ`` while the pool may start workers (they read it at their start;
    this process's allocator is unaffected: glibc reads its settings once), then as it was."""
    added = _worker_malloc()
    os.environ.update(added)
    try:
        yield
    finally:
        for k in added:
            os.environ.pop(k, None)


def _watch_parent(parent: int, every: float = 1.0) -> threading.Thread:
    """A daemon thread that ends this worker as soon as its parent is gone (killed by SIGTERM or SIGKILL,
    which run no cleanup): without it the orphaned worker would finish its seed before noticing. The seed is
    lost, never half-written (seed files and stage checkpoints are written atomically)."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        os._exit(1)

    thread = threading.Thread(target=watch, name="icml24-parent-watch", daemon=True)
    thread.start()
    return thread


def _set_sink(sink: Any, blas_threads: int = 0) -> None:
    """A worker's start: the notes' sink, and (``blas_threads`` > 0) the BLAS pools of numpy and scipy capped
    at the worker's share of the cores. Torch's own pool is set per unit (``RunContext.threads``); left alone,
    OpenBLAS starts one thread per core in every worker, and 2 workers on 2 cores oversubscribe them (acpo's
    exact tabular evaluation: 3 ms per call alone, 40-90 ms oversubscribed)."""
    global _SINK
    _SINK = sink
    _watch_parent(os.getppid())
    if blas_threads > 0:
        import numpy  # noqa: F401  (threadpoolctl caps the BLAS libraries loaded so far: numpy's and scipy's)
        import scipy.linalg  # noqa: F401
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=blas_threads, user_api="blas")


@contextmanager
def _ticking(what: str, first: float | None = None) -> Iterator[None]:
    """While the body runs: ``what: running (<first> s so far)`` after ``first`` seconds (default: NOTE_EVERY_S),
    then again every NOTE_EVERY_S seconds with the time so far; nothing after the body ends."""
    every = max(float(os.environ.get("ICML24_NOTE_EVERY_S", NOTE_EVERY_S)), 0.05)
    first = every if first is None else first
    done = threading.Event()
    start = time.perf_counter()

    def tick() -> None:
        if done.wait(first):
            return
        note(f"{what}: running ({first:g} s so far)")
        while not done.wait(every):
            note(f"{what}: running ({time.perf_counter() - start:.0f} s so far)")

    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    try:
        yield
    finally:
        done.set()
        ticker.join()           # a note being written now lands before the caller's "done"


def _noted(what: str, fn: Callable[..., T]) -> Callable[..., T]:
    """``fn`` that notes ``what ... running`` once it has run for NOTE_AFTER_S seconds, again every NOTE_EVERY_S
    seconds while it runs, and its end after that."""
    def run(*args: Any) -> T:
        after = float(os.environ.get("ICML24_NOTE_AFTER_S", NOTE_AFTER_S))
        start = time.perf_counter()
        with _ticking(what, after):
            out = fn(*args)
        secs = time.perf_counter() - start
        if secs >= after:
            note(f"{what}: done in {secs:.1f} s")
        return out
    return run


def _folder_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20


@dataclass(frozen=True)
class UnitContext(RunContext):
    """The run context of an executor's unit: :class:`RunContext` (the same checkpoints, cache keys and
    numbers) whose long stages and artefact builds say so through :func:`note`, labelled with the unit."""

    label: str = ""

    def stage(self, name: str, compute: Callable[..., T], *args: Any, rngs: Sequence[Any] = ()) -> T:
        return super().stage(name, _noted(f"{self.label}: stage {name}", compute), *args, rngs=rngs)

    def artefact(self, name: str, inputs: Mapping[str, Any], build: Callable[[Path], None]) -> Path:
        def noted_build(folder: Path) -> None:
            where = self.cache_dir if self.cache_dir is not None else "a temporary folder"
            note(f"{self.label}: building {name} into {where} (once; later runs reuse it)")
            start = time.perf_counter()
            with _ticking(f"{self.label}: building {name}"):
                build(folder)
            note(f"{self.label}: {name} built in {time.perf_counter() - start:.1f} s ({_folder_mb(folder):.1f} MB)")
        key = artefact_key(name, inputs, self.code_hash)
        if self.cache_dir is None or (self.cache_dir / key).is_dir():  # nothing to build: no lock to take
            return super().artefact(name, inputs, noted_build)
        with _build_lock(self.cache_dir, key, f"{self.label}: {name}"):
            return super().artefact(name, inputs, noted_build)  # looks again: another worker may have built it


@contextmanager
def _build_lock(cache_dir: Path, key: str, what: str) -> Iterator[None]:
    """Held while a process that did not find the artefact ``key`` in the cache looks again and builds it: an
    exclusive lock on ``cache_dir/.<key>.lock`` (``filelock``, which torch installs and the tests' shared builds
    use too). A second worker that asks for the same artefact meanwhile waits, then finds it cached, where
    without the lock both would build it (purified_il's expert: about 10 minutes each, seiko's pretrained model,
    each LLM paper's converted SmolLM2). The numbers do not depend on it: a built artefact is the same whoever
    builds it. The lock goes with its holder's death (a failed build leaves nothing, and the waiter builds it
    itself). A build must not ask for its own artefact (the process would wait for itself); builds that ask for
    other artefacts (fabe's rewrites ask for SmolLM2) are fine, as long as no two artefacts ask for each other."""
    from filelock import FileLock, Timeout

    cache_dir.mkdir(parents=True, exist_ok=True)
    lock = FileLock(cache_dir / f".{key}.lock")
    try:
        lock.acquire(timeout=0)
    except Timeout:
        note(f"{what}: another worker is building it; waiting")
        start = time.perf_counter()
        lock.acquire()
        note(f"{what}: the other worker is done after {time.perf_counter() - start:.1f} s")
    try:
        yield
    finally:
        lock.release()


def unit_context(unit: Unit) -> UnitContext:
    """The :class:`UnitContext` a unit runs with."""
    return UnitContext(device=unit.device, workdir=Path(unit.workdir) if unit.workdir else None,
                       cache_dir=Path(unit.cache_dir) if unit.cache_dir else None, code_hash=unit.code_hash,
                       label=f"{unit.slug} [{unit.preset}] seed {unit.seed}")


def run_unit(unit: Unit) -> dict[str, Any]:
    """Import the paper, rebuild its config, run one seed in its context; returns ``SeedResult.to_dict()``."""
    import importlib

    from icml24.core.config import from_dict

    experiment = importlib.import_module(f"{unit.module}.experiment")
    config = from_dict(experiment.Config, dict(unit.config))
    if "mujoco" in getattr(importlib.import_module(f"{unit.module}.card").CARD, "imports", ()):
        _mujoco_warnings_to_stderr()
    start = time.perf_counter()
    result = experiment.run(config, unit.seed, unit_context(unit))
    result.wall_time = time.perf_counter() - start
    if result.seed != unit.seed:
        raise RuntimeError(f"{unit.slug}.run returned seed {result.seed} for seed {unit.seed}")
    return result.to_dict()


def _mujoco_warnings_to_stderr() -> None:
    """MuJoCo's default warning handler also appends to MUJOCO_LOG.TXT in the current folder: print instead."""
    import sys

    import mujoco

    mujoco.set_mju_user_warning(lambda text: print(f"MuJoCo warning: {text}", file=sys.stderr, flush=True))


class _Attempt(NamedTuple):
    """What one call of a unit gave: its result, or the traceback and (for user faults) one line."""

    result: Any
    error: str | None = None
    user_error: str | None = None
    deterministic: bool = False  # the same call would fail the same way: not retried


def _call(fn: Callable[[Any], Any], unit: Any) -> _Attempt:
    # Every exception is caught on purpose: a failing unit is reported, never fatal to the others.
    try:
        return _Attempt(fn(unit))
    except USER_FAULTS as exc:
        line = str(exc) if isinstance(exc, UserError) else f"{type(exc).__name__}: {exc}"
        return _Attempt(None, traceback.format_exc(), line.strip().splitlines()[0] if line.strip() else line)
    except DETERMINISTIC_FAULTS:
        return _Attempt(None, traceback.format_exc(), deterministic=True)
    except RuntimeError as exc:
        return _Attempt(None, traceback.format_exc(), deterministic=bool(DETERMINISTIC_RUNTIME.search(str(exc))))
    except Exception:
        return _Attempt(None, traceback.format_exc())


def _retry(att: _Attempt, attempt: int, retries: int) -> bool:
    return att.error is not None and att.user_error is None and not att.deterministic and attempt <= retries


_NON_FINITE_WORDS = frozenset({"nan", "inf", "infinity", "infinite", "non-finite", "singular", "overflow"})
_NON_FINITE_PHRASES = ("not finite", "did not converge")


def looks_diverged(error: str) -> bool:
    """A failed seed whose exception is a numerical breakdown (NaN or infinity met by a solver, a check or an
    overflow): the run diverged, rather than the code being wrong.

    >>> looks_diverged("ValueError: Input X contains NaN."), looks_diverged("KeyError: 'x'")
    (True, False)
    """
    kind, _, message = error_line(error).partition(":")
    text = message.lower()
    words = set(re.findall(r"[a-z][a-z-]*", text))
    return (kind.endswith(("LinAlgError", "OverflowError", "FloatingPointError")) or bool(words & _NON_FINITE_WORDS)
            or any(p in text for p in _NON_FINITE_PHRASES))


def error_line(error: str) -> str:
    """The exception's type and message from a formatted traceback (its last unindented block, one line).

    >>> error_line('Traceback (most recent call last):\\n  File "x.py", line 1\\nValueError: bad\\nsize\\n')
    'ValueError: bad size'
    """
    lines = error.rstrip().splitlines()
    start = len(lines) - 1
    while start > 0 and lines[start - 1] and not lines[start - 1].startswith((" ", "Traceback")):
        start -= 1
    return " ".join(line.strip() for line in lines[start:]) or "unknown error"


def _serial(fn, units, retries, on_note=None) -> Iterator[Outcome]:
    def call(unit):
        before = _SINK
        _set_sink(on_note)
        try:
            return _call(fn, unit)
        finally:
            _set_sink(before)

    for unit in units:
        attempt = 1
        att = call(unit)
        while _retry(att, attempt, retries):
            attempt += 1
            att = call(unit)
        yield Outcome(unit, att.result, att.error, attempt, att.user_error)


def _drain(queue: Any, on_note: Callable[[str], None]) -> None:
    """Pass the workers' notes to ``on_note`` until the None that ends them."""
    while True:
        text = queue.get()
        if text is None:
            return
        on_note(text)


def _process(fn, units, retries, workers, on_note=None) -> Iterator[Outcome]:
    import multiprocessing

    # spawn, not fork: forking a parent that already started torch/OpenMP threads can deadlock.
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue() if on_note is not None else None
    blas = max(1, (os.cpu_count() or 1) // workers)
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_set_sink, initargs=(queue, blas))
    drain = None
    if queue is not None:
        drain = threading.Thread(target=_drain, args=(queue, on_note), daemon=True)
        drain.start()
    try:
        with _worker_environment():     # while any worker may start (the first submits, a retry's new worker)
            pending = {pool.submit(_call, fn, u): (u, 1) for u in units}
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    unit, attempt = pending.pop(fut)
                    att = fut.result()
                    if _retry(att, attempt, retries):
                        pending[pool.submit(_call, fn, unit)] = (unit, attempt + 1)
                        continue
                    yield Outcome(unit, att.result, att.error, attempt, att.user_error)
    finally:  # a consumer that stops early (a user fault) cancels the units not yet started
        pool.shutdown(wait=True, cancel_futures=True)
        if queue is not None and drain is not None:
            queue.put(None)
            drain.join(timeout=5)
            queue.close()


def _ray(fn, units, retries, workers, address) -> Iterator[Outcome]:
    try:
        import ray
    except ImportError:
        raise UserError("executor 'ray' needs the ray extra: pip install 'icml24[ray]'") from None
    units = list(units)
    if not ray.is_initialized():
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                  "runtime_env": {"env_vars": _worker_malloc()}}
        if address:
            kwargs["address"] = address
        else:  # a local Ray runs `workers` units at once, each with the CPUs it asks for (its config's threads)
            need = max(max(float(ray_resources(u)["num_cpus"]) for u in units), 1.0)
            kwargs["num_cpus"] = math.ceil(workers * need)
            _quiet_token_notice()
        try:
            ray.init(**kwargs)
        except Exception as exc:  # noqa: BLE001 - `auto` with no cluster, a listener that is not Ray, a start that fails
            why = error_line(f"{type(exc).__name__}: {exc}")
            if address:
                raise UserError(f"--address {address}: no Ray cluster to connect to ({why})") from None
            raise UserError(f"--executor ray: a local Ray could not start ({why})") from None
    have = ray.cluster_resources()
    for unit in units:  # a unit that asks for more than the whole cluster has would wait forever
        for name, need in ray_resources(unit).items():
            key = {"num_cpus": "CPU", "num_gpus": "GPU"}[name]
            if need > have.get(key, 0.0):
                raise UserError(f"{unit.slug}: a seed asks for {need:g} {key} but the Ray cluster has "
                                f"{have.get(key, 0.0):g}; lower threads or grow the cluster")
    # Ray's own retries are off: the retry rule is ours, the same for every executor.
    remote = ray.remote(max_retries=0)(_call)

    def submit(unit):
        return remote.options(**ray_resources(unit)).remote(fn, unit)

    pending = {submit(u): (u, 1) for u in units}
    try:
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                unit, attempt = pending.pop(ref)
                try:
                    att = ray.get(ref)
                except ray.exceptions.RayError:  # a worker that died counts as a failed attempt
                    att = _Attempt(None, traceback.format_exc())
                if _retry(att, attempt, retries):
                    pending[submit(unit)] = (unit, attempt + 1)
                    continue
                yield Outcome(unit, att.result, att.error, attempt, att.user_error)
    finally:
        for ref in pending:
            ray.cancel(ref)


class _NoTokenNotice(logging.Filter):
    """Drops the warning Ray logs on every local start that it enabled token authentication, its default."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Token authentication is enabled for this Ray cluster" not in record.getMessage()


def _quiet_token_notice() -> None:
    """A local Ray start keeps Ray's token authentication and says nothing about it. (Setting RAY_AUTH_MODE
    would also silence it, but only before ``import ray``: afterwards the driver and the cluster disagree.)"""
    logger = logging.getLogger("ray._private.authentication.authentication_token_setup")
    if not any(isinstance(f, _NoTokenNotice) for f in logger.filters):
        logger.addFilter(_NoTokenNotice())


def ray_resources(unit: Any) -> dict[str, float]:
    """What Ray reserves for one unit: ``num_cpus`` and ``num_gpus`` of a :class:`Unit` (1 CPU otherwise).

    >>> ray_resources(Unit("s", "m", "full", (), "h", 0, device="cuda", num_cpus=4, num_gpus=1))
    {'num_cpus': 4, 'num_gpus': 1}
    """
    return {"num_cpus": getattr(unit, "num_cpus", 1), "num_gpus": getattr(unit, "num_gpus", 0)}


def execute(
    units: Iterable[Any],
    fn: Callable[[Any], Any] = run_unit,
    executor: str = "serial",
    workers: int | None = None,
    address: str | None = None,
    retries: int = 1,
    on_note: Callable[[str], None] | None = None,
) -> Iterator[Outcome]:
    """Run ``fn(unit)`` for every unit on the chosen executor; yields outcomes as units finish.

    ``fn`` must be a module-level function (it is pickled by reference for process and Ray).
    ``workers`` defaults to the CPU count; ``address`` points Ray at an existing cluster. ``on_note``
    receives the units' progress lines (:func:`note`; serial and process executors), in a thread of its own
    for the process executor.
    """
    units = list(units)
    check_executor(executor)
    if not units:
        return iter(())
    workers = workers or min(len(units), os.cpu_count() or 1)
    if executor == "serial":
        return _serial(fn, units, retries, on_note)
    if executor == "process":
        return _process(fn, units, retries, workers, on_note)
    return _ray(fn, units, retries, workers, address)

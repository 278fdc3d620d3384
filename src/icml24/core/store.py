"""The run store: ``runs/<slug>/<preset>/<config-hash>/`` and resumable execution of many runs.

Layout of one run directory::

    config.json           the exact config (written first)
    seeds/seed-<k>.json   one file per finished seed: metrics, curves, wall time (the resume unit)
    work/seed-<k>/        stage checkpoints of an unfinished seed (``RunContext.stage``); removed when
                          the seed file is written
    metrics.jsonl         all seeds, one JSON object per line (written when every seed is done)
    claims.json           claim results at this preset
    figures/*.png         figures from the paper's ``figures(result)``
    provenance.json       versions, git sha, device, wall time
    result.json           everything above but the figures, in one file

A unit (paper, preset, config hash, seed) is done exactly when its seed file exists and carries the
current code fingerprint (:attr:`Paper.code_hash`): after the paper's code changes, its seeds run
again. Every file is written atomically, so a killed run resumes by skipping done units and never
reads half a file; a killed seed resumes from its last stage checkpoint.

Expensive deterministic artefacts shared by seeds live in ``<root>/_cache/<slug>/`` (see
``RunContext.artefact``). Each run is finalized as soon as its last seed is in, while the call's other runs go
on. A user fault in any unit (``executors.USER_FAULTS``) stops the whole call: what the call wrote for the runs
not yet finalized is removed and the fault is raised as one :class:`UserError` line.
"""

from __future__ import annotations

import dataclasses
import io
import math
import shutil
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, NamedTuple

from icml24.core import results as R
from icml24.core.config import config_hash, to_dict
from icml24.core.errors import UserError
from icml24.core.executors import Unit, error_line, execute, looks_diverged
from icml24.core.registry import Paper, code_files


@dataclass
class RunRequest:
    """One configured paper run: which paper, which preset name, the config and the seeds."""

    paper: Paper
    preset: str
    config: Any
    seeds: tuple[int, ...]

    @property
    def hash(self) -> str:
        return config_hash(self.config)

    @property
    def device(self) -> str:
        """The config's ``device`` field, or ``"cpu"`` for papers without one."""
        return str(getattr(self.config, "device", "cpu"))

    def units(self, seeds: Iterable[int], root: str | Path | None = None, code_hash: str | None = None) -> list[Unit]:
        """Executor units for ``seeds`` (the config frozen as sorted, hashable key/value pairs).

        With a store ``root`` each unit gets its checkpoint folder and the artefact cache; CPUs per
        unit come from the config's ``threads`` (at least 1), a GPU per unit when its device is cuda.
        """
        frozen = tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in sorted(to_dict(self.config).items()))
        code = code_hash if code_hash is not None else self.paper.code_hash  # the caller's, when it has one
        threads = int(getattr(self.config, "threads", 1) or 1)
        gpus = 1.0 if self.device.startswith("cuda") else 0.0
        rdir = run_dir(Path(root), self) if root is not None else None
        cache = str(cache_dir(Path(root), self.paper.slug)) if root is not None else ""
        return [Unit(self.paper.slug, self.paper.module, self.preset, frozen, self.hash, s, device=self.device,
                     workdir=str(work_dir(rdir, s)) if rdir is not None else "", cache_dir=cache, code_hash=code,
                     num_cpus=float(max(threads, 1)), num_gpus=gpus)
                for s in seeds]


@dataclass
class RunOutcome:
    """A finished request: its result (None when no seed succeeded), where it lives, what was skipped."""

    request: RunRequest
    run_dir: Path
    result: R.RunResult | None
    skipped: int
    failed: dict[int, str] = field(default_factory=dict)


def run_dir(root: Path, req: RunRequest) -> Path:
    return Path(root) / req.paper.slug / req.preset / req.hash


def seed_file(rdir: Path, seed: int) -> Path:
    return rdir / "seeds" / f"seed-{seed}.json"


def error_file(rdir: Path, seed: int) -> Path:
    """The full traceback of a seed's last failed attempt (removed when the seed later succeeds)."""
    return rdir / "errors" / f"seed-{seed}.txt"


def figure_error_file(rdir: Path) -> Path:
    """The traceback of a run whose figures could not be drawn (its result and claims are still written)."""
    return rdir / "errors" / "figures.txt"


def work_dir(rdir: Path, seed: int) -> Path:
    """Stage checkpoints of one unfinished seed."""
    return rdir / "work" / f"seed-{seed}"


def cache_dir(root: Path, slug: str) -> Path:
    """The artefact cache of one paper in a store."""
    return root / "_cache" / slug


def load_run(rdir: str | Path) -> R.RunResult:
    """Read a finished run directory back (``result.json``); a bad path is a :class:`UserError`."""
    path = Path(rdir) / "result.json"
    if Path(rdir).is_file() and Path(rdir).suffix == ".json":
        path = Path(rdir)
    try:
        return R.RunResult.from_dict(R.read_json(path))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UserError(f"cannot read run results from {rdir}: {type(exc).__name__}: {exc}") from None


def save_figures(req: RunRequest, result: R.RunResult, folder: Path) -> list[Path]:
    """Render the paper's ``figures(result)`` (if it defines one) to PNG files under ``folder``."""
    make = getattr(req.paper.experiment, "figures", None)
    if make is None:
        return []
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    for name, fig in make(result).items():
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
        plt.close(fig)
        paths.append(R.atomic_write_bytes(folder / f"{name}.png", buf.getvalue()))
    return paths


def source_files(paper: Paper) -> list[Path]:
    """The files whose uncommitted changes make a run's git sha ``-dirty`` (and keep it from being published):
    those of the code hash, which made the seeds, and the paper's claims and the claim engine, which made the
    verdicts stored beside them."""
    core = Path(R.__file__).resolve().parent
    judged = [paper.folder / "claims.py", core / "claims.py", core / "power.py", core / "stats.py"]
    own = code_files(paper.folder)
    return [*own, *(p for p in judged if p.is_file() and p not in own)]


def _finalize(req: RunRequest, rdir: Path, failed: dict[int, str], elapsed: float, device: str,
              code_hash: str) -> R.RunResult | None:
    seeds = [R.SeedResult.from_dict(R.read_json(seed_file(rdir, s)))
             for s in req.seeds if seed_file(rdir, s).exists()]
    raised = {str(k): [f"raised {error_line(e)}"] for k, e in failed.items() if looks_diverged(e)}
    if not seeds and not raised:
        return None
    result = R.RunResult(req.paper.slug, req.preset, to_dict(req.config), req.hash, seeds,
                         failed={str(k): v for k, v in failed.items()})
    result.diverged = {**result.find_diverged(), **raised}
    result.claims = [c.to_dict() for c in judge(req.paper, result, req.preset)]
    compute = sum(s.wall_time for s in seeds)
    result.provenance = R.provenance(device=device, wall_time=compute, code_paths=source_files(req.paper),
                                     elapsed_s=elapsed, seeds=list(req.seeds), code_hash=code_hash)
    R.atomic_write_text(rdir / "metrics.jsonl", "".join(R.dumps(s.to_dict(), indent=None) for s in seeds))
    R.write_json(rdir / "claims.json", result.claims)
    R.write_json(rdir / "provenance.json", result.provenance)
    try:
        if seeds:  # every seed diverged by raising: nothing to draw
            save_figures(req, result, rdir / "figures")
    except Exception:  # a figure of diverged numbers must not cost the run its result (the claims say why)
        R.atomic_write_text(figure_error_file(rdir), traceback.format_exc())
    else:
        figure_error_file(rdir).unlink(missing_ok=True)
    R.write_json(rdir / "result.json", result.to_dict())
    return result


def judge(paper: Paper, result: R.RunResult, preset: str) -> list:
    """The paper's claims on ``result`` at ``preset``; when a seed diverged by raising (a solver's LinAlgError, a
    NaN check, an overflow: listed in ``result.diverged`` without a seed result), every claim is not checkable,
    naming it: the other seeds alone are not the run the claim is about."""
    from icml24.core.claims import ClaimResult, Verdict

    have = {str(s.seed) for s in result.seeds}
    raised = {k: v for k, v in result.diverged.items() if k not in have}
    if not raised:
        return [_with_seeds_needed(paper, c, result, preset) for c in paper.check(result, preset)]
    first, why = next(iter(sorted(raised.items(), key=lambda kv: int(kv[0]))))
    detail = f"seed {first} diverged ({why[0]})" + (f" and {len(raised) - 1} more" if len(raised) > 1 else "")
    if result.seeds:
        return [dataclasses.replace(c, verdict=Verdict.NOT_CHECKABLE, detail=detail, power=math.nan)
                for c in paper.check(result, preset)]
    nan = math.nan
    return [ClaimResult(c.id, c.kind, preset, Verdict.NOT_CHECKABLE, nan, nan, nan, 0,
                        c.bands[preset].describe() if preset in c.bands else "not checkable", detail, c.statement,
                        c.where, c.paper_value) for c in paper.claims]


def _with_seeds_needed(paper: Paper, c: Any, result: R.RunResult, preset: str) -> Any:
    """``c`` (a ClaimResult) with ``seeds_needed`` where it is inconclusive with a computed power: how many seeds
    would let the run see the paper's effect (``core.claims.seeds_for_power``; under a second per claim)."""
    from icml24.core.claims import MAX_SEEDS, Verdict, seeds_for_power

    if c.verdict is not Verdict.INCONCLUSIVE or math.isnan(c.power):
        return c
    (claim,) = [k for k in paper.claims if k.id == c.claim_id]
    n = seeds_for_power(claim, result, preset)
    return dataclasses.replace(c, seeds_needed=MAX_SEEDS + 1 if n is None else n)


def _load(path: Path, redo_corrupt: bool) -> Any:
    """A run-store JSON file, parsed once; None when it is absent. A corrupt one is a :class:`UserError`
    naming it, unless ``redo_corrupt``: then it is removed (None) and its unit runs again."""
    if not path.exists():
        return None
    try:
        return R.read_json(path)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        if not redo_corrupt:
            raise UserError(f"corrupt run file {path} ({type(exc).__name__}: {exc}); "
                            "rerun with --redo-corrupt to start that unit over") from None
        path.unlink()
        return None


def _first_missing(path: Path, root: Path) -> Path:
    """The outermost folder between ``root`` (inclusive) and ``path`` that does not exist yet."""
    top = path
    while top != root and not top.parent.exists():
        top = top.parent
    return top


def _undo(created: list[Path], written: list[Path]) -> None:
    """Remove what a stopped call wrote: the folders it created and the seed files it added elsewhere."""
    for path in written:
        path.unlink(missing_ok=True)
    for folder in reversed(created):
        shutil.rmtree(folder, ignore_errors=True)


class SeedSeconds(NamedTuple):
    """An estimate of a run's seed times, for :func:`schedule`: its first seed (which builds the run's artefacts)
    and each of its other seeds."""

    first: float
    other: float


def schedule(units: Iterable[Unit], seconds: Callable[[Unit], SeedSeconds]) -> list[Unit]:
    """The order in which units go to the executor: every run's first unit, then the others, each group
    longest first by ``seconds(unit)`` (``.first`` for a first unit, ``.other`` for the rest; ties keep their
    order).

    A run's first unit builds the artefacts its other seeds share (an expert, a converted model, a pretrained
    net): started early, each build overlaps other runs' seeds instead of holding the run's later seeds up, and
    the longest seeds start first, so no long one is left alone at the end (longest-processing-time first).
    The order is a hint to the process pool (which starts units in this order) and to Ray (which may not).

    >>> from icml24.core.executors import Unit
    >>> us = [Unit(s, "m", "quick", (), "h", k) for s, n in (("a", 3), ("b", 2)) for k in range(n)]
    >>> t = {"a": SeedSeconds(9.0, 1.0), "b": SeedSeconds(5.0, 5.0)}
    >>> [(u.slug, u.seed) for u in schedule(us, lambda u: t[u.slug])]
    [('a', 0), ('b', 0), ('b', 1), ('a', 1), ('a', 2)]
    """
    firsts: list[Unit] = []
    rest: list[Unit] = []
    seen: set[tuple[str, str, str]] = set()
    for u in units:
        run = (u.slug, u.preset, u.config_hash)
        (rest if run in seen else firsts).append(u)
        seen.add(run)
    return sorted(firsts, key=lambda u: -seconds(u).first) + sorted(rest, key=lambda u: -seconds(u).other)


def _removable(created: Path, rdir: Path, kept: list[Path]) -> Path:
    """The outermost folder between ``created`` (a folder this call made) and the run folder ``rdir`` below it
    that holds no folder in ``kept`` (runs finalized before a user fault stopped the call): what undoing the
    run may remove."""
    top = rdir
    while top != created and not any(k.is_relative_to(top.parent) for k in kept):
        top = top.parent
    return top


def execute_runs(
    requests: Iterable[RunRequest],
    root: str | Path = "runs",
    executor: str = "serial",
    workers: int | None = None,
    address: str | None = None,
    device: str = "cpu",
    on_event: Callable[[str, Any], None] | None = None,
    redo_corrupt: bool = False,
    seed_seconds: Callable[[RunRequest], SeedSeconds] | None = None,
) -> list[RunOutcome]:
    """Run every request's missing seeds on one executor, finalizing each run directory as soon as its last
    seed is in (claims, figures, ``result.json``), while the other runs go on.

    Units are submitted in :func:`schedule` order, with ``seed_seconds(request)`` (estimated seed times, e.g.
    from the published run; default: all equal) as their lengths. Two requests of the same run (paper, preset,
    config) are a :class:`UserError`. A corrupt file in a run directory is a :class:`UserError` naming it; with
    ``redo_corrupt`` it is removed and its unit runs again. A user fault in a unit stops the call: the runs
    already finalized stay, what the call wrote for the others is removed. An exception while finalizing one
    run (its claims code) is raised when the other runs' seeds are done.

    ``on_event(kind, payload)`` receives ``("start", {i: (seeds, resumed)})`` with ``i`` the request's index,
    ``("done", (i, outcome))`` per finished unit (progress bars hang off it), ``("note", line)`` for a unit's long
    stage or artefact build (serial and process executors; see ``core.executors.note``), ``("finalize", i)``
    before a run's claims and figures and ``("finalized", run_outcome)`` after them.
    """
    requests = list(requests)
    root = Path(root)
    emit = on_event or (lambda kind, payload: None)
    runs = [(r.paper.slug, r.preset, r.hash) for r in requests]
    if len(set(runs)) < len(runs):
        twice = sorted({f"{run[0]} [{run[1]}]" for run in runs if runs.count(run) > 1})
        raise UserError(f"the same run asked for twice: {', '.join(twice)}")
    units: list[Unit] = []
    skipped: dict[int, int] = {}
    dirs: dict[int, Path] = {}
    created: dict[int, Path] = {}  # removed again if a user fault stops the call before the run is finalized
    written: dict[int, list[Path]] = {i: [] for i in range(len(requests))}
    code = {i: req.paper.code_hash for i, req in enumerate(requests)}
    todo: dict[int, list[int]] = {}
    for i, req in enumerate(requests):  # read and check everything first: a bad store writes nothing
        rdir = dirs[i] = run_dir(root, req)
        saved = _load(rdir / "config.json", redo_corrupt)
        if saved is not None and saved != to_dict(req.config):
            raise UserError(f"{rdir} holds a different config; remove it or use another --out")
        # a seed is done when its file exists and was written by the current code
        todo[i] = [s for s in req.seeds if (_load(seed_file(rdir, s), redo_corrupt) or {}).get("code_hash") != code[i]]
    for i, req in enumerate(requests):
        rdir = dirs[i]
        if not (rdir / "config.json").exists():
            created[i] = _first_missing(rdir, root)
            R.write_json(rdir / "config.json", to_dict(req.config))
        for stale in rdir.rglob(R.TMP_PREFIX + "*"):  # temp files of a killed run: never read, remove
            stale.unlink()
        skipped[i] = len(req.seeds) - len(todo[i])
        units += req.units(todo[i], root, code[i])
    emit("start", {i: (len(r.seeds), skipped[i]) for i, r in enumerate(requests)})
    index = {run: i for i, run in enumerate(runs)}
    estimate = {i: seed_seconds(r) if seed_seconds else SeedSeconds(0.0, 0.0) for i, r in enumerate(requests)}
    units = schedule(units, lambda u: estimate[index[(u.slug, u.preset, u.config_hash)]])
    failed: dict[int, dict[int, str]] = {i: {} for i in range(len(requests))}
    left = {i: len(todo[i]) for i in range(len(requests))}
    outcomes: dict[int, RunOutcome] = {}
    broken: list[BaseException] = []  # a run whose claims code raised: the others' seeds still run
    start = time.perf_counter()

    def finalize(i: int) -> None:
        emit("finalize", i)
        try:
            result = _finalize(requests[i], dirs[i], failed[i], time.perf_counter() - start, device, code[i])
        except Exception as exc:  # noqa: BLE001 (raised below, once every seed is in)
            broken.append(exc)
            return
        outcomes[i] = RunOutcome(requests[i], dirs[i], result, skipped[i], failed[i])
        emit("finalized", outcomes[i])

    try:
        for i in range(len(requests)):  # every seed resumed: nothing to wait for
            if not left[i]:
                finalize(i)
        for out in execute(units, executor=executor, workers=workers, address=address,
                           on_note=lambda text: emit("note", text)):
            i = index[(out.unit.slug, out.unit.preset, out.unit.config_hash)]
            if out.user_error is not None:
                raise UserError(f"{out.unit.slug} seed {out.unit.seed}: {out.user_error}")
            if out.error is None:
                assert out.result is not None  # a unit without an error returned its result dict
                written[i].append(R.write_json(seed_file(dirs[i], out.unit.seed), {**out.result, "code_hash": code[i]}))
                shutil.rmtree(work_dir(dirs[i], out.unit.seed), ignore_errors=True)
                error_file(dirs[i], out.unit.seed).unlink(missing_ok=True)
            else:
                failed[i][out.unit.seed] = out.error
                written[i].append(R.atomic_write_text(error_file(dirs[i], out.unit.seed), out.error))
            emit("done", (i, out))
            left[i] -= 1
            if not left[i]:
                finalize(i)
    except UserError:  # a user fault in a seed, or an executor that cannot start: leave nothing unfinished behind
        open_runs = [i for i in range(len(requests)) if i not in outcomes]
        kept = [dirs[i] for i in outcomes]
        _undo([_removable(created[i], dirs[i], kept) for i in open_runs if i in created],
              [p for i in open_runs for p in written[i]])
        raise
    if broken:
        raise broken[0]
    return [outcomes[i] for i in range(len(requests))]


def run_preset(paper: Paper, preset: str, root: str | Path, executor: str = "serial") -> R.RunResult:
    """Run ``paper`` at a preset with its default seeds into the store at ``root``; the finished result."""
    req = RunRequest(paper, preset, paper.preset(preset), paper.default_seeds(preset))
    (out,) = execute_runs([req], root=root, executor=executor)
    if out.result is None or out.failed:
        raise RuntimeError(f"{paper.slug} [{preset}]: seeds failed: {sorted(out.failed)}")
    return out.result

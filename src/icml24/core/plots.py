"""Figure helpers shared by the papers' ``figures(result)`` (matplotlib is imported by the caller)."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np


def band(ax: Any, x: Any, ys: Any, label: str | None = None, center: Literal["mean", "geomean"] = "mean",
         alpha: float = 0.2, **line_kw: Any) -> Any:
    """Plot the centre of a curve over seeds and shade its min-max band over seeds; returns the line.

    Args:
        ax: a matplotlib Axes.
        x: (P,) abscissae.
        ys: (S, P) one row per seed.
        center: ``"mean"`` (arithmetic) or ``"geomean"`` (for log-scaled errors).
        line_kw: passed to ``ax.plot`` (marker, ms, ls, color, ...); the band takes the line's colour.

    With a single seed only the line is drawn.
    """
    ys = np.asarray(ys, dtype=float).reshape(-1, np.size(x))  # (S, P)
    mid = np.exp(np.log(ys).mean(axis=0)) if center == "geomean" else ys.mean(axis=0)
    (line,) = ax.plot(x, mid, label=label, **line_kw)
    if ys.shape[0] > 1:
        ax.fill_between(x, ys.min(axis=0), ys.max(axis=0), color=line.get_color(), alpha=alpha)
    return line

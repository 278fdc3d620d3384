"""Small torch helpers shared by the papers that train networks."""

from __future__ import annotations

from torch import nn


def n_params(module: nn.Module) -> int:
    """Number of trainable scalars of ``module`` (parameters with ``requires_grad``).

    >>> n_params(nn.Linear(3, 2))  # 3 * 2 weights + 2 biases
    8
    """
    return sum(p.numel() for p in module.parameters() if p.requires_grad)

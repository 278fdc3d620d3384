"""Small torch helpers shared by the papers that train networks."""

from __future__ import annotations

from torch import nn


def n_params(module: nn.Module) -> int:
    """Number of trainable scalars of ``module`` (parameters with ``requires_grad``).

    >>> n_params(nn.Linear(3, 2))  # 3 * 2 weights + 2 biases
    8
    """
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


def relu_mlp(n_in: int, hidden: int, layers: int, n_out: int) -> nn.Sequential:
    """``layers`` hidden layers Linear + ReLU of width ``hidden``, then a Linear to ``n_out`` (with ``layers``
    = 0 a single Linear): the plain MLP of etm's energy, the DDPM noise network and purified_il's policy.

    >>> [type(m).__name__ for m in relu_mlp(3, 8, 2, 1)]
    ['Linear', 'ReLU', 'Linear', 'ReLU', 'Linear']
    """
    mods: list[nn.Module] = []
    width = n_in
    for _ in range(layers):
        mods += [nn.Linear(width, hidden), nn.ReLU()]
        width = hidden
    mods.append(nn.Linear(width, n_out))
    return nn.Sequential(*mods)

"""FlatAdam (common/optim.py) against torch.optim.Adam / AdamW, bit for bit, and its first step by hand."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from icml24.common.optim import FlatAdam


def _net(seed: int, dropout: bool) -> nn.Sequential:
    torch.manual_seed(seed)
    # odd sizes: every tensor starts at an odd offset of the flat buffer, so the vectorised kernels split it
    # into body and tail elsewhere than torch's per-tensor calls do
    mods: list[nn.Module] = [nn.Linear(5, 11), nn.ReLU()]
    if dropout:
        mods.append(nn.Dropout(0.2))
    return nn.Sequential(*mods, nn.Linear(11, 13), nn.ReLU(), nn.Linear(13, 3))


def _train(flat: bool, weight_decay: float, decoupled: bool, dropout: bool, steps: int = 60) -> list[torch.Tensor]:
    net = _net(0, dropout)
    gen = torch.Generator().manual_seed(1)
    X, Y = torch.randn(40, 5, generator=gen), torch.randn(40, 3, generator=gen)
    kw = {"lr": 3e-2, "weight_decay": weight_decay}
    if flat:
        opt = FlatAdam(net.parameters(), decoupled=decoupled, **kw)
    else:
        opt = (torch.optim.AdamW if decoupled else torch.optim.Adam)(net.parameters(), **kw)
    torch.manual_seed(2)                                     # dropout's masks: the same draws in both runs
    for _ in range(steps):
        idx = torch.randint(0, 40, (16,), generator=gen)
        loss = ((net(X[idx]) - Y[idx]) ** 2).sum(1).mean()
        if isinstance(opt, FlatAdam):
            opt.zero_grad()
        else:
            opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return [p.detach().clone() for p in net.parameters()]


@pytest.mark.parametrize("weight_decay,decoupled,dropout", [(0.0, False, False), (0.0, False, True),
                                                            (1e-2, False, False), (1e-2, True, False)])
def test_flat_adam_equals_torch_adam_bit_for_bit(weight_decay: float, decoupled: bool, dropout: bool) -> None:
    ours = _train(True, weight_decay, decoupled, dropout)
    theirs = _train(False, weight_decay, decoupled, dropout)
    start = [p.detach() for p in _net(0, dropout).parameters()]
    assert all(not torch.equal(a, s) for a, s in zip(ours, start))        # the parameters moved
    assert all(torch.equal(a, b) for a, b in zip(ours, theirs))


def test_first_step_by_hand() -> None:
    """Step 1: m_1 / (1 - b1) = g and v_1 / (1 - b2) = g^2, so with eps = 0 theta_1 = theta_0 - lr sign(g)."""
    w = nn.Parameter(torch.tensor([1.0, -2.0, 0.5]))
    opt = FlatAdam([w], lr=0.1, eps=0.0)
    opt.zero_grad()
    (w * torch.tensor([3.0, -0.25, 0.0])).sum().backward()   # g = (3, -0.25, 0)
    opt.step()
    assert torch.allclose(w.detach()[:2], torch.tensor([0.9, -1.9]), atol=1e-6, rtol=0)
    assert torch.isnan(w.detach()[2])                          # 0 / 0 with eps = 0, as in torch.optim.Adam


@pytest.mark.parametrize("attr", ["grad", "data"])
def test_refuses_a_gradient_or_parameter_rebound_outside_the_buffer(attr: str) -> None:
    w = nn.Parameter(torch.ones(3))
    opt = FlatAdam([w])
    setattr(w, attr, torch.zeros(3))
    with pytest.raises(RuntimeError, match="left the flat buffer"):
        opt.step()


def test_refuses_mixed_dtypes() -> None:
    with pytest.raises(ValueError, match="one dtype and device"):
        FlatAdam([nn.Parameter(torch.ones(2)), nn.Parameter(torch.ones(2, dtype=torch.float64))])

"""Benchmark: common.optim.FlatAdam against torch.optim.Adam (its peer: the same numbers on the CPU).

Workload: purified_il's BC fit at QUICK size (MLP 11 -> 100 -> 100 -> 2 on z-scored states, batch 256,
1000 Adam steps at lr 3e-4, 550 pairs), and one of its DDPMs (13 -> 256 x 3 -> 13 with a step embedding,
batch 50, 300 steps), one thread, the two optimisers' fits interleaved. Prints the median times, the ratio and
whether the trained parameters are bit-identical.
"""

from __future__ import annotations

from unittest import mock

import numpy as np
import torch

from icml24.core.bench import interleaved, pin_threads, ratio_row


class _TorchAdam:
    """torch.optim.Adam behind FlatAdam's two calls."""

    def __init__(self, params, lr: float):
        self.opt = torch.optim.Adam(params, lr=lr)

    def zero_grad(self) -> None:
        self.opt.zero_grad(set_to_none=True)

    def step(self) -> None:
        self.opt.step()


def main() -> None:
    pin_threads(1)
    from icml24.common import optim
    from icml24.papers.purified_il import bc, purify

    rng = np.random.default_rng(0)
    S, A = rng.normal(size=(550, 11)), rng.normal(size=(550, 2))
    X = rng.normal(size=(50, 13))
    bc_cfg = bc.BCConfig(100, 2, 1000, 256, 3e-4)
    ddpm_cfg = purify.DDPMConfig(1000, 256, 3, 32, 300, 256, 1e-3)
    out: dict[str, list[torch.Tensor]] = {}

    def fit(kind: str, which: str):
        cls = optim.FlatAdam if kind == "flat" else _TorchAdam
        # the module-level name each fit constructs, swapped for this call only
        with mock.patch.object(bc, "FlatAdam", cls), mock.patch.object(purify, "FlatAdam", cls):
            gen = torch.Generator().manual_seed(0)
            torch.manual_seed(0)                                  # the networks' initial weights (global stream)
            model = bc.fit_bc(S, A, bc_cfg, gen) if which == "bc" else purify.fit_purifier(X, ddpm_cfg, gen).model
        out[f"{kind}_{which}"] = [p.detach().clone() for p in model.parameters()]

    for which, name in (("bc", "BC fit (purified_il QUICK: 100-100 MLP, 1000 steps)"),
                        ("ddpm", "DDPM fit (purified_il QUICK: 3 x 256, 300 steps)")):
        t = interleaved({k: (lambda k=k: fit(k, which)) for k in ("flat", "torch")}, repeats=5)
        same = all(torch.equal(a, b) for a, b in zip(out[f"flat_{which}"], out[f"torch_{which}"]))
        print(f"{name}: FlatAdam {t['flat']:.3f} s, torch.optim.Adam {t['torch']:.3f} s, "
              f"ratio {t['flat'] / t['torch']:.2f}; parameters bit-identical: {same}")
        ratio_row(name, "torch.optim.Adam (single-tensor, the CPU default)", t["flat"], t["torch"],
                  "yes (bit-identical)" if same else "NO")


if __name__ == "__main__":
    main()

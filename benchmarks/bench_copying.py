"""Benchmark: our Mamba against mambapy (the pure-PyTorch Mamba on PyPI, Blelloch parallel scan with a
hand-written backward), side by side in one process, one thread, interleaved repeats, medians.

Workloads (issue 17): the selective scan alone, and a 2-layer Mamba stack (RMSNorm + mixer, residual),
d_model 128, d_state 16, expand 2, sequence 256, batch 8, forward + backward. Outputs are checked equal
(float tolerance) before timing: both stacks get the same weights. Also the step-by-step loop
(:func:`selective_scan_naive`) as a second baseline row, and training throughput at the QUICK sizes.

Setup: ``pip install --no-deps mambapy==1.2.0`` (mambapy needs only torch); without it the peer rows are
skipped with a note. Run: ``python benchmarks/bench_copying.py`` (about a minute on one core).
"""

from __future__ import annotations

import numpy as np
import torch

from icml24.core.bench import interleaved, pin_threads, ratio_row
from icml24.papers.copying.experiment import QUICK, build_model
from icml24.papers.copying.model import MambaMixer, RMSNorm, selective_scan, selective_scan_naive
from icml24.papers.copying.tasks import masked_lm_loss, packed_batch

B, L, D, N, LAYERS = 8, 256, 128, 16, 2
E = 2 * D


def scan_inputs():
    g = torch.Generator().manual_seed(0)
    return (torch.randn(B, L, E, generator=g).requires_grad_(), (0.1 * torch.rand(B, L, E, generator=g)).requires_grad_(),
            (-torch.rand(E, N, generator=g) * N).requires_grad_(), torch.randn(B, L, N, generator=g).requires_grad_(),
            torch.randn(B, L, N, generator=g).requires_grad_(), torch.ones(E, requires_grad=True))


class OurStack(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norms = torch.nn.ModuleList([RMSNorm(D) for _ in range(LAYERS)])
        self.mixers = torch.nn.ModuleList([MambaMixer(D, N) for _ in range(LAYERS)])

    def forward(self, x):
        for norm, mixer in zip(self.norms, self.mixers):
            x = x + mixer(norm(x))
        return x


def copy_weights(ours: OurStack, peer) -> None:
    """Give mambapy's stack our weights (same parameterisation: in/conv/x/dt/out projections, A_log, D)."""
    with torch.no_grad():
        for norm, mixer, layer in zip(ours.norms, ours.mixers, peer.layers):
            layer.norm.weight.copy_(norm.w)
            mb = layer.mixer
            mb.in_proj.weight.copy_(mixer.in_proj.weight)
            mb.conv1d.weight.copy_(mixer.conv.weight)
            mb.conv1d.bias.copy_(mixer.conv.bias)
            mb.x_proj.weight.copy_(mixer.x_proj.weight)
            mb.dt_proj.weight.copy_(mixer.dt_proj.weight)
            mb.dt_proj.bias.copy_(mixer.dt_proj.bias)
            mb.A_log.copy_(mixer.A_log)
            mb.D.copy_(mixer.D)
            mb.out_proj.weight.copy_(mixer.out_proj.weight)


def train_tokens_per_s(kind: str, steps: int = 5) -> float:
    torch.manual_seed(0)
    model = build_model(kind, QUICK)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    batches = [packed_batch("copy", QUICK.batch, QUICK.context, (QUICK.train_len_min, QUICK.train_len_max),
                            QUICK.alphabet, rng)[0] for _ in range(steps + 1)]
    it = iter(batches)

    def step():
        b = next(it)
        loss = masked_lm_loss(model(b.ids[:, :-1]), b.ids, b.mask)
        opt.zero_grad()
        loss.backward()
        opt.step()
    sec = interleaved({"step": step}, repeats=steps)["step"]
    return QUICK.batch * QUICK.context / sec


def main() -> None:
    pin_threads(1)
    try:
        from mambapy.mamba import Mamba as PeerMamba
        from mambapy.mamba import MambaBlock, MambaConfig
    except ImportError:
        PeerMamba = None
        print("mambapy is not installed (pip install --no-deps mambapy==1.2.0): peer rows skipped")
    x, delta, A, Bm, Cm, Dskip = scan_inputs()
    args = (x, delta, A, Bm, Cm)

    def ours_scan():
        (selective_scan(*args) + Dskip * x).sum().backward()

    def naive_scan():
        dA, dBx = torch.exp(delta.unsqueeze(-1) * A), (delta * x).unsqueeze(-1) * Bm.unsqueeze(2)
        (selective_scan_naive(dA, dBx, Cm) + Dskip * x).sum().backward()

    fns = {"ours": ours_scan, "loop": naive_scan}
    rows = []
    if PeerMamba is not None:
        cfg = MambaConfig(d_model=D, n_layers=LAYERS, d_state=N)
        peer_block = MambaBlock(cfg)
        ref = peer_block.selective_scan(x, delta, A, Bm, Cm, Dskip)
        assert torch.allclose(selective_scan(*args) + Dskip * x, ref, atol=1e-4, rtol=1e-4), "scan outputs differ"
        fns["mambapy"] = lambda: peer_block.selective_scan(x, delta, A, Bm, Cm, Dskip).sum().backward()
    t = interleaved(fns)
    if "mambapy" in t:
        rows.append(("selective scan, fwd+bwd", t["mambapy"], t["ours"], "mambapy (pscan)"))
    rows.append(("selective scan, fwd+bwd", t["loop"], t["ours"], "our step-by-step loop"))

    torch.manual_seed(0)
    ours = OurStack()
    u = torch.randn(B, L, D, generator=torch.Generator().manual_seed(1))
    fns = {"ours": lambda: ours(u).square().mean().backward()}
    if PeerMamba is not None:
        peer = PeerMamba(MambaConfig(d_model=D, n_layers=LAYERS, d_state=N))
        copy_weights(ours, peer)
        with torch.no_grad():
            assert torch.allclose(ours(u), peer(u), atol=1e-4, rtol=1e-4), "stack outputs differ"
        fns["mambapy"] = lambda: peer(u).square().mean().backward()
        t = interleaved(fns)
        rows.append((f"Mamba {LAYERS} layers, fwd+bwd", t["mambapy"], t["ours"], "mambapy"))
    print(f"B={B} L={L} d_model={D} d_state={N} expand=2, 1 thread, median of 7 interleaved repeats; outputs "
          "checked equal (atol 1e-4)")
    print(f"{'workload':32s} {'baseline':24s} {'baseline ms':>12s} {'ours ms':>9s} {'ours/baseline':>14s}")
    for name, base, mine, who in rows:
        print(f"{name:32s} {who:24s} {base * 1e3:12.1f} {mine * 1e3:9.1f} {mine / base:14.2f}")
        ratio_row(f"{name}, B={B} L={L}", who, mine, base, "yes (atol 1e-4)")
    print("training throughput at QUICK sizes (tokens/s, batch x context per step):")
    for kind in ("hard_alibi", "rope", "mamba", "lstm"):
        print(f"  {kind:11s} {train_tokens_per_s(kind):10.0f}")


if __name__ == "__main__":
    main()

"""Benchmark: per-layer GPTQ (4 bits, groups of 64) and SparseGPT (50% 2:4) of compressed_trust against
llmcompressor (the best peer on PyPI; it runs both on a CPU) and against this package's column-by-column
references (an explicit inverse Hessian, one column at a time, as in OBQ / the papers' derivations), on the
same SmolLM2-135M-Instruct layers and calibration batch. Medians of 3 rounds, one thread, ours and the peer timed
in turns within each round (the peer in a process of its own per round); errors are the relative output error
tr(D H D^T) / tr(W H W^T) on that batch.

llmcompressor pins transformers <= 5.17 (this package's environment has 5.24), so it runs in its own
environment, built by `make bench` into runs/bench-llmcompressor (or give its python as
ICML24_LLMCOMPRESSOR_PYTHON); without it the peer rows are skipped.
Run: python benchmarks/bench_compressed_trust.py [--reference]   (about 1 minute; --reference adds the
column-by-column reference, about 4 minutes more)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import torch

from icml24.common import llm
from icml24.core.bench import median_time, pin_threads, ratio_row
from icml24.core.context import RunContext
from icml24.papers.compressed_trust import compress as C
from icml24.papers.compressed_trust import layers, trust

REPO = Path(__file__).resolve().parents[1]
PEER = Path(os.environ.get("ICML24_LLMCOMPRESSOR_PYTHON", REPO / "runs" / "bench-llmcompressor" / "bin" / "python"))
LAYERS = ("model.layers.10.self_attn.q_proj", "model.layers.10.self_attn.k_proj", "model.layers.10.mlp.gate_proj",
          "model.layers.10.mlp.down_proj")
"""One layer of each weight shape of SmolLM2-135M (out x in): 576 x 576 (q, o), 192 x 576 (k, v), 1536 x 576
(gate, up), 576 x 1536 (down)."""


def gptq_reference(W: torch.Tensor, H: torch.Tensor, bits: int, group: int) -> torch.Tensor:
    """GPTQ one column at a time with an explicit inverse Hessian (no Cholesky, no blocks)."""
    W = W.double().clone()
    Hinv = torch.linalg.inv(H.double() + C.DAMP * torch.diag(H.double()).mean() * torch.eye(len(H), dtype=torch.float64))
    Q = torch.zeros_like(W)
    for q in range(W.shape[1]):
        if q % group == 0:
            scale, zero = C.grid(W[:, q:q + group], bits)
        Q[:, q] = C.quantize(W[:, q:q + 1], scale, zero, bits)[:, 0]
        err = (W[:, q] - Q[:, q]) / Hinv[q, q]
        W[:, q + 1:] -= err[:, None] * Hinv[q, q + 1:][None, :]
        Hinv = Hinv - Hinv[:, q:q + 1] @ Hinv[q:q + 1, :] / Hinv[q, q]
    return Q.float()


def peer(W: torch.Tensor, H: torch.Tensor, repeats: int = 1) -> dict | None:
    """llmcompressor's GPTQ and SparseGPT of one layer in the peer's environment (after a warm-up call each):
    their weights and median seconds over ``repeats``; None without the peer environment."""
    if not PEER.is_file():
        return None
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "in.pt", Path(tmp) / "out.pt"
        torch.save({"W": W, "H": H, "bits": 4, "group": 64}, src)
        subprocess.run([str(PEER), str(REPO / "benchmarks" / "peers" / "llmcompressor_layer.py"), str(src), str(dst),
                        str(repeats)], check=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
        return torch.load(dst)


def interleaved(rows: dict, W: torch.Tensor, H: torch.Tensor, rounds: int) -> tuple[dict, dict | None]:
    """Median seconds of each of ``rows`` (ours) and of the peer's two methods, timed in turns, ``rounds`` times:
    ours once each (after a warm-up), then one peer process (one timed call of each method), so that a change in
    the machine's speed during the benchmark falls on both sides alike."""
    for f in rows.values():
        f()
    ours: dict = {k: [] for k in rows}
    theirs: dict = {"gptq": [], "sparsegpt": []}
    got = None
    for _ in range(rounds):
        for k, f in rows.items():
            ours[k].append(median_time(f, repeats=1, warmup=False))
        got = peer(W, H)
        if got is not None:
            for m in theirs:
                theirs[m].append(got[f"{m}_s"])
    times = {k: statistics.median(v) for k, v in ours.items()}
    if got is None:
        return times, None
    return times, {**got, **{f"{m}_s": statistics.median(v) for m, v in theirs.items()}}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference", action="store_true", help="also time the column-by-column reference")
    args = ap.parse_args()
    pin_threads(1)
    lm = llm.smollm2(RunContext(cache_dir=REPO / "runs" / "bench-cache"))
    pool = trust.snippets()[0::2]
    rng = np.random.default_rng(0)
    calib = [lm.tokenizer.encode(pool[i].text, add_special_tokens=False)[:64] for i in rng.choice(len(pool), 24, replace=False)]
    stats = layers.calibration_stats(lm.model, calib, llm.pad_id(lm.tokenizer))
    lin = layers.decoder_linears(lm.model)
    print(f"{'layer':32s} {'method':10s} {'impl':14s} {'ms':>9s} {'rel. error':>11s} {'ours / impl':>12s}")
    for name in LAYERS:
        W, H = lin[name].weight.detach().float().clone(), stats[name].H
        rows = {
            ("gptq", "ours"): (lambda: C.gptq(W, H, 4, 64)),
            ("sparsegpt", "ours"): (lambda: C.sparsegpt(W, H, 0.5, (2, 4))),
        }
        if args.reference:
            rows[("gptq", "reference")] = lambda: gptq_reference(W, H, 4, 64)
        times, got = interleaved(rows, W, H, rounds=3)
        errs = {k: C.relative_error(W, f(), H) for k, f in rows.items()}
        if got is not None:
            for m in ("gptq", "sparsegpt"):
                times[(m, "llmcompressor")] = got[f"{m}_s"]
                errs[(m, "llmcompressor")] = C.relative_error(W, got[m], H)
                if m == "sparsegpt":
                    assert torch.all((got[m] == 0).reshape(W.shape[0], -1, 4).sum(-1) >= 2)
        for (m, impl), t in times.items():
            ratio = times[(m, "ours")] / t
            print(f"{name:32s} {m:10s} {impl:14s} {t * 1e3:9.1f} {errs[(m, impl)]:11.2e} {ratio:12.2f}")
            if impl != "ours":
                ratio_row(f"{m} on {name}", impl, times[(m, "ours")], t,
                          f"errors {errs[(m, 'ours')]:.2e} vs {errs[(m, impl)]:.2e}")
    if not PEER.is_file():
        print(f"llmcompressor rows skipped: no peer environment at {PEER} (make bench builds it)")

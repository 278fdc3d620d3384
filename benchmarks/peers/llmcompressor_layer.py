"""Run llmcompressor's GPTQ and SparseGPT on one layer; executed in the peer's own environment.

Usage: <peer python> llmcompressor_layer.py IN.pt OUT.pt REPEATS
IN.pt holds W (out, in) float32, H (in, in) float64 (H = X^T X / n), bits, group, n (2:4 pruning).
OUT.pt gets the GPTQ and SparseGPT weights and the median seconds of each (one thread).
"""

import statistics
import sys
import time

import torch
from compressed_tensors.quantization import QuantizationArgs
from compressed_tensors.quantization.utils import calculate_qparams
from llmcompressor.modifiers.gptq.gptq_quantize import quantize_weight
from llmcompressor.modifiers.pruning.sparsegpt.sgpt_sparsify import sparsify_weight

torch.set_num_threads(1)
inp = torch.load(sys.argv[1])
W, H, bits, group = inp["W"], inp["H"], int(inp["bits"]), int(inp["group"])
repeats = int(sys.argv[3])
args = QuantizationArgs(num_bits=bits, type="int", symmetric=False, strategy="group", group_size=group)
Wg = W.reshape(W.shape[0], -1, group)
scale, zp = calculate_qparams(Wg.amin(-1), Wg.amax(-1), args)        # (out, groups), from the original weights


def gptq():
    q, _, _ = quantize_weight(W[None].clone(), H[None].float().clone(), scale[None], zp[None], None, args,
                              blocksize=128, percdamp=0.01)
    return q[0]


def sgpt():
    lin = torch.nn.Linear(W.shape[1], W.shape[0], bias=False)
    lin.weight.data.copy_(W)
    _, w = sparsify_weight(lin, {lin: H.float().clone()}, 0.5, 2, 4, 128, 0.01, False)   # (loss, weight)
    return w


out = {}
for name, fn in (("gptq", gptq), ("sparsegpt", sgpt)):
    fn()                                                              # warm-up
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        w = fn()
        times.append(time.perf_counter() - t)
    out[name] = w.detach().float()
    out[f"{name}_s"] = statistics.median(times)
torch.save(out, sys.argv[2])

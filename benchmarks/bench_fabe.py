"""Benchmark: FABE's diverse beam search (``icml24.papers.fabe.beam``: KV cache, inputs x groups x beams in one
batch, finished inputs leaving it) against transformers' own beam search (``generate(num_beams=4)``), on the
workload both can run: one group of 4 beams, no diversity penalty (transformers 5 moved group beam search to hub
code). A random Llama of SmolLM2's layout scaled down (vocab 8192, width 256, 6 layers), 8 prompts of 40 tokens,
24 new tokens, one at a time and as one batch; the outputs agree (same tokens, scores to 1e-4). The diverse
setting FABE uses (4 groups of 1 beam, penalty 0.1) is timed beside it.
Run: python benchmarks/bench_fabe.py   (about a minute; one thread)
"""

from __future__ import annotations

import numpy as np
import torch

from icml24.common.llm import tiny_llama
from icml24.core.bench import median_time, pin_threads, ratio_row
from icml24.papers.fabe.beam import diverse_beam_search

if __name__ == "__main__":
    pin_threads(1)
    model = tiny_llama(vocab=8192, hidden=256, layers=6, heads=4, kv_heads=2, max_len=128, seed=0).eval()
    rng = np.random.default_rng(0)
    prompts = [rng.integers(3, 8192, 40).tolist() for _ in range(8)]
    new = 24

    def hf_one(p):
        ids = torch.tensor([p])
        with torch.no_grad():
            out = model.generate(ids, attention_mask=torch.ones_like(ids), num_beams=4, num_return_sequences=4,
                                 max_new_tokens=new, do_sample=False, eos_token_id=1, pad_token_id=0,
                                 output_scores=True, return_dict_in_generate=True, early_stopping=False)
        return out.sequences[:, len(p):].tolist(), out.sequences_scores.numpy()

    def ours_one(p):
        return diverse_beam_search(model, [p], [new], [1], 0, groups=1, beams=4)

    for p in prompts[:2]:
        seqs, scores = hf_one(p)
        mine = ours_one(p)
        assert mine.tokens[0] == seqs and np.allclose(mine.scores[0], scores, atol=1e-4)
    t_hf = median_time(lambda: [hf_one(p) for p in prompts], repeats=3)
    t_ours = median_time(lambda: [ours_one(p) for p in prompts], repeats=3)
    t_batch = median_time(lambda: diverse_beam_search(model, prompts, [new] * 8, [1], 0, groups=1, beams=4), repeats=3)
    t_div = median_time(lambda: diverse_beam_search(model, prompts, [new] * 8, [1], 0, groups=4, beams=1,
                                                    penalty=0.1), repeats=3)
    print(f"{'what':58s} {'ms':>8s}")
    for what, t in (("transformers beam search, 4 beams, 8 prompts one by one", t_hf),
                    ("ours, 1 group x 4 beams, one by one", t_ours), ("ours, 1 group x 4 beams, one batch of 8", t_batch),
                    ("ours, 4 groups x 1 beam (FABE, penalty 0.1), one batch", t_div)):
        print(f"{what:58s} {t * 1e3:8.1f}")
    ratio_row("beam search 4 beams x 24 tokens, 8 prompts one by one", "transformers generate(num_beams=4)", t_ours,
              t_hf, "yes (tokens; scores atol 1e-4)")
    ratio_row("beam search 4 beams x 24 tokens, 8 prompts batched", "transformers generate(num_beams=4), one by one",
              t_batch, t_hf, "yes (tokens; scores atol 1e-4)")

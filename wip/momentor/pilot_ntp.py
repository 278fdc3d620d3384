"""Pilot of C2 (Neighbouring Token Propagation) on development seeds: is the held-out-token study blind?

The TPM adds (E_in[i] + E_out[i]) / 2 to frame i, so every token row, the held-out ones included, is trained
through the frames of every video: no row is 'never trained'. This script runs the C2 pair (tpm, tpm_nontp)
on the package's held-out split with the frame encoding as published (``fe``) and with it removed from both
arms (``nofe``: the rows then get gradient only from timestamps, or through NTP from their neighbours), and
prints mIoU near the held-out tokens and the held-out rows' cosine to their neighbours per seed.

    python wip/momentor/pilot_ntp.py fe|nofe SEED [SEED ...] [--rate R]
"""

from __future__ import annotations

import argparse
import contextlib
import time
from unittest import mock

import torch

from icml24.core import streams
from icml24.papers.momentor import data, experiment
from icml24.papers.momentor.config import QUICK
from icml24.papers.momentor.model import Vocab
from icml24.papers.momentor.tpm import TemporalPerception, neighbour_cosine


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("variant", choices=("fe", "nofe"))
    ap.add_argument("seeds", type=int, nargs="+")
    ap.add_argument("--rate", type=float, default=0.0)   # never trained, as QUICK was when this pilot ran
    args = ap.parse_args()
    torch.set_num_threads(1)
    config = QUICK.__class__(**{**QUICK.__dict__, "heldout_rate": args.rate})
    patch = (mock.patch.object(TemporalPerception, "frame_encoding",
                               lambda self, n, tables: torch.zeros_like(tables.E_in).detach())
             if args.variant == "nofe" else contextlib.nullcontext())
    with patch:
        for seed in args.seeds:
            t0 = time.time()
            protos = data.prototypes(streams.rng(seed, "prototypes"), experiment.engine(config))
            split, held = experiment.heldout_split(config, seed, protos)
            vocab = Vocab(config.event_types)
            out = {}
            for method in ("tpm", "tpm_nontp"):
                done = experiment.train_and_score(method, split, vocab, config.n_t_coarse, config, seed, "heldout",
                                                  "cpu")
                init = experiment.make_model(method, vocab.size, split.train.frames.shape[2], config.n_t_coarse,
                                             config, streams.torch_generator(seed, "init", "heldout", method))
                delta = torch.from_numpy(done.E_out) - init.tpm.E_out.detach()      # what training changed
                out[method] = (done.scores.metrics["miou"], neighbour_cosine(torch.from_numpy(done.E_out),
                                                                             torch.from_numpy(held)),
                               neighbour_cosine(delta, torch.from_numpy(held)))
            print(f"{args.variant} rate {args.rate} seed {seed}: mIoU NTP {out['tpm'][0]:.3f} no-NTP "
                  f"{out['tpm_nontp'][0]:.3f} diff {out['tpm'][0] - out['tpm_nontp'][0]:+.3f}; cos NTP "
                  f"{out['tpm'][1]:.3f} no-NTP {out['tpm_nontp'][1]:.3f}; update cos NTP {out['tpm'][2]:.3f} no-NTP "
                  f"{out['tpm_nontp'][2]:.3f} ({time.time() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()

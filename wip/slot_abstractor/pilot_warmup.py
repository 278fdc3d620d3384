"""Pilot (issue 40; development seeds only): does a linear warm-up of the reasoner's learning rate stop the sd
Abstractor's stall at ln 2? QUICK settings, m = 95. Usage: pilot_warmup.py WARM_FRACTION SEED... (0: the constant
learning rate of QUICK). Prints the training and held-out accuracy per seed."""
import os, sys, time
from dataclasses import replace
from pathlib import Path
import numpy as np, torch
torch.set_num_threads(1)
from icml24.core import streams
from icml24.core.context import RunContext
from icml24.papers.slot_abstractor import experiment as ex, art
from icml24.papers.slot_abstractor.config import QUICK
ctx = RunContext(cache_dir=Path("runs/_pilot_cache"), code_hash="pilot")  # slot model and slots, built once
config = replace(QUICK, pretrain_steps=int(os.environ.get("PRETRAIN", QUICK.pretrain_steps)))
ae, _ = ex.slot_model(config, ctx)
warm_frac = float(sys.argv[1]); seeds = [int(s) for s in sys.argv[2:]]
task, m, method = "sd", 95, "abstractor"
for seed in seeds:
    t0 = time.time()
    data = ex.task_data(config, seed, task, m)
    train, test = ex.task_slots(config, ctx, ae, seed, task, m, data)
    P = art.N_PANELS[task]
    panel = torch.arange(P).repeat_interleave(config.n_slots)
    model = ex._seeded(streams.int_seed(seed, "init", method, task, m), ex.Reasoner, method, train.z.shape[-1],
                       config.dim, config.heads, config.mlp, config.depth, P)
    opt = torch.optim.Adam(model.parameters(), lr=config.lr)
    warm = max(1, int(warm_frac * config.steps))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda k: min(1.0, (k + 1) / warm)) if warm_frac > 0 else None
    gen = streams.torch_generator(seed, "batches", task, m)
    ans = torch.from_numpy(data.train.answer); n = len(ans)
    losses = []
    for k in range(config.steps):
        idx = torch.randint(0, n, (min(config.batch, n),), generator=gen)
        scores, _ = ex._scores(model, train, idx, panel)
        loss = ex._loss(scores, ans[idx])
        opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
        if sched: sched.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        idx = torch.arange(min(300, n)); s, _ = ex._scores(model, train, idx, panel)
        tr = float((ex._predict(s) == ans[idx]).float().mean())
        te_ans = torch.from_numpy(data.test.answer); idx = torch.arange(len(te_ans)); s, _ = ex._scores(model, test, idx, panel)
        te = float((ex._predict(s) == te_ans).float().mean())
    print(f"warm={warm_frac} seed={seed} train={tr:.3f} test={te:.3f} loss_last100={np.mean(losses[-100:]):.3f} ({time.time()-t0:.0f}s)", flush=True)

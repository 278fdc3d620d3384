"""Pilot (development seeds 100-101; not run by any test): pilot_digits_loop.py with the KL of every round taken to
the pretrained model instead of the previous round's (the paper's general objective has a KL to the pretrained
model; SEIKO's code and ours use the previous round's). Usage: pilot_digits_kl0.py EPS_PT [DECOY] [BETA]."""
import copy, runpy, sys
import torch
import icml24.papers.seiko.loop as loop
from icml24.papers.seiko.finetune import Finetuned

_pretrained = {}


def finetune_to_pretrained(prev, objective, sampler, cfg, gen):
    """finetune.finetune with the path KL to the first model it was called with (the pretrained one)."""
    ref = _pretrained.setdefault("ref", copy.deepcopy(prev).requires_grad_(False).eval())
    model = copy.deepcopy(prev).requires_grad_(True).train()
    params = list(model.parameters())
    opt = torch.optim.Adam(params, lr=cfg.lr)
    for _ in range(cfg.steps):
        traj = sampler.trajectory(model, cfg.batch, gen, cfg.grad_steps, ref if cfg.beta > 0 else None)
        loss = -objective(traj.x).mean() + cfg.beta * traj.kl.mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, cfg.clip)
        opt.step()
    return Finetuned(model.requires_grad_(False).eval(), [], [])


def online(*args, **kw):
    _pretrained.clear()                         # each method's loop starts from the pretrained model
    return _online(*args, **kw)


_online = loop.online
loop.finetune = finetune_to_pretrained
sys.modules["icml24.papers.seiko.loop"].online = online
sys.argv = ["pilot_digits_loop.py"] + sys.argv[1:]
runpy.run_path(__file__.replace("pilot_digits_kl0.py", "pilot_digits_loop.py"), run_name="__main__")

"""Experiment of rig: ``run(config, seed)`` and the figures.

The priors (a RealNVP and a latent DDPM over the standardised 12-d scene latent) are trained once on
``train_scenes`` clean latents of stream ``prior_seed`` and cached as an artefact shared by every seed. Per seed
and corruption: ``scenes`` test scenes and corruptions from the seed's own streams, the observed images
y = render(x*, c*) + N(0, obs_noise^2), then every method on all the scenes in one batch. Reported per method and
corruption: the masked depth error of the de-corrupted scene (the estimate's x rendered alone, with the true
camera) against the true depth, its log (the claims' scale: a difference of logs is a log ratio, the form in which
the paper's VSD table converts), the PSNR of that clean render against the clean truth, the billboard score of the
joint methods on the grid corruptions, and ReGAL's importance-weight ESS. For ReGAL every metric is the
importance-weighted mean over its K chains. Curves hold, for the first scene of each corruption, the images of the
figure (input, truth, each method's clean render and depth) and the VI ELBO of every restart.

Common random numbers (the second design, README "Stability"): in a seed and corruption, MAP, VI and the
no-corruption VI start their restarts from the same prior draws (:func:`prior_inits`), and ReGAL runs once with
the largest K, every smaller K being its first chains (:func:`first_chains`). Two stages give two claims scenes
of their own: ``chain_scenes`` FOV scenes with ReGAL alone (claim 3) and ``pair_scenes`` rain scenes with MAP and
VI alone (claim 2a, pooled with the shared rain scenes).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import torch

from icml24.common.diffusion import EpsMLP, linear_schedule
from icml24.core import streams
from icml24.core.context import RunContext
from icml24.core.results import RunResult, SeedResult
from icml24.papers.rig.config import CORRUPTIONS, FULL, QUICK, SEEDS, SMOKE, Config, validate
from icml24.papers.rig.inference import (
    Estimate,
    InferConfig,
    Model,
    RegalConfig,
    first_chains,
    map_fit,
    prior_inits,
    regal,
    vi_fit,
)
from icml24.papers.rig.model import Setup, billboard, depth_error, psnr, render, setup
from icml24.papers.rig.priors import PriorConfig, RealNVP, Standardise, train_ddpm, train_flow
from icml24.papers.rig.render import Camera, GridShape
from icml24.papers.rig.world import World, sample_clean, sample_corruption

__all__ = ["Config", "SMOKE", "QUICK", "FULL", "SEEDS", "validate", "run", "figures", "world_of", "priors",
           "method_names", "PRIOR_FIELDS"]


def world_of(config: Config) -> World:
    """The world of a config."""
    return World(Camera(config.image_size, config.samples, config.near, config.far, config.cam_dist),
                 GridShape(config.grid_depth, config.image_size, config.image_size), 0.7, config.sigma_max,
                 config.softness, config.sigma_c_max, math.radians(config.fov_deg), math.radians(config.fov_lo_deg),
                 math.radians(config.fov_hi_deg), config.min_gap, config.fog_density, config.rain_streaks,
                 config.rain_density)


PRIOR_FIELDS = ("train_scenes", "min_gap", "flow_layers", "flow_hidden", "flow_steps", "ddpm_T", "ddpm_hidden",
                "ddpm_layers", "ddpm_steps", "prior_batch", "prior_lr", "prior_seed")
"""The config fields the priors depend on (the key of their cached artefact)."""


class Priors:
    """The trained priors and the standardisation of the latent."""

    def __init__(self, flow: RealNVP, eps_net: EpsMLP, standard: Standardise):
        self.flow, self.eps_net, self.standard = flow, eps_net, standard


def _prior_config(config: Config) -> PriorConfig:
    return PriorConfig(config.flow_layers, config.flow_hidden, config.flow_steps, config.ddpm_T, config.ddpm_hidden,
                       config.ddpm_layers, config.ddpm_steps, config.prior_batch, config.prior_lr)


def priors(config: Config, ctx: RunContext) -> Priors:
    """Both priors, trained on clean latents only, built once per key (:data:`PRIOR_FIELDS`) into the cache."""
    pc = _prior_config(config)

    def build(folder: Path) -> None:
        z = sample_clean(world_of(config), config.train_scenes, streams.rng(config.prior_seed, "clean"))
        standard = Standardise(z.mean(0), z.std(0))
        x = standard.to_x(z)
        flow = train_flow(x, pc, streams.torch_generator(config.prior_seed, "flow"))
        net = train_ddpm(x, pc, streams.torch_generator(config.prior_seed, "ddpm"))
        torch.save({"flow": flow.state_dict(), "ddpm": net.state_dict(), "mean": standard.mean,
                    "std": standard.std}, folder / "priors.pt")

    inputs = {f: getattr(config, f) for f in PRIOR_FIELDS}
    state = torch.load(ctx.artefact("priors", inputs, build) / "priors.pt", weights_only=True)
    flow = RealNVP(12, pc.flow_layers, pc.flow_hidden)
    flow.load_state_dict(state["flow"])
    net = EpsMLP(12, pc.ddpm_hidden, pc.ddpm_layers, 32)
    net.load_state_dict(state["ddpm"])
    return Priors(flow.requires_grad_(False).eval(), net.requires_grad_(False).eval(),
                  Standardise(state["mean"], state["std"]))


def method_names(config: Config) -> list[str]:
    """Metric names of the methods: nocorr, map, vi, regal<K> for each K, regalnc<K> for the largest K."""
    out = []
    for m in config.methods:
        if m == "regal":
            out += [f"regal{k}" for k in config.regal_K]
        elif m == "regal_nocorr":
            out.append(f"regalnc{max(config.regal_K)}")
        else:
            out.append(m)
    return out


def _infer_config(config: Config, restarts: int) -> InferConfig:
    return InferConfig(config.steps, config.lr, restarts, config.mc, config.elbo_samples, config.init_std_x,
                       config.init_std_c, config.c_init, config.logstd_max)


def _regal(config: Config, model: Model, pr: Priors, y: torch.Tensor, chains: int, gen: torch.Generator) -> Estimate:
    """A ReGAL run with ``chains`` chains per scene."""
    step = config.langevin_step_fov if model.kind == "fov" else config.langevin_step
    rc = RegalConfig(chains, config.ddim_steps, config.eta, config.guidance, config.langevin_steps, step,
                     config.clip_x0, config.c_init)
    return regal(model, pr.eps_net, linear_schedule(config.ddpm_T), y, rc, gen)


def _estimate(config: Config, method: str, model: Model, pr: Priors, y: torch.Tensor, inits: torch.Tensor,
              gen: torch.Generator) -> Estimate:
    """MAP, VI or the no-corruption VI from the seed's shared initial draws ``inits`` (:func:`prior_inits`), or a
    ReGAL run with the chains of the method's name."""
    if method == "map":
        return map_fit(model, pr.flow, y, _infer_config(config, config.map_restarts), inits)
    if method in ("vi", "nocorr"):
        return vi_fit(model, pr.flow, y, _infer_config(config, config.restarts), inits, gen)
    return _regal(config, model, pr, y, int(method.removeprefix("regal").removeprefix("nc")), gen)


class _Truth:
    """The test scenes of one corruption: true latents, corruption, camera, clean renders, observed images."""

    def __init__(self, st: Setup, config: Config, kind: str, seed: int, scenes: int, stream: str):
        rng = streams.rng(seed, "scenes", stream)
        self.z = sample_clean(st.world, scenes, rng)
        self.corr, self.fov = sample_corruption(st.world, "rain" if kind == "clean" else kind, scenes, rng)
        if kind == "clean":
            self.corr = None
        with torch.no_grad():
            self.clean = render(st, self.z, None, self.fov).render
            obs = render(st, self.z, self.corr, self.fov).render.rgb
        noise = streams.torch_generator(seed, "noise", stream)
        self.y = obs + config.obs_noise * torch.randn(obs.shape, generator=noise)


def _evaluate(st: Setup, model: Model, est: Estimate, truth: _Truth) -> dict[str, torch.Tensor]:
    """Per scene (B,): weighted depth error, PSNR and billboard score of an estimate (module docstring)."""
    B, K = est.weights.shape
    x = est.x.reshape(B * K, -1)
    c = est.c.reshape(B * K, -1) if est.c is not None else None
    with torch.no_grad():
        alone = render(st, model.standard.to_z(x), None, truth.fov.repeat_interleave(K)).render
        err = depth_error(alone.depth, alone.opacity, truth.clean.depth.repeat_interleave(K, 0),
                          truth.clean.opacity.repeat_interleave(K, 0)).reshape(B, K)
        pz = psnr(alone.rgb, truth.clean.rgb.repeat_interleave(K, 0)).reshape(B, K)
        bb = billboard(st, model.render(x, c)).reshape(B, K)
    w = est.weights
    top = torch.arange(B) * K + w.argmax(1)             # the heaviest chain of each scene (for the figure)
    return {"depth": (w * err).sum(1), "psnr": (w * pz).sum(1), "billboard": (w * bb).sum(1),
            "ess": 1 / (w ** 2).sum(1), "img": alone.rgb[top], "depthmap": alone.depth[top]}


def _kind_of(corruption: str, method: str) -> str:
    if method == "nocorr" or method.startswith("regalnc") or corruption == "clean":
        return "none"
    return "fov" if corruption == "fov" else "grid"


def _corruption_stage(config: Config, seed: int, kind: str, pr: Priors) -> tuple[dict, dict]:
    st = setup(world_of(config))
    truth = _Truth(st, config, kind, seed, config.scenes, kind)
    metrics: dict[str, float] = {}
    curves: dict[str, list[float]] = {"img_input_" + kind: truth.y[0].reshape(-1).tolist(),
                                      "img_true_" + kind: truth.clean.rgb[0].reshape(-1).tolist(),
                                      "depth_true_" + kind: truth.clean.depth[0].tolist()}
    per_scene: dict[str, list[float]] = {}
    methods = ["nocorr"] if kind == "clean" else method_names(config)
    inits = prior_inits(pr.flow, config.scenes, max(config.restarts, config.map_restarts),
                        streams.torch_generator(seed, "inits", kind))
    K = max(config.regal_K)
    chains: Estimate | None = None       # ReGAL's run with the most chains; every smaller K is its first chains
    for m in methods:
        model = Model(st, pr.standard, _kind_of(kind, m), config.lik_std)  # type: ignore[arg-type]
        if m.startswith("regal") and not m.startswith("regalnc"):
            if chains is None:
                chains = _regal(config, model, pr, truth.y, K, streams.torch_generator(seed, "infer", kind, f"regal{K}"))
            est = first_chains(chains, int(m.removeprefix("regal")))
        else:
            est = _estimate(config, m, model, pr, truth.y, inits, streams.torch_generator(seed, "infer", kind, m))
        ev = _evaluate(st, model, est, truth)
        per_scene[m] = ev["depth"].tolist()
        metrics[f"depth_{m}_{kind}"] = float(ev["depth"].mean())
        metrics[f"logdepth_{m}_{kind}"] = math.log(float(ev["depth"].mean()))
        metrics[f"psnr_{m}_{kind}"] = float(ev["psnr"].mean())
        if model.kind == "grid":
            metrics[f"billboard_{m}_{kind}"] = float(ev["billboard"].mean())
        if m.startswith("regal"):
            metrics[f"ess_{m}_{kind}"] = float(ev["ess"].mean())
        if m == "vi":
            curves[f"elbo_vi_{kind}"] = est.scores[0].tolist()
        curves[f"img_{m}_{kind}"] = ev["img"][0].reshape(-1).tolist()
        curves[f"depth_{m}_{kind}"] = ev["depthmap"][0].tolist()
        curves[f"scene_depth_{m}_{kind}"] = per_scene[m]
    return metrics, curves


def _chains_stage(config: Config, seed: int, pr: Priors) -> tuple[dict, dict]:
    """Claim 3's own FOV scenes (``chain_scenes``, a stream of their own): one ReGAL run with the most chains, and
    every K of ``regal_K`` as its first K chains (:func:`first_chains`); the log mean depth error per K."""
    st = setup(world_of(config))
    truth = _Truth(st, config, "fov", seed, config.chain_scenes, "fov_chains")
    model = Model(st, pr.standard, "fov", config.lik_std)
    K = max(config.regal_K)
    gen = streams.torch_generator(seed, "infer", "fov_chains", f"regal{K}")
    chains = _regal(config, model, pr, truth.y, K, gen)
    metrics: dict[str, float] = {}
    curves: dict[str, list[float]] = {}
    for k in config.regal_K:
        depth = _evaluate(st, model, first_chains(chains, k), truth)["depth"]
        metrics[f"logdepth_regal{k}_fovchains"] = math.log(float(depth.mean()))
        curves[f"scene_depth_regal{k}_fovchains"] = depth.tolist()
    return metrics, curves


def _pairs_stage(config: Config, seed: int, pr: Priors) -> tuple[dict, dict]:
    """Claim 2a's further rain scenes (``pair_scenes``, a stream of their own): MAP and VI alone, from shared
    starting points; the per-scene depth errors, which :func:`run` pools with the shared rain scenes'."""
    st = setup(world_of(config))
    truth = _Truth(st, config, "rain", seed, config.pair_scenes, "rain_pairs")
    inits = prior_inits(pr.flow, config.pair_scenes, max(config.restarts, config.map_restarts),
                        streams.torch_generator(seed, "inits", "rain_pairs"))
    model = Model(st, pr.standard, "grid", config.lik_std)
    curves: dict[str, list[float]] = {}
    for m in ("map", "vi"):
        est = _estimate(config, m, model, pr, truth.y, inits, streams.torch_generator(seed, "infer", "rain_pairs", m))
        curves[f"scene_depth_{m}_rainpairs"] = _evaluate(st, model, est, truth)["depth"].tolist()
    return {}, curves


def run(config: Config, seed: int, ctx: RunContext | None = None) -> SeedResult:
    """One seed: every corruption (and the clean control), every method, then claim 3's FOV scenes and claim 2a's
    further rain scenes (module docstring)."""
    ctx = ctx or RunContext.local()
    metrics: dict[str, float] = {}
    curves: dict[str, list[float]] = {}
    with ctx.threads(config.threads):
        pr = priors(config, ctx)
        kinds = list(config.corruptions) + (["clean"] if config.clean_control else [])
        for kind in kinds:
            ms, cv = ctx.stage(f"corruption_{kind}", _corruption_stage, config, seed, kind, pr)
            metrics.update(ms)
            curves.update(cv)
        if config.chain_scenes and "fov" in config.corruptions and "regal" in config.methods:
            ms, cv = ctx.stage("chains_fov", _chains_stage, config, seed, pr)
            metrics.update(ms)
            curves.update(cv)
        pairs = {"map", "vi"} <= set(config.methods) and "rain" in config.corruptions
        if config.pair_scenes and pairs:
            _, cv = ctx.stage("pairs_rain", _pairs_stage, config, seed, pr)
            curves.update(cv)
        if pairs:                            # claim 2a: the shared rain scenes and the further ones, pooled
            for m in ("map", "vi"):
                errs = curves[f"scene_depth_{m}_rain"] + curves.get(f"scene_depth_{m}_rainpairs", [])
                metrics[f"logdepth_{m}_rainall"] = math.log(float(np.mean(errs)))
        grid = [k for k in ("rain", "fog") if k in config.corruptions]
        for m in ("map", "vi"):              # claim 2b: billboard score, mean over the grid corruptions
            if grid and f"billboard_{m}_{grid[0]}" in metrics:
                metrics[f"billboard_{m}_grid"] = float(np.mean([metrics[f"billboard_{m}_{k}"] for k in grid]))
    return SeedResult(seed=seed, metrics=metrics, curves=curves)


def figures(result: RunResult) -> dict:
    """The grid of seed 0's first scene per corruption: corrupted input, true clean image and depth, each
    method's clean render and depth; and the depth error and billboard score per method and corruption."""
    import matplotlib.pyplot as plt

    names = result.metric_names()
    kinds = [k for k in CORRUPTIONS + ("clean",) if f"img_input_{k}" in result.curve_names()]
    methods = [m for m in ("nocorr", "map", "vi") + tuple(f"regal{k}" for k in range(1, 65))
               + tuple(f"regalnc{k}" for k in range(1, 65))
               if any(f"depth_{m}_{k}" in names for k in kinds)]
    size = int(round(math.sqrt(len(result.curve(f"depth_true_{kinds[0]}")[0]))))
    cols = 2 + 2 * len(methods)
    fig, axes = plt.subplots(len(kinds), cols, figsize=(1.5 * cols, 1.6 * len(kinds)), squeeze=False)
    for r, k in enumerate(kinds):
        panels = [("input", result.curve(f"img_input_{k}")[0], "rgb"),
                  ("true depth", result.curve(f"depth_true_{k}")[0], "depth")]
        for m in methods:
            if f"img_{m}_{k}" in result.curve_names():
                panels += [(f"{m} render", result.curve(f"img_{m}_{k}")[0], "rgb"),
                           (f"{m} depth", result.curve(f"depth_{m}_{k}")[0], "depth")]
        for ax in axes[r]:
            ax.axis("off")
        for ax, (title, vals, what) in zip(axes[r], panels):
            if what == "rgb":
                ax.imshow(np.clip(np.asarray(vals).reshape(size, size, 3), 0, 1))
            else:
                ax.imshow(np.asarray(vals).reshape(size, size), cmap="viridis_r", vmin=1.5, vmax=4.5)
            ax.set_title(f"{k}: {title}" if title in ("input",) else title, fontsize=6)
    fig.tight_layout()
    fig2, ax2 = plt.subplots(1, 2, figsize=(10, 3.4))
    width = 0.8 / max(1, len(methods))
    for i, m in enumerate(methods):
        xs = [j for j, k in enumerate(kinds) if f"depth_{m}_{k}" in names]
        vals = [result.metric(f"depth_{m}_{kinds[j]}").mean() for j in xs]
        ax2[0].bar(np.array(xs) + i * width, vals, width, label=m)
        bb = [j for j, k in enumerate(kinds) if f"billboard_{m}_{k}" in names]
        if bb:
            ax2[1].bar(np.array(bb) + i * width, [result.metric(f"billboard_{m}_{kinds[j]}").mean() for j in bb],
                       width, label=m)
    for ax, what in zip(ax2, ("masked depth error (mean over seeds)", "billboard score")):
        ax.set_xticks(np.arange(len(kinds)) + 0.4 - width / 2, kinds)
        ax.set_ylabel(what)
        ax.legend(fontsize=7)
    fig2.tight_layout()
    return {"grid": fig, "metrics": fig2}

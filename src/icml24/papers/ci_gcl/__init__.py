"""CI-GCL (Tan et al., ICML 2024): learnable community-invariant graph augmenters with spectral losses, a
weighted GIN, InfoNCE, GraphCL's random augmentations, batched differentiable Laplacian spectra, SBM graphs, MUTAG
and molecules, and a cross-validated linear probe.
"""

from icml24.core.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "spectral": ["PAD", "laplacian", "eigvals", "components", "low_spectrum", "low_spectrum_loop", "low_eigvecs"],
    "data": ["Graphs", "sbm_dataset", "solubility_dataset", "tu_dataset", "tu_pyg", "mutag_dataset", "edge_noise",
             "to_pyg", "from_pyg", "sparse_edges", "scale_features"],
    "model": ["GIN", "Augmenter", "Views", "info_nce", "Precomputed", "precompute", "graphcl_views", "CIGCLLoss",
              "cigcl_loss", "ChunkedMLP"],
    "config": ["Config", "SMOKE", "QUICK", "FULL"],
    "experiment": ["run", "figures", "METHODS", "Premise", "premise", "train", "probe", "drop_precision", "folds",
                   "fiedler_split", "spectral_features"],
    "claims": ["CLAIMS"],
})

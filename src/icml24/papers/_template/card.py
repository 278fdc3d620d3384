"""Card of the template paper (no heavy imports here: ``icml24 list`` reads it)."""

from icml24.core.card import PaperCard

CARD = PaperCard(
    slug="_template",
    number=0,
    title="Template: the sample mean versus the sample median (a known-truth fixture)",
    authors=("icml24 maintainers",),
    arxiv=None,
    official_code=None,
    tags=("template", "statistics"),
    summary="The sample mean's error falls as n^-1/2 and, for Gaussian data, the median needs "
            "pi/2 times as many samples: textbook facts with exact answers, used to exercise every claim kind.",
)

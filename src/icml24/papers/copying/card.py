"""Card of the paper (no heavy imports here: ``icml24 list`` reads it)."""

from icml24.core.card import PaperCard

CARD = PaperCard(
    slug="copying",
    number=11,
    title="Repeat After Me: Transformers are Better than State Space Models at Copying",
    authors=("Samy Jelassi", "David Brandfonbrener", "Sham M. Kakade", "Eran Malach"),
    arxiv="2402.01032",
    official_code="https://github.com/sjelassi/transformers_ssm_copy",
    tags=("transformers", "state space models", "Mamba", "copying", "length generalization", "theory"),
    summary="A two-layer transformer that hashes n-grams copies strings of length exponential in its "
            "size (error <= L^2/|D|^n), while any fixed-state model (GSSM) errs with probability "
            ">= 1 - |S|/|D|^L; trained transformers learn copying faster than Mamba and LSTMs and, with "
            "Hard-ALiBi, generalize to much longer strings.",
)

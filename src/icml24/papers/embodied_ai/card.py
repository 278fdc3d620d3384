"""Card of Paolo, Gonzalez-Billandon & Kégl, ICML 2024 (no heavy imports here: ``icml24 list`` reads it)."""

from icml24.core.card import PaperCard

CARD = PaperCard(
    slug="embodied_ai",
    number=3,
    title="Position: A Call for Embodied AI",
    authors=("Giuseppe Paolo", "Jonas Gonzalez-Billandon", "Balázs Kégl"),
    arxiv="2402.03824",
    official_code=None,
    tags=("position paper", "embodied AI", "active inference", "POMDP"),
    summary="A position paper without experiments: its framework (perception, memory, action, learning, aligned "
            "with active inference) as a discrete-POMDP agent with four swappable modules, checked on textbook "
            "mechanisms (cue sampling in a T-maze with ambiguous arms, free energy falling and recovery after a "
            "reversal under online Dirichlet learning, belief memory in a delayed T-maze), not on the paper's "
            "thesis; agreement with pymdp 1.0.4.",
    # pymdp is imported only by the reference comparison (reference=true and its test), never by a default run,
    # so `imports` stays empty: config.validate names the extra when the comparison is asked for without it
    extra="aif",
)

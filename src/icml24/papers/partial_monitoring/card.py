"""Card of Tsuchiya, Ito & Honda, ICML 2024 (no heavy imports here: ``icml24 list`` reads it)."""

from icml24.core.card import PaperCard

CARD = PaperCard(
    slug="partial_monitoring",
    number=16,
    title="Exploration by Optimization with Hybrid Regularizers: Logarithmic Regret with Adversarial "
          "Robustness in Partial Monitoring",
    authors=("Taira Tsuchiya", "Shinji Ito", "Junya Honda"),
    arxiv="2402.08321",
    official_code=None,
    tags=("online learning", "partial monitoring", "bandits", "best of both worlds", "theory"),
    summary="FTRL with a log-barrier plus complement-Shannon-entropy regularizer and per-round exploration "
            "by optimization gets O(log T) regret in stochastic and O(sqrt(T log T)) in adversarial locally "
            "observable partial-monitoring games (bounds only; checked here for shape on small games).",
)

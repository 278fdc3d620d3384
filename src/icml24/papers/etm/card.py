"""Card of Chen, Jia, Huang, Liu, Liu & Yu, ICML 2024 (no heavy imports here: ``icml24 list`` reads it)."""

from icml24.core.card import PaperCard

CARD = PaperCard(
    slug="etm",
    number=14,
    title="Offline Transition Modeling via Contrastive Energy Learning",
    authors=("Ruifeng Chen", "Chengxing Jia", "Zefang Huang", "Tian-Shuo Liu", "Xu-Hui Liu", "Yang Yu"),
    arxiv=None,
    official_code="https://github.com/Ruifeng-Chen/Energy-Transition-Models",
    tags=("offline reinforcement learning", "energy-based models", "transition models", "off-policy evaluation"),
    summary="An energy-based transition model E(s, a, s' - s) trained by InfoNCE with Langevin negatives and "
            "predicting by Langevin descent; checked against a Gaussian forward ensemble and an MLP on a task with "
            "discontinuous dynamics and on model-based policy evaluation of Pendulum-v1 (Minari data set).",
    extra="rl",
    imports=("gymnasium", "minari", "h5py"),
)

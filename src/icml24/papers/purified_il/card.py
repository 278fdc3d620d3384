"""Card of Wang, Dong, Zhao, Du & Xu, ICML 2024 (no heavy imports here: ``icml24 list`` reads it)."""

from icml24.core.card import PaperCard

CARD = PaperCard(
    slug="purified_il",
    number=8,
    title="Imitation Learning from Purified Demonstrations",
    authors=("Yunke Wang", "Minjing Dong", "Yukun Zhao", "Bo Du", "Chang Xu"),
    arxiv="2310.07143",
    official_code="https://github.com/yunke-wang/dp-il",
    tags=("imitation learning", "diffusion models", "noisy demonstrations", "behaviour cloning"),
    summary="A DDPM trained on a few optimal state-action pairs purifies imperfect demonstrations (diffuse to an "
            "inverse point, denoise back); BC on the purified set (DP-BC, with the paper's and the official code's "
            "purifier) against BC, BCND and an oracle BC on MuJoCo Reacher-v5 demonstrations (SB3 SAC expert) with "
            "Gaussian, uniform and salt-and-pepper action noise and from the expert's training checkpoints "
            "(Minari data sets).",
    extra="rl",
    imports=("gymnasium", "minari", "h5py", "stable_baselines3", "mujoco"),
)

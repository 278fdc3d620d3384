"""Claims of Le, Sountsov, Hoffman, Lee, Patton & Saurous (ICML 2024), measured on the experiment of experiment.py.

The paper's evidence is ShapeNet (and MultiShapeNet) with ProbNeRF, SSDNeRF and SRT priors on GPUs; none of it is
available here. What carries over: a scene prior learned on clean scenes, a corruption field under a flat prior
composed by density, and inference from one corrupted image, on a procedural two-sphere world (world.py). Every
depth claim reads the log of the mean masked depth error over a seed's scenes, so that an order statistic is a log
ratio of errors, the form into which the paper's VSD table converts (VSD and our masked MAE are different scales).

C1: joint inference recovers depth better than the same inference without a corruption model, per corruption:
VI against VI over x alone (C1a-c), ReGAL K = 4 against the same ReGAL over x alone (C1d-f). C2: joint VI beats
MAP over the same model on rain (C2a, on the shared rain scenes and ``pair_scenes`` more), and MAP's billboard
score exceeds VI's on rain and fog (C2b, the mechanism). C3: with an unknown field of view, ReGAL with K = 4 beats
K = 1, on claim 3's own ``chain_scenes`` FOV scenes per seed, both being the first chains of one run with the
largest K. Every band is CI > 0 (the issue's words, an order); the pilots (README) decided the setting, not the
bands.

First design's pilot (seeds 100-105, before the claim seeds ran; mean [95% CI over seeds]): C1a 0.34 [0.12, 0.74],
C1b 1.13 [0.98, 1.29], C1c 0.44 [0.27, 0.63], C1d 0.23 [0.008, 0.40], C1e 0.20 [0.16, 0.24], C1f 0.41 [0.04,
0.72], C2a (rain and fog pooled) 0.20 [0.06, 0.33], C2b 0.137 [0.124, 0.150], C3 (8 scenes) 0.11 [-0.09, 0.23].
The no-corruption depth error rises from 0.07 (clean) to 0.47 (rain), 1.05 (fog), 0.61 (FOV); MAP's billboard
score is 0.30 against VI's 0.16 (below the issue's 0.5: MAP's grid paints over several slabs, not the near third
alone).

Second design (README, "Stability"): on the first design C2a and C3 passed on the claim seeds and were
inconclusive on the held-out seeds, their spread being that of 8 scenes. Pilots on seeds 200-207, 300-305 and
400-405 then fixed: common starting points for MAP, VI and the no-corruption VI, nested ReGAL chains, claim 3's
own scenes, and C2a on rain with further scenes of its own (the paper's cloud gap, log(0.48 / 0.45) = 0.065, is a
fifth of the seed-to-seed spread of our fog's MAP - VI, 0.29 in the pilots: about 150 seeds to see it; it is
reported, not claimed). No band moved.
"""

from __future__ import annotations

import math

from icml24.core.claims import PROB, REAL, Band, Claim, Effect, Null

_BETTER = {"quick": Band(lo=0.0), "full": Band(lo=0.0)}
_NOCORR_WHY = ("the paper shows the no-corruption NeRF's failures only qualitatively (Fig. 1, Sec. 5); a 10% lower "
               "depth error (log ratio 0.1) is the smallest gain that is 'recovers depth better' rather than a tie")


def _c1(cid: str, method: str, base: str, label: str, kind: str, where: str) -> Claim:
    return Claim(
        cid, f"Joint inference over scene and corruption ({label}) recovers the scene's depth from a {kind}-corrupted "
             "image better than inference with no corruption model [paraphrase].", where, "order",
        metric=f"logdepth_{base}_{kind}", against=f"logdepth_{method}_{kind}",
        statistic=f"per seed, log mean masked depth error over the {kind} scenes, {label} without a corruption model "
                  f"minus {label} with it; CI > 0",
        bands=_BETTER,
        effect=Effect(0.1, "Sec. 5, Fig. 1 (no number for the no-corruption baseline)", minimal=True,
                      why=_NOCORR_WHY, method=f"logdepth_{method}_{kind}"),
        ranges={f"logdepth_{base}_{kind}": REAL, f"logdepth_{method}_{kind}": REAL})


CLAIMS = (
    _c1("C1a", "vi", "nocorr", "mean-field VI", "rain", "Sec. 5.1, Table 1 (ProbNeRF VI), Fig. 1"),
    _c1("C1b", "vi", "nocorr", "mean-field VI", "fog", "Sec. 5.1, Table 1 (ProbNeRF VI, 'cloud'), Fig. 1"),
    _c1("C1c", "vi", "nocorr", "mean-field VI", "fov", "Sec. 5.1, Table 1 (ProbNeRF VI, FOV)"),
    _c1("C1d", "regal4", "regalnc4", "ReGAL, K = 4", "rain", "Sec. 5.2 (SSDNeRF ReGAL)"),
    _c1("C1e", "regal4", "regalnc4", "ReGAL, K = 4", "fog", "Sec. 5.2 (SSDNeRF ReGAL, 'cloud')"),
    _c1("C1f", "regal4", "regalnc4", "ReGAL, K = 4", "fov", "Sec. 5.2 (SSDNeRF ReGAL, FOV)"),
    Claim("C2a", "Full posterior inference (mean-field VI) over scene and corruption recovers depth better than MAP "
          "over the same model, which degenerates [paraphrase].", "Sec. 3-4, Table 1 (ProbNeRF VI vs MAP, rain)",
          "order",
          metric="logdepth_map_rainall", against="logdepth_vi_rainall",
          statistic="per seed, log mean masked depth error over the shared rain scenes and claim 2a's further ones "
                    "(pair_scenes), MAP minus VI (both from the same initial draws); CI > 0",
          bands=_BETTER, paper_value="VSD rain 0.43 (MAP) vs 0.32 (VI)",
          effect=Effect(math.log(0.43 / 0.32), "Table 1, rain: log(VSD MAP / VSD VI) = log(0.43 / 0.32) = 0.30",
                        method="logdepth_vi_rainall"),
          ranges={"logdepth_map_rainall": REAL, "logdepth_vi_rainall": REAL}),
    Claim("C2b", "MAP over (scene, corruption) falls into billboard solutions, in which the corruption explains the "
          "image in front of the camera; VI does not [paraphrase].", "Sec. 3 (billboards), Fig. 2", "order",
          metric="billboard_map_grid", against="billboard_vi_grid",
          statistic="per seed, billboard score (share of the image's opacity that c explains in the near third of "
                    "the ray interval) of MAP minus VI, mean over the rain and fog scenes; CI > 0",
          bands=_BETTER,
          effect=Effect(0.1, "Sec. 3 and Fig. 2 describe billboards; no number", minimal=True,
                        why="a tenth of the image's opacity moved in front of the scene is the least that is a "
                            "billboard rather than a corruption fitted where it is",
                        method="billboard_vi_grid"),
          ranges={"billboard_map_grid": PROB, "billboard_vi_grid": PROB}),
    Claim("C3", "With an unknown field of view, ReGAL with more importance-weighted chains recovers depth better "
          "(K = 4 better than K = 1) [paraphrase].", "Sec. 5.2, Table 3 (ReGAL FOV, K = 1, 4, 8)", "order",
          metric="logdepth_regal1_fovchains", against="logdepth_regal4_fovchains",
          statistic="per seed, log mean masked depth error over claim 3's own FOV scenes (chain_scenes), ReGAL "
                    "K = 1 minus K = 4, both the first chains of one run with the largest K; CI > 0",
          bands=_BETTER, paper_value="VSD 0.49 (K = 1), 0.43 (K = 4), 0.34 (K = 8)",
          effect=Effect(math.log(0.49 / 0.43), "Table 3: log(0.49 / 0.43) = 0.13",
                        method="logdepth_regal4_fovchains"),
          ranges={"logdepth_regal1_fovchains": REAL, "logdepth_regal4_fovchains": REAL}),
)

# Every claim is an order claim: the generic null (the two sides swapped, tests/test_falsifiability.py) applies.
NULLS: dict[str, Null] = {}

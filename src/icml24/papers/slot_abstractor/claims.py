"""Claims of Mondal, Cohen, Webb (ICML 2024), measured on the experiment of experiment.py.

Pilot (seeds 100-103, never the claim seeds; the bands below are the issue's and were fixed before the claim
seeds ran). Slot pretraining (learned init, 24 px, batch 32, lr 1e-3 with warm-up and cosine decay) stays far
from a decomposition: FG-ARI on the 128 probe scenes 0.16 -> 0.34 (step 180) -> 0.29 after 300 steps, 0.41 at
step 60 and 0.28 after 600 steps of a 600-step schedule, 0.21 after 200 steps (QUICK). The issue's rule (ARI
< 0.8 within 3 minutes) therefore applies: QUICK reasons on oracle slots and C1 has a FULL band only.

Pilot A (seeds 100-102, oracle slots, m in {0, 95}, 300 pretraining steps, 2,000 / 400 problems, 600 steps),
held-out accuracy, mean over seeds, m = 0 / m = 95 (Abstractor, Transformer, standard CA):
sd 0.947 / 0.917, 0.945 / 0.902, 0.923 / 0.816; rmts 0.558 / 0.594, 0.673 / 0.663, 0.716 / 0.553;
dist3 0.908 / 0.817, 0.715 / 0.530, 0.770 / 0.462; id 0.808 / 0.615, 0.539 / 0.466, 0.526 / 0.387.
The Transformer does not fit dist3 and id even at m = 0 (training accuracy 0.74, 0.60), so at this budget C2b
measures sample efficiency as well as generalisation; the Abstractor does not fit rmts at m = 0 (training
0.63). Relational attention (same minus different shape, id, m = 95): Abstractor 0.145, standard CA 0.136.

Pilot B (seeds 100-103, the QUICK config before 2026-12-05, batch 32: m = 95, 200 pretraining steps,
1,200 / 300 problems, 400 steps):
Abstractor / Transformer / standard CA: sd 0.877 / 0.874 / 0.830; rmts 0.631 / 0.596 / 0.576; dist3 0.772 /
0.564 / 0.402; id 0.592 / 0.397 / 0.379; C3_diag 0.172 [0.142, 0.203] (standard CA 0.087). Verdicts: C2a
pass for sd, dist3, id and fail for rmts (0.631 [0.53, 0.737] against 0.65); C2b pass for dist3 (0.208) and
id (0.195), inconclusive for sd (0.003, power 0.32), fail for rmts (0.035 [-0.027, 0.11]); C3 pass for rmts,
dist3, id, inconclusive for sd (0.047, power 0.32); C3_diag pass. Wall 1,038 s for the 4 seeds on 2 worker
processes, on 2 cores shared with three other jobs (load 5-7); about 4-5 minutes estimated on an idle machine
from single-process step times.

Pilot C (seeds 100-103, 2026-12-06, after the layer's feed-forward was made the official pre-normed one; the
QUICK config at m = 0, every shape in training; 5 min 7 s, 604 s CPU on 2 workers), training / held-out accuracy
per seed, Abstractor; Transformer; standard CA: sd 0.89-0.96 / 0.90-0.94; 0.86-0.92 / 0.89-0.93; 0.85-0.93 /
0.83-0.91. rmts 0.56-0.68 / 0.51-0.65; 0.58-0.70 / 0.55-0.70; 0.60-0.70 / 0.58-0.70. dist3 0.87-0.93 / 0.83-0.90;
0.62-0.72 / 0.63-0.71; 0.65-0.77 / 0.65-0.73. id 0.73-0.79 / 0.69-0.73; 0.49-0.55 / 0.42-0.49; 0.45-0.53 /
0.46-0.52. rmts is learned by no model even at m = 0, so its m = 95 claims cannot see the paper's effect at
QUICK (FULL_ONLY below; the rule, stated in issue 40 before this run: keep a task's QUICK bands only if its m = 0
control is learned). The verdicts of the claim run on the fixed layer (C2a_rmts and C2b_rmts fail, C3_rmts pass)
were seen before this was applied; removing all three removes a pass with the two fails.
"""

from __future__ import annotations

from icml24.core.claims import PROB, REAL, Band, Claim, Effect, Null

TASKS = ("sd", "rmts", "dist3", "id")
CHANCE = {"sd": 0.5, "rmts": 0.5, "dist3": 0.25, "id": 0.25}
_TABLE1 = ("Table 1 (ART, m = 95): the Slot Abstractor at about 0.90-0.97 on all four tasks [recalled, not "
           "verified against the PDF]")
#: Tasks whose claims have a FULL band only, and why. The rule (issue 40, set before the run of 2026-12-06): a
#: task's m = 95 claims are checked at QUICK only if the m = 0 control is learned at QUICK's scale.
FULL_ONLY = {"rmts": "no reasoner learns rmts at QUICK's scale even with every shape in training (m = 0 control, "
                     "pilot seeds 100-103 with the official pre-normed layer: training accuracy 0.56-0.70, held-out "
                     "0.51-0.70 for each of the three models), so no m = 95 verdict could see the paper's effect"}


def _bands(band: Band, task: str) -> dict[str, Band]:
    return {"full": band} if task in FULL_ONLY else {"quick": band, "full": band}


def _above_chance(task: str) -> Claim:
    lo = CHANCE[task] + 0.15
    return Claim(f"C2a_{task}", f"With 95 of 100 shapes unseen in training, the Slot Abstractor generalises the "
                 f"{task} rule to the unseen shapes [paraphrase of Sec. 4.1].", "Sec. 4.1, Table 1", "within",
                 metric=f"acc_abstractor_{task}_m95",
                 statistic="held-out accuracy on problems of unseen shapes, mean over seeds; CI > chance + 0.15",
                 bands=_bands(Band(lo=lo), task), note=FULL_ONLY.get(task, ""),
                 effect=Effect(CHANCE[task] + 0.3, _TABLE1, minimal=True,
                               why="twice the band's margin over chance; the recalled table is far above it"),
                 ranges={f"acc_abstractor_{task}_m95": PROB})


def _over(task: str, baseline: str, claim_id: str, words: str, where: str, value: float, source: str,
          minimal: bool, why: str = "") -> Claim:
    return Claim(claim_id, words, where, "order", metric=f"acc_abstractor_{task}_m95",
                 against=f"acc_{baseline}_{task}_m95",
                 statistic=f"per seed, held-out accuracy at m = 95, Abstractor minus {baseline}; CI > 0",
                 bands=_bands(Band(lo=0.0), task), note=FULL_ONLY.get(task, ""),
                 effect=Effect(value, source, minimal=minimal, why=why),
                 ranges={f"acc_abstractor_{task}_m95": PROB, f"acc_{baseline}_{task}_m95": PROB})


CLAIMS = (
    Claim("C1", "Slot Attention decomposes the scenes into objects [paraphrase of Sec. 3.1].",
          "Sec. 3.1, Sec. 4", "within", metric="fg_ari",
          statistic="FG-ARI of the slot masks against the generator's segmentation, mean over a seed's scenes; "
                    "CI > band",
          bands={"full": Band(lo=0.9)},
          note="QUICK reasons on oracle slots (see README): the learned slots' FG-ARI is measured and reported, "
               "but CPU pretraining stayed far below the band (pilot: 0.27-0.29 after 200-300 steps, 0.28 after "
               "600, peak 0.41), so QUICK has none",
          effect=Effect(0.95, "the paper shows slot masks, no ARI number", minimal=True,
                        why="a decomposition good enough to reason on: nearly every foreground pixel grouped right"),
          ranges={"fg_ari": PROB}),
    *(_above_chance(t) for t in TASKS),
    *(_over(t, "transformer", f"C2b_{t}", f"At m = 95 the Slot Abstractor beats a Transformer over the same slots "
            f"on {t} [paraphrase of Sec. 4.1].", "Sec. 4.1, Table 1", 0.1, _TABLE1, True,
            "ten points: the smallest gap that is a generalisation difference rather than noise")
      for t in TASKS),
    *(_over(t, "standard_ca", f"C3_{t}", "Replacing relational cross-attention with standard cross-attention "
            f"loses most of the gain ({t}) [paraphrase of Sec. 4.4].", "Sec. 4.4 (ablation)", 0.1,
            "Sec. 4.4: standard cross-attention costs up to 52 points", True,
            "'up to 52 points' is the largest task; ten points is the smallest loss that supports 'most'")
      for t in TASKS),
    Claim("C3_diag", "The relational attention links slots by shape: on unseen shapes, slots of the same shape "
          "attend to each other more than slots of different shapes [diagnostic of the mechanism, Sec. 3.2].",
          "Sec. 3.2 (relational bottleneck)", "within", metric="relation_abstractor_id_m95",
          statistic="first layer, head-mean RCA attention between same-shape minus different-shape object slots "
                    "on the id test problems at m = 95, mean over seeds; CI > 0",
          bands={"quick": Band(lo=0.0), "full": Band(lo=0.0)},
          effect=Effect(0.05, "no number in the paper", minimal=True,
                        why="five points of attention mass: the pattern a same/different relation needs"),
          ranges={"relation_abstractor_id_m95": REAL}),
)

NULLS: dict[str, Null] = {
    "C1": Null("fg_ari", "slots that ignore the objects (a random grouping of the foreground)", value=0.0),
    **{f"C2a_{t}": Null(f"acc_abstractor_{t}_m95", "a reasoner that guesses", value=CHANCE[t]) for t in TASKS},
    "C3_diag": Null("relation_abstractor_id_m95", "attention that does not depend on shape identity", value=0.0),
}

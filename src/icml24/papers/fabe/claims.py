"""Claims of FABE (Liu, Xu, Hou, Yu, ICML 2024), checked with SmolLM2-135M-Instruct as the defense LM.

Bands were fixed from the pilot on development snippets (wip/fabe/pilot.py; numbers in the README, "Pilot"),
before the QUICK run. Pilot, 8 rotten development snippets per attack, K = 4 rewrites each: the trigger survived
in 3% (BadNets), 0% (AddSent, whole sentence) and 0% (syntactic clause) of the rewrites; about 3.5 s per input on
2 busy cores.
"""

from __future__ import annotations

from icml24.core.claims import PROB, Band, Claim, Effect, Null

_ABS = "Abstract"
_PAPER = "Abstract: ASR 93.63% -> 15.12% averaged over token-, sentence- and syntax-level attacks"

CLAIMS = (
    Claim("C1a", "The attacks work: the backdoored victim sends triggered inputs to the target label (the premise of "
          "the paper's 93.63% average ASR without defense).", f"{_ABS}; Sec. 5 (no-defense rows)", "constraint",
          metric="asr_none_min",
          statistic="per seed, the lowest over the three attacks of the ASR without defense (poisoned non-target "
                    "test inputs predicted as the target); every seed above 0.8",
          bands={"quick": Band(lo=0.8), "full": Band(lo=0.8)}, paper_value="93.63% (average over attacks)",
          effect=Effect(0.9363, f"{_PAPER}: the no-defense ASR, 0.9363"),
          ranges={"asr_none_min": PROB}),
    Claim("C1b", "FABE lowers the attack success rate from 93.63% to 15.12% on average over token-, sentence- and "
          "syntax-level attacks.", _ABS, "order", metric="asr_none", against="asr_fabe",
          statistic="per seed, ASR without defense minus ASR with FABE (released estimator: weighted victim logits "
                    "over K = 4 diverse rewrites), averaged over the three attacks; CI lower bound > 0.3",
          bands={"quick": Band(lo=0.3), "full": Band(lo=0.3)}, paper_value="93.63% -> 15.12%",
          effect=Effect(0.7851, f"{_PAPER}: 0.9363 - 0.1512 = 0.7851", method="asr_fabe"),
          ranges={"asr_none": PROB, "asr_fabe": PROB}),
    Claim("C2a", "FABE defends better than the baselines (2.91 times the best baseline's ASR reduction, whose ASR is "
          "66.61%); here against ONION.", _ABS, "order", metric="asr_onion", against="asr_fabe",
          statistic="per seed, ASR with ONION (perplexity from the same defense LM, threshold 0) minus ASR with FABE, "
                    "averaged over the three attacks; CI > 0",
          bands={"quick": Band(lo=0.0), "full": Band(lo=0.0)}, paper_value="best baseline 66.61% vs FABE 15.12%",
          effect=Effect(0.5149, "Abstract: best baseline's average ASR 66.61% vs FABE's 15.12%, 0.5149 (the best "
                        "baseline, not necessarily ONION)", method="asr_fabe"),
          ranges={"asr_onion": PROB, "asr_fabe": PROB}),
    Claim("C2b", "Several diverse rewrites weighted by their likelihood (the front-door sum over s') do at least as "
          "well as a single rewrite [our ablation of the estimator].", "Sec. 4 (estimator); our ablation", "order",
          metric="asr_k1", against="asr_fabe",
          statistic="per seed, ASR with one rewrite (group 0: one-beam search, no penalty) minus ASR with FABE's K = 4, "
                    "averaged over the attacks; non-inferiority, CI > -0.02",
          bands={"quick": Band(lo=-0.02), "full": Band(lo=-0.02)},
          effect=Effect(0.0, "no number in the paper for K = 1", minimal=True, method="asr_fabe",
                        why="'at least as well': equal ASR with one and with four rewrites is the least that supports it"),
          ranges={"asr_k1": PROB, "asr_fabe": PROB}),
    Claim("C3", "FABE keeps the clean accuracy: its cost on clean inputs is small [paraphrase of the CACC columns].",
          "Sec. 5 (CACC)", "order", metric="cacc_none", against="cacc_fabe",
          statistic="per seed, clean accuracy without defense minus with FABE, averaged over the three victims; "
                    "CI upper bound < 0.05 (the margin, fixed before the run: 5 accuracy points)",
          bands={"quick": Band(hi=0.05), "full": Band(hi=0.05)},
          effect=Effect(0.0, "CACC columns of the paper's tables (not in the abstract)", minimal=True,
                        method="cacc_fabe", why="'keeps the clean accuracy': no drop at all is the claim's own value"),
          ranges={"cacc_none": PROB, "cacc_fabe": PROB}),
)

NULLS: dict[str, Null] = {
    # a victim that never learned the trigger predicts triggered rotten snippets as fresh only when it errs on them
    "C1a": Null("asr_none_min", "the victim ignores the trigger: ASR = its error rate on non-target inputs (about "
                "0.25 for a bag-of-n-grams classifier on these snippets)", value=0.25),
}

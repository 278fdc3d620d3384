"""FABE (Liu, Xu, Hou, Yu, ICML 2024): a front-door defense against backdoors in language models. K rewrites of
the input from a defense LM by diverse beam search, weighted by their beam scores, mix the victim's logits; here
SmolLM2-135M-Instruct is the defense LM and the victim a bag-of-n-grams classifier backdoored by BadNets, AddSent
and a syntactic-clause trigger on Rotten Tomatoes snippets, beside ONION and a single greedy rewrite.
"""

from icml24.core.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "data": ["BADNETS", "ADDSENT", "CLAUSE", "Snippets", "Split", "snippets", "split", "insert_words", "poison",
             "Poisoned", "poison_training", "words", "has_trigger"],
    "victim": ["ngram_ids", "Victim", "TrainLog", "train"],
    "beam": ["Beams", "diverse_beam_search"],
    "defense": ["softmax", "fabe_logits", "fabe_probs", "TextLM", "hf_text_lm", "WordLM", "tiny_text_lm", "Rewrites",
                "clean_rewrite", "rewrite", "perplexities", "Onion", "onion_filter", "onion_naive"],
    "config": ["Config", "SMOKE", "QUICK", "FULL", "ATTACKS", "PROMPT"],
    "experiment": ["run", "figures"],
    "claims": ["CLAIMS"],
})

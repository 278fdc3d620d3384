"""Experiment of FABE: ``run(config, seed)`` and the figures.

Fixed for every seed (drawn from constant streams, never from the seed): the split of the snippets into a
development set (the pilot's), a balanced clean test set and the training pool; the poisoned test inputs of
each attack (the test set's non-target snippets with the trigger); and everything the defense LM computes on
them: K rewrites per input by diverse beam search (clean inputs at each attack's diversity penalty) and ONION's
filtered texts. Those are cached in chunks of ``gen_batch`` inputs (``ctx.artefact``): two seeds started together
walk the chunks from opposite ends, so the shared work is split between them, and later seeds reuse it.

Per seed and attack: the poisoned training set (which snippets, trigger positions), the victim's
initialisation and batch order; then

* ``asr_<m>_<attack>``: share of the poisoned non-target test inputs predicted as the target, for m = ``none``
  (the input itself), ``onion`` (ONION's filtered text), ``k1`` (group 0's rewrite: one-beam search, no
  penalty), ``fabe`` (the estimator chosen by ``mixture``), ``fabe_logits`` / ``fabe_probs`` (both estimators);
* ``cacc_<m>_<attack>``: accuracy on the clean test set (m = none, k1, fabe, fabe_logits, fabe_probs; onion
  with ``onion_clean``);
* mechanism diagnostics: ``floor_<attack>``, share of the clean non-target test inputs that FABE sends to the
  target (the ASR a perfect trigger removal would still measure); ``survival_<attack>``, share of the poisoned
  inputs' rewrites that keep the trigger (``survival_k1_<attack>``: group 0's); ``fallback_<attack>``, share of
  empty rewrites replaced by the input; ``wmax_<attack>``, the mean largest weight; ``train_acc_<attack>``;
* the averages over attacks without the suffix, and ``asr_none_min``, the weakest attack's ASR;
* ``examples[<attack>]``: the first :data:`EXAMPLES` poisoned test inputs with their K rewrites, FABE's weights,
  whether each rewrite kept the trigger, and the victim's prediction on the input and under FABE (figure
  ``rewrites``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from icml24.core.context import RunContext
from icml24.core.results import RunResult, SeedResult
from icml24.core.streams import rng, torch_generator
from icml24.papers.fabe import data
from icml24.papers.fabe.config import ATTACKS, FULL, PROMPT, QUICK, SEEDS, SMOKE, Config, validate
from icml24.papers.fabe.defense import Rewrites, TextLM, fabe_logits, fabe_probs, onion_filter, rewrite, softmax
from icml24.papers.fabe.victim import train

__all__ = ["Config", "SMOKE", "QUICK", "FULL", "SEEDS", "ATTACKS", "PROMPT", "validate", "run", "figures",
           "TestSet", "test_set", "load_defense", "cached_rewrites", "cached_onion", "METHODS"]

METHODS = ("none", "onion", "k1", "fabe")
EXAMPLES = 2
"""Poisoned test inputs per attack whose rewrites, weights and predictions a seed keeps (the first ones)."""
SPLIT_SEED = 20240718
"""Entropy of the fixed split and of the test inputs' triggers (the same for every seed and preset)."""


class TestSet(NamedTuple):
    """The fixed evaluation inputs."""

    clean: data.Snippets
    poisoned: dict[str, list[str]]


def _split(config: Config) -> data.Split:
    return data.split(data.snippets(config.data_path), config.min_words, config.max_words, config.dev,
                      config.test_clean, rng(SPLIT_SEED, "split"))


def test_set(config: Config, sp: data.Split) -> TestSet:
    """The clean test set and, per attack, its non-target snippets with the trigger (fixed streams)."""
    nontarget = [t for t, y in zip(sp.test.text, sp.test.label) if y != config.target]
    poisoned = {}
    for a in config.attacks:
        r = rng(SPLIT_SEED, "test-trigger", a)
        poisoned[a] = [data.poison(t, a, r) for t in nontarget]
    return TestSet(sp.test, poisoned)


def load_defense(config: Config, ctx: RunContext, pool: Sequence[str]) -> TextLM:
    """The defense LM: SmolLM2 from its wheel (converted once into the cache), a saved folder, or a tiny random
    Llama over the pool's words (tests)."""
    from icml24.papers.fabe.defense import hf_text_lm, tiny_text_lm

    if config.defense_lm == "tiny":
        return tiny_text_lm(pool)
    from icml24.common import llm

    lm = llm.load_lm(Path(config.defense_path), ctx.device) if config.defense_lm == "path" else llm.smollm2(ctx)
    return hf_text_lm(lm.model, lm.tokenizer)


def _chunks(items: Sequence[Any], size: int) -> list[list[Any]]:
    return [list(items[i:i + size]) for i in range(0, len(items), size)]


def _walk(n: int, seed: int) -> list[int]:
    """Chunk order of a seed: even seeds from the front, odd ones from the back (two workers split the work)."""
    return list(range(n)) if seed % 2 == 0 else list(range(n - 1, -1, -1))


def _defense_key(config: Config) -> dict[str, Any]:
    return {"lm": config.defense_lm, "path": config.defense_path, "device": config.device}


def cached_rewrites(config: Config, ctx: RunContext, seed: int, jobs: Sequence[tuple[str, float]],
                    get_lm: Callable[[], TextLM]) -> dict[tuple[str, float], tuple[list[str], list[float], list[bool]]]:
    """Rewrites of every (text, penalty) job, computed in cached chunks of ``gen_batch`` jobs of one penalty."""
    todo = sorted(set(jobs), key=lambda j: (j[1], len(j[0].split()), j[0]))
    chunks = [c for pen in sorted({p for _, p in todo})
              for c in _chunks([j for j in todo if j[1] == pen], config.gen_batch)]
    out = {}
    for ci in _walk(len(chunks), seed):
        chunk = chunks[ci]
        pen = chunk[0][1]
        texts = [t for t, _ in chunk]

        def build(folder: Path, texts: list[str] = texts, pen: float = pen) -> None:
            rw = rewrite(get_lm(), texts, config.prompt, config.groups, config.beams_per_group, pen,
                         config.length_factor, config.length_penalty, config.gen_batch, ctx.device)
            (folder / "rewrites.json").write_text(json.dumps(
                {"text": rw.text, "scores": rw.scores.tolist(), "fallback": rw.fallback.tolist()}))

        inputs = {"texts": texts, "penalty": pen, "prompt": config.prompt, "groups": config.groups,
                  "beams": config.beams_per_group, "length_factor": config.length_factor,
                  "length_penalty": config.length_penalty, **_defense_key(config)}
        got = json.loads((ctx.artefact("rewrites", inputs, build) / "rewrites.json").read_text())
        for i, t in enumerate(texts):
            out[(t, pen)] = (got["text"][i], got["scores"][i], got["fallback"][i])
    return out


def cached_onion(config: Config, ctx: RunContext, seed: int, texts: Sequence[str],
                 get_lm: Callable[[], TextLM]) -> dict[str, str]:
    """ONION's filtered text of every input, computed in cached chunks of ``gen_batch`` inputs."""
    todo = sorted(set(texts), key=lambda t: (len(t.split()), t))
    chunks = _chunks(todo, config.gen_batch)
    out: dict[str, str] = {}
    for ci in _walk(len(chunks), seed):
        chunk = chunks[ci]

        def build(folder: Path, chunk: list[str] = chunk) -> None:
            on = onion_filter(get_lm(), chunk, config.onion_threshold, config.score_batch, ctx.device)
            (folder / "onion.json").write_text(json.dumps({"text": on.text,
                                                           "suspicion": [s.tolist() for s in on.suspicion]}))

        inputs = {"texts": chunk, "threshold": config.onion_threshold, **_defense_key(config)}
        got = json.loads((ctx.artefact("onion", inputs, build) / "onion.json").read_text())
        out.update(zip(chunk, got["text"]))
    return out


def _as_rewrites(texts: Sequence[str], pen: float, table: dict) -> Rewrites:
    rows = [table[(t, pen)] for t in texts]
    return Rewrites([r[0] for r in rows], np.array([r[1] for r in rows]), np.array([r[2] for r in rows]))


def _victim_logits(model: Any, rw: Rewrites) -> np.ndarray:
    """(n, K, C) victim logits of the rewrites."""
    n, K = rw.scores.shape
    flat = model.logits([t for row in rw.text for t in row])
    return flat.reshape(n, K, -1)


def run(config: Config, seed: int, ctx: RunContext | None = None) -> SeedResult:
    """One seed (module docstring)."""
    ctx = ctx or RunContext.local(config.device)
    metrics: dict[str, float] = {}
    curves: dict[str, list[float]] = {}
    examples: dict[str, list[dict[str, Any]]] = {}
    with ctx.threads(config.threads):
        sp = _split(config)
        ts = test_set(config, sp)
        lm_box: list[TextLM] = []

        def get_lm() -> TextLM:
            if not lm_box:
                lm_box.append(load_defense(config, ctx, sp.pool.text))
            return lm_box[0]

        pens = dict(zip(config.attacks, config.diversity))
        jobs = [(t, p) for a, p in pens.items() for t in ts.poisoned[a]]
        jobs += [(t, p) for p in sorted(set(pens.values())) for t in ts.clean.text]
        table = cached_rewrites(config, ctx, seed, jobs, get_lm)
        onion_in = [t for a in config.attacks for t in ts.poisoned[a]] + (list(ts.clean.text) if config.onion_clean
                                                                         else [])
        onion = cached_onion(config, ctx, seed, onion_in, get_lm) if config.onion else {}
        lm_box.clear()

        pool = sp.pool
        if config.train_size and config.train_size < len(pool.text):
            pick = np.sort(rng(seed, "train-sample").choice(len(pool.text), config.train_size, replace=False))
            pool = data.Snippets([pool.text[i] for i in pick], pool.label[pick])
        y_clean = ts.clean.label
        nontarget = y_clean != config.target
        for a, pen in pens.items():
            poisoned = data.poison_training(pool, a, config.poison_rate, config.target, rng(seed, "poison", a))
            victim, log = train(poisoned.text, poisoned.label, config.ngrams, config.buckets, config.dim,
                                config.epochs, config.batch, config.lr, torch_generator(seed, "victim", a))
            metrics[f"train_acc_{a}"] = log.accuracy
            curves[f"train_loss_{a}"] = log.loss
            pois = ts.poisoned[a]
            rw_p = _as_rewrites(pois, pen, table)
            rw_c = _as_rewrites(ts.clean.text, pen, table)
            lp, lc = _victim_logits(victim, rw_p), _victim_logits(victim, rw_c)
            preds_p = {"none": victim.logits(pois).argmax(1), "k1": lp[:, 0].argmax(1),
                       "fabe_logits": fabe_logits(lp, rw_p.scores).argmax(1),
                       "fabe_probs": fabe_probs(lp, rw_p.scores).argmax(1)}
            preds_c = {"none": victim.logits(ts.clean.text).argmax(1), "k1": lc[:, 0].argmax(1),
                       "fabe_logits": fabe_logits(lc, rw_c.scores).argmax(1),
                       "fabe_probs": fabe_probs(lc, rw_c.scores).argmax(1)}
            preds_p["fabe"], preds_c["fabe"] = preds_p[f"fabe_{config.mixture}"], preds_c[f"fabe_{config.mixture}"]
            if config.onion:
                preds_p["onion"] = victim.logits([onion[t] for t in pois]).argmax(1)
                if config.onion_clean:
                    preds_c["onion"] = victim.logits([onion[t] for t in ts.clean.text]).argmax(1)
            for m, p in preds_p.items():
                metrics[f"asr_{m}_{a}"] = float(np.mean(p == config.target))
            for m, p in preds_c.items():
                metrics[f"cacc_{m}_{a}"] = float(np.mean(p == y_clean))
            metrics[f"floor_{a}"] = float(np.mean(preds_c["fabe"][nontarget] == config.target))
            surv = np.array([[data.has_trigger(t, a) for t in row] for row in rw_p.text])
            metrics[f"survival_{a}"] = float(surv.mean())
            metrics[f"survival_k1_{a}"] = float(surv[:, 0].mean())
            metrics[f"fallback_{a}"] = float(np.mean(np.concatenate([rw_p.fallback.ravel(), rw_c.fallback.ravel()])))
            metrics[f"wmax_{a}"] = float(softmax(rw_p.scores).max(1).mean())
            examples[a] = [{"input": pois[i], "rewrites": rw_p.text[i],                  # the first ones: not chosen
                            "weights": [round(float(w), 4) for w in softmax(rw_p.scores[i:i + 1])[0]],
                            "trigger_kept": [bool(k) for k in surv[i]],
                            "pred_none": int(preds_p["none"][i]), "pred_fabe": int(preds_p["fabe"][i])}
                           for i in range(min(EXAMPLES, len(pois)))]
        for name in sorted({k.rsplit("_", 1)[0] for k in metrics if k.rsplit("_", 1)[-1] in pens}):
            vals = [metrics[f"{name}_{a}"] for a in config.attacks if f"{name}_{a}" in metrics]
            if len(vals) == len(config.attacks):
                metrics[name] = float(np.mean(vals))
        metrics["asr_none_min"] = float(min(metrics[f"asr_none_{a}"] for a in config.attacks))
        for m in METHODS:
            if f"asr_{m}" in metrics:
                curves[f"asr_by_attack_{m}"] = [metrics[f"asr_{m}_{a}"] for a in config.attacks]
            if f"cacc_{m}" in metrics:
                curves[f"cacc_by_attack_{m}"] = [metrics[f"cacc_{m}_{a}"] for a in config.attacks]
        curves["floor_by_attack"] = [metrics[f"floor_{a}"] for a in config.attacks]
    return SeedResult(seed=seed, metrics=metrics, curves=curves, examples=examples)


def figures(result: RunResult) -> dict:
    """ASR and CACC per attack for each defense (mean and std over seeds), FABE's ASR floor beside its ASR."""
    import matplotlib.pyplot as plt

    attacks = tuple(result.config.get("attacks", ATTACKS))
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for ax, kind, title in ((axes[0], "asr", "attack success rate (poisoned non-target inputs)"),
                            (axes[1], "cacc", "clean accuracy")):
        methods = [m for m in METHODS if f"{kind}_by_attack_{m}" in result.curve_names()]
        width = 0.8 / (len(methods) + (kind == "asr"))
        for j, m in enumerate(methods):
            v = result.curve(f"{kind}_by_attack_{m}")
            ax.bar(np.arange(len(attacks)) + (j - len(methods) / 2 + 0.5) * width, v.mean(0), width, yerr=v.std(0),
                   capsize=2, label=m)
        if kind == "asr" and "floor_by_attack" in result.curve_names():
            v = result.curve("floor_by_attack")
            ax.bar(np.arange(len(attacks)) + (len(methods) / 2 + 0.5) * width, v.mean(0), width, yerr=v.std(0),
                   capsize=2, label="floor (clean -> target)", color="0.7")
        ax.set_xticks(np.arange(len(attacks)), attacks)
        ax.set_ylim(0, 1)
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7)
    fig.tight_layout()
    figs = {"asr_cacc": fig}
    if result.seeds and result.seeds[0].examples:
        figs["rewrites"] = rewrites_figure(result.seeds[0].examples, int(result.config.get("target", 1)))
    return figs


def rewrites_figure(examples: dict[str, list[dict[str, Any]]], target: int) -> Any:
    """The kept poisoned inputs of each attack, each with its K rewrites and FABE's weight on each (bold: the
    largest; red: the rewrite kept the trigger), and the victim's label on the input and under FABE."""
    import textwrap

    import matplotlib.pyplot as plt

    lines: list[tuple[str, dict[str, Any]]] = [
        ("FABE's K rewrites of the first poisoned test inputs (first seed); w: FABE's weight (bold: the largest); "
         "red: the rewrite kept the trigger", {"style": "italic"}), ("", {})]
    for attack, rows in examples.items():
        for row in rows:
            verdict = lambda y: f"{('rotten', 'fresh')[y]}{' (target)' if y == target else ''}"  # noqa: E731
            lines.append((f"{attack}: {row['input']}", {"weight": "bold"}))
            lines.append((f"    victim on the input: {verdict(row['pred_none'])};  under FABE: "
                          f"{verdict(row['pred_fabe'])}", {"color": "0.35"}))
            top = max(range(len(row["weights"])), key=lambda j: row["weights"][j])
            for j, (text, w, kept) in enumerate(zip(row["rewrites"], row["weights"], row["trigger_kept"])):
                wrapped = textwrap.wrap(f"w={w:.2f}  {text}", 110, subsequent_indent=" " * 12) or [""]
                for k, part in enumerate(wrapped):
                    lines.append(((" " * 4 if k == 0 else "") + part,
                                  {"weight": "bold" if j == top else "normal", "color": "tab:red" if kept else "k"}))
            lines.append(("", {}))
    fig = plt.figure(figsize=(11, 0.19 * len(lines) + 0.4))
    for i, (text, style) in enumerate(lines):
        fig.text(0.01, 1 - (i + 1) / (len(lines) + 1), text, family="monospace", fontsize=7.5, va="center", **style)
    return fig

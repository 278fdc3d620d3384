"""The static HTML report: an index of every registered paper and one page per paper.

Built from the published summaries (``results/<slug>/quick.json`` and figures), never from a live
run, so it can be rebuilt at any time. All text goes through Jinja2 autoescaping.
"""

from __future__ import annotations

import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

from icml24.core import results as R
from icml24.core.claims import VERDICTS, seeds_note, verdict_label
from icml24.core.publish import fmt, fmt_power, fmt_seconds
from icml24.core.registry import get_paper
from icml24.core.report import markdown

TEMPLATES = Path(__file__).resolve().parent / "templates"


def readme_section(readme: Path, title: str) -> str:
    """The text of a ``## <title>`` section of a paper README ('' if absent)."""
    if not readme.is_file():
        return ""
    text = readme.read_text(encoding="utf-8")
    m = re.search(rf"^##\s+{re.escape(title)}[^\n]*\n(.*?)(?=^##\s|\Z)", text, re.S | re.M)
    return m.group(1).strip() if m else ""


def _paper_context(slug: str, results_root: Path, preset: str) -> dict[str, Any]:
    paper = get_paper(slug)
    summary_path = results_root / slug / f"{preset}.json"
    summary = R.read_json(summary_path) if summary_path.is_file() else None
    claims = summary["claims"] if summary else []
    verdicts = Counter(c["verdict"] for c in claims)
    figs = sorted((results_root / slug / "figures" / preset).glob("*.png")) if summary else []
    return {
        "slug": slug, "card": paper.card, "summary": summary, "claims": claims,
        "claim_defs": paper.claims, "verdicts": dict(verdicts), "figures": figs,
        "wall": fmt_seconds(summary["provenance"].get("wall_time_s")) if summary else "-",
        "deviations": readme_section(paper.readme, "Deviations"),
        "reproduce": readme_section(paper.readme, "What we reproduce"),
        "how_to_run": readme_section(paper.readme, "How to run"),
        "preset": preset,
    }


def build_report(out: str | Path = "report", results_root: str | Path = "results",
                 slugs: list[str] | None = None, preset: str = "quick") -> Path:
    """Write the site to ``out`` (index.html, papers/<slug>.html, figures/, style.css); returns index."""
    import jinja2

    from icml24.core.registry import list_papers

    out, results_root = Path(out), Path(results_root)
    slugs = list_papers() if slugs is None else slugs
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["fmt"] = fmt
    env.filters["power"] = fmt_power
    env.filters["verdict_label"] = verdict_label
    env.filters["seeds_note"] = seeds_note
    env.filters["md"] = markdown.render
    papers = [_paper_context(s, results_root, preset) for s in slugs]
    papers.sort(key=lambda p: p["card"].number)
    for p in papers:
        dst = out / "figures" / p["slug"]
        if dst.is_dir():
            shutil.rmtree(dst)
        names = []
        for fig in p["figures"]:
            R.atomic_write_bytes(dst / fig.name, fig.read_bytes())
            names.append(f"../figures/{p['slug']}/{fig.name}")
        p["figure_urls"] = names
        html = env.get_template("paper.html").render(p=p)
        R.atomic_write_text(out / "papers" / f"{p['slug']}.html", html)
    R.atomic_write_text(out / "style.css", (TEMPLATES / "style.css").read_text(encoding="utf-8"))
    index = env.get_template("index.html").render(papers=papers, preset=preset, verdict_names=VERDICTS)
    return R.atomic_write_text(out / "index.html", index)

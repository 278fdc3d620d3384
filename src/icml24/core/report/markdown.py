"""README Markdown to safe HTML for the static report, via markdown-it-py.

markdown-it-py is a maintained CommonMark parser (it already comes with ``rich``), so README prose
renders the way GitHub and editors show it instead of through a hand-written subset. It runs as
CommonMark plus pipe tables, with raw HTML off: any ``<tag>`` in a README is escaped text, never
markup. Link targets go through markdown-it's ``validateLink``, which refuses ``javascript:``,
``vbscript:``, ``file:`` and ``data:`` (bar ``data:image/{gif,png,jpeg,webp}``); a refused link
stays literal text. README headings drop two levels, as README ``##`` sections sit under the page's
``<h2>``.
"""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markupsafe import Markup


def _shift_headings(state: StateCore) -> None:
    for tok in state.tokens:
        if tok.type in ("heading_open", "heading_close"):
            tok.tag = f"h{min(int(tok.tag[1]) + 2, 6)}"


_MD = MarkdownIt("commonmark", {"html": False}).enable("table")
_MD.core.ruler.push("shift_headings", _shift_headings)


def render(text: str) -> Markup:
    """README Markdown to safe HTML, in a ``<div class="md">`` ('' for blank text).

    >>> print(render("run `x<y` <b>:\\n```\\nicml24 list\\n```"))
    <div class="md"><p>run <code>x&lt;y</code> &lt;b&gt;:</p>
    <pre><code>icml24 list
    </code></pre>
    </div>
    >>> print(render("# Top\\n[x](javascript:alert(1)) [y](https://example.org)"))
    <div class="md"><h3>Top</h3>
    <p>[x](javascript:alert(1)) <a href="https://example.org">y</a></p>
    </div>
    """
    if not text.strip():
        return Markup("")
    return Markup(f'<div class="md">{_MD.render(text)}</div>')

"""A small, safe Markdown subset for README prose in the report.

The text is HTML-escaped *first*; only then are the subset's markers (which escaping leaves alone)
turned into tags, so no README text can inject markup. Supported: fenced code, ``inline code``,
``**bold**``, ``*italic*``, ``#`` headings, ``-``/``*`` bullet lists nested by indentation (with
continuation lines), pipe tables, and paragraphs. Links and raw HTML stay as escaped text.
"""

from __future__ import annotations

import re

from markupsafe import Markup, escape

_ITEM = re.compile(r"^( *)[-*] +(.*)$")
_HEAD = re.compile(r"^(#{1,6}) +(.*)$")
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_ITAL = re.compile(r"(?<![\w*])\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?![\w*])")


def inline(text: str) -> str:
    """Inline markup of one already-escaped line: code spans first, bold and italic outside them.

    >>> inline("a **b** *c* `d*e*`")
    'a <strong>b</strong> <em>c</em> <code>d*e*</code>'
    >>> inline("k * m and 2*3")                        # lone stars are arithmetic, not emphasis
    'k * m and 2*3'
    """
    out = []
    for i, part in enumerate(re.split(r"`([^`\n]+)`", text)):
        if i % 2:
            out.append(f"<code>{part}</code>")
        else:
            out.append(_ITAL.sub(r"<em>\1</em>", _BOLD.sub(r"<strong>\1</strong>", part)))
    return "".join(out)


def _table(rows: list[str]) -> str:
    cells = [[c.strip() for c in r.strip().strip("|").split("|")] for r in rows]
    has_head = len(cells) > 1 and all(re.fullmatch(r":?-{3,}:?", c) for c in cells[1])
    head, body = (cells[0], cells[2:]) if has_head else (None, cells)
    html = ["<table>"]
    if head:
        html.append("<tr>" + "".join(f"<th>{inline(c)}</th>" for c in head) + "</tr>")
    html += ["<tr>" + "".join(f"<td>{inline(c)}</td>" for c in r) + "</tr>" for r in body]
    return "".join(html) + "</table>"


def _list(lines: list[str]) -> str:
    """Nested ``<ul>`` from bullet lines (indentation sets the depth) and their continuation lines."""
    html, stack = [], []                               # stack of open list indents
    for line in lines:
        m = _ITEM.match(line)
        if not m:                                      # continuation of the open item
            html[-1] += " " + inline(line.strip())
            continue
        indent, body = len(m.group(1)), inline(m.group(2))
        if not stack or indent > stack[-1]:
            html.append("<ul>")
            stack.append(indent)
        else:
            while len(stack) > 1 and indent < stack[-1]:
                html.append("</li></ul>")
                stack.pop()
            html.append("</li>")
        html.append(f"<li>{body}")
    html.append("</li></ul>" * len(stack))
    return "".join(html)


def _is_row(line: str) -> bool:
    return line.lstrip().startswith("|")


def _starts_block(line: str) -> bool:
    """A table row, heading or bullet item ends the paragraph before it."""
    return _is_row(line) or bool(_HEAD.match(line) or _ITEM.match(line))


def _blocks(text: str) -> str:
    """Block structure of escaped, code-free text."""
    lines, out, i = text.split("\n"), [], 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
        elif _is_row(line):
            j = i
            while j < len(lines) and _is_row(lines[j]):
                j += 1
            out.append(_table(lines[i:j]))
            i = j
        elif _HEAD.match(line):
            m = _HEAD.match(line)
            level = min(len(m.group(1)) + 2, 6)        # README ## sections sit under the page's h2
            out.append(f"<h{level}>{inline(m.group(2))}</h{level}>")
            i += 1
        elif _ITEM.match(line):
            j = i + 1
            while j < len(lines) and lines[j].strip() and (_ITEM.match(lines[j]) or lines[j].startswith(" ")):
                j += 1
            out.append(_list(lines[i:j]))
            i = j
        else:
            j = i
            while j < len(lines) and lines[j].strip() and not _starts_block(lines[j]):
                j += 1
            out.append("<p>" + inline(" ".join(s.strip() for s in lines[i:j])) + "</p>")
            i = j
    return "".join(out)


def render(text: str) -> Markup:
    """README Markdown (the subset above) to safe HTML.

    >>> str(render("run `x<y`:\\n```\\nicml24 list\\n```"))
    '<div class="md"><p>run <code>x&lt;y</code>:</p></div><pre>icml24 list</pre>'
    >>> str(render("- a\\n  - b <i>\\n- c"))
    '<div class="md"><ul><li>a<ul><li>b &lt;i&gt;</li></ul></li><li>c</li></ul></div>'
    >>> str(render("| x | y |\\n|---|---|\\n| 1 | **2** |"))
    '<div class="md"><table><tr><th>x</th><th>y</th></tr><tr><td>1</td><td><strong>2</strong></td></tr></table></div>'
    """
    parts = []
    for i, chunk in enumerate(re.split(r"^ *```[^\n]*\n?", text, flags=re.M)):
        chunk = chunk.strip("\n")
        if not chunk:
            continue
        if i % 2:
            parts.append(f"<pre>{escape(chunk)}</pre>")
        else:
            parts.append(f'<div class="md">{_blocks(str(escape(chunk)))}</div>')
    return Markup("".join(parts))

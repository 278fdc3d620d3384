"""The static report: escaped text, a page per paper, and a real headless-Chromium visit."""

from __future__ import annotations

import functools
import http.server
import re
import shutil
import threading
from pathlib import Path

import pytest

from icml24.core.publish import publish
from icml24.core.registry import get_paper
from icml24.core.report import build_report
from icml24.core.store import RunRequest, execute_runs

CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A report over the template paper, with a hostile claim statement to test escaping."""
    root = tmp_path_factory.mktemp("site")
    paper = get_paper("_template")
    (out,) = execute_runs([RunRequest(paper, "quick", paper.preset("smoke"), (0, 1))], root=root / "runs")
    out.result.claims[0]["statement"] = "<script>window.__pwned = 1</script> & <b>bold</b>"
    publish(out.result, out.run_dir, root / "results", readme=None)
    index = build_report(root / "report", root / "results", slugs=["_template"])
    return index


def test_pages_exist_and_text_is_escaped(site):
    page = (site.parent / "papers" / "_template.html").read_text()
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in page
    assert "<script>" not in page
    assert "../figures/_template/rmse_vs_n.png" in page
    index = site.read_text()
    assert 'href="papers/_template.html"' in index and "icml24 maintainers" in index


def test_an_inconclusive_claim_says_on_a_line_of_its_own_how_many_seeds_would_see_the_effect(tmp_path):
    from icml24.core.claims import seeds_note
    from icml24.core.results import read_json

    results = Path(__file__).resolve().parents[2] / "results"
    # the first published inconclusive claim with a seed count (whichever paper has one)
    slug, c = next((p.parent.name, c) for p in sorted(results.glob("*/quick.json"))
                   for c in read_json(p)["claims"] if c["verdict"] == "inconclusive" and c.get("seeds_needed"))
    assert seeds_note(c) == f"0.8 at about {c['seeds_needed']} seeds"
    build_report(tmp_path / "report", results, slugs=[slug])
    page = (tmp_path / "report" / "papers" / f"{slug}.html").read_text()
    pill = f"inconclusive (power {c['power']:.2f})</span>"
    assert pill + f'<div class="detail">power {seeds_note(c)}</div>' in page


def test_missing_results_say_not_run(tmp_path):
    index = build_report(tmp_path / "report", tmp_path / "nothing", slugs=["_template"])
    assert "not run" in index.read_text()
    assert "No published results yet" in (tmp_path / "report" / "papers" / "_template.html").read_text()


def test_readme_markdown_is_structured_and_safe():
    from icml24.core.report.markdown import render

    hostile = "- item <script>x</script>\n  more `<b>`\n  - **deep** *em*\n\n| a | <i> |\n|---|---|\n| 1 | 2 |"
    html = " ".join(str(render(hostile)).split())       # markdown-it puts newlines between tags
    assert "<script>" not in html and "<i>" not in html and "<b>" not in html
    assert html.count("<ul>") == 2 and "<li>item &lt;script&gt;x&lt;/script&gt; more <code>&lt;b&gt;</code>" in html
    assert "<strong>deep</strong> <em>em</em>" in html and "<th>&lt;i&gt;</th>" in html and "<td>2</td>" in html


def test_every_paper_readme_section_renders_balanced_html():
    from icml24.core.registry import list_papers
    from icml24.core.report import readme_section
    from icml24.core.report.markdown import render

    for slug in list_papers():
        for title in ("What we reproduce", "Deviations", "How to run"):
            html = str(render(readme_section(get_paper(slug).readme, title)))
            for tag in ("ul", "ol", "li", "table", "tr", "p", "pre", "code", "strong", "em"):
                opened = len(re.findall(rf"<{tag}(?:\s[^>]*)?>", html))   # e.g. <code class="language-py">
                assert opened == html.count(f"</{tag}>"), (slug, title, tag)


def test_readme_markdown_renders_tables_and_fenced_code():
    from icml24.core.report.markdown import render

    html = str(render("| a | b |\n|---|--:|\n| 1 | **2** |\n\n```\nx = 1 < 2 and `y`\n```"))
    assert "<table>" in html and "<th>a</th>" in html and "<td>1</td>" in html and "<strong>2</strong>" in html
    assert "<pre><code>x = 1 &lt; 2 and `y`\n</code></pre>" in html


def test_readme_markdown_escapes_raw_html():
    from icml24.core.report.markdown import render

    html = str(render("Before <script>alert(1)</script> after <img src=x onerror=alert(1)>."))
    assert "<p>Before &lt;script&gt;alert(1)&lt;/script&gt; after &lt;img src=x onerror=alert(1)&gt;.</p>" in html
    assert "<script" not in html and "<img" not in html


def test_readme_markdown_links_refuse_script_schemes():
    from icml24.core.report.markdown import render

    for bad in ("[a](javascript:alert(1))", "[a](JavaScript:alert(1))", "[a](&#106;avascript:alert(1))",
                "<javascript:alert(1)>", "[a]\n\n[a]: javascript:alert(1)", "[a](vbscript:x)",
                "[a](file:///etc/passwd)", "[a](data:text/html,x)", "![a](javascript:alert(1))"):
        html = str(render(bad))
        assert "<a " not in html and "<img" not in html, (bad, html)
    assert '<a href="https://example.org/x">a</a>' in str(render("[a](https://example.org/x)"))


@pytest.mark.browser
def test_report_in_headless_chromium(site):
    if not Path(CHROMIUM).exists() or shutil.which("chromium") is None:
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site.parent))
    handler.log_message = lambda *a, **k: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    errors: list[str] = []
    try:
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=[
                "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run"])
            page = browser.new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"http://127.0.0.1:{server.server_port}/index.html")
            page.click("a.paper-link")
            page.wait_for_load_state("load")
            assert page.url.endswith("/papers/_template.html")
            widths = page.eval_on_selector_all("figure img", "imgs => imgs.map(i => i.complete ? i.naturalWidth : 0)")
            assert widths and all(w > 0 for w in widths), widths
            assert page.evaluate("window.__pwned === undefined")
            assert "pass" in page.inner_text("table.claims")
            browser.close()
    finally:
        server.shutdown()
    assert errors == [], errors


def test_the_real_report_never_scrolls_sideways_on_a_phone_or_a_laptop(tmp_path):
    if not Path(CHROMIUM).exists() or shutil.which("chromium") is None:
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    results = Path(__file__).resolve().parents[2] / "results"
    index = build_report(tmp_path / "report", results)
    pages = ["index.html", *sorted(f"papers/{p.name}" for p in (index.parent / "papers").glob("*.html"))]
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(index.parent))
    handler.log_message = lambda *a, **k: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    wide = []
    try:
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
            for width in (390, 1280):
                page = browser.new_page(viewport={"width": width, "height": 800})
                for name in pages:
                    page.goto(f"http://127.0.0.1:{server.server_port}/{name}")
                    scroll = page.evaluate("document.documentElement.scrollWidth")
                    if scroll > width:
                        wide.append(f"{name} at {width} px: {scroll} px wide")
                    # code wraps where it stands: a long command line needs no scroll bar of its own either
                    cut = page.eval_on_selector_all("pre, code", "els => els.filter(e => e.scrollWidth > "
                                                    "e.clientWidth + 1 && e.clientWidth > 0).map(e => e.outerHTML"
                                                    ".slice(0, 80))")
                    wide += [f"{name} at {width} px: code scrolls sideways: {c}" for c in cut]
                page.close()
            browser.close()
    finally:
        server.shutdown()
    assert wide == [], wide

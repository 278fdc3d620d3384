"""The ``icml24`` command: list | show | run | check | reproduce | report.

Every mistake a user can make ends in one line on stderr and exit code 2, raised before anything is
written. Heavy modules (numpy, torch, the papers) are imported inside the commands that need them,
so ``icml24 list`` stays fast.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from icml24.core.errors import UserError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Reference implementations of ICML 2024 papers with executable claim checks.")

PresetOpt = typer.Option("quick", "--preset", "-p", help="smoke | quick | full")
ExecOpt = typer.Option("serial", "--executor", "-e", help="serial | process | ray")
OutOpt = typer.Option(Path("runs"), "--out", help="run store root (runs/<slug>/<preset>/<config-hash>/)")
ResultsOpt = typer.Option(Path("results"), "--results", help="where published summaries live")


def _console():
    from rich.console import Console

    return Console()


def _verdict_style(v: str) -> str:
    return {"pass": "green", "fail": "bold red"}.get(v, "yellow")


@app.command("list")
def list_cmd(results: Path = ResultsOpt) -> None:
    """All papers: slug, title, number of claims and last QUICK verdicts."""
    import json

    from rich.table import Table

    from icml24.core.registry import get_paper, list_papers

    table = Table("#", "slug", "title", "claims", "last quick verdicts")
    for slug in list_papers():
        card = get_paper(slug).card
        summary = results / slug / "quick.json"
        verdicts, n_claims = "not run", "-"
        if summary.is_file():
            claims = json.loads(summary.read_text())["claims"]
            n_claims = str(len(claims))
            counts: dict[str, int] = {}
            for c in claims:
                counts[c["verdict"]] = counts.get(c["verdict"], 0) + 1
            verdicts = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
        table.add_row(str(card.number), slug, card.title, n_claims, verdicts)
    _console().print(table)


@app.command()
def show(slug: str) -> None:
    """A paper's card, its claims and its presets with every config field."""
    import dataclasses

    from rich.table import Table

    from icml24.core.config import field_docs
    from icml24.core.registry import PRESETS, get_paper

    paper = get_paper(slug)
    card = paper.card
    con = _console()
    con.print(f"[bold]{card.title}[/bold]\n{', '.join(card.authors)}")
    if card.url:
        con.print(f"paper: {card.url}")
    if card.official_code:
        con.print(f"official code: {card.official_code}")
    claims = Table("id", "kind", "claim", "where", *[f"band ({p})" for p in PRESETS], title="Claims")
    for c in paper.claims:
        claims.add_row(c.id, c.kind, c.statement, c.where,
                       *[c.bands[p].describe() if p in c.bands else "not checkable" for p in PRESETS])
    con.print(claims)
    docs = field_docs(paper.config_type)
    presets = Table("field", *PRESETS, "meaning", title="Presets")
    values = {p: dataclasses.asdict(paper.preset(p)) for p in PRESETS}
    for name, doc in docs.items():
        presets.add_row(name, *[str(values[p][name]) for p in PRESETS], doc)
    con.print(presets)


def _prepare(slug: str, preset: str, seeds: Optional[str], sets: List[str], device: Optional[str]):
    """Validate everything the user asked for; returns a RunRequest. Writes nothing."""
    import dataclasses

    from icml24.core.config import apply_overrides, parse_seeds
    from icml24.core.registry import get_paper
    from icml24.core.store import RunRequest

    paper = get_paper(slug)
    config = paper.preset(preset)
    overrides = list(sets)
    if device is not None:
        if "device" not in {f.name for f in dataclasses.fields(config)}:
            if device != "cpu":
                raise UserError(f"{slug} has no device setting; it runs on the CPU only")
        else:
            overrides.append(f"device={device}")
    config = apply_overrides(config, overrides)
    seed_list = parse_seeds(seeds) if seeds else paper.default_seeds(preset)
    return RunRequest(paper, preset, config, seed_list)


class _Progress:
    """A rich progress bar per run request (advanced per finished seed)."""

    def __init__(self, requests, enabled: bool = True):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.requests = requests
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), console=_console(), disable=not enabled)
        self.tasks: dict[int, int] = {}

    def __enter__(self):
        self.progress.__enter__()
        return self

    def __exit__(self, *exc):
        self.progress.__exit__(*exc)

    def __call__(self, kind, payload):
        if kind == "start":
            for i, (total, skipped) in payload.items():
                req = self.requests[i]
                label = f"{req.paper.slug} [{req.preset}]" + (f" (resumed {skipped})" if skipped else "")
                self.tasks[i] = self.progress.add_task(label, total=total, completed=skipped)
        elif kind == "done":
            i, out = payload
            self.progress.advance(self.tasks[i])
            if out.error:
                self.progress.console.print(f"[red]{out.unit.slug} seed {out.unit.seed} failed after "
                                            f"{out.attempts} attempts:[/red] {out.error.strip().splitlines()[-1]}")


def _claims_table(slug: str, claims: list[dict]):
    from rich.table import Table

    from icml24.core.publish import fmt

    table = Table("id", "kind", "measured", "95% CI", "pass band", "verdict", "detail", title=f"{slug}: claims")
    for c in claims:
        style = _verdict_style(c["verdict"])
        table.add_row(c["claim_id"], c["kind"], fmt(c["value"]), f"[{fmt(c['low'])}, {fmt(c['high'])}]",
                      c["band"], f"[{style}]{c['verdict']}[/{style}]", c["detail"])
    table.columns[-1].overflow = "fold"
    return table


def _run_requests(requests, out: Path, results: Path, executor: str, workers, address, device, publish_ok):
    from icml24.core.publish import publish
    from icml24.core.store import execute_runs

    with _Progress(requests, enabled=sys.stderr.isatty() or sys.stdout.isatty()) as bar:
        outcomes = execute_runs(requests, root=out, executor=executor, workers=workers, address=address,
                                device=device or "cpu", on_event=bar)
    con = _console()
    for o in outcomes:
        if o.skipped:
            con.print(f"{o.request.paper.slug}: resumed, {o.skipped} of {len(o.request.seeds)} seeds already done")
        if o.result is None:
            con.print(f"[red]{o.request.paper.slug}: every seed failed; nothing to check[/red]")
            continue
        con.print(_claims_table(o.request.paper.slug, o.result.claims))
        con.print(f"run directory: {o.run_dir}")
        if publish_ok and not o.failed:
            path = publish(o.result, o.run_dir, results, o.request.paper.readme)
            con.print(f"published: {path}")
    return outcomes


@app.command()
def run(
    slug: str,
    preset: str = PresetOpt,
    seeds: Optional[str] = typer.Option(None, "--seeds", "-s", help="e.g. 0-4 or 0,3,7 (default: the preset's)"),
    sets: List[str] = typer.Option([], "--set", help="override a config field: key=value (repeatable)"),
    executor: str = ExecOpt,
    workers: Optional[int] = typer.Option(None, "--workers", help="parallel workers (process/ray)"),
    address: Optional[str] = typer.Option(None, "--address", help="Ray cluster address"),
    device: Optional[str] = typer.Option(None, "--device", help="cpu | cuda (papers with a device field)"),
    out: Path = OutOpt,
    results: Path = ResultsOpt,
) -> None:
    """Run one paper at a preset; resumes finished seeds; prints the claims.

    With the preset's own config and seeds the run is also published to results/<slug>/<preset>.json
    (and, for quick, the README's results block); runs with --set or --seeds are kept in runs/ only.
    """
    from icml24.core.executors import EXECUTORS

    if executor not in EXECUTORS:
        raise UserError(f"unknown executor {executor!r}; use one of {', '.join(EXECUTORS)}")
    req = _prepare(slug, preset, seeds, sets, device)
    publish_ok = not sets and seeds is None
    outcomes = _run_requests([req], out, results, executor, workers, address, device, publish_ok)
    if outcomes[0].failed:
        raise typer.Exit(1)


@app.command()
def check(
    slug: str,
    from_: Optional[Path] = typer.Option(None, "--from", help="run directory (default: results/<slug>/quick.json)"),
    results: Path = ResultsOpt,
) -> None:
    """Re-check a paper's claims on stored results; exit 1 if any claim fails."""
    from icml24.core.registry import get_paper
    from icml24.core.store import load_run

    paper = get_paper(slug)
    source = from_ if from_ is not None else results / slug / "quick.json"
    if from_ is None and not source.is_file():
        raise UserError(f"no published results at {source}; run `icml24 run {slug}` first or pass --from")
    result = load_run(source)
    if result.slug != slug:
        raise UserError(f"{source} holds results of {result.slug!r}, not {slug!r}")
    claims = [c.to_dict() for c in paper.check(result, result.preset)]
    _console().print(_claims_table(slug, claims))
    if any(c["verdict"] == "fail" for c in claims):
        raise typer.Exit(1)


@app.command()
def reproduce(
    preset: str = PresetOpt,
    executor: str = ExecOpt,
    workers: Optional[int] = typer.Option(None, "--workers", help="parallel workers (process/ray)"),
    address: Optional[str] = typer.Option(None, "--address", help="Ray cluster address"),
    only: Optional[str] = typer.Option(None, "--only", help="comma-separated slugs (default: every paper)"),
    seeds: Optional[str] = typer.Option(None, "--seeds", "-s", help="seeds for every paper (default: each preset's)"),
    out: Path = OutOpt,
    results: Path = ResultsOpt,
    report_dir: Path = typer.Option(Path("report"), "--report", help="where the HTML report goes"),
) -> None:
    """Every paper at a preset, then the report. Resumes: finished seeds are not run again."""
    from icml24.core.executors import EXECUTORS
    from icml24.core.registry import list_papers
    from icml24.core.publish import update_top_readme
    from icml24.core.report import build_report

    if executor not in EXECUTORS:
        raise UserError(f"unknown executor {executor!r}; use one of {', '.join(EXECUTORS)}")
    slugs = [s.strip() for s in only.split(",")] if only else list_papers()
    requests = [_prepare(s, preset, seeds, [], None) for s in slugs]
    outcomes = _run_requests(requests, out, results, executor, workers, address, None, seeds is None)
    index = build_report(report_dir, results, slugs=slugs, preset=preset)
    if not only:
        update_top_readme(results, slugs)
    _console().print(f"report: {index}")
    if any(o.failed for o in outcomes):
        raise typer.Exit(1)


@app.command()
def report(
    out: Path = typer.Option(Path("report"), "--out", help="output folder"),
    results: Path = ResultsOpt,
    preset: str = PresetOpt,
) -> None:
    """Build the static HTML site from the published results."""
    from icml24.core.registry import PRESETS
    from icml24.core.report import build_report

    if preset not in PRESETS:
        raise UserError(f"unknown preset {preset!r}; use one of {', '.join(PRESETS)}")
    if results.exists() and not results.is_dir():
        raise UserError(f"--results {results} is not a folder")
    from icml24.core.publish import update_top_readme
    from icml24.core.registry import list_papers

    _console().print(f"report: {build_report(out, results, preset=preset)}")
    update_top_readme(results, list_papers())


def main(argv: Optional[list[str]] = None) -> None:
    """Entry point: one-line errors with exit code 2 for anything the user got wrong."""
    command = typer.main.get_command(app)
    try:
        rv = command.main(args=argv, prog_name="icml24", standalone_mode=False)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except Exception as exc:
        # click's usage errors (typer vendors click, so match by shape, not by class)
        if getattr(exc, "exit_code", None) == 2 and hasattr(exc, "format_message"):
            print(f"error: {exc.format_message()}", file=sys.stderr)
            sys.exit(2)
        if type(exc).__name__ == "NoArgsIsHelpError":
            print(exc.ctx.get_help())  # type: ignore[attr-defined]
            sys.exit(0)
        raise
    sys.exit(rv if isinstance(rv, int) else 0)


if __name__ == "__main__":
    main()

"""The ``icml24`` command: list | show | run | check | reproduce | report.

Every mistake a user can make ends in one line on stderr and exit code 2, raised before anything is
written. The parser is argparse (Typer pulled in ~0.5 s of imports); rich and the heavy modules
(numpy, torch, the papers) are imported inside the commands that need them, so ``icml24 list``
stays fast.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Callable, List, NoReturn, Optional

from icml24.core.checks import MAX_UNITS
from icml24.core.errors import UserError


def _console():
    from rich.console import Console

    return Console()


def _verdict_style(v: str) -> str:
    return {"pass": "green", "fail": "bold red"}.get(v, "yellow")


def list_cmd(results: Path) -> int:
    """All papers: slug, title, number of claims and last QUICK verdicts."""
    from rich.table import Table

    from icml24.core.checks import readable
    from icml24.core.publish import verdict_summary
    from icml24.core.registry import get_paper, list_papers

    slugs = list_papers()  # a bad ICML24_EXTRA_PAPERS entry is refused before anything is printed
    if readable(results, "--results") and not results.is_dir():
        raise UserError(f"--results {results} is a file, not a folder")
    if not results.is_dir():
        print(f"note: no {results}/ folder here, so no paper shows verdicts: run icml24 from the checkout's root "
              "or pass --results PATH", file=sys.stderr)
    table = Table("#", "slug", "title", "last quick verdicts")
    for slug in slugs:
        card = get_paper(slug).card
        table.add_row(str(card.number), slug, card.title, verdict_summary(results / slug / "quick.json"))
    _console().print(table)
    return 0


def _say(con, text: str, head: int = 0, indent: int = 0, hang: int = 2, style: str = "bold") -> None:
    """Print ``text`` wrapped at the console's width (80 in a pipe), its continuation lines ``hang`` columns
    deeper than its first, the first ``head`` characters in ``style``. Words are never cut, only wrapped
    (a word longer than a line is broken), so nothing is lost at 80 columns."""
    import textwrap

    from rich.text import Text

    lines = textwrap.wrap(text, width=max(con.width, 40), initial_indent=" " * indent,
                          subsequent_indent=" " * (indent + hang), break_on_hyphens=False) or [""]
    out = Text("\n".join(lines))
    out.stylize(style, indent, min(indent + head, len(lines[0])))
    con.print(out, soft_wrap=True, highlight=False)


def show(slug: str) -> int:
    """A paper's card, its claims and its presets with every config field, its valid values and meaning.

    Written as wrapped text blocks, not wide tables, so that nothing is cut at 80 columns or in a pipe.
    """
    import dataclasses

    from icml24.core.config import field_docs, valid_values
    from icml24.core.registry import PRESETS, get_paper

    paper = get_paper(slug)
    card = paper.card
    con = _console()
    _say(con, card.title, head=len(card.title))
    _say(con, ", ".join(card.authors))
    if card.url:
        _say(con, f"paper: {card.url}")
    if card.official_code:
        _say(con, f"official code: {card.official_code}")
    con.print()
    _say(con, "Claims", head=6)
    for c in paper.claims:
        con.print()
        _say(con, f"{c.id} ({c.kind}) {c.statement}", head=len(c.id))
        _say(con, f"where: {c.where}", indent=2)
        bands = "; ".join(f"{p}: {c.bands[p].describe() if p in c.bands else 'not checkable'}" for p in PRESETS)
        _say(con, f"pass band: {bands}", indent=2)
        if c.effect:
            _say(con, f"paper's effect: {c.effect.describe()} ({c.effect.source})", indent=2)
    docs, valid = field_docs(paper.config_type), valid_values(paper.config_type)
    values = {p: dataclasses.asdict(paper.preset(p)) for p in PRESETS}
    con.print()
    _say(con, f"Knobs (value at {' / '.join(PRESETS)}; valid values; set with --set key=value)", head=5)
    for name, doc in docs.items():
        shown = [str(values[p][name]) for p in PRESETS]
        at = shown[0] if len(set(shown)) == 1 else " / ".join(shown)
        con.print()
        _say(con, f"{name} = {at}", head=len(name))
        if valid[name]:
            _say(con, f"valid: {valid[name]}", indent=2)
        if doc:
            _say(con, doc, indent=2, style="")
    return 0


def _prepare(slug: str, preset: str, seeds: Optional[str], sets: List[str], device: Optional[str],
             max_units: int = MAX_UNITS):
    """Validate everything the user asked for; returns a RunRequest. Writes nothing."""
    import dataclasses

    from icml24.core import checks
    from icml24.core.config import apply_overrides, check_knobs, check_paths, knob_of_path, parse_seeds
    from icml24.core.context import check_device
    from icml24.core.errors import from_os_error
    from icml24.core.registry import get_paper
    from icml24.core.store import RunRequest

    checks.no_duplicate_keys(sets)
    paper = get_paper(slug)
    paper.require()  # the paper's extra and data wheels, before its experiment module is imported
    config = paper.preset(preset)
    overrides = list(sets)
    if device is not None and device.startswith("cpu:") and device[4:].isdigit():
        device = "cpu"  # torch's cpu:N is the one CPU device
    if device is not None:
        if "device" not in {f.name for f in dataclasses.fields(config)}:
            if device != "cpu":
                raise UserError(f"{slug} has no device setting; it runs on the CPU only")
        else:
            overrides.append(f"device={device}")
    config = apply_overrides(config, overrides)
    check_knobs(config)
    check_paths(config)
    if "device" in {f.name for f in dataclasses.fields(config)}:
        check_device(config.device)
    validate = getattr(paper.configs, "validate", None)  # optional contract hook: raises UserError
    if validate is not None:
        try:
            validate(config)
        except OSError as exc:  # a data file it reads that cannot be (a folder without permission, a missing file)
            raise from_os_error(exc, knob_of_path(dataclasses.asdict(config), exc)) from None
    if seeds is not None and not seeds.strip():
        raise UserError("--seeds is empty; give e.g. 0-4 or 0,3,7, or leave it out for the preset's seeds")
    seed_list = checks.seed_values(parse_seeds(seeds, max_units) if seeds is not None else paper.default_seeds(preset))
    return RunRequest(paper, preset, config, seed_list)


def _check_run_options(executor: str, workers, address, max_units: int, requests, dirs: dict[str, Path]) -> None:
    """Executor options, the unit count and every output folder, before anything runs (writes nothing)."""
    from icml24.core import checks

    checks.executor_options(executor, workers, address)
    checks.unit_count(sum(len(r.seeds) for r in requests), max_units)
    for flag, path in dirs.items():
        checks.writable_dir(path, flag)


def _is_preset(req) -> bool:
    """The request is a published preset's own config and seeds (only then is it published): QUICK or FULL;
    SMOKE is the tests' size and stays in the run store."""
    from icml24.core.config import config_hash

    return (req.preset != "smoke" and req.hash == config_hash(req.paper.preset(req.preset))
            and req.seeds == req.paper.default_seeds(req.preset))


class _Progress:
    """Progress on stderr, whether it is a terminal or not: a rich bar per run request there, advanced per
    finished seed; a plain line per finished seed, per long stage or artefact build of a unit (see
    ``core.executors.note``) and before each run's claims and figures, above the bars in a terminal, alone in
    a pipe or a log, where a line every ``HEARTBEAT_S`` also says what is still running."""

    def __init__(self, requests, enabled: bool = True):
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.requests = requests
        self.enabled = enabled
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), console=Console(stderr=True), disable=not enabled)
        self.tasks: dict[int, int] = {}
        self.counts: dict[int, list[int]] = {}

    HEARTBEAT_S = 30.0
    """Without a terminal, a line this often (the first after 10 s; ``ICML24_HEARTBEAT_S`` overrides) says what
    is still running."""

    def __enter__(self):
        import threading

        self.progress.__enter__()
        self.started = time.perf_counter()
        self.stop = threading.Event()
        if not self.enabled:
            threading.Thread(target=self._heartbeat, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.progress.__exit__(*exc)

    def _heartbeat(self) -> None:
        import os

        every = float(os.environ.get("ICML24_HEARTBEAT_S", self.HEARTBEAT_S))
        wait = min(10.0, every)  # the first line after 10 s at most, then one every `every` seconds
        while not self.stop.wait(wait):
            wait = every
            busy = [f"{self.requests[i].paper.slug} [{self.requests[i].preset}] {done}/{total} seeds"
                    for i, (done, total) in self.counts.items() if done < total]
            if busy:
                mins, secs = divmod(int(time.perf_counter() - self.started), 60)
                self.line(f"running {mins}:{secs:02d}: {', '.join(busy)} done")

    def line(self, text: str, style: str = "") -> None:
        """One line on stderr: above the bars in a terminal, plain (no colour codes) in a pipe."""
        if self.enabled:
            from rich.text import Text

            self.progress.console.print(Text(text, style=style), soft_wrap=True, highlight=False)
        else:
            print(text, file=sys.stderr, flush=True)

    def __call__(self, kind, payload):
        if kind == "start":
            for i, (total, skipped) in payload.items():
                req = self.requests[i]
                label = f"{req.paper.slug} [{req.preset}]" + (f" (resumed {skipped})" if skipped else "")
                self.tasks[i] = self.progress.add_task(label, total=total, completed=skipped)
                self.counts[i] = [skipped, total]
        elif kind == "note":
            self.line(payload, style="dim")
        elif kind == "finalize":
            req = self.requests[payload]
            self.line(f"{req.paper.slug} [{req.preset}]: checking the claims (power: resampled runs) and drawing "
                      "the figures")
        elif kind == "done":
            i, out = payload
            self.progress.advance(self.tasks[i])
            self.counts[i][0] += 1
            done, total = self.counts[i]
            if out.error:
                from icml24.core.executors import error_line, looks_diverged

                tries = ("1 attempt (not retried: it fails the same way every time)" if out.attempts == 1
                         else f"{out.attempts} attempts")
                what = "diverged (its numbers became NaN or infinite)" if looks_diverged(out.error) else "failed"
                self.line(f"[{done}/{total}] {out.unit.slug} [{out.unit.preset}] seed {out.unit.seed} {what} after {tries}: "
                          f"{error_line(out.error)}", style="red")
            else:
                secs = out.result.get("wall_time", 0.0)
                self.line(f"[{done}/{total}] {out.unit.slug} [{out.unit.preset}] seed {out.unit.seed} done "
                          f"in {secs:.1f} s")


WIDE = 120
"""Consoles at least this wide get tables; narrower ones (80 columns, a pipe) get wrapped text blocks."""


def _print_claims(con, slug: str, claims: list[dict]) -> None:
    """The claims with their numbers and verdicts: a table on a wide console, wrapped blocks otherwise."""
    from icml24.core.claims import verdict_label
    from icml24.core.publish import fmt, fmt_power

    if con.width >= WIDE:
        from rich.table import Table

        table = Table("id", "kind", "measured", "95% CI", "pass band", "paper's effect", "power", "verdict", "detail",
                      title=f"{slug}: claims")
        for c in claims:
            style = _verdict_style(c["verdict"])
            table.add_row(c["claim_id"], c["kind"], fmt(c["value"]), f"[{fmt(c['low'])}, {fmt(c['high'])}]",
                          c["band"], fmt(c.get("effect")), fmt_power(c.get("power")),
                          f"[{style}]{verdict_label(c)}[/{style}]", c["detail"])
        table.columns[-1].overflow = "fold"
        table.columns[-2].min_width = 12  # the verdict (and an inconclusive claim's power) is never cut short
        table.columns[-2].overflow = "fold"
        con.print(table)
        return
    _say(con, f"{slug}: claims", head=len(slug) + 8)
    for c in claims:
        head = f"{c['claim_id']} ({c['kind']}) {verdict_label(c)}"
        _say(con, head, head=len(head), style=_verdict_style(c["verdict"]))
        _say(con, f"measured {fmt(c['value'])}, 95% CI [{fmt(c['low'])}, {fmt(c['high'])}]; pass band {c['band']}; "
                  f"paper's effect {fmt(c.get('effect'))}; power {fmt_power(c.get('power'))}", indent=2)
        if c["detail"]:
            _say(con, c["detail"], indent=2)


def _size(folder: Path) -> int:
    """Bytes of the files under ``folder`` (0 when it does not exist)."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else 0


def _published_seed_seconds(results: Path, slug: str, preset: str):
    """Estimated seed times of ``slug`` at ``preset``, for the executor's order (``core.store.schedule``), from the
    paper's published run there: the longest of its seeds for the first seed (which builds the artefacts, where
    the published run built them) and the median for the others; infinity where there is none (a paper never
    published goes first: its length is unknown)."""
    import statistics

    from icml24.core.store import SeedSeconds

    times = list(_published_times(results, slug, preset).values())
    return SeedSeconds(max(times), statistics.median(times)) if times else SeedSeconds(math.inf, math.inf)


def _published_times(results: Path, slug: str, preset: str) -> dict[int, float]:
    """Seed -> wall time of the seeds of ``slug``'s published run at ``preset``; empty where there is none or its
    summary is unreadable (that costs only the order and the speed line, never the run)."""
    from icml24.core.results import read_json

    path = results / slug / f"{preset}.json"
    try:
        return {int(s["seed"]): float(s["wall_time"]) for s in read_json(path)["seeds"]} if path.is_file() else {}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def _run_requests(requests, out: Path, results: Path, executor: str, workers, address, device, publish_ok,
                  redo_corrupt: bool = False):
    """Run the requests on one executor. Where ``publish_ok``, each run of a preset's own config and seeds, of
    committed code, is published as soon as its last seed is in (a line on stderr says so); every run's claims
    are printed once all are done (not under the live progress bars)."""
    from icml24.core.store import cache_dir, execute_runs

    caches = {cache_dir(out, r.paper.slug) for r in requests}
    before = {c: _size(c) for c in caches}
    published: dict[Path, Path | None] = {}
    with _Progress(requests, enabled=sys.stderr.isatty()) as bar:
        def on_event(kind, payload):
            bar(kind, payload)
            if kind == "finalized" and publish_ok:
                path = published[payload.run_dir] = _publish_outcome(payload, results)
                if path is not None:
                    bar.line(f"{payload.request.paper.slug}: published {path}")

        outcomes = execute_runs(requests, root=out, executor=executor, workers=workers, address=address,
                                device=device or "cpu", on_event=on_event, redo_corrupt=redo_corrupt,
                                seed_seconds=lambda r: _published_seed_seconds(results, r.paper.slug, r.preset))
    con = _console()
    for c in sorted(caches):
        size = _size(c)  # one walk of the cache folder
        if size > before[c]:
            con.print(f"cache: {c} now holds {size / 2**20:.1f} MB (artefacts reused by later runs; "
                      "delete the folder to free it)")
    for o in outcomes:
        _report_outcome(con, o, published.get(o.run_dir), publish_ok)
    return outcomes


def _publishable(o) -> bool:
    """A run of its preset's own config and seeds (never SMOKE, --set or --seeds) with no failed seed."""
    return o.result is not None and _is_preset(o.request) and not o.failed


def _dirty(o) -> bool:
    """Whether the run's code had uncommitted changes (then it is not published)."""
    return str(o.result.provenance.get("git_sha") or "").endswith("-dirty")


def _publish_outcome(o, results: Path) -> Path | None:
    """Publish a finished run to ``results`` (and, for QUICK, its README) where it may be; its path, else None."""
    from icml24.core.publish import publish

    if not _publishable(o) or _dirty(o):
        return None
    return publish(o.result, o.run_dir, results, o.request.paper.readme)


def _report_outcome(con, o, published: Path | None, publish_ok: bool) -> None:
    """One finished run on stdout: its divergences, figure errors, resumed and failed seeds, claims, run
    directory and where it was published (or why not)."""
    if o.result is not None and o.result.diverged:
        seeds = ", ".join(f"seed {k} ({', '.join(v[:3])}{', ...' if len(v) > 3 else ''})"
                          for k, v in o.result.diverged.items())
        con.print(f"[yellow]{o.request.paper.slug}: diverged (NaN or inf): {seeds}; claims reading them are "
                  "not checkable[/yellow]")
    if (o.run_dir / "errors" / "figures.txt").is_file():
        con.print(f"[yellow]{o.request.paper.slug}: the figures could not be drawn; traceback in "
                  f"{o.run_dir / 'errors' / 'figures.txt'}[/yellow]")
    if o.skipped:
        con.print(f"{o.request.paper.slug}: resumed, {o.skipped} of {len(o.request.seeds)} seeds already done")
    if o.failed:
        con.print(f"{o.request.paper.slug}: full tracebacks of the failed seeds in {o.run_dir / 'errors'}")
    if o.result is None:
        con.print(f"[red]{o.request.paper.slug}: every seed failed; nothing to check[/red]")
        return
    _print_claims(con, o.request.paper.slug, o.result.claims)
    con.print(f"run directory: {o.run_dir}")
    if published is not None:
        con.print(f"published: {published}")
    elif publish_ok and _publishable(o) and _dirty(o):
        diff = o.result.provenance.get("git_diff_sha")
        con.print(f"[yellow]{o.request.paper.slug}: not published: its code has uncommitted changes"
                  f"{f' (diff {diff}, in provenance.json)' if diff else ''}; commit them and run the same "
                  "command again (finished seeds are reused)[/yellow]")


def run(slug: str, preset: str, seeds: Optional[str], sets: List[str], executor: str,
        workers: Optional[int], address: Optional[str], device: Optional[str], out: Path, results: Path,
        max_units: int, redo_corrupt: bool) -> int:
    """Run one paper at a preset; resumes finished seeds; prints the claims.

    With the preset's own config and seeds the run is also published to results/<slug>/<preset>.json
    (and, for quick, the README's results block); runs with --set or --seeds are kept in runs/ only.
    """
    from icml24.core.executors import check_executor

    check_executor(executor)
    req = _prepare(slug, preset, seeds, sets, device, max_units)
    publish_ok = _is_preset(req)
    _check_run_options(executor, workers, address, max_units, [req],
                       {"--out": out, **({"--results": results} if publish_ok else {})})
    _warn_full_on_cpu([req], results)
    outcomes = _run_requests([req], out, results, executor, workers, address, device, publish_ok, redo_corrupt)
    return 1 if outcomes[0].failed else 0


def _warn_full_on_cpu(requests, results: Path) -> None:
    """FULL is the paper's scale: say so before it starts on a CPU (run, reproduce, heldout), with the seed count
    and what a QUICK seed took where it was published. A warning only: FULL on a CPU is allowed."""
    for req in requests:
        if req.preset != "full" or getattr(req.config, "device", "cpu") != "cpu":
            continue
        quick = _published_seed_seconds(results, req.paper.slug, "quick").other
        per_seed = (f"; a QUICK seed took {quick:.0f} s where it was published, a FULL one is larger"
                    if math.isfinite(quick) else "")
        print(f"{req.paper.slug} [full]: the paper's scale on the CPU, {len(req.seeds)} seeds; this can take hours"
              f"{per_seed}. Finished seeds are kept: Ctrl-C stops, the same command resumes.", file=sys.stderr,
              flush=True)


def check(slug: str, from_: Optional[Path], results: Path, republish: bool) -> int:
    """Re-check a paper's claims on stored results; exit 1 if any claim fails (an inconclusive claim,
    whose run could not have seen the paper's effect, does not). ``--republish`` writes the re-checked
    claims back into every published preset of the paper (the per-seed numbers are untouched) and, for
    quick, its README block."""
    from icml24.core.checks import readable, show
    from icml24.core.publish import update_readme
    from icml24.core.registry import PRESETS, get_paper
    from icml24.core.results import read_json, write_json
    from icml24.core.store import judge, load_run

    paper = get_paper(slug)
    if republish and from_ is not None:
        raise UserError("--republish rewrites results/<slug>/<preset>.json; it takes no --from")
    source = from_ if from_ is not None else results / slug / "quick.json"
    if from_ is not None and not readable(from_, "--from"):
        raise UserError(f"--from {show(from_)}: cannot read run results: no such run folder or result file")
    if from_ is None and not (readable(source, "--results") and source.is_file()):
        here = readable(results, "--results") and results.is_dir()
        where = "" if here else (f" (no {results}/ folder here: run icml24 from the checkout's root "
                                 "or pass --results PATH)")
        raise UserError(f"no published results at {source}{where}; run `icml24 run {slug}` first or pass --from")
    result = load_run(source)
    if result.slug != slug:
        raise UserError(f"{source} holds results of {result.slug!r}, not {slug!r}")
    if result.preset not in PRESETS:
        raise UserError(f"{source} names preset {result.preset!r}; known presets: {', '.join(PRESETS)}")
    if source.is_dir():  # a run folder: every file the result was built from must still read back
        for part in sorted([source / "config.json", *source.glob("seeds/*.json")]):
            try:
                read_json(part)
            except (OSError, ValueError) as exc:
                raise UserError(f"corrupt run file {part} ({type(exc).__name__}); rerun the run to mend it") from None
    claims = [c.to_dict() for c in judge(paper, result, result.preset)]
    _print_claims(_console(), slug, claims)
    if republish:
        for preset in PRESETS:
            path = results / slug / f"{preset}.json"
            if not path.is_file():
                continue
            summary = read_json(path)
            summary["claims"] = [c.to_dict() for c in judge(paper, load_run(path), preset)]
            write_json(path, summary)
            if preset == "quick" and paper.readme.is_file():
                update_readme(paper.readme, summary)
            _console().print(f"republished: {path}")
    return 1 if any(c["verdict"] == "fail" for c in claims) else 0


def _slugs(only: Optional[str]) -> list[str]:
    """The papers an ``--only`` names (comma-separated, each once, in its order), or every paper without it."""
    from icml24.core.registry import list_papers

    return list(dict.fromkeys(s.strip() for s in only.split(",") if s.strip())) if only else list_papers()


def reproduce(preset: str, executor: str, workers: Optional[int], address: Optional[str], only: Optional[str],
              seeds: Optional[str], out: Path, results: Path, report_dir: Path, max_units: int,
              redo_corrupt: bool) -> int:
    """Every paper at a preset, then the report. Resumes: finished seeds are not run again."""
    from icml24.core.executors import check_executor
    from icml24.core.publish import update_top_readme
    from icml24.core.report import build_report

    check_executor(executor)
    if only is not None and not [s for s in only.split(",") if s.strip()]:
        raise UserError("--only is empty; give comma-separated slugs (icml24 list shows them)")
    slugs = _slugs(only)
    requests = [_prepare(s, preset, seeds, [], None, max_units) for s in slugs]
    _check_run_options(executor, workers, address, max_units, requests,
                       {"--out": out, "--results": results, "--report": report_dir})
    _warn_full_on_cpu(requests, results)
    published = {s: _published_times(results, s, preset) for s in slugs}   # read before this run publishes
    start = time.perf_counter()
    outcomes = _run_requests(requests, out, results, executor, workers, address, None, True, redo_corrupt)
    index = build_report(report_dir, results, slugs=slugs, preset=preset)
    if not only:
        update_top_readme(results, slugs)
    _console().print(f"report: {index}")
    _print_times(_console(), outcomes, published)
    _console().print(f"reproduce: {len(slugs)} paper(s) at {preset} in {time.perf_counter() - start:.0f} s wall time "
                     f"({executor} executor)")
    return 1 if any(o.failed for o in outcomes) else 0


def speed_ratios(seeds, published: dict[int, float]) -> list[float]:
    """This run's wall time over the published one, for every seed of ``seeds`` (``SeedResult``) that the published
    run (seed -> wall time, :func:`_published_times`) has too.

    >>> from icml24.core.results import SeedResult
    >>> speed_ratios([SeedResult(0, {}, {}, wall_time=3.0), SeedResult(5, {}, {}, wall_time=1.0)], {0: 2.0})
    [1.5]
    """
    return [s.wall_time / published[s.seed] for s in seeds if published.get(s.seed, 0.0) > 0]


def _print_times(con, outcomes, published: dict[str, dict[int, float]]) -> None:
    """Per paper, slowest first: its seeds' summed wall time (the resumed ones as recorded when they ran), when into
    the call it was finalized (``provenance["elapsed_s"]``) and the median of its seeds' :func:`speed_ratios`
    against ``published`` (slug -> seed -> wall time, read before the call); then that median over every seed: the
    machine's speed against the publications', without which two calls' wall times do not compare (the same
    seeds have run at 0.5-2.5x their published times on one machine over a day)."""
    import statistics

    rows = sorted(((sum(s.wall_time for s in o.result.seeds), o) for o in outcomes if o.result is not None),
                  key=lambda r: -r[0])
    every: list[float] = []
    for secs, o in rows:
        done = int(o.result.provenance.get("elapsed_s") or 0)
        ratios = speed_ratios(o.result.seeds, published.get(o.request.paper.slug, {}))
        every += ratios
        con.print(f"time: {o.request.paper.slug} [{o.request.preset}] {len(o.result.seeds)} seeds, {secs:.0f} s of "
                  f"seed time, finished {done // 60}:{done % 60:02d} into the run"
                  + (f", {statistics.median(ratios):.2f}x the published seed times" if ratios else "")
                  + (f" ({o.skipped} resumed)" if o.skipped else ""), markup=False, highlight=False, soft_wrap=True)
    if every:
        con.print(f"speed: the seeds took a median {statistics.median(every):.2f}x ({min(every):.2f}-{max(every):.2f}) "
                  f"their published wall times ({len(every)} seeds); wall times of two calls compare only at equal speed",
                  markup=False, highlight=False, soft_wrap=True)


def heldout(preset: str, executor: str, workers: Optional[int], address: Optional[str], only: Optional[str],
            seeds: Optional[str], offset: int, out: Path, results: Path, max_units: int, redo_corrupt: bool) -> int:
    """Rerun papers at a preset on held-out seeds (the preset's seeds + offset, as many) and print their
    verdicts beside the published ones; exit 1 if any verdict differs. Nothing is published."""
    from rich.table import Table

    from icml24.core import checks
    from icml24.core.claims import verdict_label
    from icml24.core.publish import fmt, fmt_power
    from icml24.core.results import read_json

    if seeds is not None:
        raise UserError("heldout chooses its seeds (the preset's + --offset); use --offset, not --seeds")
    if offset < 1:
        raise UserError(f"--offset {offset}: must be at least 1 (0 would rerun the published seeds)")
    from icml24.core.registry import PRESETS, get_paper

    if preset not in PRESETS:
        raise UserError(f"unknown preset {preset!r}; use one of {', '.join(PRESETS)}")
    slugs = _slugs(only)
    for slug in slugs:
        get_paper(slug)  # an unknown name is named as such, before any missing result
    requests = []
    for slug in slugs:
        published = results / slug / f"{preset}.json"
        if not (checks.readable(published, "--results") and published.is_file()):
            raise UserError(f"no published results at {published} to compare with")
        req = _prepare(slug, preset, None, [], None)
        req.seeds = checks.seed_values(tuple(s + offset for s in req.seeds))
        requests.append((req, read_json(published)))
    _check_run_options(executor, workers, address, max_units, [r for r, _ in requests], {"--out": out})
    _warn_full_on_cpu([r for r, _ in requests], results)
    outcomes = _run_requests([r for r, _ in requests], out, results, executor, workers, address, None, False,
                             redo_corrupt)
    rows = []
    for o, (_, published) in zip(outcomes, requests):
        fresh = {c["claim_id"]: c for c in (o.result.claims if o.result else [])}
        for c in published["claims"]:
            f = fresh.get(c["claim_id"], {"verdict": "missing", "value": None, "low": None, "high": None})
            rows.append((o.request.paper.slug, c["claim_id"], verdict_label(c), verdict_label(f),
                         f["verdict"] == c["verdict"], f"{fmt(f['value'])} [{fmt(f['low'])}, {fmt(f['high'])}]",
                         f"{fmt_power(c.get('power'))} / {fmt_power(f.get('power'))}"))
    flips = sum(not row[4] for row in rows)
    con = _console()
    title = f"{preset}: published seeds vs seeds + {offset}"
    if con.width >= WIDE:
        table = Table("paper", "claim", "published", "held-out seeds", "agree", "held-out value [95% CI]",
                      "power (published / held-out)", title=title)
        for slug, cid, was, now, same, value, power in rows:
            table.add_row(slug, cid, was, now, "yes" if same else "[red]NO[/red]", value, power)
        con.print(table)
    else:
        _say(con, title, head=len(title))
        for slug, cid, was, now, same, value, power in rows:
            head = f"{slug} {cid}: {'agree' if same else 'DIFFER'}"
            _say(con, f"{head}; published {was}, held-out {now}; held-out value {value}; power (published / "
                      f"held-out) {power}", head=len(head), style="" if same else "bold red")
    con.print(f"{flips} verdict(s) differ from the published ones")
    return 1 if flips or any(o.failed for o in outcomes) else 0


def compare(other: Path, only: Optional[str], preset: str, results: Path) -> int:
    """Put the published results beside those in another results folder (say, ``icml24 reproduce --results
    OTHER`` on another machine): per paper the verdicts side by side and how many per-seed numbers differ beyond
    ``core.compare.SEED_RTOL``; exit 1 if any verdict differs. Papers published in only one folder are named."""
    from icml24.core import checks
    from icml24.core.compare import SEED_RTOL, compare_published
    from icml24.core.registry import PRESETS, get_paper
    from icml24.core.results import read_json

    if preset not in PRESETS:
        raise UserError(f"unknown preset {preset!r}; use one of {', '.join(PRESETS)}")
    for folder, flag in ((results, "--results"), (other, "OTHER")):
        if not (checks.readable(folder, flag) and folder.is_dir()):
            raise UserError(f"{flag} {checks.show(folder)}: no such results folder")
    slugs = _slugs(only)
    for slug in slugs:
        get_paper(slug)  # an unknown name is named as such, before any comparison
    con, differ = _console(), 0
    for slug in slugs:
        here, there = results / slug / f"{preset}.json", other / slug / f"{preset}.json"
        if not (here.is_file() and there.is_file()):
            con.print(f"{slug}: only in {here if here.is_file() else there}" if here.is_file() or there.is_file()
                      else f"{slug}: in neither folder")
            continue
        c = compare_published(read_json(here), read_json(there))
        same = sum(a == b for _, a, b in c.verdicts)
        worst = max(c.differences, default=None,     # a number on one side only (NaN on the other) comes first
                    key=lambda d: abs(d.fresh - d.stored) if not math.isnan(d.fresh - d.stored) else math.inf)
        head = f"{slug}: {same} of {len(c.verdicts)} verdicts agree"
        tail = (f"; {len(c.differences)} of {c.compared} per-seed numbers differ beyond {SEED_RTOL:g}"
                + (f" (the largest in absolute terms: seed {worst.seed} {worst.name}, {worst.stored:.4g} here, "
                   f"{worst.fresh:.4g} there)" if worst else "")
                + f"; {c.machines[0]} / {c.machines[1]}")
        _say(con, head + tail, head=len(head), style="bold" if c.agree else "bold red")
        for cid, a, b in c.verdicts:
            if a != b:
                _say(con, f"{cid}: {a} here, {b} in {other}", indent=2, style="")
        differ += not c.agree
    con.print(f"{differ} paper(s) with a verdict that differs")
    return 1 if differ else 0


def report(out: Path, results: Path, preset: str) -> int:
    """Build the static HTML site from the published results."""
    from icml24.core.registry import PRESETS
    from icml24.core.report import build_report

    if preset not in PRESETS:
        raise UserError(f"unknown preset {preset!r}; use one of {', '.join(PRESETS)}")
    from icml24.core.checks import readable

    if not (readable(results, "--results") and results.is_dir()):
        raise UserError(f"--results {results}: " + ("not a folder" if results.exists() else
                        "no such folder (run icml24 from the checkout's root or pass --results PATH)"))
    from icml24.core.checks import writable_dir
    from icml24.core.publish import update_top_readme
    from icml24.core.registry import list_papers

    writable_dir(out, "--out")
    slugs = list_papers()
    # what the site will write, checked first: a file where a folder goes (or the reverse) stops nothing midway
    for folder in (out / "papers", out / "figures", *(out / "figures" / s for s in slugs)):
        if folder.exists() and not folder.is_dir():
            raise UserError(f"--out {out}: {folder} is a file, where the report writes a folder")
    for file in (out / "index.html", out / "style.css", *(out / "papers" / f"{s}.html" for s in slugs)):
        if file.is_dir():
            raise UserError(f"--out {out}: {file} is a folder, where the report writes a file")

    _console().print(f"report: {build_report(out, results, preset=preset)}")
    update_top_readme(results, list_papers())
    return 0



def _path(text: str) -> Path:
    """A path argument; '' is refused (``Path('')`` would silently mean the current folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path; give a folder name")
    return Path(text)


class _Parser(argparse.ArgumentParser):
    """argparse that raises :class:`UserError` (one line, exit 2) instead of printing usage."""

    def error(self, message: str) -> NoReturn:
        raise UserError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    """The command-line grammar (see README 'Using the command line')."""
    parser = _Parser(prog="icml24", description="Reference implementations of ICML 2024 papers "
                     "with executable claim checks.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def results_opt(p):
        p.add_argument("--results", type=_path, default=Path("results"), help="where published summaries live")

    def exec_opts(p):
        p.add_argument("--preset", "-p", default="quick", help="smoke | quick | full (default quick)")
        p.add_argument("--executor", "-e", default="serial", help="serial | process | ray (default serial)")
        p.add_argument("--workers", type=int, default=None, help="parallel workers (process/ray)")
        p.add_argument("--address", default=None, help="Ray cluster address (default: start a local Ray)")
        p.add_argument("--seeds", "-s", default=None, help="e.g. 0-4 or 0,3,7 (default: the preset's)")
        p.add_argument("--out", type=_path, default=Path("runs"), help="run store root (default runs/)")
        p.add_argument("--max-units", type=int, default=MAX_UNITS,
                       help=f"refuse to start more seeds than this in one command (default {MAX_UNITS})")
        p.add_argument("--redo-corrupt", action="store_true",
                       help="a corrupt file in a run directory: start its unit over instead of stopping")
        results_opt(p)

    p = sub.add_parser("list", help="all papers: slug, title, claims, last QUICK verdicts",
                       description="All papers: slug, title, number of claims and last QUICK verdicts.")
    results_opt(p)
    p = sub.add_parser("show", help="a paper's card, claims and presets",
                       description="A paper's card, its claims (pass band per preset) and every config field.")
    p.add_argument("slug")
    p = sub.add_parser("run", help="run one paper at a preset and check its claims", description=(
        "Run one paper at a preset; finished seeds are resumed; prints the claims. With the preset's own "
        "config and seeds the run is published to results/<slug>/<preset>.json (and, for quick, the README "
        "block); runs with --set or --seeds stay in runs/ only."))
    p.add_argument("slug")
    exec_opts(p)
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config field (repeatable); `icml24 show SLUG` lists the fields")
    p.add_argument("--device", default=None, help="cpu | cuda (papers whose config has a device field)")
    p = sub.add_parser("check", help="re-check claims on stored results (exit 1 on a failed claim)",
                       description="Re-check a paper's claims on stored results; exit 1 if any claim fails "
                       "(inconclusive: the run had power < 0.8 to see the paper's effect; not a failure).")
    p.add_argument("slug")
    p.add_argument("--from", dest="from_", type=_path, default=None,
                   help="run directory (default: results/<slug>/quick.json)")
    p.add_argument("--republish", action="store_true",
                   help="write the re-checked claims into results/<slug>/*.json and the README block")
    results_opt(p)
    p = sub.add_parser("reproduce", help="every paper at a preset, then the report (resumes)",
                       description="Every paper at a preset, then the report. Finished seeds are not run again.")
    exec_opts(p)
    p.add_argument("--only", default=None, help="comma-separated slugs (default: every paper)")
    p.add_argument("--report", dest="report_dir", type=_path, default=Path("report"), help="report folder")
    p = sub.add_parser("heldout", help="rerun on held-out seeds; verdicts beside the published ones",
                       description="Rerun papers at a preset on held-out seeds (the preset's seeds + --offset) "
                       "and print their verdicts beside the published ones; exit 1 if any differs.")
    exec_opts(p)
    p.add_argument("--only", default=None, help="comma-separated slugs (default: every paper)")
    p.add_argument("--offset", type=int, default=1000, help="held-out seeds are the preset's seeds + this")
    p = sub.add_parser("compare", help="published verdicts and numbers beside another results folder",
                       description="Put the published results beside those in another results folder (a run on "
                       "another machine: `icml24 reproduce --results OTHER`): verdicts side by side and the per-seed "
                       "numbers that differ; exit 1 if any verdict differs.")
    p.add_argument("other", type=_path, help="the other results folder")
    p.add_argument("--only", default=None, help="comma-separated slugs (default: every paper)")
    p.add_argument("--preset", "-p", default="quick", help="which published preset to compare")
    results_opt(p)
    p = sub.add_parser("report", help="build the static HTML site from results/",
                       description="Build the static HTML site from the published results.")
    p.add_argument("--out", type=_path, default=Path("report"), help="output folder (default report/)")
    p.add_argument("--preset", "-p", default="quick", help="which published preset to show")
    results_opt(p)
    return parser


COMMANDS: dict[str, Callable[..., int]] = {"list": list_cmd, "show": show, "run": run, "check": check,
                                           "reproduce": reproduce, "heldout": heldout, "compare": compare,
                                           "report": report}


def main(argv: Optional[list[str]] = None) -> None:
    """Entry point: one-line errors with exit code 2 for anything the user got wrong."""
    parser = build_parser()
    try:
        args = vars(parser.parse_args(argv))
        command = args.pop("command")
        if command is None:
            parser.print_help()
            sys.exit(0)
        code = COMMANDS[command](**args)
    except PermissionError as exc:  # a file or folder below the checks' reach that this user may not read or write
        from icml24.core.errors import from_os_error

        print(f"error: {from_os_error(exc)}", file=sys.stderr)
        sys.exit(2)
    except UserError as exc:
        message = str(exc).strip() or type(exc).__name__
        print("error: " + message.replace("\r", "\\r").replace("\n", "\\n"), file=sys.stderr)  # one line
        sys.exit(2)
    except KeyboardInterrupt:
        print("interrupted; run the same command again to resume", file=sys.stderr)
        sys.exit(130)
    sys.exit(code)


if __name__ == "__main__":
    main()

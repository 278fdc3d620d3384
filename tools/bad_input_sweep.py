"""Bad-input sweep: try a new user's mistakes against every paper's command line and count the clean refusals.

A mistake is refused cleanly when the command exits with code 2, prints exactly one line on stderr that starts
with ``error:`` (no traceback) and leaves the folder it ran in as it was. The commands run in-process
(``icml24.cli.main``) in a fresh temporary folder; the step that would start seeds (``cli._run_requests``) is
replaced by one that stops, so a mistake that is *accepted* costs nothing and is counted as accepted.

Mistakes, per paper: an unknown key, a key without a value, a key set twice; per knob (the types and rules
``icml24 show`` prints): a wrong type, a value past each declared bound, NaN, infinity, an integer no machine can
run, an unknown choice, an unbalanced list, an empty list item; per data-path knob: a missing path, the wrong
kind (file / folder), a named pipe, a name with a newline; per command: bad seeds, bad output folders, bad
executor options, bad presets and devices, report / check / heldout mistakes.

    .venv/bin/python tools/bad_input_sweep.py            # every paper; prints the count and each miss
    .venv/bin/python tools/bad_input_sweep.py --only acpo,etm -v

Not a test (pytest does not collect ``tools/``): tests/core/test_user_errors.py holds the tests.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import os
import sys
import tempfile
import typing
from pathlib import Path


class _WouldRun(Exception):
    """Raised instead of starting seeds: the mistake was accepted."""


def _everything(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


def knob_mistakes(slug: str) -> list[list[str]]:
    """``--set`` mistakes for every knob of one paper (argv tails)."""
    from icml24.core.config import PATH, RULES
    from icml24.core.registry import get_paper

    config_type = get_paper(slug).config_type
    hints = typing.get_type_hints(config_type)
    fields = dataclasses.fields(config_type)
    first = fields[0].name
    out = [["--set", "no_such_knob=1"], ["--set", first], ["--set", "=1"],
           ["--set", f"{first}={getattr(config_type(), first)!s}", "--set", f"{first}={getattr(config_type(), first)!s}"]]
    for f in fields:
        tp, rules = hints[f.name], f.metadata.get(RULES, {})
        is_tuple = typing.get_origin(tp) is tuple
        inner = typing.get_args(tp)[0] if is_tuple else tp
        bad: list[str] = []
        if f.metadata.get(PATH):
            kind = f.metadata[PATH]
            bad += ["/nonexistent/data", "apipe", "a\nb"]
            bad += ["afile"] if kind == "dir" else ["adir"] if kind == "file" else []
        elif inner is bool:
            bad += ["maybe", "2"]
        elif inner in (int, float):
            bad += ["abc", "1,2" if not is_tuple else "1,,2"]
            bad += ["1e20", "2.5", "-1e20"] if inner is int else ["nan", "inf", "-inf", "1e400"]
            bad += [repr(rules[k] - 1) for k in ("ge",) if rules.get(k) is not None]
            bad += [repr(rules[k]) for k in ("gt", "lt") if rules.get(k) is not None]
            bad += [repr(rules[k] + 1) for k in ("le",) if rules.get(k) is not None]
        elif rules.get("choices"):
            bad += ["no_such_choice"]
        elif typing.get_origin(inner) is typing.Literal:
            bad += ["no_such_choice"]
        if is_tuple:
            bad = [b for b in bad if "," not in b]
            bad = [f"[{bad[0]}" if bad else "[x", f"({bad[0]}" if bad else "(x", "a,,b", "[1,2", "1,2)",
                   *(f"{b},{b}" for b in bad[:2])]
        out += [["--set", f"{f.name}={b}"] for b in bad]
    return out


def cases(slugs: list[str]) -> list[tuple[str, list[str]]]:
    """(label, argv) for every mistake."""
    results = str(Path(__file__).resolve().parents[1] / "results")
    out: list[tuple[str, list[str]]] = []
    for slug in slugs:
        smoke = ["run", slug, "--preset", "smoke"]
        out += [(f"{slug} {' '.join(t)!r}", [*smoke, *t]) for t in knob_mistakes(slug)]
        out += [(f"{slug} {what}", [*smoke, *extra]) for what, extra in [
            ("seeds empty", ["--seeds", ""]), ("seeds reversed", ["--seeds", "5-1"]), ("seed negative", ["--seeds", "-3"]),
            ("seed too large", ["--seeds", "4294967296"]), ("seeds huge range", ["--seeds", "0-99999999999"]),
            ("seeds words", ["--seeds", "a-b"]), ("seed twice", ["--seeds", "1,1"]), ("seeds 1,,2", ["--seeds", "1,,2"]),
            ("preset huge", ["--preset", "huge"]), ("device tpu", ["--device", "tpu"]),
            ("device cpu:x", ["--device", "cpu:x"]), ("out is a file", ["--out", "afile"]),
            ("out below a file", ["--out", "afile/runs"]), ("out in /proc", ["--out", "/proc/x"]),
            ("out empty", ["--out", ""]), ("workers 0", ["--executor", "process", "--workers", "0"]),
            ("workers with serial", ["--workers", "3"]), ("executor dask", ["--executor", "dask"]),
            ("address without ray", ["--address", "127.0.0.1:6379"]),
            ("address not host:port", ["--executor", "ray", "--address", "nonsense"]),
            ("address nobody answers", ["--executor", "ray", "--address", "127.0.0.1:1"]),
            ("max-units 0", ["--max-units", "0"]), ("unknown flag", ["--fast"]),
        ]]
    out += [(what, argv) for what, argv in [
        ("unknown paper", ["run", "nope"]), ("unknown command", ["train", "x"]), ("show unknown", ["show", "nope"]),
        ("report missing results", ["report", "--results", "/nonexistent", "--out", "site"]),
        ("report empty out", ["report", "--out", ""]), ("report out is a file", ["report", "--out", "afile"]),
        ("report unknown preset", ["report", "--preset", "huge", "--results", results]),
        ("report papers is a file", ["report", "--out", "site_with_file", "--results", results]),
        ("check from missing", ["check", slugs[0], "--from", "nowhere"]),
        ("check from a non-json file", ["check", slugs[0], "--from", "afile"]),
        ("check unknown paper", ["check", "nope"]),
        ("check republish with from", ["check", slugs[0], "--from", "afile", "--republish"]),
        ("heldout unknown paper", ["heldout", "--only", "nope"]),
        ("heldout unknown preset", ["heldout", "--only", slugs[0], "--preset", "huge"]),
        ("heldout offset 0", ["heldout", "--only", slugs[0], "--offset", "0"]),
        ("heldout with seeds", ["heldout", "--only", slugs[0], "--seeds", "0-2"]),
        ("reproduce empty only", ["reproduce", "--only", ","]),
        ("reproduce report is a file", ["reproduce", "--only", slugs[0], "--report", "afile"]),
        ("list results is a file", ["list", "--results", "afile"]),
    ]]
    return out


def attempt(argv: list[str], root: Path) -> tuple[bool, str]:
    """(refused cleanly, what happened) for one command line run in ``root``."""
    from icml24 import cli

    before = _everything(root)
    err, out = io.StringIO(), io.StringIO()
    code: object = 0
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            cli.main(argv)
        except SystemExit as exc:
            code = exc.code
        except _WouldRun:
            code = "accepted (seeds would start)"
        except BaseException as exc:  # noqa: BLE001 - a traceback is one of the outcomes counted
            code = f"traceback {type(exc).__name__}: {exc}"
    lines = err.getvalue().strip().splitlines()
    written = _everything(root) - before
    clean = code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and not written
    if clean:
        return True, lines[0]
    why = f"exit {code}, {len(lines)} stderr line(s)" + (f", wrote {sorted(written)[:3]}" if written else "")
    return False, f"{why}: {(lines[-1] if lines else '')[:200]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=None, help="comma-separated slugs (default: every paper)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every case, not only the misses")
    args = parser.parse_args()

    from icml24 import cli
    from icml24.core.registry import list_papers

    def would_run(*a, **k):
        raise _WouldRun

    cli._run_requests = would_run
    slugs = [s for s in args.only.split(",") if s] if args.only else list_papers()
    todo = cases(slugs)
    refused = 0
    misses = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "afile").write_text("not a folder, not json\n")
        (root / "adir").mkdir()
        (root / "site_with_file").mkdir()
        (root / "site_with_file" / "papers").write_text("a file where the report writes a folder\n")
        os.mkfifo(root / "apipe")
        here = os.getcwd()
        os.chdir(root)
        try:
            ok, what = attempt(["run", slugs[0], "--preset", "smoke"], root)  # the control: a valid command
            if ok or "accepted" not in what:
                raise SystemExit(f"the control (a valid run of {slugs[0]}) was not accepted: {what}")
            for label, argv in todo:
                ok, what = attempt(argv, root)
                refused += ok
                if not ok:
                    misses.append((label, what))
                if args.verbose or not ok:
                    print(f"{'ok  ' if ok else 'MISS'} {label!s}: {what}", flush=True)
        finally:
            os.chdir(here)
    print(f"{refused} of {len(todo)} mistakes refused cleanly (one error line, exit 2, nothing written); "
          f"{len(misses)} not", flush=True)
    return 0 if not misses else 1


if __name__ == "__main__":
    sys.exit(main())

"""The top README's snippets and commands run as written, from the checkout's root."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from icml24.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```(\w*)\n(.*?)```", README, flags=re.S)


def _commands() -> list[str]:
    """Every `icml24 ...` line of the README's command blocks, comment cut, optional [..] parts dropped and
    placeholders filled with a real paper."""
    out = []
    for lang, body in BLOCKS:
        for line in body.splitlines():
            if lang == "" and line.startswith("icml24 "):
                line = re.sub(r"\s+#.*$", "", line)
                line = re.sub(r"\[[^\[\]]*\]", "", line)
                out.append(" ".join(line.replace("<slug>", "ranking_bandit").split()))
    return out


def test_the_readme_has_its_snippet_and_commands():
    assert [lang for lang, _ in BLOCKS].count("python") == 1 and len(_commands()) >= 8


def test_the_library_snippet_runs_as_written():
    (code,) = [body for lang, body in BLOCKS if lang == "python"]
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert re.search(r"^C1 (pass|fail|inconclusive|not checkable) ", out.stdout, flags=re.M), out.stdout


@pytest.mark.parametrize("command", _commands())
def test_every_command_line_is_one_the_cli_accepts(command):
    build_parser().parse_args(command.split()[1:])  # argparse exits on a flag or command that is not there


@pytest.mark.parametrize("command", ["icml24 list", "icml24 show ranking_bandit", "icml24 check ranking_bandit"])
def test_the_cheap_commands_run_as_written(command):
    assert command in _commands()
    out = subprocess.run([sys.executable, "-m", "icml24.cli", *command.split()[1:]], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode in (0, 1), out.stderr  # check exits 1 when a published claim fails
    assert "error" not in out.stderr
    assert "…" not in out.stdout and max(map(len, out.stdout.splitlines())) <= 80  # a pipe: 80 columns, nothing cut


def test_outside_the_checkout_the_cheap_commands_say_where_to_run_them(tmp_path):
    """The README says the commands read results/ from the current folder; elsewhere they say so."""
    def cli(*args):
        return subprocess.run([sys.executable, "-m", "icml24.cli", *args], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120)

    listed = cli("list")
    assert listed.returncode == 0 and "checkout's root" in listed.stderr
    for args in (("check", "ranking_bandit"), ("report",)):
        out = cli(*args)
        assert out.returncode == 2 and out.stderr.startswith("error:"), out.stderr
        assert "checkout's root" in out.stderr, out.stderr
    assert not any(tmp_path.iterdir())  # nothing written


def test_every_make_target_that_judges_claims_takes_the_data_step_first():
    """`make reproduce`, `check` and `heldout` (and any target added later that runs papers or the slow claim
    checks) install the same data first, so that a fresh machine gets the published verdicts."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    rules = re.findall(r"^([\w-]+):([^\n=]*)\n((?:\t[^\n]*\n?)*)", makefile, flags=re.M)
    targets = {name: recipe for name, _, recipe in rules}
    deps = {name: line.split() for name, line, _ in rules}
    judging = [name for name, recipe in targets.items()
               if re.search(r"icml24 (reproduce|heldout|run|check)\b|pytest[^\n]*-m slow", recipe)]
    assert {"reproduce", "check", "heldout"} <= set(judging), judging
    assert [name for name in judging if "data" not in deps[name]] == []

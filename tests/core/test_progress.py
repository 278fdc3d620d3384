"""Progress goes to stderr, in a terminal or a pipe: a line per finished seed, per stage or artefact build that
runs long (core.executors.note, through every executor but Ray), and before the claims; stdout keeps the
results."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import time

import pytest
from conftest import REPO

from icml24.core import executors
from icml24.core.executors import Unit, UnitContext, execute, unit_context

ENV = {"ICML24_EXTRA_PAPERS": "stages=frame_fixtures.stages",
       "PYTHONPATH": os.pathsep.join([str(REPO / "tests" / "fixtures"), os.environ.get("PYTHONPATH", "")]),
       "ICML24_NOTE_AFTER_S": "0.2"}


def _run(tmp_path, *args, stderr=subprocess.PIPE):
    cmd = [sys.executable, "-m", "icml24.cli", "run", "stages", "--set", "sleep=0.5", "--out", str(tmp_path / "runs"),
           "--results", str(tmp_path / "results"), *args]
    return subprocess.run(cmd, env={**os.environ, **ENV}, stdout=subprocess.PIPE, stderr=stderr, text=True,
                          timeout=120)


@pytest.mark.parametrize("executor", ["serial", "process"])
def test_a_piped_run_notes_its_long_stages_artefact_builds_and_seeds_on_stderr(tmp_path, executor):
    out = _run(tmp_path, "--preset", "smoke", "--executor", executor, "--workers", "1")
    assert out.returncode == 0, out.stderr
    for line in ("stages [smoke] seed 0: building table into", "stages [smoke] seed 0: table built in",
                 "stages [smoke] seed 0: stage s0: running (0.2 s so far)", "stages [smoke] seed 0: stage s2: done in",
                 "[1/1] stages [smoke] seed 0 done in", "stages [smoke]: checking the claims"):
        assert line in out.stderr, (line, out.stderr)
        assert line not in out.stdout
    assert "stages: claims" in out.stdout


def test_stderr_a_terminal_and_stdout_a_pipe_shows_the_progress_on_the_terminal(tmp_path):
    """`icml24 run ... | tee log`: the bar and the progress lines are drawn on the terminal (stderr)."""
    master, slave = pty.openpty()
    try:
        out = _run(tmp_path, "--preset", "smoke", stderr=slave)
        os.close(slave)
        slave = -1
        seen = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the terminal's other end is closed: all read
                break
            if not chunk:
                break
            seen += chunk
    finally:
        if slave >= 0:
            os.close(slave)
        os.close(master)
    text = seen.decode(errors="replace")
    assert out.returncode == 0
    assert "seed 0 done in" in text and "stage s1: done in" in text, text
    assert "seed 0 done in" not in out.stdout and "stages: claims" in out.stdout


def test_unit_context_notes_long_stages_and_builds_and_computes_the_same(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML24_NOTE_AFTER_S", "0.05")
    lines: list[str] = []
    monkeypatch.setattr(executors, "_SINK", lines.append)
    unit = Unit("p", "m", "quick", (), "h", 3, workdir=str(tmp_path / "work"), cache_dir=str(tmp_path / "cache"),
                code_hash="c")
    ctx = unit_context(unit)
    assert isinstance(ctx, UnitContext) and ctx.label == "p [quick] seed 3"
    assert ctx.stage("quick_one", pow, 2, 5) == 32 and lines == []  # short: silent
    assert ctx.stage("slow_one", lambda: time.sleep(0.2) or 7) == 7
    assert lines[0] == "p [quick] seed 3: stage slow_one: running (0.05 s so far)"
    assert lines[1].startswith("p [quick] seed 3: stage slow_one: done in ")
    assert ctx.stage("slow_one", lambda: 8) == 7 and len(lines) == 2  # resumed from its checkpoint: silent
    folder = ctx.artefact("table", {"n": 1}, lambda d: (d / "x").write_text("1"))
    assert (folder / "x").read_text() == "1" and lines[2].startswith("p [quick] seed 3: building table into ")
    assert ctx.artefact("table", {"n": 1}, lambda d: None) == folder and len(lines) == 4  # cached: silent


def test_a_long_stage_is_noted_again_while_it_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML24_NOTE_AFTER_S", "0.05")
    monkeypatch.setenv("ICML24_NOTE_EVERY_S", "0.1")
    lines: list[str] = []
    monkeypatch.setattr(executors, "_SINK", lines.append)
    unit = Unit("p", "m", "quick", (), "h", 1, workdir=str(tmp_path / "work"), cache_dir=str(tmp_path / "cache"),
                code_hash="c")
    assert unit_context(unit).stage("long", lambda: time.sleep(0.5) or 1) == 1
    running = [ln for ln in lines if ": running (" in ln]
    assert running[0] == "p [quick] seed 1: stage long: running (0.05 s so far)"
    assert 3 <= len(running) <= 6 and running[-1].endswith(" s so far)")     # every 0.1 s after the first
    assert lines[-1].startswith("p [quick] seed 1: stage long: done in ")
    time.sleep(0.3)
    assert len(lines) == len(running) + 1                                     # nothing after the end
    lines.clear()
    unit_context(unit).artefact("slow", {}, lambda folder: time.sleep(0.35))  # a long build ticks as well
    assert lines[0].startswith("p [quick] seed 1: building slow into ")
    assert lines[1] == "p [quick] seed 1: building slow: running (0.1 s so far)" and len(lines) >= 4
    assert lines[-1].startswith("p [quick] seed 1: slow built in ")


def test_without_a_listener_notes_are_dropped():
    (out,) = list(execute([1], fn=_note_and_return, executor="serial"))
    assert out.result == 1 and executors._SINK is None
    seen: list[str] = []
    (out,) = list(execute([2], fn=_note_and_return, executor="serial", on_note=seen.append))
    assert seen == ["unit 2"] and executors._SINK is None


def _note_and_return(x):
    executors.note(f"unit {x}")
    return x

"""Every user mistake: exit 2, one `error:` line, no traceback, nothing written, before any compute.

The sweep runs the CLI in-process (``icml24.cli.main``) in an empty folder; a mistake that reached the
compute would take seconds and leave a run directory, so both are checked.
"""

from __future__ import annotations

import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from icml24.cli import main

SMOKE = ["run", "_template", "--preset", "smoke"]

CASES = {
    # paths
    "report into /proc": ["report", "--out", "/proc/x"],
    "report into a file": ["report", "--out", "afile"],
    "run into /proc": [*SMOKE, "--out", "/proc/x"],
    "run into a file": [*SMOKE, "--out", "afile"],
    "results is a file": ["run", "_template", "--preset", "quick", "--results", "afile"],
    "reproduce report is a file": ["reproduce", "--only", "_template", "--preset", "smoke", "--report", "afile"],
    "list results is a file": ["list", "--results", "afile"],
    "check from a missing dir": ["check", "_template", "--from", "nowhere"],
    "check from a non-json file": ["check", "_template", "--from", "afile"],
    # executors
    "negative workers": [*SMOKE, "--executor", "process", "--workers", "-1"],
    "zero workers": [*SMOKE, "--executor", "process", "--workers", "0"],
    "workers with serial": [*SMOKE, "--workers", "4"],
    "address without ray": [*SMOKE, "--address", "127.0.0.1:6379"],
    "ray address nobody answers": [*SMOKE, "--executor", "ray", "--address", "127.0.0.1:1"],
    "ray address not host:port": [*SMOKE, "--executor", "ray", "--address", "nonsense"],
    "unknown executor": [*SMOKE, "--executor", "dask"],
    # seeds
    "seed too large": [*SMOKE, "--seeds", "99999999999999999999"],
    "empty seeds": [*SMOKE, "--seeds", ""],
    "too many seeds": [*SMOKE, "--seeds", "0-100000"],
    "reversed range": [*SMOKE, "--seeds", "5-1"],
    "negative seed": [*SMOKE, "--seeds", "-3"],
    "seed twice": [*SMOKE, "--seeds", "1,1"],
    "words as seeds": [*SMOKE, "--seeds", "a-b"],
    # config values
    "same key twice": [*SMOKE, "--set", "reps=10", "--set", "reps=20"],
    "nan float": [*SMOKE, "--set", "mu=nan"],
    "inf float": [*SMOKE, "--set", "mu=inf"],
    "unknown key": [*SMOKE, "--set", "nope=1"],
    "no equals": [*SMOKE, "--set", "reps"],
    "wrong type": [*SMOKE, "--set", "reps=many"],
    "unknown slug": ["run", "nope"],
    "unknown preset": ["run", "_template", "--preset", "huge"],
    "cpu-only paper on cuda": ["run", "partial_monitoring", "--preset", "smoke", "--device", "cuda"],
    "cuda without cuda": ["run", "copying", "--preset", "smoke", "--device", "cuda"],
    "unknown device": ["run", "pcdeq", "--preset", "smoke", "--device", "tpu"],
    "cpu with a bad index": ["run", "pcdeq", "--preset", "smoke", "--device", "cpu:x"],
    "missing data path": ["run", "brf", "--preset", "smoke", "--set", "ecg_path=/nonexistent"],
    "data path is a file": ["run", "brf", "--preset", "smoke", "--set", "ecg_path=afile"],
    "missing movielens": ["run", "ranking_bandit", "--preset", "smoke", "--set", "movielens_path=/nonexistent.csv"],
    "empty only": ["reproduce", "--only", ","],
    "heldout offset 0": ["heldout", "--only", "_template", "--offset", "0"],
    "heldout with seeds": ["heldout", "--only", "_template", "--seeds", "0-2"],
    # values that pass the type check but mean nothing (knob rules and validate)
    "moe reps negative": ["run", "moe_gating", "--preset", "smoke", "--set", "reps=-3"],
    "moe reps zero": ["run", "moe_gating", "--preset", "smoke", "--set", "reps=0"],
    "moe unknown gate": ["run", "moe_gating", "--preset", "smoke", "--set", "gates=foo"],
    "moe no gates": ["run", "moe_gating", "--preset", "smoke", "--set", "gates="],
    "moe threads negative": ["run", "moe_gating", "--preset", "smoke", "--set", "threads=-1"],
    "moe init_scale nan": ["run", "moe_gating", "--preset", "smoke", "--set", "init_scale=nan"],
    "moe n_min above n_max": ["run", "moe_gating", "--preset", "smoke", "--set", "n_min=1000", "--set", "n_max=100"],
    "td no chains": ["run", "neural_td", "--preset", "smoke", "--set", "n_chains=0"],
    "td one state-action": ["run", "neural_td", "--preset", "smoke", "--set", "n_states=1", "--set", "n_actions=1"],
    "td discount above 1": ["run", "neural_td", "--preset", "smoke", "--set", "gamma=1.5"],
    "copying lr 1e9": ["run", "copying", "--preset", "smoke", "--set", "lr=1e9"],
    "copying unknown model": ["run", "copying", "--preset", "smoke", "--set", "copy_models=gpt"],
    "copying min above max": ["run", "copying", "--preset", "smoke", "--set", "train_len_min=9", "--set", "train_len_max=3"],
    "pcdeq idx without dir": ["run", "pcdeq", "--preset", "smoke", "--set", "data=idx"],
    "pcdeq too many images": ["run", "pcdeq", "--preset", "smoke", "--set", "n_train=4991", "--set", "n_test=9"],
    "brf test fraction 1": ["run", "brf", "--preset", "smoke", "--set", "test_fraction=1.0"],
    "pm unknown game": ["run", "partial_monitoring", "--preset", "smoke", "--set", "local_game=chess"],
    "pm law above 1": ["run", "partial_monitoring", "--preset", "smoke", "--set", "u_two=1.5,0.4"],
    "bandit K above N": ["run", "ranking_bandit", "--preset", "smoke", "--set", "n_positions=50"],
    "bandit delta 0": ["run", "ranking_bandit", "--preset", "smoke", "--set", "delta=0"],
    "template reps 0": [*SMOKE, "--set", "reps=0"],
    "list with an unclosed bracket": ["run", "moe_gating", "--preset", "smoke", "--set", "gates=[tanh,relu"],
    "list closed but not opened": ["run", "moe_gating", "--preset", "smoke", "--set", "gates=tanh,relu)"],
    "list with an empty item": ["run", "moe_gating", "--preset", "smoke", "--set", "gates=tanh,,relu"],
    "integer no machine can run": ["run", "neural_td", "--preset", "smoke", "--set", "T=1e12"],
    "integer far too large": ["run", "acpo", "--preset", "smoke", "--set", "n_states=1e20"],
    "seed range of 1e11 seeds": [*SMOKE, "--seeds", "0-99999999999"],
    "report from missing results": ["report", "--results", "/nonexistent", "--out", "site"],
    "report into an empty path": ["report", "--out", ""],
    "run into an empty path": [*SMOKE, "--out", ""],
    "heldout unknown paper": ["heldout", "--only", "nope"],
    "heldout unknown preset": ["heldout", "--only", "_template", "--preset", "huge"],
    "data path is a pipe": ["run", "brf", "--preset", "smoke", "--set", "ecg_path=apipe"],
    "data path with a newline": ["run", "brf", "--preset", "smoke", "--set", "ecg_path=a\nb"],
    "unknown command": ["train", "_template"],
    "unknown flag": [*SMOKE, "--fast"],
}


@pytest.fixture
def empty_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("not a folder, not json\n")
    os.mkfifo(tmp_path / "apipe")
    return tmp_path


def _everything(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


def assert_user_error(argv: list[str], root: Path, capsys) -> str:
    before = _everything(root)
    start = time.perf_counter()
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2, f"exit {exc.value.code}: {err}"
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    assert _everything(root) == before, "a mistake wrote files"
    assert time.perf_counter() - start < 20, "the mistake was found only after compute"
    return lines[0]


@pytest.mark.parametrize("name", list(CASES))
def test_user_mistake_is_one_line_exit_2_nothing_written(name, empty_dir, capsys):
    assert_user_error(CASES[name], empty_dir, capsys)


def test_a_corrupt_seed_file_is_named_and_can_be_redone(empty_dir, capsys):
    assert main_ok([*SMOKE, "--seeds", "0-1", "--out", "runs"], capsys)
    (seed,) = [p for p in (empty_dir / "runs").rglob("seed-1.json")]
    seed.write_text('{"seed": 1, "metr')  # truncated
    line = assert_user_error([*SMOKE, "--seeds", "0-1", "--out", "runs"], empty_dir, capsys)
    assert "corrupt run file" in line and "seed-1.json" in line and "--redo-corrupt" in line
    assert main_ok([*SMOKE, "--seeds", "0-1", "--out", "runs", "--redo-corrupt"], capsys)
    assert json.loads(seed.read_text())["seed"] == 1


def main_ok(argv: list[str], capsys) -> bool:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    capsys.readouterr()
    return exc.value.code == 0


def test_only_a_quick_or_full_preset_run_is_published(empty_dir, capsys):
    assert main_ok([*SMOKE, "--out", "runs", "--results", "results"], capsys)  # smoke: the tests' size
    quick = ["run", "_template", "--preset", "quick", "--out", "runs", "--results", "results"]
    assert main_ok([*quick, "--set", "reps=60"], capsys)  # an override
    assert main_ok([*quick, "--seeds", "0-1"], capsys)  # other seeds
    assert not (empty_dir / "results").exists()
    assert main_ok(quick, capsys)
    assert sorted(p.name for p in (empty_dir / "results" / "_template").glob("*.json")) == ["quick.json"]


def test_messages_name_the_real_mistake(empty_dir, capsys):
    line = assert_user_error([*SMOKE, "--seeds", "0-99999999999"], empty_dir, capsys)  # counted, never expanded
    assert line == "error: --seeds 0-99999999999: 100,000,000,000 seeds, more than --max-units 1000; raise it to mean it"
    assert "more than --max-units 5" in assert_user_error([*SMOKE, "--seeds", "0-3,10-11", "--max-units", "5"],
                                                          empty_dir, capsys)
    assert "unknown paper 'nope'" in assert_user_error(["heldout", "--only", "nope"], empty_dir, capsys)
    assert "unknown preset 'huge'" in assert_user_error(["heldout", "--only", "_template", "--preset", "huge"],
                                                        empty_dir, capsys)
    assert assert_user_error(["run", "brf", "--preset", "smoke", "--set", "ecg_path=afile"], empty_dir,
                             capsys).endswith("is a file, not a directory")
    assert "'a\\nb'" in assert_user_error(["run", "brf", "--preset", "smoke", "--set", "ecg_path=a\nb"], empty_dir,
                                          capsys)


def test_a_bad_extra_paper_module_is_one_line(empty_dir, capsys, monkeypatch):
    monkeypatch.setenv("ICML24_EXTRA_PAPERS", "bad=no.such.module")
    assert "ICML24_EXTRA_PAPERS" in assert_user_error(["list"], empty_dir, capsys)


def test_a_folder_that_cannot_be_searched_is_one_line(empty_dir, capsys, monkeypatch):
    real_stat = Path.stat

    def stat(self, *args, **kwargs):  # what a non-root user meets below a folder without x permission
        if "locked" in self.parts and self.name != "locked":
            raise PermissionError(13, "Permission denied", str(self))
        return real_stat(self, *args, **kwargs)

    (empty_dir / "locked").mkdir()
    monkeypatch.setattr(Path, "stat", stat)
    assert "Permission denied" in assert_user_error([*SMOKE, "--out", "locked/runs"], empty_dir, capsys)
    assert "cannot be read" in assert_user_error(["run", "brf", "--preset", "smoke", "--set", "ecg_path=locked/x"],
                                                 empty_dir, capsys)
    # inputs named by --results and --from, in every command that reads them
    for argv in (["list"], ["report", "--out", "site"], ["check", "_template"], ["heldout", "--only", "_template"]):
        assert "Permission denied" in assert_user_error([*argv, "--results", "locked/results"], empty_dir, capsys)
    assert "--from locked/run" in assert_user_error(["check", "_template", "--from", "locked/run"], empty_dir, capsys)
    # a config's own path check (pcdeq's __post_init__ asks Path.is_dir) names the knob
    line = assert_user_error(["run", "pcdeq", "--preset", "smoke", "--set", "data=idx", "--set",
                              "data_dir=locked/mnist"], empty_dir, capsys)
    assert line == "error: data_dir: locked/mnist: Permission denied"


def test_a_paper_validate_that_cannot_read_a_data_file_is_one_line(empty_dir, capsys, monkeypatch):
    from icml24.core.registry import get_paper

    def validate(config):  # what ci_gcl's validate meets reading tu_path's files below a locked folder
        raise PermissionError(13, "Permission denied", "locked/MUTAG_A.txt")

    monkeypatch.setattr(get_paper("_template").configs, "validate", validate)
    assert assert_user_error(SMOKE, empty_dir, capsys) == "error: locked/MUTAG_A.txt: Permission denied"


def test_a_permission_error_past_the_checks_is_one_line(empty_dir, capsys, monkeypatch):
    from icml24 import cli

    def list_cmd(results):  # a file below the checks' reach that this user may not read
        raise PermissionError(13, "Permission denied", "results/a\nb/quick.json")

    monkeypatch.setitem(cli.COMMANDS, "list", list_cmd)
    assert assert_user_error(["list"], empty_dir, capsys) == "error: 'results/a\\nb/quick.json': Permission denied"


def test_a_report_whose_folder_holds_a_file_where_a_folder_goes_writes_nothing(empty_dir, capsys):
    (empty_dir / "site").mkdir()
    (empty_dir / "site" / "papers").write_text("a file\n")
    results = Path(__file__).resolve().parents[2] / "results"
    line = assert_user_error(["report", "--out", "site", "--results", str(results)], empty_dir, capsys)
    assert "papers is a file" in line


def test_check_from_a_run_with_a_truncated_seed_file_is_refused(empty_dir, capsys):
    assert main_ok([*SMOKE, "--seeds", "0-1", "--out", "runs"], capsys)
    (rdir,) = {p.parent.parent for p in (empty_dir / "runs").rglob("seed-1.json")}
    (rdir / "seeds" / "seed-1.json").write_text('{"seed": 1, "metr')
    assert "corrupt run file" in assert_user_error(["check", "_template", "--from", str(rdir)], empty_dir, capsys)
    (rdir / "seeds" / "seed-1.json").unlink()
    (rdir / "config.json").write_text("{")
    assert "config.json" in assert_user_error(["check", "_template", "--from", str(rdir)], empty_dir, capsys)
    result = json.loads((rdir / "result.json").read_text())
    (empty_dir / "other.json").write_text(json.dumps({**result, "preset": "huge"}))
    assert "names preset 'huge'" in assert_user_error(["check", "_template", "--from", "other.json"], empty_dir, capsys)


def test_a_ray_address_where_an_http_server_listens_is_refused_at_once(empty_dir, capsys):
    class Quiet(BaseHTTPRequestHandler):
        def log_message(self, *args):  # the server's log would share the test's stderr
            pass

    server = HTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        line = assert_user_error([*SMOKE, "--executor", "ray", "--address", f"127.0.0.1:{server.server_port}"],
                                 empty_dir, capsys)
    finally:
        server.shutdown()
    assert "not a Ray cluster" in line



def test_a_ray_address_where_a_silent_listener_waits_is_refused_in_seconds(empty_dir, capsys):
    import socket

    listener = socket.create_server(("127.0.0.1", 0))  # accepts (the kernel's backlog) and never says a word
    try:
        start = time.perf_counter()
        line = assert_user_error([*SMOKE, "--executor", "ray", "--address", f"127.0.0.1:{listener.getsockname()[1]}"],
                                 empty_dir, capsys)
    finally:
        listener.close()
    assert "not a Ray cluster" in line and "nothing answered" in line and time.perf_counter() - start < 8

def test_cpu_with_an_index_is_the_cpu():
    from icml24.cli import _prepare

    assert _prepare("pcdeq", "smoke", None, [], "cpu:0").config.device == "cpu"


def _knob_mistakes() -> list[tuple[str, str]]:
    """(paper, key=value) for every knob of every paper: a wrong type, a value past each declared bound, an
    integer no machine can run, NaN and infinity, an unknown choice, an unbalanced list."""
    import dataclasses
    import typing

    from icml24.core.config import RULES
    from icml24.core.registry import get_paper, list_papers

    out = []
    for slug in list_papers():
        config_type = get_paper(slug).config_type
        hints = typing.get_type_hints(config_type)
        for f in dataclasses.fields(config_type):
            tp, rules = hints[f.name], f.metadata.get(RULES, {})
            inner = typing.get_args(tp)[0] if typing.get_origin(tp) is tuple else tp
            bad = []
            if inner in (int, float):
                bad += ["abc", "1e20" if inner is int else "nan", "inf" if inner is float else "2.5"]
                bad += [repr(rules[k] - 1) for k in ("ge",) if rules.get(k) is not None]
                bad += [repr(rules[k]) for k in ("gt", "lt") if rules.get(k) is not None]
                bad += [repr(rules[k] + 1) for k in ("le",) if rules.get(k) is not None]
            elif inner is bool:
                bad += ["maybe"]
            elif rules.get("choices"):
                bad += ["no_such_choice"]
            if typing.get_origin(tp) is tuple:
                bad = ["[1,2", *(f"{b},{b}" for b in bad[:1])]
            out += [(slug, f"{f.name}={b}") for b in bad]
    return out


def test_every_knob_of_every_paper_refuses_its_mistakes(empty_dir, capsys):
    cases = _knob_mistakes()
    assert len(cases) >= 150  # the sweep is wide: every paper, every knob
    for slug, assignment in cases:
        assert_user_error(["run", slug, "--preset", "smoke", "--set", assignment], empty_dir, capsys)


@pytest.mark.parametrize("argv", [["run", "_template"], ["reproduce", "--only", "_template", "--report", "site"]])
def test_full_on_a_cpu_says_it_can_take_hours_before_it_starts(argv, empty_dir, capsys, monkeypatch):
    from icml24 import cli
    from icml24.core.errors import UserError

    quick = empty_dir / "results" / "_template" / "quick.json"
    quick.parent.mkdir(parents=True)
    seeds = [{"seed": i, "wall_time": t} for i, t in enumerate((3.0, 4.0, 6.0))]   # a published summary's
    quick.write_text(json.dumps({"seeds": seeds}))

    def stop(*args, **kwargs):  # the warning comes before any seed starts
        raise UserError("stopped before the run")

    monkeypatch.setattr(cli, "_run_requests", stop)
    with pytest.raises(SystemExit):
        main([*argv, "--preset", "full", "--out", "runs", "--results", "results"])
    err = capsys.readouterr().err
    assert "_template [full]: the paper's scale on the CPU" in err and "can take hours" in err
    assert "a QUICK seed took 4 s where it was published" in err and err.rstrip().endswith("stopped before the run")

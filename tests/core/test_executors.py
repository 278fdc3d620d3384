"""Executors: serial, process and Ray give the same per-seed results; failures retry once, then report."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import ray_lock

from icml24.core import testing
from icml24.core.errors import UserError
from icml24.core.executors import WORKER_MALLOC, error_line, execute
from icml24.core.registry import get_paper
from icml24.core.store import RunRequest


def template_units(seeds):
    paper = get_paper("_template")
    return RunRequest(paper, "smoke", paper.preset("smoke"), tuple(seeds)).units(seeds)


def metrics_by_seed(outcomes):
    return {o.unit.seed: (o.result["metrics"], o.result["curves"]) for o in outcomes if o.error is None}


@pytest.fixture(scope="module", autouse=True)
def ray_turn_for_the_module(request, tmp_path_factory):
    """This file starts local Ray clusters: it runs while no other xdist worker runs one (conftest.ray_lock)."""
    with ray_lock(request.config, tmp_path_factory):
        yield


@pytest.fixture(scope="module")
def ray_session(ray_turn_for_the_module):
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_serial_and_process_agree_on_paper_units():
    units = template_units([0, 1, 2, 3])
    serial = metrics_by_seed(execute(units, executor="serial"))
    process = metrics_by_seed(execute(units, executor="process", workers=2))
    assert set(serial) == {0, 1, 2, 3} and serial == process


def test_process_workers_cap_their_blas_pools_at_their_share_of_the_cores():
    outs = list(execute(range(2), fn=testing.blas_threads, executor="process", workers=2))
    share = max(1, (os.cpu_count() or 1) // 2)
    assert [o.result["threads"] for o in outs] == [[share], [share]]


def test_process_workers_start_with_the_allocator_settings_and_the_caller_keeps_its_environment(monkeypatch):
    for k in WORKER_MALLOC:
        monkeypatch.delenv(k, raising=False)
    outs = list(execute(range(2), fn=testing.malloc_environment, executor="process", workers=2))
    assert [o.result["env"] for o in outs] == [dict(WORKER_MALLOC)] * 2
    assert not any(k in os.environ for k in WORKER_MALLOC)
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "0")                  # the user's own setting wins
    outs = list(execute(range(1), fn=testing.malloc_environment, executor="process", workers=1))
    assert outs[0].result["env"] == {**WORKER_MALLOC, "MALLOC_TRIM_THRESHOLD_": "0"}
    assert os.environ["MALLOC_TRIM_THRESHOLD_"] == "0"


def test_failing_unit_is_retried_once_then_reported_while_others_finish():
    for name in ("serial", "process"):
        outs = {o.unit: o for o in execute(range(6), fn=testing.fail_on_odd, executor=name, workers=2)}
        assert set(outs) == set(range(6))
        for x, o in outs.items():
            if x % 2:
                assert o.result is None and o.attempts == 2 and "always fails" in o.error
            else:
                assert o.error is None and o.result == {"x": x, "y": x * x} and o.attempts == 1


def test_a_deterministic_fault_is_reported_at_once_not_retried():
    for name in ("serial", "process"):
        outs = {o.unit: o for o in execute(range(4), fn=testing.overflow_on_odd, executor=name, workers=2)}
        assert outs[1].attempts == 1 and outs[1].result is None and outs[1].user_error is None
        assert error_line(outs[1].error) == "OverflowError: unit 1 overflows"
        assert outs[2].error is None and outs[2].result == {"x": 2, "y": 4}


def test_flaky_unit_succeeds_on_retry(tmp_path):
    for name in ("serial", "process"):
        folder = tmp_path / name
        folder.mkdir()
        outs = list(execute([(x, str(folder)) for x in range(3)], fn=testing.fail_first_attempt,
                            executor=name, workers=2))
        assert all(o.error is None and o.attempts == 2 for o in outs)


def test_unknown_executor_is_a_user_error():
    with pytest.raises(UserError, match="unknown executor"):
        list(execute([1], fn=testing.square, executor="dask"))


@pytest.mark.ray
def test_ray_matches_serial_and_handles_failures(ray_session, tmp_path):
    units = template_units([0, 1, 2])
    assert metrics_by_seed(execute(units, executor="ray")) == metrics_by_seed(execute(units, executor="serial"))
    outs = {o.unit: o for o in execute(range(4), fn=testing.fail_on_odd, executor="ray")}
    assert outs[1].attempts == 2 and outs[1].result is None and "always fails" in outs[1].error
    assert outs[2].result == {"x": 2, "y": 4}
    flaky = list(execute([(x, str(tmp_path)) for x in range(2)], fn=testing.fail_first_attempt, executor="ray"))
    assert all(o.error is None and o.attempts == 2 for o in flaky)



@pytest.mark.ray
def test_the_address_probe_accepts_a_real_ray_cluster(ray_session):
    from icml24.core.checks import executor_options

    executor_options("ray", None, ray_session.get_runtime_context().gcs_address)  # answers as gRPC does: no error

def test_mujoco_warnings_go_to_stderr_not_to_a_log_file_in_the_current_folder(tmp_path, monkeypatch, capfd):
    mujoco = pytest.importorskip("mujoco")
    from icml24.core.executors import _mujoco_warnings_to_stderr

    monkeypatch.chdir(tmp_path)
    _mujoco_warnings_to_stderr()
    model = mujoco.MjModel.from_xml_string("<mujoco><worldbody><body><freejoint/><geom size='.1'/></body>"
                                           "</worldbody></mujoco>")
    data = mujoco.MjData(model)
    data.qvel[:] = float("nan")  # MuJoCo warns (bad qvel) and resets the state
    mujoco.mj_step(model, data)
    assert "MuJoCo warning" in capfd.readouterr().err and not (tmp_path / "MUJOCO_LOG.TXT").exists()


@pytest.mark.parametrize("error, diverged", [
    ("numpy.linalg.LinAlgError: SVD did not converge", True),
    ("ValueError: Input X contains infinity or a value too large for dtype('float64').", True),
    ("ValueError: Expected parameter loc (Tensor of shape (4,)) to satisfy the constraint Real(), but found "
     "invalid values:\ntensor([nan, nan])", True),
    ("OverflowError: cannot convert float infinity to integer", True),
    ("ValueError: too many values to unpack (expected 2)", False),
    ("IndexError: index 5 is out of bounds for axis 0 with size 3", False),
])
def test_a_seed_that_breaks_on_non_finite_numbers_is_called_diverged(error, diverged):
    from icml24.core.executors import looks_diverged

    assert looks_diverged("Traceback (most recent call last):\n  File \"x.py\", line 1\n" + error) is diverged



@pytest.mark.ray
def test_a_seed_asking_more_cpus_than_the_cluster_has_is_refused_and_a_local_ray_fits_it(tmp_path):
    """Ray would wait forever for a unit that asks more CPUs than the cluster has: refused at once on a cluster; a
    local Ray is started large enough for `workers` such units."""
    pytest.importorskip("ray")
    code = ("import ray\nfrom icml24.core import testing\nfrom icml24.core.errors import UserError\n"
            "from icml24.core.executors import Unit, execute\n"
            "units = [Unit('s', 'm', 'smoke', (), 'h', k, num_cpus=3) for k in range(2)]\n"
            "print([o.result['CPU'] for o in execute(units, fn=testing.assigned_resources, executor='ray', workers=1)])\n"
            "print(ray.cluster_resources()['CPU'])\n"
            "big = [Unit('s', 'm', 'smoke', (), 'h', 0, num_cpus=4)]\n"
            "try:\n    list(execute(big, fn=testing.assigned_resources, executor='ray'))\n"
            "except UserError as exc:\n    print(exc)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["[3.0, 3.0]", "3.0", "s: a seed asks for 4 CPU but the Ray cluster has 3; lower "
                                       "threads or grow the cluster"]

@pytest.mark.ray
def test_a_local_ray_start_prints_no_token_warning(tmp_path):
    """Ray warns on every local start that it enabled token authentication (its default): the executor keeps the
    authentication and drops the warning."""
    pytest.importorskip("ray")
    code = ("from icml24.core import testing\nfrom icml24.core.executors import execute\n"
            "print([o.result for o in execute([1, 2], fn=testing.square, executor='ray', workers=1)])\n"
            "print(sorted(next(execute([1], fn=testing.malloc_environment, executor='ray', workers=1)).result['env'].items()))")
    env = {k: v for k, v in os.environ.items() if k != "RAY_AUTH_MODE" and k not in WORKER_MALLOC}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "'y': 4" in out.stdout and "Token authentication" not in out.stderr, out.stderr[-2000:]
    assert out.stdout.splitlines()[-1] == str(sorted(WORKER_MALLOC.items()))      # Ray's workers get the allocator settings


_ORPHAN_SCRIPT = """
import os, sys, time
from icml24.core.executors import _process

def slow(unit):
    open(os.path.join(sys.argv[1], str(os.getpid())), "w").close()
    time.sleep(120)
    return unit

if __name__ == "__main__":
    for _ in _process(slow, [1], 0, 1):
        pass
"""


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_a_worker_ends_when_its_parent_is_killed(tmp_path):
    # SIGTERM ends the parent without cleanup; its process-pool worker must not run its seed to the end
    import signal
    import time

    def alive(pid: int) -> bool:          # a zombie (exited, not yet reaped by whoever adopted it) is not
        try:
            with open(f"/proc/{pid}/stat") as fh:
                return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
        except FileNotFoundError:
            return False

    script = tmp_path / "orphan.py"
    script.write_text(_ORPHAN_SCRIPT)
    marks = tmp_path / "marks"
    marks.mkdir()
    parent = subprocess.Popen([sys.executable, str(script), str(marks)])
    try:
        deadline = time.monotonic() + 60
        while not any(marks.iterdir()) and time.monotonic() < deadline:
            time.sleep(0.1)
        worker = int(next(marks.iterdir()).name)
        assert alive(worker)                                 # the worker is running its unit
        parent.send_signal(signal.SIGTERM)
        parent.wait(timeout=30)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if not alive(worker):
                return
            time.sleep(0.2)
        os.kill(worker, signal.SIGKILL)
        raise AssertionError("the worker outlived its parent by 15 s")
    finally:
        parent.kill()


BUILD_ONCE = """
import sys, time
from pathlib import Path
from icml24.core.executors import UnitContext

cache, log, label = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
asked = log.parent / "asked"

def build(folder):
    with open(log, "a") as fh:
        fh.write("built\\n")
    deadline = time.time() + 30                      # build until both processes have asked for the artefact
    while len(list(asked.iterdir())) < 2 and time.time() < deadline:
        time.sleep(0.05)
    (folder / "x.txt").write_text("x")

(asked / label).touch()
print(UnitContext(cache_dir=cache, code_hash="h", label=label).artefact("table", {"n": 1}, build))
"""


def test_two_workers_asking_for_one_artefact_build_it_once(tmp_path):
    """The second process waits for the first one's build (executors._build_lock) instead of building it too: the
    build lasts until both have asked for it, so without the lock both would build it."""
    script, cache, log = tmp_path / "build.py", tmp_path / "cache", tmp_path / "log"
    script.write_text(BUILD_ONCE)
    (tmp_path / "asked").mkdir()
    procs = [subprocess.Popen([sys.executable, str(script), str(cache), str(log), f"w{k}"], stdout=subprocess.PIPE,
                              text=True) for k in range(2)]
    try:
        folders = [p.communicate(timeout=90)[0].strip() for p in procs]
    finally:
        for p in procs:
            p.kill()
    assert [p.returncode for p in procs] == [0, 0]
    assert log.read_text().splitlines() == ["built"]
    assert folders[0] == folders[1] and (cache / folders[0].split("/")[-1] / "x.txt").read_text() == "x"

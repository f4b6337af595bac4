"""The executor (dpaudit.core.executor): schedulers, determinism, faults and workers' lifetime."""
import json
import os
import pathlib
import pickle
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from dpaudit.commands.cli import main
from dpaudit.core import executor
from dpaudit.errors import InputError

ROOT = pathlib.Path(__file__).resolve().parents[2]
# a small audit that still runs every stage (instance fixed, the neighbour search, pilots,
# measurement, white-box): 6 s on 2 cores
SMALL = ["run", "--algo", "adap-tt", "--eps", "0.5", "--runs", "2000", "--instances", "fixed",
         "--seed", "1"]
TIMING = ("runtime_s",)    # fields that may differ between two runs of one audit


def _dask() -> None:
    pytest.importorskip("dask.distributed", reason="the dask extra is not installed")


def _without_timing(x: object) -> object:
    if isinstance(x, dict):
        return {k: _without_timing(v) for k, v in x.items() if k not in TIMING}
    if isinstance(x, list):
        return [_without_timing(v) for v in x]
    return x


def _spawned(parent: int) -> set[int]:
    """The worker processes of ``parent``: its children started by multiprocessing's spawn."""
    out = set()
    for d in pathlib.Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmd = (d / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == parent and b"spawn_main" in cmd:
            out.add(int(d.name))
    return out


def _alive(pids: set[int]) -> set[int]:
    out = set()
    for p in pids:
        try:
            state = pathlib.Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            out.add(p)
    return out


def _start(argv: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "dpaudit", *argv], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, executor.ENV: ""})


def _wait_for_workers(p: subprocess.Popen, n: int, timeout: float = 60) -> set[int]:
    end = time.monotonic() + timeout
    while time.monotonic() < end and p.poll() is None:
        if len(got := _spawned(p.pid)) >= n:
            return got
        time.sleep(0.1)
    pytest.fail(f"the audit did not start {n} workers within {timeout} s")


def test_the_scheduler_is_the_blocks_then_the_environments_then_processes(monkeypatch):
    monkeypatch.delenv(executor.ENV, raising=False)
    assert executor.scheduler() == "processes"
    monkeypatch.setenv(executor.ENV, "dask")
    assert executor.scheduler() == "dask"
    with executor.use("tcp://10.0.0.1:8786"):
        assert executor.scheduler() == "tcp://10.0.0.1:8786"
        with executor.use(None):
            assert executor.scheduler() == "tcp://10.0.0.1:8786"
    assert executor.scheduler() == "dask"
    monkeypatch.setenv(executor.ENV, "mpi")
    with pytest.raises(InputError, match="DPAUDIT_SCHEDULER 'mpi' is not a scheduler"):
        executor.scheduler()


@pytest.mark.parametrize("flags, says", [
    (["--scheduler", "threads"], "--scheduler 'threads' is not a scheduler; expected processes"),
    (["--workers", "100000"], "--workers 100000 is out of range: at most "),
])
def test_a_bad_scheduler_or_far_too_many_workers_is_refused_in_one_line(flags, says, capsys,
                                                                          tmp_path):
    assert main([*SMALL, "--json", str(tmp_path / "out.json"), *flags]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1
    assert not list(tmp_path.iterdir())


def test_far_too_many_workers_are_refused_in_the_python_api_too():
    with pytest.raises(InputError, match="--workers 100000 is out of range"):
        executor.check_workers(100000)
    assert executor.check_workers(executor.default_workers()) == executor.default_workers()


def _dies_once(x: tuple[str, int]) -> int:
    """x²; the task 3 kills its worker the first time it runs (a marker file remembers)."""
    marker, i = x
    if i == 3 and not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(9)
    return i * i


@pytest.mark.slow
def test_a_task_whose_worker_dies_is_run_again_and_the_map_is_unchanged(tmp_path, monkeypatch):
    monkeypatch.delenv(executor.ENV, raising=False)
    marker = str(tmp_path / "died")
    got = list(executor.map_tasks(_dies_once, [(marker, i) for i in range(8)], 2))
    assert os.path.exists(marker)          # the worker did die
    assert got == [i * i for i in range(8)]


@pytest.mark.parametrize("n_tasks, workers", [(0, 2), (1, 2), (2, 2), (34, 2), (256, 2),
                                               (1000, 8)])
def test_dask_batches_cover_the_tasks_in_order_and_shrink_to_single_tasks(n_tasks, workers):
    spans = executor.guided_batches(n_tasks, workers)
    assert [i for a, b in spans for i in range(a, b)] == list(range(n_tasks))
    sizes = [b - a for a, b in spans]
    assert sizes == sorted(sizes, reverse=True)
    if n_tasks:
        assert sizes[0] == max(1, n_tasks // (executor.GUIDED * workers))
        assert sizes[-1] == 1
    # few Dask tasks: about GUIDED·workers·ln(n) batches, not one per task
    assert len(spans) <= executor.GUIDED * workers * (1 + np.log(max(n_tasks, 1)))


def _slower_first(i: int) -> tuple[int, bool]:
    """(i, whether this worker samples its stacks); the earlier the task, the longer it sleeps."""
    import dask
    time.sleep(0.005 * (40 - i))
    return i, dask.config.get("distributed.worker.profile.enabled")


@pytest.mark.slow
def test_a_dask_map_that_ends_out_of_order_comes_back_in_task_order(monkeypatch):
    """Later batches end first; the workers of dpaudit's LocalCluster run without the profiler."""
    _dask()
    with executor.use("dask"):
        got = list(executor.map_tasks(_slower_first, list(range(40)), 2))
    assert [i for i, _ in got] == list(range(40))
    assert not any(profiled for _, profiled in got)


def _results(tmp_path: pathlib.Path, configs: list) -> dict:
    """The small audit's JSON (times left out) per (scheduler, workers)."""
    out = {}
    for scheduler, workers in configs:
        path = tmp_path / f"{len(out)}.json"
        p = _start([*SMALL, "--json", str(path), "--scheduler", scheduler,
                    "--workers", str(workers)])
        assert p.wait(120) in (0, 1, 3), p.stderr.read().decode()   # a verdict
        out[scheduler, workers] = _without_timing(json.loads(path.read_text()))
    return out


@pytest.mark.slow
@pytest.mark.cli
def test_the_audit_is_the_same_on_one_or_two_processes_and_on_dask(tmp_path):
    """The must-show of issue 63 on a small budget: processes/1, processes/2, dask/2."""
    _dask()
    out = _results(tmp_path, [("processes", 1), ("processes", 2), ("dask", 2)])
    one = out["processes", 1]
    assert one["verdict"] and one["search"]
    for key, got in out.items():
        assert got == one, key


@pytest.mark.slow
@pytest.mark.cli
def test_the_audit_on_a_running_dask_scheduler_is_the_same(tmp_path):
    """A LocalCluster of two worker processes stands for `dask scheduler` + `dask worker`."""
    _dask()
    from dask.distributed import LocalCluster
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster:
        out = _results(tmp_path, [("processes", 2), (cluster.scheduler_address, 1)])
    assert out[cluster.scheduler_address, 1] == out["processes", 2]


@pytest.mark.slow
@pytest.mark.cli
def test_a_dask_worker_killed_mid_audit_leaves_the_result_unchanged(tmp_path):
    _dask()
    results = []
    for kill in (False, True):
        path = tmp_path / f"{kill}.json"
        p = _start([*SMALL, "--json", str(path), "--scheduler", "dask", "--workers", "2"])
        workers = _wait_for_workers(p, 2)
        if kill:
            time.sleep(2.0)                 # the cluster is up and the audit under way
            os.kill(min(workers), signal.SIGKILL)
        assert p.wait(120) in (0, 1, 3), p.stderr.read().decode()   # a verdict
        results.append(_without_timing(json.loads(path.read_text())))
        if kill:
            assert min(workers) not in _alive(workers)
    assert results[1] == results[0]


@pytest.mark.slow
@pytest.mark.cli
@pytest.mark.parametrize("scheduler", ["processes", "dask"])
def test_no_worker_outlives_an_audit_killed_by_sigkill(scheduler, tmp_path):
    if scheduler == "dask":
        _dask()
    p = _start(["run", "--algo", "adap-tt", "--eps", "0.5", "--runs", "200000", "--seed", "1",
                "--scheduler", scheduler, "--workers", "2", "--json", str(tmp_path / "o.json")])
    workers = _wait_for_workers(p, 2)
    time.sleep(1.0)
    p.kill()
    p.wait(10)
    end = time.monotonic() + 10
    while _alive(workers) and time.monotonic() < end:
        time.sleep(0.2)
    assert not _alive(workers), f"workers {sorted(_alive(workers))} outlived their parent"


def _preloaded(_: int) -> tuple[int, bool]:
    """(this worker's pid, whether it imported the test's preload before any task asked)."""
    return os.getpid(), "xml.dom.minidom" in sys.modules


@pytest.mark.slow
def test_a_prestarted_pool_is_up_before_its_first_map_with_its_modules_imported(monkeypatch):
    monkeypatch.delenv(executor.ENV, raising=False)
    executor.close()
    try:
        executor.prestart(2, ("xml.dom.minidom",))
        end = time.monotonic() + 60
        while len(up := _spawned(os.getpid())) < 2 and time.monotonic() < end:
            time.sleep(0.05)
        assert len(up) == 2                           # started before any map
        got = list(executor.map_tasks(_preloaded, list(range(8)), 2))
        assert {pid for pid, _ in got} <= up          # the map ran on them
        assert all(imported for _, imported in got)
    finally:
        executor.close()


def test_prestart_starts_nothing_for_an_address_one_worker_or_far_too_many(monkeypatch):
    monkeypatch.delenv(executor.ENV, raising=False)
    executor.close()
    with executor.use("tcp://127.0.0.1:1"):
        executor.prestart(2)
    executor.prestart(1)
    with pytest.raises(InputError, match="--workers"):
        executor.prestart(10_000)
    assert not _spawned(os.getpid())
    executor.close()


@pytest.mark.slow
def test_a_prestarted_dask_cluster_is_the_one_the_first_map_uses(monkeypatch):
    """prestart on dask starts the LocalCluster in a thread, its workers preloading; the map
    joins it instead of starting a second cluster."""
    _dask()
    monkeypatch.delenv(executor.ENV, raising=False)
    executor.close()
    with executor.use(executor.DASK):
        executor.prestart(2, ("json",))
        assert (executor.DASK, 2) in executor._STARTING
        got = list(executor.map_tasks(abs, [-1, -2, -3], 2))
        client = executor._client(executor.DASK, 2)
    assert got == [1, 2, 3]
    assert len(executor._CLIENTS) == 1 and not executor._STARTING
    assert len(client.nthreads()) == 2
    executor.close()


def test_the_users_module_is_shipped_by_value_and_a_library_by_reference(tmp_path, monkeypatch):
    """A worker need not import the user's module (a folder put on sys.path after it started)."""
    (tmp_path / "users_own_module.py").write_text(
        "def helper(x):\n    return x + 1\n\n\ndef twice(x):\n    return 2 * helper(x)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import users_own_module  # noqa: PLC0415 (a module written by this test)
    shipped = executor.by_value(users_own_module.twice)
    monkeypatch.delitem(sys.modules, "users_own_module")
    sys.path.remove(str(tmp_path))
    assert pickle.loads(shipped)(3) == 8          # by reference it would need the module
    assert pickle.loads(executor.by_value(np.mean)) is np.mean

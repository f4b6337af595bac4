"""The one executor: every chunked computation of dpaudit runs through :func:`map_tasks`.

Kernel simulations, pilots and screens (:mod:`dpaudit.simulation.simulate`), a callable's
samples (:mod:`dpaudit.auditing.callables`), candidate screens (:mod:`dpaudit.auditing.search`),
correctness runs and reproductions (:mod:`dpaudit.reproduce`) and calibration audits
(:mod:`dpaudit.calibrate.calibration`) are maps of a pure function over a list of tasks. This
module runs such a map on one of three schedulers (docs/reference/executor.md):

* ``processes`` (the default): a pool of spawned worker processes on this machine, no
  services;
* ``dask``: a ``dask.distributed`` ``LocalCluster`` of single-threaded worker processes,
  started at its first use and closed when this process ends (the ``dask`` extra);
* the address of a running Dask scheduler (``tcp://host:port``): its workers, on any number
  of machines; ``workers`` is then what the cluster has.

The scheduler is this process's choice: :func:`use` (the command line's ``--scheduler``), else
the environment variable ``DPAUDIT_SCHEDULER``, else ``processes``.

Determinism: a task carries everything it draws from (its own ``SeedSequence`` child, keyed by
what it computes and its chunk index, never by a worker) and results come back in task order,
so a map's result is the same bit for bit on any scheduler and any number of workers. A task
is pure, so a task whose worker dies is run again: Dask resubmits it to another worker; the
process pool is rebuilt once and the unfinished tasks are submitted again.

Worker processes end with their parent, even one killed by SIGKILL: each watches its parent
(:func:`dpaudit.core.interrupt.worker_init`; Dask's own worker processes exit when the pipe
to their parent closes).
"""
from __future__ import annotations

import atexit
import contextlib
import importlib
import logging
import multiprocessing as mp
import os
import pickle
import re
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import resource_tracker

from dpaudit.core import interrupt
from dpaudit.errors import InputError, user_file

PROCESSES, DASK = "processes", "dask"
ENV = "DPAUDIT_SCHEDULER"
GUIDED = 2               # a Dask batch holds 1/(GUIDED·workers) of a map's tasks left
WORKERS_PER_CORE = 4     # --workers above this many per core is refused (no speed, only memory)
QUIET_DASK = {    # a LocalCluster's periodic chores, rarer (idle: 12 % of a core -> 2 %)
    "distributed.worker.profile.enabled": False,            # a stack sample every 10 ms
    "distributed.admin.tick.interval": "1s",                # event-loop health, every 20 ms
    "distributed.worker.memory.monitor-interval": "1s",     # memory limits, every 100 ms
    "distributed.admin.system-monitor.interval": "2s",      # psutil readings, every 500 ms
}
_ADDRESS = re.compile(r"^(tcp|tls|ucx|ws|wss)://[^\s/]+:\d+/?$")
_chosen: list[str] = []              # use()'s stack
_POOLS: dict[int, ProcessPoolExecutor] = {}
_CLIENTS: dict[tuple, object] = {}   # (scheduler, workers) -> dask Client
_STARTING: dict[tuple, threading.Thread] = {}   # prestart's LocalClusters being started
PARENT_POLL_S = 0.5      # seconds between a worker's looks at its parent
_in_worker = False       # this process is a pool's worker (worker_init)


def check_scheduler(scheduler: str, what: str = "--scheduler") -> str:
    """The scheduler's name, checked.

    Args:
        scheduler: ``processes``, ``dask`` or a Dask scheduler's address ``tcp://host:port``.
        what: the name of the setting in the error message.

    Returns:
        ``scheduler``.

    Raises:
        InputError: any other value.
    """
    if scheduler in (PROCESSES, DASK) or _ADDRESS.match(str(scheduler)):
        return scheduler
    raise InputError(f"{what} {scheduler!r} is not a scheduler; expected {PROCESSES}, {DASK} "
                     "or a Dask scheduler's address tcp://host:port")


def scheduler() -> str:
    """The scheduler maps run on: :func:`use`'s, else ``$DPAUDIT_SCHEDULER``, else processes.

    Raises:
        InputError: ``DPAUDIT_SCHEDULER`` names no scheduler.
    """
    if _chosen:
        return _chosen[-1]
    return check_scheduler(os.environ.get(ENV) or PROCESSES, ENV)


@contextlib.contextmanager
def use(name: str | None) -> Iterator[None]:
    """Run the maps of the block on scheduler ``name`` (None: leave the choice as it is).

    Args:
        name: ``processes``, ``dask`` or a Dask scheduler's address.

    Raises:
        InputError: ``name`` is not a scheduler.
    """
    if name is None:
        yield
        return
    _chosen.append(check_scheduler(name))
    try:
        yield
    finally:
        _chosen.pop()


def default_workers() -> int:
    """The workers used when none is given: every core this process may use."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
               else (os.cpu_count() or 1))


def check_workers(workers: int, what: str = "--workers") -> int:
    """``workers``, refused when far above this machine's cores.

    Args:
        workers: worker processes asked for (≥ 1).
        what: the name of the setting in the error message.

    Returns:
        ``workers``.

    Raises:
        InputError: more than :data:`WORKERS_PER_CORE` per core.
    """
    cap = WORKERS_PER_CORE * default_workers()
    if workers > cap:
        raise InputError(f"{what} {workers} is out of range: at most {cap} on this machine "
                         f"({WORKERS_PER_CORE} per core, {default_workers()} cores); a cluster's "
                         "workers are those of its scheduler (--scheduler tcp://host:port)")
    return workers


def by_value(obj: object) -> bytes:
    """``obj`` (the user's function or callable) pickled for a worker, its module's code by value.

    cloudpickle pickles a function of an importable module by reference, but a worker may not
    import it (a folder added to ``sys.path`` after the workers started, a Dask worker on
    another machine): the user's own modules (:func:`dpaudit.errors.user_file`) go by value,
    with the functions they hold; libraries by reference.

    Args:
        obj: a picklable object (cloudpickle: closures and lambdas too).

    Returns:
        The bytes, for ``cloudpickle.loads`` (or ``pickle.loads``) in a worker.
    """
    import cloudpickle
    module = sys.modules.get(getattr(obj, "__module__", None) or "")
    if module is None or module.__name__ == "__main__" \
            or not user_file(getattr(module, "__file__", None)):
        return cloudpickle.dumps(obj)
    cloudpickle.register_pickle_by_value(module)
    try:
        return cloudpickle.dumps(obj)
    finally:
        cloudpickle.unregister_pickle_by_value(module)


def map_tasks(fn: Callable, tasks: list, workers: int) -> Iterator:
    """``map(fn, tasks)`` on the chosen scheduler (:func:`scheduler`), results in task order.

    Args:
        fn: a pure function of one task, importable by name (workers re-import it).
        tasks: the tasks (picklable).
        workers: worker processes of a local scheduler (1 and ``processes``: in this process);
            an address's cluster has its own. In a worker process (a task that maps) the map
            runs in that process.

    Returns:
        An iterator of ``fn(task)`` per task, in order.

    Raises:
        InputError: a bad scheduler or far too many workers.
    """
    name = scheduler()
    if _inside_worker() or len(tasks) <= 1:
        return map(fn, tasks)     # a task's own maps run where it runs: no pool in a pool
    if name == PROCESSES:
        if workers <= 1:
            return map(fn, tasks)
        return _pool_map(fn, list(tasks), check_workers(workers))
    return _dask_map(fn, list(tasks), name, workers)


def _inside_worker() -> bool:
    """Whether this process is one of the executor's workers (a pool's or a Dask worker)."""
    if _in_worker:
        return True
    dist = sys.modules.get("distributed")
    if dist is None:
        return False
    try:
        dist.get_worker()
    except ValueError:        # not in a Dask task
        return False
    return True


def _pool(workers: int, preload: tuple[str, ...] = ()) -> ProcessPoolExecutor:
    if workers not in _POOLS:
        _POOLS[workers] = ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn"),
                                              initializer=worker_init,
                                              initargs=(os.getpid(), preload))
    return _POOLS[workers]


def prestart(workers: int, preload: tuple[str, ...] = ()) -> None:
    """Start the process pool of ``workers`` now, its workers importing ``preload`` first.

    A pool's workers otherwise start at its first map: their start (an interpreter, then
    the modules the tasks need, about a second) then delays that map. Started before the
    caller's own imports, they import while it does (the ``dpaudit`` command:
    :mod:`dpaudit.__main__`). On ``dask`` the ``LocalCluster`` of ``workers`` starts in a
    thread, its workers importing ``preload`` too; the first map waits for it (an error there
    is raised by that map). Nothing is started for a cluster's address, for one worker or in
    a worker; the maps of ``workers`` then use this pool or cluster.

    Args:
        workers: the pool's worker processes (as the maps will ask for).
        preload: modules each worker imports as it starts (names, e.g. the modules defining
            the tasks' functions).

    Raises:
        InputError: a bad scheduler (``$DPAUDIT_SCHEDULER``) or far too many workers.
    """
    if workers <= 1 or _inside_worker():
        return
    if scheduler() == DASK:
        key = (DASK, check_workers(workers))
        if key not in _CLIENTS and key not in _STARTING:
            _STARTING[key] = threading.Thread(target=_start_quietly, args=(workers, preload),
                                              name="dpaudit-dask-start", daemon=True)
            _STARTING[key].start()
        return
    if scheduler() != PROCESSES or workers in _POOLS:
        return
    pool = _pool(check_workers(workers), preload)
    with launching():         # a submit launches one worker while none is idle
        for _ in range(workers):
            pool.submit(os.getpid)


def _pool_map(fn: Callable, tasks: list, workers: int) -> Iterator:
    """The process pool's map; a pool broken by a dead worker is rebuilt once."""
    done = 0
    for attempt in (0, 1):
        with launching():     # submitting launches the workers, if not yet up
            stream = _pool(workers).map(fn, tasks[done:])
        try:
            for r in stream:
                done += 1
                yield r
            return
        except BrokenProcessPool:
            _POOLS.pop(workers).shutdown(wait=False, cancel_futures=True)
            if attempt:
                raise


def _dask_map(fn: Callable, tasks: list, name: str, workers: int) -> Iterator:
    """The map on Dask, its tasks sent in batches (:func:`guided_batches`).

    Dask spends about 2 ms per task; an audit's maps hold hundreds of small tasks, so a batch
    of tasks is one Dask task, submitted in order (Dask hands the earliest submitted to the
    next free worker): large batches first, then ever smaller ones, so that the workers end
    their last batches nearly together; results in task order all the same. A batch goes as
    one pickled bytes object, as the process pool pickles a task: Dask otherwise unpickles a
    task's arguments in the scheduler and pickles them again for the worker (a map of 6 MB of
    neighbouring tables waited 0.7 s for it, 0.2 s as bytes). A batch's results are fetched as
    soon as it ends (``as_completed``), not one batch after another (a round trip each).
    """
    from dask.distributed import as_completed
    client = _client(name, workers)
    n_workers = workers if name == DASK else max(1, sum(client.nthreads().values()))
    spans = guided_batches(len(tasks), n_workers)
    payloads = [pickle.dumps((fn, tasks[a:b]), pickle.HIGHEST_PROTOCOL) for a, b in spans]
    with warnings.catch_warnings():     # tasks carry their tables (pure tasks): a large graph
        warnings.filterwarnings("ignore", "Sending large graph", UserWarning)
        futures = client.map(_batch, payloads, pure=False)
    batch = {f.key: i for i, f in enumerate(futures)}
    arrived = as_completed(futures, with_results=True)   # fetched as they end, not one by one
    got: list = [None] * len(spans)
    try:
        for i in range(len(spans)):
            while got[i] is None:
                future, result = next(arrived)
                got[batch[future.key]] = result
            yield from got[i]
            got[i] = ()
    finally:
        client.cancel(futures)


def guided_batches(n_tasks: int, workers: int) -> list[tuple[int, int]]:
    """Contiguous batches [a, b) of ``n_tasks`` tasks for ``workers`` (guided self-scheduling).

    Each batch holds 1/(:data:`GUIDED` · workers) of the tasks not yet in a batch, at least
    one (Polychronopoulos and Kuck, IEEE Trans. Computers 36(12), 1987): the first batches are
    large (few Dask tasks), the last ones hold a task each, so a worker that ends its batch
    early takes a small one and the workers end together; equal batches leave one worker
    idle while the other ends its last batch.

    Args:
        n_tasks: tasks of the map (≥ 0).
        workers: workers that run them (≥ 1).

    Returns:
        The batches in order, covering 0 .. n_tasks − 1.
    """
    spans, a = [], 0
    while a < n_tasks:
        b = a + max(1, (n_tasks - a) // (GUIDED * workers))
        spans.append((a, b))
        a = b
    return spans


def _batch(payload: bytes) -> list:
    """``fn`` of each task of a batch, in order (``payload``: the pickled ``(fn, tasks)``)."""
    fn, tasks = pickle.loads(payload)
    return [fn(t) for t in tasks]


def _start_quietly(workers: int, preload: tuple[str, ...]) -> None:
    """:func:`_client` of a LocalCluster in prestart's thread; a failure is left to the map."""
    with contextlib.suppress(Exception):
        _client(DASK, workers, preload)


def _client(name: str, workers: int, preload: tuple[str, ...] = ()):
    """The Dask client of ``name`` (a LocalCluster of ``workers`` started at its first use)."""
    key = (name, workers if name == DASK else 0)
    starting = _STARTING.get(key)
    if starting is not None and starting is not threading.current_thread():
        starting.join()
        _STARTING.pop(key, None)
    if key not in _CLIENTS:
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise InputError(f"--scheduler {name} needs Dask: pip install 'dpaudit[dask]'") \
                from None
        if name == DASK:
            import dask
            with launching(), dask.config.set(QUIET_DASK):
                cluster = LocalCluster(n_workers=check_workers(workers), threads_per_worker=1,
                                       processes=True, dashboard_address=None,
                                       silence_logs=logging.ERROR, preload=list(preload))
            _CLIENTS[key] = Client(cluster)
        else:
            _CLIENTS[key] = Client(name)
    return _CLIENTS[key]


@atexit.register
def close() -> None:
    """Close the Dask clients and the clusters this process started, then the process pools."""
    while _CLIENTS:
        client = _CLIENTS.popitem()[1]
        cluster = client.cluster
        with contextlib.suppress(Exception):
            client.close()
            if cluster is not None:
                cluster.close()
    while _POOLS:
        _POOLS.popitem()[1].shutdown(wait=True, cancel_futures=True)


@contextlib.contextmanager
def launching() -> Iterator[None]:
    """:func:`dpaudit.core.interrupt.held` around the start of worker processes.

    A signal during their start-up (the imports, a second or more) waits for
    :func:`worker_init`; the workers inherit the blocked signals. multiprocessing's resource
    tracker is started first: its start unblocks both signals in the calling thread.
    """
    resource_tracker.ensure_running()
    with interrupt.held():
        yield


def worker_init(parent: int | None = None, preload: tuple[str, ...] = ()) -> None:
    """Initializer of the pool's worker processes.

    Mark this process as a worker (its tasks' own maps run in it), ignore SIGINT (the parent
    stops them), die on SIGTERM, then unblock both; with ``parent``,
    end this process when that parent is gone (killed by SIGKILL included: the pool cannot tell
    its workers, whose pipes stay open); then import ``preload``.

    Args:
        parent: the parent's process id (None: not watched).
        preload: names of modules to import (:func:`prestart`).
    """
    global _in_worker
    _in_worker = True
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, interrupt.EXIT_CODES)
    if parent is not None:
        threading.Thread(target=_watch, args=(parent,), name="dpaudit-parent",
                         daemon=True).start()
    for name in preload:
        importlib.import_module(name)


def _watch(parent: int) -> None:
    """End this process once ``parent`` is no longer its parent (it died: re-parented)."""
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_S)
    os._exit(1)


def _kill_workers() -> None:
    """Kill and reap every worker process (a signal ends this process: interrupt.on_stop)."""
    children = mp.active_children()
    for p in children:
        p.kill()
    for p in children:
        p.join(1.0)
    util = sys.modules.get("multiprocessing.util")
    if util:    # unlink the pools' semaphores as the interpreter's exit does (else the resource
        util._exiting = True                 # tracker warns of leaks), queue threads told to
        with contextlib.suppress(Exception):     # stay quiet; priority ≥ 0: no thread joins
            util._run_finalizers(0)
    with contextlib.suppress(Exception):     # then end the tracker (reaped, not orphaned)
        resource_tracker._resource_tracker._stop()


interrupt.on_stop(_kill_workers)

"""Compiled, batched simulation of bandit algorithms on fixed reward tables.

Kernel contract
---------------
Every algorithm is one numba ``@njit`` function::

    kernel(rng, table, means, theta, aux, limit, actions, releases, frozen)
        -> (tau, rec, status, n_rel)

* ``rng``: a ``numpy.random.Generator`` (the run's only source of randomness besides the
  rewards of rows beyond the table).
* ``table``: float64, values in [0, 1], the reward table of the algorithm's privacy model
  (docs/method/architecture.md, :mod:`dpaudit.data.tables`): ``user``/``full`` (T, K), the t-th sample
  (0-based)
  reads ``table[t, a_t]`` (``full``: the whole row); ``stream`` (K, T), the n-th pull of arm
  a reads ``table[a, n]``. Entries beyond the table are drawn afresh, ``Bernoulli(means[a])``
  (used by benchmarks and correctness checks; audits simulate at most the table's horizon,
  so they only ever read the fixed table).
* ``means``: float64, shape (K,).
* ``theta`` / ``aux``: float64 parameter vector and precomputed tables (layout owned by the
  algorithm's module).
* ``limit``: simulate at most this many samples.
* ``actions``: int16 buffer; the kernel writes ``actions[t] = a_t`` for ``t < len(actions)``.
* ``releases``: float64 buffer of shape (R, 8), the white-box log
  (docs/method/whitebox.md): the kernel
  writes one row per noisy release while rows remain, with columns :data:`RELEASE_COLUMNS`
  (``t`` = samples taken when released, ``arm``, ``phase``, ``count`` = samples in the
  released statistic, ``value`` = the exact statistic, ``noisy`` = the released value,
  ``scale`` = noise scale, ``dist`` = noise family). ``n_rel`` = releases made. Families:

  - :data:`LAPLACE` (0): ``noisy = value + Lap(scale)``, density ∝ exp(−|y − value|/scale);
  - :data:`GAUSSIAN` (1): ``noisy = value + N(0, scale²)`` (``scale`` = standard deviation);
  - :data:`RANDOMISED_RESPONSE` (2): binary output ``noisy`` ∈ {0, 1} for ``value`` v ∈ [0, 1]
    with P(noisy = 1 | v) = (1 + v·(e^s − 1))/(1 + e^s), ``scale`` = s (v = 1 is kept with
    probability e^s/(1 + e^s)).
  - :data:`COIN` (3): a uniform draw ``noisy`` ∈ {0, ..., k − 1}, ``scale`` = k, ``value`` 0
    (randomness that reads no data, e.g. a uniformly drawn arm, logged so that a replay can
    freeze it; its privacy loss is 0).
* ``frozen``: float64 1-D array of released values to replay (gray-box replay,
  docs/method/whitebox.md):
  release j (0-based) releases ``frozen[j]`` when ``j < len(frozen)`` and its own noisy value
  otherwise. The noise of every release is **always drawn** from ``rng`` first, frozen or not,
  so a replay with the same rng stream stays aligned with the run it replays. Normal simulation
  passes an empty array. :mod:`dpaudit.auditing.whitebox` uses it to compute the exact privacy loss
  of
  the releases and to detect decisions that read raw data.

It returns ``tau`` (number of samples taken, the toolkit's τ), ``rec`` (recommended arm, or -1)
and ``status``: :data:`STOPPED`, :data:`TRUNCATED` (``limit`` reached, the algorithm would go
on) or :data:`CAPPED` (the algorithm's own data-independent ``max_steps`` reached: it halts
without a decision).

Features
--------
A run's transcript is (a_1..a_τ, τ, â). The shared batch loop turns it into feature *cells*,
one per *view*: a sequence view [s, e) is the 64-bit FNV-1a hash of the actions of samples
s..e−1 (those taken before τ), a counts view [s, e) how often each arm was played among them
(Σ (e − s + 1)^a over the actions a, exact while it fits in 64 bits), each plus (τ, â, status)
when the run ended within e samples. Prefix views
[0, L) are the transcript truncated at L samples; windows [t + 1, t + 1 + w) follow the
actions right after a changed row t (:mod:`dpaudit.auditing.audit`). Each view is a function of the
released transcript, so any event on it is a post-processing of the output and a valid audit
event. Cells are counted per chunk of runs
and merged; trajectories are never stored.

Determinism: the runs are split into chunks of a fixed size; chunk i uses the i-th child of
``SeedSequence(seed)``. Chunk boundaries never depend on the number of workers, and merged
counts do not depend on completion order, so results are bit-identical for any ``workers``.
"""
from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace

import numba as nb
import numpy as np
from numpy.typing import ArrayLike

from dpaudit.core import executor, interrupt

STOPPED, TRUNCATED, CAPPED = 0, 1, 2
RELEASE_COLUMNS = ("t", "arm", "phase", "count", "value", "noisy", "scale", "dist")
LAPLACE, GAUSSIAN, RANDOMISED_RESPONSE, COIN = 0, 1, 2, 3  # release families (column dist)
STATUS_NAMES = ("stopped", "truncated", "capped")
CHUNK = 1 << 15  # runs per chunk (a fixed constant: part of the seeding contract)
OUTCOME_CHUNK = 64   # runs per chunk of outcomes(): part of its seeding contract

_FNV_OFFSET = np.uint64(1469598103934665603)
_FNV_PRIME = np.uint64(1099511628211)


@nb.njit(cache=True)
def _mix(h: np.uint64, x: int) -> np.uint64:
    return (h ^ np.uint64(x)) * _FNV_PRIME


SEQUENCE, COUNTS = 0, 1   # view kinds: the actions in order; how often each arm was played


@nb.njit(cache=True)
def _hash_views(actions: np.ndarray, tau: int, rec: int, status: int, views: np.ndarray,
                out: np.ndarray) -> None:
    """Write the view cells of one transcript into ``out``.

    Write the view cells of one transcript into ``out`` (len(views),); ``views`` (V, 3)
    sorted [start, end, kind) windows (sequence prefixes continue the previous one's hash).
    """
    h = _FNV_OFFSET
    s_prev, t = -1, 0
    for v in range(views.shape[0]):
        start, stop = views[v, 0], views[v, 1]
        end = min(stop, tau)
        if views[v, 2] == COUNTS:      # sum of (w + 1)^a over the actions: the arm counts
            base = np.uint64(stop - start + 1)
            c = np.uint64(0)
            for j in range(start, end):
                term = np.uint64(1)
                for _ in range(actions[j]):
                    term *= base
                c += term
            cell = c
        else:
            if start != s_prev:        # a new window start: hash from scratch
                h = _FNV_OFFSET
                t = start
                s_prev = start
            while t < end:
                h = _mix(h, actions[t] + 1)
                t += 1
            cell = h
        if tau <= stop and status != TRUNCATED:
            # the run ended inside this window: add the decision
            out[v] = _mix(_mix(_mix(cell, 0xFFFF), tau), (rec + 2) * 4 + status)
        else:
            out[v] = cell


def as_views(views: ArrayLike) -> np.ndarray:
    """Views as a sorted, duplicate-free int64 (V, 3) array.

    Args:
        views: a 1-D sequence of prefix lengths L (sequence windows [0, L)), (start, end)
            pairs (sequence windows) or (start, end, kind) triples, kind :data:`SEQUENCE` or
            :data:`COUNTS`.

    Returns:
        int64 array of shape (V, 3): [start, end) windows in samples and their kind.
    """
    v = np.asarray(views, dtype=np.int64)
    if v.ndim == 1:
        v = np.stack([np.zeros_like(v), v], axis=1)
    if v.size and v.shape[-1] == 2:
        v = np.concatenate([v.reshape(-1, 2), np.zeros((v.size // 2, 1), np.int64)], axis=1)
    return np.unique(v.reshape(-1, 3), axis=0)


@nb.njit(cache=True)
def batch_buffers(n_runs: int, views: np.ndarray, keep: int) -> tuple:
    """The buffers of a batch of runs (see :func:`run_batch` for the outputs).

    Args:
        n_runs: runs.
        views: the views (V, 3).
        keep: runs whose actions are kept.

    Returns:
        (actions, releases, frozen, kept, cells, taus, recs, stats).
    """
    n_views = views.shape[0]
    buf_len = views[:, 1].max() if n_views > 0 else 0
    return (np.empty(buf_len, np.int16), np.empty((0, 8)), np.empty(0),
            np.full((keep, buf_len), -1, np.int16), np.empty((n_runs, n_views), np.uint64),
            np.empty(n_runs, np.int64), np.empty(n_runs, np.int64), np.empty(n_runs, np.int8))


@nb.njit(cache=True)
def batch_record(i: int, buffers: tuple, tau: int, rec: int, status: int,
                 views: np.ndarray) -> None:
    """Record run ``i`` (its actions are in ``buffers[0]``) into the batch ``buffers``.

    Args:
        i: the run's index.
        buffers: the batch's buffers (:func:`batch_buffers`).
        tau: its stopping time (samples).
        rec: its recommendation.
        status: its status.
        views: the views (V, 3).
    """
    actions, _, _, kept, cells, taus, recs, stats = buffers
    taus[i] = tau
    recs[i] = rec
    stats[i] = status
    _hash_views(actions, tau, rec, status, views, cells[i])
    if i < kept.shape[0]:
        m = min(tau, actions.shape[0])
        kept[i, :m] = actions[:m]


@nb.njit(nogil=True)
def batch_body(kernel: Callable, rng: np.random.Generator, table: np.ndarray, means: np.ndarray,
               theta: np.ndarray, aux: np.ndarray, limit: int, n_runs: int, views: np.ndarray,
               keep: int) -> tuple:
    """The batch loop of :func:`run_batch` for any ``kernel`` (a first-class function).

    numba cannot cache it: a jitted function passed as an argument is typed by its memory
    address (numba #2956, #9348), so every process would compile it again (about 5 s per
    worker). Algorithm modules write the same three-line loop with their kernel called
    directly, cached, and declare it in ``BATCH_LOOPS`` (:func:`cached_loop`); other kernels
    (tests) use this one.

    Args:
        kernel: a compiled kernel (the kernel contract in the module doc).
        rng: the generator every run draws from.
        table: the reward table.
        means: the arms' means (rewards beyond the table).
        theta: the kernel's parameters.
        aux: its auxiliary array.
        limit: samples per run at most.
        n_runs: runs.
        views: the views (V, 3).
        keep: runs whose actions are kept.

    Returns:
        (cells, taus, recs, stats, kept), as :func:`run_batch`.
    """
    b = batch_buffers(n_runs, views, keep)
    for i in range(n_runs):
        tau, rec, status, _ = kernel(rng, table, means, theta, aux, limit, b[0], b[1], b[2])
        batch_record(i, b, tau, rec, status, views)
    return b[4], b[5], b[6], b[7], b[3]


def seed_sequence(seed: int | np.random.SeedSequence) -> np.random.SeedSequence:
    """A seed as a SeedSequence.

    Args:
        seed: an int or a SeedSequence (returned as it is).

    Returns:
        The SeedSequence.
    """
    return seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)


def child_seed(ss: np.random.SeedSequence, *key: int) -> np.random.SeedSequence:
    """The child ``ss.spawn`` would give at ``key``, without mutating ``ss``.

    Args:
        ss: the parent.
        *key: one index per level.

    Returns:
        The child SeedSequence.
    """
    return np.random.SeedSequence(ss.entropy, spawn_key=tuple(ss.spawn_key) + key,
                                  pool_size=ss.pool_size)


def cached_loop(kernel: Callable, kind: str = "BATCH_LOOPS") -> Callable | None:
    """The cached batch loop (or run/replay loop) of a kernel, or None.

    Args:
        kernel: a compiled kernel.
        kind: ``BATCH_LOOPS`` (loops of :func:`batch_body`) or ``PAIR_LOOPS`` (loops of
            :func:`dpaudit.auditing.whitebox.pair_body`).

    Returns:
        The loop its module declares in ``kind`` (a dict kernel -> loop, beside the
        kernels), or None.
    """
    module = sys.modules.get(getattr(kernel, "py_func", kernel).__module__)
    return getattr(module, kind, {}).get(kernel)


def run_batch(request: Request, keep: int = 0) -> tuple:
    """Run ``request.n_runs`` runs of its kernel at once.

    One generator, ``numpy.random.default_rng(request.seed)``, draws every run. The kernel's
    cached loop (:func:`cached_loop`) is used if its module declares one. The loop runs without
    the GIL in a helper thread while the calling thread waits (:func:`dpaudit.core.interrupt.call`):
    Ctrl-C, SIGTERM and test timeouts are handled during a long call.

    Args:
        request: the kernel, table, arrays, runs, samples per run, views and seed.
        keep: runs whose action prefixes are returned too.

    Returns:
        (cells, tau, rec, status, kept): ``cells`` uint64 (n_runs, len(views)) view cells,
        ``tau`` int64 (n_runs,) stopping times (samples), ``rec`` int64 (n_runs,)
        recommendations, ``status`` int8 (n_runs,) (stopped, truncated, capped), ``kept`` int16
        (keep, max end) the first ``keep`` runs' actions, -1 past τ.
    """
    r = request
    args = (np.random.default_rng(r.seed), r.table, r.means, r.theta, r.aux, r.samples,
            r.n_runs, as_views(r.views), keep)
    batch = cached_loop(r.kernel)
    if batch is None:
        batch, args = batch_body, (r.kernel, *args)
    return interrupt.call(batch, *args)     # off the main thread: signals are handled meanwhile


@dataclass
class Counts:
    """Merged simulation output for one table: cell counts per view and run summaries.

    ``cells[v]``, ``counts[v]``: sorted unique cell hashes of view ``v`` and their counts.
    ``status``: runs per status (stopped, truncated, capped). ``tau_sum``: Σ τ (samples
    simulated). ``rec``: stopped runs per recommended arm (values outside 0..K−1, e.g. a
    returned set encoded as a bitmask, are not counted).
    """

    n_runs: int
    views: np.ndarray
    cells: list
    counts: list
    status: np.ndarray
    tau_sum: int
    rec: np.ndarray

    def merged(self, other: "Counts") -> "Counts":
        """The counts of both samples together (same views).

        Args:
            other: counts of the same views.

        Returns:
            The merged :class:`Counts`.
        """
        cells, counts = _merge([(self.cells, self.counts), (other.cells, other.counts)],
                               len(self.views))
        return Counts(n_runs=self.n_runs + other.n_runs, views=self.views, cells=cells,
                      counts=counts, status=self.status + other.status,
                      tau_sum=self.tau_sum + other.tau_sum, rec=self.rec + other.rec)

    def hits(self, v: int, cell_set: np.ndarray) -> int:
        """The runs whose view-``v`` cell lies in a set of cells.

        Args:
            v: the view's index.
            cell_set: sorted uint64 cells.

        Returns:
            The number of runs.
        """
        mask = np.isin(self.cells[v], cell_set, assume_unique=True)
        return int(self.counts[v][mask].sum())


def _merge(parts: list, n_views: int) -> tuple[list, list]:
    cells, counts = [], []
    for v in range(n_views):
        c = np.concatenate([p[0][v] for p in parts])
        k = np.concatenate([p[1][v] for p in parts])
        u, inv = np.unique(c, return_inverse=True)
        cells.append(u)
        counts.append(np.bincount(inv, weights=k, minlength=len(u)).astype(np.int64))
    return cells, counts


def _chunk_job(r: Request):
    cells, taus, recs, stats, _ = run_batch(replace(r, kernel=_resolve(r.kernel)))
    per_view = [np.unique(cells[:, v], return_counts=True) for v in range(len(r.views))]
    K = r.means.shape[0]
    rec = recs[stats == STOPPED]
    rec = np.bincount(rec[(rec >= 0) & (rec < K)], minlength=K)   # a bitmask rec is not an arm
    return ([u for u, _ in per_view], [c for _, c in per_view],
            np.bincount(stats, minlength=3), int(taus.sum()), rec)


def _outcome_job(r: Request):
    _, tau, rec, status, _ = run_batch(replace(r, kernel=_resolve(r.kernel)))
    return tau, rec, status


def _resolve(kernel_ref: tuple | Callable) -> Callable:
    """Kernels travel to worker processes as (module, name) and are re-imported there."""
    if isinstance(kernel_ref, tuple):
        return getattr(importlib.import_module(kernel_ref[0]), kernel_ref[1])
    return kernel_ref


def _ref(kernel: Callable) -> tuple[str, str]:
    return (kernel.py_func.__module__, kernel.py_func.__name__)


@dataclass(frozen=True)
class Request:
    """Runs of one kernel on one table.

    Runs of one kernel on one table: what :func:`run_batch` runs at once and
    :func:`simulate_many` in chunks.

    Attributes:
        kernel: a compiled kernel (module doc: the kernel contract), or its (module, name).
        table: float64 table of the kernel's privacy model, values in [0, 1]; empty
            (:meth:`~dpaudit.data.tables.Model.fresh`): every reward drawn afresh.
        means, theta, aux: the kernel's float64 arrays
            (:class:`~dpaudit.algorithms.spec.Prepared`).
        n_runs: runs.
        seed: an int, a ``SeedSequence`` or a ``Generator``; :func:`simulate_many` and
            :func:`outcomes` seed chunk i by ``seed.spawn(...)[i]`` (a ``SeedSequence``).
        views: windows whose cells are counted (:func:`as_views`; ends ≤ the samples).
        limit: samples per run; None: the table's number of rows (a ``user`` table's
            horizon; give it for other models).
    """

    kernel: object
    table: np.ndarray
    means: np.ndarray
    theta: np.ndarray
    aux: np.ndarray
    n_runs: int
    seed: object
    views: object = ()
    limit: int | None = None

    @property
    def samples(self) -> int:
        """Samples per run at most: ``limit``, or the table's number of rows."""
        return self.table.shape[0] if self.limit is None else int(self.limit)


def simulate_many(requests: list, *, workers: int = 1,
                  progress: Callable | None = None) -> list[Counts]:
    """The feature-cell counts of every request's runs.

    The runs of every request are cut in chunks of :data:`CHUNK` runs (chunk i seeded by
    ``seed.spawn(...)[i]``), pooled in one map over the workers: many small simulations, e.g. a
    search round over hundreds of candidate tables, keep every core busy. The results are those
    of one call per request, bit for bit, whatever ``workers``.

    Args:
        requests: the :class:`Request` of each simulation.
        workers: processes.
        progress: optional callable(runs done).

    Returns:
        One :class:`Counts` per request, in order.
    """
    out = []
    for r, parts in zip(requests, _chunked(_chunk_job, requests, CHUNK, workers, progress)):
        cells, counts = _merge(parts, len(as_views(r.views)))
        out.append(Counts(n_runs=r.n_runs, views=as_views(r.views), cells=cells, counts=counts,
                          status=sum(p[2] for p in parts), tau_sum=sum(p[3] for p in parts),
                          rec=sum(p[4] for p in parts)))
    return out


def outcomes(request: Request, workers: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each run's (τ, rec, status) of a request (its views are ignored).

    Chunk i of :data:`OUTCOME_CHUNK` runs draws from ``request.seed.spawn(...)[i]``, so the
    result is the same for every ``workers``. With a :meth:`~dpaudit.data.tables.TableModel.fresh`
    table every run reads fresh rewards: the correctness checks and the papers' experiments.

    Args:
        request: the simulation.
        workers: processes.

    Returns:
        (tau, rec, status): int64 arrays of shape (n_runs,), in run order.
    """
    return outcomes_many([request], workers=workers)[0]


def outcomes_many(requests: list, *, workers: int = 1,
                  progress: Callable | None = None) -> list[tuple]:
    """:func:`outcomes` of every request, pooled in one map.

    Args:
        requests: the simulations.
        workers: processes; each result is that of one :func:`outcomes` call, bit for bit.
        progress: optional callable(runs done).

    Returns:
        One (tau, rec, status) triple per request, in order.
    """
    requests = [replace(r, views=np.zeros(0, np.int64)) for r in requests]
    return [tuple(np.concatenate([p[i] for p in parts]).astype(np.int64) for i in range(3))
            for parts in _chunked(_outcome_job, requests, OUTCOME_CHUNK, workers, progress)]


def _chunked(job: Callable, requests: list, size: int, workers: int,
             progress: Callable | None = None) -> list[list]:
    """``job`` over the chunks of every request, pooled over the workers.

    ``job`` over the chunks of ``size`` runs of every request (chunk i of a request
    seeded by its ``seed.spawn(...)[i]``), pooled over ``workers`` processes: per request, the
    chunks' results in order. ``progress``: optional callable(runs done).
    """
    jobs, owner = [], []
    for r_i, r in enumerate(requests):
        r = replace(r, table=np.ascontiguousarray(r.table, dtype=np.float64),
                    views=as_views(r.views), limit=r.samples)
        sz = [size] * (r.n_runs // size) + ([r.n_runs % size] if r.n_runs % size else [])
        jobs += [replace(r, n_runs=n, seed=s) for n, s in zip(sz, r.seed.spawn(len(sz)))]
        owner += [r_i] * len(sz)
    if workers > 1 and len(jobs) > 1:
        # compile (and write numba's cache) here first: workers then only load it, which
        # avoids concurrent cache writes of the same signature
        for r in {id(j.kernel): j for j in jobs}.values():
            run_batch(replace(r, n_runs=0, seed=0))
        stream = executor.map_tasks(job, [replace(j, kernel=_ref(j.kernel)) for j in jobs], workers)
    else:
        stream = (job(j) for j in jobs)
    results = [[] for _ in requests]
    for res, i, j in zip(stream, owner, jobs):
        results[i].append(res)
        if progress:
            progress(j.n_runs)
    return results

"""Compiled, batched simulation of bandit algorithms on fixed reward tables.

Kernel contract
---------------
Every algorithm is one numba ``@njit`` function::

    kernel(rng, table, means, theta, aux, limit, actions, releases, frozen)
        -> (tau, rec, status, n_rel)

* ``rng``: a ``numpy.random.Generator`` (the run's only source of randomness besides the
  rewards of rows beyond the table).
* ``table``: float64, shape (T, K), values in [0, 1]: the ``user`` reward table (DESIGN.md §1);
  the t-th sample (0-based) reads ``table[t, a_t]``. Rows ``t >= T`` are drawn afresh,
  ``Bernoulli(means[a_t])`` (used by benchmarks and correctness checks; audits simulate at most
  ``T`` samples, so they only ever read the fixed table).
* ``means``: float64, shape (K,).
* ``theta`` / ``aux``: float64 parameter vector and precomputed tables (layout owned by the
  algorithm's module).
* ``limit``: simulate at most this many samples.
* ``actions``: int16 buffer; the kernel writes ``actions[t] = a_t`` for ``t < len(actions)``.
* ``releases``: float64 buffer of shape (R, 8), the white-box log (DESIGN.md §2): the kernel
  writes one row per noisy release while rows remain, with columns :data:`RELEASE_COLUMNS`
  (``t`` = samples taken when released, ``arm``, ``phase``, ``count`` = samples in the
  released statistic, ``value`` = the exact statistic, ``noisy`` = the released value,
  ``scale`` = noise scale, ``dist`` = noise family). ``n_rel`` = releases made. Families:

  - :data:`LAPLACE` (0): ``noisy = value + Lap(scale)``, density ∝ exp(−|y − value|/scale);
  - :data:`GAUSSIAN` (1): ``noisy = value + N(0, scale²)`` (``scale`` = standard deviation);
  - :data:`RANDOMISED_RESPONSE` (2): binary output ``noisy`` ∈ {0, 1} for ``value`` v ∈ [0, 1]
    with P(noisy = 1 | v) = (1 + v·(e^s − 1))/(1 + e^s), ``scale`` = s (v = 1 is kept with
    probability e^s/(1 + e^s)).
* ``frozen``: float64 1-D array of released values to replay (gray-box replay, DESIGN.md §2):
  release j (0-based) releases ``frozen[j]`` when ``j < len(frozen)`` and its own noisy value
  otherwise. The noise of every release is **always drawn** from ``rng`` first, frozen or not,
  so a replay with the same rng stream stays aligned with the run it replays. Normal simulation
  passes an empty array. :mod:`dpaudit.whitebox` uses it to compute the exact privacy loss of
  the releases and to detect decisions that read raw data.

It returns ``tau`` (number of samples taken, the toolkit's τ), ``rec`` (recommended arm, or -1)
and ``status``: :data:`STOPPED`, :data:`TRUNCATED` (``limit`` reached, the algorithm would go
on) or :data:`CAPPED` (the algorithm's own data-independent ``max_steps`` reached: it halts
without a decision).

Features
--------
A run's transcript is (a_1..a_τ, τ, â). The shared batch loop turns it into feature *cells*,
one per *view*: view ``L`` is the 64-bit FNV-1a hash of the transcript truncated at ``L``
samples, i.e. of ``a_1..a_min(τ,L)`` plus (τ, â, status) when the run ended within ``L``
samples. Each view is a function of the released transcript, so any event on it is a
post-processing of the output and a valid audit event. Cells are counted per chunk of runs
and merged; trajectories are never stored.

Determinism: the runs are split into chunks of a fixed size; chunk i uses the i-th child of
``SeedSequence(seed)``. Chunk boundaries never depend on the number of workers, and merged
counts do not depend on completion order, so results are bit-identical for any ``workers``.
"""
from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numba as nb
import numpy as np

STOPPED, TRUNCATED, CAPPED = 0, 1, 2
RELEASE_COLUMNS = ("t", "arm", "phase", "count", "value", "noisy", "scale", "dist")
LAPLACE, GAUSSIAN, RANDOMISED_RESPONSE = 0, 1, 2  # release noise families (column dist)
STATUS_NAMES = ("stopped", "truncated", "capped")
CHUNK = 1 << 15  # runs per chunk (a fixed constant: part of the seeding contract)

_FNV_OFFSET = np.uint64(1469598103934665603)
_FNV_PRIME = np.uint64(1099511628211)


@nb.njit(cache=True)
def _mix(h, x):
    return (h ^ np.uint64(x)) * _FNV_PRIME


@nb.njit(cache=True)
def _hash_views(actions, tau, rec, status, views, out):
    """Write the view cells of one transcript into ``out`` (len(views),)."""
    h = _FNV_OFFSET
    t = 0
    for v in range(views.shape[0]):
        end = min(views[v], tau)
        while t < end:
            h = _mix(h, actions[t] + 1)
            t += 1
        if tau <= views[v] and status != TRUNCATED:
            # the whole transcript is inside this view: add the decision
            out[v] = _mix(_mix(_mix(h, 0xFFFF), tau), (rec + 2) * 4 + status)
        else:
            out[v] = h


@nb.njit(cache=True)
def _run_batch(kernel, rng, table, means, theta, aux, limit, n_runs, views, keep=0):
    """Compiled body of :func:`run_batch`."""
    n_views = views.shape[0]
    buf_len = views[n_views - 1] if n_views > 0 else 0
    actions = np.empty(buf_len, np.int16)
    releases = np.empty((0, 8))
    frozen = np.empty(0)
    kept = np.full((keep, buf_len), -1, np.int16)
    cells = np.empty((n_runs, n_views), np.uint64)
    taus = np.empty(n_runs, np.int64)
    recs = np.empty(n_runs, np.int64)
    stats = np.empty(n_runs, np.int8)
    for i in range(n_runs):
        tau, rec, status, _ = kernel(rng, table, means, theta, aux, limit, actions, releases,
                                     frozen)
        taus[i] = tau
        recs[i] = rec
        stats[i] = status
        _hash_views(actions, tau, rec, status, views, cells[i])
        if i < keep:
            kept[i, :min(tau, buf_len)] = actions[:min(tau, buf_len)]
    return cells, taus, recs, stats, kept


_run_batch_uncached = nb.njit(_run_batch.py_func)


def run_batch(kernel, rng, table, means, theta, aux, limit, n_runs, views, keep=0):
    """Run ``kernel`` ``n_runs`` times; return per-run view cells and (τ, â, status).

    ``views``: int64 sorted prefix lengths (each ≤ ``limit``). Returns ``cells`` uint64
    (n_runs, len(views)), ``tau`` int64 (n_runs,), ``rec`` int64 (n_runs,), ``status`` int8
    (n_runs,), and the action prefixes (length max(views)) of the first ``keep`` runs, int16
    (keep, max(views)), -1 past τ.

    The compiled loop is cached on disk per kernel. numba can corrupt the on-disk index of a
    cached function that takes other jitted functions as arguments ("ReferenceError:
    underlying object has vanished" when it saves a new entry, numba issue #9348); the loop
    then runs from an uncached compilation of the same code (a few seconds more, same result).
    """
    args = (kernel, rng, table, means, theta, aux, limit, n_runs, views, keep)
    try:
        return _run_batch(*args)
    except ReferenceError:
        return _run_batch_uncached(*args)


@dataclass
class Counts:
    """Merged simulation output for one table: cell counts per view and run summaries.

    ``cells[v]``, ``counts[v]``: sorted unique cell hashes of view ``v`` and their counts.
    ``status``: runs per status (stopped, truncated, capped). ``tau_sum``: Σ τ (samples
    simulated). ``rec``: stopped runs per recommended arm.
    """

    n_runs: int
    views: np.ndarray
    cells: list
    counts: list
    status: np.ndarray
    tau_sum: int
    rec: np.ndarray

    def hits(self, v: int, cell_set: np.ndarray) -> int:
        """Number of runs whose view-``v`` cell lies in ``cell_set`` (sorted uint64)."""
        mask = np.isin(self.cells[v], cell_set, assume_unique=True)
        return int(self.counts[v][mask].sum())


def _merge(parts, n_views):
    cells, counts = [], []
    for v in range(n_views):
        c = np.concatenate([p[0][v] for p in parts])
        k = np.concatenate([p[1][v] for p in parts])
        u, inv = np.unique(c, return_inverse=True)
        cells.append(u)
        counts.append(np.bincount(inv, weights=k, minlength=len(u)).astype(np.int64))
    return cells, counts


def _chunk_job(args):
    kernel_ref, table, means, theta, aux, limit, n, views, seed_seq = args
    kernel = _resolve(kernel_ref)
    rng = np.random.default_rng(seed_seq)
    cells, taus, recs, stats, _ = run_batch(kernel, rng, table, means, theta, aux, limit, n, views)
    per_view = [np.unique(cells[:, v], return_counts=True) for v in range(len(views))]
    K = means.shape[0]
    rec = np.bincount(recs[stats == STOPPED], minlength=K)[:K]
    return ([u for u, _ in per_view], [c for _, c in per_view],
            np.bincount(stats, minlength=3), int(taus.sum()), rec)


def _resolve(kernel_ref):
    """Kernels travel to worker processes as (module, name) and are re-imported there."""
    if isinstance(kernel_ref, tuple):
        import importlib
        return getattr(importlib.import_module(kernel_ref[0]), kernel_ref[1])
    return kernel_ref


def _ref(kernel):
    return (kernel.py_func.__module__, kernel.py_func.__name__)


_POOLS: dict[int, ProcessPoolExecutor] = {}


def _pool(workers: int) -> ProcessPoolExecutor:
    if workers not in _POOLS:
        import multiprocessing as mp
        _POOLS[workers] = ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn"))
    return _POOLS[workers]


def simulate(kernel, table, means, theta, aux, *, n_runs: int, seed: np.random.SeedSequence,
             views, limit: int | None = None, workers: int = 1, progress=None) -> Counts:
    """Simulate ``n_runs`` independent runs of ``kernel`` on ``table`` and count feature cells.

    ``table``: float64 (T, K) in [0, 1]; ``limit`` defaults to T (the audit never reads past
    the table). ``seed``: a SeedSequence; chunk i uses ``seed.spawn(...)[i]``. ``workers``:
    processes (1 = in this process). ``progress``: optional callable(n_runs_done).
    """
    table = np.ascontiguousarray(table, dtype=np.float64)
    views = np.asarray(sorted(set(int(v) for v in views)), dtype=np.int64)
    limit = table.shape[0] if limit is None else int(limit)
    sizes = [CHUNK] * (n_runs // CHUNK) + ([n_runs % CHUNK] if n_runs % CHUNK else [])
    children = seed.spawn(len(sizes))
    pooled = workers > 1 and len(sizes) > 1
    jobs = [(_ref(kernel) if pooled else kernel, table, means, theta, aux, limit, n, views, s)
            for n, s in zip(sizes, children)]
    if pooled:
        # compile (and write numba's cache) here first: workers then only load it, which
        # avoids concurrent cache writes of the same signature
        run_batch(kernel, np.random.default_rng(0), table, means, theta, aux, limit, 0, views)
        results = []
        for res, n in zip(_pool(workers).map(_chunk_job, jobs), sizes):
            results.append(res)
            if progress:
                progress(n)
    else:
        results = []
        for job, n in zip(jobs, sizes):
            results.append(_chunk_job(job))
            if progress:
                progress(n)
    cells, counts = _merge(results, len(views))
    return Counts(n_runs=n_runs, views=views, cells=cells, counts=counts,
                  status=sum(r[2] for r in results), tau_sum=sum(r[3] for r in results),
                  rec=sum(r[4] for r in results))


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
               else (os.cpu_count() or 1))

"""Simulation throughput of a registered algorithm (`dpaudit bench`).

Full runs on the algorithm's default instance: rewards are drawn afresh from Bernoulli(means)
(an empty fixed table), each run goes until it stops or reaches ``max_steps`` (algorithms without
it: their audit horizon, e.g. a fixed budget T). One process, so
the figures are per core. The first (compiling) call and ``prepare`` (data-independent
precomputation, reported separately as ``prepare_s``) are excluded from the timing.
"""
from __future__ import annotations

import time

import numpy as np

from dpaudit import registry
from dpaudit.simulate import STATUS_NAMES, run_batch


def bench(algo: str, eps: float, params: dict | None = None, seconds: float = 3.0,
          seed: int = 0, delta: float | None = None) -> dict:
    """Run full runs for at least ``seconds`` of wall time; return throughput figures.

    Runs are simulated in batches (one compiled call per batch, sized to take about
    :data:`BATCH_SECONDS`), so short runs (fixed budgets of a few dozen pulls) are not
    dominated by the Python call. Keys: ``steps_per_s`` and ``runs_per_s`` (per core),
    ``runs``, ``steps``, ``seconds``, ``status`` (runs per status), ``algorithm``, ``eps``,
    ``delta``, ``params``, ``means``, ``prepare_s`` (the spec's ``prepare``: data-independent
    precomputation, excluded from the throughput) and ``precompute`` (details the spec reports
    through ``extra["info"]``, e.g. the MAX-DET search, or {}).
    """
    spec = registry.get(algo)
    p, delta = spec.resolve_claim(params or {}, delta)
    t_prep = time.perf_counter()
    prep = spec.prepare(float(eps), p)
    prepare_s = time.perf_counter() - t_prep
    K = prep.means.shape[0]
    table = np.zeros((K, 0) if spec.model == "stream" else (0, K))   # every reward drawn afresh
    no_views = np.zeros(0, np.int64)
    limit = int(p["max_steps"] if "max_steps" in p else spec.audit_horizon(p))
    rng = np.random.default_rng(seed)
    run_batch(spec.kernel, rng, table, prep.means, prep.theta, prep.aux, min(limit, 64), 1,
              no_views)   # compile
    runs = steps = 0
    status = np.zeros(3, np.int64)
    batch = 1
    t0 = time.perf_counter()
    while (dt := time.perf_counter() - t0) < seconds:
        t1 = time.perf_counter()
        _, tau, _, st, _ = run_batch(spec.kernel, rng, table, prep.means, prep.theta, prep.aux,
                                     limit, batch, no_views)
        runs += batch
        steps += int(tau.sum())
        status += np.bincount(st, minlength=3)
        if time.perf_counter() - t1 < BATCH_SECONDS / 2:
            batch *= 2
    info = spec.extra.get("info")
    return {"algorithm": spec.name, "eps": float(eps), "delta": delta,
            "params": {k: list(v) if isinstance(v, tuple) else v for k, v in p.items()},
            "means": [float(m) for m in prep.means],
            "steps_per_s": steps / dt, "runs_per_s": runs / dt, "runs": runs, "steps": steps,
            "seconds": dt, "status": {STATUS_NAMES[i]: int(status[i]) for i in range(3)},
            "prepare_s": prepare_s, "precompute": info(p) if info else {}}


BATCH_SECONDS = 0.2

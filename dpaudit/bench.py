"""Simulation throughput of a registered algorithm (`dpaudit bench`).

Full runs on the algorithm's default instance: rewards are drawn afresh from Bernoulli(means)
(an empty fixed table), each run goes until it stops or reaches ``max_steps`` (algorithms without
it: their audit horizon, e.g. a fixed budget T). One process, so
the figures are per core. The first (compiling) call is excluded from the timing.
"""
from __future__ import annotations

import time

import numpy as np

from dpaudit import registry
from dpaudit.simulate import STATUS_NAMES, run_batch


def bench(algo: str, eps: float, params: dict | None = None, seconds: float = 3.0,
          seed: int = 0) -> dict:
    """Run full runs for at least ``seconds`` of wall time; return throughput figures.

    Keys: ``steps_per_s`` and ``runs_per_s`` (per core), ``runs``, ``steps``, ``seconds``,
    ``status`` (runs per status), ``algorithm``, ``eps``, ``params``.
    """
    spec = registry.get(algo)
    p = spec.resolve_params(params or {})
    prep = spec.prepare(float(eps), p)
    K = prep.means.shape[0]
    table = np.zeros((0, K))
    no_views = np.zeros(0, np.int64)
    limit = int(p["max_steps"] if "max_steps" in p else spec.audit_horizon(p))
    rng = np.random.default_rng(seed)
    run_batch(spec.kernel, rng, table, prep.means, prep.theta, prep.aux, min(limit, 64), 1,
              no_views)   # compile
    runs = steps = 0
    status = np.zeros(3, np.int64)
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        _, tau, _, st, _ = run_batch(spec.kernel, rng, table, prep.means, prep.theta, prep.aux,
                                     limit, 1, no_views)
        runs += 1
        steps += int(tau[0])
        status += np.bincount(st, minlength=3)
    dt = time.perf_counter() - t0
    return {"algorithm": spec.name, "eps": float(eps),
            "params": {k: list(v) if isinstance(v, tuple) else v for k, v in p.items()},
            "steps_per_s": steps / dt, "runs_per_s": runs / dt, "runs": runs, "steps": steps,
            "seconds": dt, "status": {STATUS_NAMES[i]: int(status[i]) for i in range(3)}}

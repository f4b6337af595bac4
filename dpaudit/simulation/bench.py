"""Simulation throughput of a registered algorithm (`dpaudit bench`).

Full runs on the algorithm's default instance: rewards are drawn afresh from Bernoulli(means)
(an empty fixed table), each run goes until it stops or reaches ``max_steps`` (algorithms without
it: their audit horizon, e.g. a fixed budget T). One process, so the figures are per core. The
first (compiling) call, a short probe of the step rate and ``prepare`` (data-independent
precomputation, reported separately as ``prepare_s``) are excluded from the timing.

**Bounded**: the timed loop never starts more work than the remaining time affords at the
measured step rate. Each compiled call gets a step budget (rate × time left); a run still going
when it has used the budget is cut there and counted as ``truncated`` (never waited for), and
the measurement ends with that call, so the timed part ends within ``seconds`` plus :data:`GRACE` of it, whatever the runs do (an AdaP-TT
run can go on for ever: docs/papers/azize2023.md).
"""
from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from dpaudit.algorithms import registry
from dpaudit.data.tables import MODELS
from dpaudit.simulation.simulate import STATUS_NAMES, TRUNCATED, run_batch

BATCH_SECONDS = 0.2      # a batch of short runs grows until one compiled call takes about this
PROBE_SECONDS = 0.01     # the probe of the step rate ends at a call of about this
GRACE = 0.25             # stated overrun: the timed part ends within seconds × (1 + GRACE) + 0.1 s


def bench(algo: str, eps: float, params: dict | None = None, seconds: float = 3.0,
          seed: int = 0, delta: float | None = None) -> dict:
    """Run full runs for ``seconds`` of wall time; return throughput figures.

    Runs are simulated in batches (one compiled call per batch, sized to take about
    :data:`BATCH_SECONDS`), so short runs (fixed budgets of a few dozen pulls) are not
    dominated by the Python call. Each call is given the steps the time left affords (module
    doc): the timed part ends within ``seconds`` × (1 + :data:`GRACE`) + 0.1 s.

    Args:
        algo: a registered algorithm's name.
        eps: the algorithm's ε.
        params: the algorithm's parameters (its defaults otherwise).
        seconds: wall time of the timed part, in seconds.
        seed: seed of the one ``numpy.random.Generator`` every run draws from.
        delta: the DP δ of algorithms calibrated by δ (theirs by default).

    Returns:
        A dict: ``steps_per_s`` and ``runs_per_s`` (per core), ``runs``, ``steps``,
        ``seconds`` (timed wall time), ``status`` (runs per status: ``stopped``;
        ``truncated``, cut at the time budget; ``capped``, the algorithm's own ``max_steps``
        reached), ``algorithm``, ``eps``, ``delta``, ``params``, ``means``, ``seed``,
        ``prepare_s`` (the spec's ``prepare``: data-independent precomputation, excluded from
        the throughput) and ``precompute`` (details the spec reports through
        ``extra["info"]``, e.g. the MAX-DET search, or {}).

    Raises:
        KeyError: ``algo`` is not registered (the CLI validates names first).
    """
    spec = registry.get(algo)
    p, delta = spec.resolve_claim(params or {}, delta)
    t_prep = time.perf_counter()
    prep = spec.prepare(float(eps), p)
    prepare_s = time.perf_counter() - t_prep
    K = prep.means.shape[0]
    table = MODELS[spec.model].fresh(K)          # every reward drawn afresh
    limit = int(p["max_steps"] if "max_steps" in p else spec.audit_horizon(p))
    rng = np.random.default_rng(seed)

    def call(run_limit: int, n: int) -> tuple:
        return run_batch(spec.request(prep, table, n, rng, limit=run_limit))

    call(min(limit, 64), 1)   # compile
    rate = _probe(call, limit)
    runs = steps = 0
    status = np.zeros(3, np.int64)
    batch = 1
    t0 = time.perf_counter()
    while (dt := time.perf_counter() - t0) < seconds:
        # steps the time left affords, at least PROBE_SECONDS' worth (a short run is not cut)
        budget = max(1, int(rate * max(seconds - dt, PROBE_SECONDS)))
        run_limit = min(limit, budget)
        n = max(1, min(batch, budget // run_limit))
        t1 = time.perf_counter()
        _, tau, _, st, _ = call(run_limit, n)
        took = time.perf_counter() - t1
        runs += n
        steps += int(tau.sum())
        status += np.bincount(st, minlength=3)
        rate = min(rate, max(int(tau.sum()), 1) / took)  # the slowest call's rate: cautious
        if run_limit < limit and (st == TRUNCATED).any() and took >= (seconds - dt) / 2:
            break                       # a run used the time left: the budget is spent
        if took < BATCH_SECONDS / 2:
            batch *= 2
    dt = time.perf_counter() - t0
    info = spec.extra.get("info")
    return {"algorithm": spec.name, "eps": float(eps), "delta": delta,
            "params": {k: list(v) if isinstance(v, tuple) else v for k, v in p.items()},
            "means": [float(m) for m in prep.means], "seed": seed,
            "steps_per_s": steps / dt, "runs_per_s": runs / dt, "runs": runs, "steps": steps,
            "seconds": dt, "status": {STATUS_NAMES[i]: int(status[i]) for i in range(3)},
            "prepare_s": prepare_s, "precompute": info(p) if info else {}}


def _probe(call: Callable[[int, int], tuple], limit: int) -> float:
    """Steps per second of single runs, probed at growing caps.

    Steps per second of single runs capped at 2¹⁰, 2¹², … steps, until a call takes
    :data:`PROBE_SECONDS` or its run ends before the cap (not counted in the figures).
    """
    cap = 1 << 10
    while True:
        run_limit = min(limit, cap)
        t = time.perf_counter()
        _, tau, _, _, _ = call(run_limit, 1)
        took = time.perf_counter() - t
        if took >= PROBE_SECONDS or tau[0] < run_limit or run_limit == limit:
            return max(int(tau[0]), 1) / max(took, 1e-9)
        cap *= 4

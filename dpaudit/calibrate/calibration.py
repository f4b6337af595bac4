"""Calibration of the auditor on mechanisms of known privacy loss.

Calibration of the auditor on mechanisms of known privacy loss
(:mod:`dpaudit.calibrate.mechanisms`).

Three measurements, each a number with an exact Clopper–Pearson interval:

* **tightness**: ε_lb/ε of the default audit on a correct mechanism whose loss is exactly ε;
* **soundness**: the false-violation rate over many independent audits of correct mechanisms
  (must be ≤ α: an auditor that cries wolf is worse than none);
* **power**: the detection rate of insufficient-noise mutants (noise scale × factor, true
  loss ε/factor for Laplace, geometric and randomised response).

``python benchmarks/calibration.py`` runs the suite and prints the tables quoted in docs/method/calibration.md.
Audits run on the executor (:mod:`dpaudit.core.executor`), one audit per task, each seeded by
its index.
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpaudit.auditing.mechanism import audit_mechanism
from dpaudit.calibrate.mechanisms import FAMILIES, known_mechanism
from dpaudit.core import executor
from dpaudit.core.terms import Verdict
from dpaudit.statistics.stats import cp_lower, cp_upper


@dataclass(frozen=True)
class Task:
    """One audit of a known mechanism: family, claimed ε, noise factor, budget, level, seed."""

    family: str
    eps: float
    factor: float
    n: int | None
    alpha: float
    seed: int


def run_task(t: Task) -> dict:
    """One audit of a known mechanism.

    Args:
        t: the task: ``known_mechanism(t.family, t.eps, t.factor)`` audited at ``t.alpha`` with
            ``t.n`` samples and ``t.seed``.

    Returns:
        A JSON-ready row: the verdict, ε_lb, reason, true loss and time.
    """
    km = known_mechanism(t.family, t.eps, t.factor)
    t0 = time.perf_counter()
    r = audit_mechanism(km.mechanism, km.d, km.d_prime, eps=km.eps, delta=km.delta,
                        alpha=t.alpha, n=t.n, seed=t.seed, name=km.name)
    return {"family": t.family, "eps": t.eps, "factor": t.factor, "true_eps": km.true_eps,
            "correct": km.correct, "verdict": r.verdict, "eps_lb": r.eps_lb,
            "reason": r.reason, "runs_needed": r.runs_needed, "n": t.n,
            "seconds": time.perf_counter() - t0, "seed": t.seed}


def run_tasks(tasks: list[Task], workers: int = 2) -> list[dict]:
    """:func:`run_task` of every task, in order.

    Args:
        tasks: the tasks.
        workers: processes.

    Returns:
        One row per task.
    """
    return list(executor.map_tasks(run_task, tasks, workers))


def rate(k: int, n: int, alpha: float = 0.05) -> dict:
    """A rate with its two-sided (1 − α) Clopper–Pearson interval.

    Args:
        k: events.
        n: trials.
        alpha: the interval's error.

    Returns:
        {"k", "n", "rate", "ci"}.
    """
    return {"k": int(k), "n": int(n), "rate": k / n if n else float("nan"),
            "ci": [float(cp_lower(k, n, alpha / 2)), float(cp_upper(k, n, alpha / 2))]}


@dataclass(frozen=True)
class Plan:
    """What a calibration run audits.

    What a calibration run audits: mechanisms of ``families`` claiming ``eps``, ``n``
    samples per side (None: the audit's default), level ``alpha``, on ``workers`` processes;
    audit i is seeded ``seed0 + i`` (None: the measurement's own offset).
    """

    eps: float = 1.0
    n: int | None = None
    alpha: float = 0.05
    workers: int = 2
    families: tuple = FAMILIES
    seed0: int | None = None


def soundness(audits: int, plan: Plan = Plan()) -> dict:
    """Small audits of the correct mechanisms: the false-violation rate.

    Args:
        audits: audits, spread evenly over the plan's families.
        plan: families, ε, budget, level, workers and the first seed (default 0).

    Returns:
        The false-violation rate and its interval, per family and overall.
    """
    families, seed0 = plan.families, plan.seed0 or 0
    tasks = [Task(families[i % len(families)], plan.eps, 1.0, plan.n, plan.alpha, seed0 + i)
             for i in range(audits)]
    rows = run_tasks(tasks, plan.workers)
    out = {"alpha": plan.alpha, "n": plan.n, "eps": plan.eps, "by_family": {}}
    for f in families:
        k = sum(r["verdict"] == Verdict.VIOLATION for r in rows if r["family"] == f)
        out["by_family"][f] = rate(k, sum(r["family"] == f for r in rows))
    out["overall"] = rate(sum(r["verdict"] == Verdict.VIOLATION for r in rows), len(rows))
    return out


def power(audits: int, factors: Sequence[float] = (0.5, 0.6, 0.7, 0.8, 0.9),
          plan: Plan = Plan()) -> list[dict]:
    """The detection rate of each insufficient-noise mutant (noise scale × factor).

    Args:
        audits: audits per family and factor.
        factors: the noise factors.
        plan: families, ε, budget, level, workers and the first seed (default 10⁶).

    Returns:
        One row per family and factor: the true loss and the detection rate with its interval.
    """
    families, eps = plan.families, plan.eps
    seed0 = 10 ** 6 if plan.seed0 is None else plan.seed0
    tasks = [Task(f, eps, x, plan.n, plan.alpha, seed0 + 1000 * j + i)
             for j, (f, x) in enumerate((f, x) for f in families for x in factors)
             for i in range(audits)]
    rows = run_tasks(tasks, plan.workers)
    out = []
    for f in families:
        for x in factors:
            rs = [r for r in rows if r["family"] == f and r["factor"] == x]
            k = sum(r["verdict"] == Verdict.VIOLATION for r in rs)
            out.append({"family": f, "factor": x, "true_eps": rs[0]["true_eps"],
                        "ratio": rs[0]["true_eps"] / eps, **rate(k, len(rs)),
                        "mean_seconds": float(np.mean([r["seconds"] for r in rs])),
                        "median_eps_lb": float(np.median([r["eps_lb"] for r in rs]))})
    return out


def tightness(eps_grid: Sequence[float] = (0.1, 0.5, 1.0, 2.0), seeds: Sequence[int] = (1,),
              n: int | None = None,
              family: str = "laplace") -> list[dict]:
    """ε_lb/ε and wall time of the default audit (in this process).

    Args:
        eps_grid: the claimed ε.
        seeds: seeds per ε.
        n: samples per side (None: the default).
        family: the mechanism family.

    Returns:
        One row per ε and seed.
    """
    rows = [run_task(Task(family, e, 1.0, n, 0.05, s)) for e in eps_grid for s in seeds]
    return [{**r, "ratio": r["eps_lb"] / r["eps"]} for r in rows]

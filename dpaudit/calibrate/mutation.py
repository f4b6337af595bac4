"""Mutation analysis: how often the default audit catches a planted privacy bug in a kernel.

Each registered algorithm's kernel draws its noise at a few *noise sites*
(:mod:`dpaudit.algorithms.mutation`); a mutant plants one bug at one site (:data:`MUTATIONS`:
noise × 0, × 0.5 and × 2; sensitivity off by one; one draw reused; the same noise in every run;
Gaussian noise for Laplace). Per mutant:

1. **ground truth**: ``equivalent`` when its runs are those of the algorithm (the site is not
   reached, or the operator does not apply there: :data:`SCREEN_RUNS` runs on fresh rewards,
   same seeds, identical transcripts and release logs) or when the noise is scaled by f ≥ 1 (a
   release Lap(f·b) or N(0, (f·σ)²) at a site calibrated to ε is (ε/f)-DP, and the rest of the
   run is unchanged: the mutant stays ε-DP); else ``bug``, with the loss of its releases at
   the site, ``whitebox_loss``, in closed form: ε/f for × f (∞ for f = 0, the raw value);
   up to 2ε for the count off by one (ε·(n + 1)/n, n = 1 at worst); unbounded for a reused
   draw (two releases' difference is exact), frozen noise (each release is a function of the
   data) and Gaussian noise (its loss grows without bound in the tails);
2. **the default audit** of every ``bug`` at the claimed ε: ``killed`` when its verdict is
   ``violation``; ``runs_to_kill`` = the measurement's runs per side at the look that found it;
   ``whitebox_replay``: the largest release loss its white-box replay measured on the audited
   pair (the kernels log what a mutant draws: the scale f·b, a Gaussian's σ, a frozen release
   as a point mass, loss ∞; a reused draw's releases are each logged with their marginal law,
   so the replay does not see their dependence), which shows whether the audited pair reached
   the mutated site.

The mutation score is killed / bugs. A survivor keeps its verdict, ε_lb and the audit's reason.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from dpaudit.algorithms import registry
from dpaudit.algorithms.mutation import Mutation
from dpaudit.auditing.audit import audit_algorithm
from dpaudit.auditing.exact import frozen_run
from dpaudit.core.terms import Verdict
from dpaudit.data import tables

MUTATIONS = (("scale", 0.0), ("scale", 0.5), ("scale", 2.0), ("count", 1.0), ("reuse", 1.0),
             ("frozen", 1.0), ("gauss", 1.0))   # (operator, factor) planted at every site
SCREEN_RUNS = 64                # runs whose transcripts decide "site not reached"
QUICK_RUNS = 250_000            # measurement runs per side of a --quick audit


@dataclass(frozen=True)
class MutationRequest:
    """What a mutation analysis audits and spends.

    Attributes:
        algorithms: registered names (private algorithms with noise sites).
        eps: the claimed ε of every audit, > 0.
        seed: the audits' seed.
        quick: audit each bug with :data:`QUICK_RUNS` runs per side (CI), else the default
            budget.
        workers: processes per audit (None: the machine's cores).
    """

    algorithms: tuple[str, ...]
    eps: float = 0.5
    seed: int = 1
    quick: bool = False
    workers: int | None = None


def mutable() -> list[str]:
    """The private, non-mutant registered algorithms whose kernels have noise sites.

    Returns:
        Their names, sorted.
    """
    return sorted(s.name for s in registry.all_specs()
                  if s.private and s.mutant_of is None and registry.noise_sites(s))


def _runs(name: str, eps: float) -> list:
    spec = registry.get(name)
    p = spec.resolve_params({})
    prep = spec.prepare(eps, p)
    table = tables.MODELS[spec.model].fresh(prep.means.shape[0])
    limit = min(int(spec.audit_horizon(p)), 4096)
    out = []
    for s in range(SCREEN_RUNS):
        key, rel = frozen_run(spec, prep, table, limit, np.zeros(0), s)
        out.append((key, rel.tobytes()))
    return out


def ground_truth(algo: str, mutation: Mutation, eps: float) -> tuple[str, float, str]:
    """A mutant's status, its releases' loss at the site and why (module doc, step 1).

    Args:
        algo: the algorithm.
        mutation: the mutation.
        eps: the claimed ε.

    Returns:
        (``equivalent`` or ``bug``, the per-release loss at the site (nats; ∞ where
        unbounded), the reason).
    """
    op, f = mutation.operator, mutation.factor
    if _runs(algo + mutation.suffix(), eps) == _runs(algo, eps):
        return "equivalent", 0.0, (f"site {mutation.site} not reached, or {mutation.text()} "
                                   f"changes nothing there: {SCREEN_RUNS} runs on fresh "
                                   "rewards are identical to the algorithm's")
    if op == "scale":
        loss = math.inf if f == 0 else eps / f
        if f >= 1:
            return "equivalent", loss, f"noise × {f:g} ≥ 1: each release at the site is ε/{f:g}-DP"
        return "bug", loss, (f"noise × {f:g}: each release at the site loses up to "
                             + ("∞ (the raw value)" if f == 0 else f"ε/{f:g} = {loss:.4g}"))
    if op == "count":
        return "bug", 2 * eps, ("sensitivity off by one: a release of a mean of n samples "
                                "loses up to ε·(n + 1)/n (2ε at n = 1)")
    return "bug", math.inf, {
        "reuse": "one draw reused: two releases at the site share their noise, so their "
                 "difference (in noise scales) is exact",
        "frozen": "the same noise in every run: each release is a function of the data",
        "gauss": "Gaussian noise for Laplace: not ε-DP at any ε (its loss grows without bound "
                 "in the tails)"}[op]


def analyse(ask: MutationRequest) -> dict:
    """Mutation analysis of ``ask.algorithms``: every site × :data:`MUTATIONS` (module doc).

    Args:
        ask: the algorithms, ε, seed, budget and workers.

    Returns:
        JSON-ready: ``mutants`` (per mutant ``algorithm``, ``mutant``, ``operator``, ``site``,
        ``site_text``, ``factor``, ``status``, ``whitebox_loss`` (null for ∞), ``why``, and
        for a bug ``verdict``, ``eps_lb``, ``killed``, ``runs_to_kill``, ``seconds``, and a
        survivor's ``survived_because``), ``per_algorithm`` scores, ``bugs``, ``killed``,
        ``score`` (killed / bugs, None without bugs), ``eps``, ``seed``, ``budget``.

    Raises:
        InputError: an unknown algorithm, or one without noise sites.
    """
    rows = []
    for algo in ask.algorithms:
        spec = registry.get(algo)
        sites = registry.noise_sites(spec)
        for site, text in sites:
            for op, f in MUTATIONS:
                m = Mutation(op, site, f)
                status, loss, why = ground_truth(algo, m, ask.eps)
                row = {"algorithm": algo, "mutant": algo + m.suffix(), "operator": m.operator,
                       "site": site, "site_text": text, "factor": f, "status": status,
                       "whitebox_loss": None if math.isinf(loss) else loss, "why": why}
                if status == "bug":
                    row.update(_audit(row["mutant"], ask))
                rows.append(row)
        if not sites:
            registry.get(f"{algo}~scale=0@0")        # raises: no noise site to mutate
    per = {}
    for algo in ask.algorithms:
        bugs = [r for r in rows if r["algorithm"] == algo and r["status"] == "bug"]
        k = sum(r["killed"] for r in bugs)
        per[algo] = {"bugs": len(bugs), "killed": k, "score": k / len(bugs) if bugs else None}
    bugs = sum(p["bugs"] for p in per.values())
    killed = sum(p["killed"] for p in per.values())
    return {"eps": ask.eps, "seed": ask.seed,
            "budget": f"{QUICK_RUNS} runs per side (--quick)" if ask.quick else "default",
            "operators": sorted({op for op, _ in MUTATIONS}),
            "mutations": [Mutation(op, 0, f).suffix()[:-2] for op, f in MUTATIONS],
            "mutants": rows, "per_algorithm": per,
            "bugs": bugs, "killed": killed, "score": killed / bugs if bugs else None}


def _audit(name: str, ask: MutationRequest) -> dict:
    t0 = time.time()
    r = audit_algorithm(name, ask.eps, seed=ask.seed, workers=ask.workers,
                        runs=QUICK_RUNS if ask.quick else None)
    killed = r.verdict == Verdict.VIOLATION
    meas = r.counts.get("measurement", {})
    replay = r.whitebox.get("max_loss") if r.whitebox else None
    out = {"verdict": r.verdict.value, "eps_lb": r.eps_lb, "killed": killed,
           "runs_to_kill": meas.get("runs_d") if killed else None,
           "whitebox_replay": None if replay is None or math.isinf(replay) else replay,
           "whitebox_replay_infinite": replay is not None and math.isinf(replay),
           "seconds": round(time.time() - t0, 1)}
    if not killed:
        out["survived_because"] = r.reason or (f"{r.verdict.value}: eps_lb {r.eps_lb:.4f}, "
                                               f"eps_ub {r.eps_ub:.4f}")
    return out

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
   ε·(n + 1)/n for the count off by one, n the fewest samples a release at the site averages
   in the screen runs (read from the mutant's release log replaying the algorithm's released
   values, so that both take one path: the site's releases are the rows whose logged scale
   differs) — ``within_margin`` instead of ``bug`` when that is at most (1 + margin)·ε, the
   loss a pass allows (audited, out of the score); unbounded for a reused draw (two
   releases' difference is exact), frozen noise (each release is a function of the data) and
   a Gaussian draw with the Laplace scale (its loss grows without bound with the noise);
2. **the default audit** of every ``bug`` at the claimed ε: ``killed`` when its verdict is
   ``violation``; ``runs_to_kill`` = the measurement's runs per side at the look that found it
   (for a white-box proof of an ε-local-DP claim: the white-box runs per direction);
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
from dpaudit.core.request import DEFAULT_MARGIN
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


def _runs(name: str, eps: float, replay: list | None = None) -> list:
    """The screen runs of ``name``: (transcript key, release log (n, 8)) for seeds 0, 1, ...

    ``replay``: screen runs whose released values run s replays (None: none).
    """
    spec = registry.get(name)
    p = spec.resolve_params({})
    prep = spec.prepare(eps, p)
    table = tables.MODELS[spec.model].fresh(prep.means.shape[0])
    limit = min(int(spec.audit_horizon(p)), 4096)
    return [frozen_run(spec, prep, table, limit,
                       np.zeros(0) if replay is None else replay[s][1][:, 5].copy(), s)
            for s in range(SCREEN_RUNS)]


def _same(a: list, b: list) -> bool:
    """Whether two lists of screen runs have the same transcripts and release logs."""
    return all(ka == kb and np.array_equal(ra, rb) for (ka, ra), (kb, rb) in zip(a, b))


def _least_count(plain: list, mutant: list) -> float:
    """The fewest samples a release at the mutated site averages in the screen runs.

    Args:
        plain: the algorithm's screen runs (:func:`_runs`).
        mutant: the count mutant's, replaying the algorithm's released values (one path).

    Returns:
        min n over the rows whose logged scale differs (∞ when none does).
    """
    least = math.inf
    for (_, r), (_, m) in zip(plain, mutant):
        k = min(r.shape[0], m.shape[0])
        site = r[:k, 6] != m[:k, 6]
        if site.any():
            least = min(least, float(r[:k, 3][site].min()))
    return least


def ground_truth(algo: str, mutation: Mutation, eps: float) -> tuple[str, float, str]:
    """A mutant's status, its releases' loss at the site and why (module doc, step 1).

    Args:
        algo: the algorithm.
        mutation: the mutation.
        eps: the claimed ε.

    Returns:
        (``equivalent``, ``within_margin`` or ``bug``, the per-release loss at the site
        (nats; ∞ where unbounded), the reason).
    """
    op, f = mutation.operator, mutation.factor
    name, plain = algo + mutation.suffix(), _runs(algo, eps)
    if _same(_runs(name, eps), plain):
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
        n = _least_count(plain, _runs(name, eps, plain))
        loss = eps * (n + 1) / n
        why = (f"sensitivity off by one: a release of a mean of n samples loses ε·(n + 1)/n; "
               f"the fewest at the site in {SCREEN_RUNS} runs is n = {n:g}: {loss:.4g}")
        if loss <= (1 + DEFAULT_MARGIN) * eps:
            return "within_margin", loss, why + (f" ≤ (1 + margin)·ε = "
                                                 f"{(1 + DEFAULT_MARGIN) * eps:.4g}, "
                                                 "the loss a pass allows")
        return "bug", loss, why
    return "bug", math.inf, {
        "reuse": "one draw reused: two releases at the site share their noise, so their "
                 "difference (in noise scales) is exact",
        "frozen": "the same noise in every run: each release is a function of the data",
        "gauss": "normal(0, b) for laplace(0, b): not ε-DP at any ε (a shift Δ = ε·b of the "
                 "mean loses ε·z/b + ε²/2 at noise z, more than ε for z > b·(1 − ε/2))"}[op]


def plan(algo: str) -> list:
    """The mutants of ``algo``: every noise site × :data:`MUTATIONS`.

    Args:
        algo: a registered algorithm with noise sites.

    Returns:
        [(site, what its noise privatises, :class:`Mutation`)], in site order.

    Raises:
        InputError: an unknown algorithm, or one without noise sites.
    """
    sites = registry.noise_sites(registry.get(algo))
    if not sites:
        registry.get(f"{algo}~scale=0@0")            # raises: no noise site to mutate
    return [(site, text, Mutation(op, site, f)) for site, text in sites for op, f in MUTATIONS]


def mutant_row(algo: str, text: str, mutation: Mutation, ask: MutationRequest) -> dict:
    """One mutant's ground truth and, unless equivalent, its default audit (module doc).

    Args:
        algo: the algorithm.
        text: what the site's noise privatises.
        mutation: the mutation.
        ask: ε, seed, budget and workers.

    Returns:
        JSON-ready: ``algorithm``, ``mutant``, ``operator``, ``mutation_text`` (the bug in
        words), ``site``, ``site_text``,
        ``factor``, ``status``, ``whitebox_loss`` (null for ∞), ``why``, and for an audited
        mutant ``verdict``, ``evidence`` (statistical, or a white-box proof for an
        ε-local-DP claim), ``eps_lb``, ``killed``, ``runs_to_kill``, ``whitebox_replay``,
        ``whitebox_replay_infinite``, ``seconds``, and a survivor's ``survived_because``.
    """
    status, loss, why = ground_truth(algo, mutation, ask.eps)
    row = {"algorithm": algo, "mutant": algo + mutation.suffix(), "operator": mutation.operator,
           "mutation_text": mutation.text(), "site": mutation.site, "site_text": text,
           "factor": mutation.factor,
           "status": status, "whitebox_loss": None if math.isinf(loss) else loss, "why": why}
    if status != "equivalent":
        row.update(_audit(row["mutant"], ask))
    return row


def summarise(rows: list, ask: MutationRequest) -> dict:
    """The mutation analysis of ``ask.algorithms`` from their mutants' rows.

    Args:
        rows: :func:`mutant_row` of every mutant of ``ask.algorithms``.
        ask: the algorithms, ε, seed and budget.

    Returns:
        JSON-ready: ``mutants`` (the rows), ``per_algorithm`` scores, ``within_margin``,
        ``bugs``, ``killed``, ``score`` (killed / bugs, None without bugs), ``eps``, ``seed``,
        ``budget``, ``operators``, ``mutations``.
    """
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
            "within_margin": sum(r["status"] == "within_margin" for r in rows),
            "bugs": bugs, "killed": killed, "score": killed / bugs if bugs else None}


def analyse(ask: MutationRequest) -> dict:
    """Mutation analysis of ``ask.algorithms``: every site × :data:`MUTATIONS` (module doc).

    Args:
        ask: the algorithms, ε, seed, budget and workers.

    Returns:
        :func:`summarise` of every mutant's :func:`mutant_row`.

    Raises:
        InputError: an unknown algorithm, or one without noise sites.
    """
    plans = {algo: plan(algo) for algo in ask.algorithms}    # bad names fail before any audit
    return summarise([mutant_row(algo, text, m, ask) for algo, p in plans.items()
                      for _, text, m in p], ask)


def _audit(name: str, ask: MutationRequest) -> dict:
    t0 = time.time()
    r = audit_algorithm(name, ask.eps, seed=ask.seed, workers=ask.workers,
                        runs=QUICK_RUNS if ask.quick else None)
    killed = r.verdict == Verdict.VIOLATION
    meas = r.counts.get("measurement", {})
    replay = r.whitebox.get("max_loss") if r.whitebox else None
    out = {"verdict": r.verdict.value, "evidence": r.evidence, "eps_lb": r.eps_lb,
           "killed": killed,
           "runs_to_kill": (None if not killed else r.whitebox["runs"]
                            if r.evidence == "white-box proof" else meas.get("runs_d")),
           "whitebox_replay": None if replay is None or math.isinf(replay) else replay,
           "whitebox_replay_infinite": replay is not None and math.isinf(replay),
           "seconds": round(time.time() - t0, 1)}
    if not killed:
        out["survived_because"] = r.reason or (f"{r.verdict.value}: eps_lb {r.eps_lb:.4f}, "
                                               f"eps_ub {r.eps_ub:.4f}")
    return out

"""Correctness checker: is an algorithm's error probability within the risk it claims?

``dpaudit check correctness --algo NAME --risk R`` simulates ``runs`` full runs of a registered
algorithm on *fresh* rewards: an empty reward table, so every reward is drawn afresh from
Bernoulli(means) (kernel contract of :mod:`dpaudit.simulation.simulate`), a new table per run. Runs
use the compiled kernel through :func:`dpaudit.simulation.simulate.outcomes`, in chunks of
:data:`~dpaudit.simulation.simulate.OUTCOME_CHUNK` runs; chunk i draws from the i-th child of
``numpy.random.SeedSequence(seed)``, so the result is identical for every ``workers``.

What an error is and which bounds of the papers apply is the algorithm's theory
(:func:`dpaudit.algorithms.registry.identification`, a
:class:`dpaudit.algorithms.theory.Identification` declared by
its paper's theory module); this module never asks an algorithm's name.

Fixed-confidence algorithms (:data:`dpaudit.algorithms.registry.FIXED_CONFIDENCE`) run with their
own ``risk`` parameter set
to R (the checked δ), each run until it stops or reaches its data-independent ``max_steps``.
A run is an **error** if it stopped with a wrong answer (best-arm identification: an arm that is
not a best arm, i.e. not an argmax of the means; ``ldp-tb-confidence``: a returned set ≠ the
target set {i : μ_i ≥ τ}) **or if it did not stop** (CAPPED or TRUNCATED): unstopped runs are
counted, never dropped, reported separately and counted as errors for the verdict.

Fixed-budget algorithms (:data:`dpaudit.algorithms.registry.FIXED_BUDGET`) run their budget; an
error is a wrong best arm
(DP-BAI family, DP-OD, OD-LinBAI) or a loss L(T) = 1 of eq. (2) of Barbara et al. (2025) (``ldp-tb-budget``,
``apt``, :func:`~dpaudit.algorithms.ldp_thresholding.algorithm.budget_loss`); a run without an
answer is an error too. R is then the tolerated error rate.

Statistics: k errors in n runs; exact Clopper–Pearson **one-sided** bounds, each at level
1 − α (together a two-sided 1 − 2α interval): verdict ``violation`` if the lower bound > R,
``certified`` if the upper bound ≤ R, else ``inconclusive``. Each verdict is wrong with
probability ≤ α. With zero errors the upper bound is 1 − α^{1/n}, so certifying R needs
n ≥ ln(α)/ln(1 − R) runs (:func:`runs_to_certify`).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from dpaudit.algorithms import registry
from dpaudit.core import validate
from dpaudit.errors import InputError
from dpaudit.simulation.simulate import CAPPED, STATUS_NAMES, STOPPED, TRUNCATED, outcomes
from dpaudit.statistics.stats import cp_lower, cp_upper

QUANTILES = (0.10, 0.50, 0.90, 0.99)


def runs_to_certify(risk: float, alpha: float = 0.05) -> int:
    """The fewest error-free runs that certify ``risk`` at confidence 1 − α.

    Args:
        risk: R in (0, 1).
        alpha: the verdict's error in (0, 0.5).

    Returns:
        The smallest n with (1 − R)^n ≤ α, i.e. n ≥ ln(α)/ln(1 − R).
    """
    return int(math.ceil(math.log(alpha) / math.log1p(-risk) - 1e-12))


def default_runs(risk: float, alpha: float = 0.05) -> int:
    """The default number of runs of a correctness check.

    Args:
        risk: R in (0, 1).
        alpha: the verdict's error.

    Returns:
        10 × :func:`runs_to_certify`, at least 1000 and at most 100000.
    """
    return max(1000, min(100_000, 10 * runs_to_certify(risk, alpha)))


def cp_bounds(k: int, n: int, alpha: float) -> tuple[float, float]:
    """One-sided exact Clopper–Pearson bounds on a binomial proportion.

    Args:
        k: successes.
        n: trials.
        alpha: the error of each bound.

    Returns:
        (lower, upper), each at level 1 − α; 0 at k = 0, 1 at k = n.
    """
    lo = 0.0 if k == 0 else float(cp_lower(k, n, alpha))
    hi = 1.0 if k == n else float(cp_upper(k, n, alpha))
    return lo, hi


def verdict(k: int, n: int, risk: float, alpha: float) -> dict:
    """The verdict on H: error probability ≤ ``risk``.

    Args:
        k: errors.
        n: runs.
        risk: R.
        alpha: the error of each one-sided bound.

    Returns:
        A JSON-able dict: ``verdict`` (``violation`` when the lower bound exceeds R,
        ``certified`` when the upper bound is ≤ R, else ``inconclusive``; each is wrong with
        probability ≤ α), the errors, runs, error rate and both bounds.
    """
    lo, hi = cp_bounds(k, n, alpha)
    v = "violation" if lo > risk else "certified" if hi <= risk else "inconclusive"
    return {"verdict": v, "errors": int(k), "runs": int(n), "error_rate": k / n,
            "ci_lower": lo, "ci_upper": hi, "alpha": alpha,
            "ci": f"one-sided Clopper-Pearson bounds, each at level 1 - alpha "
                  f"(two-sided {1 - 2 * alpha:g} interval)"}


EXIT_CODES = {"certified": 0, "violation": 1, "inconclusive": 3}


# ------------------------------------------------------------------------------ checker

def _tau_stats(tau: np.ndarray, stopped: np.ndarray) -> dict:
    s = tau[stopped]
    out = {"stopped": int(stopped.sum()), "unstopped": int((~stopped).sum()),
           "mean_all_runs_lower_bound": float(tau.mean()) if tau.size else None,
           "max_all_runs": int(tau.max()) if tau.size else None}
    if s.size:
        out.update(mean=float(s.mean()), max=int(s.max()),
                   quantiles={f"{int(round(q * 100))}%": float(np.quantile(s, q))
                              for q in QUANTILES})
    else:
        out.update(mean=None, max=None, quantiles={})
    return out


@dataclass(frozen=True)
class Trials:
    """The runs of a correctness check.

    The runs of a correctness check: ``runs`` (None: :func:`default_runs`), the root
    ``seed``, the level ``alpha`` of each one-sided bound, and ``workers`` (results do not
    depend on it).
    """

    runs: int | None = None
    seed: int = 0
    alpha: float = 0.05
    workers: int = 1


def check_correctness(algo: str, risk: float, *, eps: float | None = None,
                      params: dict | None = None, trials: Trials = Trials()) -> dict:
    """Check the error probability of a registered identification algorithm against a risk.

    What counts as an error, and the verdict rule, are in the module doc.

    Args:
        algo: a name of :data:`dpaudit.algorithms.registry.FIXED_CONFIDENCE` or
            :data:`dpaudit.algorithms.registry.FIXED_BUDGET`.
        risk: R in (0, 1): the risk δ passed to a fixed-confidence algorithm, or the
            tolerated error rate of a fixed-budget one.
        eps: the algorithm's ε (required for private algorithms; ignored by non-private ones).
        params: algorithm parameters by name (strings or values).
        trials: runs, root seed, level α of each one-sided bound, workers (:class:`Trials`).

    Returns:
        A JSON-able dict: error counts, exact Clopper–Pearson bounds, stopping-time quantiles
        next to the paper's bound, the verdict and ``exit_code`` (0 certified, 1 violation,
        3 inconclusive).

    Raises:
        InputError: bad input, found before any simulation.
    """
    runs, seed, alpha, workers = trials.runs, trials.seed, trials.alpha, trials.workers
    spec = registry.get(algo)
    theory = registry.identification(spec.name)
    if theory is None:
        accepted = registry.FIXED_CONFIDENCE + registry.FIXED_BUDGET
        raise InputError(f"{spec.name} is neither a fixed-confidence nor a fixed-budget "
                         f"identification algorithm; check correctness accepts: "
                         f"{', '.join(accepted)}")
    risk = validate.probability(risk, "--risk")
    alpha = validate.correctness_alpha(alpha, "--alpha")
    runs = validate.runs(default_runs(risk, alpha) if runs is None else runs, "--runs")
    if spec.private and eps is None:
        raise InputError(f"--eps is required: {spec.name} is a private algorithm")
    if eps is not None:
        validate.eps(eps, "--eps")
    eps_run = float(eps) if eps is not None else 1.0
    kind = theory.kind
    given = dict(params or {})
    if kind == "fixed-confidence":
        if "risk" in given and spec.param("risk").parse(given["risk"]) != float(risk):
            raise InputError(f"--param risk={given['risk']} differs from --risk {risk:g}: the "
                             "algorithm runs with the risk it is checked at")
        given["risk"] = risk
    p, _ = spec.resolve_claim(given, None)
    prep = spec.prepare(eps_run, p)
    means = np.asarray(prep.means, dtype=np.float64)
    limit = int(p["max_steps"] if "max_steps" in p else spec.audit_horizon(p))

    t0 = time.perf_counter()
    tau, rec, status = outcomes(spec.fresh_request(prep, runs, seed, limit), workers)
    seconds = time.perf_counter() - t0

    stopped = status == STOPPED
    wrong, target = theory.errors(rec, stopped, means, p)
    unstopped = ~stopped
    errors = int(wrong.sum() + unstopped.sum())
    v = verdict(errors, runs, risk, alpha)
    n_cert = runs_to_certify(risk, alpha)
    recs, counts = np.unique(rec[stopped], return_counts=True)
    out = {
        "check": "correctness", "algorithm": spec.name, "kind": kind, "model": spec.model,
        "private": spec.private, "eps": eps, "risk": risk, "alpha": alpha, "seed": seed,
        "runs": runs, "workers": workers, "seconds": seconds,
        "params": {k: list(x) if isinstance(x, tuple) else x for k, x in p.items()},
        "means": [float(m) for m in means], "limit": limit, **target,
        "wrong_answers": int(wrong.sum()),
        "status": {STATUS_NAMES[i]: int((status == i).sum()) for i in (STOPPED, TRUNCATED,
                                                                       CAPPED)},
        "unstopped_counted_as_errors": int(unstopped.sum()),
        **v, "exit_code": EXIT_CODES[v["verdict"]],
        "runs_to_certify_with_zero_errors": n_cert,
        "recommendations": {str(int(r)): int(c) for r, c in zip(recs, counts)},
    }
    if kind == "fixed-confidence":
        out["stopping_time"] = _tau_stats(tau, stopped)
        out["lower_bound"] = theory.lower_bound(spec.private, means, eps_run, risk)
        out["upper_bounds"] = (
            theory.upper_bounds(p, means, eps_run, risk) if theory.upper_bounds else
            [{"name": "paper upper bound", "applicable": False,
              "reason": "the paper gives no bound with explicit constants for this algorithm"
                        if spec.private else "non-private comparator"}])
    else:
        out["budget_pulls"] = {"mean": float(tau.mean()), "max": int(tau.max())}
        out["paper_bound"] = (
            theory.error_bound(p, prep, eps_run) if theory.error_bound else
            {"name": None, "applicable": False,
             "reason": f"no error bound of the papers is implemented for {spec.name}"})
    return out


def summary(r: dict) -> str:
    """Human-readable lines of a :func:`check_correctness` result.

    Args:
        r: the result.

    Returns:
        The lines, without newlines.
    """
    lines = [f"{r['algorithm']} ({r['kind']}, eps={r['eps']}, checked risk R={r['risk']:g}): "
             f"{r['runs']} runs on fresh Bernoulli rewards, means="
             + ",".join(f"{m:.4g}" for m in r["means"]) + f", seed {r['seed']}, "
             f"{r['seconds']:.1f} s",
             f"  errors {r['errors']} = {r['wrong_answers']} wrong answers + "
             f"{r['unstopped_counted_as_errors']} unstopped runs (counted as errors; status: "
             + ", ".join(f"{k} {v}" for k, v in r["status"].items()) + ")",
             f"  error rate {r['error_rate']:.4g}, one-sided Clopper-Pearson bounds at "
             f"{1 - r['alpha']:g} each: lower {r['ci_lower']:.4g}, upper {r['ci_upper']:.4g} "
             f"(two-sided {1 - 2 * r['alpha']:g} interval)"]
    if r["runs"] < r["runs_to_certify_with_zero_errors"]:
        lines.append(f"  note: certifying R={r['risk']:g} needs at least "
                     f"{r['runs_to_certify_with_zero_errors']} runs (zero errors)")
    if "stopping_time" in r:
        s = r["stopping_time"]
        if s["mean"] is not None:
            q = ", ".join(f"{k} {v:.6g}" for k, v in s["quantiles"].items())
            lines.append(f"  stopping time of the {s['stopped']} stopped runs: mean "
                         f"{s['mean']:.6g}, quantiles {q}, max {s['max']}; unstopped "
                         f"{s['unstopped']} (at the cap {r['limit']})")
        else:
            lines.append(f"  no run stopped ({s['unstopped']} unstopped at the cap {r['limit']})")
        lb = r["lower_bound"]
        lines.append(f"  {lb['name']}: " + (f"{lb['value']:.6g} (T* = {lb['T_star']:.6g})"
                                             if lb["applicable"] else
                                             f"not applicable ({lb['reason']})"))
        for ub in r["upper_bounds"]:
            lines.append(f"  {ub['name']}: " + (f"{ub['value']:.6g}" if ub["applicable"] else
                                                f"not applicable ({ub['reason']})"))
    else:
        b = r["paper_bound"]
        if b["applicable"]:
            lines.append(f"  paper bound {b['name']}: {b['value']:.4g}"
                         + (f" ({b['note']})" if b.get("note") else ""))
        else:
            lines.append("  paper bound" + (f" {b['name']}" if b["name"] else "")
                         + f": not applicable ({b['reason']})")
    word = {"certified": f"error probability <= {r['risk']:g} certified",
            "violation": f"error probability > {r['risk']:g}: VIOLATION",
            "inconclusive": f"the interval contains {r['risk']:g}"}[r["verdict"]]
    lines.append(f"dpaudit check correctness --algo {r['algorithm']}: {r['verdict']} ({word}; "
                 f"each verdict wrong with probability <= {r['alpha']:g})")
    return "\n".join(lines)

"""The theory of the LDP thresholding bandits paper (Barbara, Lazzaro, Pike-Burke, 2025).

The theory of the LDP thresholding bandits paper (Barbara, Lazzaro, Pike-Burke): the
constants of eqs. (4)-(8) as a checked report (:func:`report`, ``dpaudit check constants
--paper 001``), and what ``dpaudit check correctness`` checks its algorithms against
(:data:`IDENTIFICATION`: the losses of eq. (2), Theorems 3.1 and 4.1).
"""
from __future__ import annotations

import functools
import math

import numpy as np
from numpy.typing import ArrayLike

from dpaudit.algorithms.spec import Prepared
from dpaudit.algorithms.theory import Identification, cross_check, eps_values
from dpaudit.errors import InputError

from ..adap_tt.theory import thm2_lower_bound
from . import algorithm as lt

REPORT_PARAMS = ("means", "threshold", "tolerance", "eps")


def report(p: dict) -> dict:
    """The constants of ``dpaudit check constants --paper barbara2025`` with their cross-checks.

    Args:
        p: the parameters (:data:`REPORT_PARAMS`), checked by :mod:`dpaudit.checks.constants`.

    Returns:
        A JSON-able dict: the instance, the constants per ε and the ``checks`` list.
    """
    inst = dict(lt.INSTANCE_A)
    inst.update({k: p[k] for k in ("means", "threshold", "tolerance") if k in p})
    means = lt._unit("means", inst["means"])
    if means.ndim != 1 or means.size < 1:
        raise InputError(f"means={inst['means']!r} is not valid: expected a list of numbers")
    tau = float(lt._unit("threshold", inst["threshold"]))
    zeta = float(inst.get("tolerance", 0.0))
    if not (math.isfinite(zeta) and zeta >= 0):
        raise InputError(f"tolerance={zeta!r} is out of range: expected a number in [0, inf)")
    eps_list = [lt._check_eps(e) for e in eps_values(p.get("eps"), [0.5, 1.0, 2.0])]
    H = lt.complexity(means, tau, zeta)
    out = {"paper": "barbara2025", "means": means.tolist(), "threshold": tau, "tolerance": zeta,
           "K": int(means.size), "H": H, "gaps": lt.gaps(means, tau, zeta).tolist(),
           "by_eps": []}
    checks = []
    for e in eps_list:
        c = float(lt.c_eps(e))
        H_e = lt.complexity_eps(means, tau, zeta, e)
        d_e = lt.delta_eps(means, tau, zeta, e)
        mu_e = lt.mu_eps(means, e)
        tau_e = float(lt.tau_eps(tau, e))
        out["by_eps"].append({"eps": e, "c_eps": c, "mu_eps": mu_e.tolist(), "tau_eps": tau_e,
                              "zeta_eps": float(lt.zeta_eps(zeta, e)),
                              "delta_eps": d_e.tolist(), "H_eps": H_e})
        if e > 0 and math.isfinite(H):
            checks.append(cross_check(f"H_eps == c_eps^-2 H (eps={e:g}, eq. 8)", H_e, H / c ** 2))
            checks.append(cross_check(f"c_eps == (e^eps-1)/(e^eps+1) (eps={e:g})", c,
                                      math.expm1(e) / (math.exp(e) + 1)))
            checks.append(cross_check(f"max |Delta_eps - c_eps Delta| (eps={e:g}, eq. 7)",
                                      float(np.max(np.abs(d_e - c * lt.gaps(means, tau, zeta)))),
                                      0.0, "<=", 1e-12, absolute=True))
            same = bool(np.array_equal(mu_e >= tau_e, means >= tau))
            checks.append(cross_check(f"order preserved: mu_eps >= tau_eps iff mu >= tau (eps={e:g})",
                                      float(same), 1.0))
    out["checks"] = checks
    return out




# ----------------------------------------------------------------------------- check correctness

def _bitmask_to_set(mask: int, K: int) -> list[int]:
    return [i for i in range(K) if (mask >> i) & 1]


def budget_errors(rec: np.ndarray, stopped: np.ndarray, means: ArrayLike,
                  p: dict) -> tuple[np.ndarray, dict]:
    """Fixed budget: whether a stopped run errs.

    Fixed budget: a stopped run errs when its loss L(T) of eq. (2) is 1
    (:func:`~.algorithm.budget_loss`).

    Args:
        rec: the runs' recommendations.
        stopped: which runs stopped.
        means: the arms' means, in [0, 1].
        p: the algorithm's parameters.

    Returns:
        (errors per run, the loss's description).
    """
    wrong = np.zeros(rec.size, bool)
    wrong[stopped] = lt.budget_loss(rec[stopped], means, p["threshold"], p["tolerance"])
    return wrong, {"loss": "eq. (2) of Barbara et al. (2025): a returned arm with mu <= tau - zeta or a "
                           "missing arm with mu > tau + zeta",
                   "threshold": p["threshold"], "tolerance": p["tolerance"]}


def confidence_errors(rec: np.ndarray, stopped: np.ndarray, means: ArrayLike,
                      p: dict) -> tuple[np.ndarray, dict]:
    """Fixed confidence: whether a stopped run errs.

    Fixed confidence: a stopped run errs when its returned set is not the set of arms with
    mean ≥ the threshold (:func:`~.algorithm.target_mask`).

    Args:
        rec: the runs' recommendations.
        stopped: which runs stopped.
        means: the arms' means, in [0, 1].
        p: the algorithm's parameters.

    Returns:
        (errors per run, the rule's description).
    """
    tm = int(lt.target_mask(means, p["threshold"]))
    return stopped & (rec != tm), {"target_set": _bitmask_to_set(tm, means.size),
                                   "threshold": p["threshold"]}


def thm41_upper_bounds(p: dict, means: ArrayLike, eps: float, risk: float) -> list[dict]:
    """Theorem 4.1's bounds for LDP-TB-confidence.

    Theorem 4.1 for LDP-TB-confidence (on an event of probability ≥ 1 − δ): eq. (24) as
    printed and Appendix D's implicit bound.

    Args:
        p: the algorithm's parameters.
        means: the arms' means, in [0, 1].
        eps: ε (scalar or array).
        risk: the risk δ.

    Returns:
        The cross-check rows of eq. (24) and the implicit bound.
    """
    m, tau = np.asarray(means, float), float(p["threshold"])
    if np.any(m == tau):
        return [{"name": "Barbara et al. (2025) Thm 4.1", "applicable": False,
                 "reason": "an arm's mean equals the threshold (H is infinite)"}]
    return [{"name": "Barbara et al. (2025) Thm 4.1 eq. (24) as printed (prob. >= 1 - delta)",
             "applicable": True, "value": lt.thm41_eq24(m, tau, eps, risk)},
            {"name": "Barbara et al. (2025) App. D implicit bound T = K + (H_eps/2) ln(4KT^3/delta)",
             "applicable": True, "value": lt.thm41_implicit(m, tau, eps, risk)}]


def thm31_error_bound(p: dict, prep: Prepared, eps: float) -> dict:
    """Theorem 3.1's bound for LDP-TB-budget.

    Theorem 3.1 for LDP-TB-budget: E[L(T)] ≤ exp(−T/(4 H_ε) + 2K ln(log T + 1)); vacuous
    above 1.

    Args:
        p: the algorithm's parameters.
        prep: the prepared arrays.
        eps: ε (scalar or array).

    Returns:
        The cross-check row (applicable or not).
    """
    name = "Barbara et al. (2025) Thm 3.1: E[L(T)] <= exp(-T/(4 H_eps) + 2K ln(log T + 1))"
    val = float(lt.thm31_bound(p["horizon"], prep.means, p["threshold"], p["tolerance"], eps))
    if not (val <= 1.0):
        return {"name": name, "applicable": False, "value": val,
                "reason": f"vacuous: bound {val:.4g} > 1"}
    return {"name": name, "applicable": True, "value": val}


IDENTIFICATION = {
    "ldp-tb-confidence": Identification(
        "fixed-confidence", confidence_errors, upper_bounds=thm41_upper_bounds,
        lower_bound=functools.partial(thm2_lower_bound, best_arm=False)),
    "ldp-tb-budget": Identification("fixed-budget", budget_errors,
                                    error_bound=thm31_error_bound),
    "apt": Identification("fixed-budget", budget_errors),
}

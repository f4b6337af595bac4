"""The theory of DP-BAI's paper (Chen, Karthik, Chee, Tan, ICLR 2024).

The theory of DP-BAI's paper (Chen, Karthik, Chee, Tan, ICLR 2024, arXiv 2401.09073): the
schedule (eqs. 4-8) and hardness (eqs. 14-15) as a checked report (:func:`report`,
``dpaudit check constants --paper 000``), and what ``dpaudit check correctness`` checks its
fixed-budget algorithms against (:data:`IDENTIFICATION`: a wrong best arm; Theorem 4.2).
"""
from __future__ import annotations

import math

import numpy as np

from dpaudit.algorithms.spec import Prepared
from dpaudit.algorithms.theory import Identification, best_arm_errors, cross_check, eps_values
from dpaudit.core import validate
from dpaudit.errors import InputError

from . import algorithm as dp_bai
from . import linear

REPORT_PARAMS = ("means", "K", "d", "T", "eps", "reading")


def report(p: dict) -> dict:
    """The constants of ``dpaudit check constants --paper chen2024`` with their cross-checks.

    Args:
        p: the parameters (:data:`REPORT_PARAMS`), checked by :mod:`dpaudit.checks.constants`.

    Returns:
        A JSON-able dict: the instance, the constants per ε and the ``checks`` list.
    """
    T = p.get("T", 1000)
    reading = p.get("reading", "A")
    if reading not in ("A", "B"):
        raise InputError(f"reading={reading!r} is not valid: expected one of A, B")
    if not (isinstance(T, (int, np.integer)) and T >= 1):
        raise InputError(f"T={T!r} is out of range: expected an integer >= 1")
    eps_list = [validate.eps(e, "eps") for e in eps_values(p.get("eps"), [0.1, 1.0, 10.0])]
    means = None
    if "means" in p:
        means = np.asarray(p["means"], dtype=np.float64)
        if means.ndim != 1 or means.size < 2 or not np.all(np.isfinite(means)):
            raise InputError(f"means={p['means']!r} is not valid: expected a list of >= 2 "
                             "finite numbers")
        d = p.get("d", means.size)
        K = p.get("K", means.size)
        if K != means.size:
            raise InputError(f"K={K!r} is not valid: expected len(means) = {means.size}")
        features = "custom"
    elif "K" in p or "d" in p:
        K, d = p.get("K"), p.get("d")
        features = None
    else:
        A, theta = linear.sec5_features()
        means = A @ theta
        K, d = A.shape
        features = "sec5"
    for nm, v in (("K", K), ("d", d)):
        if not (isinstance(v, (int, np.integer)) and v >= 1):
            raise InputError(f"{nm}={v!r} is out of range: expected an integer >= 1")
    sch = linear.schedule(int(K), int(d), int(T), reading)
    out = {"paper": "chen2024", "features": features, "K": int(K), "d": int(d), "T": int(T),
           "reading": reading, "c": sch.c, "lambda": sch.lam, "g": list(sch.g),
           "h": list(sch.h), "s": list(sch.s), "M1": sch.M1, "M": sch.M,
           "T_prime": sch.T_prime, "means": None if means is None else means.tolist(),
           "by_eps": []}
    checks = [
        cross_check("s_1 == K", sch.s[1], K),
        cross_check("s_{M+1} == 1", sch.s[sch.M + 1], 1),
        cross_check("T' == T - M1 d - (M - M1) c", sch.T_prime,
                    T - sch.M1 * d - (sch.M - sch.M1) * sch.c),
        cross_check("len(s) == M + 2", len(sch.s), sch.M + 2),
    ]
    if means is not None:
        for e in eps_list:
            h = linear.hardness(means, int(d), e)
            out["by_eps"].append({"eps": e, "H_BAI": h["H_BAI"], "H_pri": h["H_pri"],
                                  "H": h["H"], "m": h["m"],
                                  "thm42_bound_16": linear.thm42_bound(sch.T_prime, sch.M,
                                                                       h["H"])})
            checks.append(cross_check(f"H == H_BAI + H_pri (eps={e:g})", h["H"],
                                      h["H_BAI"] + h["H_pri"]))
            checks.append(cross_check(f"eps*H_pri independent of eps (eps={e:g})", e * h["H_pri"],
                                      linear.hardness(means, int(d), 1.0)["H_pri"]))
    out["checks"] = checks
    return out




# ----------------------------------------------------------------------------- check correctness

def thm42_error_bound(p: dict, prep: Prepared, eps: float) -> dict:
    """Theorem 4.2's error bound, eq. (16), as a cross-check.

    Theorem 4.2, eq. (16): P[error] ≤ exp(−T'/(65 M H)) for DP-BAI, for sufficiently large
    T and d > 2.

    Args:
        p: the algorithm's parameters.
        prep: the prepared arrays.
        eps: ε (scalar or array).

    Returns:
        The cross-check row (applicable or not).
    """
    name = "Chen et al. (2024) Thm 4.2 eq. (16): exp(-T'/(65 M H))"
    st = dp_bai._bai_setup(p, True)
    d = st.features.shape[1]
    if d <= 2:
        return {"name": name, "applicable": False,
                "reason": f"d = {d} <= 2: Thm 4.2 is not established (Chen et al. 2024, Lemma G.3: "
                          "Delta_(ceil(d^2/4)) = 0)"}
    H = linear.hardness(st.means, d, eps)["H"]
    if not math.isfinite(H):
        return {"name": name, "applicable": False, "reason": "tie for the best arm (H = inf)"}
    val = linear.thm42_bound(st.sched.T_prime, st.sched.M, H)
    return {"name": name, "applicable": True, "value": val, "T_prime": st.sched.T_prime,
            "M": st.sched.M, "H": H,
            "note": "for sufficiently large T; Chen et al. 2024, Lemma G.3's step at "
                    "p = M_1 is not proved for g_0 >= 2"}


_BEST_ARM = Identification("fixed-budget", best_arm_errors)
IDENTIFICATION = {          # a wrong best arm is an error
    "dp-bai": Identification("fixed-budget", best_arm_errors, error_bound=thm42_error_bound),
    "dp-bai-gauss": _BEST_ARM,
    "dp-bai-baseline": _BEST_ARM,
    "dp-bai-reuse": _BEST_ARM,
    "dp-od": _BEST_ARM,
    "od-linbai": _BEST_ARM,
}

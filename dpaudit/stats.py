"""Exact binomial statistics for privacy-loss bounds.

Clopper–Pearson bounds come from statsmodels (``proportion_confint(method="beta")``). A
privacy-loss lower bound for an event S measured on independent runs,

    ε_lb = ln( CP_lower(k_num, n_num; α/2) / CP_upper(k_den, n_den; α/2) ),

holds with probability ≥ 1 − α (union bound over the two one-sided bounds) for any event fixed
before the measurement runs were drawn. It is clipped at 0 (the privacy loss of a pair of
distributions is ≥ 0).
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import brentq
from statsmodels.stats.proportion import proportion_confint


def cp_lower(k, n, alpha):
    """One-sided (1 − α) Clopper–Pearson lower bound on a binomial proportion.

    ``k``: successes (array-like; non-integer values are allowed and interpolate, used only
    for *predicted* bounds); ``n``: trials; ``alpha`` ∈ (0, 1). Returns 0 where k = 0.
    """
    lo, _ = proportion_confint(np.asarray(k, dtype=float), n, alpha=2 * alpha, method="beta")
    return np.nan_to_num(np.asarray(lo, dtype=float), nan=0.0)


def cp_upper(k, n, alpha):
    """One-sided (1 − α) Clopper–Pearson upper bound (1 where k = n)."""
    _, hi = proportion_confint(np.asarray(k, dtype=float), n, alpha=2 * alpha, method="beta")
    return np.nan_to_num(np.asarray(hi, dtype=float), nan=1.0)


def eps_lower_bound(k_num, n_num, k_den, n_den, alpha):
    """Lower confidence bound (level 1 − α) on ln(P_num(S)/P_den(S)); ≥ 0.

    Vectorised over ``k_num``/``k_den``. α/2 goes to each of the two one-sided bounds.
    """
    lo = cp_lower(k_num, n_num, alpha / 2)
    hi = cp_upper(k_den, n_den, alpha / 2)
    with np.errstate(divide="ignore"):
        out = np.log(lo) - np.log(hi)
    return np.maximum(out, 0.0)


def log_ratio(k_num, n_num, k_den, n_den) -> float:
    """Point estimate ln(p̂_num/p̂_den) (±inf where a side has no hits; nan if both have none)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.log(np.float64(k_num) / n_num) - np.log(np.float64(k_den) / n_den))


def log_ratio_interval(k_num, n_num, k_den, n_den, alpha):
    """Two-sided (1 − α) interval for ln(p_num/p_den) from Clopper–Pearson bounds at α/4 each.

    Returns (lower, upper); lower may be −inf and upper +inf.
    """
    a = alpha / 4
    with np.errstate(divide="ignore"):
        lo = np.log(cp_lower(k_num, n_num, a)) - np.log(cp_upper(k_den, n_den, a))
        hi = np.log(cp_upper(k_num, n_num, a)) - np.log(cp_lower(k_den, n_den, a))
    return float(lo), float(hi)


def detectable_eps(p_den: float, n: int, claim: float, alpha: float) -> float:
    """Smallest true loss on an event of probability ``p_den`` (denominator side) that would
    give, at the expected counts with ``n`` runs per side, ε_lb > ``claim`` at level 1 − α.

    An event never seen on the denominator side is taken at one hit in ``n`` (the
    smallest probability the counts can express). Returns inf when even a certain event on the
    numerator side would not suffice.
    """
    p_den = max(p_den, 1.0 / n)

    def f(loss):
        return float(eps_lower_bound(min(n, n * p_den * np.exp(loss)), n, n * p_den, n, alpha)) - claim

    hi = -np.log(p_den)
    if f(hi) <= 0:
        return float("inf")
    if f(0.0) > 0:
        return 0.0
    return float(brentq(f, 0.0, hi, xtol=1e-6))

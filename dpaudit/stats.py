"""Exact binomial statistics for privacy-loss bounds.

Clopper–Pearson bounds come from statsmodels (``proportion_confint(method="beta")``). A
privacy-loss lower bound for an event S measured on independent runs,

    ε_lb = ln( CP_lower(k_num, n_num; α/2) / CP_upper(k_den, n_den; α/2) ),

holds with probability ≥ 1 − α (union bound over the two one-sided bounds) for any event fixed
before the measurement runs were drawn. It is clipped at 0 (the privacy loss of a pair of
distributions is ≥ 0).

(ε, δ) claims: the mechanism violates (ε, δ)-DP on S when P_num(S) − e^ε·P_den(S) > δ, i.e. when
the *δ-loss* ln((P_num(S) − δ)/P_den(S)) exceeds ε. Its lower bound replaces CP_lower(k_num) by
CP_lower(k_num) − δ; with δ = 0 it is the pure-DP bound above.
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


def eps_lower_bound(k_num, n_num, k_den, n_den, alpha, delta=0.0):
    """Lower confidence bound (level 1 − α) on the δ-loss ln((P_num(S) − δ)/P_den(S)); ≥ 0.

    Vectorised over ``k_num``/``k_den``. α/2 goes to each of the two one-sided bounds.
    """
    lo = cp_lower(k_num, n_num, alpha / 2) - delta
    hi = cp_upper(k_den, n_den, alpha / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(np.maximum(lo, 0.0)) - np.log(hi)
    return np.maximum(out, 0.0)


def eps_upper_bound(k_num, n_num, k_den, n_den, alpha, delta=0.0):
    """Upper confidence bound (level 1 − α) on the δ-loss ln((P_num(S) − δ)/P_den(S)):
    +inf when the denominator's lower bound is 0, −inf when P_num(S) ≤ δ with confidence."""
    hi = cp_upper(k_num, n_num, alpha / 2) - delta
    lo = cp_lower(k_den, n_den, alpha / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(hi <= 0, -np.inf, np.log(np.maximum(hi, 0.0)) - np.log(lo))


P_FLOOR_LOG10 = 50.0   # p-values are floored at 1e-50


def p_value(k_num, n_num, k_den, n_den, eps, delta=0.0) -> float:
    """p-value of H0: P_num(S) ≤ e^ε·P_den(S) + δ for the test behind :func:`eps_lower_bound`:
    the smallest α at which the bound exceeds ε (1 if it never does; floored at 1e-50, below
    which scipy's beta quantiles stop converging)."""
    def f(log10_a):
        return float(eps_lower_bound(k_num, n_num, k_den, n_den, 10.0 ** log10_a, delta)) - eps

    if f(-1e-12) <= 0:
        return 1.0
    if f(-P_FLOOR_LOG10) > 0:
        return 10.0 ** -P_FLOOR_LOG10
    return float(10.0 ** brentq(f, -P_FLOOR_LOG10, -1e-12, xtol=1e-13))


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


def detectable_eps(p_den: float, n: int, claim: float, alpha: float, delta: float = 0.0) -> float:
    """Smallest true loss on an event of probability ``p_den`` (denominator side) that would
    give, at the expected counts with ``n`` runs per side, ε_lb > ``claim`` at level 1 − α
    (for an (ε, δ) claim: the smallest δ-loss, P_num = e^loss·p_den + δ).

    An event never seen on the denominator side is taken at one hit in ``n`` (the
    smallest probability the counts can express). Returns inf when even a certain event on the
    numerator side would not suffice.
    """
    p_den = max(p_den, 1.0 / n)

    def f(loss):
        k_num = min(n, n * (p_den * np.exp(loss) + delta))
        return float(eps_lower_bound(k_num, n, n * p_den, n, alpha, delta)) - claim

    hi = -np.log(p_den)
    if f(hi) <= 0:
        return float("inf")
    if f(0.0) > 0:
        return 0.0
    return float(brentq(f, 0.0, hi, xtol=1e-6))

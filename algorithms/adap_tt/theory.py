"""The theory of AdaP-TT's paper (Azize, Al Marjani, Jourdan, Basu, NeurIPS 2023).

The theory of AdaP-TT's paper (Azize, Al Marjani, Jourdan, Basu, NeurIPS 2023): the
characteristic times of Corollary 1 / Theorem 2, the β-optimal allocation of Theorem 5,
Proposition 1 (closed form and LP), the regime boundary and the threshold magnitudes
(through :mod:`.glr`), as a checked report (:func:`report`, ``dpaudit check constants --paper
004``), and the bounds ``dpaudit check correctness`` compares stopping times with
(:data:`IDENTIFICATION`).

Conventions: natural logs; arms 0-based in arrays; every characteristic time T is "samples
per unit of ln(1/δ)" (a lower bound is T·ln(1/(3δ))); allocations ω are length-K float arrays
summing to 1 in instance order. Bad input raises :class:`dpaudit.errors.InputError` with a
one-line message naming the value and the accepted range.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
import math

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import brentq, linprog, minimize, minimize_scalar
from scipy.special import ndtr

from dpaudit.algorithms.theory import Identification, best_arm_errors, cross_check, eps_values
from dpaudit.core import validate
from dpaudit.errors import InputError

from . import glr

REPORT_PARAMS = ("instance", "means", "eps", "risk", "beta", "s", "K", "phases")
FAMILIES = ("bernoulli", "gaussian")

# instances (Section 5 and Appendix F; μ1 with 6 and with 5 arms)
INSTANCES_004 = {
    "mu1": (0.95, 0.9, 0.9, 0.9, 0.9, 0.5),
    "mu1_k5": (0.95, 0.9, 0.9, 0.9, 0.5),
    "mu2": (0.75, 0.7, 0.7, 0.7, 0.7),
    "mu3": (0.0, 0.25, 0.5, 0.75, 1.0),
    "mu4": (0.75, 0.625, 0.5, 0.375, 0.25),
    "mu5": (0.75, 0.53125, 0.375, 0.28125, 0.25),
    "mu6": (0.75, 0.71875, 0.625, 0.46875, 0.25),
}
PHASES_004 = (2, 4, 8, 12, 16, 20, 24)   # rows
CG_POINTS = (0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0)  # C_G table


def _instance(means: ArrayLike, family: str = "bernoulli") -> np.ndarray:
    if family not in FAMILIES:
        raise InputError(f"family={family!r} is not valid: expected one of {', '.join(FAMILIES)}")
    try:
        mu = np.asarray(means, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"means={means!r} is not valid: expected a list of numbers") from None
    if mu.ndim != 1 or mu.size < 2:
        raise InputError(f"means={means!r} is not valid: expected a list of at least 2 numbers")
    bad = ~np.isfinite(mu)
    if family == "bernoulli":
        bad |= (mu < 0) | (mu > 1)
    if bad.any():
        rng = "[0, 1]" if family == "bernoulli" else "finite reals"
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"means[{i}]={float(mu[i])!r} is out of range: expected {rng}")
    if np.count_nonzero(mu == mu.max()) > 1:
        raise InputError(f"means={mu.tolist()!r} is not valid: expected a unique best arm "
                         "(characteristic times are infinite with a tied best arm)")
    return mu


def _gaps(mu: np.ndarray):
    a = int(np.argmax(mu))
    gaps = mu[a] - mu
    others = np.delete(np.arange(mu.size), a)
    return a, gaps, others


# ----------------------------------------------------------------------------- divergences

def kl_bernoulli(p: ArrayLike, q: ArrayLike) -> ArrayLike:
    """The Bernoulli KL divergence kl(p, q), vectorised.

    kl(p, q) between Bernoulli(p) and Bernoulli(q), with 0·ln 0 = 0 (kl(1, q) = −ln q,
    kl(0, q) = −ln(1 − q)); +inf when q ∈ {0, 1} and p ≠ q. Vectorised.

    Args:
        p: a mean in [0, 1].
        q: another mean in [0, 1].

    Returns:
        kl(p, q), of the broadcast shape (nats).
    """
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = np.where(p > 0, p * (np.log(p) - np.log(q)), 0.0)
        t2 = np.where(p < 1, (1 - p) * (np.log1p(-p) - np.log1p(-q)), 0.0)
    out = t1 + t2
    return np.where(p == q, 0.0, out)


def _kl3(family: str, sigma2: float):
    """Scalar kl(p, q) given q and its complement, for precision near 0 and 1.

    Scalar kl(p, q) given q and its complement qc = 1 − q computed separately (keeps
    precision when a mixture mean sits next to 0 or 1; Gaussian ignores qc).
    """
    if family == "bernoulli":
        def kl3(p: ArrayLike, q: ArrayLike, qc: float):
            v = 0.0
            if p > 0:
                v += p * (math.log(p) - math.log(q)) if q > 0 else math.inf
            if p < 1:
                v += (1 - p) * (math.log1p(-p) - math.log(qc)) if qc > 0 else math.inf
            return max(v, 0.0)
        return kl3
    return lambda p, q, qc: (p - q) ** 2 / (2.0 * sigma2)


def _mix(p1: ArrayLike, p2: ArrayLike, w1: float, w2: float):
    """(m, 1 − m) for the weighted mean m = (w1 p1 + w2 p2)/(w1 + w2)."""
    tot = w1 + w2
    return (w1 * p1 + w2 * p2) / tot, (w1 * (1 - p1) + w2 * (1 - p2)) / tot


def tv_of_gap(gap: ArrayLike, family: str = "bernoulli", sigma2: float = 1.0) -> ArrayLike:
    """The TV distance f(Δ) of two members of the family whose means differ by Δ.

    f(Δ) = TV between two members of the family whose means differ by Δ ≥ 0:
    Bernoulli f(Δ) = Δ; Gaussian N(·, σ²) f(Δ) = 2Φ(Δ/(2σ)) − 1. Vectorised.

    Args:
        gap: mean gaps Δ ≥ 0.
        family: ``bernoulli`` or ``gaussian``.
        sigma2: the Gaussian variance σ².

    Returns:
        f(Δ), of ``gap``'s shape.
    """
    g = np.asarray(gap, dtype=np.float64)
    if family == "bernoulli":
        return g
    return 2.0 * ndtr(g / (2.0 * math.sqrt(sigma2))) - 1.0


# ----------------------------------------------------------------------------- T*_KL (GK16)

def _pair_cost(kl: Callable, mu_best: float, mu_a: float, w_best: float, w_a: float):
    """ω_{a*}·kl(μ_{a*}, m) + ω_a·kl(μ_a, m), m the ω-weighted mean (inner inf of Thm 2)."""
    if w_best + w_a <= 0:
        return 0.0
    m, mc = _mix(mu_best, mu_a, w_best, w_a)
    out = 0.0
    if w_best > 0:
        out += w_best * kl(mu_best, m, mc)
    if w_a > 0:
        out += w_a * kl(mu_a, m, mc)
    return float(out)


def t_kl(means: ArrayLike, family: str = "bernoulli", sigma2: float = 1.0) -> tuple:
    """T*_KL(ν) of Corollary 1 (non-private characteristic time [GK16]) and its allocation ω*_KL.

    T*_KL(ν)^{-1} = sup_{ω∈Σ_K} inf_{λ∈Alt(ν)} Σ_a ω_a KL(ν_a, λ_a), computed by the standard
    Garivier–Kaufmann procedure: for a ≠ a*, g_a(x) = kl(μ*, m_a(x)) +
    x·kl(μ_a, m_a(x)) with m_a(x) = (μ* + xμ_a)/(1 + x); x_a(y) = g_a^{-1}(y) (brentq);
    y* ∈ (0, min_a kl(μ*, μ_a)) solves Σ_a kl(μ*, m_a)/kl(μ_a, m_a) = 1 (brentq); then
    ω*_{a*} = 1/(1 + Σ x_a), ω*_a = x_a·ω*_{a*}, T*_KL = 1/(ω*_{a*}·y*).
    ``family``: "bernoulli" (means in [0, 1], 0 and 1 allowed) or "gaussian" (variance
    ``sigma2``). Returns (T, ω) with ω a length-K array.

    Args:
        means: the arms' means, in [0, 1].
        family: ``bernoulli`` or ``gaussian``.
        sigma2: the Gaussian variance σ².

    Returns:
        (T*_KL, ω*): the characteristic time and its optimal allocation (K,).
    """
    mu = _instance(means, family)
    sigma2 = validate.positive_real(sigma2, "sigma2")
    kl = _kl3(family, sigma2)
    a, _, others = _gaps(mu)
    best = float(mu[a])

    def g(x: float, mu_a: float):
        return _pair_cost(kl, best, mu_a, 1.0, x)

    def x_of(y: float, mu_a: float):
        hi = 1.0
        while g(hi, mu_a) < y:
            hi *= 2.0
            if hi > 1e300:
                raise ArithmeticError("x_a(y) bracket overflow")
        return brentq(lambda x: g(x, mu_a) - y, 0.0, hi, xtol=1e-300, rtol=1e-15, maxiter=500)

    def ratio_sum(y: float):
        """F(y) = Σ_a kl(μ*, m_a)/kl(μ_a, m_a); +inf where x_a(y) overflows."""
        s = 0.0
        for b in others:
            try:
                x = x_of(y, mu[b])
            except ArithmeticError:
                return math.inf
            m, mc = _mix(best, mu[b], 1.0, x)
            den = kl(mu[b], m, mc)
            if den <= 0:
                return math.inf
            s += kl(best, m, mc) / den
        return s

    # bracket y*: F(lo) < 1 <= F(hi) < inf; F increases from 0 to +inf on (0, y_max)
    y_max = float(min(kl(best, mu[b], 1 - mu[b]) for b in others))
    lo = min(y_max, 1.0) * 1e-12
    top = y_max
    for _ in range(5000):
        hi = 0.5 * (lo + top) if math.isfinite(top) else 4.0 * lo + 1e-3
        r = ratio_sum(hi)
        if r < 1.0:
            lo = hi
        elif math.isfinite(r):
            break
        else:
            top = hi
    else:
        raise ArithmeticError("could not bracket y* in the GK16 procedure")
    y = brentq(lambda t: ratio_sum(t) - 1.0, lo, hi, xtol=1e-300, rtol=1e-15, maxiter=500)
    x = np.array([x_of(y, mu[b]) for b in others])
    w = np.empty(mu.size)
    w[a] = 1.0 / (1.0 + x.sum())
    w[others] = x * w[a]
    return 1.0 / (w[a] * y), w


def kl_objective(means: ArrayLike, omega: ArrayLike, family: str = "bernoulli",
                 sigma2: float = 1.0) -> float:
    """The KL part of Theorem 2's inner infimum at a given allocation ω.

    inf_{λ∈Alt} Σ_a ω_a KL(ν_a, λ_a) = min_{a≠a*} [ω_{a*} kl(μ*, m) + ω_a kl(μ_a, m)] at a
    given allocation ω (Theorem 2's KL part; KLpair). 1/T*_KL is its maximum.

    Args:
        means: the arms' means, in [0, 1].
        omega: an allocation ω (sums to 1).
        family: ``bernoulli`` or ``gaussian``.
        sigma2: the Gaussian variance σ².

    Returns:
        The infimum at ω.
    """
    mu = _instance(means, family)
    kl = _kl3(family, sigma2)
    a, _, others = _gaps(mu)
    w = np.asarray(omega, dtype=np.float64)
    return min(_pair_cost(kl, mu[a], mu[b], w[a], w[b]) for b in others)


# ----------------------------------------------------------------------------- Gaussian β-times

def t_kl_beta(means: ArrayLike, beta: float = 0.5, sigma2: float = 1.0) -> tuple:
    """T*_{KL,β}(μ) and ω*_{KL,β} for Gaussian arms (Theorem 5; eq. 25).

    2·T*_{KL,β}(μ)^{-1} = max_{ω∈Σ_K, ω_{a*}=β} min_{a≠a*} Δ_a²/(1/β + 1/ω_a) (σ² = 1, the
    paper's 1-sub-Gaussian convention; variance σ² multiplies T by σ²). At the optimum the
    ratios are equal to y: ω_a(y) = 1/(Δ_a²/y − 1/β), and y ∈ (0, βΔ_min²) solves
    Σ_{a≠a*} ω_a(y) = 1 − β (brentq). Returns (T, ω) with T = 2σ²/y.

    Args:
        means: the arms' means, in [0, 1].
        beta: the allocation's β.
        sigma2: the Gaussian variance σ².

    Returns:
        (T*_{KL,β}, ω*_{KL,β}).
    """
    mu = _instance(means, "gaussian")
    beta = validate.positive_real(beta, "beta", 1.0)
    sigma2 = validate.positive_real(sigma2, "sigma2")
    a, gaps, others = _gaps(mu)
    d2 = gaps[others] ** 2

    def excess(y: float):
        return float(np.sum(1.0 / (d2 / y - 1.0 / beta))) - (1.0 - beta)

    ymax = beta * d2.min()
    y = brentq(excess, ymax * 1e-15, ymax * (1 - 1e-15), xtol=1e-300, rtol=1e-15, maxiter=500)
    w = np.empty(mu.size)
    w[a] = beta
    w[others] = 1.0 / (d2 / y - 1.0 / beta)
    return 2.0 * sigma2 / y, w


def t_kl_gaussian_min_beta(means: ArrayLike, sigma2: float = 1.0) -> tuple:
    """Gaussian T*_KL by minimising T*_{KL,β} over β.

    Gaussian T*_KL = min_{β∈(0,1)} T*_{KL,β}, by bounded 1-D minimisation over
    β (scipy ``minimize_scalar``). Returns (T, β*, ω). Numerical counterpart of
    ``t_kl(means, "gaussian")``.

    Args:
        means: the arms' means, in [0, 1].
        sigma2: the Gaussian variance σ².

    Returns:
        (T, β*, ω).
    """
    mu = _instance(means, "gaussian")
    res = minimize_scalar(lambda b: t_kl_beta(mu, b, sigma2)[0], bounds=(1e-9, 1 - 1e-9),
                          method="bounded", options={"xatol": 1e-12})
    T, w = t_kl_beta(mu, float(res.x), sigma2)
    return T, float(res.x), w


# ----------------------------------------------------------------------------- T*_TV

def t_tv(means: ArrayLike, family: str = "bernoulli", sigma2: float = 1.0) -> tuple:
    """T*_TV by Proposition 1's closed form.

    T*_TV by Proposition 1's closed form: T*_TV = 1/f(Δ_min) + Σ_{a≠a*} 1/f(Δ_a), optimal
    ω ∝ (1/f(Δ_min) at a*, 1/f(Δ_a) elsewhere), with f(Δ) = TV of a mean shift Δ
    (:func:`tv_of_gap`; Bernoulli f(Δ) = Δ is Proposition 1 itself, Gaussian is our
    extension). Returns (T, ω).

    Args:
        means: the arms' means, in [0, 1].
        family: ``bernoulli`` or ``gaussian``.
        sigma2: the Gaussian variance σ².

    Returns:
        (T*_TV, ω*_TV).
    """
    mu = _instance(means, family)
    sigma2 = validate.positive_real(sigma2, "sigma2")
    a, gaps, others = _gaps(mu)
    f = tv_of_gap(gaps, family, sigma2)
    inv = np.empty(mu.size)
    inv[others] = 1.0 / f[others]
    inv[a] = 1.0 / f[others].min()
    T = float(inv.sum())
    return T, inv / T


def t_tv_lp(means: ArrayLike, family: str = "bernoulli", sigma2: float = 1.0) -> tuple:
    """T*_TV as a general linear program (scipy ``linprog``, HiGHS).

    Corollary 1: T*_TV^{-1} = sup_ω inf_{λ∈Alt} Σ_a ω_a TV(ν_a, λ_a). For a pair (a*, a) the
    inner infimum moves both means to a common point; TV is a concave increasing f of the mean
    distance, so the infimum is at an endpoint: min(ω_{a*}, ω_a)·f(Δ_a). Hence: maximise t
    s.t. t ≤ ω_{a*} f(Δ_a), t ≤ ω_a f(Δ_a) (a ≠ a*), Σω = 1, ω ≥ 0; T*_TV = 1/t*.
    Returns (T, ω). No closed form is used.

    Args:
        means: the arms' means, in [0, 1].
        family: ``bernoulli`` or ``gaussian``.
        sigma2: the Gaussian variance σ².

    Returns:
        (T*_TV, ω*) from the linear program.
    """
    mu = _instance(means, family)
    sigma2 = validate.positive_real(sigma2, "sigma2")
    K = mu.size
    a, gaps, others = _gaps(mu)
    f = tv_of_gap(gaps, family, sigma2)
    rows = []
    for b in others:
        for arm in (a, b):
            r = np.zeros(K + 1)
            r[K] = 1.0
            r[arm] = -f[b]
            rows.append(r)
    c = np.zeros(K + 1)
    c[K] = -1.0
    res = linprog(c, A_ub=np.array(rows), b_ub=np.zeros(len(rows)),
                  A_eq=np.r_[np.ones(K), 0.0][None, :], b_eq=[1.0],
                  bounds=[(0, None)] * K + [(None, None)], method="highs",
                  options={"primal_feasibility_tolerance": 1e-10,
                           "dual_feasibility_tolerance": 1e-10})
    if res.status != 0:
        raise ArithmeticError(f"linprog failed: {res.message}")
    return 1.0 / res.x[K], np.asarray(res.x[:K])


def tv_objective(means: ArrayLike, omega: ArrayLike, family: str = "bernoulli",
                 sigma2: float = 1.0) -> float:
    """inf_{λ∈Alt} Σ_a ω_a TV(ν_a, λ_a) = min_{a≠a*} min(ω_{a*}, ω_a)·f(Δ_a) at a given ω.

    Args:
        means: the arms' means, in [0, 1].
        omega: an allocation ω (sums to 1).
        family: ``bernoulli`` or ``gaussian``.
        sigma2: the Gaussian variance σ².

    Returns:
        The infimum at ω.
    """
    mu = _instance(means, family)
    a, gaps, others = _gaps(mu)
    w = np.asarray(omega, dtype=np.float64)
    f = tv_of_gap(gaps, family, sigma2)
    return float(min(min(w[a], w[b]) * f[b] for b in others))


# ----------------------------------------------------------------------------- Theorem 2

def _epigraph(mu: np.ndarray, eps: float, starts: Sequence, family: str = "bernoulli",
              sigma2: float = 1.0, scale: float = 1.0):
    """T*(ν; ε) of Theorem 2 as an epigraph problem.

    max_ω min{min_a KLpair_a(ω), 6ε·min_a min(ω_{a*}, ω_a)Δ_a} (ε = inf: KL part only) as
    an epigraph problem (variables ω, t; maximise t), scipy SLSQP from each start; returns the
    best (value, ω) over the SLSQP results and the starts themselves.
    """
    K = mu.size
    kl = _kl3(family, sigma2)
    a, gaps, others = _gaps(mu)
    f = tv_of_gap(gaps, family, sigma2)
    private = math.isfinite(eps)

    def cons(z: np.ndarray):
        w, t = z[:K], z[K] / scale
        out = []
        for b in others:
            out.append(_pair_cost(kl, mu[a], mu[b], w[a], w[b]) - t)
            if private:
                out.append(6 * eps * w[a] * f[b] - t)
                out.append(6 * eps * w[b] * f[b] - t)
        return scale * np.array(out)

    def value(w: np.ndarray):
        w = np.clip(w, 0, None)
        w = w / w.sum()
        v = min(_pair_cost(kl, mu[a], mu[b], w[a], w[b]) for b in others)
        if private:
            v = min(v, 6 * eps * float(min(min(w[a], w[b]) * f[b] for b in others)))
        return v, w

    best = None
    for w0 in starts:
        w0 = np.asarray(w0, dtype=np.float64)
        z0 = np.r_[w0, 0.999 * value(w0)[0] * scale]
        res = minimize(lambda z: -z[K], z0, method="SLSQP",
                       jac=lambda z: np.r_[np.zeros(K), -1.0],
                       bounds=[(1e-15, 1.0)] * K + [(0, None)],
                       constraints=[{"type": "ineq", "fun": cons},
                                    {"type": "eq", "fun": lambda z: z[:K].sum() - 1.0}],
                       options={"ftol": 1e-15, "maxiter": 1000})
        for cand in (res.x[:K], w0):
            v, w = value(cand)
            if best is None or v > best[0]:
                best = (v, w)
    return best


def t_kl_epigraph(means: ArrayLike, family: str = "bernoulli", sigma2: float = 1.0) -> tuple:
    """T*_KL by direct numerical optimisation of Corollary 1's sup-inf.

    T*_KL by direct numerical optimisation of Corollary 1's sup-inf (concave epigraph
    problem, scipy SLSQP from the uniform allocation and from ω ∝ 1/Δ²) — the numerical
    counterpart of :func:`t_kl` (no root finding, no closed form). Returns (T, ω).

    Args:
        means: the arms' means, in [0, 1].
        family: ``bernoulli`` or ``gaussian``.
        sigma2: the Gaussian variance σ².

    Returns:
        (T*_KL, ω*).
    """
    mu = _instance(means, family)
    sigma2 = validate.positive_real(sigma2, "sigma2")
    a, gaps, others = _gaps(mu)
    g = gaps.copy()
    g[a] = gaps[others].min()
    inv = 1.0 / g ** 2
    K = mu.size
    # scale: the GK16 bound T*_KL <= 2H (Gaussian) sets the order of magnitude
    scale = float(np.sum(inv))
    v, w = _epigraph(mu, math.inf, [np.full(K, 1.0 / K), inv / inv.sum()], family, sigma2,
                     scale)
    return 1.0 / v, w


def t_star_eps(means: ArrayLike, eps: float) -> tuple:
    """T*(ν; ε) of Theorem 2 for Bernoulli arms, numerically.

    T*(ν;ε)^{-1} = sup_ω inf_λ min(Σ ω_a KL(ν_a, λ_a), 6ε Σ ω_a TV(ν_a, λ_a))
                 = max_ω min{ min_{a≠a*} KLpair_a(ω), 6ε·min_{a≠a*} min(ω_{a*}, ω_a)Δ_a }
    (inf of a min = min of the infs). Concave epigraph problem solved with scipy SLSQP
    started from ω*_KL, ω*_TV and their midpoint (best kept). Returns (T, ω).

    Args:
        means: the arms' means, in [0, 1].
        eps: ε > 0.

    Returns:
        (T*(ν; ε), ω*).
    """
    mu = _instance(means, "bernoulli")
    eps = validate.positive_real(eps, "eps")
    T_kl, w_kl = t_kl(mu)
    T_tv, w_tv = t_tv(mu)
    scale = max(T_kl, T_tv / (6 * eps))      # t·scale = O(1)
    v, w = _epigraph(mu, eps, [w_kl, w_tv, 0.5 * (w_kl + w_tv)], "bernoulli", 1.0, scale)
    return 1.0 / v, w


def regime_boundary(means: ArrayLike) -> dict:
    """The privacy-regime boundary ε_b of Corollary 1 (Bernoulli).

    The privacy-regime boundary of Corollary 1 (Bernoulli): ε_b = T*_TV/(6·T*_KL) (low
    privacy, bound T*_KL, for ε > ε_b; high privacy, bound T*_TV/(6ε), for ε < ε_b), and the
    boundary without the 6, T*_TV/T*_KL, used in Section 4 / App. E.6. Dimensionless.

    Args:
        means: the arms' means, in [0, 1].

    Returns:
        ε_b and the two regimes' bounds.
    """
    T_kl, _ = t_kl(means)
    T_tv, _ = t_tv(means)
    return {"eps_boundary": float(T_tv / (6 * T_kl)), "eps_boundary_no6": float(T_tv / T_kl)}


def thm5_slope(means: ArrayLike, eps: float, beta: float = 0.5) -> float:
    """Theorem 5's asymptotic upper bound on E[τ]/ln(1/δ).

    Theorem 5: limsup E[τ]/ln(1/δ) ≤ 4·T*_{KL,β}(μ)·(1 + sqrt(1 + Δ_max²/(2ε²)))
    (Gaussian σ² = 1 T*_{KL,β}).

    Args:
        means: the arms' means, in [0, 1].
        eps: ε > 0.
        beta: the allocation's β.

    Returns:
        The slope 4·T*_{KL,β}·(1 + sqrt(1 + Δ_max²/(2ε²))).
    """
    mu = _instance(means, "gaussian")
    eps = validate.positive_real(eps, "eps")
    _, gaps, others = _gaps(mu)
    dmax = float(gaps[others].max())
    return 4 * t_kl_beta(mu, beta)[0] * (1 + math.sqrt(1 + dmax ** 2 / (2 * eps ** 2)))


# ----------------------------------------------------------------------------------- thresholds

def threshold_row(k: int, eps_list: Sequence[float], risk: float = 0.01, K: int = 6,
                  s: float = 2.0) -> dict:
    """One row of the threshold magnitudes: both arms in phase k ≥ 2.

    One row of : both arms in phase k ≥ 2 with local count Ñ = 2^{k−2}
    (Lemma 3): c_{k·k}(Ñ, Ñ, δ/2) (eq. 14), 2·c_{ε,k,k}(Ñ, Ñ, δ) (eq. 4) for each ε, and the
    smallest private gap clearing the stopping rule, sqrt(2·(2c_ε)/Ñ) (Z = Δ̃²/(2/Ñ) ≥ 2c_ε).

    Args:
        k: the phase (≥ 2).
        eps_list: the ε values.
        risk: δ.
        K: arms.
        s: ζ's exponent s > 1.

    Returns:
        The row: c_{k·k}(Ñ, Ñ, δ/2), 2·c_{ε,k,k}(Ñ, Ñ, δ) per ε and the heuristic.
    """
    if not (isinstance(k, (int, np.integer)) and k >= 2):
        raise InputError(f"k={k!r} is out of range: expected an integer phase index >= 2")
    if not (isinstance(K, (int, np.integer)) and K >= 2):
        raise InputError(f"K={K!r} is out of range: expected an integer >= 2")
    risk = validate.positive_real(risk, "risk", 1.0)
    s = float(s)
    if not (math.isfinite(s) and s > 1):
        raise InputError(f"s={s!r} is out of range: expected a number in (1, inf)")
    n = 2.0 ** (k - 2)
    row = {"k": int(k), "N_tilde": n,
           "c_kk_half_risk": glr.c_k(k * k, n, n, risk / 2, K, s), "by_eps": []}
    for e in eps_list:
        e = validate.positive_real(e, "eps")
        two_c = 2 * glr.c_eps(k, k, n, n, risk, e, K, s)
        row["by_eps"].append({"eps": e, "two_c_eps": two_c,
                              "min_gap": math.sqrt(2 * two_c / n)})
    return row


def report(p: dict) -> dict:
    """The constants of ``dpaudit check constants --paper azize2023`` with their cross-checks.

    Args:
        p: the parameters (:data:`REPORT_PARAMS`), checked by :mod:`dpaudit.checks.constants`.

    Returns:
        A JSON-able dict: the instance, per-ε characteristic times and bounds, the C_G table,
        threshold magnitudes and the ``checks`` list.
    """
    name = p.get("instance")
    if "means" in p:
        means = p["means"]
        name = name or "custom"
    else:
        name = name or "mu1"
        if name not in INSTANCES_004:
            raise InputError(f"instance={name!r} is not valid: expected one of "
                             f"{', '.join(INSTANCES_004)}")
        means = INSTANCES_004[name]
    mu = _instance(means)
    eps_list = [validate.eps(e, "eps") for e in eps_values(p.get("eps"), [0.01, 0.1, 1.0])]
    risk = validate.positive_real(p.get("risk", 0.01), "risk", 1.0)
    beta = validate.positive_real(p.get("beta", 0.5), "beta", 1.0)
    s = float(p.get("s", 2.0))
    K_thr = p.get("K", 6)
    phases = p.get("phases", PHASES_004)

    a, gaps, others = _gaps(mu)
    T_tv, w_tv = t_tv(mu)
    T_tv_lp, w_tv_lp = t_tv_lp(mu)
    T_kl, w_kl = t_kl(mu)
    T_b, w_b = t_kl_beta(mu, beta)
    T_g, w_g = t_kl(mu, "gaussian")
    T_gm, beta_star, _ = t_kl_gaussian_min_beta(mu)
    log3 = math.log(1 / (3 * risk))
    dmin, dmax = float(gaps[others].min()), float(gaps[others].max())
    H = 2.0 * float(np.sum(1 / gaps[others] ** 2) + 1 / dmin ** 2)
    out = {
        "paper": "azize2023", "instance": name, "means": mu.tolist(), "K": int(mu.size),
        "a_star": int(a), "delta_min": dmin, "delta_max": dmax, "risk": risk, "beta": beta,
        "ln_1_over_3risk": log3,
        "T_TV": T_tv, "T_TV_lp": T_tv_lp, "omega_TV": w_tv.tolist(),
        "T_KL_bernoulli": T_kl, "omega_KL_bernoulli": w_kl.tolist(),
        "T_KL_beta_gaussian": T_b, "omega_KL_beta_gaussian": w_b.tolist(),
        "T_KL_beta_gaussian_var_quarter": T_b / 4,
        "T_KL_gaussian": T_g, "T_KL_gaussian_min_beta": T_gm, "beta_star_gaussian": beta_star,
        "omega_KL_gaussian": w_g.tolist(), "H_gk16": H,
        **regime_boundary(mu),
        "by_eps": [], "C_G": [], "thresholds": [],
    }
    checks = [
        cross_check("T_TV closed form (Prop. 1) == LP", T_tv, T_tv_lp),
        cross_check("omega_TV closed form == LP (max abs diff)",
                    float(np.max(np.abs(w_tv - w_tv_lp))), 0.0, "<=", 1e-6, absolute=True),
        cross_check("T_TV >= sqrt(2 T_KL) (Pinsker, Sec. 3)", T_tv, math.sqrt(2 * T_kl), ">="),
        cross_check("T_TV >= 1/Delta_min (Prop. 1)", T_tv, 1 / dmin, ">="),
        cross_check("T_TV <= K/Delta_min (Prop. 1)", T_tv, mu.size / dmin, "<="),
        cross_check("1/T_KL == KL objective at omega*_KL", 1 / T_kl, kl_objective(mu, w_kl)),
        cross_check("T_KL (Bernoulli): GK procedure == direct SLSQP optimisation", T_kl,
                    t_kl_epigraph(mu)[0]),
        cross_check("Gaussian T_KL: GK procedure == min over beta of T_KL,beta", T_g, T_gm),
        cross_check("T_KL,1/2 <= 2 T_KL (Gaussian)", t_kl_beta(mu, 0.5)[0], 2 * T_g, "<="),
        cross_check("T_KL,beta >= T_KL (Gaussian)", T_b, T_g, ">="),
        cross_check("T_KL (Gaussian) >= H = sum 2/Delta_a^2 (GK16)", T_g, H, ">="),
        cross_check("T_KL (Gaussian) <= 2H (GK16)", T_g, 2 * H, "<="),
    ]
    for e in eps_list:
        T_e, w_e = t_star_eps(mu, e)
        cor1 = max(T_kl, T_tv / (6 * e))
        out["by_eps"].append({
            "eps": e, "cor1_max": cor1, "cor1_lower_bound": cor1 * log3,
            "T_star_eps": T_e, "omega_star_eps": w_e.tolist(), "thm2_lower_bound": T_e * log3,
            "regime": "low privacy" if e > out["eps_boundary"] else "high privacy",
            "thm5_slope": thm5_slope(mu, e, beta),
        })
        checks.append(cross_check(f"T*(nu;{e:g}) >= max(T_KL, T_TV/(6 eps)) (Cor. 1)", T_e, cor1,
                                  ">="))
        checks.append(cross_check(f"T*(nu;{e:g}) <= T_KL + T_TV/(6 eps)", T_e,
                                  T_kl + T_tv / (6 * e), "<="))
    for x in CG_POINTS:
        out["C_G"].append({"x": x, "C_G": glr.C_G(x), "x_plus_ln_x": x + math.log(x)})
    for k in phases:
        out["thresholds"].append(threshold_row(int(k), eps_list + [10.0] if 10.0 not in eps_list
                                               else eps_list, risk, int(K_thr), s))
    out["threshold_K"] = int(K_thr)
    out["s"] = s
    out["checks"] = checks
    return out




# ----------------------------------------------------------------------------- check correctness

def thm2_lower_bound(private: bool, means: ArrayLike, eps: float, risk: float,
                     best_arm: bool = True) -> dict:
    """Theorem 2's lower bound on E[τ] as a cross-check.

    Theorem 2 for δ-correct best-arm identification on Bernoulli instances: E[τ] ≥
    T*(ν; ε)·ln(1/(3δ)) for an ε-DP algorithm (``private``), T*_KL(ν)·ln(1/(3δ)) for a
    non-private one; δ = ``risk`` < 1/3. ``best_arm=False``: not applicable (thresholding).

    Returns:
        ``{"name", "applicable", "T_star", "value"}``, or ``{"name", "applicable": False,
        "reason"}``.

    Args:
        private: an ε-DP algorithm (else the non-private bound).
        means: the arms' means, in [0, 1].
        eps: ε.
        risk: the risk δ.
        best_arm: the claim is on best-arm identification.

    Returns:
        The cross-check row: T*(ν; ε)·ln(1/(3δ)) (T*_KL(ν)·ln(1/(3δ)) when not private).
    """
    name = ("Azize et al. (2023) Thm 2 lower bound T*(nu; eps)*ln(1/(3 delta)) on E[tau] "
            "(Bernoulli, delta-correct eps-DP BAI)")
    if not best_arm:
        return {"name": name, "applicable": False,
                "reason": "a best-arm identification bound; this algorithm does thresholding"}
    if not (risk < 1.0 / 3.0):
        return {"name": name, "applicable": False, "reason": "needs delta < 1/3"}
    try:
        if private:
            T, _ = t_star_eps(means, eps)
        else:
            name = ("Azize et al. (2023) Thm 2 at eps = inf (non-private algorithm): T*_KL(nu)*ln(1/(3 "
                    "delta)) on E[tau] (Bernoulli, delta-correct BAI)")
            T, _ = t_kl(means)
    except (InputError, ValueError, ZeroDivisionError, FloatingPointError) as e:
        return {"name": name, "applicable": False, "reason": str(e)}
    T = float(T)
    if not math.isfinite(T):
        return {"name": name, "applicable": False,
                "reason": "T* is not finite (tie for the best arm)"}
    return {"name": name, "applicable": True, "T_star": T,
            "value": T * math.log(1.0 / (3.0 * risk))}


def thm5_upper_bound(p: dict, means: ArrayLike, eps: float, risk: float) -> list[dict]:
    """Theorem 5's upper bound for AdaP-TT as a cross-check.

    Theorem 5 for AdaP-TT (asymptotic: limsup_{δ→0} E[τ]/ln(1/δ) ≤ 4·T*_{KL,β}·(1 +
    sqrt(1 + Δ_max²/(2ε²))), shown at δ = ``risk``), with AdaP-TT's ``beta`` from ``p``.

    Args:
        p: the algorithm's parameters.
        means: the arms' means, in [0, 1].
        eps: ε.
        risk: the risk δ.

    Returns:
        The cross-check rows (asymptotic, shown at δ = ``risk``).
    """
    name = ("Azize et al. (2023) Thm 5 (asymptotic, delta -> 0): 4 T*_KL,beta (1 + sqrt(1 + "
            "Delta_max^2/(2 eps^2))) ln(1/delta) on E[tau]")
    try:
        slope = thm5_slope(means, eps, p["beta"])
    except (InputError, ValueError, ZeroDivisionError) as e:
        return [{"name": name, "applicable": False, "reason": str(e)}]
    return [{"name": name, "applicable": True, "value": slope * math.log(1.0 / risk)}]


_BEST_ARM = Identification("fixed-confidence", best_arm_errors, lower_bound=thm2_lower_bound)
IDENTIFICATION = {          # the paper's fixed-confidence algorithms (algorithm, baselines)
    "adap-tt": Identification("fixed-confidence", best_arm_errors,
                              lower_bound=thm2_lower_bound, upper_bounds=thm5_upper_bound),
    "adap-tt-no-forgetting": _BEST_ARM,
    "adap-tt-raw-leader": _BEST_ARM,
    "dp-se": _BEST_ARM,
    "ttucb": _BEST_ARM,
}

"""GLR stopping thresholds of Azize et al. (2023), shared by AdaP-TT and TTUCB.

GLR stopping thresholds of Azize, Al Marjani, Jourdan, Basu (NeurIPS 2023, arXiv:2309.02202),
shared by AdaP-TT and TTUCB.

All logs are natural. Sources: eq. (15) (C_G, from Kaufmann & Koolen 2021), eq. (14)
(non-private per-phase threshold c_k, Lemma 4), eq. (4) = eq. (17) (private threshold
c_{ε,k1,k2}, Theorem 4) of Azize, Al Marjani, Jourdan and Basu 2023 (arXiv:2309.02202).
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import zeta

_LAMBDA_BOUNDS = (0.5 + 1e-9, 1.0 - 1e-12)


def g_G(lam: float) -> float:
    """The function g_G of eq. (15) at λ ∈ (1/2, 1): 2λ − 2λ·ln(4λ) + ln ζ(2λ) − ½·ln(1 − λ).

    Args:
        lam: λ ∈ (1/2, 1).

    Returns:
        g_G(λ).
    """
    return 2 * lam - 2 * lam * math.log(4 * lam) + math.log(zeta(2 * lam)) - 0.5 * math.log(1 - lam)


@lru_cache(maxsize=None)
def C_G(x: float) -> float:
    """The constant C_G at x: the minimum over λ ∈ (1/2, 1) of (g_G(λ) + x)/λ, computed exactly.

    Azize et al. (2023), eq. (15).

    Bounded 1-D minimisation with scipy (the minimiser is interior). Not the heuristic
    x + ln x, which is smaller than C_G for x < 6.099. Raises ValueError for x < 0 or non-finite.

    Args:
        x: x ≥ 0, finite.

    Returns:
        C_G(x).
    """
    if not (math.isfinite(x) and x >= 0):
        raise ValueError(f"C_G needs a finite x >= 0, got {x!r}")
    res = minimize_scalar(lambda lam: (g_G(lam) + x) / lam, bounds=_LAMBDA_BOUNDS,
                          method="bounded", options={"xatol": 1e-12})
    return float(res.fun)


def _cg_arg(k: int, risk: float, K: int, s: float) -> float:
    """The argument of C_G in eq. (14), computed in logs.

    ½·ln((K−1)·ζ(s)²·k^s/δ), the argument of C_G in eq. (14), summed in logs: the product
    overflows a float for δ near 1e-300 and s near 1, its log does not.
    """
    return 0.5 * (math.log(K - 1) + 2.0 * math.log(zeta(s)) + s * math.log(k) - math.log(risk))


def c_k(k: int, n: float, m: float, risk: float, K: int, s: float = 2.0) -> float:
    """The non-private per-phase threshold c_k at (n, m, δ) of Azize et al. (2023), eq. (14).

    Lemma 4.

    ``k``: the product k1·k2 of the two arms' phase indices; ``n``, ``m``: the two local counts;
    ``risk``: δ; ``s`` > 1. Uses ζ(s)² (appendix eq. 14; the main-text ζ(s) is a typo).

    Args:
        k: the product k1·k2 of the two arms' phase indices.
        n: the first arm's local count.
        m: the second arm's local count.
        risk: δ.
        K: arms.
        s: ζ's exponent s > 1.

    Returns:
        The threshold.
    """
    return 2 * C_G(_cg_arg(k, risk, K, s)) + 2 * math.log(4 + math.log(n)) + 2 * math.log(4 + math.log(m))


def c_eps(k1: int, k2: int, n: float, m: float, risk: float, eps: float, K: int,
          s: float = 2.0) -> float:
    """Private threshold c_{ε,k1,k2}(n, m, δ) of Azize et al. (2023) eq. (4) = eq. (17) (Theorem 4).

    2·c_{k1·k2}(n, m, δ/2) + [ln(2K·k1^s·ζ(s)/δ)]²/(n·ε²) + [ln(2K·k2^s·ζ(s)/δ)]²/(m·ε²).
    Stopping compares the GLR statistic Z with 2·c_ε.

    Args:
        k1: the first arm's phase.
        k2: the second arm's phase.
        n: the first arm's local count.
        m: the second arm's local count.
        risk: δ.
        eps: ε.
        K: arms.
        s: ζ's exponent s > 1.

    Returns:
        The threshold.
    """
    lz = math.log(2 * K * zeta(s) / risk)
    return (2 * c_k(k1 * k2, n, m, risk / 2, K, s)
            + (lz + s * math.log(k1)) ** 2 / (n * eps ** 2)
            + (lz + s * math.log(k2)) ** 2 / (m * eps ** 2))


def c_heuristic(n: float, m: float, risk: float, eps: float) -> float:
    """Threshold of the co-authors' public draft code; no guarantee.

    ln(1/δ) + ln(1 + ln n) + ln(1 + ln m) + (1/n + 1/m)·ln(1/δ)²/ε²; stop when Z ≥ 2·c.

    Args:
        n: the first arm's count.
        m: the second arm's count.
        risk: δ.
        eps: ε.

    Returns:
        The threshold.
    """
    L = math.log(1 / risk)
    return L + math.log(1 + math.log(n)) + math.log(1 + math.log(m)) + (1 / n + 1 / m) * L * L / eps ** 2


def max_phase(max_steps: int) -> int:
    """Largest phase index an arm can reach within ``max_steps`` samples (N = 2^(k−1)).

    Args:
        max_steps: samples at most.

    Returns:
        The phase index.
    """
    return int(math.floor(math.log2(max(max_steps, 1)))) + 2


def cg_table(risk: float, K: int, s: float, kmax: int) -> np.ndarray:
    """C_G(½·ln((K−1)·ζ(s)²·p^s/δ)) for every product p = k1·k2 with k1, k2 ≤ kmax.

    Returns float64 array of length kmax² + 1 indexed by p (NaN where p is not such a
    product). ``risk`` is the δ passed to c_k (AdaP-TT passes δ/2, eq. 4).

    Args:
        risk: δ.
        K: arms.
        s: ζ's exponent s > 1.
        kmax: the largest phase index.

    Returns:
        float64 array indexed by the product p.
    """
    out = np.full(kmax * kmax + 1, np.nan)
    for p in {i * j for i in range(1, kmax + 1) for j in range(1, kmax + 1)}:
        out[p] = C_G(_cg_arg(p, risk, K, s))
    return out

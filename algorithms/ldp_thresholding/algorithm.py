"""Locally differentially private thresholding bandits (Barbara, Lazzaro, Pike-Burke, 2025).

Locally differentially private thresholding bandits (Barbara, Lazzaro, Pike-Burke, "Locally
Differentially Private Thresholding Bandits", 2025).

Source: Barbara, Lazzaro, Pike-Burke, "Locally Differentially Private Thresholding Bandits"
(the algorithm and equation numbers below are the paper's). Registered names:

``privbern`` (Definition 2.1, model ``local``)
    The local randomiser: a reward r ∈ [0, 1] goes out as one bit
    Y ~ Bernoulli((r·e^ε + (1 − r))/(1 + e^ε)), evaluated in the stable form
    r·expit(ε) + (1 − r)·expit(−ε) (``scipy.special.expit`` in
    :func:`_prepare_privbern`). Lemma 2.1 claims ε-DP; our analysis shows the claim is
    exactly tight at {r, r'} = {0, 1}.
``ldp-tb-budget`` (Algorithm 1, model ``user``)
    APT on the private bits with the rescaled threshold τ_ε (eq. 5) and tolerance ζ_ε (eq. 6):
    pull every arm once, then I_t = argmin_k sqrt(N_k)·(|τ_ε − μ̂_k| + ζ_ε) (line 6), and after
    T pulls return Ŝ = {k : μ̂_k > τ_ε} (line 9, strict ">").
``ldp-tb-confidence`` (Algorithm 2, model ``user``)
    CLUCB-style: pull every arm once (reconstructed line 2); at every t ≥ K (t =
    pulls so far) S_t = {i : μ̂_i ≥ τ_ε} (non-strict), rad_t(i) = sqrt(ln(4Kt³/δ)/(8 N_i))
    exactly as printed, μ̃_i = μ̂_i ∓ rad_t(i), S̃_t = {i : μ̃_i ≥ τ_ε}; stop and return S_t if
    S_t = S̃_t, else pull argmax of rad_t over the ambiguous set (S_t △ S̃_t).
``apt`` (Locatelli et al. 2016, model ``user``; not private)
    The non-private APT that Algorithm 1 adapts: the same kernel on the *raw* rewards, with τ
    and ζ in place of τ_ε and ζ_ε (Algorithm 1 at c_ε = 1, return rule as Algorithm 1: strict
    ">"). It is the positive control: its first adaptive pull is a deterministic function of
    raw rewards, so an audit against any claimed ε must flag it.
``privbern-wrong-exp`` (mutant of ``privbern``)
    The slope c_ε = (e^ε − 1)/(e^ε + 1) = tanh(ε/2) of eq. (4) written with e^{2ε} in place of
    e^ε, i.e. tanh(ε): P(Y = 1 | r) = r·expit(2ε) + (1 − r)·expit(−2ε). Still a valid
    randomiser (it is PrivBern at 2ε), but P(1 | 1)/P(1 | 0) = e^{2ε}: it is 2ε-DP and not
    ε-DP, so an audit of the ε claim must flag it (true loss 2ε, with 2ε).

Privacy models. ``privbern`` reads one reward (the ``local`` model: neighbours are any r, r'
∈ [0, 1]). A run privatises a *stream of users*: user 0 holds the audited reward (the local
table; the kernel reads ``table.flat[u]`` for user u < ``table.size``) and users beyond the
table hold fresh Bernoulli(``means[0]``) rewards (the kernel contract's rows beyond the
table). Each user's bit depends on that user's reward only, so the stream's privacy loss is
that of one PrivBern; the audit simulates user 0 alone (audit horizon 1), ``dpaudit bench``
runs streams of ``max_steps`` users. The bandit algorithms use ``user`` tables (T, K): at
round t the algorithm reads d[t, a_t] *only through* PrivBern(ε) of it (Definition 2.2, "local
randomiser + user transcripts"); neighbours differ in one row.

Transcript (kernel contract of :mod:`dpaudit.simulation.simulate`). ``actions``: the pulled arms
(for
``privbern``: the output bits Y_u); τ = samples taken (Algorithm 1: T; Algorithm 2: the
stopping time t; ``privbern``: users privatised); ``rec``: the returned set Ŝ as a bitmask,
bit i set iff arm i (0-based) ∈ Ŝ (so K ≤ 62), -1 without a decision (``privbern``: the bit of
user 0). Status: Algorithm 1 always STOPPED at T (TRUNCATED when the audit's ``limit`` comes
first); Algorithm 2 STOPPED when S_t = S̃_t, CAPPED at ``max_steps`` pulls (the paper's
algorithm has no cap; requires one and a "not stopped" report), TRUNCATED at the
table horizon (``limit``); ``privbern`` STOPPED after ``max_steps`` users.

White-box log: every privatisation is one release of the family
:data:`~dpaudit.simulation.simulate.RANDOMISED_RESPONSE` (value = the reward r, noisy = the bit,
scale =
the ε of the randomiser actually used: 2ε for the mutant; t = samples taken after the pull,
arm, phase = the arm's pull count, count = 1). ``apt`` makes no release.

Readings of the ambiguities (defaults: our reading, the faithful one):

* ties (argmin B in Alg. 1, argmax rad in Alg. 2): lowest index (the paper is silent; any
  rule that reads only the bits is privacy-safe);
* Alg. 1 reads μ̂ from rounds 1..t−1 (the "μ̂_k^t" inside Δ̂_{k,ε}(t−1) is an index slip);
* Alg. 2's t is the number of pulls made so far (first check at t = K, line 4); the radius is
  the printed one (Appendix D writes the same value); Alg. 2 has no tolerance (ζ = 0);
* the base of "log" (the paper never gives one): natural everywhere; option ``log_base`` = 2
  for Alg. 2's radius (wider) and ``inner_log`` = "2" for Theorem 3.1's
  ln(log T + 1) (the base the proof's peeling needs);
* Theorem 4.1's eq. (24): H̃_ε = max{H_ε/36, 1} as printed (default), ``divisor=16`` for our
  correction (:func:`thm41_eq24`);
* the initial pulls go in index order 0..K−1 (the paper gives no order; rows 0..K−1);
* the threshold τ is accepted in [0, 1] (the paper: τ > 0 in Sec. 2.4, τ ∈ ℝ in Thms 3.1/4.1;
  rewards and means lie in [0, 1], so other thresholds classify trivially); ε in [0, 36]
  (ε = 0 is allowed by the theorems: pure noise, Alg. 2 then runs to its cap; beyond 36 the
  randomiser cannot be sampled with 53-bit uniforms).

Paper vs our reading. The algorithms follow the paper's listings; our reading adds no step that
contradicts them. Where they differ the paper wins: the bounds use the paper's printed
constants by default (Thm 3.2's 8 of the statement, not the proof's 16; eq. (24)'s 36);
our alternatives are options. Our own additions used here are marked [our reading]:
the stable evaluation of Definition 2.1 and eqs. (4)–(6), the reconstruction of Algorithm 2's
blank line 2 (from the prose of Sec. 4.1: "begins by pulling each arm once"), the implicit
form of Theorem 4.1's bound and the privacy-loss formulas (:func:`privbern_loss`).

Defaults (and why). ``ldp-tb-budget`` and ``apt``: instance C (μ = (0.1, 0.4, 0.65, 0.9),
τ = 0.6, ζ = 0.1), T = ``horizon`` = 2000. With τ ≠ 1/2 the first adaptive pull (sample K)
reveals the initial bits (at τ = 1/2, |τ_ε − Y| = 1/2 for either bit and all arms tie), which
makes the black-box audit tight; the sampling rule does not depend on T, so the audit reads
the first ``audit_rows`` = 16 samples of a run (its tables have min(T, audit_rows) rows;
``audit_rows`` ≥ T audits whole runs, Ŝ included). ``max_steps`` (the shared cap; it binds
only below T) is what ``dpaudit bench`` runs to: full T-pull runs. ``ldp-tb-confidence``:
instance B, δ = ``risk`` = 0.05 (our Monte Carlo setting); ``horizon`` = 48 table
rows: Algorithm 2 pulls round robin until an arm's radius falls below its distance to τ_ε
(at t = 36 with 9 pulls per arm on K = 4, δ = 0.05), so the first adaptive pulls lie in
rows 36..47; ``max_steps`` = 2^24. ``privbern``: one user in the audit, 2^16 per ``bench``
run.

Scripted responses (deterministic traces): :func:`scripted` returns a
:class:`~dpaudit.algorithms.spec.Prepared` whose ``aux`` holds a script; the kernel then takes the
n-th response of arm i from it instead of privatising a reward (no rng draw, no release).
``aux`` layout: empty = no script (the registered ``prepare`` functions); otherwise K·M values,
arm i's n-th response (0-based n) is ``aux[i·M + n mod M]``.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
import dataclasses
import math

import numba as nb
import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import brentq
from scipy.special import expit

from dpaudit.auditing.whitebox import pair_frozen, pair_next, pair_record
from dpaudit.algorithms.space import Scale, option, theorem
from dpaudit.algorithms.spec import AlgorithmSpec, Param, Prepared
from dpaudit.core.terms import PrivacyModel
from dpaudit.errors import InputError
from dpaudit.simulation.simulate import (CAPPED, RANDOMISED_RESPONSE, STOPPED, TRUNCATED,
                                         batch_buffers, batch_record, outcomes)

from ..kernels import reward, user_reward, user_stream_end

PAPER = "Barbara, Lazzaro, Pike-Burke (2025)"

# theta layout shared by every kernel of this module
(MODE, PRIVATE, P_ONE, P_ZERO, RR_SCALE, TAU_E, ZETA_E, RISK, BUDGET, MAX_STEPS, LOG_SCALE,
 N_THETA) = range(12)
LOG_BASES = ("e", "2")          # Algorithm 2's "log": natural (default) or base 2
BUDGET_MODE, CONFIDENCE_MODE = 0.0, 1.0     # theta[MODE]
MAX_ARMS = 62                               # Ŝ is an int64 bitmask
MAX_EPS = 36.0   # beyond it expit(−ε) < 2^−52: 53-bit uniforms cannot sample the randomiser

# instances
INSTANCE_A = dict(means=(0.1, 0.3, 0.5, 0.7, 0.9), threshold=0.5, tolerance=0.05)
INSTANCE_B = dict(means=(0.2, 0.45, 0.55, 0.8), threshold=0.5)
INSTANCE_C = dict(means=(0.1, 0.4, 0.65, 0.9), threshold=0.6, tolerance=0.1)


# ------------------------------------------------------------------ constants (Sec. 2.4)

def _check_eps(eps: object) -> float:
    e = float(eps)
    if not (math.isfinite(e) and 0.0 <= e <= MAX_EPS):
        raise InputError(f"eps={eps!r} is out of range: expected a number in [0, {MAX_EPS:g}] "
                         "(larger eps: P(Y=1 | r=0) = expit(-eps) is below the resolution of "
                         "53-bit uniform draws)")
    return e


def _unit(name: str, x: ArrayLike) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    bad = ~np.isfinite(a) | (a < 0) | (a > 1)
    if bad.any():
        v = np.asarray(x).ravel()[np.flatnonzero(bad.ravel())[0]]
        raise InputError(f"{name}={v.item()!r} is out of range: expected a number in [0, 1]")
    return a


def c_eps(eps: ArrayLike) -> ArrayLike:
    """The slope c_ε of every privatised quantity (eqs. 4–7).

    The slope c_ε = (e^ε − 1)/(e^ε + 1) of every privatised quantity (eqs. 4–7), evaluated
    as tanh(ε/2) (same value, no overflow). Vectorised.

    Args:
        eps: ε (scalar or array).

    Returns:
        c_ε = tanh(ε/2), of the broadcast shape.
    """
    return np.tanh(np.asarray(eps, dtype=np.float64) / 2.0)


def mu_eps(mu: ArrayLike, eps: ArrayLike) -> ArrayLike:
    """Eq. (4): the mean μ_{i,ε} of PrivBern(ε)'s output.

    Eq. (4): μ_{i,ε} = 1/2 + (2μ_i − 1)(e^ε − 1)/(2(e^ε + 1)), the mean of PrivBern(ε)'s
    output when the reward has mean μ_i (Lemma 2.1). Vectorised; ε ≥ 0.

    Args:
        mu: the arms' means.
        eps: ε (scalar or array).

    Returns:
        μ_{i,ε}, of the broadcast shape.
    """
    return 0.5 + (2.0 * np.asarray(mu, dtype=np.float64) - 1.0) * c_eps(eps) / 2.0


def tau_eps(tau: float, eps: ArrayLike) -> ArrayLike:
    """Eq. (5): the rescaled threshold τ_ε.

    Eq. (5): the rescaled threshold τ_ε = 1/2 + (2τ − 1)(e^ε − 1)/(2(e^ε + 1)) (the same
    affine map as eq. 4; exactly 1/2 at τ = 1/2). Vectorised.

    Args:
        tau: the threshold τ.
        eps: ε (scalar or array).

    Returns:
        τ_ε, of the broadcast shape.
    """
    return mu_eps(tau, eps)


def zeta_eps(zeta: ArrayLike, eps: ArrayLike) -> ArrayLike:
    """Eq. (6): the rescaled tolerance ζ_ε = ζ·(e^ε − 1)/(e^ε + 1). Vectorised.

    Args:
        zeta: the tolerance ζ.
        eps: ε (scalar or array).

    Returns:
        ζ_ε, of the broadcast shape.
    """
    return c_eps(eps) * np.asarray(zeta, dtype=np.float64)


def gaps(means: ArrayLike, tau: float, zeta: ArrayLike = 0.0) -> np.ndarray:
    """Δ_i = |τ − μ_i| + ζ (Sec. 2.4 of the paper): the non-private gaps.

    Args:
        means: the arms' means, in [0, 1].
        tau: the threshold τ.
        zeta: the tolerance ζ (0 for fixed confidence).

    Returns:
        Δ_i per arm, float64 (K,).
    """
    return np.abs(tau - np.asarray(means, dtype=np.float64)) + zeta


def delta_eps(means: ArrayLike, tau: float, zeta: ArrayLike, eps: ArrayLike) -> ArrayLike:
    """Eq. (7): Δ_{i,ε} = |τ_ε − μ_{i,ε}| + ζ_ε (= c_ε·Δ_i). Vectorised over ``means``.

    Args:
        means: the arms' means, in [0, 1].
        tau: the threshold τ.
        zeta: the tolerance ζ.
        eps: ε (scalar or array).

    Returns:
        Δ_{i,ε} per arm.
    """
    return np.abs(tau_eps(tau, eps) - mu_eps(means, eps)) + zeta_eps(zeta, eps)


def complexity(means: ArrayLike, tau: float, zeta: ArrayLike = 0.0) -> float:
    """H = Σ_i (|μ_i − τ| + ζ)^−2 (Sec. 2.4; ζ = 0 for fixed confidence); inf if a gap is 0.

    Args:
        means: the arms' means, in [0, 1].
        tau: the threshold τ.
        zeta: the tolerance ζ (0 for fixed confidence).

    Returns:
        H (inf if a gap is 0).
    """
    with np.errstate(divide="ignore"):
        return float(np.sum(gaps(means, tau, zeta) ** -2.0))


def complexity_eps(means: ArrayLike, tau: float, zeta: ArrayLike, eps: ArrayLike) -> float:
    """Eq. (8): the private hardness H_ε.

    Eq. (8): H_ε = Σ_i (|μ_{i,ε} − τ_ε| + ζ_ε)^−2 (= c_ε^−2·H for ε > 0; inf at ε = 0 or
    with a zero gap).

    Args:
        means: the arms' means, in [0, 1].
        tau: the threshold τ.
        zeta: the tolerance ζ.
        eps: ε (scalar or array).

    Returns:
        H_ε (inf at ε = 0 or with a zero gap).
    """
    with np.errstate(divide="ignore"):
        return float(np.sum(delta_eps(means, tau, zeta, eps) ** -2.0))


# ------------------------------------------------------------------ bounds (Thms 3.1–4.2)

def _inner_log(T: ArrayLike, base: str):
    if base not in LOG_BASES:
        raise InputError(f"inner_log={base!r} is not valid: expected one of e, 2")
    return np.log(T) if base == "e" else np.log2(T)


def thm31_bound(T: ArrayLike, means: ArrayLike, tau: float, zeta: ArrayLike, eps: ArrayLike,
                inner_log: str = "e") -> ArrayLike:
    """Theorem 3.1's bound as stated.

    Theorem 3.1 as stated: E[L(T)] ≤ exp(−T/(4H_ε) + 2K·ln(log T + 1)). ``inner_log``: the
    base of the inner "log T" (e: our reading; 2: the base the proof's peeling
    over u ∈ {0..⌊log T⌋} needs). Vectorised over T.

    Args:
        T: the budget or horizon (samples).
        means: the arms' means, in [0, 1].
        tau: the threshold τ.
        zeta: the tolerance ζ.
        eps: ε (scalar or array).
        inner_log: the base of the inner "log T" (``e``: our reading; ``2``).

    Returns:
        The bound on E[L(T)], of ``T``'s shape.
    """
    T = np.asarray(T, dtype=np.float64)
    K = len(means)
    return np.exp(-T / (4.0 * complexity_eps(means, tau, zeta, eps))
                  + 2.0 * K * np.log(_inner_log(T, inner_log) + 1.0))


def thm31_proof_bound(T: ArrayLike, means: ArrayLike, tau: float, zeta: ArrayLike,
                      eps: ArrayLike) -> ArrayLike:
    """The form the proof of Theorem 3.1 (App. B) derives: 2K(ln T + 1)·exp(−T/(4H_ε)).

    Args:
        T: the budget or horizon (samples).
        means: the arms' means, in [0, 1].
        tau: the threshold τ.
        zeta: the tolerance ζ.
        eps: ε (scalar or array).

    Returns:
        The bound, of ``T``'s shape.
    """
    T = np.asarray(T, dtype=np.float64)
    return 2.0 * len(means) * (np.log(T) + 1.0) * np.exp(
        -T / (4.0 * complexity_eps(means, tau, zeta, eps)))


def thm31_crossing(means: ArrayLike, tau: float, zeta: ArrayLike, eps: ArrayLike,
                   inner_log: str = "e") -> float:
    """The budget at which Theorem 3.1's bound first drops below 1.

    The budget T at which the stated Theorem 3.1 bound (:func:`thm31_bound`) first drops
    below 1: the root of −T/(4H_ε) + 2K ln(log T + 1) = 0 above T = e (Brent's method).

    Args:
        means: the arms' means, in [0, 1].
        tau: the threshold τ.
        zeta: the tolerance ζ.
        eps: ε (scalar or array).
        inner_log: the base of the inner "log T" (``e``: our reading; ``2``).

    Returns:
        The budget T (samples).
    """
    H = complexity_eps(means, tau, zeta, eps)
    K = len(means)

    def f(T: float):
        return -T / (4.0 * H) + 2.0 * K * math.log(float(_inner_log(T, inner_log)) + 1.0)

    hi = 8.0 * K * H
    while f(hi) > 0:
        hi *= 2.0
    return brentq(f, math.e, hi, xtol=1e-9, rtol=1e-14)


def lb_factor(eps: ArrayLike) -> ArrayLike:
    """(e^ε + 1)²·min{4, e^{2ε}}: the LDP factor of Theorems 3.2 and 4.2.

    Args:
        eps: ε (scalar or array).

    Returns:
        The factor, of the broadcast shape.
    """
    eps = np.asarray(eps, dtype=np.float64)
    return (np.exp(eps) + 1.0) ** 2 * np.minimum(4.0, np.exp(2.0 * eps))


def thm32_bound(T: ArrayLike, means: ArrayLike, tau: float, zeta: ArrayLike,
                eps: ArrayLike) -> ArrayLike:
    """Theorem 3.2's lower bound as stated.

    Theorem 3.2 as stated: max_i E_{B^i}[L(T)] ≥ (1/4)·exp(−(8T/H_ε)(e^ε+1)² min{4, e^{2ε}})
    (the proof's display (23) has 16 in place of 8).

    Args:
        T: the budget or horizon (samples).
        means: the arms' means, in [0, 1].
        tau: the threshold τ.
        zeta: the tolerance ζ.
        eps: ε (scalar or array).

    Returns:
        The lower bound on max_i E[L(T)], of ``T``'s shape.
    """
    T = np.asarray(T, dtype=np.float64)
    return 0.25 * np.exp(-8.0 * T / complexity_eps(means, tau, zeta, eps) * lb_factor(eps))


def thm41_eq24(means: ArrayLike, tau: float, eps: ArrayLike, risk: float,
               divisor: float = 36.0) -> float:
    """Eq. (24) of App. D: Theorem 4.1's bound on the stopping time.

    Eq. (24) of App. D: T ≤ 499·H̃_ε·ln(4K·H̃_ε/δ) + 2K with H̃_ε = max{H_ε/divisor, 1}.
    ``divisor`` = 36 as printed (default; the paper's constant); 16 is our
    correction [the step to 8H̃_ε needs H̃_ε ≥ H_ε/16].

    Args:
        means: the arms' means, in [0, 1].
        tau: the threshold τ.
        eps: ε (scalar or array).
        risk: the risk δ.
        divisor: 36 as printed (default), 16 for our correction.

    Returns:
        The bound on the stopping time (samples).
    """
    K = len(means)
    Ht = max(complexity_eps(means, tau, 0.0, eps) / divisor, 1.0)
    return 499.0 * Ht * math.log(4.0 * K * Ht / risk) + 2.0 * K


def thm41_implicit(means: ArrayLike, tau: float, eps: ArrayLike, risk: float) -> float:
    """The implicit bound of App. D on the stopping time.

    The largest T with T = K + (H_ε/2)·ln(4K·T³/δ): the sum over arms of the per-arm bound
    of App. D, T(i) ≤ ln(4KT³/δ)/(2Δ_{i,ε}²) + 1. Brent's method.

    Args:
        means: the arms' means, in [0, 1].
        tau: the threshold τ.
        eps: ε (scalar or array).
        risk: the risk δ.

    Returns:
        The largest such T (samples).
    """
    K = len(means)
    H = complexity_eps(means, tau, 0.0, eps)

    def f(T: float):
        return K + 0.5 * H * math.log(4.0 * K * T ** 3 / risk) - T

    lo = K + H
    hi = 2.0 * lo
    while f(hi) > 0:
        hi *= 2.0
    return brentq(f, lo, hi, xtol=1e-9, rtol=1e-14)


def thm41_arm_pulls(T: float, means: ArrayLike, tau: float, eps: ArrayLike,
                    risk: float) -> np.ndarray:
    """App. D per-arm bound on the good event: T(i) ≤ ln(4K·T³/δ)/(2Δ_{i,ε}²) + 1 (ζ = 0).

    Args:
        T: the budget or horizon (samples).
        means: the arms' means, in [0, 1].
        tau: the threshold τ.
        eps: ε (scalar or array).
        risk: the risk δ.

    Returns:
        The per-arm bounds, float64 (K,).
    """
    K = len(means)
    return math.log(4.0 * K * float(T) ** 3 / risk) / (
        2.0 * delta_eps(means, tau, 0.0, eps) ** 2) + 1.0


def thm42_bound(means: ArrayLike, tau: float, eps: ArrayLike, risk: float) -> float:
    """Theorem 4.2's lower bound (App. E).

    Theorem 4.2, explicit form of App. E:
    E_Q[T] ≥ [(1 − δ)·ln(1/δ) − ln 2]·H_ε / (2·min{4, e^{2ε}}·(e^ε + 1)²).

    Args:
        means: the arms' means, in [0, 1].
        tau: the threshold τ.
        eps: ε (scalar or array).
        risk: the risk δ.

    Returns:
        The lower bound on E[τ] (samples).
    """
    H = complexity_eps(means, tau, 0.0, eps)
    return ((1.0 - risk) * math.log(1.0 / risk) - math.log(2.0)) * H / (2.0 * float(lb_factor(eps)))


# ------------------------------------------------------------------ PrivBern and losses

def privbern_prob(r: ArrayLike, eps: ArrayLike) -> ArrayLike:
    """P(Y = 1 | r) of PrivBern(ε) (Definition 2.1).

    P(Y = 1 | r) of PrivBern(ε) (Definition 2.1), r·expit(ε) + (1 − r)·expit(−ε) (the
    stable form of (r·e^ε + (1 − r))/(1 + e^ε)). ``r`` ∈ [0, 1] (InputError
    otherwise: the guarantee breaks outside it). Vectorised.

    Args:
        r: rewards in [0, 1].
        eps: ε (scalar or array).

    Returns:
        P(Y = 1 | r), of the broadcast shape.
    """
    r = _unit("r", r)
    e = _check_eps(eps)
    return r * expit(e) + (1.0 - r) * expit(-e)


def privbern_loss(y: ArrayLike, r: ArrayLike, r_prime: ArrayLike, eps: ArrayLike) -> ArrayLike:
    """The privacy loss of PrivBern(ε) for output y.

    Privacy loss ℓ(y; r, r') = ln P(y | r) − ln P(y | r') of PrivBern(ε) for output
    y ∈ {0, 1}. Vectorised.

    Args:
        y: outputs in {0, 1}.
        r: rewards in [0, 1].
        r_prime: the neighbouring rewards.
        eps: ε (scalar or array).

    Returns:
        ℓ(y; r, r′) = ln P(y | r) − ln P(y | r′), of the broadcast shape.
    """
    p, q = privbern_prob(r, eps), privbern_prob(r_prime, eps)
    y = np.asarray(y)
    return np.where(y == 1, np.log(p) - np.log(q), np.log1p(-p) - np.log1p(-q))


def set_mask(arms: Iterable[int]) -> int:
    """The bitmask of a set of 0-based arms (the kernels' ``rec``).

    Args:
        arms: 0-based arms.

    Returns:
        The bitmask.
    """
    return int(sum(1 << int(a) for a in set(arms)))


def mask_set(mask: int, K: int) -> set | None:
    """The set of 0-based arms in bitmask ``mask``; None for -1 (no decision).

    Args:
        mask: a bitmask (-1: no decision).
        K: arms.

    Returns:
        The set, or None for -1.
    """
    if mask < 0:
        return None
    return {a for a in range(K) if (int(mask) >> a) & 1}


def _bits(masks: ArrayLike, K: int) -> np.ndarray:
    """(n, K) bool membership matrix of ``masks`` (int array, -1 = no decision → all False)."""
    m = np.asarray(masks, dtype=np.int64)
    return ((m[:, None] >> np.arange(K)) & 1).astype(bool) & (m[:, None] >= 0)


def budget_loss(masks: ArrayLike, means: ArrayLike, tau: float, zeta: ArrayLike) -> np.ndarray:
    """Eq. (2): the loss L(T) of each returned set.

    Eq. (2): L(T) = 1{∃ i ∈ Ŝ with μ_i ≤ τ − ζ, or ∃ i ∉ Ŝ with μ_i > τ + ζ}, per returned
    set (bitmasks, vectorised), in the original (non-private) units. Returns a bool array.

    Args:
        masks: bitmasks of returned sets.
        means: the arms' means, in [0, 1].
        tau: the threshold τ.
        zeta: the tolerance ζ.

    Returns:
        L(T) per returned set, 0/1 array.
    """
    mu = np.asarray(means, dtype=np.float64)
    inside = _bits(masks, mu.size)
    wrong_in = inside & (mu <= tau - zeta)
    wrong_out = ~inside & (mu > tau + zeta)
    return (wrong_in | wrong_out).any(axis=1)


def target_mask(means: ArrayLike, tau: float) -> int:
    """Bitmask of the fixed-confidence target set {i : μ_i ≥ τ} (eq. 3).

    Args:
        means: the arms' means, in [0, 1].
        tau: the threshold τ.

    Returns:
        The bitmask.
    """
    return set_mask(np.flatnonzero(np.asarray(means) >= tau))


# -------------------------------------------------------------------------------- kernels

@nb.njit(cache=True, inline="always")
def _bit(u: float, x: float, p_one: float, p_zero: float):
    """PrivBern's output for reward ``x`` and a uniform draw ``u``.

    PrivBern's output (Definition 2.1) for reward ``x`` and a uniform draw ``u``: 1 iff
    u < x·p_one + (1 − x)·p_zero, with p_one = expit(ε), p_zero = expit(−ε) for the registered
    prepare (the stable form of (x·e^ε + (1 − x))/(1 + e^ε)).
    """
    return 1.0 if u < x * p_one + (1.0 - x) * p_zero else 0.0


@nb.njit(cache=True)
def _release(releases: np.ndarray, frozen: np.ndarray, nr: int, y: float, t: int, arm: int,
             phase: int, x: float, scale: float):
    """White-box bookkeeping of one release.

    White-box bookkeeping of release ``nr`` (kernel contract): the released value is
    ``frozen[nr]`` when given (gray-box replay), else the drawn bit ``y``; logged to
    ``releases`` row ``nr`` while rows remain (family RANDOMISED_RESPONSE, value = the reward
    ``x``, scale = the randomiser's ε). Kernels call it only when ``releases`` or ``frozen``
    is non-empty: the array arguments cost ~25 ns per call, the batch loop passes neither.
    """
    if nr < frozen.shape[0]:
        y = frozen[nr]
    if nr < releases.shape[0]:
        r = releases[nr]
        r[0], r[1], r[2], r[3] = t, arm, phase, 1.0
        r[4], r[5], r[6], r[7] = x, y, scale, RANDOMISED_RESPONSE
    return y


@nb.njit(cache=True)
def privbern_kernel(rng: np.random.Generator, table: np.ndarray, means: np.ndarray,
                    theta: np.ndarray, aux: np.ndarray, limit: int, actions: np.ndarray,
                    releases: np.ndarray, frozen: np.ndarray) -> tuple:
    """PrivBern(ε) (Definition 2.1) on a stream of users.

    PrivBern(ε) (Definition 2.1) on a stream of users. Kernel contract:
    dpaudit.simulation.simulate.

    User u's reward (:func:`user_reward`) is ``table.flat[u]`` for u < ``table.size`` (the
    audit: one local reward, a 0-d or (1,) array) and Bernoulli(``means[0]``) beyond
    (``means`` shape (1,)). Each user releases one bit (:func:`_bit` of a fresh uniform; logged by :func:`_release`);
    ``actions[u]`` = that bit. ``theta``: this module's layout (P_ONE, P_ZERO, RR_SCALE,
    MAX_STEPS = users per run); ``aux`` unused. Returns (users privatised, bit of user 0,
    STOPPED after theta[MAX_STEPS] users or TRUNCATED at ``limit``, releases).

    Arguments and return value: the kernel contract (:mod:`dpaudit.simulation.simulate`).
    """
    p_one, p_zero, scale = theta[P_ONE], theta[P_ZERO], theta[RR_SCALE]
    white = releases.shape[0] > 0 or frozen.shape[0] > 0
    n_users = np.int64(theta[MAX_STEPS])
    n_rec = actions.shape[0]
    users, status = user_stream_end(n_users, limit)
    first = -1
    for n in range(users):
        x = user_reward(rng, table, means, n)
        y = _bit(rng.random(), x, p_one, p_zero)
        if white:
            y = _release(releases, frozen, n, y, n + 1, 0, n + 1, x, scale)
        if n == 0:
            first = np.int64(y)
        if n < n_rec:
            actions[n] = np.int16(y)
    return users, first if status == STOPPED else -1, status, users


@nb.njit(cache=True, inline="always")
def _apt_arm(mu: np.ndarray, N: np.ndarray, tau_e: float, zeta_e: float):
    """Algorithm 1 line 6: argmin_k sqrt(N_k)·(|τ_ε − μ̂_k| + ζ_ε); ties: lowest index."""
    best, best_v = 0, np.inf
    for k in range(mu.shape[0]):
        v = math.sqrt(N[k]) * (abs(tau_e - mu[k]) + zeta_e)
        if v < best_v:
            best, best_v = k, v
    return best


@nb.njit(cache=True, inline="always")
def _above_mask(mu: np.ndarray, tau_e: float, strict: bool):
    """Bitmask of {k : μ̂_k > τ_ε} (strict, Alg. 1 line 9) or {k : μ̂_k ≥ τ_ε} (Alg. 2 S_t)."""
    m = np.int64(0)
    for k in range(mu.shape[0]):
        if mu[k] > tau_e or (not strict and mu[k] == tau_e):
            m |= np.int64(1) << k
    return m


@nb.njit(cache=True, inline="always")
def _clucb_arm(mu: np.ndarray, N: np.ndarray, t: int, tau_e: float, risk: float, log_scale: float):
    """Algorithm 2 lines 5–18 at t pulls.

    Algorithm 2 lines 5–18 at t pulls: -1 if S_t = S̃_t (stop), else the ambiguous arm with
    the largest rad_t(i) = sqrt(log(4Kt³/δ)/(8 N_i)) (ties: lowest index); log = ln ×
    ``log_scale`` (1: natural, 1/ln 2: base 2).
    """
    K = mu.shape[0]
    ft = float(t)
    log_term = math.log(4.0 * K * (ft * ft * ft) / risk) * log_scale
    best, best_r = -1, -np.inf
    for i in range(K):
        rad = math.sqrt(log_term / (8.0 * N[i]))
        in_s = mu[i] >= tau_e                                   # S_t
        mt = mu[i] - rad if in_s else mu[i] + rad               # μ̃ (lines 8–12)
        if in_s != (mt >= tau_e) and rad > best_r:              # i ∈ S_t △ S̃_t
            best, best_r = i, rad
    return best


@nb.njit(cache=True)
def tb_kernel(rng: np.random.Generator, table: np.ndarray, means: np.ndarray,
              theta: np.ndarray, aux: np.ndarray, limit: int, actions: np.ndarray,
              releases: np.ndarray, frozen: np.ndarray) -> tuple:
    """One run of Algorithm 1, Algorithm 2 or APT.

    One run of Algorithm 1 (theta[MODE] = 0), Algorithm 2 (1) or APT (0, theta[PRIVATE] =
    0). Kernel contract: dpaudit.simulation.simulate; ``table`` (T, K) user table, ``means`` (K,).

    theta (module layout): MODE, PRIVATE, P_ONE/P_ZERO/RR_SCALE (the randomiser), TAU_E,
    ZETA_E (the thresholds the algorithm compares with: τ_ε, ζ_ε, or τ, ζ for APT), RISK (δ of
    Alg. 2), BUDGET (T of Alg. 1), MAX_STEPS (the cap). ``aux``: optional script (module doc;
    a scripted response replaces the reward and its privatisation: no draw, no release). Every
    privatisation is logged (:func:`_release`). Shared skeleton: initial pulls of arms
    0..K−1, then the mode's rule after every sample; a decision available after n samples is
    taken before the cap and ``limit`` checks. Returns (τ, Ŝ bitmask or -1, status,
    releases).

    Arguments and return value: the kernel contract (:mod:`dpaudit.simulation.simulate`).
    """
    K = means.shape[0]
    confidence = theta[MODE] == CONFIDENCE_MODE
    tau_e, zeta_e, risk, log_scale = theta[TAU_E], theta[ZETA_E], theta[RISK], theta[LOG_SCALE]
    budget = np.int64(theta[BUDGET])
    max_steps = np.int64(theta[MAX_STEPS])
    private = theta[PRIVATE] == 1.0
    p_one, p_zero, scale = theta[P_ONE], theta[P_ZERO], theta[RR_SCALE]
    white = releases.shape[0] > 0 or frozen.shape[0] > 0
    scripted = aux.shape[0] > 0
    m = max(aux.shape[0] // K, 1)
    n_rec = actions.shape[0]
    N = np.zeros(K)                  # pulls per arm (float: used in sqrt and ratios)
    C = np.zeros(K)                  # sum of responses per arm
    mu = np.zeros(K)                 # μ̂ = C / N
    n = 0
    nr = 0
    while True:
        if n < K:
            I = n                                              # pull each arm once
        elif confidence:
            I = _clucb_arm(mu, N, n, tau_e, risk, log_scale)
            if I < 0:
                return n, _above_mask(mu, tau_e, False), STOPPED, nr   # return S_t
        else:
            if n >= budget:
                return n, _above_mask(mu, tau_e, True), STOPPED, nr    # line 9
            I = _apt_arm(mu, N, tau_e, zeta_e)
        if n >= max_steps:
            return n, -1, CAPPED, nr
        if n >= limit:
            return n, -1, TRUNCATED, nr
        if scripted:                                           # traces
            y = aux[I * m + np.int64(N[I]) % m]
        else:
            x = reward(rng, table, means, n, I)
            if private:                                        # Definition 2.2
                y = _bit(rng.random(), x, p_one, p_zero)
                if white:
                    y = _release(releases, frozen, nr, y, n + 1, I, N[I] + 1.0, x, scale)
                nr += 1
            else:                                              # APT: the raw reward
                y = x
        if n < n_rec:
            actions[n] = I
        n += 1
        N[I] += 1.0
        C[I] += y
        mu[I] = C[I] / N[I]


@nb.njit(cache=True, nogil=True)
def tb_batch(rng: np.random.Generator, table: np.ndarray, means: np.ndarray,
             theta: np.ndarray, aux: np.ndarray, limit: int, n_runs: int, views: np.ndarray,
             keep: int) -> tuple:
    """Cached batch loop of :func:`tb_kernel` (``BATCH_LOOPS``).

    Arguments and return value: those of :func:`dpaudit.simulation.simulate.batch_body`.
    """
    b = batch_buffers(n_runs, views, keep)
    for i in range(n_runs):
        tau, rec, status, _ = tb_kernel(rng, table, means, theta, aux, limit, b[0], b[1], b[2])
        batch_record(i, b, tau, rec, status, views)
    return b[4], b[5], b[6], b[7], b[3]


@nb.njit(cache=True, nogil=True)
def privbern_batch(rng: np.random.Generator, table: np.ndarray, means: np.ndarray,
                   theta: np.ndarray, aux: np.ndarray, limit: int, n_runs: int, views: np.ndarray,
                   keep: int) -> tuple:
    """Cached batch loop of :func:`privbern_kernel` (``BATCH_LOOPS``).

    Arguments and return value: those of :func:`dpaudit.simulation.simulate.batch_body`.
    """
    b = batch_buffers(n_runs, views, keep)
    for i in range(n_runs):
        tau, rec, status, _ = privbern_kernel(rng, table, means, theta, aux, limit, b[0], b[1],
                                              b[2])
        batch_record(i, b, tau, rec, status, views)
    return b[4], b[5], b[6], b[7], b[3]


@nb.njit(cache=True, nogil=True)
def tb_pairs(rng: np.random.Generator, rng2: np.random.Generator, table: np.ndarray,
             table2: np.ndarray, means: np.ndarray, theta: np.ndarray, aux: np.ndarray,
             limit: int, work: tuple) -> None:
    """Cached run/replay loop of :func:`tb_kernel` (``PAIR_LOOPS``).

    Arguments: those of :func:`dpaudit.auditing.whitebox.pair_body`.
    """
    while pair_next(work):
        o = tb_kernel(rng, table, means, theta, aux, limit, work[0], work[2],
                      pair_frozen(work, 0))
        r = tb_kernel(rng2, table2, means, theta, aux, limit, work[1], work[3],
                      pair_frozen(work, o[3]))
        pair_record(work, o, r)

@nb.njit(cache=True, nogil=True)
def privbern_pairs(rng: np.random.Generator, rng2: np.random.Generator, table: np.ndarray,
                   table2: np.ndarray, means: np.ndarray, theta: np.ndarray, aux: np.ndarray,
                   limit: int, work: tuple) -> None:
    """Cached run/replay loop of :func:`privbern_kernel` (``PAIR_LOOPS``).

    Arguments: those of :func:`dpaudit.auditing.whitebox.pair_body`.
    """
    while pair_next(work):
        o = privbern_kernel(rng, table, means, theta, aux, limit, work[0], work[2],
                            pair_frozen(work, 0))
        r = privbern_kernel(rng2, table2, means, theta, aux, limit, work[1], work[3],
                            pair_frozen(work, o[3]))
        pair_record(work, o, r)


# the cached batch loop of each kernel (dpaudit.simulation.simulate.run_batch reads it)
BATCH_LOOPS = {tb_kernel: tb_batch, privbern_kernel: privbern_batch}
# the cached run/replay loop of each kernel (dpaudit.auditing.whitebox.pair_body)
PAIR_LOOPS = {tb_kernel: tb_pairs, privbern_kernel: privbern_pairs}


# ------------------------------------------------------------------------------- prepare

def _randomiser(theta: np.ndarray, eps: float, exponent: float = 1.0) -> None:
    """Fill P_ONE, P_ZERO, RR_SCALE for PrivBern at exponent·ε (exponent 2: the mutant)."""
    s = exponent * eps
    theta[PRIVATE] = 1.0
    theta[P_ONE], theta[P_ZERO], theta[RR_SCALE] = expit(s), expit(-s), s


def _means(p: dict) -> np.ndarray:
    m = np.asarray(p["means"], dtype=np.float64)
    if m.size > MAX_ARMS:
        raise InputError(f"means has {m.size} arms: expected at most {MAX_ARMS} (the returned "
                         "set is a 64-bit bitmask)")
    return m


def _prepare_privbern(exponent: float = 1.0):
    def prepare(eps: float, p: dict) -> Prepared:
        """Theta for :func:`privbern_kernel` at ε (exponent 2: ``privbern-wrong-exp``)."""
        e = _check_eps(eps)
        if len(p["means"]) != 1:
            raise InputError(f"means={','.join(map(str, p['means']))} is not valid: privbern "
                             "takes one Bernoulli mean (the other users' reward law)")
        theta = np.zeros(N_THETA)
        _randomiser(theta, e, exponent)
        theta[MAX_STEPS] = p["max_steps"]
        return Prepared(theta=theta, aux=np.zeros(0), means=_means(p))
    return prepare


def _prepare_tb(mode: float, private: bool):
    def prepare(eps: float, p: dict) -> Prepared:
        """Theta for :func:`tb_kernel`.

        Theta for :func:`tb_kernel`: Alg. 1 (mode 0, private), Alg. 2 (mode 1) or APT
        (mode 0, not private: τ, ζ on raw rewards; ``eps`` ignored).
        """
        means = _means(p)
        K = means.size
        theta = np.zeros(N_THETA)
        theta[MODE] = mode
        zeta = p.get("tolerance", 0.0)
        if private:
            e = _check_eps(eps)
            _randomiser(theta, e)
            theta[TAU_E], theta[ZETA_E] = tau_eps(p["threshold"], e), zeta_eps(zeta, e)
        else:
            theta[TAU_E], theta[ZETA_E] = p["threshold"], zeta
        if mode == BUDGET_MODE:
            if p["horizon"] < K:
                raise InputError(f"horizon={p['horizon']} is out of range: expected an integer "
                                 f">= K = {K} (the budget T must cover the initial pull of "
                                 "every arm)")
            theta[BUDGET], theta[MAX_STEPS] = p["horizon"], p["max_steps"]
        else:
            theta[RISK], theta[MAX_STEPS] = p["risk"], p["max_steps"]
            theta[BUDGET] = p["max_steps"]
            theta[LOG_SCALE] = 1.0 if p["log_base"] == "e" else 1.0 / math.log(2.0)
        return Prepared(theta=theta, aux=np.zeros(0), means=means)
    return prepare


def script(responses: Sequence, K: int | None = None) -> np.ndarray:
    """``aux`` holding scripted responses (module doc).

    ``aux`` holding scripted responses (module doc): ``responses[i]`` is arm i's cyclic
    sequence of responses (its n-th response is ``responses[i][n mod len]``). Every arm's
    sequence is tiled to the least common multiple of the lengths.

    Args:
        responses: per arm, its cyclic sequence of responses.
        K: arms (None: ``len(responses)``).

    Returns:
        The ``aux`` array.
    """
    seqs = [np.asarray(r, dtype=np.float64).ravel() for r in responses]
    if K is not None and len(seqs) != K:
        raise InputError(f"script has {len(seqs)} arms: expected K = {K}")
    if not seqs or any(s.size == 0 for s in seqs):
        raise InputError("script: every arm needs at least one response")
    M = math.lcm(*(s.size for s in seqs))
    return np.concatenate([np.tile(s, M // s.size) for s in seqs])


def scripted(prep: Prepared, responses: Sequence) -> Prepared:
    """``prep`` with the scripted responses of :func:`script` in ``aux``.

    Args:
        prep: the prepared arrays.
        responses: per arm, its cyclic sequence of responses.

    Returns:
        A copy of ``prep``.
    """
    return dataclasses.replace(prep, aux=script(responses, prep.means.shape[0]))


# ------------------------------------------------------------------------------ registry

BUDGET_HORIZON = 2000   # T: our largest Monte Carlo budget; bench runs full runs
AUDIT_ROWS = 16         # audited prefix of an Alg. 1 / APT run (module doc of the specs)
CONFIDENCE_HORIZON = 48  # Alg. 2 audit table rows (T_max): its first adaptive pulls
PRIVBERN_USERS = 1 << 16  # users per privbern run in `dpaudit bench`

_MEANS_DOC = "Bernoulli instance: base tables and rewards beyond the table"


AUTHORS = "Barbara, Lazzaro, Pike-Burke"
CLAIMS = {"budget": f"ε-local DP: {AUTHORS}, Thm 3.1's algorithm (every reward through "
                    "PrivBern, Lemma 2.1)",
          "confidence": f"ε-local DP: {AUTHORS}, Thm 4.1's algorithm (every reward through "
                        "PrivBern, Lemma 2.1)",
          "privbern": f"ε-local DP of one reward in [0, 1]: {AUTHORS}, Lemma 2.1"}
ANY = "Lemma 2.1 privatises every reward, whatever the instance, K, τ, ζ or δ"


def _p_means(default: tuple):
    return Param("means", default, "floats", _MEANS_DOC, low=0.0, high=1.0, min_len=2,
                 claim=theorem(ANY, Scale.GENERATED, (2, 6)))


P_THRESHOLD = Param("threshold", 0.6, "float", "threshold τ (means and rewards lie in [0, 1])",
                    low=0.0, high=1.0, claim=theorem(ANY, Scale.LINEAR))
P_TOLERANCE = Param("tolerance", 0.1, "float", "tolerance ζ of the fixed-budget loss (eq. 2)",
                    low=0.0, high=1.0, claim=theorem(ANY, Scale.LINEAR, (0.0, 0.5)))
P_RISK = Param("risk", 0.05, "float", "confidence δ of Algorithm 2 (never the DP delta)",
               low=0.0, high=1.0, open_low=True, open_high=True,
               claim=theorem(ANY, Scale.LOG, (1e-3, 0.5)))
P_MAX_STEPS = Param("max_steps", 1 << 24, "int", "data-independent cap on pulls (Alg. 2 has "
                    "none; capped runs are reported as not stopped)", low=1, high=2.0 ** 62)
P_AUDIT_ROWS = Param("audit_rows", AUDIT_ROWS, "int", "rows of the audit tables: runs are "
                     "audited on their first min(horizon, audit_rows) samples (>= horizon: "
                     "whole runs, returned set included)", low=1, high=1 << 20,
                     claim=theorem("every prefix of the transcript", Scale.INT_LOG, (8, 256)))


def _budget_params():
    return (_p_means(INSTANCE_C["means"]),
            dataclasses.replace(P_THRESHOLD, default=INSTANCE_C["threshold"]),
            dataclasses.replace(P_TOLERANCE, default=INSTANCE_C["tolerance"]),
            Param("horizon", BUDGET_HORIZON, "int", "budget T (total pulls)", low=1,
                  high=1 << 30, claim=theorem("Thm 3.1: every budget T >= 2K", Scale.INT_LOG,
                                              (8, 4096))),
            P_AUDIT_ROWS,
            dataclasses.replace(P_MAX_STEPS, doc="data-independent cap on pulls: binds only "
                                "below the budget T (capped runs are reported)"))


def _budget_structure(p: dict) -> list[tuple[int, str]]:
    K = len(p["means"])
    return [(K - 1, f"initial pull of arm {K - 1}: the first adaptive pull (sample {K}) "
                    "compares every arm's first response"),
            (K, f"first adaptive pull (sample {K})")]


def _confidence_structure(p: dict) -> list[tuple[int, str]]:
    K = len(p["means"])
    return [(0, "initial pull of arm 0"), (K - 1, f"initial pull of arm {K - 1}"),
            (K, "first pull after initialisation (round robin while every arm is ambiguous)")]


def _privbern_params():
    return (Param("means", (0.5,), "floats", "Bernoulli mean of the other users' rewards "
                  "(users beyond the audited reward; bench)", low=0.0, high=1.0),
            Param("max_steps", PRIVBERN_USERS, "int", "users privatised per run (bench); the "
                  "audit reads user 0, the local reward", low=1, high=2.0 ** 62))


SPECS: list[AlgorithmSpec] = []   # this module's algorithms (dpaudit.algorithms.registry)

SPECS.append(AlgorithmSpec(
    name="privbern", title="PrivBern(ε) local randomiser (Definition 2.1)", paper=PAPER,
    model=PrivacyModel.LOCAL, private=True, kernel=privbern_kernel,
    params=_privbern_params(),
    prepare=_prepare_privbern(), structure=lambda p: [], audit_horizon=lambda p: 1,
    theorem=CLAIMS["privbern"],
    description="one reward r in [0, 1] -> one bit ~ Bernoulli(r·expit(ε) + (1−r)·expit(−ε)); "
                "Lemma 2.1: ε-DP, exactly tight at r, r' = 0, 1"))

SPECS.append(AlgorithmSpec(
    name="ldp-tb-budget", title="LDP thresholding, fixed budget (Algorithm 1)", paper=PAPER,
    model=PrivacyModel.USER, private=True, kernel=tb_kernel, params=_budget_params(),
    prepare=_prepare_tb(BUDGET_MODE, True), structure=_budget_structure,
    audit_horizon=lambda p: min(p["horizon"], p["audit_rows"]),
    theorem=CLAIMS["budget"], reports=True,
    description="APT on PrivBern bits with τ_ε (eq. 5), ζ_ε (eq. 6): argmin sqrt(N)·(|τ_ε − μ̂| "
                "+ ζ_ε), return {μ̂ > τ_ε} after T pulls"))

SPECS.append(AlgorithmSpec(
    name="ldp-tb-confidence", title="LDP thresholding, fixed confidence (Algorithm 2)",
    paper=PAPER, model=PrivacyModel.USER, private=True, kernel=tb_kernel,
    params=(_p_means(INSTANCE_B["means"]),
            dataclasses.replace(P_THRESHOLD, default=INSTANCE_B["threshold"]),
            P_RISK, P_MAX_STEPS,
            Param("log_base", "e", "choice", "ambiguity option: base of the paper's \"log\" in "
                  "rad_t (e: the natural log, the default reading; 2 widens the radius)",
                  choices=LOG_BASES,
                  claim=option("Algorithm 2: the base of log in rad_t")),
            Param("horizon", CONFIDENCE_HORIZON, "int", "audit table rows T_max: runs reaching "
                  "it are reported as not stopped (truncated)", low=1, high=1 << 20,
                  claim=theorem("every prefix of the transcript", Scale.INT_LOG, (8, 256)))),
    prepare=_prepare_tb(CONFIDENCE_MODE, True), structure=_confidence_structure,
    audit_horizon=lambda p: p["horizon"],
    theorem=CLAIMS["confidence"], reports=True,
    description="CLUCB-style on PrivBern bits: S_t = {μ̂ ≥ τ_ε}, rad = sqrt(ln(4Kt³/δ)/(8N)), "
                "stop when no arm is ambiguous, else pull the ambiguous arm with fewest pulls"))

SPECS.append(AlgorithmSpec(
    name="apt", title="APT (Locatelli et al. 2016), non-private", paper=PAPER,
    model=PrivacyModel.USER,
    private=False, kernel=tb_kernel, params=_budget_params(),
    prepare=_prepare_tb(BUDGET_MODE, False), structure=_budget_structure,
    audit_horizon=lambda p: min(p["horizon"], p["audit_rows"]),
    description="the non-private algorithm Algorithm 1 adapts, on raw rewards (positive "
                "control: must be flagged as a violation)"))

SPECS.append(AlgorithmSpec(
    name="privbern-wrong-exp", title="PrivBern mutant: e^{2ε} in place of e^ε", paper=PAPER,
    model=PrivacyModel.LOCAL, private=True, kernel=privbern_kernel,
    params=_privbern_params(),
    prepare=_prepare_privbern(2.0), structure=lambda p: [], audit_horizon=lambda p: 1,
    mutant_of="privbern",
    theorem=CLAIMS["privbern"],
    description="slope c_ε of eq. (4) computed as tanh(ε) instead of tanh(ε/2) (e^{2ε} where "
                "e^ε belongs): PrivBern at 2ε, so 2ε-DP and not ε-DP"))


def fresh_runs(spec: AlgorithmSpec, eps: float, params: dict | None = None, runs: int = 1000,
               seed: int = 0) -> tuple:
    """``runs`` full runs of a spec on fresh rewards.

    ``runs`` full runs of ``spec`` (one of :data:`SPECS`, e.g. from
    ``dpaudit.algorithms.registry.get("ldp-tb-budget")``) on fresh rewards (every reward
    Bernoulli(``means``)), each until it stops or reaches ``max_steps``: int64 arrays (τ, rec,
    status) of shape (runs,); ``rec`` is the returned set's bitmask
    (:func:`dpaudit.simulation.simulate.outcomes`).

    Args:
        spec: one of :data:`SPECS` (e.g. ``registry.get("ldp-tb-budget")``).
        eps: ε (scalar or array).
        params: its parameters (None: the defaults).
        runs: runs.
        seed: the seed.

    Returns:
        (tau, rec, status) of every run, int64 arrays.
    """
    p = spec.resolve_params(params or {})
    prep = spec.prepare(float(eps), p)
    return outcomes(spec.fresh_request(prep, runs, seed, p["max_steps"]))

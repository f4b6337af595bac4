"""Textbook DP mechanisms with exactly known privacy loss, for calibrating the auditor.

Each :class:`KnownMechanism` fixes one neighbouring pair (d, d′) and knows the exact privacy loss
``true_eps`` of its mechanism on that pair at the claimed δ:

    true_eps = sup over events S, both directions, of ln((P_a(S) − δ) / P_b(S)).

``factor`` multiplies the noise scale: 1 is the textbook mechanism (``true_eps ≤ eps``, so a sound
auditor never flags it), < 1 is an *insufficient-noise mutant* (``true_eps > eps``, which a powerful
auditor catches). For the pure-DP discrete families the supremum is attained on an atom, so
``true_eps = max_o |ln P_d(o)/P_d′(o)|`` (:func:`exact_probabilities` gives both vectors).

Families (sensitivity 1 throughout; ε′ = ε/factor):

``laplace``              d=[0.], d′=[1.]; data[0] + Lap(factor/ε); float (n,). true_eps = ε′.
``gaussian``             d=[0.], d′=[1.]; data[0] + factor·σ·N(0, 1), σ from the analytic Gaussian
                         mechanism (Balle & Wang, ICML 2018, Thm 8): the exact δ of N(0,σ²) vs
                         N(1,σ²) at ε is Φ(1/(2σ) − εσ) − e^ε Φ(−1/(2σ) − εσ); σ solves δ(ε)=δ.
                         true_eps = ε* with δ_{factor·σ}(ε*) = δ. float (n,).
``randomised-response``  one bit, d=[0], d′=[1]; keeps the bit w.p. e^ε′/(1+e^ε′); int64 (n,).
                         true_eps = ε′.
``geometric``            two-sided geometric (Ghosh, Roughgarden & Sundararajan 2009): data[0] + Z,
                         P(Z=k) ∝ e^{−ε′|k|}; d=[0], d′=[1]; int64 (n,). true_eps = ε′.
``rnm-laplace``          report noisy max of K=4 monotone counting queries with Lap(factor/ε) noise;
                         int64 (n,) arm index. Scale 1/ε is ε-DP for monotone counting queries
                         (Dwork & Roth 2014, Claim 3.9). true_eps by numerical integration.
``rnm-exponential``      report noisy max with Exp(scale factor/ε) noise (≡ permute-and-flip,
                         McKenna & Sheldon 2020; Ding et al. 2021). Scale 1/ε is ε-DP for monotone
                         queries — see :data:`RNM_PAIRS` for the one-line proof. Exact and tight.

Pairs for report noisy max (:data:`RNM_PAIRS`) were chosen among every monotone neighbour pair with
d ∈ {0,1,2}^4 and d′ − d ∈ {0,1}^4 ∖ {0, 1} (96 pairs up to a joint permutation of the arms,
:func:`rnm_candidate_pairs`) as a pair with the largest true_eps at factor 1 for every ε tried
in [0.05, 8]; among pairs tied at that maximum, the one whose maximising atom is more likely.

* ``rnm-laplace``: d = (0,2,2,2), d′ = (0,3,3,3) (arm 0 falls one further behind); the loss is
  attained on output 0. true_eps/eps at factor 1 (at factor 0.8): ε=0.1 0.92587 (1.16849),
  ε=0.5 0.98988 (1.24309), ε=1 0.99907 (1.24964), ε=2 0.999990 (1.249999). P_d(0), P_d′(0) at
  ε=1: 0.0359, 0.0132. Larger gaps push the ratio closer to 1 but shrink P(output 0)
  geometrically: at ε ≥ 2, (0,1,1,1) vs (0,2,2,2) (ratio 0.99947, masses 0.036, 0.0049) is
  the easier pair to measure.
* ``rnm-exponential``: d = (0,0,1,2), d′ = (0,0,2,2), output 2: arm 2 wins on d iff
  E_2 > t := max(E_0 − 1, E_1 − 1, E_3 + 1) ≥ 1, and on d′ iff E_2 > t − 1 ≥ 0, so by
  memorylessness P_d(2) = e^{−ε′}·P_d′(2) *exactly*: true_eps = ε′, tight (true_eps/eps = 1 at
  factor 1, 1.25 at factor 0.8). Many candidates tie at ε′ (e.g. (0,0,0,0) vs (0,1,1,1),
  masses 1/4 and e^{−ε′}/4); this one has P_d′(2) ≥ 1/4 (0.456 and 0.168 at ε=1).

Every sampler is ``mechanism(rng, data, n) -> ndarray`` (vectorised, only ``rng`` is used), a
module-level function wrapped in :func:`functools.partial`, so it pickles.
"""
from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import integrate, optimize, special, stats

from dpaudit.errors import InputError

FAMILIES = ("laplace", "gaussian", "randomised-response", "geometric", "rnm-laplace",
            "rnm-exponential")
DISCRETE_FAMILIES = ("randomised-response", "geometric", "rnm-laplace", "rnm-exponential")

RNM_K = 4
#: Neighbouring pairs (d, d′) for report noisy max, chosen as described in the module docstring.
#: Privacy of both RNM variants at scale 1/ε for monotone neighbours (d′ = d + v, v ∈ {0,1}^K),
#: after Dwork & Roth's proof of Claim 3.9: fix the other arms' noise; arm i wins on d iff
#: Z_i > t := max_{j≠i}(d_j + Z_j) − d_i, and on d′ iff Z_i > t′ with t′ ∈ [t − 1, t + 1] (the
#: max over j ≠ i and d_i each move up by 0 or 1). Laplace and exponential noise of scale 1/ε both
#: have survival functions with S(t + 1) ≥ e^{−ε} S(t) and S(t − 1) ≤ e^ε S(t) for every t, so
#: e^{−ε} ≤ P_d′(i)/P_d(i) ≤ e^ε (integrate over the other arms' noise). Without monotonicity
#: (counts moving in opposite directions) t′ ∈ [t − 2, t + 2] and the argument needs scale 2/ε.
#: The numerical losses agree: no candidate pair exceeds ε (tests check ε = 0.25, 1, 3).
RNM_PAIRS = {
    "rnm-laplace": ((0, 2, 2, 2), (0, 3, 3, 3)),
    "rnm-exponential": ((0, 0, 1, 2), (0, 0, 2, 2)),
}

_GEOMETRIC_ATOM = 1e-15   # exact_probabilities truncates the geometric support below this mass
_LN2 = math.log(2.0)
_QUAD_WINDOW = 64.0       # RNM integrals: tails beyond 64 noise scales hold < e^{-64} relatively


@dataclass(frozen=True)
class KnownMechanism:
    """A mechanism, its neighbouring pair and its exact privacy loss on that pair.

    ``noise_scale`` is the noise parameter actually used: the Laplace / exponential scale
    factor/ε, the Gaussian standard deviation factor·σ, and 1/ε′ = factor/ε for randomised
    response and the geometric mechanism.
    """

    name: str
    family: str
    eps: float
    delta: float
    factor: float
    mechanism: Callable
    d: np.ndarray
    d_prime: np.ndarray
    true_eps: float
    noise_scale: float = math.nan

    @property
    def correct(self) -> bool:
        """True when the mechanism satisfies its claim on (d, d′): true_eps ≤ eps (+1e-9)."""
        return self.true_eps <= self.eps + 1e-9


# ---------------------------------------------------------------------------------------------
# Samplers: module-level, vectorised, only the passed Generator. Bound with functools.partial.

def _sample_laplace(rng: np.random.Generator, data: ArrayLike, n: int, *, scale: float) -> np.ndarray:
    return float(np.asarray(data, dtype=float)[0]) + rng.laplace(0.0, scale, size=int(n))


def _sample_gaussian(rng: np.random.Generator, data: ArrayLike, n: int, *, sigma: float) -> np.ndarray:
    return float(np.asarray(data, dtype=float)[0]) + sigma * rng.standard_normal(int(n))


def _sample_rr(rng: np.random.Generator, data: ArrayLike, n: int, *, p_flip: float) -> np.ndarray:
    bit = int(np.asarray(data)[0])
    flip = rng.random(int(n)) < p_flip           # p_flip = 1/(1 + e^ε′), exact in floating point
    return np.where(flip, 1 - bit, bit).astype(np.int64)


def _sample_geometric(rng: np.random.Generator, data: ArrayLike, n: int, *, p: float) -> np.ndarray:
    # numpy's geometric(p) has support {1, 2, ...}, P(k) = (1−p)^{k−1} p. The difference of two
    # iid copies (the +1 shifts cancel) has P(Z=k) = p/(2−p) (1−p)^{|k|}; with 1−p = e^{−ε′}
    # this is ∝ e^{−ε′|k|}.
    n = int(n)
    z = rng.geometric(p, size=n).astype(np.int64)
    z -= rng.geometric(p, size=n)
    return int(np.asarray(data)[0]) + z


def _sample_rnm(rng: np.random.Generator, data: ArrayLike, n: int, *, scale: float,
                noise: str) -> np.ndarray:
    q = np.asarray(data, dtype=float)
    shape = (int(n), q.shape[0])
    z = rng.laplace(0.0, scale, size=shape) if noise == "laplace" else \
        rng.exponential(scale, size=shape)
    z += q
    return np.argmax(z, axis=1).astype(np.int64)


# ---------------------------------------------------------------------------------------------
# Analytic Gaussian mechanism (Balle & Wang 2018, Theorem 8)

def _log_gaussian_delta(sigma: float, eps: float) -> float:
    """Ln δ(ε) of N(0,σ²) vs N(1,σ²); −inf when δ underflows.

    With a = 1/(2σ) − εσ and b = a − 1/σ, δ = Φ(a) − e^ε Φ(b). When the two terms nearly
    cancel (large σ, small ε: e^ε Φ(b) > Φ(a)/2), δ is computed instead from the cancellation-free
    form δ = ∫_0^∞ φ(w − a)(1 − e^{−w/σ}) dw = φ(a) ∫_0^∞ e^{aw − w²/2}(1 − e^{−w/σ}) dw
    (substitute x = εσ² + 1/2 + σw in ∫ (φ_1 − e^ε φ_0)_+), integrated by ``quad``.
    """
    a = 0.5 / sigma - eps * sigma
    b = -0.5 / sigma - eps * sigma
    la = float(special.log_ndtr(a))
    lb = eps + float(special.log_ndtr(b))
    if not lb < la:
        return -math.inf
    if a >= 0 or lb - la < -_LN2:
        return la + math.log(-math.expm1(lb - la))
    integral = integrate.quad(lambda w: math.exp(a * w - 0.5 * w * w) * -math.expm1(-w / sigma),
                              0.0, math.inf, epsabs=0.0, epsrel=2e-14, limit=200)[0]
    return -0.5 * a * a - 0.5 * math.log(2 * math.pi) + math.log(integral)


def gaussian_delta(sigma: float, eps: float) -> float:
    """The exact δ(ε) of the Gaussian mechanism with sensitivity 1 and noise σ.

    Φ(1/(2σ) − εσ) − e^ε Φ(−1/(2σ) − εσ), computed in log space.

    Args:
        sigma: the noise's standard deviation.
        eps: ε.

    Returns:
        δ(ε).
    """
    return math.exp(_log_gaussian_delta(sigma, eps))


def analytic_gaussian_sigma(eps: float, delta: float) -> float:
    """The smallest σ for which N(·, σ²) noise is (ε, δ)-DP at sensitivity 1.

    Args:
        eps: ε.
        delta: δ.

    Returns:
        σ with δ(ε) = δ.
    """
    log_delta = math.log(delta)

    def f(s: float) -> float:
        return _log_gaussian_delta(s, eps) - log_delta      # decreasing in σ

    lo = hi = max(math.sqrt(2.0 * math.log(1.25 / delta)) / eps, 1e-3)
    while f(lo) < 0:
        lo /= 2.0
    while f(hi) > 0:
        hi *= 2.0
    return optimize.brentq(f, lo, hi, xtol=1e-300, rtol=1e-15, maxiter=500)


def gaussian_eps(sigma: float, delta: float) -> float:
    """The exact ε* of N(0, σ²) against N(1, σ²) at δ.

    Args:
        sigma: the noise's standard deviation.
        delta: δ.

    Returns:
        ε* with δ_σ(ε*) = δ (0 if δ_σ(0) ≤ δ).
    """
    log_delta = math.log(delta)

    def g(e: float) -> float:
        return _log_gaussian_delta(sigma, e) - log_delta    # decreasing in ε

    if g(0.0) <= 0:
        return 0.0
    hi = 1.0
    while g(hi) > 0:
        hi *= 2.0
    return optimize.brentq(g, 0.0, hi, xtol=1e-15, rtol=1e-15, maxiter=500)


# ---------------------------------------------------------------------------------------------
# Report noisy max: exact output probabilities by numerical integration

def _std_laplace_pdf(u: float) -> float:
    return 0.5 * math.exp(-abs(u))


def _std_laplace_cdf(u: float) -> float:
    return 0.5 * math.exp(u) if u < 0 else 1.0 - 0.5 * math.exp(-u)


def _std_exp_pdf(u: float) -> float:
    return math.exp(-u) if u >= 0 else 0.0


def _std_exp_cdf(u: float) -> float:
    return -math.expm1(-u) if u > 0 else 0.0


def rnm_probabilities(q: ArrayLike, scale: float, noise: str) -> np.ndarray:
    """P(argmax_i (q_i + Z_i) = i) for iid noise Z of the given scale.

    ∫ f(x − q_i) Π_{j≠i} F(x − q_j) dx by ``scipy.integrate.quad`` (relative tolerance 1e-13)
    on the pieces between the kinks q_j, in units of the scale.

    Args:
        q: the scores.
        scale: the noise scale.
        noise: "laplace" or "exponential".

    Returns:
        The probabilities, shape (k,).
    """
    if noise not in ("laplace", "exponential"):
        raise InputError(f"noise {noise!r} is not one of 'laplace', 'exponential'")
    a = np.asarray(q, dtype=float) / scale
    pdf, cdf = (_std_laplace_pdf, _std_laplace_cdf) if noise == "laplace" else \
        (_std_exp_pdf, _std_exp_cdf)
    kinks = sorted(set(a.tolist()))
    if noise == "laplace":
        edges = [kinks[0] - _QUAD_WINDOW] + kinks + [kinks[-1] + _QUAD_WINDOW]
    else:                                  # the integrand vanishes below max_j a_j
        edges = [kinks[-1], kinks[-1] + _QUAD_WINDOW]
    out = np.empty(a.shape[0])
    for i in range(a.shape[0]):
        others = np.delete(a, i).tolist()
        ai = float(a[i])

        def integrand(u: float, ai: float = ai, others: list = others) -> float:
            v = pdf(u - ai)
            for aj in others:
                v *= cdf(u - aj)
            return v

        total = 0.0
        for lo, hi in zip(edges[:-1], edges[1:]):
            total += integrate.quad(integrand, lo, hi, epsabs=0.0, epsrel=1e-13, limit=200)[0]
        out[i] = total
    return out


def _rnm_noise(family: str) -> str:
    return "laplace" if family == "rnm-laplace" else "exponential"


def rnm_pair_loss(family: str, eps_prime: float, d: ArrayLike,
                  d_prime: ArrayLike) -> tuple[float, float]:
    """The exact pure-DP loss of report noisy max on a pair, and its atom's mass.

    Args:
        family: "rnm-laplace" or "rnm-exponential".
        eps_prime: the noise scale is 1/eps_prime.
        d: the scores on d.
        d_prime: the scores on d′.

    Returns:
        (max_i |ln P_d(i)/P_d′(i)|, the smaller probability of the maximising atom).
    """
    noise = _rnm_noise(family)
    p = rnm_probabilities(d, 1.0 / eps_prime, noise)
    pp = rnm_probabilities(d_prime, 1.0 / eps_prime, noise)
    r = np.abs(np.log(p) - np.log(pp))
    i = int(np.argmax(r))
    return float(r[i]), float(min(p[i], pp[i]))


def rnm_candidate_pairs(k: int = RNM_K, levels: Sequence[int] = (0, 1, 2)) -> list[tuple]:
    """All monotone neighbour pairs of report noisy max, one per class.

    Pairs with d ∈ levels^k and d′ − d ∈ {0,1}^k ∖ {0, 1}, one per class under a joint
    permutation of the arms (arms are exchangeable).

    Args:
        k: arms.
        levels: the values of d's entries.

    Returns:
        The pairs (d, d′), sorted.
    """
    seen = set()
    for d in itertools.product(levels, repeat=k):
        for v in itertools.product((0, 1), repeat=k):
            if 0 < sum(v) < k:
                seen.add(tuple(sorted(zip(d, v))))
    return [(tuple(x for x, _ in c), tuple(x + y for x, y in c)) for c in sorted(seen)]


def rnm_candidate_losses(family: str, eps: float, candidates: list | None = None) -> list[tuple]:
    """The losses of report noisy max over candidate pairs, largest first.

    Args:
        family: "rnm-laplace" or "rnm-exponential".
        eps: the claimed ε (factor 1).
        candidates: the pairs (None: :func:`rnm_candidate_pairs`).

    Returns:
        [(loss, atom mass, d, d′)].
    """
    out = []
    for d, dp in candidates if candidates is not None else rnm_candidate_pairs():
        loss, mass = rnm_pair_loss(family, eps, d, dp)
        out.append((loss, mass, d, dp))
    return sorted(out, key=lambda r: (-r[0], -r[1]))


@functools.lru_cache(maxsize=256)
def _rnm_true_eps(family: str, eps_prime: float) -> float:
    d, dp = RNM_PAIRS[family]
    return rnm_pair_loss(family, eps_prime, d, dp)[0]


# ---------------------------------------------------------------------------------------------
# Construction

def _check(family: str, eps: float, factor: float, delta: float) -> None:
    if family not in FAMILIES:
        raise InputError(f"family {family!r} is not one of {', '.join(FAMILIES)}")
    try:
        eps, factor = float(eps), float(factor)
    except (TypeError, ValueError):
        raise InputError(f"eps={eps!r} and factor={factor!r} must be numbers in (0, inf)") \
            from None
    if not (math.isfinite(eps) and eps > 0):
        raise InputError(f"eps={eps!r} is out of range: must be finite and > 0")
    if not (math.isfinite(factor) and factor > 0):
        raise InputError(f"factor={factor!r} is out of range: must be finite and > 0")
    if family == "gaussian":
        try:
            delta = float(delta)
        except (TypeError, ValueError):
            raise InputError(f"delta={delta!r} must be a number in (0, 1)") from None
        if not 0 < delta < 1:
            raise InputError(f"delta={delta!r} is out of range for gaussian: must be in (0, 1)")
    return eps, factor, delta


def known_mechanism(family: str, eps: float, factor: float = 1.0,
                    delta: float = 1e-5) -> KnownMechanism:
    """A mechanism of known privacy loss.

    Args:
        family: one of :data:`FAMILIES`.
        eps: the claimed ε.
        factor: its noise scale is multiplied by this (1: exactly ε-DP; < 1: a mutant).
        delta: the claimed δ (``gaussian`` only; the other families are pure DP and ignore it).

    Returns:
        The :class:`KnownMechanism`: the mechanism, the pair, the true loss.

    Raises:
        InputError: bad input.
    """
    eps, factor, delta = _check(family, eps, factor, delta)
    eps_p = eps / factor
    name = family if factor == 1 else f"{family} x{factor:g}"
    claim_delta = 0.0
    if family == "laplace":
        scale = factor / eps
        mech = functools.partial(_sample_laplace, scale=scale)
        d, dp = np.array([0.0]), np.array([1.0])
        true_eps = eps_p
    elif family == "gaussian":
        claim_delta = delta
        scale = factor * analytic_gaussian_sigma(eps, delta)
        mech = functools.partial(_sample_gaussian, sigma=scale)
        d, dp = np.array([0.0]), np.array([1.0])
        true_eps = gaussian_eps(scale, delta)
    elif family == "randomised-response":
        scale = 1.0 / eps_p
        mech = functools.partial(_sample_rr, p_flip=float(special.expit(-eps_p)))
        d, dp = np.array([0], dtype=np.int64), np.array([1], dtype=np.int64)
        true_eps = eps_p
    elif family == "geometric":
        scale = 1.0 / eps_p
        mech = functools.partial(_sample_geometric, p=-math.expm1(-eps_p))
        d, dp = np.array([0], dtype=np.int64), np.array([1], dtype=np.int64)
        true_eps = eps_p
    else:
        scale = factor / eps
        mech = functools.partial(_sample_rnm, scale=scale, noise=_rnm_noise(family))
        pair = RNM_PAIRS[family]
        d, dp = (np.array(x, dtype=np.int64) for x in pair)
        true_eps = _rnm_true_eps(family, eps_p)
    d.setflags(write=False)
    dp.setflags(write=False)
    return KnownMechanism(name=name, family=family, eps=eps, delta=claim_delta, factor=factor,
                          mechanism=mech, d=d, d_prime=dp, true_eps=float(true_eps),
                          noise_scale=float(scale))


# ---------------------------------------------------------------------------------------------
# Exact output distributions

def output_support(km: KnownMechanism) -> np.ndarray:
    """The output values that :func:`exact_probabilities` indexes (discrete families only).

    Args:
        km: the mechanism.

    Returns:
        The values.
    """
    if km.family == "randomised-response":
        return np.array([0, 1], dtype=np.int64)
    if km.family == "geometric":
        m = _geometric_radius(km.eps / km.factor)
        return np.arange(-m, m + 2, dtype=np.int64)      # covers d=0 and d′=1
    if km.family in ("rnm-laplace", "rnm-exponential"):
        return np.arange(km.d.shape[0], dtype=np.int64)
    raise InputError(f"family {km.family!r} is continuous: exact_probabilities needs one of "
                     f"{', '.join(DISCRETE_FAMILIES)}")


def _geometric_radius(eps_p: float) -> int:
    """Largest |k| with P(Z = k) = tanh(ε′/2) e^{−ε′|k|} ≥ 1e-15."""
    return max(0, int(math.floor((math.log(math.tanh(eps_p / 2)) - math.log(_GEOMETRIC_ATOM))
                                 / eps_p)))


def exact_probabilities(km: KnownMechanism) -> tuple[np.ndarray, np.ndarray]:
    """(P_d, P_d′) over :func:`output_support` (discrete families).

    The geometric support is truncated where an atom's mass is < 1e-15 on both sides (each
    vector then misses a tail mass < 2e-15/(1 − e^{−ε′}), e.g. 2e-12 at ε′ = 0.001; the support
    has about 70/ε′ points); RNM probabilities come from :func:`rnm_probabilities`.

    Args:
        km: the mechanism.

    Returns:
        (P_d, P_d′).
    """
    support = output_support(km)
    eps_p = km.eps / km.factor
    if km.family == "randomised-response":
        keep, flip = float(special.expit(eps_p)), float(special.expit(-eps_p))
        return np.array([keep, flip]), np.array([flip, keep])
    if km.family == "geometric":
        c = math.tanh(eps_p / 2)                          # (1−α)/(1+α), α = e^{−ε′}
        return (c * np.exp(-eps_p * np.abs(support - int(km.d[0]))),
                c * np.exp(-eps_p * np.abs(support - int(km.d_prime[0]))))
    noise = _rnm_noise(km.family)
    return (rnm_probabilities(km.d, km.noise_scale, noise),
            rnm_probabilities(km.d_prime, km.noise_scale, noise))


def exact_cdf(km: KnownMechanism, x: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """The output's CDFs for the continuous families (laplace, gaussian).

    Args:
        km: the mechanism.
        x: the points.

    Returns:
        (F_d(x), F_d′(x)).
    """
    x = np.asarray(x, dtype=float)
    if km.family == "laplace":
        dist = stats.laplace(scale=km.noise_scale)
    elif km.family == "gaussian":
        dist = stats.norm(scale=km.noise_scale)
    else:
        raise InputError(f"family {km.family!r} is discrete: exact_cdf needs laplace or gaussian")
    return dist.cdf(x - float(km.d[0])), dist.cdf(x - float(km.d_prime[0]))

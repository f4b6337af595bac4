"""Importance sampling of one noisy release toward its privacy-loss tail (small δ).

An (ε, δ) audit at δ = 10⁻⁵ needs events of mass about δ on one table; counting them takes
~10⁷ runs per side. When the release that reads the changed entry is a known noise mechanism
(Laplace or Gaussian, scale b or σ) around exact values v (numerator table) and v′ (denominator
table), its value y can be drawn from a proposal r instead and every run weighted by the exact
likelihood ratios w = f(y − v)/r(y) and w′ = f(y − v′)/r(y): E_r[w·1_E] = P(E) and
E_r[w′·1_E] = P′(E) for any event E of the run's outcome, from the same runs (the other
randomness is drawn as usual).

:class:`Tilt` is a *defensive mixture* (Hesterberg 1995, Technometrics 37(2)): with
probability 1 − ρ the release's own law on the denominator table, with probability ρ the same
family centred where the privacy loss ln f(y − v) − ln f(y − v′) reaches ε (the edge of the
region that makes δ(ε)). So w′ ≤ 1/(1 − ρ): the terms w′·1_E are bounded and a confidence
bound by betting (:func:`dpaudit.statistics.stats.betting_bounds`) gives a valid upper bound
on P′(E), whose width follows their variance. For the lower bound on P(E) the terms are
min(w, τ)·1_E ≤ w·1_E (clipped: a valid lower bound whatever w's range). A valid upper bound
must allow an unseen run of the largest weight, about (1/(1 − ρ))·ln(1/α)/n; that term, not
the variance, sets how small a P′(E) the runs resolve. :func:`delta_bounds` turns the weighted
hits of an event into lower confidence bounds on δ_E(ε) = P(E) − e^ε P′(E) and on the event's
δ-loss ln((P(E) − δ)/P′(E)).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats as st

from dpaudit.errors import InputError
from dpaudit.statistics.stats import betting_bounds

FAMILIES = {"laplace": st.laplace, "gaussian": st.norm}


@dataclass(frozen=True)
class Tilt:
    """A defensive mixture proposal for one release (module doc).

    Attributes:
        family: ``laplace`` or ``gaussian``.
        scale: the Laplace scale b or the Gaussian standard deviation σ (> 0).
        eps: the ε whose loss region the tilted component centres on (nats, ≥ 0).
        rho: the tilted component's probability, in [0, 1).
        clip: τ, the numerator's weights are clipped at (> 0).
    """

    family: str
    scale: float
    eps: float
    rho: float = 0.5
    clip: float = 1.0

    def __post_init__(self) -> None:
        """Check the fields (InputError naming the bad value and the accepted range)."""
        if self.family not in FAMILIES:
            raise InputError(f"family={self.family!r}: expected one of {', '.join(FAMILIES)}")
        if not (math.isfinite(self.scale) and self.scale > 0):
            raise InputError(f"scale={self.scale!r}: expected a finite number > 0")
        if not (math.isfinite(self.eps) and self.eps >= 0):
            raise InputError(f"eps={self.eps!r}: expected a finite number >= 0")
        if not 0 <= self.rho < 1:
            raise InputError(f"rho={self.rho!r}: expected a number in [0, 1)")
        if not (math.isfinite(self.clip) and self.clip > 0):
            raise InputError(f"clip={self.clip!r}: expected a finite number > 0")

    @property
    def max_weight(self) -> float:
        """The largest weight w′ can take: 1/(1 − ρ)."""
        return 1.0 / (1.0 - self.rho)

    def centre(self, v: ArrayLike, v_prime: ArrayLike) -> np.ndarray:
        """Where the tilted component is centred: the loss reaches ε on v's far side from v′.

        Gaussian: the loss (v − v′)(2y − v − v′)/(2σ²) equals ε at y = (v + v′)/2 +
        εσ²/(v − v′). Laplace: the loss is at most |v − v′|/b, reached on v's far side; the
        centre is one scale beyond v there. Where v = v′ (the release did not read the entry)
        the centre is v.

        Args:
            v: exact values on d, float (n,).
            v_prime: exact values on d′, float (n,).

        Returns:
            float (n,).
        """
        v, vp = np.asarray(v, dtype=float), np.asarray(v_prime, dtype=float)
        gap = v - vp
        side = np.sign(gap)
        if self.family == "gaussian":
            safe = np.where(gap == 0, 1.0, gap)
            return np.where(gap == 0, v, (v + vp) / 2 + self.eps * self.scale ** 2 / safe)
        return v + side * self.scale

    def draw(self, rng: np.random.Generator, v: ArrayLike, v_prime: ArrayLike) -> np.ndarray:
        """One proposal draw per run.

        Args:
            rng: the generator.
            v: exact values on d, float (n,).
            v_prime: exact values on d′, float (n,).

        Returns:
            float (n,): the released values y.
        """
        v, vp = np.asarray(v, dtype=float), np.asarray(v_prime, dtype=float)
        where = np.where(rng.random(v.shape) < self.rho, self.centre(v, vp), vp)
        noise = (rng.laplace(0.0, self.scale, v.shape) if self.family == "laplace"
                 else rng.normal(0.0, self.scale, v.shape))
        return where + noise

    def weights(self, y: ArrayLike, v: ArrayLike, v_prime: ArrayLike
                ) -> tuple[np.ndarray, np.ndarray]:
        """The likelihood ratios w = f(y − v)/r(y) (unclipped) and w′ = f(y − v′)/r(y).

        Args:
            y: released values, float (n,).
            v: exact values on d, float (n,).
            v_prime: exact values on d′, float (n,).

        Returns:
            (w, w′), float (n,) each; w′ in [0, :attr:`max_weight`].
        """
        y, v, vp = (np.asarray(a, dtype=float) for a in (y, v, v_prime))
        dist = FAMILIES[self.family]
        log_d = dist.logpdf(y, v, self.scale)
        log_dp = dist.logpdf(y, vp, self.scale)
        log_r = np.log1p(-self.rho) + log_dp
        if self.rho > 0:
            log_r = np.logaddexp(log_r, np.log(self.rho)
                                 + dist.logpdf(y, self.centre(v, vp), self.scale))
        return np.exp(log_d - log_r), np.exp(log_dp - log_r)


@dataclass(frozen=True)
class DeltaBounds:
    """Bounds on an event's privacy from weighted runs (:func:`delta_bounds`).

    Attributes:
        runs: weighted runs.
        p_lower: lower bound on P(E) (one-sided, α/2; clipped weights).
        p_prime_upper: upper bound on P′(E) (one-sided, α/2).
        p_estimate: the weighted estimate of P(E) (unclipped).
        p_prime_estimate: the weighted estimate of P′(E).
        delta_lower: lower bound on δ_E(ε) = P(E) − e^ε P′(E) at 1 − α (≥ 0).
        eps_lower: lower bound on ln((P(E) − δ)/P′(E)) at 1 − α (0 when P(E) ≤ δ could
            hold; inf when P′(E) = 0 could).
        alpha: the level.
    """

    runs: int
    p_lower: float
    p_prime_upper: float
    p_estimate: float
    p_prime_estimate: float
    delta_lower: float
    eps_lower: float
    alpha: float


def delta_bounds(terms: ArrayLike, terms_prime: ArrayLike, eps: float, delta: float,
                 tilt: Tilt, alpha: float) -> DeltaBounds:
    """Lower confidence bounds on an event's δ(ε) and δ-loss from importance-weighted runs.

    The event E must be fixed before these runs were drawn (chosen on other runs). α/2 goes to
    each of the two one-sided betting bounds (union bound). The numerator's terms are clipped
    at ``tilt.clip`` (min(w, τ)·1_E = min(w·1_E, τ): a lower bound on P(E) stays valid).

    Args:
        terms: w·1_E per run on the numerator table, float (n,) (w from :meth:`Tilt.weights`;
            1 for a run whose release did not read the entry).
        terms_prime: w′·1_E per run on the denominator table, float (m,).
        eps: ε of δ_E(ε) (nats).
        delta: δ of the δ-loss.
        tilt: the proposal the runs drew from (its weight bound and clip).
        alpha: the level, in (0, 1).

    Returns:
        :class:`DeltaBounds`.

    Raises:
        ValueError: no run, a negative term, or a term w′·1_E above ``tilt.max_weight``.
    """
    x, xp = np.asarray(terms, dtype=float), np.asarray(terms_prime, dtype=float)
    p_lo, _ = betting_bounds(np.minimum(x, tilt.clip), 0.0, tilt.clip, alpha / 2)
    _, q_hi = betting_bounds(xp, 0.0, tilt.max_weight * (1 + 1e-12), alpha / 2)
    d_lo = max(p_lo - math.exp(eps) * q_hi, 0.0)
    if p_lo <= delta:
        e_lo = 0.0
    else:
        e_lo = math.inf if q_hi <= 0 else max(math.log((p_lo - delta) / q_hi), 0.0)
    return DeltaBounds(int(x.size), p_lo, q_hi, float(x.mean()), float(xp.mean()), d_lo, e_lo,
                       alpha)

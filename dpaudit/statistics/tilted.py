"""Importance sampling of one noisy release toward its privacy-loss tail (small δ).

An (ε, δ) audit at δ = 10⁻⁵ needs events of mass about δ on one table; counting them takes
~10⁷ runs per side. When the release that reads the changed entry is a known noise mechanism
(Laplace or Gaussian, scale b or σ) around exact values v (numerator table) and v′ (denominator
table), its value can be drawn from a proposal r instead and each run weighted by the exact
likelihood ratio of that release: E_r[f(y − v)/r(y)·1_E] = P(E) on runs of the numerator table,
E_r′[f(y − v′)/r′(y)·1_E] = P′(E) on runs of the denominator's, for any event E of the run's
outcome (the other randomness drawn as usual).

:class:`Tilt` is a *defensive mixture* (Hesterberg 1995, Technometrics 37(2)): with
probability 1 − ρ the release's own law on the table the runs are on (its ``base``), with
probability ρ the same family centred where the privacy loss ln f(y − v) − ln f(y − v′)
reaches ε (the edge of the region that makes δ(ε)), or at a given offset. The weight of the
base table is then at most 1/(1 − ρ) (:attr:`Tilt.max_weight`), so the per-run terms are
bounded and confidence bounds by betting (:func:`dpaudit.statistics.stats.betting_bounds`)
are valid; their width follows the terms' variance, which the tilt makes small in the tail. A
valid upper bound must still allow an unseen run of the largest weight, about
max_weight·ln(1/α)/n: that term sets how small a P′(E) a number of runs resolves, so the
denominator's tilt keeps ρ moderate, while the numerator's lower bound is hurt little by a
large range and takes ρ near 1. :func:`delta_bounds` turns the weighted hits of an event into
lower confidence bounds on δ_E(ε) = P(E) − e^ε P′(E) and on the event's δ-loss
ln((P(E) − δ)/P′(E)).
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


BASES = ("numerator", "denominator")


@dataclass(frozen=True)
class Tilt:
    """A defensive mixture proposal for one release (module doc).

    Attributes:
        family: ``laplace`` or ``gaussian``.
        scale: the Laplace scale b or the Gaussian standard deviation σ (> 0).
        eps: the ε whose loss region the tilted component centres on (nats, ≥ 0).
        rho: the tilted component's probability, in [0, 1).
        base: the defensive component's table, ``numerator`` (v) or ``denominator`` (v′):
            the table the weighted runs are on.
        offset: where the tilted component is centred instead, in scales beyond v on its far
            side from v′ (e.g. the mean offset of an event's runs on a pilot); None: where the
            loss reaches ``eps``.
    """

    family: str
    scale: float
    eps: float
    rho: float = 0.5
    base: str = "denominator"
    offset: float | None = None

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
        if self.base not in BASES:
            raise InputError(f"base={self.base!r}: expected one of {', '.join(BASES)}")
        if self.offset is not None and not math.isfinite(self.offset):
            raise InputError(f"offset={self.offset!r}: expected a finite number or None")

    @property
    def max_weight(self) -> float:
        """The largest weight of the base table's release: 1/(1 − ρ)."""
        return 1.0 / (1.0 - self.rho)

    def centre(self, v: ArrayLike, v_prime: ArrayLike) -> np.ndarray:
        """Where the tilted component is centred.

        ``offset`` scales beyond v on its far side from v′, else where the loss reaches ε there.
        Gaussian: the loss (v − v′)(2y − v − v′)/(2σ²) equals ε at y = (v + v′)/2 +
        εσ²/(v − v′). Laplace: the loss is at most |v − v′|/b, reached on v's far side; the
        centre is one scale beyond v there. Where v = v′ (the release did not read the entry)
        the centre is v.

        Args:
            v: exact values on the numerator's table, float (n,).
            v_prime: exact values on the denominator's, float (n,).

        Returns:
            float (n,).
        """
        v, vp = np.asarray(v, dtype=float), np.asarray(v_prime, dtype=float)
        gap = v - vp
        side = np.sign(gap)
        if self.offset is not None:
            return v + side * self.offset * self.scale
        if self.family == "gaussian":
            safe = np.where(gap == 0, 1.0, gap)
            return np.where(gap == 0, v, (v + vp) / 2 + self.eps * self.scale ** 2 / safe)
        return v + side * self.scale

    def draw(self, rng: np.random.Generator, v: ArrayLike, v_prime: ArrayLike) -> np.ndarray:
        """One proposal draw per run.

        Args:
            rng: the generator.
            v: exact values on the numerator's table, float (n,).
            v_prime: exact values on the denominator's, float (n,).

        Returns:
            float (n,): the released values y.
        """
        v, vp = np.asarray(v, dtype=float), np.asarray(v_prime, dtype=float)
        own = v if self.base == "numerator" else vp
        where = np.where(rng.random(v.shape) < self.rho, self.centre(v, vp), own)
        noise = (rng.laplace(0.0, self.scale, v.shape) if self.family == "laplace"
                 else rng.normal(0.0, self.scale, v.shape))
        return where + noise

    def weight(self, y: ArrayLike, v: ArrayLike, v_prime: ArrayLike) -> np.ndarray:
        """The likelihood ratio of the base table's release, f(y − v_base)/r(y).

        Args:
            y: released values, float (n,).
            v: exact values on the numerator's table, float (n,).
            v_prime: exact values on the denominator's, float (n,).

        Returns:
            float (n,), in [0, :attr:`max_weight`].
        """
        y, v, vp = (np.asarray(a, dtype=float) for a in (y, v, v_prime))
        dist = FAMILIES[self.family]
        log_own = dist.logpdf(y, v if self.base == "numerator" else vp, self.scale)
        with np.errstate(divide="ignore"):             # ρ = 0: no tilted component
            log_t = np.log(self.rho) + dist.logpdf(y, self.centre(v, vp), self.scale)
        log_r = np.logaddexp(np.log1p(-self.rho) + log_own, log_t)
        return np.minimum(np.exp(log_own - log_r), self.max_weight)


@dataclass(frozen=True)
class DeltaBounds:
    """Bounds on an event's privacy from weighted runs (:func:`delta_bounds`).

    Attributes:
        runs: weighted runs on the numerator's table.
        p_lower: lower bound on P(E) (one-sided, α/2).
        p_prime_upper: upper bound on P′(E) (one-sided, α/2).
        p_estimate: the weighted estimate of P(E).
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
                 highs: tuple[float, float], alpha: float) -> DeltaBounds:
    """Lower confidence bounds on an event's δ(ε) and δ-loss from importance-weighted runs.

    The event E must be fixed before these runs were drawn (chosen on other runs). α/2 goes to
    each of the two one-sided betting bounds (union bound).

    Args:
        terms: w·1_E per run on the numerator's table, float (n,) (w from a numerator-based
            :meth:`Tilt.weight`; 1 for a run whose release did not read the entry).
        terms_prime: w′·1_E per run on the denominator's table, float (m,).
        eps: ε of δ_E(ε) (nats).
        delta: δ of the δ-loss.
        highs: the largest term each side can take (the tilts' :attr:`Tilt.max_weight`).
        alpha: the level, in (0, 1).

    Returns:
        :class:`DeltaBounds`.

    Raises:
        ValueError: no run, or a term outside [0, its side's high].
    """
    x, xp = np.asarray(terms, dtype=float), np.asarray(terms_prime, dtype=float)
    p_lo, _ = betting_bounds(x, 0.0, highs[0], alpha / 2)
    _, q_hi = betting_bounds(xp, 0.0, highs[1], alpha / 2)
    d_lo = max(p_lo - math.exp(eps) * q_hi, 0.0)
    if p_lo <= delta:
        e_lo = 0.0
    else:
        e_lo = math.inf if q_hi <= 0 else max(math.log((p_lo - delta) / q_hi), 0.0)
    return DeltaBounds(int(x.size), p_lo, q_hi, float(x.mean()), float(xp.mean()), d_lo, e_lo,
                       alpha)

"""Exact privacy accounting of releases by Google's dp-accounting (privacy loss distributions).

A white-box audit knows the releases that read the differing entry: each is a noise mechanism
(Laplace, Gaussian, discrete Laplace, randomised response) of a known scale and sensitivity.
:func:`composed` maps them to dp-accounting's privacy loss distributions (PLDs; Koskela,
Jälkö and Honkela 2020, arXiv:1906.03049; Doroshenko et al. 2022, arXiv:2207.04380, for the
"connect the dots" discretisation) and composes them; :func:`privacy_profile` reads the
composed distribution's δ(ε) and ε(δ). The PLDs are pessimistic (their losses are rounded up
on a grid of :data:`DISCRETISATION` nats): every δ(ε) and ε(δ) they give is an upper bound on
the releases' true privacy profile.

Composition of PLDs is exact for non-adaptive releases, and an upper bound for adaptively
chosen ones whose mechanisms and scales are fixed in advance (only the released statistic
depends on earlier outputs: adaptive composition of dominating pairs, Zhu, Dong and Wang 2022,
arXiv:2106.08567); for pure ε-DP releases the basic composition theorem (Dwork and Roth 2014,
Thm. 3.16) holds under full adaptivity.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dp_accounting.pld import privacy_loss_distribution as pld

from dpaudit.errors import InputError

DISCRETISATION = 1e-4   # nats: the PLD's value discretisation interval (dp-accounting's default)
MECHANISMS = ("laplace", "gaussian", "discrete-laplace", "randomised-response")


@dataclass(frozen=True)
class Release:
    """One release that reads the differing entry.

    Attributes:
        mechanism: one of :data:`MECHANISMS`.
        noise: the Laplace scale b, the Gaussian standard deviation σ, the discrete Laplace
            parameter a (P(k) ∝ e^(−a|k|)), or randomised response's probability p of
            answering a uniformly random bucket instead of the true one.
        sensitivity: how far the released statistic moves between the neighbours (Laplace,
            Gaussian; an integer for the discrete Laplace; unused by randomised response).
        buckets: randomised response's number of buckets k (≥ 2).
    """

    mechanism: str
    noise: float
    sensitivity: float = 1.0
    buckets: int = 2

    def distribution(self) -> pld.PrivacyLossDistribution:
        """The release's pessimistic privacy loss distribution (dp-accounting).

        Returns:
            The PLD.

        Raises:
            InputError: an unknown mechanism, or a noise, sensitivity or bucket count out of
                range (the mechanism's name and the accepted range in the message).
        """
        if self.mechanism not in MECHANISMS:
            raise InputError(f"mechanism={self.mechanism!r}: expected one of "
                             f"{', '.join(MECHANISMS)}")
        if self.mechanism == "randomised-response":
            if not 0 < self.noise <= 1 or self.buckets < 2:
                raise InputError(f"randomised response: noise={self.noise} in (0, 1] and "
                                 f"buckets={self.buckets} ≥ 2 expected")
            return pld.from_randomized_response(self.noise, self.buckets,
                                                value_discretization_interval=DISCRETISATION)
        if not self.noise > 0 or not self.sensitivity > 0:
            raise InputError(f"{self.mechanism}: noise={self.noise} and "
                             f"sensitivity={self.sensitivity} must be > 0")
        if self.mechanism == "laplace":
            return pld.from_laplace_mechanism(self.noise, sensitivity=self.sensitivity,
                                              value_discretization_interval=DISCRETISATION)
        if self.mechanism == "gaussian":
            return pld.from_gaussian_mechanism(self.noise, sensitivity=self.sensitivity,
                                               value_discretization_interval=DISCRETISATION)
        return pld.from_discrete_laplace_mechanism(self.noise, sensitivity=int(self.sensitivity),
                                                   value_discretization_interval=DISCRETISATION)


def composed(releases: Sequence[Release]) -> pld.PrivacyLossDistribution:
    """The composition of the releases' privacy loss distributions (module doc: when valid).

    Args:
        releases: the releases that read the differing entry (at least one).

    Returns:
        The composed PLD.

    Raises:
        InputError: no release, or a release out of range (:meth:`Release.distribution`).
    """
    if not releases:
        raise InputError("no release to account: expected at least one")
    out = releases[0].distribution()
    for r in releases[1:]:
        out = out.compose(r.distribution())
    return out


@dataclass(frozen=True)
class Profile:
    """Points of a composed privacy profile: δ at each ε and ε at each δ (upper bounds).

    Attributes:
        delta_at: ((ε, δ(ε)), ...).
        eps_at: ((δ, ε(δ)), ...).
    """

    delta_at: tuple
    eps_at: tuple


def privacy_profile(releases: Sequence[Release], eps: Sequence[float] = (),
                    delta: Sequence[float] = ()) -> Profile:
    """The composed releases' privacy profile at the given ε and δ.

    Args:
        releases: the releases (:func:`composed`).
        eps: values of ε ≥ 0 (nats) at which to give δ(ε).
        delta: values of δ in [0, 1) at which to give ε(δ) (inf when no finite ε holds).

    Returns:
        The :class:`Profile`; every figure an upper bound on the true profile.

    Raises:
        InputError: a release out of range, a negative ε or a δ outside [0, 1).
    """
    for e in eps:
        if not e >= 0:
            raise InputError(f"eps={e}: expected ≥ 0")
    for d in delta:
        if not 0 <= d < 1:
            raise InputError(f"delta={d}: expected in [0, 1)")
    dist = composed(releases)
    return Profile(tuple((float(e), float(dist.get_delta_for_epsilon(e))) for e in eps),
                   tuple((float(d), float(dist.get_epsilon_for_delta(d))) for d in delta))

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
from dp_accounting.pld import privacy_loss_mechanism as plm

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

    def check(self) -> None:
        """Check the fields.

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
        elif not self.noise > 0 or not self.sensitivity > 0:
            raise InputError(f"{self.mechanism}: noise={self.noise} and "
                             f"sensitivity={self.sensitivity} must be > 0")

    def distribution(self, pessimistic: bool = True) -> pld.PrivacyLossDistribution:
        """The release's privacy loss distribution (dp-accounting).

        Args:
            pessimistic: True: losses rounded up (every δ(ε) it gives is an upper bound on the
                release's); False: rounded down (a lower bound: dp-accounting's privacy
                buckets, without its "connect the dots" discretisation, which is pessimistic
                only).

        Returns:
            The PLD.

        Raises:
            InputError: an unknown mechanism, or a noise, sensitivity or bucket count out of
                range (the mechanism's name and the accepted range in the message).
        """
        self.check()
        if self.mechanism == "randomised-response":
            return pld.from_randomized_response(self.noise, self.buckets,
                                                pessimistic_estimate=pessimistic,
                                                value_discretization_interval=DISCRETISATION)
        make = {"laplace": pld.from_laplace_mechanism, "gaussian": pld.from_gaussian_mechanism,
                "discrete-laplace": pld.from_discrete_laplace_mechanism}[self.mechanism]
        sens = int(self.sensitivity) if self.mechanism == "discrete-laplace" else self.sensitivity
        return make(self.noise, sensitivity=sens, pessimistic_estimate=pessimistic,
                    use_connect_dots=pessimistic, value_discretization_interval=DISCRETISATION)


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


def delta_at(release: Release, eps: float) -> float:
    """The δ(ε) of one release, without discretisation.

    Exact for the Laplace, Gaussian and discrete Laplace mechanisms (dp-accounting's closed-form
    privacy losses; for the Gaussian, Balle and Wang 2018, arXiv:1805.06530, Thm. 8); a lower
    bound for randomised response (its optimistic PLD, whose losses are rounded down).

    Args:
        release: the release (:class:`Release`).
        eps: ε ≥ 0 (nats).

    Returns:
        δ(ε), in [0, 1].

    Raises:
        InputError: ε < 0, or the release out of range (:meth:`Release.distribution`).
    """
    if not eps >= 0:
        raise InputError(f"eps={eps}: expected ≥ 0")
    if release.mechanism == "randomised-response":
        return float(release.distribution(False).get_delta_for_epsilon(eps))
    release.check()
    loss = {"laplace": plm.LaplacePrivacyLoss, "gaussian": plm.GaussianPrivacyLoss,
            "discrete-laplace": plm.DiscreteLaplacePrivacyLoss}[release.mechanism]
    sens = (int(release.sensitivity) if release.mechanism == "discrete-laplace"
            else release.sensitivity)
    return float(loss(release.noise, sensitivity=sens).get_delta_for_epsilon(eps))


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


@dataclass(frozen=True)
class Refutation:
    """What the accountant says of single releases against an (ε, δ) claim.

    Attributes:
        delta_at_eps: per release, (lower, upper) bounds on its δ(ε) (dp-accounting's
            optimistic and pessimistic distributions).
        refuted: whether some release's lower bound exceeds δ (up to float rounding,
            :data:`TOLERANCE`): that release mechanism is not (ε, δ)-DP, a proof without
            statistics.
    """

    delta_at_eps: tuple
    refuted: bool


TOLERANCE = (1e-9, 1e-12)   # refuted iff δ(ε) > δ·(1 + 1e-9) + 1e-12 (the PLDs' float rounding)


def refutation(releases: Sequence[Release], eps: float, delta: float) -> Refutation:
    """Whether any one release is not (ε, δ)-DP, by bounds on its exact δ(ε).

    A release whose mechanism (noise and sensitivity) is fixed given the history is (ε, δ)-DP
    iff its privacy profile has δ(ε) ≤ δ (Balle and Wang 2018, arXiv:1805.06530, Thm. 5 for
    the Gaussian; the hockey-stick divergence in general). The optimistic distribution's δ(ε)
    is a lower bound, so when it exceeds δ the release is not (ε, δ)-DP, whatever the rounding.

    Args:
        releases: the releases (at least one).
        eps: the claimed ε ≥ 0.
        delta: the claimed δ in [0, 1).

    Returns:
        The :class:`Refutation`.

    Raises:
        InputError: no release, a release out of range, ε < 0 or δ outside [0, 1).
    """
    if not releases:
        raise InputError("no release to account: expected at least one")
    if not eps >= 0 or not 0 <= delta < 1:
        raise InputError(f"eps={eps}, delta={delta}: expected eps >= 0 and delta in [0, 1)")
    bounds = tuple((float(r.distribution(False).get_delta_for_epsilon(eps)),
                    float(r.distribution(True).get_delta_for_epsilon(eps))) for r in releases)
    limit = delta * (1.0 + TOLERANCE[0]) + TOLERANCE[1]
    return Refutation(bounds, any(lo > limit for lo, _ in bounds))

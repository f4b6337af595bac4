"""dp-accounting's privacy profiles of releases against their closed forms.

Oracles are written here from the papers, independently of the module: the Laplace mechanism's
hockey-stick divergence, the Gaussian mechanism's exact profile (Balle and Wang 2018,
arXiv:1805.06530, Thm. 8) and randomised response's. The PLDs are pessimistic, so each figure
must lie at or above the closed form and within the discretisation's slack of it.
"""
import math

import pytest
from scipy.stats import norm

from dpaudit.errors import InputError
from dpaudit.statistics.accounting import (Release, composed, delta_at, privacy_profile,
                                          refutation)

SLACK = 2e-3     # the PLD's rounding up on a 1e-4-nat grid moves δ(ε) by far less than this


def gaussian_delta(eps, mu):
    """δ(ε) of a Gaussian mechanism with Δ/σ = mu (Balle and Wang 2018, Thm. 8)."""
    return norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * norm.cdf(-mu / 2 - eps / mu)


def laplace_delta(eps, eps0):
    """δ(ε) of a Laplace mechanism with Δ/b = eps0: 1 − e^((ε − ε0)/2) below ε0, else 0."""
    return max(0.0, 1 - math.exp((eps - eps0) / 2))


def rr_delta(eps, p, k):
    """δ(ε) of k-ary randomised response answering at random with probability p."""
    keep, other = 1 - p + p / k, p / k
    return max(0.0, keep - math.exp(eps) * other)


@pytest.mark.parametrize("eps", [0.0, 0.2, 0.5, 0.9])
def test_one_laplace_release_matches_its_closed_form(eps):
    got = privacy_profile([Release("laplace", 2.0, 2.0)], eps=[eps]).delta_at[0][1]   # ε0 = 1
    want = laplace_delta(eps, 1.0)
    assert want - 1e-9 <= got <= want + SLACK
    assert privacy_profile([Release("laplace", 2.0, 2.0)], delta=[0.0]).eps_at[0][1] == \
        pytest.approx(1.0, abs=SLACK)


@pytest.mark.parametrize("eps, sigma", [(0.5, 1.0), (1.0, 2.0), (9.0, 0.5)])
def test_one_gaussian_release_matches_balle_and_wang(eps, sigma):
    got = privacy_profile([Release("gaussian", sigma)], eps=[eps]).delta_at[0][1]
    want = gaussian_delta(eps, 1 / sigma)
    assert want * (1 - 1e-9) <= got <= want * (1 + SLACK) + 1e-12


def test_the_classical_gaussian_calibration_fails_at_eps_9():
    # σ = √(2 ln(1.25/δ))·Δ/ε is proved for ε < 1 (Dwork and Roth 2014, Thm. A.1); at ε = 9,
    # δ = 1e-5 its exact δ(9) is about 1.36e-5 > 1e-5
    eps, delta = 9.0, 1e-5
    sigma = math.sqrt(2 * math.log(1.25 / delta)) / eps
    got = privacy_profile([Release("gaussian", sigma)], eps=[eps]).delta_at[0][1]
    assert got > delta and got == pytest.approx(gaussian_delta(eps, 1 / sigma), rel=SLACK)


@pytest.mark.parametrize("p, k", [(0.5, 2), (0.3, 4)])
def test_one_randomised_response_release_matches_its_closed_form(p, k):
    eps0 = math.log((1 - p + p / k) / (p / k))
    for eps in (0.0, eps0 / 2, eps0):
        got = privacy_profile([Release("randomised-response", p, buckets=k)],
                              eps=[eps]).delta_at[0][1]
        want = rr_delta(eps, p, k)
        assert want - 1e-9 <= got <= want + SLACK


def test_two_releases_compose_as_the_theorems_say():
    # two Laplace releases: pure (ε1 + ε2)-DP (basic composition), and no less (the composed
    # PLD's truncated tails, mass ~1e-15, leave ε(0) infinite: read it at δ = 1e-9)
    two = [Release("laplace", 4.0), Release("laplace", 2.0)]    # ε = 0.25 + 0.5
    assert privacy_profile(two, delta=[1e-9]).eps_at[0][1] == pytest.approx(0.75, abs=SLACK)
    assert privacy_profile(two, eps=[0.7]).delta_at[0][1] > 0
    # two Gaussian releases compose to one with μ = √(μ1² + μ2²) (Dong, Roth and Su 2022)
    gauss = [Release("gaussian", 1.0), Release("gaussian", 2.0)]
    mu = math.hypot(1.0, 0.5)
    for eps in (0.5, 1.5):
        got = privacy_profile(gauss, eps=[eps]).delta_at[0][1]
        want = gaussian_delta(eps, mu)
        assert want * (1 - 1e-9) <= got <= want * (1 + SLACK) + 1e-12


@pytest.mark.parametrize("eps", [0.0, 0.5, 0.9, 9.0])
def test_delta_at_is_the_closed_form_for_laplace_and_gaussian_and_below_it_for_rr(eps):
    assert delta_at(Release("laplace", 2.0, 2.0), eps) == pytest.approx(
        laplace_delta(eps, 1.0), rel=1e-9, abs=1e-15)
    sigma = math.sqrt(2 * math.log(1.25 / 1e-5)) / 9.0 / 8      # dp-bai-gauss's, Δ = 1/8
    assert delta_at(Release("gaussian", sigma, 0.125), eps) == pytest.approx(
        gaussian_delta(eps, 0.125 / sigma), rel=1e-9, abs=1e-15)
    want = rr_delta(eps, 0.3, 4)
    got = delta_at(Release("randomised-response", 0.3, buckets=4), eps)     # rounded down
    assert want - SLACK <= got <= want + 1e-12


def test_delta_at_refuses_bad_input():
    with pytest.raises(InputError, match="noise=0.0"):
        delta_at(Release("gaussian", 0.0), 1.0)
    with pytest.raises(InputError, match="eps=-1"):
        delta_at(Release("gaussian", 1.0), -1.0)


@pytest.mark.parametrize("release, match", [
    (Release("cauchy", 1.0), "expected one of laplace"),
    (Release("laplace", 0.0), "noise=0.0"),
    (Release("randomised-response", 1.5), r"noise=1.5 in \(0, 1\]"),
    (Release("randomised-response", 0.5, buckets=1), "buckets=1"),
])
def test_bad_releases_are_one_line_errors(release, match):
    with pytest.raises(InputError, match=match):
        composed([release])


def test_bad_profile_points_are_refused():
    with pytest.raises(InputError, match="no release"):
        composed([])
    with pytest.raises(InputError, match=r"delta=1.0: expected in \[0, 1\)"):
        privacy_profile([Release("laplace", 1.0)], delta=[1.0])
    with pytest.raises(InputError, match="eps=-1"):
        privacy_profile([Release("laplace", 1.0)], eps=[-1.0])


def classical_sigma(eps, delta, sensitivity):
    """The Gaussian mechanism's classical calibration (Dwork and Roth 2014, Thm. A.1)."""
    return math.sqrt(2 * math.log(1.25 / delta)) * sensitivity / eps


@pytest.mark.parametrize("eps, refuted", [(0.5, False), (9.0, True)])
def test_the_classical_gaussian_calibration_is_refuted_only_outside_its_range(eps, refuted):
    # Thm. A.1 is proved for ε < 1; at ε = 9, δ = 1e-5 the exact profile exceeds δ
    # (the example of DP-BAI-GAUSS, Azize et al. 2023, Prop. D.2, at sensitivity 1/8)
    sigma = classical_sigma(eps, 1e-5, 0.125)
    r = refutation([Release("gaussian", sigma, 0.125)], eps, 1e-5)
    lo, hi = r.delta_at_eps[0]
    want = gaussian_delta(eps, 0.125 / sigma)
    assert lo <= want <= hi and hi - lo < 1e-2 * want
    assert r.refuted is refuted and bool(want > 1e-5) is refuted
    if refuted:
        assert want == pytest.approx(1.3588e-5, rel=1e-3)


def test_a_laplace_release_is_refuted_just_below_its_eps_and_not_at_it():
    at = refutation([Release("laplace", 2.0, 2.0)], 1.0, 0.0)          # exactly 1-DP
    below = refutation([Release("laplace", 2.0, 2.0)], 0.98, 0.0)
    assert not at.refuted and at.delta_at_eps[0][0] == 0.0
    assert below.refuted and below.delta_at_eps[0][0] == pytest.approx(
        laplace_delta(0.98, 1.0), rel=1e-2)


def test_one_refuted_release_among_several_refutes_and_bad_claims_are_errors():
    rr = Release("randomised-response", 0.5, buckets=2)                  # ε = ln 3
    ok = Release("laplace", 10.0, 1.0)
    assert refutation([ok, rr], 1.0, 0.0).refuted
    assert not refutation([ok, rr], math.log(3) + 1e-6, 0.0).refuted
    for eps, delta in ((-1.0, 0.0), (1.0, 1.0)):
        with pytest.raises(InputError, match="expected eps >= 0 and delta in"):
            refutation([ok], eps, delta)
    with pytest.raises(InputError, match="no release"):
        refutation([], 1.0, 0.0)
